"""spacy_nonmono.BiLSTMEncoder.v1: a bidirectional thinc LSTM over a spaCy
tok2vec, as the tok2vec of spaCy's `parser` and of our `nonmono_parser`.

The LSTM's gradients are checked against finite differences (thinc's own
backward pass is wrong; encoders.py says how). The fresh-process checks find
the architecture through the `spacy_architectures` entry point exactly as
setup.cfg declares it: a dist-info holding setup.cfg's entry points is put on
the subprocess's path, so they test the committed setup.cfg whether or not
the installed copy's metadata has been refreshed since (`pip install -e .`).
"""
import configparser
import json
import os
import subprocess
import sys

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import Adam, NumpyOps, set_dropout_rate

from conftest import ROOT, sample_docs, tree_ok
from spacy_nonmono.models.encoders import (
    BiLSTM, BiLSTMEncoder, _layer_params, _Steps, lstm_backward, lstm_forward,
)

ARCH = "spacy_nonmono.BiLSTMEncoder.v1"


def cnn(width=16, depth=1):
    """A small HashEmbedCNN: with window 1 and depth d a token sees d
    neighbours on each side, no further."""
    return {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": width,
        "depth": depth,
        "embed_size": 300,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": True,
    }


def bilstm(width=16, depth=1, inner=None):
    return {"@architectures": ARCH, "width": width, "depth": depth, "dropout": 0.0,
            "tok2vec": inner or cnn()}


def build(config):
    return spacy.registry.resolve({"m": config})["m"]


def docs_of(nlp, *texts):
    return [Doc(nlp.vocab, words=t.split()) if t else Doc(nlp.vocab, words=[]) for t in texts]


# -- the layer --------------------------------------------------------------------


def test_registered_and_sized():
    model = build(bilstm(width=24, depth=2))
    assert model.get_dim("nO") == 24
    assert spacy.registry.architectures.get(ARCH) is BiLSTMEncoder


@pytest.mark.parametrize("width,depth,dropout,match", [
    (15, 1, 0.0, "width must be a positive even integer"),
    (0, 1, 0.0, "width must be a positive even integer"),
    (16, 0, 0.0, "depth must be an integer >= 1"),
    (16, 1, 1.0, r"dropout must be in \[0, 1\)"),
])
def test_bad_settings_are_clear_errors(width, depth, dropout, match):
    config = bilstm(width=width, depth=depth)
    config["dropout"] = dropout
    with pytest.raises(ValueError, match=match):
        build(config)


@pytest.mark.parametrize("depth", [1, 2])
def test_shapes_and_empty_docs(depth):
    nlp = spacy.blank("en")
    model = build(bilstm(width=12, depth=depth))
    docs = docs_of(nlp, "a b c d e f g", "", "x")
    model.initialize(X=docs)
    for batch in (docs, docs[1:2], docs[::-1]):
        for Ys in (model.predict(batch), model.begin_update(batch)[0]):
            assert [Y.shape for Y in Ys] == [(len(d), 12) for d in batch]
    # No docs at all: spaCy's HashEmbedCNN fails on that, the LSTM does not.
    assert model.get_ref("bilstm").predict([]) == []
    Ys, _ = model.begin_update(docs_of(nlp, "", ""))
    assert [Y.shape for Y in Ys] == [(0, 12), (0, 12)]
    # Backprop through only empty docs: the LSTM passes (0, nI) gradients on
    # (spaCy's HashEmbedCNN itself fails on a batch without tokens).
    lstm = model.get_ref("bilstm")
    nI = lstm.get_dim("nI")
    Ys, backprop = lstm.begin_update([numpy.zeros((0, nI), dtype="f")] * 2)
    assert [dX.shape for dX in backprop(Ys)] == [(0, nI), (0, nI)]


def test_each_doc_is_its_own_sequence():
    nlp = spacy.blank("en")
    model = build(bilstm(width=8, depth=2))
    doc, other = docs_of(nlp, "the cat sat on the mat", "a much longer doc than the first one here")
    model.initialize(X=[doc, other])
    alone = model.predict([doc])[0]
    for batch in ([doc, other], [other, doc]):
        Ys = model.predict(batch)
        numpy.testing.assert_allclose(Ys[batch.index(doc)], alone, atol=1e-6)


@pytest.mark.parametrize("depth", [1, 2])
def test_bidirectional(depth):
    nlp = spacy.blank("en")
    model = build(bilstm(width=16, depth=depth, inner=cnn(depth=1)))
    words = "one two three four five six seven".split()
    variants = [words, ["changed"] + words[1:], words[:-1] + ["changed"]]
    docs = [Doc(nlp.vocab, words=w) for w in variants]
    model.initialize(X=docs)
    mid = len(words) // 2
    t2v = model.get_ref("tok2vec").predict(docs)
    out = model.predict(docs)
    for changed in (1, 2):
        # The CNN alone does not see three tokens away...
        numpy.testing.assert_array_equal(t2v[changed][mid], t2v[0][mid])
        # ...the LSTM sees both ends: the left one (forward direction) and the
        # right one (backward direction).
        assert not numpy.allclose(out[changed][mid], out[0][mid], atol=1e-6)
    half = 8
    # Changing the first word moves the forward half, changing the last word
    # the backward half; neither moves the other direction's half at mid
    # in the first layer.
    if depth == 1:
        numpy.testing.assert_array_equal(out[1][mid][half:], out[0][mid][half:])
        numpy.testing.assert_array_equal(out[2][mid][:half], out[0][mid][:half])


def test_gradients_reach_the_tok2vec():
    nlp = spacy.blank("en")
    model = build(bilstm(width=16, depth=2))
    set_dropout_rate(model, 0.0)
    docs = docs_of(nlp, "the cat sat on the mat", "", "dogs bark")
    model.initialize(X=docs)
    tok2vec = model.get_ref("tok2vec")
    before = {(n.id, name): n.get_param(name).copy()
              for n in model.walk() for name in n.param_names if n.has_param(name)}
    Ys, backprop = model.begin_update(docs)
    rng = numpy.random.default_rng(0)
    backprop([rng.normal(size=Y.shape).astype("f") for Y in Ys])
    model.finish_update(Adam(0.01))
    changed = {(n.id, name) for n in model.walk() for name in n.param_names
               if (n.id, name) in before and not numpy.array_equal(before[n.id, name], n.get_param(name))}
    t2v_ids = {n.id for n in tok2vec.walk()}
    assert any(node_id in t2v_ids for node_id, _ in changed)
    assert (model.get_ref("bilstm").id, "LSTM") in changed


def test_lstm_dropout_is_the_configs():
    nlp = spacy.blank("en")
    config = bilstm(width=8)
    config["dropout"] = 0.5
    model = build(config)
    docs = docs_of(nlp, "a b c d")
    model.initialize(X=docs)
    set_dropout_rate(model, 0.0)   # what nlp.update(drop=0.0) does
    assert model.get_ref("bilstm").attrs["lstm_dropout"] == 0.5
    numpy.random.seed(0)
    trained = model.begin_update(docs)[0][0]
    assert not numpy.allclose(trained, model.predict(docs)[0])


# -- the LSTM's arithmetic ------------------------------------------------------------


def packed_case(lengths, nI=5, width=6, depth=2, seed=1):
    ops = NumpyOps()
    rng = numpy.random.default_rng(seed)
    layer = BiLSTM(width, depth=depth, nI=nI)
    layer.initialize()
    params = layer.get_param("LSTM") + rng.normal(scale=0.3, size=layer.get_param("LSTM").shape)
    H0, C0 = layer.get_param("HC0")
    steps = _Steps.from_lengths(list(lengths), ops)
    X = rng.normal(size=(sum(lengths), nI)).astype("f")[steps.rows]
    size_at_t = ops.asarray1i(steps.sizes)
    return ops, params.astype("f"), H0, C0, X, size_at_t, steps, rng


def kernel_forward(ops, params, H0, C0, X, size_at_t):
    """thinc's compiled CPU forward pass, its gates brought to our layout
    (gate blocks instead of gates interleaved per unit). Its argument order is
    (c_init, h_init), whatever the method's names say."""
    H, (Y, G, C, X0) = ops.lstm_forward_training(params, C0, H0, X, size_at_t)
    depth, dirs, N, nO = Y.shape
    G = G.reshape((depth, dirs, N, nO, 4)).transpose((0, 1, 2, 4, 3)).reshape((depth, dirs, N, 4 * nO))
    return H, (Y, G, C, X0)


@pytest.mark.parametrize("depth,lengths", [(1, (3,)), (2, (5, 3, 3, 1)), (2, (2, 5, 1, 3)), (3, (4, 2))])
def test_forward_matches_thincs_kernel(depth, lengths):
    ops, params, H0, C0, X, size_at_t, steps, _ = packed_case(lengths, depth=depth)
    H_kernel, state_kernel = kernel_forward(ops, params, H0, C0, X, size_at_t)
    H_ours, state_ours = lstm_forward(params, H0, C0, X, steps)
    numpy.testing.assert_allclose(H_ours, H_kernel, atol=1e-6)
    for ours, kernel in zip(state_ours, state_kernel):
        numpy.testing.assert_allclose(ours, kernel, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=7), depth=st.integers(1, 2),
       width=st.sampled_from([6, 34]), scale=st.sampled_from([0.3, 3.0]),
       seed=st.integers(0, 2**16))
def test_c_steps_match_the_array_steps(lengths, depth, width, scale, seed):
    """The C recurrence (float32: models/lstm_steps.pyx) against the array
    version in float64, with initial states that are not zero (the rows that
    start a sequence mid-step read them) and pre-activations up to
    saturation (scale 3); widths of 3 and 17 units a direction, which the
    vector loops do not divide."""
    ops, params, H0, C0, X, _, steps, rng = packed_case(tuple(lengths), width=width,
                                                        depth=depth, seed=seed)
    params = (params * scale).astype("f")
    H0 = rng.normal(size=H0.shape).astype("f")
    C0 = rng.normal(size=C0.shape).astype("f")
    H_c, state_c = lstm_forward(params, H0, C0, X, steps)
    H_array, state_array = lstm_forward(*(a.astype("d") for a in (params, H0, C0, X)), steps)
    assert H_c.dtype == numpy.float32
    # float32 rounding grows with the pre-activations.
    atol = 2e-5 if scale < 1 else 2e-4
    numpy.testing.assert_allclose(H_c, H_array, atol=atol)
    for c, array in zip(state_c, state_array):
        numpy.testing.assert_allclose(c, array, atol=atol, rtol=1e-5)


def test_c_steps_saturate_without_overflow():
    """Pre-activations far past exp's float32 range (+-1e4) give the
    saturated gates, as the array version does, not inf or nan."""
    _, params, H0, C0, X, _, steps, _ = packed_case((5, 3, 3), width=8, depth=2)
    X = (X * 1e4).astype("f")
    H_c, (_, G_c, C_c, _) = lstm_forward(params, H0, C0, X, steps)
    H_array, (_, G_array, C_array, _) = lstm_forward(*(a.astype("d") for a in (params, H0, C0, X)),
                                                     steps)
    assert numpy.isfinite(H_c).all() and numpy.isfinite(G_c).all()
    numpy.testing.assert_allclose(G_c, G_array, atol=1e-5)
    numpy.testing.assert_allclose(H_c, H_array, atol=1e-5)


@pytest.mark.parametrize("depth,lengths", [(1, (3,)), (2, (5, 3, 3, 1))])
def test_backward_matches_finite_differences(depth, lengths):
    _, params, H0, C0, X, _, steps, rng = packed_case(lengths, nI=3, width=4, depth=depth)
    P, X64, h0, c0 = (a.astype("d") for a in (params, X, H0, C0))
    dH = rng.normal(size=(X.shape[0], 4))

    def loss(P, X):
        return float((lstm_forward(P, h0, c0, X, steps)[0] * dH).sum())

    dX, dP = lstm_backward(dH, P, h0, c0, lstm_forward(P, h0, c0, X64, steps)[1], steps)
    assert_finite_differences(((X64, dX, lambda a: loss(P, a)), (P, dP, lambda a: loss(a, X64))))


def assert_finite_differences(cases, eps=1e-6, atol=1e-7):
    """Each (array, its gradient, the loss as a function of the array)."""
    for array, grad, f in cases:
        numeric = numpy.zeros_like(array)
        for idx in numpy.ndindex(array.shape):
            up, down = array.copy(), array.copy()
            up[idx] += eps
            down[idx] -= eps
            numeric[idx] = (f(up) - f(down)) / (2 * eps)
        numpy.testing.assert_allclose(grad, numeric, atol=atol)


def test_layer_gradients_with_empty_sequences():
    """The list-level layer (empty docs set aside, batch packing) against
    finite differences, in float32."""
    layer = BiLSTM(6, depth=2, nI=4)
    rng = numpy.random.default_rng(0)
    Xs = [rng.normal(size=(n, 4)).astype("f") for n in (3, 0, 2, 1)]
    layer.initialize(X=Xs)
    Ys, backprop = layer.begin_update(Xs)
    dYs = [rng.normal(size=Y.shape) for Y in Ys]
    dXs = backprop([d.astype("f") for d in dYs])
    assert [d.shape for d in dXs] == [X.shape for X in Xs]

    def loss(Xs):
        return sum(float((Y.astype("d") * d).sum()) for Y, d in zip(layer.predict(Xs), dYs))

    eps = 1e-2
    for i, X in enumerate(Xs):
        for idx in numpy.ndindex(X.shape):
            up, down = [x.copy() for x in Xs], [x.copy() for x in Xs]
            up[i][idx] += eps
            down[i][idx] -= eps
            assert abs((loss(up) - loss(down)) / (2 * eps) - dXs[i][idx]) < 1e-3
    params, grad = layer.get_param("LSTM"), layer.get_grad("LSTM")
    for k in rng.choice(params.size, 40, replace=False):
        saved = params[k]
        params[k] = saved + eps
        up = loss(Xs)
        params[k] = saved - eps
        down = loss(Xs)
        params[k] = saved
        assert abs((up - down) / (2 * eps) - grad[k]) < 1e-3


def one_sequence_lstm(params, H0, C0, X, h_mask):
    """A plain loop over one sequence, both directions, each layer: the
    reference for the recurrent dropout (h_mask: (depth, dirs, nO), the
    sequence's own masks on the previous hidden state)."""
    depth, dirs, nO = H0.shape
    inputs, outs = X, []
    for i, d, _, _, Wx, Wh, bias in _layer_params(params, depth, dirs, nO, X.shape[1]):
        h, c = H0[i, d], C0[i, d]
        out = numpy.zeros((len(inputs), nO))
        for t in (range(len(inputs)) if d == 0 else reversed(range(len(inputs)))):
            g = Wx @ inputs[t] + Wh @ (h * h_mask[i, d]) + bias
            f, inp, o = (1 / (1 + numpy.exp(-g[k * nO : (k + 1) * nO])) for k in range(3))
            c = f * c + inp * numpy.tanh(g[3 * nO :])
            h = o * numpy.tanh(c)
            out[t] = h
        outs.append(out)
        if d == dirs - 1:
            inputs, outs = numpy.concatenate(outs, axis=1), []
    return inputs


def test_recurrent_dropout_masks_each_sequences_hidden_state():
    """One mask per sequence, layer and direction, on the previous hidden
    state: the packed batch gives what each sequence gives alone with its
    own mask (the masks' rows are the sequences in packed order, longest
    first)."""
    lengths = [2, 5, 1, 3]
    ops, params, H0, C0, X, _, steps, rng = packed_case(lengths, nI=3, width=4, depth=2)
    P, X64, h0, c0 = (a.astype("d") for a in (params, X, H0, C0))
    h_masks = rng.choice([0.0, 2.0], size=(2, 2, len(lengths), 2))
    H, _ = lstm_forward(P, h0, c0, X64, steps, h_masks=h_masks)
    by_row = numpy.zeros_like(H)
    by_row[steps.rows] = H
    X_rows = numpy.zeros_like(X64)
    X_rows[steps.rows] = X64
    order = numpy.argsort(-numpy.asarray(lengths), kind="stable")
    starts = numpy.concatenate(([0], numpy.cumsum(lengths)[:-1]))
    for packed, j in enumerate(order):
        rows = slice(starts[j], starts[j] + lengths[j])
        alone = one_sequence_lstm(P, h0, c0, X_rows[rows], h_masks[:, :, packed])
        numpy.testing.assert_allclose(by_row[rows], alone, atol=1e-10)
    # Masks that keep every unit change nothing.
    kept, _ = lstm_forward(P, h0, c0, X64, steps, h_masks=numpy.ones_like(h_masks))
    numpy.testing.assert_allclose(kept, lstm_forward(P, h0, c0, X64, steps)[0], atol=1e-12)


def test_recurrent_dropout_backward_matches_finite_differences():
    _, params, H0, C0, X, _, steps, rng = packed_case((4, 3, 1), nI=3, width=4, depth=2)
    P, X64, h0, c0 = (a.astype("d") for a in (params, X, H0, C0))
    h_masks = rng.choice([0.0, 2.0], size=(2, 2, 3, 2))
    masks = [rng.choice([0.0, 1.5], size=(X.shape[0], 3)), rng.choice([0.0, 1.5], size=(X.shape[0], 4))]
    dH = rng.normal(size=(X.shape[0], 4))

    def loss(P, X):
        return float((lstm_forward(P, h0, c0, X, steps, masks, h_masks)[0] * dH).sum())

    state = lstm_forward(P, h0, c0, X64, steps, masks, h_masks)[1]
    dX, dP = lstm_backward(dH, P, h0, c0, state, steps, masks, h_masks)
    assert_finite_differences(((X64, dX, lambda a: loss(P, a)), (P, dP, lambda a: loss(a, X64))))


def test_recurrent_dropout_is_the_configs_and_training_only():
    nlp = spacy.blank("en")
    config = bilstm(width=8, depth=2)
    config["recurrent_dropout"] = 0.5
    model = build(config)
    docs = docs_of(nlp, "a b c d", "e f", "")
    model.initialize(X=docs)
    set_dropout_rate(model, 0.0)
    assert model.get_ref("bilstm").attrs["recurrent_dropout"] == 0.5
    numpy.random.seed(0)
    trained, backprop = model.begin_update(docs)
    assert not numpy.allclose(trained[0], model.predict(docs)[0])
    assert [Y.shape for Y in trained] == [(4, 8), (2, 8), (0, 8)]
    backprop([numpy.ones_like(Y) for Y in trained])
    config["recurrent_dropout"] = 1.0
    with pytest.raises(ValueError, match=r"recurrent_dropout must be in \[0, 1\)"):
        build(config)


@pytest.mark.xfail(strict=True, reason="thinc's NumpyOps.backprop_lstm gives wrong gradients; "
                                        "when this passes, thinc has been fixed")
def test_thincs_own_backward():
    ops, params, H0, C0, X, size_at_t, steps, rng = packed_case((3, 2), depth=1)
    dH = rng.normal(size=(X.shape[0], 6)).astype("f")
    _, state = ops.lstm_forward_training(params, C0, H0, X, size_at_t)
    dX_thinc, dP_thinc = ops.backprop_lstm(dH, size_at_t, params, state)
    dX, dP = lstm_backward(dH, params, H0, C0, lstm_forward(params, H0, C0, X, steps)[1], steps)
    numpy.testing.assert_allclose(dX_thinc, dX, atol=1e-3)
    # thinc gives bh no gradient (the whole bias gradient goes to bx).
    nO, nI = 3, X.shape[1]
    for offset in (0, dP.size // 2):
        bh = offset + 4 * nO * nI + 4 * nO + 4 * nO * nO
        dP[bh : bh + 4 * nO] = 0
    numpy.testing.assert_allclose(dP_thinc, dP, atol=1e-3)


# -- in pipelines ----------------------------------------------------------------------

SPACY_PARSER = {"model": {
    "@architectures": "spacy.TransitionBasedParser.v2",
    "state_type": "parser",
    "extra_state_tokens": False,
    "hidden_width": 32,
    "maxout_pieces": 2,
    "use_upper": True,
    "nO": None,
    "tok2vec": bilstm(width=32, depth=2, inner=cnn(width=32, depth=2)),
}}
NONMONO_PARSER = {"model": {
    "@architectures": "spacy_nonmono.NonMonoParserModel.v1",
    "hidden_width": 32,
    "maxout_pieces": 2,
    "tok2vec": bilstm(width=32, depth=2, inner=cnn(width=32, depth=2)),
}}


def examples_for(nlp, limit):
    """Gold sample sentences in the pipeline's vocab (spaCy's parser reads
    the gold labels' strings from its own string store)."""
    gold = DocBin(docs=sample_docs("train", limit=limit)).get_docs(nlp.vocab)
    return [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in gold]


def train_pipeline(name, config, n_updates=6):
    nlp = spacy.blank("en")
    examples = examples_for(nlp, 24)
    nlp.add_pipe(name, config=config)
    optimizer = nlp.initialize(lambda: examples)
    losses = {}
    for k in range(n_updates):
        batch = examples[(k * 8) % len(examples):][:8]
        nlp.update(batch, sgd=optimizer, losses=losses)
    assert losses[name] > 0
    return nlp


def arcs(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


def dev_words():
    return [[t.text for t in d] for d in sample_docs("dev", limit=12)] + [[], ["Hello"]]


@pytest.fixture(scope="module")
def saved_pipelines(tmp_path_factory):
    """Both parsers with the BiLSTM encoder, trained a little, saved, with
    their parses of a few dev sentences (and an empty doc)."""
    out = {}
    for name, config in (("parser", SPACY_PARSER), ("nonmono_parser", NONMONO_PARSER)):
        nlp = train_pipeline(name, config)
        path = tmp_path_factory.mktemp(name) / "model"
        nlp.to_disk(path)
        parses = arcs(nlp.pipe(Doc(nlp.vocab, words=w) for w in dev_words()))
        out[name] = (nlp, path, parses)
    return out


@pytest.mark.parametrize("name", ["parser", "nonmono_parser"])
def test_pipeline_round_trip(saved_pipelines, name):
    nlp, path, parses = saved_pipelines[name]
    assert ARCH in nlp.config.to_str()
    for doc, words in zip(nlp.pipe(Doc(nlp.vocab, words=w) for w in dev_words()), dev_words()):
        if words:
            assert tree_ok(doc)
    loaded = spacy.load(path)
    assert arcs(loaded.pipe(Doc(loaded.vocab, words=w) for w in dev_words())) == parses


def entry_point_env(tmp_path):
    """An environment whose Python finds the entry points that setup.cfg
    declares (through a dist-info written from it)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    groups = cfg["options.entry_points"]
    assert ARCH in groups["spacy_architectures"]
    site = tmp_path / "entry_points"
    dist = site / "spacy_nonmono_setup_cfg-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spacy-nonmono-setup-cfg\n"
                                   "Version: 0.0\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n{groups[group].strip()}\n\n"
        for group in ("spacy_factories", "spacy_architectures", "spacy_scorers")))
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1")


def test_load_in_a_fresh_process(saved_pipelines, tmp_path):
    code = (
        "import json, sys, spacy\n"
        "from spacy.tokens import Doc\n"
        "paths, words = json.loads(sys.argv[1]), json.loads(sys.argv[2])\n"
        "out = {}\n"
        "assert not any(m.startswith('spacy_nonmono') for m in sys.modules)\n"
        "for name, path in paths.items():\n"
        "    nlp = spacy.load(path)\n"
        "    docs = nlp.pipe(Doc(nlp.vocab, words=w) for w in words)\n"
        "    out[name] = [[(t.head.i, t.dep_) for t in d] for d in docs]\n"
        "print(json.dumps(out))\n"
    )
    # spaCy's parser first: nothing of ours is imported before its config
    # names the encoder.
    paths = {name: str(saved_pipelines[name][1]) for name in ("parser", "nonmono_parser")}
    result = subprocess.run(
        [sys.executable, "-c", code, json.dumps(paths), json.dumps(dev_words())],
        cwd=tmp_path, env=entry_point_env(tmp_path), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    parses = json.loads(result.stdout)
    for name in paths:
        assert [[tuple(a) for a in doc] for doc in parses[name]] == saved_pipelines[name][2]


BASE_CONFIG = """
[paths]
train = null
dev = null

[nlp]
lang = "en"
pipeline = ["tok2vec","parser","nonmono_parser"]

[components]

[components.parser]
factory = "parser"

[components.parser.model]
@architectures = "spacy.TransitionBasedParser.v2"
state_type = "parser"
hidden_width = 32

[components.parser.model.tok2vec]
@architectures = "spacy_nonmono.BiLSTMEncoder.v1"
width = 32

[components.parser.model.tok2vec.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 32
depth = 2
embed_size = 500
window_size = 1
maxout_pieces = 2
subword_features = true

[components.nonmono_parser]
factory = "nonmono_parser"

[components.nonmono_parser.model]
@architectures = "spacy_nonmono.NonMonoParserModel.v1"
hidden_width = 32

[components.nonmono_parser.model.tok2vec]
@architectures = "spacy_nonmono.BiLSTMEncoder.v1"
width = 32
depth = 1

[components.nonmono_parser.model.tok2vec.tok2vec]
@architectures = "spacy.Tok2VecListener.v1"
width = 32
upstream = "*"

[components.tok2vec]
factory = "tok2vec"

[components.tok2vec.model]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 32
depth = 1
embed_size = 500
window_size = 1
maxout_pieces = 2
subword_features = true
"""


def test_fill_config_and_debug_config(tmp_path):
    # spaCy's parser: BiLSTM over a CNN; ours: BiLSTM over a listener of a
    # shared tok2vec component; our defaults (depth, dropout) are filled in.
    (tmp_path / "base.cfg").write_text(BASE_CONFIG)
    env = entry_point_env(tmp_path)
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True)
    filled = subprocess.run([sys.executable, "-m", "spacy", "init", "fill-config", "base.cfg",
                             "filled.cfg"], **run)
    assert filled.returncode == 0, filled.stdout + filled.stderr
    config = spacy.util.load_config(tmp_path / "filled.cfg")
    assert config["components"]["parser"]["model"]["tok2vec"]["depth"] == 2      # default
    assert config["components"]["parser"]["model"]["tok2vec"]["dropout"] == 0.0  # default
    docs = sample_docs("train", limit=4)
    DocBin(docs=docs).to_disk(tmp_path / "train.spacy")
    checked = subprocess.run([sys.executable, "-m", "spacy", "debug", "config", "filled.cfg",
                              "--paths.train", "train.spacy", "--paths.dev", "train.spacy"],
                             **run)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_with_a_shared_tok2vec_component():
    """BiLSTM over a Tok2VecListener: the shared tok2vec gets gradients
    through the LSTM."""
    nlp = spacy.blank("en")
    examples = examples_for(nlp, 8)
    nlp.add_pipe("tok2vec", config={"model": cnn(width=16)})
    listener = {"@architectures": "spacy.Tok2VecListener.v1", "width": 16, "upstream": "*"}
    nlp.add_pipe("parser", config={"model": dict(SPACY_PARSER["model"],
                                                 tok2vec=bilstm(width=16, inner=listener))})
    optimizer = nlp.initialize(lambda: examples)
    t2v_model = nlp.get_pipe("tok2vec").model
    before = [n.get_param(p).copy() for n in t2v_model.walk() for p in n.param_names
              if n.has_param(p)]
    # Two updates: spaCy's parser starts its output layer at zero, so the
    # first update sends no gradient below it.
    for _ in range(2):
        nlp.update(examples, sgd=optimizer)
    after = [n.get_param(p) for n in t2v_model.walk() for p in n.param_names if n.has_param(p)]
    assert any(not numpy.array_equal(b, a) for b, a in zip(before, after))
    doc = nlp(Doc(nlp.vocab, words="The cat sat on the mat .".split()))
    assert tree_ok(doc)
