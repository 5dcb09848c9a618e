"""The first-order 1-Endpoint-Crossing chart (`graph/ec_chart.pyx`) and the
structure `1ec_arcs` against brute force: the reference enumerates every
tree with one root arc and keeps the 1EC ones by the definition written out
over sets (`reference_is_1ec`)."""
import random
from functools import lru_cache

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import make_global_nlp, random_heads, scaled
from reference_mst import all_trees, n_roots
from spacy_nonmono.graph import is_one_endpoint_crossing, is_projective
from spacy_nonmono.graph.ec_chart import EcChart
from spacy_nonmono.graph import get_structure
from test_one_endpoint_crossing import reference_is_1ec

CHART = EcChart()
# Every sentence over the memory limit: the blocks the two-split rules read
# over p are computed where they are read.
OVER_P_CHART = EcChart(memory_limit=0)


@lru_cache(maxsize=None)
def one_ec_trees(n: int) -> numpy.ndarray:
    """Every 1EC tree over n words with one root arc, (T, n) 1-based heads."""
    return numpy.array([h for h in all_trees(n) if n_roots(h) == 1 and reference_is_1ec(h)],
                       dtype=numpy.int64)


def brute_force(scores: numpy.ndarray, n: int, cost=None):
    """The best score (+ cost) over the 1EC trees, and every tree reaching it."""
    trees = one_ec_trees(n)
    totals = scores[trees, numpy.arange(1, n + 1)[None, :]].sum(axis=1)
    if cost is not None:
        totals = totals + cost[trees, numpy.arange(1, n + 1)[None, :]].sum(axis=1)
    best = totals.max()
    return best, trees[numpy.isclose(totals, best, rtol=0, atol=1e-9)]


def random_scores(rng, n: int, ties: bool) -> numpy.ndarray:
    if ties:
        return rng.integers(-2, 3, (n + 1, n + 1)).astype(numpy.float64)
    return rng.standard_normal((n + 1, n + 1))


def assert_1ec_tree(heads, n: int):
    heads = list(map(int, heads))
    assert len(heads) == n and heads.count(0) == 1
    assert all(0 <= h <= n and h != d for d, h in enumerate(heads, start=1))
    assert n_roots(heads) == 1 and is_one_endpoint_crossing(heads), heads


def test_reference_counts():
    # Every tree of up to 4 words is 1EC; 5 words is the first with others.
    assert [len(one_ec_trees(n)) for n in range(1, 6)] == [1, 2, 9, 64, 545]


@pytest.mark.parametrize("chart", [CHART, OVER_P_CHART], ids=["blocks", "over_p"])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_best_score_equals_brute_force(n, ties, chart):
    rng = numpy.random.default_rng(n * 2 + ties)
    for _ in range(scaled(40)):
        scores = random_scores(rng, n, ties)
        want, argmaxes = brute_force(scores, n)
        score, heads = chart.decode(scores)
        assert chart.over_p == (chart is OVER_P_CHART) or n < 3
        assert score == pytest.approx(want, abs=1e-9)
        assert_1ec_tree(heads, n)
        assert any((heads == tree).all() for tree in argmaxes)


@pytest.mark.slow
def test_seven_words_against_brute_force():
    rng = numpy.random.default_rng(7)
    for _ in range(scaled(5)):
        scores = rng.standard_normal((8, 8))
        want, _ = brute_force(scores, 7)
        score, heads = CHART.decode(scores)
        assert score == pytest.approx(want, abs=1e-9)
        assert_1ec_tree(heads, 7)


@pytest.mark.parametrize("n", [5, 6])
def test_every_1ec_tree_is_found(n):
    """Exactly the 1EC trees: each one, favoured by the scores, is the chart's
    best tree (the trees that are not 1EC are the next test's)."""
    for tree in one_ec_trees(n):
        scores = numpy.zeros((n + 1, n + 1))
        scores[tree, numpy.arange(1, n + 1)] = 1.0
        assert (CHART.decode(scores)[1] == tree).all(), tree


@pytest.mark.parametrize("n", [5, 6])
def test_trees_that_are_not_1ec_are_never_returned(n):
    for heads in all_trees(n):
        if n_roots(heads) != 1 or reference_is_1ec(heads):
            continue
        scores = numpy.zeros((n + 1, n + 1))
        scores[heads, numpy.arange(1, n + 1)] = 1.0
        score, best = CHART.decode(scores)
        assert_1ec_tree(best, n)
        assert score == brute_force(scores, n)[0] < n


@settings(max_examples=scaled(60), deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(5, 16))
def test_random_1ec_trees_are_found(seed, n):
    """Longer random trees: a 1EC gold tree is recovered; any other one gives
    a 1EC tree with one root."""
    heads = random_heads(random.Random(seed), n, projective=False)
    if n_roots(heads) != 1:
        return
    scores = numpy.random.default_rng(seed).random((n + 1, n + 1)) * 0.1
    scores[heads, numpy.arange(1, n + 1)] += 1.0
    score, best = CHART.decode(scores)
    assert_1ec_tree(best, n)
    if is_one_endpoint_crossing(heads):
        assert list(best) == heads


@settings(max_examples=scaled(40), deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 18))
def test_between_projective_and_any_tree(seed, n):
    """Projective trees are 1EC and 1EC trees are trees: the best 1EC score
    lies between the best projective one (`mh3_arcs`) and MST's."""
    rng = numpy.random.default_rng(seed)
    arcs = rng.standard_normal((n + 2, n + 2, 1)).astype(numpy.float32)
    ec = get_structure("1ec_arcs")().decode({"arc": arcs})
    projective = get_structure("mh3_arcs")().decode({"arc": arcs})
    spanning = get_structure("mst")().decode({"arc": arcs})
    assert projective[0] - 1e-4 <= ec[0] <= spanning[0] + 1e-4
    assert_1ec_tree(ec[2], n)
    assert is_projective(list(map(int, projective[2])))


@pytest.mark.parametrize("cost_weight", [1.0, -1.0e4])
def test_cost_augmented_decoding_equals_brute_force(cost_weight):
    structure = get_structure("1ec_arcs")()
    rng = numpy.random.default_rng(3)
    for n in (3, 5, 6):
        for _ in range(scaled(10)):
            arcs = rng.standard_normal((n + 2, n + 2, 1)).astype(numpy.float32)
            gold = [int(h) for h in rng.choice(one_ec_trees(n) if n < 6 else
                                               [t for t in all_trees(n) if n_roots(t) == 1])]
            cost = numpy.full((n + 1, n + 1), cost_weight)
            cost[gold, numpy.arange(1, n + 1)] = 0.0
            want, _ = brute_force(arcs[:-1, :-1, 0].astype(numpy.float64), n, cost)
            score, n_wrong, heads, derivation = structure.decode({"arc": arcs}, gold, cost_weight)
            assert score + cost_weight * n_wrong == pytest.approx(want, abs=1e-4)
            assert n_wrong == sum(h != g for h, g in zip(heads, gold))
            assert score == pytest.approx(float(arcs[heads, numpy.arange(1, n + 1), 0].sum()),
                                          abs=1e-4)
            assert derivation is None
            # With GOLD_WEIGHT a gold tree the chart covers is returned
            # without decoding; the others go through the chart.
            assert structure.contains(gold) == reference_is_1ec(gold)
            if cost_weight < 0 and reference_is_1ec(gold):
                assert list(heads) == gold


def test_forbidden_arcs_and_errors():
    scores = numpy.random.default_rng(0).standard_normal((6, 6))
    scores[0, 2:] = -numpy.inf            # the root takes word 1
    assert CHART.decode(scores)[1][0] == 0
    with pytest.raises(ValueError, match=r"\(n\+1, n\+1\)"):
        CHART.decode(numpy.zeros((3, 4)))
    with pytest.raises(ValueError, match="NaN"):
        CHART.decode(numpy.full((4, 4), numpy.nan))
    bad = numpy.zeros((4, 4))
    bad[:, 2] = -numpy.inf
    with pytest.raises(ValueError, match="finite"):
        CHART.decode(bad)


def test_buffers_are_reused_and_the_structure_pickles():
    import pickle

    chart = EcChart()
    chart.decode(numpy.zeros((21, 21)))
    size = chart.buffer_bytes
    chart.decode(numpy.zeros((11, 11)))
    assert chart.buffer_bytes == size
    structure = get_structure("1ec_arcs")()
    arcs = numpy.random.default_rng(1).standard_normal((9, 9, 1)).astype(numpy.float32)
    first = structure.decode({"arc": arcs})
    again = pickle.loads(pickle.dumps(structure)).decode({"arc": arcs})
    assert first[0] == again[0] and (first[2] == again[2]).all()


def test_the_component_guard_is_lowered_to_the_charts():
    """`max_sentence_length = null` takes the global decoder's guard (150),
    lowered to 1ec_arcs' (100 words: 0.5 s and 92 MB); a set value wins."""
    assert make_global_nlp("1ec_arcs").get_pipe("nonmono_parser").max_sentence_length == 100
    assert make_global_nlp("mh4").get_pipe("nonmono_parser").max_sentence_length == 150
    parser = make_global_nlp("1ec_arcs", max_sentence_length=120).get_pipe("nonmono_parser")
    assert parser.max_sentence_length == 120


@pytest.mark.parametrize("regions", [False, True])
def test_one_sided_kinds_are_read_only_on_their_side(regions):
    """The chart stores RIGHT_ONLY kinds only for x right of [i, j] and
    LEFT_ONLY ones (the region kinds under C1's and C2's right part) only
    for x left: in every orientation the chart evaluates a rule in (pairs:
    one; triples: the sides their kind is stored on), each part of a
    one-sided kind has its x on that side."""
    from spacy_nonmono.graph import ec_rules as R

    assert R.X_LR in R.RIGHT_ONLY and R.X_NEAR_COV in R.LEFT_ONLY
    read = set()
    for rule in R.RULES_WITH_REGIONS if regions else R.RULES:
        if rule.kind in R.PAIR_KINDS:
            orientations = (0,)
        else:
            orientations = (1,) if rule.kind in R.RIGHT_ONLY else (
                (0,) if rule.kind in R.LEFT_ONLY else (0, 1))
        for o in orientations:
            for p, (kind, a, b, x) in enumerate(rule.parts):
                if kind in R.RIGHT_ONLY + R.LEFT_ONLY:
                    read.add(kind)
                    assert rule.sides[o][p] == (kind in R.RIGHT_ONLY), (rule.kind, kind)
    assert read == {k for k in R.RIGHT_ONLY + R.LEFT_ONLY
                    if regions or k < R.X_NEAR_NE}


def assert_same_decode(chart, other, arcs):
    score, heads = chart.decode(arcs)
    other_score, other_heads = other.decode(arcs)
    assert score == other_score and (heads == other_heads).all()


@pytest.mark.parametrize("regions", [False, True])
def test_rows_left_out_read_or_give_states_that_do_not_matter(regions):
    """The chart leaves out the rows that read a state `possible_states`
    says an antecedent never has, and the rows of a 3-point kind giving a
    state no rule reads. With every row kept, every finite state of every
    item is one it says is possible; the pruned chart keeps every state
    some rule reads, with the same values, and both charts find the same
    tree and score. The chains and X_LR do lose states. With the region
    kinds of the third-order chart too; the kinds computed where they are
    read (X_N_PLUS, ...) are compared like the stored ones."""
    from spacy_nonmono.graph import ec_rules as R

    rules = R.RULES_WITH_REGIONS if regions else R.RULES
    unpruned = R.unpruned_rules() + (R.region_rules() if regions else [])
    built = {rule.kind for rule in rules}
    reachable = R.possible_states(unpruned)
    kept = R.possible_states(rules)
    read = R.read_states(rules)
    full, pruned = EcChart(prune=False, regions=regions), EcChart(regions=regions)
    n = 9
    for seed in range(3):
        assert_same_decode(pruned, full, numpy.random.default_rng(seed).normal(size=(n + 1, n + 1)))
        seen = {}
        for a in range(n + 1):
            for b in range(a + 1, n + 1):
                for kind in built & set(range(R.N_STORED_PAIR)):
                    seen.setdefault((kind, 0), set()).update(
                        s for s, v in enumerate(full.item_values(kind, a, b)) if v > -numpy.inf)
                    if regions:
                        assert pruned.item_values(kind, a, b) == full.item_values(kind, a, b)
                for kind in built - set(range(R.N_STORED_PAIR)):
                    for x in [*range(a), *range(b + 1, n + 1)]:
                        if (x < a and kind in R.RIGHT_ONLY) or (x > b and kind in R.LEFT_ONLY):
                            continue
                        key = (kind, int(x > b))
                        values = full.item_values(kind, a, b, x)
                        seen.setdefault(key, set()).update(
                            s for s, v in enumerate(values) if v > -numpy.inf)
                        assert read[key] <= kept[key]
                        mine = pruned.item_values(kind, a, b, x)
                        assert [mine[s] for s in sorted(kept[key])] == \
                            [values[s] for s in sorted(kept[key])], (R.KIND_NAMES[kind], a, b, x)
        for key, states in seen.items():
            assert states <= reachable[key], (R.KIND_NAMES[key[0]], key[1])
    assert len(kept[R.CHAIN_I, 0]) < R.N_TRIPLE_STATES
    assert len(kept[R.X_LR, 1]) < len(reachable[R.X_LR, 1])
    assert sum(len(r.combos[0]) for r in rules) < sum(len(r.combos[0]) for r in unpruned)


@pytest.mark.parametrize("regions", [False, True])
def test_the_memory_limit_changes_no_item(regions):
    """Over the memory limit the chart computes the blocks the two-split
    rules read over p (X_N_PLUS [k, j; p], ...) where it reads them, all of
    them or as many as the limit needs: every pair item, tree and score is
    the same, bit for bit; with less memory."""
    from spacy_nonmono.graph import ec_rules as R

    blocks = EcChart(regions=regions, memory_limit=None)
    over_p = EcChart(regions=regions, memory_limit=0)
    n = 14
    blocks._prepare(n + 1)
    over_p._prepare(n + 1)
    # Between the two: some blocks stored again, the first of STORE_FIRST.
    some = EcChart(regions=regions,
                   memory_limit=(blocks.buffer_bytes + 2 * over_p.buffer_bytes) / 3)
    for seed in range(2):
        arcs = numpy.random.default_rng(seed).normal(size=(n + 1, n + 1))
        assert_same_decode(blocks, over_p, arcs)
        assert_same_decode(blocks, some, arcs)
        assert not blocks.over_p and over_p.over_p and some.over_p
        assert not blocks.computed_blocks
        assert set(some.computed_blocks) < set(over_p.computed_blocks)
        assert some.buffer_bytes <= some.memory_limit
        upper = numpy.triu_indices(n + 1, 1)
        for kind in range(R.N_STORED_PAIR if regions else R.Q + 1):
            assert (blocks.pair_values(kind, n + 1)[upper]
                    == over_p.pair_values(kind, n + 1)[upper]).all()
            assert (blocks.pair_values(kind, n + 1)[upper]
                    == some.pair_values(kind, n + 1)[upper]).all()
    # The limit counts the buffers of the sentence at hand.
    blocks._prepare(101)
    over_p._prepare(101)
    assert over_p.buffer_bytes < 0.85 * blocks.buffer_bytes
    for limit, expected in ((blocks.buffer_bytes, False), (blocks.buffer_bytes - 1, True)):
        chart = EcChart(regions=regions, memory_limit=limit)
        chart._prepare(101)
        assert chart.over_p == expected


def test_vectorised_two_split_rules_agree_with_the_scalar_rules():
    """INT0's rules with two split points are filled by one loop over p
    (copies laid out for it); the trace re-derives items with the scalar
    interpreter. Every finite state of every INT0 and INT item has a
    derivation of exactly its value there, with every row kept or not."""
    from spacy_nonmono.graph import ec_rules as R

    n = 10
    for chart in (EcChart(), EcChart(prune=False)):
        for seed in range(2):
            chart.decode(numpy.random.default_rng(seed).normal(size=(n + 1, n + 1)))
            for a in range(n + 1):
                for b in range(a + 2, n + 1):
                    for kind in (R.INT0, R.INT):
                        for state, value in enumerate(chart.item_values(kind, a, b)):
                            if value > -numpy.inf:
                                chart._trace(kind, a, b, -1, state, value,
                                             numpy.full(n, -1, dtype=numpy.int32))


def test_a_100_word_sentence_fits_in_100_mb():
    chart = EcChart()
    chart._prepare(101)
    assert chart.buffer_bytes < 100e6
