"""A parser whose system decides sentences (arc_eager_break) trains on docs
of several sentences and writes one tree per sentence it finds; gold windows
join consecutive sentences; the setting survives saving and pickling."""
import pickle
from collections import Counter

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_nonmono.pipeline.sentences import document_windows, gold_trees

from conftest import SMALL_MODEL, sample_docs, tree_ok

# The sample's docs hold a few sentences the parser cannot train on (it says so).
pytestmark = pytest.mark.filterwarnings("ignore:.*Training will skip some gold sentences")


def test_gold_windows_join_consecutive_sentences():
    nlp = spacy.blank("en")
    words = list("abcdefghi")
    # Sentences a b c (b the root), d e (d), f g h i (f).
    reference = Doc(nlp.vocab, words=words, heads=[1, 1, 1, 3, 3, 5, 5, 5, 5],
                    deps=["det", "ROOT", "obj", "ROOT", "obj", "ROOT", "x", "x", "x"],
                    sent_starts=[1, 0, 0, 1, 0, 1, 0, 0, 0])
    eg = Example(Doc(nlp.vocab, words=words), reference)
    problems = Counter()
    assert [(s, e, h) for _, s, e, h, _ in gold_trees([eg], 5, "none", problems,
                                                      documents=True)] == [
        (0, 5, [2, 0, 2, 0, 4]), (5, 9, [0, 1, 1, 1])]
    assert [(s, e) for _, s, e, *_ in gold_trees([eg], 9, "none", problems,
                                                 documents=True)] == [(0, 9)]
    # A sentence that cannot be trained on ends a window.
    trees = [(0, 0, 2, [0, 1], ["ROOT", "x"]), (0, 3, 4, [0], ["ROOT"]),
             (1, 4, 5, [0], ["ROOT"])]
    assert [(d, s, e) for d, s, e, *_ in document_windows(trees, 10)] == [
        (0, 0, 2), (0, 3, 4), (1, 4, 5)]



@pytest.fixture(scope="module")
def trained():
    """A blank pipeline whose arc_eager_break parser learned on docs of 10
    sample sentences, with no senter."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL, "system": "arc_eager_break",
                                           "max_sentence_length": 60})
    docs = sample_docs("train", n_sents_per_doc=10, limit=8)
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    optimizer = nlp.initialize(lambda: examples)
    losses = []
    for _ in range(20):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["nonmono_parser"])
    return nlp, examples, losses


def test_it_learns_and_decides_sentences(trained):
    nlp, examples, losses = trained
    assert losses[-1] < losses[0]
    n_sents = 0
    for eg in examples:
        doc = nlp(eg.reference.text)
        tree_ok(doc)
        n_sents += len(list(doc.sents))
        # One root per sentence, labelled ROOT.
        assert all(sum(t.dep_ == "ROOT" for t in sent) == 1 for sent in doc.sents)
    assert n_sents > len(examples)


def test_boundaries_given_are_kept(trained):
    """Sentences set before it (with the text, or by a senter) stay: it
    parses each as a tree, as spaCy's parser does."""
    nlp, examples, _ = trained
    for eg in examples[:3]:
        reference = eg.reference
        doc = nlp(Doc(nlp.vocab, words=[t.text for t in reference],
                      sent_starts=[t.is_sent_start for t in reference]))
        tree_ok(doc)
        assert [s.start for s in doc.sents] == [s.start for s in reference.sents]


def test_saved_loaded_and_pickled(trained, tmp_path):
    nlp, examples, _ = trained
    text = examples[0].reference.text
    expected = [(t.head.i, t.dep_, t.is_sent_start) for t in nlp(text)]
    nlp.to_disk(tmp_path)
    for other in (spacy.load(tmp_path), pickle.loads(pickle.dumps(nlp))):
        assert other.get_pipe("nonmono_parser").decides_sentences
        assert [(t.head.i, t.dep_, t.is_sent_start) for t in other(text)] == expected


def test_long_docs_are_read_in_windows_that_start_at_a_sentence(trained, monkeypatch):
    """A doc longer than max_sentence_length (60) is parsed in rounds: each
    window keeps its trees but the last, and the next starts there; a window
    that is one tree is kept whole."""
    import numpy

    from spacy_nonmono.decoders.base import Parses

    nlp, _, _ = trained
    parser = nlp.get_pipe("nonmono_parser")
    # Each word says where it is in the doc, so the decoder below sees
    # where a window (a doc of its own) lies.
    words = [str(k) for k in range(170)]
    seen = []

    def fake_predict(size):
        def predict(model, moves, docs, spans):
            # Sentences of `size` words from the doc's start; each word
            # attached to its sentence's first word.
            heads = []
            for d, s, e in spans:
                positions = [int(t.text) for t in docs[d][s:e]]
                seen.append((positions[0], positions[-1] + 1))
                first = [max(positions[0], p - p % size) for p in positions]
                heads.append(numpy.array([0 if f == p else f - positions[0] + 1
                                          for p, f in zip(positions, first)]))
            return Parses(heads, [numpy.zeros(len(h), dtype="int32") for h in heads], 0)
        return predict

    monkeypatch.setattr(parser.decoder, "predict", fake_predict(7))
    doc = nlp(Doc(nlp.vocab, words=words))
    tree_ok(doc)
    assert [s.start for s in doc.sents] == list(range(0, len(words), 7))
    assert seen == [(0, 60), (56, 116), (112, 170)]
    # One tree a window: cut where the window ends.
    seen.clear()
    monkeypatch.setattr(parser.decoder, "predict", fake_predict(1000))
    doc = nlp(Doc(nlp.vocab, words=words))
    assert [s.start for s in doc.sents] == list(range(0, len(words), 60))
    assert seen == [(0, 60), (60, 120), (120, 170)]


def test_beam_search_decides_sentences_too():
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL, "system": "arc_eager_break",
                                           "decoding": "beam", "max_sentence_length": 40})
    docs = sample_docs("train", n_sents_per_doc=10, limit=4)
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    for eg in examples:
        doc = nlp(eg.reference.text)
        tree_ok(doc)
        assert len(list(doc.sents)) > 1


def test_no_sentence_bound_for_a_parser_that_decides_them():
    from spacy_nonmono.pipeline.senter import bound_sentences, takes_sentence_bound

    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", name="senter", config={"model": SMALL_MODEL,
                                                          "system": "arc_eager_break"})
    assert not takes_sentence_bound(nlp)
    with pytest.raises(ValueError, match="trees decide the sentences"):
        bound_sentences(nlp, 60)
    nlp.add_pipe("nonmono_senter", name="other")
    assert takes_sentence_bound(nlp, "other") and not takes_sentence_bound(nlp, "absent")
