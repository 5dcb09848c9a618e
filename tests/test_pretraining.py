"""Pretraining the full pipeline's shared encoder with `spacy pretrain`: the
config's `[pretraining]` settings (`init-config --pretraining`,
`configs.add_pretraining`), raw text one tokenized sentence a line
(spacy_nonmono.RawTextCorpus.v1), spaCy's masked-word objectives on our
encoder (the static vectors' objective where the encoder reads vectors, the
characters' otherwise), and `spacy train` starting from the weights
(`paths.init_tok2vec`); the workflow's +pretrain."""
import io

import numpy
import pytest
from spacy.training.initialize import init_nlp
from spacy.util import load_config, load_config_from_str

from conftest import ROOT, run_command, run_spacy
from spacy_nonmono.configs import add_pretraining, filled_config
from spacy_nonmono.pipeline.corpus import RawTextCorpus
from test_full_pipeline import SMALL, full_corpora  # noqa: F401 (a fixture)
from test_vectors import sample_words, vectors_path  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def raw_text(tmp_path_factory):
    """200 sentences of sample words, one tokenized sentence a line."""
    rng = numpy.random.default_rng(5)
    words = sample_words()
    path = tmp_path_factory.mktemp("raw") / "raw.txt"
    path.write_text("\n".join(" ".join(rng.choice(words, size=rng.integers(3, 15)))
                              for _ in range(200)) + "\n", encoding="utf8")
    return path


def test_raw_text_corpus_reads_tokenized_sentences(tmp_path):
    import spacy

    nlp = spacy.blank("en")
    path = tmp_path / "raw.txt"
    path.write_text("Gallia est omnis divisa .\n\nin partes\n  tres , quarum unam  \n"
                    "Belgae fortissimi sunt !\n", encoding="utf8")
    docs = [eg.reference for eg in RawTextCorpus(path)(nlp)]
    # The corpus's tokens as they are, never retokenized ("tres ," stays two words).
    assert [[t.text for t in doc] for doc in docs] == [
        ["Gallia", "est", "omnis", "divisa", "."], ["in", "partes"],
        ["tres", ",", "quarum", "unam"], ["Belgae", "fortissimi", "sunt", "!"]]
    assert [len(eg.reference) for eg in RawTextCorpus(path, min_length=3, max_length=4,
                                                       limit=2)(nlp)] == [4, 4]
    corpus = RawTextCorpus(None)   # a config may leave paths.raw_text unset ...
    with pytest.raises(ValueError, match="needs a path \\(set paths.raw_text"):
        list(corpus(nlp))          # ... until pretraining reads it
    with pytest.raises(ValueError, match="no such file"):
        list(RawTextCorpus(tmp_path / "none.txt")(nlp))


def test_pretraining_settings_pick_the_objective():
    with_vectors = filled_config(pipeline="full", vectors=None, pretraining=True)
    assert with_vectors["pretraining"]["objective"]["@architectures"] == \
        "spacy.PretrainCharacters.v1"
    assert with_vectors["pretraining"]["component"] == "tok2vec"
    assert with_vectors["pretraining"]["max_epochs"] == 1
    assert with_vectors["corpora"]["pretrain"]["@readers"] == "spacy_nonmono.RawTextCorpus.v1"
    assert with_vectors["corpora"]["pretrain"]["path"] == "${paths.raw_text}"
    config = filled_config(pipeline="full")
    config["components"]["tok2vec"]["model"]["tok2vec"]["vectors"] = {
        "@architectures": "spacy_nonmono.StaticVectors.v1", "nO": None, "nM": None}
    assert add_pretraining(config)["pretraining"]["objective"]["@architectures"] == \
        "spacy.PretrainVectors.v1"
    with pytest.raises(ValueError, match="shared `tok2vec` component"):
        add_pretraining(filled_config(pipeline="parser"))


@pytest.mark.parametrize("vectors", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["characters", "vectors"])
def test_spacy_pretrain_then_train_from_its_weights(vectors, vectors_path, full_corpora,
                                                    raw_text, tmp_path):
    """`spacy pretrain` (the CLI) trains the small full pipeline's encoder
    on raw text, and `spacy train`'s initialization loads those weights into
    it: every parameter of the encoder is the pretrained one, where a run
    without them starts elsewhere; the pipeline then trains and parses."""
    from spacy.training.loop import train as train_loop

    lang = "en"
    args = ["init-config", "full.cfg", "--pipeline", "full", "--lang", lang, "--pretraining"]
    if vectors:
        args += ["--vectors", str(vectors_path)]
    run_command(*args, cwd=tmp_path, check=True)
    text = (tmp_path / "full.cfg").read_text(encoding="utf8")
    objective = "PretrainVectors" if vectors else "PretrainCharacters"
    assert f'@architectures = "spacy.{objective}.v1"' in text
    overrides = [x for k, v in {**full_corpora, **SMALL}.items() for x in ("--" + k, str(v))]
    result = run_spacy("pretrain", "full.cfg", "pretrained", "--paths.raw_text", str(raw_text),
                       *overrides, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    weights = tmp_path / "pretrained" / "model-last.bin"
    assert weights.is_file()

    def initialized(init_tok2vec):
        config = load_config_from_str(text, overrides={
            **full_corpora, **SMALL, "paths.init_tok2vec": init_tok2vec,
            "training.max_steps": 2, "training.eval_frequency": 2})
        return init_nlp(config)

    def encoder_params(nlp):
        return [node.get_param(name) for node in nlp.get_pipe("tok2vec").model.walk()
                for name in node.param_names if node.has_param(name)]

    nlp = initialized(str(weights))
    fresh = initialized(None)
    reference = initialized(None)
    reference.get_pipe("tok2vec").model.from_bytes(weights.read_bytes())
    loaded, plain, expected = map(encoder_params, (nlp, fresh, reference))
    assert len(loaded) == len(expected) >= 8
    assert all(numpy.array_equal(a, b) for a, b in zip(loaded, expected))
    assert not all(numpy.array_equal(a, b) for a, b in zip(plain, expected))
    (tmp_path / "trained").mkdir()
    nlp, _ = train_loop(nlp, tmp_path / "trained", stdout=io.StringIO(), stderr=io.StringIO())
    doc = nlp("The cat sat on the mat .")
    assert all(token.head.i in range(len(doc)) for token in doc)


def test_workflow_pretrain_names_and_inputs(tmp_path):
    """+pretrain, after +full, adds the pretraining settings to the config;
    the train step pretrains on --raw-text-dir/<treebank>.txt and says what
    is missing before training."""
    from benchmarks.system_names import parse_system, training_config
    from benchmarks.workflow.training import sample_sentences
    from spacy_nonmono.cli.common import InputError

    assert parse_system("mh4+global+full+vectors+pretrain").model == ("full", "vectors",
                                                                      "pretrain")
    assert parse_system("spacy_parser+full+pretrain").model == ("full", "pretrain")
    with pytest.raises(InputError, match=r"\+pretrain pretrains the full pipeline's shared"):
        parse_system("covington_nm+pretrain")
    config = load_config(training_config("mh4+global+full+vectors+pretrain", tmp_path)[0],
                         interpolate=False)
    assert config["pretraining"]["objective"]["@architectures"] == "spacy.PretrainVectors.v1"
    assert not load_config(training_config("mh4+global+full", tmp_path)[0],
                           interpolate=False).get("pretraining")
    root = tmp_path / "bench"
    args = ["workflow", "train", "--root", root, "--systems", "mh4+global+full+pretrain"]
    result = run_command(*args, cwd=ROOT, lab=True)
    assert result.returncode == 2 and "give --raw-text-dir" in result.stderr
    result = run_command(*args, "--raw-text-dir", tmp_path, cwd=ROOT, lab=True)
    assert result.returncode == 2 and f"no raw text for sample: {tmp_path / 'sample.txt'}" \
        in result.stderr
    assert not root.exists()
    # The sample: whole lines, seeded, until the words asked for are reached.
    source = tmp_path / "raw.txt"
    source.write_text("".join(f"w{k} x y\n" for k in range(100)), encoding="utf8")
    assert sample_sentences(source, tmp_path / "a.txt", 30) == 30
    assert sample_sentences(source, tmp_path / "b.txt", 30) == 30
    lines = (tmp_path / "a.txt").read_text(encoding="utf8").splitlines()
    assert len(lines) == 10 and set(lines) <= set(source.read_text().splitlines())
    assert lines == (tmp_path / "b.txt").read_text(encoding="utf8").splitlines()
    assert lines != source.read_text().splitlines()[:10]
