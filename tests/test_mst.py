"""Maximum spanning tree with exactly one root (spacy_nonmono.graph.mst),
checked against brute force over all trees (reference_mst) on graphs of up
to 7 nodes, against a textbook Chu-Liu-Edmonds on longer sentences, and for
tree invariants up to n = 150."""
import pickle

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import reference_mst as ref
from conftest import scaled
from spacy_nonmono.graph.mst import MST, mst

TOL = 1e-9


def check_tree(heads, n):
    assert isinstance(heads, numpy.ndarray) and heads.dtype == numpy.int32
    assert heads.shape == (n,)
    assert all(0 <= h <= n and h != k + 1 for k, h in enumerate(heads))
    assert ref.n_roots(heads) == 1
    assert ref.is_tree(tuple(int(h) for h in heads))


@st.composite
def score_matrices(draw, max_words=6, ties=False):
    """(n+1, n+1) float32 scores for 1..max_words words: finite floats, or
    small integers (many ties)."""
    n = draw(st.integers(1, max_words))
    if ties:
        elements = st.integers(-2, 2).map(float)
    else:
        elements = st.floats(-100, 100, width=32, allow_subnormal=False)
    return draw(arrays(numpy.float32, (n + 1, n + 1), elements=elements))


# -- the reference itself ------------------------------------------------------

def test_reference_enumerates_all_trees():
    # Cayley: (n+1)^(n-1) trees rooted at node 0, n^(n-1) with one root arc.
    for n in range(1, 7):
        trees = ref.all_trees(n)
        assert len(trees) == len(set(trees)) == (n + 1) ** (n - 1)
        assert sum(1 for t in trees if ref.n_roots(t) == 1) == n ** (n - 1)


def test_reference_cle_matches_brute_force():
    rng = numpy.random.default_rng(7)
    for _ in range(scaled(40)):
        n = int(rng.integers(1, 7))
        scores = ref.random_scores(rng, n, "uniform")
        best, _ = ref.brute_force(scores)
        assert ref.cle_one_root(scores)[0] == pytest.approx(best, abs=TOL)


# -- (a) equals brute force ------------------------------------------------------

@settings(max_examples=scaled(300))
@given(score_matrices())
def test_equals_brute_force(scores):
    n = scores.shape[0] - 1
    heads, score, cost = mst(scores)
    check_tree(heads, n)
    best, _ = ref.brute_force(scores)
    assert score == pytest.approx(ref.tree_score(scores, heads), abs=TOL)
    assert score == pytest.approx(best, abs=TOL)
    assert cost == 0


@settings(max_examples=scaled(300))
@given(score_matrices(ties=True))
def test_ties(scores):
    """With many equal scores the tree is one of the optimal ones (integer
    scores: sums are exact), and the same on every call and decoder."""
    n = scores.shape[0] - 1
    heads, score, _ = mst(scores)
    check_tree(heads, n)
    best, optimal = ref.brute_force(scores)
    assert score == best
    assert tuple(int(h) for h in heads) in optimal
    again, _, _ = MST()(scores.copy())
    assert numpy.array_equal(heads, again)


def test_constant_scores():
    for n in range(1, 30):
        heads, score, _ = mst(numpy.ones((n + 1, n + 1), dtype=numpy.float32))
        check_tree(heads, n)
        assert score == n


# -- (b) cost-augmented ----------------------------------------------------------

@settings(max_examples=scaled(300))
@given(score_matrices(), st.data(), st.sampled_from([1.0, -1.0, 0.5, 3.0, -1000.0]))
def test_cost_augmented_equals_brute_force(scores, data, cost_weight):
    n = scores.shape[0] - 1
    trees = ref.all_trees(n)
    gold = data.draw(st.sampled_from(trees)) if data.draw(st.booleans()) else \
        data.draw(st.lists(st.integers(-1, n), min_size=n, max_size=n))
    heads, score, cost = mst(scores, gold, cost_weight)
    check_tree(heads, n)
    best, _ = ref.brute_force(scores, gold, cost_weight)
    assert cost == ref.tree_cost(heads, gold)
    assert score == pytest.approx(ref.tree_score(scores, heads), abs=TOL)
    assert score + cost_weight * cost == pytest.approx(best, abs=1e-6)


@settings(max_examples=scaled(100))
@given(score_matrices(), st.data())
def test_large_negative_weight_prefers_gold_arcs(scores, data):
    """cost_weight far below -n * (score range): the best-scoring tree among
    those with the fewest wrong arcs; with a one-rooted gold tree, the gold."""
    n = scores.shape[0] - 1
    trees = [t for t in ref.all_trees(n) if ref.n_roots(t) == 1]
    gold = data.draw(st.sampled_from(ref.all_trees(n)))
    heads, score, cost = mst(scores, gold, -1e5)
    check_tree(heads, n)
    fewest = min(ref.tree_cost(t, gold) for t in trees)
    assert cost == fewest
    assert score == pytest.approx(max(ref.tree_score(scores, t) for t in trees
                                      if ref.tree_cost(t, gold) == fewest), abs=TOL)
    if ref.n_roots(gold) == 1:
        assert tuple(int(h) for h in heads) == gold


def test_cost_weight_zero_counts_cost():
    rng = numpy.random.default_rng(3)
    scores = ref.random_scores(rng, 8)
    plain, score, cost = mst(scores)
    gold = [0] + [1] * 7
    heads, score_g, cost_g = mst(scores, gold)
    assert numpy.array_equal(heads, plain) and score_g == score and cost == 0
    assert cost_g == ref.tree_cost(heads, gold)


# -- (c) invariants on longer sentences ------------------------------------------

def test_trees_up_to_150_words():
    rng = numpy.random.default_rng(11)
    decoder = MST()
    for it in range(scaled(60)):
        n = int(rng.integers(1, 151))
        kind = ("uniform", "ties", "root_heavy", "constant")[it % 4]
        scores = ref.random_scores(rng, n, kind)
        gold = rng.integers(0, n + 1, n) if it % 3 == 0 else None
        heads, score, cost = decoder(scores, gold, 1.0 if gold is not None else 0.0)
        check_tree(heads, n)
        assert score == pytest.approx(ref.tree_score(scores, heads), rel=1e-12, abs=1e-6)
        assert cost == ref.tree_cost(heads, gold)


def test_equals_textbook_cle_on_longer_sentences():
    rng = numpy.random.default_rng(5)
    for it in range(scaled(12)):
        n = int(rng.integers(7, 21))
        scores = ref.random_scores(rng, n, ("uniform", "root_heavy")[it % 2])
        gold = rng.integers(0, n + 1, n) if it % 3 == 0 else None
        cost_weight = 1.0 if gold is not None else 0.0
        heads, score, cost = mst(scores, gold, cost_weight)
        check_tree(heads, n)
        best, _ = ref.cle_one_root(scores, gold, cost_weight)
        assert score + cost_weight * cost == pytest.approx(best, abs=1e-6)


def test_long_sentence():
    scores = ref.random_scores(numpy.random.default_rng(2), 1000, "root_heavy")
    heads, _, _ = mst(scores)
    check_tree(heads, 1000)


# -- (d) the root constraint -----------------------------------------------------

def test_one_root_where_the_unconstrained_tree_has_two():
    # Both words prefer the root node; the arcs between them are poor.
    scores = numpy.array([[0, 10, 9],
                          [0, 0, 1],
                          [0, 2, 0]], dtype=numpy.float32)
    best_any, trees_any = ref.brute_force(scores, single_root=False)
    assert trees_any == [(0, 0)] and best_any == 19
    heads, score, cost = mst(scores)
    assert heads.tolist() == [0, 1] and score == 11 and cost == 0
    # Root arcs far above everything else, and close to each other: the
    # symbolic constant loses none of their differences.
    scores = numpy.zeros((4, 4), dtype=numpy.float32)
    scores[0, 1:] = [1e6, 1e6 + 0.0625, 1e6 - 0.0625]
    heads = mst(scores)[0]
    check_tree(heads, 3)
    assert heads[1] == 0


@settings(max_examples=scaled(100))
@given(score_matrices())
def test_root_heavy_scores(scores):
    scores = scores.copy()
    scores[0, :] += 1e4
    n = scores.shape[0] - 1
    heads, score, _ = mst(scores)
    check_tree(heads, n)
    assert score == pytest.approx(ref.brute_force(scores)[0], abs=1e-6)


# -- interface -------------------------------------------------------------------

def test_small_and_empty():
    heads, score, cost = mst(numpy.zeros((1, 1), dtype=numpy.float32))
    assert heads.shape == (0,) and heads.dtype == numpy.int32 and score == 0 and cost == 0
    heads, score, cost = mst(numpy.array([[0, 2.5], [0, 0]], dtype=numpy.float32), [1], 1.0)
    assert heads.tolist() == [0] and score == 2.5 and cost == 1


def test_unused_entries_are_ignored_and_views_accepted():
    rng = numpy.random.default_rng(9)
    scores = ref.random_scores(rng, 12)
    expected = mst(scores)
    masked = scores.copy()
    masked[:, 0] = numpy.nan
    numpy.fill_diagonal(masked, -numpy.inf)
    padded = numpy.pad(scores, ((0, 3), (0, 5)))[:13, :13]
    negative_strides = numpy.flip(numpy.flip(scores).copy())
    for variant in (masked, numpy.asfortranarray(scores), scores.astype(numpy.float64),
                    padded, negative_strides):
        heads, score, cost = mst(variant)
        assert numpy.array_equal(heads, expected[0]) and score == expected[1]


def test_buffers_reused_across_lengths():
    rng = numpy.random.default_rng(4)
    decoder = MST()
    for n in (40, 3, 120, 7, 40):
        scores = ref.random_scores(rng, n)
        heads, score, _ = decoder(scores)
        fresh, fresh_score, _ = MST()(scores)
        assert numpy.array_equal(heads, fresh) and score == fresh_score
    clone = pickle.loads(pickle.dumps(decoder))
    assert numpy.array_equal(clone(scores)[0], heads)


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        mst(numpy.zeros((3, 4), dtype=numpy.float32))
    with pytest.raises(ValueError, match="square"):
        mst(numpy.zeros(3, dtype=numpy.float32))
    scores = numpy.zeros((4, 4), dtype=numpy.float32)
    scores[2, 3] = numpy.nan
    with pytest.raises(ValueError, match=r"scores\[2, 3\] is nan"):
        mst(scores)
    with pytest.raises(ValueError, match="gold_heads must hold one 1-based head per word"):
        mst(numpy.zeros((4, 4), dtype=numpy.float32), [0, 1, 1, 2])
    with pytest.raises(ValueError, match="cost_weight must be finite"):
        mst(numpy.zeros((4, 4), dtype=numpy.float32), [0, 1, 1], float("inf"))
