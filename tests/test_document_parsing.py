"""A parser whose system decides sentences (arc_eager_break) trains on docs
of several sentences and writes one tree per sentence it finds; gold windows
join consecutive sentences; the setting survives saving and pickling."""
import pickle
from collections import Counter

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_nonmono.pipeline.sentences import document_windows, gold_trees, windows

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
    # Parsing windows: a doc without boundaries in windows of 4 words; one
    # with boundaries by its sentences, as for any system.
    assert windows(Doc(nlp.vocab, words=words), 4, documents=True) == [
        (0, 0, 4), (4, 4, 8), (8, 8, 9)]
    assert windows(reference, 4, documents=True) == windows(reference, 4) == [
        (0, 0, 3), (3, 3, 5), (5, 5, 9)]


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
