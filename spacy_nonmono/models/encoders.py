"""Encoders: a bidirectional LSTM on top of any spaCy tok2vec.

`spacy_nonmono.BiLSTMEncoder.v1` runs thinc's own `LSTM` (no PyTorch) over
the vectors of a tok2vec (any spaCy tok2vec layer, or a `Tok2VecListener` of
a shared `tok2vec` component). It maps a list of docs to one array per doc,
(len(doc), width), like any spaCy tok2vec, and sets its output dimension
`nO` at construction, so it serves as the `tok2vec` of spaCy's own `parser`
(`spacy.TransitionBasedParser.v2`) and of our `spacy_nonmono.NonMonoParserModel.v1`
alike: comparisons keep one encoder for every system.

Each doc is one sequence: the LSTM reads a doc's tokens in order, across its
sentence boundaries (the parsers call the model on whole docs). Empty docs
give (0, width) arrays and never reach the LSTM. With `sentences = true` each
sentence is one sequence instead; with `window = W`, a long doc is read in
pieces of W tokens, each with `overlap` tokens of context on either side
(read, then dropped), so that every token sees at least `overlap` tokens each
side and the pieces of a batch run side by side: a whole document of raw text
costs what its sentences would, rather than one step per token in one row.

An example block (here for spaCy's parser; for `nonmono_parser` the section
is `[components.nonmono_parser.model.tok2vec]`)::

    [components.parser.model.tok2vec]
    @architectures = "spacy_nonmono.BiLSTMEncoder.v1"
    width = 256
    depth = 2
    dropout = 0.0

    [components.parser.model.tok2vec.tok2vec]
    @architectures = "spacy.HashEmbedCNN.v2"
    pretrained_vectors = null
    width = 96
    depth = 4
    embed_size = 2000
    window_size = 1
    maxout_pieces = 3
    subword_features = true

With a shared `tok2vec` component, the inner block is instead::

    [components.parser.model.tok2vec.tok2vec]
    @architectures = "spacy.Tok2VecListener.v1"
    width = ${components.tok2vec.model.width}
    upstream = "tok2vec"

The LSTM is thinc's `LSTM(bi=True)` (no PyTorch): its parameters, their
layout and initialization, and its computation; `lstm_forward` gives what
thinc's compiled CPU kernel gives (checked in tests/test_encoders.py), faster:
on the CPU its time steps run in C (models/lstm_steps.pyx), elsewhere as
array operations that also run on CuPy. The
backward pass cannot be thinc's: `NumpyOps.backprop_lstm` (thinc 8.3) gives
wrong gradients -- its weight gradients start from the weights themselves
instead of zeros, the first time step of each direction gets no gate
gradient, and the hidden-to-hidden weight gradient pairs each step with its
own output instead of the previous one (the generic `Ops` version never
fills its gate gradients at all). `lstm_backward` is checked against finite
differences.

The architecture is found through the `spacy_architectures` entry point
(setup.cfg), so configs resolve it without importing this package.

Dropout, in training only: `dropout` is the LSTM's weight dropout (as
thinc's LSTM does: a mask over the weights, not the activations, like
AWD-LSTM's DropConnect), inside the recurrence; `recurrent_dropout` drops
units of the previous hidden state that each step reads, with one mask per
sequence, layer and direction (Gal & Ghahramani's variational dropout, what
the DyNet LSTMs of the MH4 paper's code apply at 0.3); `layer_dropout` drops
elements of each layer's input (the tok2vec's vectors, then the layer
below's outputs), between the layers. All are fixed by the config: the
`training.dropout` that spaCy sets on every layer during `nlp.update` applies
to the tok2vec underneath (its own dropout layers) but does not change the
LSTM's rates.
"""
from typing import Callable, List, NamedTuple, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, NumpyOps, chain, glorot_uniform_init, zero_init
from thinc.layers.lstm import init as thinc_lstm_init
from thinc.types import Floats1d, Floats2d

from .lstm_steps import lstm_steps

_HOST_OPS = NumpyOps()


@registry.architectures("spacy_nonmono.BiLSTMEncoder.v1")
def BiLSTMEncoder(
    tok2vec: Model[List[Doc], List[Floats2d]],
    width: int,
    depth: int = 2,
    dropout: float = 0.0,
    layer_dropout: float = 0.0,
    sentences: bool = False,
    recurrent_dropout: float = 0.0,
    window: int = 0,
    overlap: int = 0,
) -> Model[List[Doc], List[Floats2d]]:
    """A bidirectional LSTM over the vectors of `tok2vec`.

    tok2vec: any spaCy tok2vec layer or a Tok2VecListener (docs -> one
        (n_tokens, nO) array per doc).
    width: the output width, both directions concatenated: each direction
        has width // 2 units, so width must be a positive even number.
    depth: the number of stacked bidirectional layers (at least 1).
    dropout: the LSTM's weight dropout in training, in [0, 1).
    layer_dropout: dropout on each layer's input in training, in [0, 1).
    sentences: False: each doc is one sequence; True: each sentence of a doc
        whose sentence boundaries are set (gold, or a senter before the
        tok2vec) is one, so that a model trained on gold sentences reads the
        same contexts on raw text.
    recurrent_dropout: dropout on the previous hidden state each step reads,
        one mask per sequence, layer and direction, in training, in [0, 1).
    window: with sentences false, read a doc in pieces of this many tokens
        (0: the whole doc as one sequence), each with `overlap` tokens of
        context on either side.
    overlap: the context of a piece, in tokens on either side.
    """
    if window < 0 or overlap < 0 or (overlap and not window):
        raise ValueError(f"BiLSTMEncoder: window and overlap are token counts (overlap with a "
                         f"window only), not window={window}, overlap={overlap}")
    if window and sentences:
        raise ValueError("BiLSTMEncoder: a window reads whole docs in pieces; with "
                         "sentences = true each sentence is one sequence already")
    t2v_width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
    lstm = BiLSTM(width, depth=depth, dropout=dropout, nI=t2v_width, layer_dropout=layer_dropout,
                  recurrent_dropout=recurrent_dropout)
    if sentences or window:
        model = Model("bilstm_by_piece", _by_piece_forward, layers=[tok2vec, lstm],
                      init=_by_piece_init, dims={"nO": width},
                      attrs={"window": window, "overlap": overlap})
    else:
        model = chain(tok2vec, lstm)
    model.set_dim("nO", width)
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("bilstm", lstm)
    return model


def _by_piece_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    tok2vec, lstm = model.layers
    tok2vec.initialize(X=X)
    if tok2vec.has_dim("nO") and not lstm.has_dim("nI"):
        lstm.set_dim("nI", tok2vec.get_dim("nO"))
    lstm.initialize()


def doc_pieces(doc: Doc, window: int, overlap: int) -> List[Tuple[int, int, int, int]]:
    """The sequences the LSTM reads of a doc, as (start, end, kept_start,
    kept_end): what it reads, and the tokens whose outputs it gives. Without
    a window, each sentence (the whole doc where no boundaries are set);
    with one, pieces of `window` tokens with `overlap` tokens of context."""
    n = len(doc)
    if not window:
        if n and doc.has_annotation("SENT_START"):
            return [(s.start, s.end, s.start, s.end) for s in doc.sents]
        return [(0, n, 0, n)]
    return [(max(0, a - overlap), min(n, a + window + overlap), a, min(n, a + window))
            for a in range(0, n, window)] or [(0, 0, 0, 0)]


def _by_piece_forward(model: Model, docs: List[Doc], is_train: bool):
    """The LSTM over the pieces of each doc (`doc_pieces`), read side by
    side; each token's output from the piece that keeps it."""
    tok2vec, lstm = model.layers
    window, overlap = model.attrs["window"], model.attrs["overlap"]
    vectors, backprop_tok2vec = tok2vec(docs, is_train)
    pieces = [doc_pieces(doc, window, overlap) for doc in docs]
    outputs, backprop_lstm = lstm([X[start:end] for X, doc_pieces_ in zip(vectors, pieces)
                                   for start, end, _, _ in doc_pieces_], is_train)
    xp = model.ops.xp
    Ys, at = [], 0
    for doc_pieces_ in pieces:
        Ys.append(xp.concatenate([outputs[at + k][a - start:b - start]
                                  for k, (start, _, a, b) in enumerate(doc_pieces_)]))
        at += len(doc_pieces_)

    def backprop(dYs: List[Floats2d]) -> List:
        d_pieces = []
        for dY, doc_pieces_ in zip(dYs, pieces):
            for start, end, a, b in doc_pieces_:
                d = xp.zeros((end - start, dY.shape[1]), dtype=dY.dtype)
                d[a - start:b - start] = dY[a:b]
                d_pieces.append(d)
        d_inputs = backprop_lstm(d_pieces)
        d_out, at = [], 0
        for X, doc_pieces_ in zip(vectors, pieces):
            dX = xp.zeros_like(X)
            for k, (start, end, _, _) in enumerate(doc_pieces_):
                dX[start:end] += d_inputs[at + k]
            d_out.append(dX)
            at += len(doc_pieces_)
        return backprop_tok2vec(d_out)

    return Ys, backprop


def BiLSTM(
    width: int, depth: int = 2, dropout: float = 0.0, nI: Optional[int] = None,
    layer_dropout: float = 0.0, recurrent_dropout: float = 0.0,
) -> Model[List[Floats2d], List[Floats2d]]:
    """A bidirectional LSTM on a list of (n_i, nI) arrays, one sequence each,
    returning one (n_i, width) array each; empty arrays are allowed. The
    parameters are those of thinc's `LSTM(nO=width, bi=True, depth=depth)`
    (same names, layout and initialization: glorot-uniform weights, zero
    biases and initial states); the dropout rates as in BiLSTMEncoder."""
    _validate(width, depth, dropout, layer_dropout, recurrent_dropout)
    return Model(
        "bilstm",
        _bilstm_forward,
        init=_bilstm_init,
        dims={"nO": width, "nI": nI, "depth": depth, "dirs": 2},
        params={"LSTM": None, "HC0": None},
        attrs={"lstm_dropout": float(dropout), "layer_dropout": float(layer_dropout),
               "recurrent_dropout": float(recurrent_dropout)},
    )


def _validate(width, depth, dropout, layer_dropout, recurrent_dropout) -> None:
    if isinstance(width, bool) or not isinstance(width, int) or width <= 0 or width % 2:
        raise ValueError(
            f"BiLSTMEncoder: width must be a positive even integer (the forward and "
            f"backward LSTMs give width // 2 values each, concatenated); got {width!r}."
        )
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"BiLSTMEncoder: depth must be an integer >= 1; got {depth!r}.")
    check_rate("BiLSTMEncoder", "dropout", dropout)
    check_rate("BiLSTMEncoder", "layer_dropout", layer_dropout)
    check_rate("BiLSTMEncoder", "recurrent_dropout", recurrent_dropout)


def check_rate(name: str, setting: str, value) -> None:
    """A dropout rate of a layer's settings: a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name}: {setting} must be in [0, 1); got {value!r}.")


def vector_dropout_mask(model: Model, shape, is_train: bool):
    """The mask of the dropout a parser model puts on the token vectors its
    scorers read (its "vector_dropout", fixed by the config: spaCy's
    `training.dropout` does not change it), or None outside training."""
    rate = model.attrs.get("vector_dropout", 0.0)
    return model.ops.get_dropout_mask(shape, rate) if is_train and rate > 0 else None


def _bilstm_init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> None:
    if X is not None and len(X):
        nI = X[0].shape[1]
        if model.has_dim("nI") and model.get_dim("nI") != nI:
            raise ValueError(
                f"BiLSTMEncoder: the tok2vec gives vectors of width {nI} but the LSTM "
                f"was built for width {model.get_dim('nI')}."
            )
        model.set_dim("nI", nI)
    if not model.has_dim("nI"):
        raise ValueError(
            "BiLSTMEncoder: the tok2vec's output width (nO) is unknown; give the tok2vec "
            "an nO or initialize the model with example docs."
        )
    # thinc's LSTM initializer, on our dims (nO, nI, depth, dirs): the same
    # parameter layout and values as thinc's LSTM layer.
    thinc_lstm_init(glorot_uniform_init, zero_init, model)


def _bilstm_forward(
    model: Model, Xs: List[Floats2d], is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    xp = ops.xp
    nO = model.get_dim("nO")
    # Empty sequences stay out of the LSTM and get (0, nO) outputs.
    shapes = [X.shape for X in Xs]
    keep = [i for i, shape in enumerate(shapes) if shape[0] > 0]
    Ys: List[Floats2d] = [ops.alloc2f(0, nO) for _ in Xs]
    if not keep:
        return Ys, lambda dYs: [ops.alloc2f(*shape) for shape in shapes]
    lengths = [shapes[i][0] for i in keep]
    steps = _Steps.from_lengths(lengths, ops)
    X = xp.concatenate([ops.asarray2f(Xs[i]) for i in keep])[steps.rows]
    params = model.get_param("LSTM")
    H0, C0 = model.get_param("HC0")
    mask = None
    if is_train and model.attrs["lstm_dropout"] > 0:
        # Dropout over weights (DropConnect), as thinc's LSTM does.
        mask = ops.get_dropout_mask(params.shape, model.attrs["lstm_dropout"])
        params = params * mask
    masks = None
    layer_rate = model.attrs.get("layer_dropout", 0.0)
    if is_train and layer_rate > 0:
        masks = [ops.get_dropout_mask((X.shape[0], X.shape[1] if i == 0 else nO), layer_rate)
                 for i in range(H0.shape[0])]
    h_masks = None
    recurrent_rate = model.attrs.get("recurrent_dropout", 0.0)
    if is_train and recurrent_rate > 0:
        # One mask per sequence: row k of every step is the k-th longest sequence.
        depth, dirs, n_units = H0.shape
        h_masks = ops.get_dropout_mask((depth * dirs * len(keep), n_units), recurrent_rate)
        h_masks = h_masks.reshape((depth, dirs, len(keep), n_units))
    H, state = lstm_forward(params, H0, C0, X, steps, masks, h_masks)
    Y = ops.alloc2f(H.shape[0], nO, zeros=False)
    Y[steps.rows] = H
    for i, Y_i in zip(keep, ops.unflatten(Y, ops.asarray1i(lengths))):
        Ys[i] = Y_i

    def backprop(dYs: List[Floats2d]) -> List[Floats2d]:
        dH = xp.concatenate([ops.asarray2f(dYs[i]) for i in keep])[steps.rows]
        dX_packed, d_params = lstm_backward(dH, params, H0, C0, state, steps, masks, h_masks)
        if mask is not None:
            d_params *= mask
        model.inc_grad("LSTM", d_params)
        dX = ops.alloc2f(*dX_packed.shape, zeros=False)
        dX[steps.rows] = dX_packed
        dXs: List[Floats2d] = [ops.alloc2f(*shape) for shape in shapes]
        for i, dX_i in zip(keep, ops.unflatten(dX, ops.asarray1i(lengths))):
            dXs[i] = dX_i
        return dXs

    return Ys, backprop


# -- the LSTM on packed sequences ----------------------------------------------------
#
# Layout (thinc's): the sequences of a batch, sorted by decreasing length, are
# packed time-major: the rows of time step t are the sequences still running
# at t, longest first, so a sequence keeps its row offset at every step.
# The parameters of each (layer, direction), in order, are Wx (4 * nO, nI), bx
# (4 * nO), Wh (4 * nO, nO), bh (4 * nO), each gate a block of nO rows in the
# order forget, input, output, cell candidate. The forward state is (Y, G, C,
# X): the hidden states, the gates after their activation (gate blocks, as the
# weights), the cells, each (depth, dirs, N, ...), and the input.


class _Steps(NamedTuple):
    """Where each time step's rows lie in the packed data."""

    starts: List[int]   # the first packed row of each time step
    sizes: List[int]    # the number of sequences running at each time step
    rows: object        # for each packed row, its row in the sequences concatenated

    @classmethod
    def from_lengths(cls, lengths: List[int], ops) -> "_Steps":
        import numpy

        lengths = numpy.asarray(lengths, dtype="i")
        offsets = numpy.concatenate(([0], numpy.cumsum(lengths)[:-1]))
        order = numpy.argsort(-lengths, kind="stable")
        T = int(lengths.max()) if len(lengths) else 0
        sizes = [int((lengths > t).sum()) for t in range(T)]
        starts = [0] * T
        for t in range(1, T):
            starts[t] = starts[t - 1] + sizes[t - 1]
        t_index = numpy.repeat(numpy.arange(T), sizes)
        b_index = numpy.concatenate([numpy.arange(s) for s in sizes]) if T else t_index
        rows = offsets[order][b_index] + t_index
        return cls(starts, sizes, ops.asarray1i(rows))

    def order(self, direction: int):
        """(start, size, prev_start, n_prev) of each step in the order a
        direction reads them; the first n_prev rows continue the sequences of
        the previous step's rows from prev_start, the others start there."""
        T = len(self.sizes)
        out = []
        for k in range(T):
            t = k if direction == 0 else T - 1 - k
            prev = t - 1 if direction == 0 else t + 1
            if 0 <= prev < T:
                n_prev = min(self.sizes[t], self.sizes[prev])
                out.append((self.starts[t], self.sizes[t], self.starts[prev], n_prev))
            else:
                out.append((self.starts[t], self.sizes[t], 0, 0))
        return out


def _layer_params(params, depth: int, dirs: int, nO: int, nI: int):
    """Per (layer, direction): (layer, direction, offset in `params`, input
    width, Wx, Wh, bias = bx + bh), the weights as views of `params`."""
    out = []
    offset = 0
    for i in range(depth):
        n_in = nI if i == 0 else nO * dirs
        for d in range(dirs):
            at = offset
            Wx = params[at : at + 4 * nO * n_in].reshape((4 * nO, n_in))
            at += 4 * nO * n_in
            bx = params[at : at + 4 * nO]
            at += 4 * nO
            Wh = params[at : at + 4 * nO * nO].reshape((4 * nO, nO))
            at += 4 * nO * nO
            bh = params[at : at + 4 * nO]
            at += 4 * nO
            out.append((i, d, offset, n_in, Wx, Wh, bx + bh))
            offset = at
    if offset != params.shape[0]:
        raise ValueError(f"LSTM parameters: expected {offset} values, got {params.shape[0]}.")
    return out


def _xp(array):
    from thinc.api import get_array_module

    return get_array_module(array)


def _prev_rows(xp, Z, init, prev: int, n_prev: int, size: int):
    """The previous step's rows of Z for a step of `size` rows: a view when
    every row continues a sequence, else a copy with `init` for the rest."""
    if n_prev == size:
        return Z[prev : prev + size]
    out = xp.empty((size, Z.shape[1]), dtype=Z.dtype)
    out[:] = init
    out[:n_prev] = Z[prev : prev + n_prev]
    return out


def _array_steps(xp, Gid, Yid, Cid, Wh, h0, c0, order, h_mask) -> None:
    """The time steps of one layer and direction with array operations (any
    xp, any float dtype), in place: what lstm_steps computes in C. `h_mask`:
    None, or (n_sequences, nO), multiplied into the previous hidden state."""
    nO = Yid.shape[1]
    WhT = xp.ascontiguousarray(Wh.T)
    for start, size, prev, n_prev in order:
        h_prev = _prev_rows(xp, Yid, h0, prev, n_prev, size)
        if h_mask is not None:
            h_prev = h_prev * h_mask[:size]
        c_prev = _prev_rows(xp, Cid, c0, prev, n_prev, size)
        g = Gid[start : start + size]
        g += h_prev @ WhT
        sig = g[:, : 3 * nO]   # forget, input, output: sigmoid, in place
        xp.clip(sig, -40.0, 40.0, out=sig)
        xp.negative(sig, out=sig)
        xp.exp(sig, out=sig)
        sig += 1.0
        xp.reciprocal(sig, out=sig)
        hc = g[:, 3 * nO :]
        xp.tanh(hc, out=hc)
        c = Cid[start : start + size]
        xp.multiply(g[:, :nO], c_prev, out=c)
        c += g[:, nO : 2 * nO] * hc
        y = Yid[start : start + size]
        xp.tanh(c, out=y)
        y *= g[:, 2 * nO : 3 * nO]


def lstm_forward(params: Floats1d, H0, C0, X: Floats2d, steps: _Steps, masks=None,
                 h_masks=None):
    """The LSTM's forward pass on packed data (any xp, any float dtype): what
    thinc's LSTM computes (its compiled CPU kernel gives the same to float32
    precision). In float32 on the CPU the products use thinc's BLAS and the
    time steps run in C (models/lstm_steps.pyx) unless recurrent dropout is
    on; otherwise the steps are array operations (`_array_steps`). `masks`:
    None, or one dropout mask per layer, multiplied into that layer's input;
    `h_masks`: None, or (depth, dirs, n_sequences, nO) dropout masks, one row
    per sequence (in packed order), multiplied into the previous hidden state
    that each step of that layer and direction reads.
    Returns the top layer's output (N, dirs * nO) and the state that
    `lstm_backward` takes."""
    xp = _xp(params)
    depth, dirs, nO = H0.shape
    N = X.shape[0]
    dtype = X.dtype
    Y = xp.zeros((depth, dirs, N, nO), dtype=dtype)
    G = xp.zeros((depth, dirs, N, nO * 4), dtype=dtype)
    C = xp.zeros((depth, dirs, N, nO), dtype=dtype)
    # On the CPU in float32, thinc's BLAS (blis) for the products and C for
    # the steps (models/lstm_steps.pyx).
    host = xp is numpy and dtype == numpy.float32 and params.dtype == numpy.float32
    inputs = X
    for i, d, _, _, Wx, Wh, bias in _layer_params(params, depth, dirs, nO, X.shape[1]):
        if d == 0 and masks is not None:
            inputs = inputs * masks[i]
        Gid, Yid, Cid = G[i, d], Y[i, d], C[i, d]
        if host:
            _HOST_OPS.gemm(xp.ascontiguousarray(inputs), Wx, trans2=True, out=Gid)
        else:
            xp.matmul(inputs, Wx.T, out=Gid)
        Gid += bias
        if host and h_masks is None:
            lstm_steps(_HOST_OPS, Gid, Yid, Cid, Wh, H0[i, d], C0[i, d], steps.order(d))
        else:
            _array_steps(xp, Gid, Yid, Cid, Wh, H0[i, d], C0[i, d], steps.order(d),
                         None if h_masks is None else h_masks[i, d])
        if d == dirs - 1:
            inputs = xp.ascontiguousarray(Y[i].transpose((1, 0, 2)).reshape((N, dirs * nO)))
    return inputs, (Y, G, C, X)


def lstm_backward(dH: Floats2d, params: Floats1d, H0, C0, state: Tuple, steps: _Steps,
                  masks=None, h_masks=None):
    """Backpropagate through the LSTM (any xp, any float dtype), from the
    gradient of the top layer's output (N, dirs * nO), the state of
    `lstm_forward` and its dropout masks (both kinds). Returns the gradients of the input (N, nI) and of the
    parameters, laid out like them (bx and bh each get the gradient of their
    sum). The initial states (HC0) get no gradient, as in thinc: they stay at
    zero."""
    xp = _xp(params)
    Y, G, C, X = state
    depth, dirs, N, nO = Y.shape
    dtype = dH.dtype
    layers = _layer_params(params, depth, dirs, nO, X.shape[1])
    d_params = xp.zeros(params.shape, dtype=params.dtype)
    d_out = dH
    for i in reversed(range(depth)):
        inputs = X if i == 0 else Y[i - 1].transpose((1, 0, 2)).reshape((N, dirs * nO))
        if masks is not None:
            inputs = inputs * masks[i]
        d_inputs = xp.zeros(inputs.shape, dtype=dtype)
        for _, d, offset, n_in, Wx, Wh, _ in (p for p in layers if p[0] == i):
            Gid, Yid, Cid = G[i, d], Y[i, d], C[i, d]
            dY = xp.array(d_out[:, d * nO : (d + 1) * nO], dtype=dtype)   # + carries
            dC = xp.zeros((N, nO), dtype=dtype)                            # carries
            d_pre = xp.empty((N, 4 * nO), dtype=dtype)
            H_prev = xp.empty((N, nO), dtype=dtype)
            for start, size, prev, n_prev in reversed(steps.order(d)):
                rows = slice(start, start + size)
                c_prev = _prev_rows(xp, Cid, C0[i, d], prev, n_prev, size)
                H_prev[rows] = _prev_rows(xp, Yid, H0[i, d], prev, n_prev, size)
                if h_masks is not None:
                    H_prev[rows] *= h_masks[i, d, :size]
                g = Gid[rows]
                hf, hi, ho, hc = (g[:, k * nO : (k + 1) * nO] for k in range(4))
                tanh_c = xp.tanh(Cid[rows])
                dh = dY[rows]
                dc = dC[rows] + dh * ho * (1 - tanh_c * tanh_c)
                dg = d_pre[rows]
                xp.multiply(dc * c_prev, hf * (1 - hf), out=dg[:, :nO])
                xp.multiply(dc * hc, hi * (1 - hi), out=dg[:, nO : 2 * nO])
                xp.multiply(dh * tanh_c, ho * (1 - ho), out=dg[:, 2 * nO : 3 * nO])
                xp.multiply(dc * hi, 1 - hc * hc, out=dg[:, 3 * nO :])
                if n_prev:
                    dh_prev = dg[:n_prev] @ Wh
                    if h_masks is not None:
                        dh_prev *= h_masks[i, d, :n_prev]
                    dY[prev : prev + n_prev] += dh_prev
                    dC[prev : prev + n_prev] += (dc * hf)[:n_prev]
            d_inputs += d_pre @ Wx
            d_bias = d_pre.sum(axis=0)
            at = offset
            for part in ((d_pre.T @ inputs).ravel(), d_bias, (d_pre.T @ H_prev).ravel(), d_bias):
                d_params[at : at + part.shape[0]] = part
                at += part.shape[0]
        d_out = d_inputs if masks is None else d_inputs * masks[i]
    return d_out, d_params


@registry.architectures("spacy_nonmono.ScaleGradient.v1")
def ScaleGradient(layer: Model, scale: float) -> Model:
    """`layer` with the gradient it passes back multiplied by `scale`: the
    weight of a component's loss on a shared encoder (stack propagation). Put
    it around the `spacy.Tok2VecListener.v1` of a tagger or morphologizer to
    train the shared tok2vec with, e.g., 0.2 times that tagger's gradient;
    the tagger's own layers still learn from its whole loss."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale < 0:
        raise ValueError(f"ScaleGradient: scale must be a number >= 0; got {scale!r}.")
    model = Model("scale_gradient", _scale_forward, init=_scale_init, layers=[layer],
                  dims={"nO": None}, attrs={"scale": float(scale)})
    if layer.has_dim("nO"):
        model.set_dim("nO", layer.get_dim("nO"))
    return model


def _scale_init(model: Model, X=None, Y=None) -> None:
    model.layers[0].initialize(X=X, Y=Y)
    if model.layers[0].has_dim("nO"):
        model.set_dim("nO", model.layers[0].get_dim("nO"))


def _scale_forward(model: Model, X, is_train: bool):
    Y, backprop_layer = model.layers[0](X, is_train)
    scale = model.attrs["scale"]

    def backprop(dY):
        if isinstance(dY, list):
            return backprop_layer([d * scale for d in dY])
        return backprop_layer(dY * scale)

    return Y, backprop
