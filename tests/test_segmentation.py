"""The joint sentence-and-tree chart (graph/segmentation.pyx) against
exhaustive search over every head assignment of short texts (the slow
tier); the hand-made cases run in the fast one."""
import itertools

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_nonmono.graph.segmentation import best_segmentation


def valid_analysis(heads, max_length):
    """The sentence starts of heads (-1: a root) when every sentence is a
    contiguous span of at most max_length words holding one projective tree
    with one root; else None."""
    n = len(heads)
    roots = []
    for m in range(n):
        seen, w = set(), m
        while heads[w] != -1:
            if w in seen:
                return None
            seen.add(w)
            w = heads[w]
        roots.append(w)
    starts = [m for m in range(n) if m == 0 or roots[m] != roots[m - 1]]
    if len(starts) != len(set(roots)):
        return None   # a tree whose words are not contiguous
    ends = starts[1:] + [n]
    if any(e - s > max_length for s, e in zip(starts, ends)):
        return None
    for m in range(n):   # projective: every word between a head and its dependent is under the head
        h = heads[m]
        if h == -1:
            continue
        for w in range(min(h, m) + 1, max(h, m)):
            a = w
            while a != -1 and a != h:
                a = heads[a]
            if a != h:
                return None
    return starts


def brute_force(band, max_length, preset=None, start_scores=None):
    n = band.shape[0]
    L = max_length
    best, best_starts = -numpy.inf, None
    choices = [[-1] + [h for h in range(n) if h != m and abs(h - m) < L] for m in range(n)]
    for heads in itertools.product(*choices):
        starts = valid_analysis(heads, L)
        if starts is None or not keeps(starts, preset):
            continue
        score = score_of(band, heads, L)
        if start_scores is not None:
            score += sum(start_scores[m] for m in starts)
        if score > best + 1e-9:
            best, best_starts = score, starts
    return best, best_starts


def keeps(starts, preset):
    """Whether sentences starting at `starts` respect a SENT_START array."""
    return preset is None or all((m in starts) == (v == 1) for m, v in enumerate(preset)
                                 if v != 0 and m > 0)


def score_of(band, heads, L):
    return sum(band[m, L - 1 + (0 if h == -1 else h - m)] for m, h in enumerate(heads))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 6), L=st.integers(1, 7), seed=st.integers(0, 2**31 - 1))
def test_the_chart_finds_the_best_analysis(n, L, seed):
    band = numpy.random.default_rng(seed).normal(size=(n, 2 * L - 1))
    starts, heads, score = best_segmentation(band, L)
    assert valid_analysis(list(heads), L) == list(starts)
    assert score == pytest.approx(score_of(band, heads, L))
    best, _ = brute_force(band, L)
    assert score == pytest.approx(best)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 6), L=st.integers(1, 7), seed=st.integers(0, 2**31 - 1),
       preset=st.lists(st.sampled_from([-1, 0, 0, 1]), min_size=6, max_size=6))
def test_preset_starts_and_non_starts_are_kept(n, L, seed, preset):
    band = numpy.random.default_rng(seed).normal(size=(n, 2 * L - 1))
    preset = numpy.asarray(preset[:n])
    starts, heads, score = best_segmentation(band, L, preset)
    assert valid_analysis(list(heads), L) == list(starts)
    best, _ = brute_force(band, L, preset)
    if best == -numpy.inf:
        # The no-start marks leave no sentences within the bound: dropped.
        relaxed = numpy.where(preset == -1, 0, preset)
        best, _ = brute_force(band, L, relaxed)
        assert keeps(list(starts), relaxed)
    else:
        assert keeps(list(starts), preset)
    assert score == pytest.approx(best)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 6), L=st.integers(1, 7), seed=st.integers(0, 2**31 - 1))
def test_start_scores_are_added_per_sentence(n, L, seed):
    rng = numpy.random.default_rng(seed)
    band = rng.normal(size=(n, 2 * L - 1))
    start_scores = rng.normal(scale=2.0, size=n)
    starts, heads, score = best_segmentation(band, L, start_scores=start_scores)
    assert valid_analysis(list(heads), L) == list(starts)
    assert score == pytest.approx(score_of(band, heads, L) + start_scores[starts].sum())
    assert score == pytest.approx(brute_force(band, L, start_scores=start_scores)[0])


@pytest.mark.slow
def test_integer_scores_break_ties_the_same_way_each_time():
    band = numpy.random.default_rng(0).integers(-2, 2, size=(6, 5)).astype(float)
    first = best_segmentation(band, 3)
    for _ in range(3):
        again = best_segmentation(band, 3)
        assert all(numpy.array_equal(a, b) for a, b in zip(first[:2], again[:2]))
    assert first[2] == pytest.approx(brute_force(band, 3)[0])


def chain_band(n, L, roots):
    """Each word's head the word before it (score 0, other heads -5), but a
    word of `roots` (score 0 as a root, the others -5; its head before it -1)."""
    band = numpy.full((n, 2 * L - 1), -5.0)
    band[:, L - 2] = 0.0
    band[roots, L - 1] = 0.0
    band[roots, L - 2] = -1.0
    return band


def test_root_scores_start_sentences_and_the_bound_cuts_them():
    n = 10
    starts, heads, score = best_segmentation(chain_band(n, n, [0, 6]), n)
    assert list(starts) == [0, 6] and score == 0.0
    assert list(heads) == [-1, 0, 1, 2, 3, 4, -1, 6, 7, 8]
    # At most 4 words a sentence: one more root, anywhere it fits.
    starts, heads, score = best_segmentation(chain_band(n, 4, [0, 6]), 4)
    assert score == -5.0 and len(starts) == 3 and 6 in starts
    assert all(e - s <= 4 for s, e in zip(starts, list(starts[1:]) + [n]))


def test_edge_cases_and_errors():
    starts, heads, score = best_segmentation(numpy.zeros((0, 5)), 3)
    assert len(starts) == 0 and len(heads) == 0 and score == 0.0
    starts, heads, score = best_segmentation(numpy.array([[0.0, 1.5, 0.0]]), 2)
    assert list(starts) == [0] and list(heads) == [-1] and score == 1.5
    with pytest.raises(ValueError, match="shape"):
        best_segmentation(numpy.zeros((3, 4)), 3)
    with pytest.raises(ValueError, match="one value a word"):
        best_segmentation(numpy.zeros((3, 5)), 3, numpy.zeros(2))
    with pytest.raises(ValueError, match="start_scores must have"):
        best_segmentation(numpy.zeros((3, 5)), 3, start_scores=numpy.zeros(4))
    with pytest.raises(ValueError, match="at least 1"):
        best_segmentation(numpy.zeros((3, 1)), 0)
