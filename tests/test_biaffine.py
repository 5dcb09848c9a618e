"""The global model's biaffine scorer (`scorer = "biaffine"`, Dozat & Manning
2017): its tables and scores against the formulas written out, its gradient
against finite differences, training and parsing with `mst` (and mh4, whose
transitions stay MLPs), serialization, and the setting's validation."""
import numpy
import pytest
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from thinc.api import fix_random_seed

from conftest import global_model, make_global_nlp, sample_docs, train, tree_ok
from spacy_nonmono.models.global_model import ScorerView, size_global_model

N_LABELS = 3


def biaffine_config(**widths):
    return {**global_model(), **widths, "scorer": "biaffine"}


def relu(x):
    return numpy.maximum(x, 0)


@pytest.fixture(scope="module")
def setup():
    """An mst-sized biaffine model, random float64 parts (rows, parts, width)
    and random float64 parameters (U too: it starts at zero)."""
    model = registry.resolve({"m": biaffine_config(hidden_width=5, label_hidden_width=4)})["m"]
    size_global_model(model, {"arc": 1, "label": N_LABELS})
    model.initialize()
    assert model.attrs["scorer"] == "biaffine"
    rng = numpy.random.default_rng(0)
    parts = rng.normal(size=(7, 4, 5))
    base = ScorerView(model, parts)
    assert set(base.params["arc"]) == {"bh", "bd", "U", "u", "c"}
    assert set(base.params["label"]) == {"bh", "bd", "U", "V", "c"}
    assert not base.params["label"]["U"].any()
    params = {s: {k: rng.normal(scale=0.5, size=v.shape) for k, v in p.items()}
              for s, p in base.params.items()}
    return model, parts, params


def view_of(model, parts, params):
    view = ScorerView(model, parts, train=True)
    view.params = params
    view.d_params = {s: {k: numpy.zeros_like(v) for k, v in p.items()} for s, p in params.items()}
    return view


def explicit(params, parts, scorer, head_row, dep_row):
    """s_o(h, d) written out (slots 0 and 1 are the scorer's parts)."""
    p = params[scorer]
    first, k = {"arc": 0, "label": 2}[scorer], p["bh"].shape[0]
    h = relu(parts[head_row, first, :k] + p["bh"])
    d = relu(parts[dep_row, first + 1, :k] + p["bd"])
    linear = p["u"] @ h if scorer == "arc" else p["V"] @ numpy.concatenate([h, d])
    return numpy.array([d @ p["U"][o] @ h for o in range(len(p["c"]))]) + linear + p["c"]


def test_tables_and_scores_match_the_formulas(setup):
    model, parts, params = setup
    view = view_of(model, parts, params)
    rows = numpy.array([5, 0, 3, 6, 2])
    for scorer, n_out in (("arc", 1), ("label", N_LABELS)):
        table = view.pair_table(scorer, rows)
        assert table.shape == (len(rows), len(rows), n_out)
        for i, head in enumerate(rows):            # laid out [head, dependent]
            for j, dep in enumerate(rows):
                numpy.testing.assert_allclose(table[i, j], explicit(params, parts, scorer, head, dep),
                                              rtol=1e-10, atol=1e-10)
        pairs = numpy.array([(0, 1), (3, 4), (4, 0), (2, 2), (0, 1)])
        scores, _ = view.scores(scorer, rows[pairs])
        numpy.testing.assert_allclose(scores, table[pairs[:, 0], pairs[:, 1]], rtol=1e-10, atol=1e-10)


def test_gradient_matches_finite_differences(setup):
    """The loss sum(G * scores) over both scorers, on pairs that repeat rows
    (the parts' gradient accumulates): backprop's gradient of every part and
    parameter entry equals central differences in float64."""
    model, parts, params = setup
    rng = numpy.random.default_rng(1)
    pairs = numpy.array([(6, 1), (6, 2), (1, 6), (3, 3), (0, 4), (6, 1)])
    G = {"arc": rng.normal(size=(len(pairs), 1)), "label": rng.normal(size=(len(pairs), N_LABELS))}

    def loss(parts, params):
        view = view_of(model, parts, params)
        total = 0.0
        for scorer, g in G.items():
            scores, cache = view.scores(scorer, pairs)
            total += float((g * scores).sum())
            view.backprop(cache, g)
        return total, view

    _, view = loss(parts, params)
    eps = 1e-6

    def numeric(shift):
        return (loss(*shift(eps))[0] - loss(*shift(-eps))[0]) / (2 * eps)

    def shifted_parts(index):
        def shift(e):
            copy = parts.copy()
            copy[index] += e
            return copy, params
        return shift

    def shifted_param(scorer, k, index):
        def shift(e):
            copy = {s: {kk: vv.copy() for kk, vv in q.items()} for s, q in params.items()}
            copy[scorer][k][index] += e
            return parts, copy
        return shift

    for index in numpy.ndindex(parts.shape):
        assert numeric(shifted_parts(index)) == pytest.approx(view.d_parts[index], abs=1e-6), index
    for scorer, p in params.items():
        for k, value in p.items():
            for index in numpy.ndindex(value.shape):
                assert (numeric(shifted_param(scorer, k, index))
                        == pytest.approx(view.d_params[scorer][k][index], abs=1e-6)), (scorer, k, index)


def arcs(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


def test_mst_trains_parses_and_round_trips():
    fix_random_seed(0)
    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=12)]
    nlp = make_global_nlp("mst", model=biaffine_config())
    history = train(nlp, examples, epochs=8)
    assert history[-1] < 0.7 * history[0], history
    model = nlp.get_pipe("nonmono_parser").model
    assert model.has_param("arc_U") and not model.has_param("arc_W")
    assert model.get_param("arc_U").any()     # U left zero
    docs = [Doc(nlp.vocab, words=[t.text for t in g]) for g in sample_docs("dev", limit=8)]
    parsed = list(nlp.pipe(docs))
    assert all(tree_ok(doc) for doc in parsed)
    loaded = make_global_nlp("mst", model=biaffine_config()).from_bytes(nlp.to_bytes())
    assert loaded.get_pipe("nonmono_parser").model.attrs["scorer"] == "biaffine"
    again = loaded.pipe([Doc(loaded.vocab, words=[t.text for t in d]) for d in docs])
    assert arcs(again) == arcs(parsed)


def test_charts_keep_mlp_transitions():
    """mh4 with the biaffine setting: biaffine labels, MLP shift and reduce."""
    fix_random_seed(0)
    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=4)]
    nlp = make_global_nlp("mh4", model=biaffine_config())
    train(nlp, examples, epochs=1)
    model = nlp.get_pipe("nonmono_parser").model
    assert all(model.has_param(f"{s}_W") for s in ("shift", "reduce"))
    assert model.has_param("label_U") and not model.has_param("label_W")
    doc = nlp(Doc(nlp.vocab, words="The dog barked at the cat".split()))
    assert tree_ok(doc)


def test_unknown_scorer():
    with pytest.raises(ValueError, match="Unknown scorer 'bilinear': expected one of 'mlp', 'biaffine'"):
        make_global_nlp("mst", model={**global_model(), "scorer": "bilinear"})
