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
- "label" (head, dependent) -> one score per label, for every structure;
- "prune" (head, dependent) -> 1, a first-order arc scorer trained to pick
  heads, that prunes the heads a structure without an arc table considers
  (the global decoder's `prune_heads`).

With `scorer = "biaffine"`, the "arc" and "label" scorers are Dozat &
Manning's (2017) deep biaffine scorers over the same two parts (the chart
scorers stay MLPs): per token h = relu(part[head] + b_h) and
d = relu(part[dep] + b_d), then for each output o

    s_o(h, d) = d^T U_o h + V_o . x + c_o,  x = h ("arc") or [h; d] ("label"),

so an arc table is two matrix products and a label table one more axis.

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

# (encoders also registers the BiLSTM encoder of DEFAULT_CONFIG)
from .encoders import check_rate, vector_dropout_mask
from .parser_model import CNN_TOK2VEC_CONFIG
from .score_tables import mlp_pair_table, mlp_triple_table

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
SLOTS = {"shift": ("s0", "b0"), "arc": ("head", "dep"), "label": ("head", "dep"),
         "prune": ("head", "dep")}
REDUCE_SLOTS = {"hybrid": ("s1", "s0", "b0"), "two": ("s0", "b0")}
SCORERS = ("shift", "reduce", "arc", "label", "prune")
SCORER_KINDS = ("mlp", "biaffine")


@registry.architectures("spacy_nonmono.GlobalParserModel.v1")
def build_global_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 100,
    features: str = "hybrid",
    label_hidden_width: int = 100,
    scorer: str = "mlp",
    dropout: float = 0.0,
) -> Model:
    """Build the global parser's model.

    tok2vec: any spaCy tok2vec (a BiLSTM on top gives two or three positions
        enough context: `spacy_nonmono.BiLSTMEncoder.v1`).
    hidden_width: hidden units of the transition and arc scorers.
    features: the positions a chart's reduce transitions are scored from:
        "hybrid" ({s1, s0, b0}; shifts from {s0, b0}) or "two" ({s0, b0} for
        every transition), the paper's section 4.2.
    label_hidden_width: hidden units of the label scorer.
    scorer: "mlp" (an MLP per scorer) or "biaffine" (Dozat & Manning's
        biaffine arc and label scorers; transitions stay MLPs).
    dropout: dropout on the token vectors the scorers read (the encoder's
        output), in training; fixed by the config, like the encoder's.
    """
    if features not in FEATURES:
        raise ValueError(f"Unknown features {features!r}: expected one of "
                         f"{', '.join(repr(f) for f in FEATURES)}.")
    check_rate("GlobalParserModel", "dropout", dropout)
    if scorer not in SCORER_KINDS:
        raise ValueError(f"Unknown scorer {scorer!r}: expected one of "
                         f"{', '.join(repr(k) for k in SCORER_KINDS)}.")
    t2v_width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
    token_vectors = chain(tok2vec, list2array())
    return Model(
        "global_parser_model",
        forward,
        init=init,
        layers=[token_vectors],
        refs={"tok2vec": tok2vec, "token_vectors": token_vectors},
        dims={"nI": t2v_width, "nH": hidden_width, "nL_hidden": label_hidden_width},
        attrs={"features": features, "scorers": None, "scorer": scorer,
               "vector_dropout": float(dropout)},
        params={"root": None, "end": None, "W": None,
                **{f"{name}_{k}": None for name in SCORERS
                   for k in scorer_kind(scorer, name).param_names}},
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
        kind = scorer_kind(model.attrs["scorer"], name)
        for k, (shape, initializer) in kind.param_shapes(hidden_width(model, name), n_out).items():
            if not model.has_param(f"{name}_{k}"):
                value = initializer(ops, shape) if initializer else ops.alloc(shape, dtype="f")
                model.set_param(f"{name}_{k}", value)


def forward(model: Model, docs: List[Doc], is_train: bool):
    """The parts (rows, n_parts, width) as host float32: rows are the batch's
    tokens, then the root, then the end of the buffer."""
    ops = model.ops
    tokvecs, backprop_tok2vec = model.get_ref("token_vectors")(docs, is_train)
    n_tokens = tokvecs.shape[0]
    mask = vector_dropout_mask(model, tokvecs.shape, is_train)
    if mask is not None:
        tokvecs = tokvecs * mask
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
        return backprop_tok2vec(dX[:n_tokens] if mask is None else dX[:n_tokens] * mask)

    return host, backprop


class MLPScorer:
    """W relu(part[slot 1] + ... + part[slot k] + b) + c."""

    param_names = ("b", "W", "c")

    @staticmethod
    def param_shapes(nH: int, n_out: int) -> dict:
        return {"b": ((nH,), None), "W": ((n_out, nH), glorot_uniform_init),
                "c": ((n_out,), None)}

    @staticmethod
    def pair_table(p: dict, A: numpy.ndarray, B: numpy.ndarray) -> numpy.ndarray:
        return mlp_pair_table(A, B, p["b"], p["W"], p["c"])    # models/score_tables.pyx

    @staticmethod
    def scores(p: dict, slots: List[numpy.ndarray]):
        pre = sum(slots) + p["b"]
        hidden = numpy.maximum(pre, 0)
        return hidden @ p["W"].T + p["c"], (pre, hidden, len(slots))

    @staticmethod
    def backprop(p: dict, d: dict, cache: tuple, d_scores: numpy.ndarray) -> list:
        """Accumulate the parameters' gradient into d; the slots' gradients."""
        pre, hidden, n_slots = cache
        d["W"] += d_scores.T @ hidden
        d["c"] += d_scores.sum(axis=0)
        d_pre = (d_scores @ p["W"]) * (pre > 0)
        d["b"] += d_pre.sum(axis=0)
        return [d_pre] * n_slots


class BiaffineScorer:
    """Dozat & Manning's deep biaffine scorer of (head, dependent) pairs:
    h = relu(part[head] + bh), d = relu(part[dep] + bd),
    s_o = d^T U_o h + V_o . x + c_o with x = h (`linear = "u"`, the arc
    scorer: a dependent-only term cannot change which head wins) or
    x = [h; d] (`linear = "V"`, the label scorer). relu as in the MLP
    scorers: the same activation for every scorer of the model."""

    def __init__(self, linear: str):
        self.linear = linear
        self.dep_linear = linear == "V"
        self.param_names = ("bh", "bd", "U", linear, "c")

    def param_shapes(self, nH: int, n_out: int) -> dict:
        # U starts at zero, as Dozat & Manning's: the model starts from the linear terms.
        return {"bh": ((nH,), None), "bd": ((nH,), None), "U": ((n_out, nH, nH), None),
                self.linear: ((n_out, nH * (2 if self.dep_linear else 1)), glorot_uniform_init),
                "c": ((n_out,), None)}

    def _linear(self, p: dict, H: numpy.ndarray, D: numpy.ndarray):
        """The head's and the dependent's linear terms (..., outputs)."""
        V, k = p[self.linear], H.shape[-1]
        return H @ V[:, :k].T, (D @ V[:, k:].T if self.dep_linear else 0.0)

    def pair_table(self, p: dict, A: numpy.ndarray, B: numpy.ndarray) -> numpy.ndarray:
        H = numpy.maximum(A + p["bh"], 0)
        D = numpy.maximum(B + p["bd"], 0)
        # (outputs, head, dep): H U_o^T D^T, laid out [head, dep] as the MLP's table.
        bilinear = (H @ numpy.swapaxes(p["U"], 1, 2)) @ D.T
        head, dep = self._linear(p, H, D)
        table = numpy.moveaxis(bilinear, 0, -1) + head[:, None, :] + p["c"]
        if self.dep_linear:
            table += dep[None, :, :]
        return table

    def scores(self, p: dict, slots: List[numpy.ndarray]):
        pre_h, pre_d = slots[0] + p["bh"], slots[1] + p["bd"]
        H, D = numpy.maximum(pre_h, 0), numpy.maximum(pre_d, 0)
        UH = numpy.einsum("oij,ej->eoi", p["U"], H)
        head, dep = self._linear(p, H, D)
        scores = numpy.einsum("eoi,ei->eo", UH, D) + head + dep + p["c"]
        return scores, (pre_h, pre_d, H, D, UH)

    def backprop(self, p: dict, d: dict, cache: tuple, d_scores: numpy.ndarray) -> list:
        """Accumulate the parameters' gradient into d; the slots' gradients."""
        pre_h, pre_d, H, D, UH = cache
        k = H.shape[1]
        d["c"] += d_scores.sum(axis=0)
        d["U"] += numpy.einsum("eo,ei,ej->oij", d_scores, D, H, optimize=True)
        d_D = numpy.einsum("eo,eoi->ei", d_scores, UH)
        d_H = numpy.einsum("eo,ei,oij->ej", d_scores, D, p["U"], optimize=True)
        V, dV = p[self.linear], d[self.linear]
        dV[:, :k] += d_scores.T @ H
        d_H += d_scores @ V[:, :k]
        if self.dep_linear:
            dV[:, k:] += d_scores.T @ D
            d_D += d_scores @ V[:, k:]
        d_pre_h, d_pre_d = d_H * (pre_h > 0), d_D * (pre_d > 0)
        d["bh"] += d_pre_h.sum(axis=0)
        d["bd"] += d_pre_d.sum(axis=0)
        return [d_pre_h, d_pre_d]


MLP = MLPScorer()
BIAFFINE = {"arc": BiaffineScorer("u"), "label": BiaffineScorer("V"),
            "prune": BiaffineScorer("u")}


def scorer_kind(scorer: str, name: str):
    """The helper that scores the scorer `name` under the model's `scorer`
    setting (only arcs, labels and the pruner have a biaffine form)."""
    return BIAFFINE.get(name, MLP) if scorer == "biaffine" else MLP


class ScorerView:
    """A batch's parts with the scorers' small parameters, on the host: it
    fills score tables, scores lists of position tuples, and accumulates the
    gradient of scores a loss read (into the parts, for the forward pass's
    backprop, and into the scorers' parameters). Each scorer's arithmetic is
    its kind's (`scorer_kind`): the decoder sees one interface."""

    def __init__(self, model: Model, parts: numpy.ndarray, train: bool = False):
        self.model = model
        self.parts = parts
        self.layout = slot_layout(model)
        self.kinds = {name: scorer_kind(model.attrs["scorer"], name) for name in self.layout}
        self.widths = {name: hidden_width(model, name) for name in self.layout}
        self.params = {name: {k: model.ops.to_numpy(model.get_param(f"{name}_{k}"))
                              for k in self.kinds[name].param_names}
                       for name in self.layout}
        self.d_parts = numpy.zeros_like(parts) if train else None
        self.d_params = {name: {k: numpy.zeros_like(v) for k, v in p.items()}
                         for name, p in self.params.items()} if train else None

    def _part(self, scorer: str, slot: int, rows) -> numpy.ndarray:
        first, _ = self.layout[scorer]
        return self.parts[rows, first + slot, :self.widths[scorer]]

    # -- tables ---------------------------------------------------------------

    def pair_table(self, scorer: str, rows: numpy.ndarray) -> numpy.ndarray:
        """Scores of every (p1, p2) pair of the positions whose rows are
        given: (m, m, outputs)."""
        return self.kinds[scorer].pair_table(self.params[scorer], self._part(scorer, 0, rows),
                                             self._part(scorer, 1, rows))

    def triple_table(self, scorer: str, rows: numpy.ndarray, triples=None) -> numpy.ndarray:
        """Scores of every (p1, p2, p3) triple with p1 < p2 < p3, the only
        ones the charts read (a reduce's s1, s0, b0 stand in that order;
        other entries zero): (outputs, m, m, m). MLP scorers only (the
        charts' reduce scorer). For each p2 the triples form a rectangle
        (p1 before it, p3 after it): one matrix product per p2. triples:
        None, or (E, 3) positions (a pruned chart's reads): for each p2 only
        the rectangle of the p1 and p3 its triples use is scored, the other
        entries stay zero."""
        p = self.params[scorer]
        A, B, C = (self._part(scorer, k, rows) for k in range(3))
        if triples is None:     # the whole table, in C (models/score_tables.pyx)
            return mlp_triple_table(A, B, C, p["b"], p["W"], p["c"])
        m = len(rows)
        out = numpy.zeros((m, m, m, p["W"].shape[0]), dtype=A.dtype)
        W_T = numpy.ascontiguousarray(p["W"].T)
        # For each p2, the rectangle of the p1 and p3 that its triples use.
        order = numpy.argsort(triples[:, 1], kind="stable")
        triples = triples[order]
        seconds, starts = numpy.unique(triples[:, 1], return_index=True)
        for second, group in zip(seconds, numpy.split(triples, starts[1:])):
            firsts, thirds = numpy.unique(group[:, 0]), numpy.unique(group[:, 2])
            hidden = (B[second] + C[thirds] + p["b"])[None] + A[firsts, None]
            numpy.maximum(hidden, 0, out=hidden)
            out[firsts[:, None], second, thirds[None, :]] = hidden @ W_T + p["c"]
        return numpy.moveaxis(out, -1, 0)

    # -- scores of tuples and their gradient -------------------------------------

    def scores(self, scorer: str, rows: numpy.ndarray) -> Tuple[numpy.ndarray, tuple]:
        """Scores (E, outputs) of E position tuples given as rows (E, slots),
        with what `backprop` needs."""
        slots = [self._part(scorer, k, rows[:, k]) for k in range(rows.shape[1])]
        scores, cache = self.kinds[scorer].scores(self.params[scorer], slots)
        return scores, (scorer, rows, cache)

    def backprop(self, cache: tuple, d_scores: numpy.ndarray) -> None:
        """Accumulate the gradient of d_scores (E, outputs), for the tuples
        `scores` returned with `cache`."""
        scorer, rows, kind_cache = cache
        d_slots = self.kinds[scorer].backprop(self.params[scorer], self.d_params[scorer],
                                              kind_cache, d_scores)
        first, _ = self.layout[scorer]
        for k, d_slot in enumerate(d_slots):
            numpy.add.at(self.d_parts, (rows[:, k], first + k, slice(0, self.widths[scorer])),
                         d_slot)

    def add_event_grads(self, scorer: str, rows: numpy.ndarray, outputs: numpy.ndarray,
                        coefficients: numpy.ndarray) -> None:
        """The gradient of sum_e coefficients[e] * score(rows[e])[outputs[e]]."""
        if len(rows) == 0:
            return
        _, cache = self.scores(scorer, rows)
        d_scores = numpy.zeros((len(rows), self.params[scorer]["c"].shape[0]),
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
