"""The token table: every token's contribution to the hidden layer for every
context slot, computed once per batch (the "precomputable affine" of spaCy's
parser, written for this package so it depends on no private spaCy module).

Input: token vectors X (n, nI). Output: the table (n + 1, nF, nH, nP) whose
row 0 is a learned per-slot padding (read for empty context slots) and row
r + 1 is X[r] @ W[f] for each slot f. The table is linear in X, so the
backward pass is two matrix products over the tokens, however many
transitions read them.
"""
from thinc.api import Model, normal_init
from thinc.types import Floats2d, Floats4d


def TokenTable(nH: int, nP: int, nF=None, nI=None) -> Model[Floats2d, Floats4d]:
    return Model(
        "token_table",
        forward,
        init=init,
        dims={"nF": nF, "nH": nH, "nP": nP, "nI": nI},
        params={"W": None, "pad": None},
    )


def init(model: Model, X=None, Y=None) -> None:
    nF, nH, nP, nI = (model.get_dim(d) for d in ("nF", "nH", "nP", "nI"))
    if not model.has_param("W"):
        # Unit-variance pre-activations for unit-variance inputs summed over
        # nF slots; the parser model then refines the scale (see its init).
        model.set_param("W", normal_init(model.ops, (nF, nH, nP, nI), mean=float((nF * nI) ** -0.5)))
    if not model.has_param("pad"):
        model.set_param("pad", normal_init(model.ops, (1, nF, nH, nP), mean=1.0))


def forward(model: Model, X: Floats2d, is_train: bool):
    nF, nH, nP, nI = (model.get_dim(d) for d in ("nF", "nH", "nP", "nI"))
    ops = model.ops
    W = model.get_param("W")
    table = ops.alloc2f(X.shape[0] + 1, nF * nH * nP, zeros=False)
    ops.gemm(X, W.reshape((nF * nH * nP, nI)), trans2=True, out=table[1:])
    table = table.reshape((X.shape[0] + 1, nF, nH, nP))
    table[0] = model.get_param("pad")[0]

    def backprop(d_table: Floats4d) -> Floats2d:
        d_rows = d_table[1:].reshape((X.shape[0], -1))
        model.inc_grad("pad", d_table[:1])
        model.inc_grad("W", ops.gemm(d_rows, X, trans1=True).reshape(W.shape))
        return ops.gemm(d_rows, W.reshape((-1, nI)))

    return table, backprop
