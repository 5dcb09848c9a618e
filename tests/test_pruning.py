"""Pruned exact decoding: every structure decodes exactly over the arcs a
mask keeps (brute force over the trees of kept arcs), equals its unpruned
self with nothing pruned, and falls back to the whole space where no tree of
kept arcs exists; the pruning mask and the decoder's pruner."""
import pickle

import numpy
import pytest
import spacy
from hypothesis import example, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

import reference_charts as R
import reference_mst as M
from conftest import make_global_nlp, sample_docs, sample_examples, scaled, train, tree_ok
from spacy_nonmono.graph import get_structure, is_one_endpoint_crossing
from spacy_nonmono.graph.charts import Chart
from spacy_nonmono.graph.structures import keep_heads


@pytest.fixture(scope="module", autouse=True)
def free_reference_tables():
    yield
    R.computation_arrays.cache_clear()


def random_mask(rng, n: int) -> numpy.ndarray:
    """A random (n+2, n+2) keep mask, from sparse to dense."""
    N = n + 2
    return rng.random((N, N)) < rng.uniform(0.15, 0.9)


def kept(mask, heads) -> bool:
    return all(mask[h, d] for d, h in enumerate(heads, start=1))


def valid_tree(heads) -> bool:
    return M.is_tree(list(heads)) and list(heads).count(0) == 1


# -- the MH3 / MH4 charts ------------------------------------------------------------

@pytest.mark.slow     # exhaustive search over every computation or tree
@settings(max_examples=scaled(80), deadline=None)
@given(n=st.integers(0, 6), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       features=st.sampled_from(["hybrid", "two"]), single_root=st.booleans(),
       cost_weight=st.sampled_from([0.0, 1.0, -1e4]))
@example(n=6, seed=1, k=4, features="hybrid", single_root=True, cost_weight=0.0)
@example(n=6, seed=2, k=4, features="two", single_root=False, cost_weight=1.0)
def test_pruned_chart_equals_brute_force_over_kept_arcs(n, seed, k, features, single_root,
                                                       cost_weight):
    rng = numpy.random.default_rng(seed)
    N, T = n + 2, 2 if k == 3 else 6
    sh = rng.standard_normal((N, N), dtype=numpy.float32)
    red = rng.standard_normal((T, N, N, N) if features == "hybrid" else (T, N, N),
                              dtype=numpy.float32)
    mask = random_mask(rng, n)
    gold = [int(h) for h in rng.integers(0, n + 1, n)] if cost_weight else None
    chart = Chart(k, single_root)
    score, cost, heads, events = chart.decode(sh, red, gold, cost_weight, keep=mask)
    reference = R.brute_force_arrays(sh, red, k, gold, cost_weight, single_root, keep=mask)
    if reference is None:           # no computation of kept arcs: the whole space
        reference = R.brute_force_arrays(sh, red, k, gold, cost_weight, single_root)
        assert chart.fallbacks == 1
    else:
        assert chart.fallbacks == 0 and kept(mask, heads)
    best, _, _, trees = reference
    assert score + cost == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert tuple(heads) in trees
    assert R.run_events(events, n, transitions=range(T)) == list(heads)
    assert R.replay_score(events, sh, red) == score


@settings(max_examples=scaled(30), deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       single_root=st.booleans())
def test_nothing_pruned_is_the_unpruned_chart(n, seed, k, single_root):
    """An all-True mask gives the unpruned chart's computation (continuous
    scores: no ties)."""
    rng = numpy.random.default_rng(seed)
    N, T = n + 2, 2 if k == 3 else 6
    sh = rng.standard_normal((N, N), dtype=numpy.float32)
    red = rng.standard_normal((T, N, N, N), dtype=numpy.float32)
    arcs = rng.standard_normal((N, N), dtype=numpy.float32)
    chart = Chart(k, single_root)
    full = chart.decode(sh, red, arc_scores=arcs)
    pruned = chart.decode(sh, red, arc_scores=arcs, keep=numpy.ones((N, N), bool))
    assert pruned[0] == pytest.approx(full[0], rel=1e-12)
    assert list(pruned[2]) == list(full[2])
    assert chart.fallbacks == 0


@settings(max_examples=scaled(30), deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]))
def test_pruned_chart_on_long_sentences_keeps_its_arcs_or_falls_back(n, seed, k):
    """Longer sentences, a few heads per word around a random tree: a tree of
    kept arcs whose events replay to the returned score (the decode over the
    tree's own arcs alone finds that tree, so one always exists)."""
    rng = numpy.random.default_rng(seed)
    N, T = n + 2, 2 if k == 3 else 6
    sh = rng.standard_normal((N, N), dtype=numpy.float32)
    red = rng.standard_normal((T, N, N, N), dtype=numpy.float32)
    chart = Chart(k, single_root=True)
    _, _, tree, _ = chart.decode(sh, red)          # a tree the chart derives
    mask = numpy.zeros((N, N), bool)
    mask[tree, numpy.arange(1, n + 1)] = True
    only = chart.decode(sh, red, keep=mask)
    assert list(only[2]) == list(tree) and chart.fallbacks == 0
    extra = rng.integers(0, n + 1, (3, n))
    mask[extra, numpy.arange(1, n + 1)[None, :].repeat(3, axis=0)] = True
    score, _, heads, events = chart.decode(sh, red, keep=mask)
    assert chart.fallbacks == 0 and kept(mask, heads) and valid_tree(heads)
    assert R.replay_score(events, sh, red) == score
    assert score >= only[0] - 1e-9


@settings(max_examples=scaled(30), deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), k=st.sampled_from([3, 4]),
       density=st.floats(0.05, 0.6))
def test_pruned_chart_reads_only_the_triples_it_names(n, seed, k, density):
    """read_triples names every reduce entry a pruned decode reads: with NaN
    everywhere else (a NaN read is an error) the decode is the same."""
    rng = numpy.random.default_rng(seed)
    N, T = n + 2, 2 if k == 3 else 6
    sh = rng.standard_normal((N, N), dtype=numpy.float32)
    red = rng.standard_normal((T, N, N, N), dtype=numpy.float32)
    mask = rng.random((N, N)) < density
    chart = Chart(k, single_root=True)
    triples = chart.read_triples(mask)
    full = chart.decode(sh, red, keep=mask)
    if triples is None:
        assert chart.fallbacks == 1
        return
    first, second, third = triples.T
    assert (first < second).all() and (second < third).all()
    masked = numpy.full_like(red, numpy.nan)
    masked[:, first, second, third] = red[:, first, second, third]
    again = chart.decode(sh, masked, keep=mask)
    assert again[0] == full[0] and list(again[2]) == list(full[2])
    assert (again[3] == full[3]).all()
    with pytest.raises(ValueError, match="NaN"):
        chart.decode(sh, numpy.full_like(red, numpy.nan), keep=mask)


def test_empty_mask_falls_back_to_a_valid_tree():
    rng = numpy.random.default_rng(3)
    for k in (3, 4):
        for n in (1, 5, 12):
            N, T = n + 2, 2 if k == 3 else 6
            sh = rng.standard_normal((N, N), dtype=numpy.float32)
            red = rng.standard_normal((T, N, N, N), dtype=numpy.float32)
            chart = Chart(k, single_root=True)
            full = chart.decode(sh, red)
            pruned = chart.decode(sh, red, keep=numpy.zeros((N, N), bool))
            assert chart.fallbacks == 1 and list(pruned[2]) == list(full[2])
            assert valid_tree(pruned[2])
    with pytest.raises(ValueError, match="keep must be"):
        Chart(4).decode(sh, red, keep=numpy.ones((2, 2), bool))


# -- arc-factored structures ---------------------------------------------------------

def arc_objective(arcs, heads):
    return sum(float(arcs[h, d]) for d, h in enumerate(heads, start=1))


@pytest.mark.slow     # exhaustive search over every computation or tree
@settings(max_examples=scaled(60), deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       name=st.sampled_from(["mst", "mh3_arcs", "mh4_arcs", "1ec_arcs"]))
def test_pruned_arc_structures_equal_brute_force_over_kept_arcs(n, seed, name):
    rng = numpy.random.default_rng(seed)
    N = n + 2
    arcs = rng.standard_normal((N, N, 1)).astype(numpy.float32)
    mask = random_mask(rng, n)
    if name in ("mh3_arcs", "mh4_arcs"):
        trees = R.reachable_trees(n, int(name[2]), single_root=True)
    else:
        trees = [t for t in M.all_trees(n) if M.n_roots(t) == 1
                 and (name == "mst" or is_one_endpoint_crossing(list(t)))]
    structure = get_structure(name)()
    score, _, heads, _ = structure.decode({"arc": arcs}, keep=mask)
    candidates = [t for t in trees if kept(mask, t)] or list(trees)
    assert structure.fallbacks == (0 if any(kept(mask, t) for t in trees) else 1)
    best = max(arc_objective(arcs[..., 0], t) for t in candidates)
    assert tuple(heads) in set(map(tuple, candidates))
    assert arc_objective(arcs[..., 0], heads) == pytest.approx(best, abs=1e-5)
    assert score == pytest.approx(best, abs=1e-5)


def test_third_order_1ec_prunes_and_falls_back():
    rng = numpy.random.default_rng(5)
    n, N = 7, 9
    scores = rng.standard_normal((N, N, 4))
    structure = get_structure("1ec")()
    full = structure.decode({"arc": scores})
    mask = numpy.zeros((N, N), bool)
    mask[full[2], numpy.arange(1, n + 1)] = True          # its own tree's arcs
    again = structure.decode({"arc": scores}, keep=mask)
    assert list(again[2]) == list(full[2]) and structure.fallbacks == 0
    mask[:] = False
    mask[0, 1] = True                                      # no tree of kept arcs
    fallback = structure.decode({"arc": scores}, keep=mask)
    assert list(fallback[2]) == list(full[2]) and structure.fallbacks == 1


# -- the mask ------------------------------------------------------------------------------

@settings(max_examples=scaled(60), deadline=None)
@given(n=st.integers(0, 30), seed=st.integers(0, 2**32 - 1), max_heads=st.integers(1, 6),
       margin=st.floats(0.01, 20.0))
def test_keep_heads(n, seed, max_heads, margin):
    rng = numpy.random.default_rng(seed)
    N = n + 2
    scores = rng.standard_normal((N, N)) * 3
    keep = keep_heads(scores, max_heads, margin)
    assert keep.shape == (N, N) and keep.dtype == bool
    assert not keep[:, 0].any() and not keep[N - 1].any() and not keep[:, N - 1].any()
    for d in range(1, n + 1):
        candidates = [h for h in range(n + 1) if h != d]
        best = max(candidates, key=lambda h: (scores[h, d], -h))
        ranked = sorted(candidates, key=lambda h: -scores[h, d])
        expected = {h for h in ranked[:max_heads] if scores[h, d] >= scores[best, d] - margin}
        assert set(numpy.flatnonzero(keep[:, d])) == expected
        assert keep[best, d] and not keep[d, d]


# -- the decoder ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def examples():
    return sample_examples(30)


def arcs_of(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


def test_chart_parser_trains_its_pruner_and_parses_pruned(examples, tmp_path):
    """mh4 with prune_heads: the model gains a pruner trained beside the
    structured loss; parses are trees of kept arcs; the pipeline saves,
    loads and pickles with its pruner."""
    nlp = make_global_nlp("mh4", decoding_options={"prune_heads": 3, "prune_margin": 4.0})
    history = train(nlp, examples, epochs=8)
    assert history[-1] < 0.6 * history[0], history
    parser = nlp.get_pipe("nonmono_parser")
    assert dict(parser.model.attrs["scorers"])["prune"] == 1
    docs = [Doc(nlp.vocab, words=[t.text for t in g]) for g in sample_docs("dev", limit=15)]
    parsed = list(nlp.pipe(docs))
    assert all(tree_ok(doc) for doc in parsed)
    expected = arcs_of(parsed)
    # The tables a pruned decode reads (its triples only) give the decode of
    # the whole tables under the same mask.
    from spacy_nonmono.models.layout import span_rows
    from spacy_nonmono.models.scores import part_scores

    system = parser.moves
    view = part_scores(parser.model, docs)
    for rows in span_rows(docs, [(k, 0, len(d)) for k, d in enumerate(docs)]):
        tables, keep = system.pruned_tables(view, rows, 3, 4.0)
        whole = system.decode(system.tables(view, rows), keep=keep)
        assert list(system.decode(tables, keep=keep)[2]) == list(whole[2])
        # One head a word: where no tree is left, the mask is widened once.
        narrow = keep_heads(system.pruning_scores(view, rows), 1, 0.5)
        _, keep = system.pruned_tables(view, rows, 1, 0.5)
        if system.structure.read_triples(narrow) is None:
            assert (keep >= narrow).all() and keep.sum(axis=0).max() <= 2
        else:
            assert (keep == narrow).all()
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert arcs_of(loaded.pipe([Doc(loaded.vocab, words=[t.text for t in d]) for d in docs])) \
        == expected
    unpickled = pickle.loads(pickle.dumps(loaded))
    assert arcs_of(unpickled.pipe([Doc(unpickled.vocab, words=[t.text for t in d])
                                   for d in docs])) == expected
    # The same model decodes unpruned with prune_heads = 0.
    unpruned = spacy.load(tmp_path / "model", config={
        "components": {"nonmono_parser": {"decoding_options": {"prune_heads": 0}}}})
    assert all(tree_ok(d) for d in unpruned.pipe(
        [Doc(unpruned.vocab, words=[t.text for t in d]) for d in docs]))


def test_pruner_gradient_matches_finite_differences(examples):
    """The pruner's loss (softmax over each word's heads) as a function of
    the model's parts and the pruner's parameters: its analytic gradient
    equals central finite differences in float64."""
    from spacy_nonmono.decoders.global_decoder import pruner_loss
    from spacy_nonmono.models.global_model import ScorerView
    from spacy_nonmono.models.layout import span_rows

    nlp = make_global_nlp("mh4", decoding_options={"prune_heads": 2})
    nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("nonmono_parser")
    model = parser.model
    golds = list(parser._gold_sentences(examples[:2], parser.gold_problems))
    docs = [examples[d].predicted for d, *_ in golds]
    spans = [(k, start, end) for k, (_, start, end, _, _) in enumerate(golds)]
    parts = model.predict(docs).astype("float64")
    sentences = [(r, numpy.asarray(heads)) for r, (*_, heads, _) in
                 zip(span_rows(docs, spans), golds)]
    rng = numpy.random.default_rng(0)
    params = {s: {k: rng.normal(scale=0.5, size=v.shape) for k, v in p.items()}
              for s, p in ScorerView(model, parts).params.items()}

    def loss(parts, params):
        view = ScorerView(model, parts, train=True)
        view.params = params
        view.d_params = {s: {k: numpy.zeros_like(v) for k, v in p.items()}
                         for s, p in params.items()}
        return sum(pruner_loss(view, r, heads) for r, heads in sentences), view

    value, view = loss(parts, params)
    assert value > 0
    first, n_slots = view.layout["prune"]
    eps = 1e-5
    for _ in range(20):
        index = (int(rng.integers(parts.shape[0])), first + int(rng.integers(n_slots)),
                 int(rng.integers(parts.shape[2])))
        plus, minus = parts.copy(), parts.copy()
        plus[index] += eps
        minus[index] -= eps
        numeric = (loss(plus, params)[0] - loss(minus, params)[0]) / (2 * eps)
        assert numeric == pytest.approx(view.d_parts[index], rel=1e-4, abs=1e-4)
    for k, value_k in params["prune"].items():
        index = tuple(int(rng.integers(n)) for n in value_k.shape)
        shifted = []
        for sign in (1, -1):
            copy = {s: {kk: vv.copy() for kk, vv in q.items()} for s, q in params.items()}
            copy["prune"][k][index] += sign * eps
            shifted.append(loss(parts, copy)[0])
        numeric = (shifted[0] - shifted[1]) / (2 * eps)
        assert numeric == pytest.approx(view.d_params["prune"][k][index], rel=1e-4, abs=1e-4)


def test_pruning_settings_and_errors(examples, tmp_path):
    for bad in ({"prune_heads": -1}, {"prune_heads": 1.5}, {"prune_margin": 0},
                {"prune_margin": float("inf")}):
        with pytest.raises(ValueError, match="prune_"):
            make_global_nlp("mh4", decoding_options=bad)
    # A chart model trained without a pruner cannot prune.
    nlp = make_global_nlp("mh4")
    train(nlp, examples[:8], epochs=1)
    nlp.to_disk(tmp_path / "plain")
    loaded = spacy.load(tmp_path / "plain", config={
        "components": {"nonmono_parser": {"decoding_options": {"prune_heads": 2}}}})
    with pytest.raises(ValueError, match="has no pruner"):
        loaded(Doc(loaded.vocab, words="The dog barked .".split()))
    # Arc structures prune with their own arc table: no pruner in the model.
    nlp = make_global_nlp("mst", decoding_options={"prune_heads": 2})
    train(nlp, examples[:8], epochs=1)
    assert "prune" not in dict(nlp.get_pipe("nonmono_parser").model.attrs["scorers"])
    assert tree_ok(nlp(Doc(nlp.vocab, words="The dog barked at a cat .".split())))
