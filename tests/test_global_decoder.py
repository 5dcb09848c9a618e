"""The global decoder (`decoding = "global"`): the structured hinge loss and
its gradient (finite differences), training and parsing through the
component for mh3, mh4 (both feature sets) and mst, serialization and
pickling, and clear errors for settings it does not take."""
import itertools
import pickle

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from conftest import make_global_nlp, make_nlp, sample_docs, sample_examples, train, tree_ok
from spacy_nonmono.models.global_model import ScorerView
from spacy_nonmono.models.layout import span_rows


@pytest.fixture(scope="module")
def examples():
    return sample_examples(30)


def arcs(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


STRUCTURES = [("mst", "hybrid"), ("mh4_arcs", "hybrid"), ("1ec_arcs", "hybrid"), ("1ec", "hybrid"),
              ("mh3", "hybrid"), ("mh3", "two"), ("mh4", "hybrid"), ("mh4", "two")]


@pytest.mark.parametrize("system,features", STRUCTURES)
def test_structured_loss_gradient_matches_finite_differences(system, features, examples):
    """The loss of a few sentences (structured hinge plus label loss) as a
    function of the model's parts and the scorers' parameters. The tree
    algorithm's score of each derivation equals the sum of its entries
    scored one by one; holding the two derivations fixed (the hinge is
    linear in the scores between argmax changes), the analytic gradient
    equals central finite differences in float64."""
    from thinc.api import fix_random_seed

    from spacy_nonmono.decoders.global_decoder import GOLD_WEIGHT, label_loss, sentence_loss

    fix_random_seed(0)
    nlp = make_global_nlp(system, features)
    nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("nonmono_parser")
    model, structure = parser.model, parser.moves
    rng = numpy.random.default_rng(0)
    # Random, larger output weights: every parameter matters for the scores.
    for name, _ in model.attrs["scorers"]:
        for k in ("W", "b", "c"):
            value = model.get_param(f"{name}_{k}")
            model.set_param(f"{name}_{k}", rng.normal(scale=0.5, size=value.shape).astype("f"))
    golds = list(parser._gold_sentences(examples[:4], parser.gold_problems))
    docs = [examples[d].predicted for d, *_ in golds]
    spans = [(k, start, end) for k, (_, start, end, _, _) in enumerate(golds)]
    parts = model.predict(docs).astype("float64")
    rows = span_rows(docs, spans)
    base = ScorerView(model, parts)
    params = {s: {k: v.astype("float64") for k, v in p.items()} for s, p in base.params.items()}
    base.params = params

    # The two derivations of each sentence, and their scores checked entry by entry.
    derivations = []
    for r, (_, _, _, heads, labels) in zip(rows, golds):
        gold_heads = numpy.asarray(heads, dtype="int32")
        tables = structure.tables(base, r)
        score, cost, pred, events = structure.decode(tables, gold_heads, 1.0)
        g_score, _, g_pred, g_events = structure.decode(tables, gold_heads, GOLD_WEIGHT)
        assert structure.derivation_score(base, r, pred, events) == pytest.approx(score, rel=1e-4, abs=1e-3)
        assert structure.derivation_score(base, r, g_pred, g_events) == pytest.approx(g_score, rel=1e-4, abs=1e-3)
        g_cost = float(numpy.sum(numpy.asarray(g_pred) != gold_heads))
        derivations.append((r, gold_heads, numpy.asarray(labels), pred, events, cost, g_pred, g_events, g_cost))

    def loss(parts, params):
        """The loss with the derivations held fixed, its gradient in the view."""
        view = ScorerView(model, parts, train=True)
        view.params = params
        view.d_params = {s: {k: numpy.zeros_like(v) for k, v in p.items()} for s, p in params.items()}
        total = 0.0
        for r, gold_heads, labels, pred, events, cost, g_pred, g_events, g_cost in derivations:
            margin = (structure.derivation_score(view, r, pred, events) + cost
                      - structure.derivation_score(view, r, g_pred, g_events) - g_cost)
            if margin > 0:
                total += margin
                structure.add_grads(view, r, pred, events, 1.0)
                structure.add_grads(view, r, g_pred, g_events, -1.0)
            total += label_loss(view, r, gold_heads, labels)
        return total, view

    value, view = loss(parts, params)
    assert value > 0
    # What training computes (sentence_loss) is this loss.
    trained = ScorerView(model, parts, train=True)
    trained.params = params
    assert sum(sentence_loss(structure, trained, r, g, l)
               for r, g, l, *_ in derivations) == pytest.approx(value, rel=1e-4)
    eps = 1e-5

    def check(numeric, analytic, what):
        assert numeric == pytest.approx(analytic, rel=1e-4, abs=1e-4), what

    for _ in range(30):
        index = tuple(int(rng.integers(n)) for n in parts.shape)
        plus, minus = parts.copy(), parts.copy()
        plus[index] += eps
        minus[index] -= eps
        check((loss(plus, params)[0] - loss(minus, params)[0]) / (2 * eps), view.d_parts[index],
              ("parts", index))
    for scorer, p in params.items():
        for k, value_k in p.items():
            for _ in range(4):
                index = tuple(int(rng.integers(n)) for n in value_k.shape)
                shifted = []
                for sign in (1, -1):
                    copy = {s: {kk: vv.copy() for kk, vv in q.items()} for s, q in params.items()}
                    copy[scorer][k][index] += sign * eps
                    shifted.append(loss(parts, copy)[0])
                check((shifted[0] - shifted[1]) / (2 * eps), view.d_params[scorer][k][index],
                      (scorer, k, index))


@pytest.mark.parametrize("system,features", STRUCTURES)
def test_trains_parses_and_round_trips(system, features, examples, tmp_path):
    nlp = make_global_nlp(system, features)
    history = train(nlp, examples, epochs=8)
    assert history[-1] < 0.6 * history[0], history
    docs = [Doc(nlp.vocab, words=[t.text for t in g]) for g in sample_docs("dev", limit=15)]
    parsed = list(nlp.pipe(docs))
    assert all(tree_ok(doc) for doc in parsed)
    labels = set(nlp.get_pipe("nonmono_parser").labels) | {"dep", "ROOT"}
    assert all(t.dep_ in labels for doc in parsed for t in doc)
    expected = arcs(parsed)
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    again = loaded.pipe([Doc(loaded.vocab, words=[t.text for t in d]) for d in docs])
    assert arcs(again) == expected
    unpickled = pickle.loads(pickle.dumps(loaded))
    again = unpickled.pipe([Doc(unpickled.vocab, words=[t.text for t in d]) for d in docs])
    assert arcs(again) == expected
    # Preset sentences and awkward docs.
    words = "The dog barked . A cat slept . Birds sing".split()
    starts = [True, False, False, False, True, False, False, False, True, False]
    doc = loaded(Doc(loaded.vocab, words=words, sent_starts=starts))
    assert [s.start for s in doc.sents] == [0, 4, 8] and tree_ok(doc)
    for words in ([], ["Hello"], ["a", " ", "b", "\n"]):
        doc = loaded(Doc(loaded.vocab, words=words))
        assert len(doc) == len(words) and (not words or tree_ok(doc))


def test_settings_global_decoding_does_not_take():
    with pytest.raises(ValueError, match="decodes a structure, or a transition system with an "
                       "exact chart \\(mh3, mh4\\), named in `system`: Unknown structure "
                       "'covington'. Known structures: 1ec, 1ec_arcs, mh3_arcs, mh3_chart, mh4_arcs, "
                       "mh4_chart, mst"):
        make_global_nlp("covington")
    with pytest.raises(ValueError, match="oracle must be null"):
        make_global_nlp("mh4", oracle="static")
    with pytest.raises(ValueError, match="takes no system_options"):
        make_global_nlp("mst", system_options={"loss": "upper"})
    with pytest.raises(ValueError, match="decoding = 'global' reads a 'global_parser_model' "
                       "model, but the model is a 'nonmono_parser_model' \\(the model of "
                       "decoding = 'beam' or 'greedy'"):
        make_nlp(system="mh4", decoding="global")
    with pytest.raises(ValueError, match="Unknown features 'three'"):
        make_global_nlp("mh4", features="three")


def test_mst_is_global_only():
    with pytest.raises(ValueError, match="'mst' is a structure of global decoding, not a "
                       "transition system: set decoding = \"global\""):
        spacy.blank("en").add_pipe("nonmono_parser", config={"system": "mst"})
    with pytest.raises(ValueError, match="Known transition systems: .*covington_nm.*"
                       "Structures of decoding = \"global\": 1ec, 1ec_arcs, mh3_arcs, mh3_chart, "
                       "mh4_arcs, mh4_chart, mst"):
        spacy.blank("en").add_pipe("nonmono_parser", config={"system": "covingtn"})


def test_decoding_cannot_switch_model_kind_at_load(examples, tmp_path):
    nlp = make_global_nlp("mh4")
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "model")
    # The saved config names the global model: the greedy decoder refuses it.
    with pytest.raises(ValueError, match="decoding = 'greedy' reads a 'nonmono_parser_model' "
                       "model, but the model is a 'global_parser_model' \\(the model of "
                       "decoding = 'global'\\)"):
        spacy.load(tmp_path / "model", config={"components": {"nonmono_parser": {"decoding": "greedy"}}})
    # With the decoder's default model (model null), the trained settings refuse it.
    with pytest.raises(ValueError, match="trained with decoding = 'global', whose model "
                       "decoding = 'greedy' cannot read"):
        spacy.load(tmp_path / "model", config={"components": {"nonmono_parser": {
            "decoding": "greedy", "model": None}}})


def test_long_docs_are_parsed_in_windows(examples):
    """The length guard: a doc longer than max_sentence_length is decoded in
    windows (one tree: later windows' roots attach to the first's)."""
    nlp = make_global_nlp("mh4", max_sentence_length=60)
    nlp.initialize(lambda: examples)
    doc = nlp(Doc(nlp.vocab, words=["word"] * 301))
    assert tree_ok(doc) and len(list(doc.sents)) == 1
    assert sum(t.dep_ == "dep" and t.head.dep_ == "ROOT" for t in doc) >= 5


def test_unsegmented_docs_are_split_at_punctuation(examples):
    """Global decoding of a doc without sentence boundaries parses its
    sentences by punctuation (spaCy's sentencizer rule: a run of
    sentence-final punctuation ends one), not one long span; set boundaries
    win; a greedy decoder parses the doc as one span."""
    nlp = make_global_nlp("mh4")
    nlp.initialize(lambda: examples)
    words = "The dog barked . A cat slept ? ! Birds sing".split()
    doc = nlp(Doc(nlp.vocab, words=words))
    assert tree_ok(doc) and [s.start for s in doc.sents] == [0, 4, 9]
    assert [t.dep_ for t in doc].count("ROOT") == 3
    preset = nlp(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 10))
    assert len(list(preset.sents)) == 1
    from spacy_nonmono.pipeline.sentences import punctuation_sentences, windows

    assert punctuation_sentences(Doc(nlp.vocab, words=words)) == [(0, 4), (4, 9), (9, 11)]
    # A closing quote stays with its sentence, as spaCy's sentencizer keeps it.
    quoted = Doc(nlp.vocab, words='He said " Go . " She went .'.split())
    assert punctuation_sentences(quoted) == [(0, 6), (6, 9)]
    assert windows(Doc(nlp.vocab, words=words), 3) == [(0, 0, 3), (0, 3, 6), (0, 6, 9),
                                                        (0, 9, 11)]
    assert windows(Doc(nlp.vocab, words=words), 3, split_unsegmented=True) == [
        (0, 0, 3), (0, 3, 4), (4, 4, 7), (4, 7, 9), (9, 9, 11)]



def test_vector_dropout_only_in_training():
    """GlobalParserModel's dropout masks the token vectors in training only;
    the weights' gradient is that of the masked vectors (one mask per
    forward pass: the same seed gives the same mask)."""
    from spacy.util import registry
    from thinc.api import fix_random_seed

    from conftest import global_model
    from spacy_nonmono.models.global_model import size_global_model

    with pytest.raises(ValueError, match="dropout must be in"):
        registry.resolve({"m": {**global_model(), "dropout": 1.0}})
    docs = [Doc(spacy.blank("en").vocab, words="The dog barked at the cat".split())]
    model = registry.resolve({"m": {**global_model(), "dropout": 0.5}})["m"]
    size_global_model(model, {"shift": 1, "reduce": 4, "label": 2})
    model.initialize(X=docs)
    predicted = model.predict(docs)
    numpy.testing.assert_array_equal(predicted, model.predict(docs))
    G = numpy.random.default_rng(0).normal(size=predicted.shape).astype("f")

    def loss():
        fix_random_seed(1)
        parts, _ = model.begin_update(docs)
        return float((parts.astype("d") * G).sum())

    fix_random_seed(1)
    parts, backprop = model.begin_update(docs)
    assert not numpy.allclose(parts, predicted)
    backprop(G)
    W, dW = model.get_param("W"), model.get_grad("W")
    for idx in [(0, 0), (3, 5), (7, 2), (11, 9)]:
        saved = W[idx]
        W[idx] = saved + 1e-2
        up = loss()
        W[idx] = saved - 1e-2
        down = loss()
        W[idx] = saved
        assert abs((up - down) / 2e-2 - dW[idx]) < 1e-2 * max(1.0, abs(dW[idx]))


def test_triple_table_holds_the_ordered_triples_the_charts_read():
    """The reduce scorer's table holds, for every p1 < p2 < p3, the score
    `scores` gives that triple (the charts read only those: a reduce's s1,
    s0, b0 stand in position order), and zero elsewhere."""
    from spacy.util import registry

    from conftest import global_model
    from spacy_nonmono.models.global_model import size_global_model

    words = "The old dog barked at the cat on the mat today".split()
    docs = [Doc(spacy.blank("en").vocab, words=words)]
    model = registry.resolve({"m": global_model()})["m"]
    size_global_model(model, {"shift": 1, "reduce": 4, "label": 2})
    model.initialize(X=docs)
    view = ScorerView(model, model.predict(docs))
    rows = numpy.arange(len(words) + 2)
    table = view.triple_table("reduce", rows)
    m = len(rows)
    assert table.shape == (4, m, m, m)
    triples = numpy.array([(a, b, c) for a in range(m) for b in range(a + 1, m)
                           for c in range(b + 1, m)])
    expected, _ = view.scores("reduce", triples)
    got = table[:, triples[:, 0], triples[:, 1], triples[:, 2]].T
    numpy.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    ordered = numpy.zeros((m, m, m), dtype=bool)
    ordered[tuple(triples.T)] = True
    assert not table[:, ~ordered].any()
    # Given some triples (a pruned chart's reads), those are scored the same
    # (by array operations: to float32 rounding of another summation order).
    some = triples[numpy.random.default_rng(0).random(len(triples)) < 0.3]
    partial = view.triple_table("reduce", rows, some)
    numpy.testing.assert_allclose(partial[:, some[:, 0], some[:, 1], some[:, 2]],
                                  table[:, some[:, 0], some[:, 1], some[:, 2]],
                                  rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(0, 9), nH=st.sampled_from([1, 7, 8, 17, 100]), n_out=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_c_triple_table_is_the_mlp_of_every_ordered_triple(m, nH, n_out, seed):
    """models/score_tables.pyx against the MLP written out for each triple:
    widths the 8-wide loops do not divide, empty and short sentences."""
    from spacy_nonmono.models.score_tables import mlp_triple_table

    rng = numpy.random.default_rng(seed)
    A, B, C = (rng.normal(size=(m, nH)).astype("f") for _ in range(3))
    b, c = rng.normal(size=nH).astype("f"), rng.normal(size=n_out).astype("f")
    W = rng.normal(size=(n_out, nH)).astype("f")
    table = mlp_triple_table(A, B, C, b, W, c)
    expected = numpy.zeros((n_out, m, m, m), dtype="f")
    for p1, p2, p3 in itertools.combinations(range(m), 3):
        expected[:, p1, p2, p3] = W @ numpy.maximum(A[p1] + B[p2] + C[p3] + b, 0) + c
    assert table.shape == expected.shape and table.dtype == numpy.float32
    numpy.testing.assert_allclose(table, expected, rtol=1e-5, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 9), nH=st.sampled_from([1, 7, 8, 17, 100]), n_out=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_c_pair_table_is_the_mlp_of_every_pair(m, nH, n_out, seed):
    """models/score_tables.pyx's pair table against the MLP written out."""
    from spacy_nonmono.models.score_tables import mlp_pair_table

    rng = numpy.random.default_rng(seed)
    A, B = (rng.normal(size=(m, nH)).astype("f") for _ in range(2))
    b, c = rng.normal(size=nH).astype("f"), rng.normal(size=n_out).astype("f")
    W = rng.normal(size=(n_out, nH)).astype("f")
    expected = numpy.maximum(A[:, None, :] + B[None, :, :] + b, 0) @ W.T + c
    table = mlp_pair_table(A, B, b, W, c)
    assert table.shape == (m, m, n_out) and table.dtype == numpy.float32
    numpy.testing.assert_allclose(table, expected, rtol=1e-5, atol=1e-4)
