"""`nonmono_senter`: spaCy's senter whose sentences stay within a length
bound, cut at the senter's likeliest boundaries. The cut is checked against
an exhaustive search over every segmentation; the component against spaCy's
senter with the same weights."""
import itertools
import math
import pickle

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from spacy.training import Example

from spacy_nonmono.pipeline.senter import (BoundedSentenceRecognizer, bound_sentences,
                                           likeliest_starts)


def brute_force_best(log_odds, max_length):
    """The best total log odds over every set of starts whose pieces are at
    most max_length words (None: no such set)."""
    n = len(log_odds)
    best = None
    for k in range(n):
        for starts in itertools.combinations(range(1, n), k):
            bounds = [0, *starts, n]
            if any(b - a > max_length for a, b in zip(bounds, bounds[1:])):
                continue
            score = sum(log_odds[p] for p in starts)
            if score > -math.inf and (best is None or score > best):
                best = score
    return best


@pytest.mark.slow   # an exhaustive search over every segmentation
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(-8, 8), st.just(-math.inf)), min_size=1, max_size=9),
       st.integers(1, 9))
def test_likeliest_starts_is_the_best_segmentation(log_odds, max_length):
    starts = likeliest_starts(numpy.array(log_odds), max_length)
    best = brute_force_best(log_odds, max_length)
    if best is None:
        assert starts is None
        return
    assert starts == sorted(set(starts)) and all(0 < p < len(log_odds) for p in starts)
    bounds = [0, *starts, len(log_odds)]
    assert max(b - a for a, b in zip(bounds, bounds[1:])) <= max_length
    assert sum(log_odds[p] for p in starts) == pytest.approx(best)


def test_likeliest_starts_keeps_a_short_span_whole():
    assert likeliest_starts(numpy.array([0.0, -1.0, -2.0]), 3) == []
    # Where every start is unlikely, as few cuts as the bound allows, each
    # at the best odds it leaves.
    assert likeliest_starts(numpy.array([0.0, -5, -5, -1, -5, -5]), 3) == [3]
    assert likeliest_starts(numpy.array([0.0, -1, -5, -5, -5, -5, -5]), 4) == [3]
    assert likeliest_starts(numpy.array([0.0, -2, -2, -2]), 1) == [1, 2, 3]
    assert likeliest_starts(numpy.array([0.0, -numpy.inf, -numpy.inf]), 2) is None


SENTENCE = "the cat sat on a mat ."


@pytest.fixture(scope="module")
def trained_senter():
    """A blank pipeline whose spaCy senter learned to start a sentence after
    "." and at "the" (a few seconds of training)."""
    nlp = spacy.blank("xx")
    nlp.add_pipe("senter", config={"model": {"tok2vec": {"width": 16, "embed_size": 200}}})
    examples = []
    for k in range(12):
        words = (SENTENCE.split() + ["so", "the", "dog", "ran", "."]) * 2
        starts = [w == "the" or (i > 0 and words[i - 1] == ".") for i, w in enumerate(words)]
        starts[0] = True
        reference = Doc(nlp.vocab, words=words, sent_starts=starts)
        examples.append(Example(nlp.make_doc(reference.text), reference))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(15):
        nlp.update(examples, sgd=optimizer)
    return nlp


def senter_starts(nlp, text):
    return [sent.start for sent in nlp(text).sents]


def test_without_a_bound_it_is_spacys_senter(trained_senter):
    text = " ".join([SENTENCE] * 6 + ["cat sat on mat"] * 8)
    expected = senter_starts(trained_senter, text)
    nlp = pickle.loads(pickle.dumps(trained_senter))
    bound_sentences(nlp, None)
    assert isinstance(nlp.get_pipe("senter"), BoundedSentenceRecognizer)
    assert nlp.config["components"]["senter"]["factory"] == "nonmono_senter"
    assert senter_starts(nlp, text) == expected


def test_long_spans_are_cut_at_the_likeliest_boundaries(trained_senter):
    nlp = pickle.loads(pickle.dumps(trained_senter))
    text = "cat sat on mat " * 10 + SENTENCE
    unbounded = senter_starts(nlp, text)
    senter = bound_sentences(nlp, 6).get_pipe("senter")
    doc = nlp(text)
    assert max(len(sent) for sent in doc.sents) <= 6
    # The cuts are the likeliest under the senter's own log odds.
    _, log_odds = senter.predict([nlp.make_doc(text)])[0]
    bounded = [sent.start for sent in doc.sents]
    spans = list(zip(unbounded, unbounded[1:] + [len(doc)]))
    assert any(b - a > 6 for a, b in spans)    # the senter alone leaves a long span
    for a, b in spans:
        if b - a > 6:
            cut = likeliest_starts(log_odds[a:b], 6)
            assert [s - a for s in bounded if a < s < b] == cut
        else:
            assert not [s for s in bounded if a < s < b]


def test_sentences_set_before_it_are_kept(trained_senter):
    nlp = pickle.loads(pickle.dumps(trained_senter))
    bound_sentences(nlp, 4)
    words = ("cat sat on mat " * 5).split()
    doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))
    assert len(list(nlp(doc).sents)) == 1      # overwrite = false: gold sentences stay
    doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 9 + [None] * 10)
    sents = list(nlp(doc).sents)
    assert sents[0].end >= 10 and all(len(s) <= 4 for s in sents[1:])


def test_saved_and_pickled_bound(trained_senter, tmp_path):
    nlp = pickle.loads(pickle.dumps(trained_senter))
    bound_sentences(nlp, 5)
    text = "cat sat on mat " * 12
    expected = senter_starts(nlp, text)
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert loaded.get_pipe("senter").max_length == 5
    assert senter_starts(loaded, text) == expected
    assert senter_starts(pickle.loads(pickle.dumps(loaded)), text) == expected
    # A config's factory builds it directly.
    fresh = spacy.blank("xx")
    assert fresh.add_pipe("nonmono_senter", config={"max_length": 7}).max_length == 7


def test_bound_errors(trained_senter):
    nlp = spacy.blank("xx")
    with pytest.raises(ValueError, match="no component 'senter'"):
        bound_sentences(nlp, 5)
    nlp.add_pipe("sentencizer", name="senter")
    with pytest.raises(ValueError, match="not a senter"):
        bound_sentences(nlp, 5)
    with pytest.raises(ValueError, match="at least 1"):
        spacy.blank("xx").add_pipe("nonmono_senter", config={"max_length": 0})
