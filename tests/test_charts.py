"""The MH3/MH4 charts (spacy_nonmono.graph.charts) against brute force.

The references (tests/reference_charts.py) enumerate every computation that
the deduction system of MH_k covers, rule by rule; MH3 is also checked
against an exhaustive search over the arc-hybrid transition system, and the
trees it reaches against all projective trees. Returned events are replayed
on a stack/buffer machine. The `coverage` command runs on the shipped sample.
"""
import json

import numpy
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import reference_charts as R
from conftest import SAMPLE, scaled
from spacy_nonmono.cli import main
from spacy_nonmono.graph import is_one_endpoint_crossing, is_projective
from spacy_nonmono.graph.charts import TRANSITIONS, Chart, coverage

CHARTS = {(k, single_root): Chart(k, single_root) for k in (3, 4) for single_root in (False, True)}


@pytest.fixture(scope="module", autouse=True)
def free_reference_tables():
    """The 7-word MH4 computations take ~100 MB: not for the whole session."""
    yield
    R.computation_arrays.cache_clear()


def random_tables(seed: int, n: int, T: int, features: str, ties: bool):
    """Score tables for n words: standard normal, or small integers (many ties)."""
    rng = numpy.random.default_rng(seed)
    N = n + 2
    shape = (T, N, N, N) if features == "hybrid" else (T, N, N)
    if ties:
        return (rng.integers(-2, 3, (N, N)).astype(numpy.float32),
                rng.integers(-2, 3, shape).astype(numpy.float32))
    return (rng.standard_normal((N, N), dtype=numpy.float32),
            rng.standard_normal(shape, dtype=numpy.float32))


def random_tree(rng, n: int):
    """A random tree over n words (heads 1-based, 0 = root), one word on 0."""
    order = rng.permutation(n) + 1
    heads = [0] * n
    for i, word in enumerate(order[1:], start=1):
        heads[word - 1] = int(order[rng.integers(0, i)])
    return heads


def random_projective_tree(rng, n: int):
    """The tree of a random arc-hybrid computation (projective, maybe several
    words on 0)."""
    stack, b0, heads = [0], 1, [0] * n
    while not (stack == [0] and b0 == n + 1):
        moves = []
        if b0 <= n:
            moves.append("sh")
        if len(stack) >= 2:
            moves.append("ra")
            if b0 <= n:
                moves.append("la")
        move = moves[rng.integers(0, len(moves))]
        if move == "sh":
            stack.append(b0)
            b0 += 1
        else:
            dep = stack.pop()
            heads[dep - 1] = b0 if move == "la" else stack[-1]
    return heads


def check_result(result, sh, red, k, gold=None, cost_weight=0.0, single_root=False):
    """The chart's answer is the brute-force best and replays: valid MH_k
    transitions, the returned heads, the returned score exactly."""
    score, cost, heads, events = result
    n = sh.shape[0] - 2
    best, _, _, trees = R.brute_force_arrays(sh, red, k, gold, cost_weight, single_root)
    assert score + cost == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert tuple(heads) in trees
    assert heads.dtype == numpy.int32 and heads.shape == (n,)
    assert events.dtype == numpy.int32 and events.shape == (2 * n, 4)
    replayed = R.run_events(events, n, transitions=range(2 if k == 3 else 6))
    assert replayed == list(heads)
    assert R.replay_score(events, sh, red) == score          # same order, same float64 sums
    wrong = 0 if gold is None else sum(h != g for h, g in zip(heads, gold))
    assert cost == cost_weight * wrong
    if single_root and n:
        assert list(heads).count(0) == 1


# -- (a), (b): MH4 and MH3 against the deduction system, events replayed ----------------

@settings(max_examples=scaled(60))
@given(n=st.integers(0, 7), seed=st.integers(0, 2**32 - 1),
       features=st.sampled_from(["hybrid", "two"]), ties=st.booleans())
@example(n=7, seed=1, features="hybrid", ties=False)
@example(n=7, seed=2, features="two", ties=False)
@example(n=7, seed=3, features="hybrid", ties=True)
@example(n=7, seed=4, features="two", ties=True)
def test_mh4_equals_brute_force(n, seed, features, ties):
    sh, red = random_tables(seed, n, 6, features, ties)
    check_result(CHARTS[4, False].decode(sh, red), sh, red, 4)


@settings(max_examples=scaled(60))
@given(n=st.integers(0, 7), seed=st.integers(0, 2**32 - 1),
       features=st.sampled_from(["hybrid", "two"]), ties=st.booleans())
def test_mh3_equals_brute_force(n, seed, features, ties):
    sh, red = random_tables(seed, n, 2, features, ties)
    check_result(CHARTS[3, False].decode(sh, red), sh, red, 3)


# -- (c): MH3 is the arc-hybrid system, whose trees are the projective ones -----------

@settings(max_examples=scaled(80))
@given(n=st.integers(0, 7), seed=st.integers(0, 2**32 - 1),
       features=st.sampled_from(["hybrid", "two"]), ties=st.booleans(),
       cost_weight=st.sampled_from([0.0, 1.0, -1e4]))
def test_mh3_equals_arc_hybrid_search(n, seed, features, ties, cost_weight):
    sh, red = random_tables(seed, n, 2, features, ties)
    gold = random_tree(numpy.random.default_rng(seed + 1), n) if cost_weight else None
    score, cost, heads, _ = CHARTS[3, False].decode(sh, red, gold, cost_weight)
    best = R.arc_hybrid_search(sh, red, gold, cost_weight)
    assert score + cost == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert is_projective(list(heads))


@pytest.mark.parametrize("n", range(0, 7))
def test_mh3_reaches_exactly_the_projective_trees(n):
    projective = {h for h in R.all_head_arrays(n) if is_projective(list(h))}
    assert R.reachable_trees(n, 3) == projective
    assert R.reachable_trees(n, 3) <= R.reachable_trees(n, 4)


def test_reference_arrays_match_the_tuple_enumeration():
    """The array enumeration (used for 7 words) is the tuple one."""
    for k in (3, 4):
        for n in range(6):
            for single_root in (False, True):
                codes, heads = R.computation_arrays(n, k, single_root)
                N = n + 2
                as_rows = {(tuple(int(x) for x in row), tuple(int(h) for h in hs))
                           for row, hs in zip(codes, heads)}
                expected = {(tuple(R.event_code(e, N) for e, _ in comp), R.tree_of(comp, n))
                            for comp in R.computations(n, k, single_root)}
                assert as_rows == expected


# -- (d): cost-augmented decoding, single root ------------------------------------------

@settings(max_examples=scaled(60))
@given(n=st.integers(1, 6), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       features=st.sampled_from(["hybrid", "two"]), ties=st.booleans(),
       cost_weight=st.sampled_from([1.0, 0.5, -1.0, -1e4]), single_root=st.booleans())
def test_cost_augmented_equals_brute_force(n, seed, k, features, ties, cost_weight, single_root):
    sh, red = random_tables(seed, n, 2 if k == 3 else 6, features, ties)
    gold = random_tree(numpy.random.default_rng(seed + 1), n)
    result = CHARTS[k, single_root].decode(sh, red, gold, cost_weight)
    check_result(result, sh, red, k, gold, cost_weight, single_root)


@settings(max_examples=scaled(30))
@given(n=st.integers(0, 6), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       features=st.sampled_from(["hybrid", "two"]))
def test_single_root_equals_brute_force(n, seed, k, features):
    sh, red = random_tables(seed, n, 2 if k == 3 else 6, features, ties=False)
    check_result(CHARTS[k, True].decode(sh, red), sh, red, k, single_root=True)


@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("n", range(0, 6))
def test_single_root_trees_are_the_one_root_trees(k, n):
    one_root = {t for t in R.reachable_trees(n, k) if t.count(0) == 1 or n == 0}
    assert R.reachable_trees(n, k, single_root=True) == one_root


def test_gold_weight_finds_the_gold_tree():
    """cost_weight -1e4 returns the gold tree whatever the scores, when MH4
    can build it; its score is then the best score of a gold computation."""
    rng = numpy.random.default_rng(7)
    for _ in range(scaled(20)):
        n = int(rng.integers(1, 7))
        gold = random_tree(rng, n)
        sh, red = random_tables(int(rng.integers(0, 2**31)), n, 6, "hybrid", ties=False)
        score, cost, heads, _ = CHARTS[4, False].decode(sh, red, gold, -1e4)
        if tuple(gold) in R.reachable_trees(n, 4):
            assert list(heads) == gold and cost == 0.0
            codes, trees = R.computation_arrays(n, 4)
            vector = R.score_vector(sh, red)
            mask = (trees == numpy.asarray(gold)).all(axis=1)
            assert score == pytest.approx(vector[codes[mask]].sum(axis=1).max(), rel=1e-9)


# -- (d'): arc scores, alone (structures mh3_arcs, mh4_arcs) or with transition scores ----

@settings(max_examples=scaled(60))
@given(n=st.integers(0, 6), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       ties=st.booleans(), cost_weight=st.sampled_from([0.0, 1.0, -1e4]))
def test_arc_structures_equal_brute_force_over_the_charts_trees(n, seed, k, ties, cost_weight):
    """mh3_arcs / mh4_arcs: the best tree among those the chart derives (with
    one root arc) under arc scores + cost."""
    from spacy_nonmono.graph import get_structure

    rng = numpy.random.default_rng(seed)
    N = n + 2
    arcs = (rng.integers(-2, 3, (N, N, 1)) if ties else rng.standard_normal((N, N, 1)))
    arcs = arcs.astype(numpy.float32)
    gold = random_tree(numpy.random.default_rng(seed + 1), n) if cost_weight else None
    score, cost, heads, _ = get_structure(f"mh{k}_arcs")().decode({"arc": arcs}, gold,
                                                                  cost_weight)

    def objective(tree):
        wrong = 0 if gold is None else sum(h != g for h, g in zip(tree, gold))
        return sum(float(arcs[h, d + 1, 0]) for d, h in enumerate(tree)) + cost_weight * wrong

    trees = R.reachable_trees(n, k, single_root=True)
    best = max(objective(t) for t in trees)
    assert score + cost == pytest.approx(best, rel=1e-9, abs=1e-6)
    assert tuple(heads) in trees and objective(tuple(heads)) == pytest.approx(best, abs=1e-6)
    assert score == pytest.approx(objective(tuple(heads)) - cost, abs=1e-6)


@settings(max_examples=scaled(30))
@given(n=st.integers(0, 5), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       features=st.sampled_from(["hybrid", "two"]))
def test_arc_scores_add_to_transition_scores(n, seed, k, features):
    """Both kinds of scores: the best computation under its events' scores
    plus its arcs' scores, the returned score counting both."""
    sh, red = random_tables(seed, n, 2 if k == 3 else 6, features, ties=False)
    N = n + 2
    arcs = numpy.random.default_rng(seed + 2).standard_normal((N, N)).astype(numpy.float32)
    score, cost, heads, events = CHARTS[k, False].decode(sh, red, arc_scores=arcs)

    def total(computation):
        return sum(R.event_score(event, sh, red) + (arcs[head, dep] if dep >= 0 else 0.0)
                   for event, (head, dep) in computation)

    best = max(total(c) for c in R.computations(n, k))
    assert score == pytest.approx(best, rel=1e-6, abs=1e-6) and cost == 0.0
    assert R.run_events(events, n, transitions=range(2 if k == 3 else 6)) == list(heads)


def test_mh3_arcs_is_the_projective_mst():
    """MH3 under arc scores alone: the best projective tree with one root arc."""
    from spacy_nonmono.graph import get_structure

    rng = numpy.random.default_rng(3)
    structure = get_structure("mh3_arcs")()
    for n in range(1, 6):
        arcs = rng.standard_normal((n + 2, n + 2, 1)).astype(numpy.float32)
        score, _, heads, _ = structure.decode({"arc": arcs})
        best = max(sum(float(arcs[h, d + 1, 0]) for d, h in enumerate(t))
                   for t in R.all_head_arrays(n)
                   if is_projective(list(t)) and list(t).count(0) == 1)
        assert score == pytest.approx(best, abs=1e-6) and is_projective(list(heads))


# -- (e): the paper's example ---------------------------------------------------------------

def test_paper_example_is_built_by_the_transition_system_but_not_covered():
    """Section 3.2: the MH4 transition system builds the tree (with the
    paper's computation), no derivation of the deduction system does."""
    n = len(R.PAPER_EXAMPLE_HEADS)
    heads = R.run_events(R.PAPER_EXAMPLE_EVENTS, n)
    assert tuple(heads) == R.PAPER_EXAMPLE_HEADS
    assert R.PAPER_EXAMPLE_HEADS not in R.reachable_trees(n, 4)
    assert coverage(R.PAPER_EXAMPLE_HEADS, 4) == n - 1
    assert coverage(R.PAPER_EXAMPLE_HEADS, 3) < n
    # and the best-scoring chart derivation, with every gold arc rewarded,
    # is a valid computation that misses exactly one arc
    N = n + 2
    _, cost, tree, events = Chart(4).decode(numpy.zeros((N, N), "f"), numpy.zeros((6, N, N), "f"),
                                            R.PAPER_EXAMPLE_HEADS, -1.0)
    assert R.run_events(events, n) == list(tree) and cost == -1.0


# -- (f): coverage ------------------------------------------------------------------------

@pytest.mark.parametrize("n", range(0, 7))
def test_coverage_equals_brute_force(n):
    rng = numpy.random.default_rng(n)
    trees = list(R.all_head_arrays(n))
    for k in (3, 4):
        reachable = R.reachable_trees(n, k)
        for index in rng.permutation(len(trees))[:40]:
            gold = trees[index]
            best = max(sum(h == g for h, g in zip(t, gold)) for t in reachable)
            assert coverage(gold, k) == best
            assert (coverage(gold, k) == n) == (gold in reachable)


@pytest.mark.parametrize("n", range(0, 7))
def test_every_projective_tree_is_covered(n):
    for heads in R.all_head_arrays(n):
        if is_projective(list(heads)):
            assert coverage(heads, 3) == n and coverage(heads, 4) == n
        else:
            assert coverage(heads, 3) < n


@settings(max_examples=scaled(40))
@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_coverage_of_random_trees(n, seed):
    rng = numpy.random.default_rng(seed)
    projective = random_projective_tree(rng, n)
    assert coverage(projective, 3) == n and coverage(projective, 4) == n
    tree = random_tree(rng, n)
    mh3, mh4 = coverage(tree, 3), coverage(tree, 4)
    assert mh3 <= mh4 <= n
    assert (mh3 == n) == is_projective(tree)
    assert coverage(tree, 4, single_root=True) <= mh4


def test_coverage_on_ud_sentences(ud_sentences):
    """Real trees: MH3 covers exactly the projective ones; MH4 at least those."""
    for _, _, heads, _ in ud_sentences:
        n = len(heads)
        assert (coverage(heads, 3) == n) == is_projective(list(heads))
        assert coverage(heads, 4) >= coverage(heads, 3)


# -- (g): memory, buffers, API ----------------------------------------------------------

def test_no_dense_quartic_tables():
    """A 100-word MH4 decode allocates O(n^3) buffers (3-items stored
    triangularly, 4-items never stored), far below one dense (n+2)^4 table,
    and the buffers are reused for shorter sentences."""
    n, N = 100, 102
    chart = Chart(4)
    sh = numpy.zeros((N, N), "f")
    red = numpy.zeros((6, N, N), "f")
    chart.decode(sh, red)
    sizes = chart.buffer_sizes()
    triangle = N * (N - 1) * (N - 2) // 6
    assert max(sizes.values()) <= triangle < N**3 // 5
    assert chart.buffer_bytes < 6_000_000 < 4 * N**4 // 10
    assert chart.capacity == n
    before = {name: size for name, size in sizes.items()}
    chart.decode(numpy.zeros((52, 52), "f"), numpy.zeros((6, 52, 52), "f"))
    assert chart.buffer_sizes() == before and chart.capacity == n
    chart.decode(numpy.zeros((N + 1, N + 1), "f"), numpy.zeros((6, N + 1, N + 1), "f"))
    assert chart.capacity == n + 1


def test_mh3_stores_no_three_items():
    chart = Chart(3)
    chart.decode(numpy.zeros((42, 42), "f"), numpy.zeros((2, 42, 42, 42), "f"))
    assert max(chart.buffer_sizes().values()) <= 42 * 42


def test_deterministic_and_reusable():
    sh, red = random_tables(3, 30, 6, "hybrid", ties=True)
    chart = Chart(4)
    first = chart.decode(sh, red)
    chart.decode(*random_tables(4, 35, 6, "two", ties=False))
    again = chart.decode(sh, red)
    other = Chart(4).decode(sh, red)
    for result in (again, other):
        assert result[0] == first[0] and result[1] == first[1]
        assert (result[2] == first[2]).all() and (result[3] == first[3]).all()
    R.run_events(first[3], 30)


def test_long_sentence_events_replay():
    """Beyond brute force: a 60-word decode replays exactly, with costs."""
    rng = numpy.random.default_rng(11)
    n = 60
    sh, red = random_tables(5, n, 6, "hybrid", ties=False)
    gold = random_tree(rng, n)
    score, cost, heads, events = Chart(4).decode(sh, red, gold, 1.0)
    assert R.run_events(events, n) == list(heads)
    assert R.replay_score(events, sh, red) == score
    assert cost == sum(h != g for h, g in zip(heads, gold))


def test_pickles():
    import pickle

    chart = Chart(4, single_root=True)
    chart.decode(numpy.zeros((12, 12), "f"), numpy.zeros((6, 12, 12), "f"))
    copy = pickle.loads(pickle.dumps(chart))
    assert (copy.k, copy.single_root, copy.capacity) == (4, True, 0)


def test_bad_input():
    chart = Chart(4)
    sh = numpy.zeros((5, 5), "f")
    with pytest.raises(ValueError, match="hybrid reduce_scores must be"):
        chart.decode(sh, numpy.zeros((2, 5, 5, 5), "f"))
    with pytest.raises(ValueError, match="two-feature reduce_scores must be"):
        chart.decode(sh, numpy.zeros((6, 4, 4), "f"))
    with pytest.raises(ValueError, match="3-d"):
        chart.decode(sh, numpy.zeros((6, 5), "f"))
    with pytest.raises(ValueError, match="NaN"):
        chart.decode(sh + numpy.nan, numpy.zeros((6, 5, 5), "f"))
    with pytest.raises(ValueError, match="one head per word"):
        chart.decode(sh, numpy.zeros((6, 5, 5), "f"), [0, 1])
    with pytest.raises(ValueError, match=r"arc_scores must be \(5, 5\)"):
        chart.decode(sh, numpy.zeros((6, 5, 5), "f"), arc_scores=numpy.zeros((4, 4), "f"))
    with pytest.raises(ValueError, match="NaN"):
        chart.decode(sh, numpy.zeros((6, 5, 5), "f"), arc_scores=sh + numpy.nan)
    with pytest.raises(ValueError, match="k must be"):
        Chart(5)
    assert TRANSITIONS == ("la", "ra", "la'", "ra'", "la2", "ra2")


def test_minus_infinity_forbids():
    """-inf scores forbid transitions: with la2 and ra2 at -inf, the MH4
    decode is a computation without them."""
    sh, red = random_tables(9, 12, 6, "two", ties=False)
    red[4] = -numpy.inf
    red[5] = -numpy.inf
    score, _, _, events = Chart(4).decode(sh, red)
    assert numpy.isfinite(score)
    assert not numpy.isin(events[:, 0], [4, 5]).any()
    # and -inf arc scores forbid arcs: no word on a head to its left
    N = 14
    arcs = numpy.triu(numpy.full((N, N), -numpy.inf, "f"), 1)
    arcs[0] = 0.0
    score, _, heads, _ = Chart(4, single_root=True).decode(sh, red, arc_scores=arcs)
    assert numpy.isfinite(score)
    assert all(h == 0 or h > d for d, h in enumerate(heads, start=1))


def test_benchmark_runs():
    from benchmarks.charts_timing import benchmark

    rows = benchmark((3, 8), k=4, features="two")
    assert [r["n"] for r in rows] == [3, 8]
    assert all(r["seconds"] >= 0 and r["buffer_bytes"] > 0 for r in rows)


# -- the coverage command -----------------------------------------------------------------

def test_coverage_command(tmp_path, capsys):
    files = sorted(SAMPLE.glob("*.conllu"))
    out = tmp_path / "coverage.json"
    assert main(["coverage", *map(str, files), "--json", str(out), "--max-length", "40"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| file |") and len(table.strip().splitlines()) == 2 + len(files)
    data = json.loads(out.read_text())
    assert data["max_length"] == 40 and len(data["files"]) == len(files)
    for entry in data["files"]:
        assert entry["sentences"] > 0 and entry["words"] >= entry["sentences"]
        for name in ("projective", "mh4"):
            for key in ("sentence_coverage", "edge_coverage"):
                assert 0.0 <= entry[name][key] <= 100.0
        assert entry["mh4"]["covered_sentences"] >= entry["projective"]["covered_sentences"]
        assert entry["mh4"]["covered_arcs"] >= entry["projective"]["covered_arcs"]
        assert entry["projective"]["covered_arcs"] >= entry["words"] * 0.9
        # Projective trees are 1EC.
        assert entry["projective"]["covered_sentences"] <= entry["1ec"]["covered_sentences"] \
            <= entry["sentences"]
    assert sum(entry["skipped_long"] for entry in data["files"]) > 0


def test_coverage_command_counts_projective_sentences(tmp_path, capsys):
    """MH3's sentence coverage is the number of projective gold trees."""
    from spacy_nonmono.evaluation import read_gold
    from spacy_nonmono.conllu_io import gold_tree

    path = SAMPLE / "en_ewt-sample-dev.conllu"
    out = tmp_path / "c.json"
    assert main(["coverage", str(path), "--json", str(out), "--max-length", "0"]) == 0
    entry = json.loads(out.read_text())["files"][0]
    sentences, _ = read_gold(path)
    assert entry["sentences"] == len(sentences) and entry["skipped_long"] == 0
    assert entry["projective"]["covered_sentences"] == sum(
        is_projective(gold_tree(s)[0]) for s in sentences)
    assert entry["1ec"]["covered_sentences"] == sum(
        is_one_endpoint_crossing(gold_tree(s)[0]) for s in sentences)


def test_coverage_command_errors(tmp_path, capsys):
    path = SAMPLE / "en_ewt-sample-dev.conllu"
    assert main(["coverage", str(tmp_path / "missing.conllu")]) == 2
    assert main(["coverage", str(path), "--json", str(tmp_path / "no" / "x.json")]) == 2
    assert main(["coverage", str(path), "--max-length", "-1"]) == 2
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tw\t_\t_\t_\t_\t2\tdep\t_\t_\n2\tw\t_\t_\t_\t_\t1\tdep\t_\t_\n\n")
    assert main(["coverage", str(bad)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(errors) == 4 and all(line.startswith("error: ") for line in errors)
    assert "missing.conllu" in errors[0] and "--json" in errors[1]
    assert "--max-length" in errors[2] and "not a tree" in errors[3]
