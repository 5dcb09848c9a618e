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
from spacy_nonmono.graph import ec_rules, is_one_endpoint_crossing
from spacy_nonmono.graph.ec3_chart import Ec3Chart, one_ec_o3_terms
from spacy_nonmono.graph.ec_chart import EcChart
from spacy_nonmono.graph.structures import GOLD_WEIGHT
from spacy_nonmono.graph import get_structure


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


@pytest.mark.slow
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


# -- the Cython chart (graph/ec3_chart.pyx) and the structure `1ec` ---------

CHART = Ec3Chart()
# Every sentence over the memory limit: the regions' chart computes the
# blocks its two-split rules read over p where it reads them.
OVER_P_CHART = Ec3Chart(memory_limit=0)


@pytest.mark.parametrize("chart", [CHART, OVER_P_CHART], ids=["blocks", "over_p"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, pytest.param(7, marks=pytest.mark.slow)])
def test_cython_chart_equals_brute_force(n, chart):
    trees, terms = scored_trees(n)
    tree_set = set(trees)
    one_root = numpy.array([n_roots(h) == 1 for h in trees])
    rng = numpy.random.default_rng(300 + n)
    for trial in range(4 if n == 7 else 8):
        T = random_table(rng, n, ties=trial % 2 == 1)
        totals = numpy.array([T[t].sum() for t in terms])
        for single in (False, True):
            score, heads = chart.decode(T, one_root=single)
            assert chart.over_p == (chart is OVER_P_CHART)
            assert score == pytest.approx(totals[one_root].max() if single else totals.max(),
                                          abs=1e-4)
            heads = tuple(int(h) for h in heads)
            assert heads in tree_set and (n_roots(heads) == 1 or not single)
            pairs, channels = one_ec_o3_terms(heads)
            assert score == pytest.approx(T[pairs[:, 0], pairs[:, 1], channels].sum(), abs=1e-9)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_factor_terms_equal_the_reference(n):
    trees, _ = scored_trees(n)
    for heads in trees:
        pairs, channels = one_ec_o3_terms(heads)
        assert sorted(zip(pairs[:, 0], pairs[:, 1], channels)) == sorted(o3.tree_terms(heads))


@pytest.mark.parametrize("memory_limit", [None, 0])
def test_region_items_of_the_first_order_chart_equal_the_interpreter(memory_limit):
    # EcChart(regions=True) fills the region kinds with its vectorised
    # rules; the interpreter is checked against brute force above.
    chart = EcChart(regions=True, memory_limit=memory_limit)
    states = {o3.LEFT_TOP: ec_rules.LEFT_TOP, o3.RIGHT_TOP: ec_rules.RIGHT_TOP,
              o3.SEPARATE: ec_rules.SEPARATE}
    rng = numpy.random.default_rng(9)
    for n in (6, 9):
        T = random_table(rng, n, ties=False)
        want = regions.region_table(T, n, o3.CROSSING)
        chart.fill(T[:n + 1, :n + 1, o3.CROSSING])
        values = chart.pair_values(ec_rules.REG, n + 1)
        for l in range(n + 1):
            for r in range(l + 1, n + 1):
                for state, index in states.items():
                    assert values[l, r, index] == pytest.approx(
                        want.get((l, r, state), -numpy.inf), abs=1e-4)


@pytest.mark.parametrize("cost_weight", [1.0, 2.5, GOLD_WEIGHT])
def test_cost_augmented_decoding_equals_brute_force(cost_weight):
    structure = get_structure("1ec")()
    n = 6
    trees, terms = scored_trees(n)
    one_root = [h for h in trees if n_roots(h) == 1]
    rng = numpy.random.default_rng(11)
    for trial in range(4):
        T = random_table(rng, n, ties=False)
        gold = one_root[rng.integers(len(one_root))]
        if cost_weight == GOLD_WEIGHT and trial % 2:
            gold = (2, 0, 2, 2, 2, 2)[:n]       # 1EC: decoded without the chart
        score, cost, heads, _ = structure.decode({"arc": T}, gold, cost_weight)
        costs = {h: sum(a != b for a, b in zip(h, gold)) for h in one_root}
        best = max(o3.tree_score(T, h) + cost_weight * costs[h] for h in one_root)
        heads = tuple(int(h) for h in heads)
        assert cost == costs[heads]
        assert score == pytest.approx(o3.tree_score(T, heads), abs=1e-9)
        assert score + cost_weight * cost == pytest.approx(best, rel=1e-6, abs=1e-3)
    # A chain: every arc a backbone arc; the sentinel row n + 1 stands for
    # the root child's grandparent and every missing sibling.
    (_, pairs, channels), = structure.entries((0, 1, 2, 3, 4, 5), None, {"arc": 2})
    assert sorted(zip(pairs[:, 0], pairs[:, 1], channels)) == sorted(
        o3.tree_terms((0, 1, 2, 3, 4, 5)))
    assert pairs[channels == o3.SIB, 0].tolist() == [n + 1] * n


def test_a_100_word_sentence_fits_in_100_mb():
    """The issue's budget, met by the default memory limit, buffers and
    peak: the regions' chart computes some blocks where it reads them at
    this length."""
    import tracemalloc

    T = random_table(numpy.random.default_rng(100), 100, ties=False)
    chart = Ec3Chart()
    tracemalloc.start()
    try:
        score, heads = chart.decode(T)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert chart.over_p and chart.computed_blocks and chart.buffer_bytes < 100e6
    assert peak < 100e6
    assert list(heads).count(0) == 1 and is_one_endpoint_crossing(list(heads))


def test_errors():
    with pytest.raises(ValueError, match="n\\+2, n\\+2, 4"):
        CHART.decode(numpy.zeros((4, 4, 3)))
    with pytest.raises(ValueError, match="NaN"):
        CHART.decode(numpy.full((4, 4, 4), numpy.nan))
    T = numpy.zeros((5, 5, 4))
    T[:, 2, o3.HEAD] = T[:, 2, o3.CROSSING] = -numpy.inf
    with pytest.raises(ValueError, match="finite"):
        CHART.decode(T)
    T = numpy.random.default_rng(0).standard_normal((7, 7, 4))
    T[0, 1:, o3.HEAD] = T[0, 1:, o3.CROSSING] = -numpy.inf
    T[0, 3, o3.HEAD] = 0.0                   # the only root arc allowed
    assert list(CHART.decode(T)[1]).count(0) == 1 and CHART.decode(T)[1][2] == 0


def test_the_component_trains_parses_and_round_trips():
    """`system = "1ec"` under global decoding: the guard is lowered to the
    structure's (80 words), a few updates on the sample, parses that are
    trees, the same parses after to_bytes/from_bytes and pickling."""
    import pickle

    from spacy.tokens import Doc
    from spacy.training import Example

    from conftest import make_global_nlp, sample_docs, train, tree_ok

    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=12)]
    nlp = make_global_nlp("1ec")
    assert nlp.get_pipe("nonmono_parser").max_sentence_length == 80
    train(nlp, examples, epochs=2)
    texts = [" ".join(t.text for t in d) for d in sample_docs("dev", limit=6)]
    parsed = list(nlp.pipe(texts))
    for doc in parsed:
        tree_ok(doc)
    again = make_global_nlp("1ec")
    again.initialize(lambda: examples)
    again.from_bytes(nlp.to_bytes())
    for nlp2 in (again, pickle.loads(pickle.dumps(nlp))):
        for doc, doc2 in zip(parsed, nlp2.pipe(texts)):
            assert [t.head.i for t in doc] == [t.head.i for t in doc2]
            assert [t.dep_ for t in doc] == [t.dep_ for t in doc2]
