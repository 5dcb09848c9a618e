"""The global (chart and MST) parser's model: token vectors, per-token parts,
and the small MLPs that turn tuples of positions into score tables.

The encoder (any spaCy tok2vec; `spacy_nonmono.BiLSTMEncoder.v1` is the one
the paper's minimal features need) gives one vector per token; two learned
vectors stand for the root node (position 0) and the end of the buffer
(position n + 1). One linear layer projects every vector, once per batch,
into its *parts*: its contribution to the hidden layer of each scorer from
each slot it can fill. A scorer's scores for a tuple of positions are then

    W relu(part[slot 1][p1] + ... + part[slot k][pk] + b) + c

so a whole table (every pair or triple of positions) is sums of precomputed
rows and one matrix product, never a Python loop over items. Scorers, by the
structure decoded (set by the global decoder, `size_global_model`):

- "shift" (s0, b0) -> 1 and "reduce" (s1, s0, b0) -> one score per reduce
  transition (features "hybrid"; "two": (s0, b0)), for the MH3/MH4 charts;
- "arc" (head, dependent) -> 1, for MST;
- "label" (head, dependent) -> one score per label, for every structure.

The forward pass maps docs to the parts, as host float32 (rows, slots, nH):
rows are the batch's tokens in order, then the root, then the end. Its
backward pass takes the parts' gradient, which the decoder accumulates from
the few table entries a loss reads (`ScorerView`).
"""
from typing import Dict, List, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain, glorot_uniform_init, list2array, normal_init
from thinc.types import Floats2d

from . import encoders  # noqa: F401  (registers the BiLSTM encoder its default config uses)
from .parser_model import CNN_TOK2VEC_CONFIG

# The encoder of the global model: a two-layer BiLSTM on the greedy parsers'
# CNN tok2vec (also what the workflow's "+bilstm" gives a greedy parser).
BILSTM_CONFIG = f"""
[tok2vec]
@architectures = "spacy_nonmono.BiLSTMEncoder.v1"
width = 200
depth = 2
dropout = 0.0

[tok2vec.tok2vec]
{CNN_TOK2VEC_CONFIG}"""
# The model block `init-config --decoding global` writes: the paper's minimal
# features over that encoder.
DEFAULT_CONFIG = """
[model]
@architectures = "spacy_nonmono.GlobalParserModel.v1"
hidden_width = 100
features = "hybrid"
label_hidden_width = 100
""" + BILSTM_CONFIG.replace("[tok2vec", "[model.tok2vec")
FEATURES = ("hybrid", "two")
# Slots of each scorer (one part each) and its number of outputs by name.
SLOTS = {"shift": ("s0", "b0"), "arc": ("head", "dep"), "label": ("head", "dep")}
REDUCE_SLOTS = {"hybrid": ("s1", "s0", "b0"), "two": ("s0", "b0")}
SCORERS = ("shift", "reduce", "arc", "label")


@registry.architectures("spacy_nonmono.GlobalParserModel.v1")
def build_global_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 100,
    features: str = "hybrid",
    label_hidden_width: int = 100,
) -> Model:
    """Build the global parser's model.

    tok2vec: any spaCy tok2vec (a BiLSTM on top gives two or three positions
        enough context: `spacy_nonmono.BiLSTMEncoder.v1`).
    hidden_width: hidden units of the transition and arc scorers.
    features: the positions a chart's reduce transitions are scored from:
        "hybrid" ({s1, s0, b0}; shifts from {s0, b0}) or "two" ({s0, b0} for
        every transition), the paper's section 4.2.
    label_hidden_width: hidden units of the label scorer.
    """
    if features not in FEATURES:
        raise ValueError(f"Unknown features {features!r}: expected one of "
                         f"{', '.join(repr(f) for f in FEATURES)}.")
    t2v_width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
    token_vectors = chain(tok2vec, list2array())
    return Model(
        "global_parser_model",
        forward,
        init=init,
        layers=[token_vectors],
        refs={"tok2vec": tok2vec, "token_vectors": token_vectors},
        dims={"nI": t2v_width, "nH": hidden_width, "nL_hidden": label_hidden_width},
        attrs={"features": features, "scorers": None},
        params={"root": None, "end": None, "W": None,
                **{f"{scorer}_{k}": None for scorer in SCORERS for k in ("b", "W", "c")}},
    )


def scorer_outputs(model: Model) -> Dict[str, int]:
    """{scorer: number of outputs} of the structure the model is sized for."""
    return dict(model.attrs["scorers"])


def size_global_model(model: Model, scorers: Dict[str, int]) -> None:
    """Size the model for a structure: {scorer name: outputs} (the label
    scorer's outputs are the labels, unknown (0) before initialization). A
    different structure for an initialized model is a ValueError."""
    current = model.attrs["scorers"]
    if current is not None and model.has_param("W"):
        old = {name: n for name, n in current if n}
        new = {name: n for name, n in scorers.items() if n}
        if set(old) != set(scorers) or any(old.get(k, n) != n for k, n in new.items()):
            raise ValueError(f"The model was built for the scorers {dict(current)}, not "
                             f"{scorers}; labels and structure cannot change after training.")
    model.attrs["scorers"] = tuple(scorers.items())


def slot_layout(model: Model) -> Dict[str, Tuple[int, int]]:
    """{scorer: (first part, number of slots)} in the parts array."""
    layout, first = {}, 0
    for name, _ in model.attrs["scorers"]:
        n = len(REDUCE_SLOTS[model.attrs["features"]] if name == "reduce" else SLOTS[name])
        layout[name] = (first, n)
        first += n
    return layout


def hidden_width(model: Model, scorer: str) -> int:
    return model.get_dim("nL_hidden" if scorer == "label" else "nH")


def is_initialized(model: Model) -> bool:
    return model.has_param("W")


def init(model: Model, X=None, Y=None) -> None:
    tok2vec = model.get_ref("tok2vec")
    if X is not None:
        model.get_ref("token_vectors").initialize(X=X)
    if not model.has_dim("nI"):
        model.set_dim("nI", tok2vec.get_dim("nO"))
    nI = model.get_dim("nI")
    if model.attrs["scorers"] is None:
        raise ValueError("size_global_model must size the model before it is initialized.")
    ops = model.ops
    for name in ("root", "end"):
        if not model.has_param(name):
            model.set_param(name, normal_init(ops, (1, nI)))
    layout = slot_layout(model)
    width = max(hidden_width(model, s) for s in layout)
    if not model.has_param("W"):
        n_parts = sum(n for _, n in layout.values())
        model.set_param("W", glorot_uniform_init(ops, (n_parts * width, nI)))
    for name, n_out in scorer_outputs(model).items():
        nH = hidden_width(model, name)
        for param, shape, initializer in ((f"{name}_b", (nH,), None),
                                          (f"{name}_W", (n_out, nH), glorot_uniform_init),
                                          (f"{name}_c", (n_out,), None)):
            if not model.has_param(param):
                model.set_param(param, initializer(ops, shape) if initializer else ops.alloc1f(*shape))


def forward(model: Model, docs: List[Doc], is_train: bool):
    """The parts (rows, n_parts, width) as host float32: rows are the batch's
    tokens, then the root, then the end of the buffer."""
    ops = model.ops
    tokvecs, backprop_tok2vec = model.get_ref("token_vectors")(docs, is_train)
    n_tokens = tokvecs.shape[0]
    X = ops.xp.vstack((tokvecs, model.get_param("root"), model.get_param("end")))
    W = model.get_param("W")
    parts = ops.gemm(X, W, trans2=True)
    n_parts = sum(n for _, n in slot_layout(model).values())
    host = numpy.ascontiguousarray(ops.to_numpy(parts), dtype="f").reshape((X.shape[0], n_parts, -1))

    def backprop(d_parts: numpy.ndarray):
        d_flat = ops.asarray2f(d_parts.reshape((X.shape[0], -1)))
        model.inc_grad("W", ops.gemm(d_flat, X, trans1=True))
        dX = ops.gemm(d_flat, W)
        model.inc_grad("root", dX[n_tokens:n_tokens + 1])
        model.inc_grad("end", dX[n_tokens + 1:])
        return backprop_tok2vec(dX[:n_tokens])

    return host, backprop


class ScorerView:
    """A batch's parts with the scorers' small parameters, on the host: it
    fills score tables, scores lists of position tuples, and accumulates the
    gradient of scores a loss read (into the parts, for the forward pass's
    backprop, and into the scorers' parameters)."""

    def __init__(self, model: Model, parts: numpy.ndarray, train: bool = False):
        self.model = model
        self.parts = parts
        self.layout = slot_layout(model)
        self.params = {name: {k: model.ops.to_numpy(model.get_param(f"{name}_{k}"))
                              for k in ("b", "W", "c")}
                       for name in self.layout}
        self.d_parts = numpy.zeros_like(parts) if train else None
        self.d_params = {name: {k: numpy.zeros_like(v) for k, v in p.items()}
                         for name, p in self.params.items()} if train else None

    def _part(self, scorer: str, slot: int, rows) -> numpy.ndarray:
        first, _ = self.layout[scorer]
        nH = self.params[scorer]["b"].shape[0]
        return self.parts[rows, first + slot, :nH]

    # -- tables ---------------------------------------------------------------

    def pair_table(self, scorer: str, rows: numpy.ndarray) -> numpy.ndarray:
        """Scores of every (p1, p2) pair of the positions whose rows are
        given: (m, m, outputs)."""
        p = self.params[scorer]
        hidden = self._part(scorer, 0, rows)[:, None, :] + self._part(scorer, 1, rows)[None, :, :]
        hidden += p["b"]
        numpy.maximum(hidden, 0, out=hidden)
        return hidden @ p["W"].T + p["c"]

    def triple_table(self, scorer: str, rows: numpy.ndarray) -> numpy.ndarray:
        """Scores of every (p1, p2, p3) triple with p1 < p2 (other entries
        zero, never read by the charts): (outputs, m, m, m), one matrix
        product per p1."""
        p = self.params[scorer]
        A, B, C = (self._part(scorer, k, rows) for k in range(3))
        m = len(rows)
        out = numpy.zeros((p["W"].shape[0], m, m, m), dtype=A.dtype)
        BC = B[:, None, :] + C[None, :, :] + p["b"]
        for first in range(m - 2):
            hidden = BC[first + 1:] + A[first]
            numpy.maximum(hidden, 0, out=hidden)
            out[:, first, first + 1:, :] = numpy.moveaxis(hidden @ p["W"].T + p["c"], -1, 0)
        return out

    # -- scores of tuples and their gradient -------------------------------------

    def scores(self, scorer: str, rows: numpy.ndarray) -> Tuple[numpy.ndarray, tuple]:
        """Scores (E, outputs) of E position tuples given as rows (E, slots),
        with what `backprop` needs."""
        p = self.params[scorer]
        pre = sum(self._part(scorer, k, rows[:, k]) for k in range(rows.shape[1])) + p["b"]
        hidden = numpy.maximum(pre, 0)
        return hidden @ p["W"].T + p["c"], (scorer, rows, pre, hidden)

    def backprop(self, cache: tuple, d_scores: numpy.ndarray) -> None:
        """Accumulate the gradient of d_scores (E, outputs), for the tuples
        `scores` returned with `cache`."""
        scorer, rows, pre, hidden = cache
        p, d = self.params[scorer], self.d_params[scorer]
        d["W"] += d_scores.T @ hidden
        d["c"] += d_scores.sum(axis=0)
        d_pre = (d_scores @ p["W"]) * (pre > 0)
        d["b"] += d_pre.sum(axis=0)
        first, _ = self.layout[scorer]
        nH = p["b"].shape[0]
        for k in range(rows.shape[1]):
            numpy.add.at(self.d_parts, (rows[:, k], first + k, slice(0, nH)), d_pre)

    def add_event_grads(self, scorer: str, rows: numpy.ndarray, outputs: numpy.ndarray,
                        coefficients: numpy.ndarray) -> None:
        """The gradient of sum_e coefficients[e] * score(rows[e])[outputs[e]]."""
        if len(rows) == 0:
            return
        _, cache = self.scores(scorer, rows)
        d_scores = numpy.zeros((len(rows), self.params[scorer]["W"].shape[0]),
                               dtype=self.parts.dtype)
        d_scores[numpy.arange(len(rows)), outputs] = coefficients
        self.backprop(cache, d_scores)

    def finish(self, backprop_parts) -> None:
        """Hand the accumulated gradients to the model."""
        ops = self.model.ops
        for name, grads in self.d_params.items():
            for k, value in grads.items():
                self.model.inc_grad(f"{name}_{k}", ops.asarray(value))
        backprop_parts(self.d_parts)


def batch_rows(offsets: Sequence[int], lengths: Sequence[int], n_tokens: int) -> List[numpy.ndarray]:
    """For each span, the parts rows of its positions 0..n+1: the root's row,
    the span's tokens, the end's row."""
    root, end = n_tokens, n_tokens + 1
    return [numpy.concatenate(([root], numpy.arange(o, o + n), [end])).astype("int64")
            for o, n in zip(offsets, lengths)]
