"""`spacy_nonmono.SentenceHeads.v1`: first-order scores of every word's head
across a whole text, for deciding sentences with syntax.

For each word m of a doc read as one text, the model scores every word h
within max_length - 1 words as m's head, and m as its sentence's root:
biaffine scores (Dozat & Manning 2017) on two ReLU projections of the
token vectors,

    arc(h, m)  = D[m] · U · H[h] + H[h] · v
    root(m)    = D[m] · r + r0

and the log odds of m starting a sentence, a linear score of its vector (as
spaCy's senter on the same vectors),

    start(m)   = X[m] · w + w0

returned as one array per doc, (n, 2L) with L = max_length: the band of
columns 0 to 2L - 2, where column L - 1 + h - m holds arc(h, m) and column
L - 1 holds root(m) (a column whose head lies outside the doc holds a
finite value the caller must mask), then start(m) in column 2L - 1. The
band is computed in blocks of rows, each a dense product with the heads the
block's words can reach, so a long text costs O(n L) memory and time
(`graph/segmentation.pyx` reads the band).
"""
from typing import List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, glorot_uniform_init
from thinc.types import Floats2d

# Rows of a band computed by one dense product.
BLOCK = 64


@registry.architectures("spacy_nonmono.SentenceHeads.v1")
def SentenceHeads(tok2vec: Model, width: int = 128,
                  dropout: float = 0.25) -> Model[List[Doc], List[Floats2d]]:
    """Head, root and start scores of every word across a doc (see the
    module): docs -> one (len(doc), 2 * max_length) array each. width: the
    projections' width; dropout: on the projections, in training. The
    attr "max_length" (the longest sentence, in words) is set by the
    component that owns the model."""
    from .encoders import check_rate

    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"SentenceHeads: width must be a positive integer; got {width!r}.")
    check_rate("SentenceHeads", "dropout", dropout)
    model = Model(
        "sentence_heads",
        _forward,
        init=_init,
        layers=[tok2vec],
        dims={"nI": None, "nH": width},
        params={"Wh": None, "bh": None, "Wd": None, "bd": None, "U": None, "v": None,
                "r": None, "r0": None, "w": None, "w0": None},
        attrs={"dropout": float(dropout), "max_length": None},
    )
    model.set_ref("tok2vec", tok2vec)
    return model


def _init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    tok2vec = model.get_ref("tok2vec")
    if X is not None:
        tok2vec.initialize(X=X)
    else:
        tok2vec.initialize()
    if not model.has_dim("nI") or model.get_dim("nI") is None:
        model.set_dim("nI", tok2vec.get_dim("nO"))
    nI, nH = model.get_dim("nI"), model.get_dim("nH")
    ops = model.ops
    for name in ("Wh", "Wd"):
        if not model.has_param(name):
            model.set_param(name, glorot_uniform_init(ops, (nH, nI)))
    for name, shape in (("bh", (nH,)), ("bd", (nH,)), ("U", (nH, nH)), ("v", (nH,)),
                        ("r", (nH,)), ("r0", (1,)), ("w", (nI,)), ("w0", (1,))):
        if not model.has_param(name):
            model.set_param(name, ops.alloc(shape))


def band_blocks(n: int, L: int):
    """Per block of rows [s, e): the heads [cs, ce) its words reach, and the
    band cells the dense (e - s, ce - cs) product fills: (row, column) of the
    band and (row, column) of the product."""
    for s in range(0, n, BLOCK):
        e = min(n, s + BLOCK)
        cs, ce = max(0, s - L + 1), min(n, e + L - 1)
        m = numpy.arange(s, e)[:, None]
        slot = numpy.arange(2 * L - 1)[None, :]
        h = m + slot - (L - 1)
        ok = (h >= cs) & (h < ce) & (slot != L - 1)
        rows, cols = numpy.nonzero(ok)
        yield (s, e, cs, ce, (rows + s, cols), (rows, h[rows, cols] - cs))


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], callable]:
    ops, xp = model.ops, model.ops.xp
    L = model.attrs["max_length"]
    if not L:
        raise ValueError("SentenceHeads: the attr max_length is not set (the component that "
                         "owns the model sets it: nonmono_syntax_senter).")
    Xs, backprop_tok2vec = model.get_ref("tok2vec")(docs, is_train)
    Wh, bh, Wd, bd = (model.get_param(name) for name in ("Wh", "bh", "Wd", "bd"))
    U, v, r, r0, w, w0 = (model.get_param(name) for name in ("U", "v", "r", "r0", "w", "w0"))
    rate = model.attrs["dropout"] if is_train else 0.0
    caches, bands = [], []
    for X in Xs:
        n = X.shape[0]
        Zh, Zd = X @ Wh.T + bh, X @ Wd.T + bd
        mask_h = ops.get_dropout_mask(Zh.shape, rate) if rate else None
        mask_d = ops.get_dropout_mask(Zd.shape, rate) if rate else None
        H, D = ops.relu(Zh), ops.relu(Zd)
        if rate:
            H, D = H * mask_h, D * mask_d
        A = D @ U
        head_bias = H @ v
        band = xp.zeros((n, 2 * L), dtype=A.dtype)
        for s, e, cs, ce, band_cells, block_cells in band_blocks(n, L):
            block = A[s:e] @ H[cs:ce].T + head_bias[cs:ce][None, :]
            band[band_cells] = block[block_cells]
        band[:, L - 1] = D @ r + r0[0]
        band[:, 2 * L - 1] = X @ w + w0[0]
        bands.append(band)
        caches.append((X, Zh, Zd, mask_h, mask_d, H, D, A))

    def backprop(d_bands: List[Floats2d]) -> List:
        dXs = []
        for d_band, (X, Zh, Zd, mask_h, mask_d, H, D, A) in zip(d_bands, caches):
            n = X.shape[0]
            dH, dA = xp.zeros_like(H), xp.zeros_like(A)
            d_head_bias = xp.zeros(n, dtype=A.dtype)
            for s, e, cs, ce, band_cells, block_cells in band_blocks(n, L):
                d_block = xp.zeros((e - s, ce - cs), dtype=A.dtype)
                d_block[block_cells] = d_band[band_cells]
                dA[s:e] += d_block @ H[cs:ce]
                dH[cs:ce] += d_block.T @ A[s:e]
                d_head_bias[cs:ce] += d_block.sum(axis=0)
            d_root = d_band[:, L - 1]
            dH += d_head_bias[:, None] * v[None, :]
            dD = dA @ U.T + d_root[:, None] * r[None, :]
            model.inc_grad("U", D.T @ dA)
            model.inc_grad("v", H.T @ d_head_bias)
            model.inc_grad("r", D.T @ d_root)
            model.inc_grad("r0", d_root.sum(keepdims=True))
            d_start = d_band[:, 2 * L - 1]
            model.inc_grad("w", X.T @ d_start)
            model.inc_grad("w0", d_start.sum(keepdims=True))
            if mask_h is not None:
                dH, dD = dH * mask_h, dD * mask_d
            dZh, dZd = dH * (Zh > 0), dD * (Zd > 0)
            model.inc_grad("Wh", dZh.T @ X)
            model.inc_grad("bh", dZh.sum(axis=0))
            model.inc_grad("Wd", dZd.T @ X)
            model.inc_grad("bd", dZd.sum(axis=0))
            dXs.append(dZh @ model.get_param("Wh") + dZd @ model.get_param("Wd")
                       + d_start[:, None] * w[None, :])
        return backprop_tok2vec(dXs)

    return bands, backprop


def masked_log_softmax(band: numpy.ndarray, L: int) -> numpy.ndarray:
    """Each word's log probabilities over its heads and its root slot (the
    first 2L - 1 columns of the model's output), with the columns whose head
    lies outside the doc at -inf (float64)."""
    band = numpy.asarray(band[:, :2 * L - 1], dtype="float64").copy()
    n = band.shape[0]
    h = numpy.arange(n)[:, None] + numpy.arange(2 * L - 1)[None, :] - (L - 1)
    band[(h < 0) | (h >= n)] = -numpy.inf
    top = band.max(axis=1, keepdims=True)
    return band - top - numpy.log(numpy.exp(band - top).sum(axis=1, keepdims=True))
