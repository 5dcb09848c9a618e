"""The full-strength pipeline (configs/full_pipeline.cfg): the shipped config
as spaCy takes it; a small copy of it trained through spaCy's own training
loop (vocabulary from the whole training file, trees, tags, the senter's
sentences, saving, loading and pickling); stack propagation (each tagger's
loss reaches the shared encoder with its configured weight); the corpus
reader on gold tokens; `init-config --pipeline full`; and the workflow's
+full and +biaffine names."""
import io
import json
import pickle
import subprocess
import sys
from collections import Counter

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import load_config, registry
from spacy.vocab import Vocab
from thinc.api import fix_random_seed

from benchmarks.system_names import parse_system, training_config
from conftest import ROOT, sample_docs, tree_ok
from test_configs import SELECTION, corpora, selection_weights, spacy_cli  # noqa: F401 (a fixture)
from test_encoders import entry_point_env
from spacy_nonmono.cli import main as nonmono_main
from spacy_nonmono.cli.common import InputError
from spacy_nonmono.configs import config_path, fill, filled_config
from spacy_nonmono.models.words import normalize_form, word_embed_layers
from spacy_nonmono.pipeline.corpus import GoldTokenCorpus

FULL = "full_pipeline.cfg"
PIPELINE = ["senter", "tok2vec", "morphologizer", "tagger", "nonmono_parser"]
LISTENER = {"@architectures": "spacy.Tok2VecListener.v1",
            "width": "${components.tok2vec.model.width}", "upstream": "tok2vec"}
# The shipped pipeline, narrow: every layer of it, at small widths.
ENCODER = "components.tok2vec.model."
SMALL = {
    ENCODER + "width": 32,
    ENCODER + "tok2vec.width": 16,
    ENCODER + "tok2vec.chars.width": 16,
    ENCODER + "tok2vec.chars.char_width": 8,
    ENCODER + "tok2vec.chars.lstm_width": 16,
    ENCODER + "tok2vec.chars.depth": 1,
    ENCODER + "tok2vec.chars.rows": 200,
    "components.nonmono_parser.model.hidden_width": 16,
    "components.nonmono_parser.model.label_hidden_width": 16,
}
# Every dropout of the pipeline off (training.dropout is passed to nlp.update).
NO_DROPOUT = {
    ENCODER + "dropout": 0.0,
    ENCODER + "layer_dropout": 0.0,
    ENCODER + "tok2vec.word_dropout": 0.0,
    ENCODER + "tok2vec.token_dropout": 0.0,
    ENCODER + "tok2vec.chars.dropout": 0.0,
    "components.nonmono_parser.model.dropout": 0.0,
    "training.dropout": 0.0,
}


def shipped():
    """The shipped config as written (variables not interpolated)."""
    return load_config(config_path(FULL), interpolate=False)


# -- 1. the shipped config ---------------------------------------------------------


def test_shipped_full_pipeline_is_filled_and_selects_by_dev_uas_las():
    config = shipped()
    assert fill(config) == config
    assert selection_weights(FULL) == SELECTION
    weights = config["training"]["score_weights"]
    assert {k: v for k, v in weights.items() if k not in SELECTION} \
        and all(v in (0, None) for k, v in weights.items() if k not in SELECTION)
    assert config["nlp"]["pipeline"] == PIPELINE
    components = config["components"]
    assert components["nonmono_parser"]["model"]["tok2vec"] == LISTENER
    scales = {name: (components[name]["model"]["tok2vec"]["scale"],
                     components[name]["model"]["tok2vec"]["layer"])
              for name in ("morphologizer", "tagger")}
    assert scales == {"morphologizer": (0.2, LISTENER), "tagger": (0.2, LISTENER)}
    # The senter runs first on its own encoder; the shared BiLSTM then reads
    # each sentence alone, on raw text as on gold sentences.
    assert components["senter"]["model"]["tok2vec"]["@architectures"] == "spacy.HashEmbedCNN.v2"
    # No sentence longer than 60 words reaches the n⁴ decoder from raw text.
    assert (components["senter"]["factory"], components["senter"]["max_length"]) == \
        ("nonmono_senter", 60)
    assert components["tok2vec"]["model"]["sentences"] is True
    assert config["corpora"]["train"]["gold_sentences"] is True
    assert config["initialize"]["before_init"] == {
        "@callbacks": "spacy_nonmono.count_words.v1", "path": "${paths.train}"}


def test_spacy_debug_config_accepts_the_shipped_full_pipeline(corpora, tmp_path):
    result = spacy_cli("debug", "config", ROOT / "configs" / FULL, *corpora, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_spacy_debug_data_accepts_the_shipped_full_pipeline(tmp_path):
    """Whole docs are fewer examples than sentences: debug data wants 100 of
    them (test_configs' corpora have 20), so docs of 3 sentences here."""
    DocBin(docs=sample_docs("train", n_sents_per_doc=3)).to_disk(tmp_path / "train.spacy")
    DocBin(docs=sample_docs("dev", n_sents_per_doc=3)).to_disk(tmp_path / "dev.spacy")
    result = spacy_cli("debug", "data", ROOT / "configs" / FULL, "--paths.train", "train.spacy",
                       "--paths.dev", "dev.spacy", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Training pipeline: " + ", ".join(PIPELINE) in result.stdout
    assert "167 training docs" in result.stdout


# -- 2. a small full pipeline, trained by spaCy's training loop ---------------------


@pytest.fixture(scope="module")
def full_corpora(tmp_path_factory):
    """The whole sample, 10 sentences a doc: 50 train docs, 12 dev docs."""
    folder = tmp_path_factory.mktemp("full_corpora")
    DocBin(docs=sample_docs("train", n_sents_per_doc=10)).to_disk(folder / "train.spacy")
    DocBin(docs=sample_docs("dev", n_sents_per_doc=10)).to_disk(folder / "dev.spacy")
    return {"paths.train": str(folder / "train.spacy"), "paths.dev": str(folder / "dev.spacy")}


def small_config(paths, **overrides):
    return load_config(config_path(FULL), overrides={**paths, **SMALL, **overrides})


@pytest.fixture(scope="module")
def trained(full_corpora, tmp_path_factory):
    """The small full pipeline after a few steps of spaCy's training loop
    (the config's corpora, batcher, optimizer, schedule and logger), and the
    folder of its model-last."""
    config = small_config(full_corpora, **{"training.max_steps": 12,
                                           "training.eval_frequency": 6})
    fix_random_seed(0)
    nlp = init_nlp(config)
    out = tmp_path_factory.mktemp("full_training")
    log = io.StringIO()
    nlp, final = train_loop(nlp, out, stdout=log, stderr=log)
    assert (out / "model-best").is_dir(), log.getvalue()
    return nlp, final


def the_word_embed_layer(nlp):
    layers = list(word_embed_layers(nlp))
    assert len(layers) == 1
    return layers[0]


def test_vocabulary_comes_from_the_whole_training_file(trained, full_corpora):
    nlp, final = trained
    docs = list(DocBin().from_disk(full_corpora["paths.train"]).get_docs(Vocab()))
    assert len(docs) == 50

    def vocabulary(docs, min_freq):
        counts = Counter(normalize_form(t.text) for doc in docs for t in doc)
        return {form: n for form, n in counts.items() if n >= min_freq}

    layer = the_word_embed_layer(nlp)
    min_freq = layer.attrs["min_freq"]
    assert min_freq == 5
    expected = vocabulary(docs, min_freq)
    # The layer's own initialize sees 10 docs: far fewer words would pass.
    assert len(vocabulary(docs[:10], min_freq)) < 0.6 * len(expected)
    rows = layer.attrs["rows"]
    assert set(rows) == set(expected)
    assert sorted(rows.values()) == list(range(len(expected)))
    assert [layer.attrs["counts"][rows[form]] for form in expected] == list(expected.values())
    assert layer.get_param("E").shape == (len(expected), 16)
    # Saved with the model.
    loaded = the_word_embed_layer(spacy.load(final))
    assert loaded.attrs["rows"] == rows
    assert numpy.array_equal(loaded.get_param("E"), layer.get_param("E"))


def annotations(docs):
    return [[(t.head.i, t.dep_, t.pos_, t.tag_, str(t.morph), t.is_sent_start) for t in doc]
            for doc in docs]


def dev_docs(nlp, path):
    """Dev docs to annotate: gold tokens and gold sentence starts."""
    return [eg.predicted for eg in GoldTokenCorpus(path, gold_sentences=True)(nlp)]


def test_trained_pipeline_parses_saves_loads_and_pickles(trained, full_corpora, tmp_path):
    nlp, final = trained
    assert nlp.pipe_names == PIPELINE
    assert nlp.get_pipe("tok2vec").listening_components == PIPELINE[2:]
    examples = list(GoldTokenCorpus(full_corpora["paths.dev"], gold_sentences=True)(nlp))
    parsed = list(nlp.pipe(eg.predicted for eg in examples))
    for doc, eg in zip(parsed, examples):
        assert tree_ok(doc)
        assert all(t.pos_ and t.tag_ for t in doc)
        # The senter keeps the gold sentences it is given; the parser parses in them.
        assert [(s.start, s.end) for s in doc.sents] == \
            [(s.start, s.end) for s in eg.reference.sents]

    def same_pipeline(other):
        assert other.pipe_names == PIPELINE
        assert other.get_pipe("tok2vec").listening_components == PIPELINE[2:]

    assert_round_trips(nlp, final, full_corpora["paths.dev"], tmp_path, same_pipeline)


def assert_round_trips(nlp, final, dev_path, tmp_path, check=lambda other: None):
    """The trained pipeline nlp annotates dev docs (gold tokens and
    sentences) and raw texts as its saved model `final` does, and as that
    model saved again and pickled do; `check` looks at each of those first."""
    texts = ["The cat sat on the mat. Then it left the house.", "", "Hello"]
    expected = annotations(nlp.pipe(dev_docs(nlp, dev_path))) + annotations(nlp.pipe(texts))

    def same_as_trained(other):
        check(other)
        got = annotations(other.pipe(dev_docs(other, dev_path)))
        assert got + annotations(other.pipe(texts)) == expected

    loaded = spacy.load(final)
    same_as_trained(loaded)
    nlp.to_disk(tmp_path / "again")
    same_as_trained(spacy.load(tmp_path / "again"))
    # A loaded pipeline pickles (one just trained does not, in any spaCy
    # pipeline with listeners: they keep the last batch's backprop closures).
    same_as_trained(pickle.loads(pickle.dumps(loaded)))


def test_trained_pipeline_loads_in_a_fresh_process(trained, tmp_path):
    """spacy.load finds the encoder's layers (WordEmbed, CharEncoder,
    ScaleGradient) through the entry points, before anything of ours is imported."""
    nlp, final = trained
    texts = ["The cat sat on the mat. Then it left the house.", "Hello"] + \
        [doc.text for doc in sample_docs("dev", n_sents_per_doc=3, limit=2)]
    code = (
        "import json, sys, spacy\n"
        "path, texts = sys.argv[1], json.loads(sys.argv[2])\n"
        "assert not any(m.startswith('spacy_nonmono') for m in sys.modules)\n"
        "nlp = spacy.load(path)\n"
        "print(json.dumps([[(t.head.i, t.dep_, t.pos_, t.tag_, str(t.morph), t.is_sent_start)\n"
        "                   for t in doc] for doc in nlp.pipe(texts)]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(final), json.dumps(texts)],
                            cwd=tmp_path, env=entry_point_env(tmp_path), capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    got = [[tuple(t) for t in doc] for doc in json.loads(result.stdout)]
    assert got == annotations(nlp.pipe(texts))


def sentences(doc):
    return [(s.start, s.end) for s in doc.sents]


def test_raw_text_is_split_by_the_senter(trained, monkeypatch):
    nlp, _ = trained
    text = "The cat sat on the mat. Then it left the house."
    doc = nlp(text)
    assert doc.has_annotation("SENT_START") and doc.has_annotation("DEP")
    with nlp.select_pipes(enable=["senter"]):
        split = nlp(text)
    assert split.has_annotation("SENT_START") and not split.has_annotation("DEP")
    assert sentences(doc) == sentences(split)
    assert tree_ok(doc)
    # A senter that splits after each full stop: one tree per sentence.
    senter = nlp.get_pipe("senter")

    def after_full_stops(docs):
        return [numpy.asarray([int(t.i == 0 or doc[t.i - 1].text == ".") for t in doc])
                for doc in docs]

    monkeypatch.setattr(senter, "predict", after_full_stops)
    doc = nlp(text)
    assert sentences(doc) == [(0, 7), (7, 13)]
    assert tree_ok(doc)
    assert [t.i for t in doc if t.head.i == t.i and t.dep_ == "ROOT"] == \
        [t.i for t in doc if t.head.i == t.i]


# -- 3. stack propagation --------------------------------------------------------


def encoder_gradients(nlp, examples):
    """The gradients of the shared tok2vec's parameters from one nlp.update
    from zero (sgd=False: spaCy makes no optimizer step, and Tok2Vec.update
    calls finish_update only with an optimizer, so they stay accumulated)."""
    model = nlp.get_pipe("tok2vec").model
    keys = [(node, name) for node in model.walk() for name in node.param_names]
    for node, name in keys:
        if node.has_grad(name):
            node.set_grad(name, node.ops.alloc(node.get_param(name).shape))
    nlp.update(examples, sgd=False, drop=0.0)
    return numpy.concatenate([
        (node.get_grad(name) if node.has_grad(name) else node.get_param(name) * 0).ravel()
        for node, name in keys])


def scale_layer(nlp, component):
    layers = [node for node in nlp.get_pipe(component).model.walk()
              if node.name == "scale_gradient"]
    assert len(layers) == 1
    return layers[0]


def test_taggers_train_the_encoder_with_their_configured_weight(full_corpora):
    fix_random_seed(0)
    nlp = init_nlp(small_config(full_corpora, **NO_DROPOUT))
    assert {name: scale_layer(nlp, name).attrs["scale"]
            for name in ("morphologizer", "tagger")} == {"morphologizer": 0.2, "tagger": 0.2}
    examples = list(GoldTokenCorpus(full_corpora["paths.train"])(nlp))[:2]
    # One optimizer step first: the taggers' output layers start at zero and
    # send no gradient down before they have weights.
    nlp.update(examples, drop=0.0)
    morph = scale_layer(nlp, "morphologizer")
    g1 = encoder_gradients(nlp, examples)                      # the configured 0.2
    assert numpy.array_equal(encoder_gradients(nlp, examples), g1)   # reproducible
    morph.attrs["scale"] = 0.0
    g0 = encoder_gradients(nlp, examples)
    morph.attrs["scale"] = 0.4
    g2 = encoder_gradients(nlp, examples)
    assert numpy.isfinite(g1).all() and numpy.abs(g0).max() > 0
    share = g1 - g0                     # the morphologizer's, at 0.2
    assert numpy.linalg.norm(share) > 1e-3 * numpy.linalg.norm(g0)
    # Linear in the weight (to float32 rounding of sums of size |g0|).
    error = g2 - g0 - 2 * share
    assert numpy.linalg.norm(error) < 1e-3 * numpy.linalg.norm(share)
    numpy.testing.assert_allclose(g2 - g0, 2 * share, rtol=1e-3,
                                  atol=1e-5 * numpy.abs(g0).max())


def test_taggers_train_the_encoder_when_the_parser_skips_the_batch(full_corpora):
    """The parser is the shared tok2vec's last listener, whose backprop runs
    the encoder's: it passes a zero gradient when it has nothing to learn."""
    fix_random_seed(0)
    nlp = init_nlp(small_config(full_corpora, **NO_DROPOUT))
    examples = list(GoldTokenCorpus(full_corpora["paths.train"])(nlp))[:2]
    nlp.update(examples, drop=0.0)
    # Every sentence is now too long for the parser to train on.
    nlp.get_pipe("nonmono_parser").cfg["max_sentence_length"] = 3
    losses = {}
    nlp.update(examples, sgd=False, drop=0.0, losses=losses)
    assert losses["nonmono_parser"] == 0 and losses["morphologizer"] > 0
    assert numpy.linalg.norm(encoder_gradients(nlp, examples)) > 0


# -- 4. the corpus on gold tokens -------------------------------------------------


@pytest.fixture
def gold_corpus_file(tmp_path):
    """An empty doc, two docs of three gold sentences, one doc without sentences."""
    vocab = spacy.blank("en").vocab
    golds = sample_docs("dev", n_sents_per_doc=3, limit=2)
    plain = Doc(vocab, words=["No", "sentences", "here", "."], spaces=[True, True, False, False])
    DocBin(docs=[Doc(vocab), *golds, plain]).to_disk(tmp_path / "gold.spacy")
    return tmp_path / "gold.spacy", golds


@pytest.mark.parametrize("gold_sentences", [False, True])
def test_gold_token_corpus_gives_whole_docs_on_gold_tokens(gold_corpus_file, gold_sentences):
    path, golds = gold_corpus_file
    nlp = spacy.blank("xx")
    reader = registry.resolve({"c": {"@readers": "spacy_nonmono.GoldTokenCorpus.v1",
                                     "path": str(path), "gold_sentences": gold_sentences}})["c"]
    examples = list(reader(nlp))
    assert len(examples) == 3                     # the empty doc is skipped
    for eg, gold in zip(examples, golds):
        assert len(list(gold.sents)) == 3
        predicted, reference = eg.predicted, eg.reference
        assert [t.text for t in predicted] == [t.text for t in gold]
        assert predicted.text == gold.text
        assert [t.text for t in reference] == [t.text for t in gold]
        assert [t.head.i for t in reference] == [t.head.i for t in gold]
        assert not any(predicted.has_annotation(a) for a in ("DEP", "POS", "TAG", "MORPH"))
        if gold_sentences:
            assert [t.is_sent_start for t in predicted] == [t.is_sent_start for t in gold]
            assert sentences(predicted) == sentences(gold)
        else:
            assert not predicted.has_annotation("SENT_START")
    # The doc without sentences gets none either way.
    assert [t.text for t in examples[2].predicted] == ["No", "sentences", "here", "."]
    assert not examples[2].predicted.has_annotation("SENT_START")


def test_gold_token_corpus_needs_a_path_when_read():
    reader = registry.resolve({"c": {"@readers": "spacy_nonmono.GoldTokenCorpus.v1",
                                     "path": None}})["c"]
    assert isinstance(reader, GoldTokenCorpus)
    with pytest.raises(ValueError, match="needs a path"):
        list(reader(spacy.blank("xx")))


# -- 5. init-config --pipeline full ------------------------------------------------


def init_config(tmp_path, name, *args):
    assert nonmono_main(["init-config", str(tmp_path / name), "--pipeline", "full", *args]) == 0
    config = load_config(tmp_path / name, interpolate=False)
    assert fill(config) == config
    return config


def same_but_the_parser(config, base):
    """Every component but nonmono_parser, and the rest of the config, as in base."""
    for section in base:
        if section != "components":
            assert config[section] == base[section], section
    assert set(config["components"]) == set(base["components"])
    for name in base["components"]:
        if name != "nonmono_parser":
            assert config["components"][name] == base["components"][name], name


def test_init_config_full_pipeline(corpora, tmp_path):
    base = shipped()
    config = init_config(tmp_path, "full.cfg")
    assert config == base
    result = spacy_cli("debug", "config", tmp_path / "full.cfg", *corpora, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr

    config = init_config(tmp_path, "mst.cfg", "--system", "mst", "--lang", "la")
    component = config["components"]["nonmono_parser"]
    assert (component["system"], component["decoding"], config["nlp"]["lang"]) == \
        ("mst", "global", "la")
    assert component["model"] == base["components"]["nonmono_parser"]["model"]
    config["nlp"]["lang"] = base["nlp"]["lang"]
    same_but_the_parser(config, base)


def test_init_config_full_pipeline_greedy(tmp_path):
    base = shipped()
    config = init_config(tmp_path, "greedy.cfg", "--decoding", "greedy")
    component = config["components"]["nonmono_parser"]
    assert (component["system"], component["decoding"]) == ("covington_nm", "greedy")
    assert component["model"]["@architectures"] == "spacy_nonmono.NonMonoParserModel.v1"
    assert component["model"]["tok2vec"] == LISTENER
    # The pipeline's dropout on the vectors the parser reads goes with it.
    assert component["model"]["dropout"] == base["components"]["nonmono_parser"]["model"][
        "dropout"] == 0.3
    step = load_config(config_path("nonmono_parser.cfg"))["components"]["nonmono_parser"]
    assert component["max_sentence_length"] == step["max_sentence_length"]
    same_but_the_parser(config, base)
    # It builds: the step model reads the shared encoder.
    nlp = spacy.util.load_model_from_config(load_config(tmp_path / "greedy.cfg"),
                                            auto_fill=False, validate=True)
    assert nlp.get_pipe("tok2vec").listening_components == PIPELINE[2:]


def test_init_config_full_pipeline_needs_greedy_or_beam_for_a_transition_system(
        tmp_path, capsys):
    out = tmp_path / "x.cfg"
    assert nonmono_main(["init-config", str(out), "--pipeline", "full", "--system",
                         "covington_nm"]) == 2
    error = capsys.readouterr().err
    assert ("Unknown structure 'covington_nm'. Known structures: 1ec, 1ec_arcs, mh3_arcs, "
            "mh3_chart, mh4_arcs, mh4_chart, mst") in error
    assert not out.exists()


# -- 6. the workflow's names -------------------------------------------------------


@pytest.mark.parametrize("name,system,decoding,model", [
    ("mh4+global+full", "mh4", "global", ("full",)),
    ("mst+global+full+biaffine", "mst", "global", ("full", "biaffine")),
    ("covington_nm+full", "covington_nm", None, ("full",)),
    ("spacy_parser+full", None, None, ("full",)),
    ("spacy_parser+full+beam", None, "beam", ("full",)),
])
def test_workflow_full_names(name, system, decoding, model):
    spec = parse_system(name)
    assert (spec.system, spec.settings.get("decoding"), spec.model) == (system, decoding, model)


@pytest.mark.parametrize("name,message", [
    ("covington_nm+biaffine", "+biaffine sets the global model: add +global first"),
    ("spacy_parser+biaffine", "spacy_parser takes no variant but spacy_parser+bilstm, "
                              "spacy_parser+full and spacy_parser[+full]+beam"),
    ("mh4+global+full+bilstm", "+global's and +full's models have their BiLSTM already"),
    ("covington_nm+full+bilstm", "+global's and +full's models have their BiLSTM already"),
])
def test_workflow_refuses_wrong_full_names(name, message):
    with pytest.raises(InputError) as error:
        parse_system(name)
    assert str(error.value) == f"unknown system name {name!r}: {message}"


def test_workflow_full_training_configs(tmp_path):
    """+full+lstmdrop trains the shipped config (spaCy's parser in place of
    ours for spacy_parser); +full, that of the earlier runs, differs from it
    only in the encoder's weight dropout (off)."""
    base = shipped()
    assert base["components"]["tok2vec"]["model"]["dropout"] == 0.2
    path, overrides = training_config("spacy_parser+full+lstmdrop", tmp_path)
    assert overrides == {} and path == str(
        (tmp_path / "spacy_parser+full+lstmdrop.cfg").resolve())
    config = load_config(path, interpolate=False)
    assert fill(config) == config
    assert config["nlp"]["pipeline"] == PIPELINE[:-1] + ["parser"]
    parser = config["components"].pop("parser")
    assert parser["factory"] == "parser"
    assert parser["model"]["@architectures"] == "spacy.TransitionBasedParser.v2"
    assert parser["model"]["tok2vec"] == LISTENER
    assert parser["scorer"] == {"@scorers": "spacy_nonmono.parser_scorer.v1"}
    base_components = dict(base["components"])
    del base_components["nonmono_parser"]
    assert config["components"] == base_components
    assert config["training"] == base["training"]
    beam = load_config(training_config("spacy_parser+full+beam", tmp_path)[0], interpolate=False)
    assert beam["components"]["parser"]["factory"] == "beam_parser"

    path, _ = training_config("mh4+global+full+lstmdrop", tmp_path)
    assert load_config(path, interpolate=False) == base
    path, _ = training_config("mh4+global+full", tmp_path)
    earlier = load_config(path, interpolate=False)
    assert earlier["components"]["tok2vec"]["model"]["dropout"] == 0.0
    earlier["components"]["tok2vec"]["model"]["dropout"] = 0.2
    assert earlier == base

    # Our greedy parser: +full+lstmdrop+mlpdrop is init-config's full greedy pipeline.
    greedy = filled_config(pipeline="full", decoding="greedy")
    path, _ = training_config("covington_nm+full+lstmdrop+mlpdrop", tmp_path)
    assert load_config(path, interpolate=False) == greedy
    path, _ = training_config("covington_nm+full", tmp_path)
    earlier = load_config(path, interpolate=False)
    assert earlier["components"]["nonmono_parser"]["model"]["dropout"] == 0.0
    assert earlier["components"]["tok2vec"]["model"]["dropout"] == 0.0

    path, _ = training_config("mst+global+full+lstmdrop+biaffine", tmp_path)
    config = load_config(path, interpolate=False)
    component = config["components"]["nonmono_parser"]
    assert (component["system"], component["decoding"], component["model"]["scorer"]) == \
        ("mst", "global", "biaffine")
    same_but_the_parser(config, base)


@pytest.mark.parametrize("name,parser,hidden", [
    ("spacy_parser+full", "parser", "components.parser.model.hidden_width"),
    ("covington_nm+full", "nonmono_parser", "components.nonmono_parser.model.hidden_width"),
])
def test_workflow_full_systems_train(name, parser, hidden, full_corpora, tmp_path):
    """A +full system's config, narrowed, initializes and trains: the parser
    reads the shared encoder and gives trees."""
    path, _ = training_config(name, tmp_path)
    overrides = {key: value for key, value in SMALL.items() if "nonmono_parser" not in key}
    fix_random_seed(0)
    nlp = init_nlp(load_config(path, overrides={**full_corpora, **overrides, hidden: 16}))
    assert nlp.pipe_names == PIPELINE[:-1] + [parser]
    assert nlp.get_pipe("tok2vec").listening_components == PIPELINE[2:-1] + [parser]
    examples = list(GoldTokenCorpus(full_corpora["paths.train"])(nlp))[:2]
    t2v = nlp.get_pipe("tok2vec").model
    before = [node.get_param(p).copy() for node in t2v.walk() for p in node.param_names]
    # Three updates: the taggers' and spaCy's parser's output layers start at
    # zero (no gradient below them in the first), and spaCy's nlp.update
    # steps the tok2vec before its listeners send their gradients (applied
    # at the next update).
    for _ in range(3):
        losses = {}
        nlp.update(examples, losses=losses)
        assert losses[parser] > 0
    after = [node.get_param(p) for node in t2v.walk() for p in node.param_names]
    assert any(not numpy.array_equal(b, a) for b, a in zip(before, after))
    assert tree_ok(nlp("The cat sat on the mat. Then it left the house."))
