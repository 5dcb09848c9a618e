"""The engine's interfaces: move tables, system options, the decoder
registry, the step model's one scoring path (C routine against a numpy
reference, gradients against finite differences), and a new system added as
one module plus a registry entry (tests/toy_system, the README's example)."""
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import set_dropout_rate

from spacy_nonmono import get_system
from spacy_nonmono.models.step_model import TableGrad
from spacy_nonmono.graph import is_projective
from spacy_nonmono.decoders import get_decoder
from spacy_nonmono.registry import systems
from spacy_nonmono.systems.base import INVALID

from conftest import make_nlp, sample_docs, train, tree_ok

TOY_DIR = Path(__file__).resolve().parent / "toy_system"


# -- move tables and options ---------------------------------------------------


def test_covington_move_table():
    system = get_system("covington")(labels=["nsubj", "obj"])
    assert system.move_names == ["S", "N", "L-nsubj", "L-obj", "R-nsubj", "R-obj"]
    for m in range(system.n_moves):
        assert system.move_id(system.move_kind(m), system.move_label(m)) == m
    assert system.move_kind(0) == "S" and system.move_label(0) is None
    assert system.move_label(5) == "obj"
    with pytest.raises(ValueError, match="No move 6"):
        system.move_kind(6)


def test_system_defaults_and_options():
    covington = get_system("covington")(labels=["a"])
    assert covington.oracle == "dynamic"
    assert covington.options == {"loss": "exact", "tie_break": "weighted", "no_arc_weight": 0.9,
                                  "scan_explore_prob": 0.75, "scan_explore_replaces": "any"}
    nm = get_system("covington_nm")(labels=["a"], loss="upper")
    assert nm.options["loss"] == "upper" and nm.loss_name == "upper"
    assert get_system("covington_nm")(labels=["a"]).loss_name == "upper"
    with pytest.raises(ValueError, match=r"Unknown loss 'upper' \(system option 'loss' of "
                                         r"'covington'\): expected one of 'exact'"):
        get_system("covington")(labels=["a"], loss="upper")
    with pytest.raises(ValueError, match=r"System 'covington_nm' takes no option 'strategy' \(in "
                                         r"system_options\); "
                                         r"its options are: 'loss', 'tie_break', 'no_arc_weight', "
                                         r"'scan_explore_prob', 'scan_explore_replaces', "
                                         r"'replace_tie_break'"):
        get_system("covington_nm")(labels=["a"], strategy="x")
    with pytest.raises(ValueError, match=r"System 'arc_eager' takes no option 'loss' \(in "
                                         r"system_options\); it takes no options\."):
        get_system("arc_eager")(labels=["a"], loss="upper")
    with pytest.raises(ValueError, match="Unknown oracle 'exploring'"):
        get_system("covington")(labels=["a"], oracle="exploring")
    with pytest.raises(ValueError, match="Unknown transition system 'nope'. Known transition "
                                         "systems: .*covington"):
        get_system("nope")


def test_component_passes_options_through():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("nonmono_parser", config={"system": "covington_nm",
                                                               "system_options": {"loss": "pc_upper"}})
    assert parser.moves.options["loss"] == "pc_upper" and parser.moves.oracle == "dynamic"
    with pytest.raises(ValueError, match="takes no option 'shift_prob'"):
        spacy.blank("en").add_pipe("nonmono_parser",
                                   config={"system_options": {"shift_prob": 0.3}})
    with pytest.raises(ValueError, match="Unknown decoder 'viterbi'. Known decoders: beam, "
                                         "global, greedy"):
        spacy.blank("en").add_pipe("nonmono_parser", config={"decoding": "viterbi"})
    assert get_decoder("greedy")().name == "greedy"


def test_invalid_moves_cost_invalid():
    system = get_system("covington")(labels=["a"])
    state = system.new_state([0], [0])     # focus (0, 1): Left-Arc from the root is invalid
    costs = state.costs()
    assert [costs[m] for m in range(system.n_moves) if m not in state.valid_moves()] == [INVALID]


# -- the step model: one scoring path --------------------------------------------


@pytest.fixture(scope="module")
def small_model():
    from thinc.api import fix_random_seed

    fix_random_seed(0)     # the same weights whatever ran before
    nlp = make_nlp()
    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=8)]
    nlp.initialize(lambda: examples)
    model = nlp.get_pipe("nonmono_parser").model
    # Non-zero output weights, so every parameter matters for the scores.
    step = model.get_ref("step")
    rng = numpy.random.default_rng(1)
    for name in ("W", "b", "hidden_b"):
        value = step.get_param(name)
        step.set_param(name, rng.normal(size=value.shape).astype("f"))
    return model, [eg.predicted for eg in examples[:3]]


def numpy_scores(step, table, ids):
    """The step model's arithmetic in numpy: the reference for the C routine."""
    nF = ids.shape[1]
    unmaxed = step.get_param("hidden_b") + table[ids + 1, numpy.arange(nF)].sum(axis=1)
    hidden = unmaxed.max(axis=-1)
    return hidden @ step.get_param("W").T + step.get_param("b")


def random_ids(rng, table, n):
    return rng.integers(-1, table.shape[0] - 1, size=(n, table.shape[1])).astype("int32")


def test_c_scores_equal_numpy_scores(small_model):
    model, docs = small_model
    step = model.get_ref("step")
    table = model.predict(docs)
    ids = random_ids(numpy.random.default_rng(0), table, 50)
    scores = step.predict((table, ids))
    numpy.testing.assert_allclose(scores, numpy_scores(step, table, ids), rtol=1e-5, atol=1e-5)


def test_gradients_match_finite_differences(small_model):
    """d(sum(scores * R))/d(parameter) from the backward passes (step model,
    then the table and root through the parser model) against central
    differences, for sampled entries of every parameter of the step model,
    the token table and the root vector."""
    model, docs = small_model
    step, table_layer = model.get_ref("step"), model.get_ref("table")
    set_dropout_rate(model, 0.0)
    rng = numpy.random.default_rng(2)
    ids = random_ids(rng, model.predict(docs), 40)
    R = rng.normal(size=(40, step.get_dim("nO"))).astype("f")
    eps = 1e-2

    def objective():
        table = model.predict(docs)
        return float((step.predict((table, ids)) * R).sum())

    for layer in (model, step, table_layer):
        for name in layer.param_names:
            layer.set_grad(name, numpy.zeros_like(layer.get_param(name)))
    table, backprop_table = model.begin_update(docs)
    scores, backprop_step = step.begin_update((table, ids))
    backprop_table(TableGrad.concat([backprop_step(R)]))
    base = objective()
    for layer, name in [(step, "W"), (step, "b"), (step, "hidden_b"), (table_layer, "W"),
                        (table_layer, "pad"), (model, "root")]:
        param = layer.get_param(name)
        grad = layer.get_grad(name)
        checked = 0
        for flat in rng.permutation(param.size)[:40]:
            index = numpy.unravel_index(flat, param.shape)
            original = float(param[index])
            values = []
            for delta in (eps, -eps):
                param[index] = original + delta
                layer.set_param(name, param)
                values.append(objective())
            param[index] = original
            layer.set_param(name, param)
            forward, backward = (values[0] - base) / eps, (base - values[1]) / eps
            if abs(forward - backward) > 0.01 * max(1.0, abs(forward)):
                # A maxout kink on one side within eps: the gradient is the
                # slope of the other (smooth) side.
                if abs(forward - backward) > 0.5 * max(1.0, abs(forward)):
                    continue    # kinks on both sides: nothing to compare
                assert min(abs(grad[index] - forward), abs(grad[index] - backward)) <= \
                    2e-2 * max(1.0, abs(forward)), (name, index, forward, backward)
            else:
                assert grad[index] == pytest.approx((forward + backward) / 2, rel=2e-2,
                                                    abs=2e-2), (name, index)
            checked += 1
            if checked == 6:
                break
        assert checked >= min(6, param.size), name


def test_vector_dropout_masks_the_token_vectors_and_their_gradient(monkeypatch):
    """The greedy model's `dropout` (as the global model's): in training the
    token table is that of the masked token vectors, and the gradient sent
    back to the tok2vec is masked the same way; predicting uses no mask."""
    from spacy.util import registry
    from thinc.api import Model, fix_random_seed

    from conftest import SMALL_MODEL
    from spacy_nonmono.models.parser_model import set_transition_dims

    received = []

    def recording(inner):
        """`inner`, keeping the gradient it is sent."""
        def forward(model, docs, is_train):
            Ys, backprop = inner(docs, is_train)

            def record(dYs):
                received.append(numpy.concatenate(dYs))
                return backprop(dYs)
            return Ys, record
        return Model("recording", forward, layers=[inner], dims={"nO": inner.get_dim("nO")},
                     init=lambda model, X=None, Y=None: inner.initialize(X=X))

    with pytest.raises(ValueError, match="dropout must be in"):
        registry.resolve({"m": {**SMALL_MODEL, "dropout": 1.0}})
    fix_random_seed(0)
    tok2vec = recording(registry.resolve({"t": SMALL_MODEL["tok2vec"]})["t"])
    model = registry.get("architectures", "spacy_nonmono.NonMonoParserModel.v1")(
        tok2vec, hidden_width=8, maxout_pieces=2, dropout=0.5)
    set_transition_dims(model, 3, 5)
    set_dropout_rate(model, 0.0)    # the tok2vec's own dropout off; the model's is fixed
    docs = [d for d in sample_docs("train", limit=2)]
    model.initialize(X=docs)
    predicted = model.predict(docs)
    numpy.testing.assert_array_equal(predicted, model.predict(docs))
    assert not numpy.allclose(predicted, model.begin_update(docs)[0])
    n_tokens = sum(len(d) for d in docs)
    mask = numpy.random.default_rng(0).choice([0.0, 2.0], size=(n_tokens, 32)).astype("f")
    ones = numpy.ones_like(mask)
    rng = numpy.random.default_rng(1)
    grad = TableGrad(rng.integers(-1, n_tokens + 1, size=(20, 3)).astype("int32"),
                     rng.normal(size=(20, 8, 2)).astype("f"))
    tokvecs = numpy.concatenate(tok2vec.predict(docs))
    table_layer = model.get_ref("table")
    original = model.ops.get_dropout_mask    # the tok2vec's layers ask for rate-0 masks
    for M in (mask, ones):
        monkeypatch.setattr(model.ops, "get_dropout_mask",
                            lambda shape, rate, M=M: M if rate == 0.5 else original(shape, rate))
        table, backprop = model.begin_update(docs)
        X = numpy.vstack((tokvecs * M, model.get_param("root")))
        numpy.testing.assert_allclose(table, table_layer.predict(X), rtol=1e-5, atol=1e-5)
        backprop(grad)
    masked, unmasked = received
    assert (masked[mask == 0] == 0).all() and (unmasked != 0).any()
    numpy.testing.assert_allclose(masked, unmasked * mask, rtol=1e-5, atol=1e-6)


# -- a new system: one module plus a registry entry ------------------------------


@pytest.fixture(scope="module")
def toy_system(tmp_path_factory):
    """Compile tests/toy_system/toy_arc_standard.pyx (pyximport) and register it."""
    pytest.importorskip("Cython")
    import pyximport

    build_dir = tmp_path_factory.mktemp("toy_build")
    sys.path.insert(0, str(TOY_DIR))
    importer = pyximport.install(build_dir=str(build_dir), language_level=3,
                                 setup_args={"include_dirs": [numpy.get_include()]})
    try:
        import toy_arc_standard
    finally:
        pyximport.uninstall(*importer)
        sys.path.remove(str(TOY_DIR))
    systems.register("toy_arc_standard", func=toy_arc_standard.ToyArcStandard)
    return toy_arc_standard.ToyArcStandard


def test_toy_static_oracle_rebuilds_projective_trees(toy_system):
    labels = ["a", "b", "c"]
    system = toy_system(labels=labels)
    assert system.move_names == ["S", "L-a", "L-b", "L-c", "R-a", "R-b", "R-c"]
    rng = numpy.random.default_rng(0)
    rebuilt = 0
    for _ in range(300):
        n = int(rng.integers(1, 9))
        heads = [0] * n
        order = rng.permutation(n) + 1
        for k, word in enumerate(order[1:], start=1):
            heads[word - 1] = int(order[rng.integers(0, k)])
        gold_labels = [int(x) for x in rng.integers(0, 3, size=n)]
        if not is_projective(heads):
            continue
        state = system.new_state(heads, gold_labels)
        for _ in range(2 * n):
            state.apply(state.static_move())
        assert state.is_final() and (state.heads, state.labels) == (heads, gold_labels)
        rebuilt += 1
    assert rebuilt > 50


def test_toy_system_trains_and_parses_through_the_component(toy_system, tmp_path):
    docs = sample_docs("train", limit=40)
    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d) for d in docs]
    nlp = make_nlp(system="toy_arc_standard")
    assert nlp.get_pipe("nonmono_parser").moves.oracle == "static"
    history = train(nlp, examples, epochs=4)
    assert history[-1] < history[0]
    texts = ["She gave the book to her brother yesterday .", "Hello", ""]
    parsed = [nlp(text) for text in texts]
    assert all(tree_ok(doc) for doc in parsed if len(doc))
    nlp.to_disk(tmp_path / "toy")
    reloaded = spacy.load(tmp_path / "toy")
    for text, doc in zip(texts, parsed):
        again = reloaded(text)
        assert [(t.head.i, t.dep_) for t in again] == [(t.head.i, t.dep_) for t in doc]


def test_exploration_follows_the_training_seed():
    """The generator that picks between the predicted and the oracle's move
    (follow_oracle_prob) is seeded at initialization from numpy's, which
    `spacy train` seeds from [system] seed."""
    from thinc.api import fix_random_seed

    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=8)]
    draws = []
    for seed in (1, 1, 2):
        nlp = make_nlp()
        fix_random_seed(seed)
        nlp.initialize(lambda: examples)
        draws.append(nlp.get_pipe("nonmono_parser")._rng.random(3).tolist())
    assert draws[0] == draws[1] != draws[2]


def test_choose_moves_matches_numpy_reference():
    """The decoder's C choice of moves against the same rule in numpy:
    argmax over valid moves, or over valid moves of least cost when the
    state follows the oracle (ties to the lower id)."""
    from spacy_nonmono.decoders.state_batch import choose_moves

    rng = numpy.random.default_rng(4)
    for _ in range(50):
        n, n_moves = int(rng.integers(1, 20)), int(rng.integers(2, 9))
        scores = rng.integers(-3, 3, size=(n, n_moves)).astype("f")     # ties on purpose
        costs = rng.choice([0.0, 0.75, 1.0, 2.0], size=(n, n_moves)).astype("f")
        valid = (rng.random((n, n_moves)) < 0.7).astype("int32")
        valid[:, 0] = 1
        draws = rng.random(n)
        follow_prob = float(rng.choice([0.0, 0.3, 1.0]))
        invalid = valid == 0
        predicted = numpy.where(invalid, -numpy.inf, scores).argmax(axis=1)
        least = numpy.where(invalid, numpy.inf, costs).min(axis=1, keepdims=True)
        oracle = numpy.where((costs <= least) & ~invalid, scores, -numpy.inf).argmax(axis=1)
        expected = numpy.where((draws < follow_prob) | (follow_prob >= 1.0), oracle, predicted)
        assert choose_moves(scores, costs, valid, draws, follow_prob).tolist() == expected.tolist()
        # A chosen least-cost move (one the mask `replaceable` allows, if
        # given) gives way to the best-scoring weaker target (cost within one
        # of the least) when the weak draw is below weak_prob.
        weak_draws, weak_prob = rng.random(n), float(rng.choice([0.0, 0.5, 1.0]))
        replaceable = (None if rng.random() < 0.5
                       else (rng.random(n_moves) < 0.5).astype("int32"))
        is_weak = (costs > least) & (costs < least + 1) & ~invalid
        weak = numpy.where(is_weak, scores, -numpy.inf).argmax(axis=1)
        chosen_is_least = costs[numpy.arange(n), expected] <= least[:, 0]
        allowed = (numpy.ones(n, dtype=bool) if replaceable is None
                   else replaceable[expected].astype(bool))
        switch = ((weak_prob > 0) & is_weak.any(axis=1) & chosen_is_least & allowed
                  & (weak_draws < weak_prob))
        expected = numpy.where(switch, weak, expected)
        got = choose_moves(scores, costs, valid, draws, follow_prob, weak_draws, weak_prob,
                           replaceable)
        assert got.tolist() == expected.tolist()
