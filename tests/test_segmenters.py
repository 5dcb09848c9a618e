"""The full pipeline's sentence splitters (docs/sentences.md): spaCy's senter
CNN as shipped, and the BiLSTM senter (`init-config --senter bilstm`,
`configs.bilstm_senter`) that reads the whole text across sentences. Each
builds, trains a few steps through spaCy's loop, saves, loads and pickles;
the BiLSTM senter's decision at a word depends on words of the next
sentence."""
import io

import numpy
import pytest
from spacy.tokens import Doc
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import load_config
from thinc.api import fix_random_seed

from benchmarks.system_names import parse_system, training_config
from test_full_pipeline import SMALL, assert_round_trips, full_corpora  # noqa: F401
from spacy_nonmono.configs import bilstm_senter, config_path, filled_config, shared_senter

SENTER = "components.senter.model.tok2vec."
SMALL_SENTER = {SENTER + "width": 16, SENTER + "tok2vec.width": 8,
                SENTER + "tok2vec.chars.width": 8, SENTER + "tok2vec.chars.char_width": 4,
                SENTER + "tok2vec.chars.lstm_width": 8}


def test_senter_setting_makes_the_bilstm_senter_and_checks_its_name():
    config = filled_config(pipeline="full", senter="bilstm")
    encoder = config["components"]["senter"]["model"]["tok2vec"]
    assert encoder["@architectures"] == "spacy_nonmono.BiLSTMEncoder.v1"
    # The whole text, not sentence by sentence: the senter decides them.
    assert encoder["sentences"] is False
    assert encoder["tok2vec"]["combine"] == "sum"
    shipped = filled_config(pipeline="full")
    assert shipped["components"]["senter"]["model"]["tok2vec"]["@architectures"] == \
        "spacy.HashEmbedCNN.v2"
    with pytest.raises(ValueError, match="Unknown senter"):
        filled_config(pipeline="full", senter="crf")
    with pytest.raises(ValueError, match="has no `senter`"):
        bilstm_senter(filled_config(pipeline="parser"))
    for pipeline in ("parser", "transformer"):
        with pytest.raises(ValueError, match="a setting of the full pipeline"):
            filled_config(pipeline=pipeline, senter="shared")


def test_bilstm_senter_reads_static_vectors_with_the_pipeline(tmp_path):
    """`--vectors` reaches the BiLSTM senter's own encoder too."""
    from spacy_nonmono.configs import read_static_vectors

    config = read_static_vectors(filled_config(pipeline="full", senter="bilstm"))
    words = config["components"]["senter"]["model"]["tok2vec"]["tok2vec"]
    assert words["vectors"]["@architectures"] == "spacy_nonmono.StaticVectors.v1"


def test_workflow_names_select_the_senters(tmp_path):
    spec = parse_system("mh4+global+full+lstmdrop+bilstmsenter")
    assert spec.model == ("full", "lstmdrop", "bilstmsenter")
    path, _ = training_config("mh4+global+full+lstmdrop+bilstmsenter", tmp_path)
    config = load_config(path, interpolate=False)
    assert config["components"]["senter"]["model"]["tok2vec"]["@architectures"] == \
        "spacy_nonmono.BiLSTMEncoder.v1"
    for name in ("mh4+global+full+lstmdrop+sharedsenter", "spacy_parser+full+sharedsenter",
                 "mh4+global+full+lstmdrop+syntaxsenter", "mh4+global+full+lstmdrop+breaksenter"):
        path, _ = training_config(name, tmp_path)
        config = load_config(path, interpolate=False)
        assert config["nlp"]["pipeline"][:2] == ["tok2vec", "senter"]
    # +marks20: a full stop closing the sentences of 20% of the training docs.
    path, _ = training_config("mh4+global+full+lstmdrop+syntaxsenter+marks20", tmp_path)
    augmenter = load_config(path, interpolate=False)["corpora"]["train"]["augmenter"]
    assert (augmenter["add"], augmenter["remove"], augmenter["mark"]) == (0.2, 0.0, ".")
    with pytest.raises(Exception, match="add \\+full first"):
        parse_system("mh4+global+bilstmsenter")


@pytest.mark.parametrize("senter", ["bilstm", "shared", "syntax",
                                    pytest.param("break", marks=pytest.mark.slow)])
def test_senters_train_save_load_pickle_and_read_across_sentences(
        full_corpora, tmp_path, senter):  # noqa: F811
    from spacy_nonmono.configs import SENTERS, augment_punctuation

    config = load_config(config_path("full_pipeline.cfg"), interpolate=False,
                         overrides={**full_corpora, **SMALL, "training.max_steps": 8,
                                    "training.eval_frequency": 4})
    SENTERS[senter](config)
    # Training text with and without punctuation, through spaCy's loop.
    augment_punctuation(config, add=0.3, remove=0.3)
    if senter == "bilstm":
        for key, value in SMALL_SENTER.items():
            *sections, name = key.split(".")
            section = config
            for part in sections:
                section = section[part]
            section[name] = value
    fix_random_seed(0)
    nlp = init_nlp(config)
    log = io.StringIO()
    (tmp_path / "train").mkdir()
    nlp, final = train_loop(nlp, tmp_path / "train", stdout=log, stderr=log)
    doc = nlp("The cat sat on the mat . Then it left the house .")
    assert doc[0].is_sent_start and all(len(s) for s in doc.sents)
    assert_round_trips(nlp, final, full_corpora["paths.dev"], tmp_path)

    def scores(words):
        doc = Doc(nlp.vocab, words=words)
        if senter == "break":
            # The vectors its parser reads.
            return nlp.get_pipe("tok2vec").model.predict([doc])[0]
        if senter != "bilstm":
            nlp.get_pipe("tok2vec")(doc)
        scores = nlp.get_pipe("senter").model.predict([doc])[0]
        # The syntax senter's band: each word's score as a root.
        return scores[:, nlp.get_pipe("senter").max_length - 1:][:, :1] \
            if senter == "syntax" else scores

    first = "The cat sat on the mat".split()
    # The first word is scored from words six and more away, in the next
    # sentence (the CNN senter sees two words each side).
    a = scores(first + "Then it left".split())
    b = scores(first + "house dog cat".split())
    assert not numpy.allclose(a[0], b[0])


def test_shared_senter_reads_the_shared_encoder_over_the_whole_text():
    config = filled_config(pipeline="full", senter="shared")
    assert config["nlp"]["pipeline"][:2] == ["tok2vec", "senter"]
    encoder = config["components"]["tok2vec"]["model"]
    assert encoder["sentences"] is False and (encoder["window"], encoder["overlap"]) == (64, 32)
    listener = config["components"]["senter"]["model"]["tok2vec"]["layer"]
    assert listener["@architectures"] == "spacy.Tok2VecListener.v1"
    assert listener["upstream"] == "tok2vec"
    with pytest.raises(ValueError, match="has no `senter` and shared `tok2vec`"):
        shared_senter(filled_config(pipeline="parser"))


# -- training text with and without punctuation ---------------------------------------

from conftest import sample_docs, tree_ok  # noqa: E402
from spacy.training import Example  # noqa: E402
from spacy_nonmono.pipeline.punctuation import (punctuation_augmenter, with_marks,  # noqa: E402
                                                without_punctuation)


def kept_annotation(token):
    return (token.text, token.pos_, token.tag_, str(token.morph), token.lemma_, token.dep_)


@pytest.fixture(scope="module")
def sample():
    """The shipped sample's training sentences, 10 a doc, and the same
    sentences without their punctuation (as a PROIEL treebank has them)."""
    docs = sample_docs("train", n_sents_per_doc=10)
    return docs, [without_punctuation(doc) for doc in docs]


def test_marks_close_every_sentence_and_keep_the_trees(sample):
    for doc in [d for pair in zip(*sample) for d in pair]:
        marked = with_marks(doc, ".")
        assert tree_ok(marked)
        sentences, marked_sentences = list(doc.sents), list(marked.sents)
        assert len(sentences) == len(marked_sentences)
        for sent, new in zip(sentences, marked_sentences):
            assert new[-1].pos_ == "PUNCT"
            added = sent[-1].pos_ != "PUNCT"
            assert len(new) == len(sent) + added
            words = list(new)[:len(sent)]
            assert [kept_annotation(t) for t in words] == [kept_annotation(t) for t in sent]
            # Heads keep their words (positions shift by the marks before).
            assert [t.head.i - new.start for t in words] == [t.head.i - sent.start for t in sent]
            if added:
                assert (new[-1].text, new[-1].dep_, new[-1].head.i) == (".", "punct",
                                                                          new.root.i)
                assert not new[-2].whitespace_
        assert with_marks(marked, ".").text == marked.text


def test_removing_punctuation_keeps_sentences_trees_and_words_apart(sample):
    docs, bare = sample
    for doc, stripped in zip(docs, bare):
        assert tree_ok(stripped)
        assert len(list(stripped.sents)) == len(list(doc.sents))
        removed = [t for t in doc if t.pos_ == "PUNCT"]
        assert len(doc) - len(stripped) <= len(removed)
        # A removed mark between two words leaves them apart: every word of
        # the text is (part of) a word of the punctuated text.
        chunks = doc.text.split()
        assert all(any(word in chunk for chunk in chunks) for word in stripped.text.split())
        kept = [t for t in doc if t.pos_ != "PUNCT"]
        assert [t.text for t in stripped if t.pos_ != "PUNCT"] == [t.text for t in kept]
    assert sum(len(d) for d in docs) > sum(len(d) for d in bare)
    # What is left is punctuation that heads words, is a root or sits inside a word.
    inside = sample_docs("train")[0].vocab
    doc = Doc(inside, words=["a", "15", "-", "year", "term", "."], spaces=[True, False, False,
                                                                          True, False, False],
              heads=[4, 3, 3, 4, 4, 4], deps=["det", "nummod", "punct", "compound", "ROOT",
                                              "punct"],
              pos=["DET", "NUM", "PUNCT", "NOUN", "NOUN", "PUNCT"])
    assert without_punctuation(doc).text == "a 15-year term"


def test_augmenter_rewrites_its_share_of_docs_with_their_sentences(sample):
    import spacy

    nlp = spacy.blank("en")
    docs, bare = sample
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d],
                            sent_starts=[t.is_sent_start for t in d]), d) for d in bare]
    out = [eg for example in examples for eg in punctuation_augmenter(add=1.0)(nlp, example)]
    assert [eg.reference.text for eg in out] == [with_marks(d, ".").text for d in bare]
    for eg in out:
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
        assert [t.is_sent_start for t in eg.predicted] == [t.is_sent_start
                                                           for t in eg.reference]
    kept = [eg for example in examples for eg in punctuation_augmenter()(nlp, example)]
    assert [eg.reference for eg in kept] == [eg.reference for eg in examples]
    import random
    random.seed(0)
    mixed = [eg for example in examples
             for eg in punctuation_augmenter(add=0.5)(nlp, example)]
    changed = sum(eg.reference.text != example.reference.text
                  for eg, example in zip(mixed, examples))
    assert 0 < changed < len(examples)
    for bad in ({"add": 0.7, "remove": 0.5}, {"add": -0.1}, {"mark": "a b"}, {"mark": ""}):
        with pytest.raises(ValueError, match="punctuation_augmenter"):
            punctuation_augmenter(**bad)


def test_augmenter_is_registered_for_configs():
    from spacy.util import registry

    make = registry.augmenters.get("spacy_nonmono.punctuation_augmenter.v1")
    assert callable(make(add=0.5))
    config = filled_config(pipeline="full", add_marks=0.5, remove_punctuation=0.25)
    augmenter = config["corpora"]["train"]["augmenter"]
    assert (augmenter["add"], augmenter["remove"], augmenter["mark"]) == (0.5, 0.25, ".")
    assert "augmenter" not in config["corpora"]["dev"] or \
        config["corpora"]["dev"]["augmenter"] is None
    with pytest.raises(ValueError, match="at most 1"):
        filled_config(pipeline="full", add_marks=0.7, remove_punctuation=0.6)


def test_document_blocks_split_at_newdoc_and_keep_every_sentence():
    from spacy_nonmono.conllu_io import document_blocks

    def sentence(n, newdoc=False):
        head = "# newdoc id = d\n" if newdoc else ""
        return head + f"# sent_id = {n}\n1\tw{n}\tw\tX\t_\t_\t0\troot\t_\t_\n"

    text = "\n".join([sentence(1, True), sentence(2), sentence(3, True), sentence(4)]) + "\n"
    blocks = document_blocks(text)
    assert [b.count("# sent_id") for b in blocks] == [2, 2]
    assert blocks[1].startswith("# newdoc")
    # No # newdoc: one document; the sentences as they were.
    plain = "\n".join([sentence(1), sentence(2)]) + "\n"
    assert document_blocks(plain) == [plain]


@pytest.mark.slow
def test_segmenters_command_trains_scores_and_reuses(tmp_path):
    """`python -m benchmarks segmenters` trains a senter alone on a treebank
    (here the shipped sample), scores it on whole documents as they are and
    with every sentence closed by a full stop, writes one record per run and
    a table, and reuses the trained senter; a bad name is one error line."""
    import json

    from conftest import SAMPLE, run_command

    ud = tmp_path / "ud"
    ud.mkdir()
    (ud / "sample").symlink_to(SAMPLE)
    args = ["segmenters", "--ud-dir", ud, "--treebanks", "sample", "--root", tmp_path / "bench",
            "--senters", "cnn", "--max-steps", "4", "--eval-frequency", "2"]
    out = run_command(*args, cwd=tmp_path, lab=True, check=True).stdout
    assert "| cnn | 1 |" in out
    folder = tmp_path / "bench" / "segmenters" / "sample"
    record = json.loads((folder / "cnn.as-is.as-is.json").read_text())
    assert 0 <= record["test"]["f1"] <= 100 and record["train_minutes"] > 0
    marked = run_command(*args, "--test-text", "marked", cwd=tmp_path, lab=True, check=True)
    assert "training" not in marked.stderr + marked.stdout.split("|")[0]
    assert json.loads((folder / "cnn.as-is.marked.json").read_text())["train_minutes"] is None
    bad = run_command(*args[:-6], "--senters", "crf", cwd=tmp_path, lab=True)
    assert bad.returncode == 2 and "unknown senter 'crf'" in bad.stderr
    # A trained pipeline scored on each text, training nothing.
    scored = run_command("segmenters", "--ud-dir", ud, "--treebanks", "sample", "--pipelines",
                         folder / "cnn.as-is" / "model-best", "--json", tmp_path / "scores.json",
                         cwd=tmp_path, lab=True, check=True)
    rows = json.loads((tmp_path / "scores.json").read_text())
    assert [r["text"] for r in rows] == ["as-is", "unpunctuated", "marked"]
    assert rows[0]["f1"] == record["test"]["f1"]
    assert "| marked |" in scored.stdout
    not_trained = run_command("segmenters", "--ud-dir", ud, "--treebanks", "sample",
                              "--pipelines", tmp_path, cwd=tmp_path, lab=True)
    assert not_trained.returncode == 2 and "not a trained pipeline" in not_trained.stderr
