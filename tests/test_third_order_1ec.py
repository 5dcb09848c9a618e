"""The crossing-sensitive third-order factorization of 1EC trees
(`reference_third_order_1ec`): its pure-Python chart, backbone items plus
region items, against brute force over every 1EC tree; the regions'
deduction system (`reference_one_ec_regions`) against brute force over every
region structure."""
from functools import lru_cache

import numpy
import pytest

import reference_one_ec_regions as regions
import reference_third_order_1ec as o3
from reference_mst import all_trees, n_roots
from spacy_nonmono.graph import ec_rules


@lru_cache(maxsize=None)
def scored_trees(n: int):
    """Every 1EC tree over n words and the table indices its score sums."""
    trees = [h for h in all_trees(n) if o3.is_1ec([(h[m - 1], m) for m in range(1, n + 1)])]
    return trees, [tuple(numpy.array(o3.tree_terms(h)).T) for h in trees]


def brute_force(T, n, one_root=False):
    trees, terms = scored_trees(n)
    return max(T[t].sum() for h, t in zip(trees, terms) if not one_root or n_roots(h) == 1)


def random_table(rng, n, ties):
    T = rng.standard_normal((n + 2, n + 2, o3.N_CHANNELS))
    T[:, :, o3.CROSSING] += 1.0    # crossing regions in most best trees
    return numpy.round(T) if ties else T


def test_region_arcs_are_crossed_or_under_a_crossed_arc():
    # 3 -> 1 and 0 -> 2 cross, 2 -> 4 crosses 3 -> 1; 2 -> 3 is under both;
    # 0 -> 5 is over the region [0, 4] and 5 -> 6 outside it.
    heads = (3, 0, 2, 2, 0, 5)
    arcs = [(h, m) for m, h in enumerate(heads, start=1)]
    assert o3.region_arcs(arcs) == {(3, 1), (0, 2), (2, 4), (2, 3)}
    terms = o3.tree_terms(heads)
    pad = len(heads) + 1
    assert (2, 3, o3.CROSSING) in terms
    # 0 -> 5: its nearest inner sibling 2 is a region arc; 5 -> 6: the
    # grandparent 0 (5's own arc is a backbone arc), no inner sibling.
    assert {(pad, 5, o3.GRAND), (0, 5, o3.HEAD), (pad, 5, o3.SIB)} <= set(terms)
    assert {(0, 6, o3.GRAND), (5, 6, o3.HEAD), (pad, 6, o3.SIB)} <= set(terms)
    assert len(terms) == 4 + 3 * 2


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_chart_equals_brute_force(n, ties):
    rng = numpy.random.default_rng(n + 10 * ties)
    for _ in range(8 if n == 6 else 20):
        T = random_table(rng, n, ties)
        assert o3.best(T, n) == pytest.approx(brute_force(T, n), abs=1e-9)


@pytest.mark.parametrize("n", [4, 5, 6])
def test_one_root_arc_by_penalty(n):
    rng = numpy.random.default_rng(n)
    for _ in range(5):
        T = random_table(rng, n, ties=False)
        penalty = 10.0 * (numpy.abs(T).sum() + 1.0)
        assert o3.best(o3.one_root_penalty(T, penalty), n) + penalty == pytest.approx(
            brute_force(T, n, one_root=True), abs=1e-6)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_region_rules_equal_brute_force(n):
    rng = numpy.random.default_rng(100 + n)
    for trial in range(6):
        T = random_table(rng, n, ties=trial % 2 == 1)
        from_rules = regions.region_table(T, n, o3.CROSSING)
        assert from_rules == pytest.approx(o3.region_table(T, n), abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_the_interpreter_finds_the_best_first_order_1ec_tree(n):
    # The interpreter of the first-order rules under the regions' rules.
    trees, _ = scored_trees(n)
    words = numpy.arange(1, n + 1)
    rng = numpy.random.default_rng(200 + n)
    for _ in range(5):
        arc = rng.standard_normal((n + 1, n + 1))
        best = max(arc[list(h), words].sum() for h in trees)
        value = regions.Items(arc, n).value(ec_rules.INT, 0, n)[ec_rules.LEFT_TOP]
        assert value == pytest.approx(best, abs=1e-9)


def test_seven_words_against_brute_force():
    # 92,344 1EC trees; the table indices of each tree's terms as one array.
    n = 7
    trees, terms = scored_trees(n)
    size = (n + 2) * (n + 2) * o3.N_CHANNELS
    flat = numpy.full((len(trees), 3 * n), size)      # `size`: a zero slot
    for row, t in enumerate(terms):
        flat[row, :len(t[0])] = numpy.ravel_multi_index(t, (n + 2, n + 2, o3.N_CHANNELS))
    one_root = numpy.array([n_roots(h) == 1 for h in trees])
    rng = numpy.random.default_rng(7)
    for ties in (False, True):
        T = random_table(rng, n, ties)
        totals = numpy.append(T.ravel(), 0.0)[flat].sum(axis=1)
        assert o3.best(T, n) == pytest.approx(totals.max(), abs=1e-9)
        penalty = 10.0 * (numpy.abs(T).sum() + 1.0)
        assert o3.best(o3.one_root_penalty(T, penalty), n) + penalty == pytest.approx(
            totals[one_root].max(), abs=1e-6)
