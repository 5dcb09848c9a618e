"""The greedy parser's model, in the style of spaCy's TransitionBasedParser.

tok2vec gives one vector per token; the token table layer computes once per
batch every token's contribution to the hidden layer for every context slot
(`token_table.py`); the step model turns a state's context ids into move
scores (hidden bias, maxout, output layer: `step_model.py`). The artificial
root node has its own learned vector, appended after the batch's tokens.

The model's forward pass maps docs to the token table; decoders score states
through the step model (`model.get_ref("step")`) and hand the table's
gradient back as a `TableGrad`.
"""
from typing import List, Optional

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain, list2array, normal_init
from thinc.types import Floats2d

from .encoders import check_rate, vector_dropout_mask
from .scoring import scatter_hidden_grad

# The tok2vec of the shipped configs (spaCy's CNN), for every model default.
CNN_TOK2VEC_CONFIG = """
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""
# The component's default model block.
DEFAULT_CONFIG = f"""
[model]
@architectures = "spacy_nonmono.NonMonoParserModel.v1"
hidden_width = 64
maxout_pieces = 2

[model.tok2vec]
{CNN_TOK2VEC_CONFIG}"""
from .step_model import StepModel, TableGrad
from .token_table import TokenTable


@registry.architectures("spacy_nonmono.NonMonoParserModel.v1")
def build_parser_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 64,
    maxout_pieces: int = 2,
    n_context: Optional[int] = None,
    nO: Optional[int] = None,
    dropout: float = 0.0,
) -> Model:
    """Build the parser model.

    tok2vec: any spaCy tok2vec layer (or a Tok2VecListener).
    hidden_width, maxout_pieces: size of the hidden maxout layer.
    n_context: number of context slots; set by the component from its
        transition system when left empty.
    nO: number of moves; set by the component once the labels are known.
    dropout: dropout on the token vectors the token table reads (the
        encoder's output), in training; fixed by the config, as the global
        model's `dropout`.
    """
    check_rate("NonMonoParserModel", "dropout", dropout)
    t2v_width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
    table = TokenTable(nH=hidden_width, nP=maxout_pieces, nF=n_context, nI=t2v_width)
    step = StepModel(nH=hidden_width, nP=maxout_pieces, nO=nO)
    token_vectors = chain(tok2vec, list2array())
    return Model(
        "nonmono_parser_model",
        forward,
        init=init,
        layers=[token_vectors, table, step],
        refs={"tok2vec": tok2vec, "token_vectors": token_vectors, "table": table, "step": step},
        params={"root": None},
        dims={"nI": t2v_width},
        attrs={"vector_dropout": float(dropout)},
    )


def set_transition_dims(model: Model, n_context: int, n_moves: Optional[int]) -> None:
    """Size the model for a transition system: its context slots and (once
    the labels are known) its moves. A mismatch with an initialized model is
    a ValueError."""
    table, step = model.get_ref("table"), model.get_ref("step")
    if not table.has_dim("nF"):
        table.set_dim("nF", n_context)
    elif table.get_dim("nF") != n_context:
        raise ValueError(f"The model reads {table.get_dim('nF')} context slots but the "
                         f"transition system provides {n_context}.")
    if n_moves:
        if not step.has_dim("nO"):
            step.set_dim("nO", n_moves)
        elif step.get_dim("nO") != n_moves:
            raise ValueError(f"The model has {step.get_dim('nO')} outputs but the system has "
                             f"{n_moves} moves; labels cannot change after initialization.")


def is_initialized(model: Model) -> bool:
    return model.get_ref("step").has_param("W")


def init(model: Model, X=None, Y=None) -> None:
    tok2vec = model.get_ref("tok2vec")
    table = model.get_ref("table")
    step = model.get_ref("step")
    if X is not None:
        model.get_ref("token_vectors").initialize(X=X)
    if not table.has_dim("nI"):
        table.set_dim("nI", tok2vec.get_dim("nO"))
    nI = table.get_dim("nI")
    model.set_dim("nI", nI)
    if not model.has_param("root"):
        model.set_param("root", normal_init(model.ops, (1, nI)))
    fresh = not table.has_param("W")
    table.initialize()
    step.initialize()
    if fresh:
        _normalize_hidden(table, step)


def _normalize_hidden(table: Model, step: Model, n_states: int = 2000, tolerance: float = 0.01,
                      max_rounds: int = 10) -> None:
    """Scale the table's weights, then shift the hidden bias, so that for
    unit-normal token vectors read through random context slots the hidden
    layer's output has variance 1 and mean 0 (as spaCy's parser does at
    initialization: the maxout makes the right scale hard to guess)."""
    ops = table.ops
    nF, nH, nP, nI = (table.get_dim(d) for d in ("nF", "nH", "nP", "nI"))
    rng = numpy.random.default_rng(0)
    X = ops.asarray2f(rng.normal(size=(n_states, nI)).astype("f"))
    ids = rng.integers(0, n_states, size=(n_states, nF))
    slots = numpy.arange(nF)
    for _ in range(max_rounds):
        rows, _ = table(X, is_train=False)
        rows = ops.to_numpy(rows)[1:]
        unmaxed = rows[ids, slots].sum(axis=1) + ops.to_numpy(step.get_param("hidden_b"))
        hidden = unmaxed.max(axis=-1)
        var, mean = float(hidden.var()), float(hidden.mean())
        if abs(var - 1.0) >= tolerance:
            table.set_param("W", table.get_param("W") / var ** 0.5)
        elif abs(mean) >= tolerance:
            step.set_param("hidden_b", step.get_param("hidden_b") - mean)
        else:
            break


def forward(model: Model, docs: List[Doc], is_train: bool):
    """Return the token table, shape (n_rows + 1, nF, nH, nP), as host
    (numpy) float32: row 0 is the per-slot padding, rows 1.. the batch's
    tokens in order, then the root. The backward pass takes the `TableGrad`
    the step model's backward passes returned, joined."""
    ops = model.ops
    tokvecs, backprop_tok2vec = model.get_ref("token_vectors")(docs, is_train)
    n_tokens = tokvecs.shape[0]
    mask = vector_dropout_mask(model, tokvecs.shape, is_train)
    if mask is not None:
        tokvecs = tokvecs * mask
    X = ops.xp.vstack((tokvecs, model.get_param("root")))
    table, backprop_table = model.get_ref("table")(X, is_train)
    host_table = numpy.ascontiguousarray(ops.to_numpy(table), dtype="f")

    def backprop(grad: TableGrad):
        d_table = numpy.zeros_like(host_table)
        scatter_hidden_grad(d_table, grad.ids, grad.d_unmaxed)
        dX = backprop_table(ops.asarray(d_table))
        model.inc_grad("root", dX[n_tokens:])
        return backprop_tok2vec(dX[:n_tokens] if mask is None else dX[:n_tokens] * mask)

    return host_table, backprop
