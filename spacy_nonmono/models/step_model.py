"""The step model: from a state's context ids to its move scores.

It owns the hidden bias, the maxout and the output layer, and scores states
with one C routine (`scoring.score_state`), the same for greedy parsing and
training; its gradients are computed here, on the thinc side.

Input: (table, ids): the token table as host (numpy) float32 (rows + 1, nF,
nH, nP) and the states' context ids (n, nF). Output: scores (n, nO) on the
host. Its backward pass takes d_scores and returns the table's gradient in
sparse form, a `TableGrad` (ids, d_unmaxed), which the parser model scatters
into the table once per batch.
"""
from typing import List, NamedTuple

import numpy
from thinc.api import Model, NumpyOps, zero_init

from .scoring import HostWeights, score_states

CPU_OPS = NumpyOps()


class TableGrad(NamedTuple):
    """Gradient of a batch's token table: d_unmaxed[b] is added to row
    ids[b, f] + 1 of slot f, for every state b and slot f."""
    ids: numpy.ndarray          # (n, nF) int32
    d_unmaxed: numpy.ndarray    # (n, nH, nP) float32

    @classmethod
    def concat(cls, grads: List["TableGrad"]) -> "TableGrad":
        return cls(numpy.concatenate([g.ids for g in grads]),
                   numpy.concatenate([g.d_unmaxed for g in grads]))


def StepModel(nH: int, nP: int, nO=None) -> Model:
    return Model(
        "step_model",
        forward,
        init=init,
        dims={"nH": nH, "nP": nP, "nO": nO},
        params={"hidden_b": None, "W": None, "b": None},
    )


def init(model: Model, X=None, Y=None) -> None:
    nH, nP = model.get_dim("nH"), model.get_dim("nP")
    if not model.has_param("hidden_b"):
        model.set_param("hidden_b", model.ops.alloc2f(nH, nP))
    if model.has_dim("nO"):
        nO = model.get_dim("nO")
        if not model.has_param("W"):
            model.set_param("W", zero_init(model.ops, (nO, nH)))
        if not model.has_param("b"):
            model.set_param("b", model.ops.alloc1f(nO))


def host_weights(model: Model, nF: int) -> HostWeights:
    """The parameters as host arrays, in the form the C routine reads."""
    to_numpy = model.ops.to_numpy
    return HostWeights(to_numpy(model.get_param("hidden_b")), to_numpy(model.get_param("W")),
                       to_numpy(model.get_param("b")), nF)


def forward(model: Model, inputs, is_train: bool):
    table, ids = inputs
    scores, hidden, which = score_states(host_weights(model, table.shape[1]), table, ids)

    def backprop(d_scores) -> TableGrad:
        return _backprop(model, ids, hidden, which, d_scores)

    return scores, backprop


def _backprop(model: Model, ids, hidden, which, d_scores) -> TableGrad:
    """Accumulate the step model's gradients for states with these context
    ids, hidden vectors and maxout choices; return the table's gradient."""
    ops = model.ops
    d_scores = numpy.ascontiguousarray(d_scores, dtype="f")
    W = ops.to_numpy(model.get_param("W"))
    model.inc_grad("W", ops.asarray2f(d_scores.T @ hidden))
    model.inc_grad("b", ops.asarray1f(d_scores.sum(axis=0)))
    d_unmaxed = CPU_OPS.backprop_maxout(d_scores @ W, which, model.get_dim("nP"))
    model.inc_grad("hidden_b", ops.asarray2f(d_unmaxed.sum(axis=0)))
    return TableGrad(ids, d_unmaxed)


class StepUpdate:
    """The step model over the many steps of one training update: scores
    each step's states as `forward` does (the same C routine, the weights
    copied to the host once), and backpropagates all steps at once, so a
    batch pays Python and matrix-product overhead once rather than at each of
    its (up to thousands of) steps."""

    def __init__(self, model: Model, table):
        self.model = model
        self.table = table
        self.weights = host_weights(model, table.shape[1])
        self.saved = []

    def __call__(self, ids):
        scores, hidden, which = score_states(self.weights, self.table, ids)
        self.saved.append((ids, hidden, which))
        return scores

    def backprop(self, d_scores_per_step) -> TableGrad:
        """The gradients of every step scored so far, d_scores in step order."""
        ids, hidden, which = (numpy.concatenate(part) for part in zip(*self.saved))
        return _backprop(self.model, ids, hidden, which, numpy.concatenate(d_scores_per_step))
