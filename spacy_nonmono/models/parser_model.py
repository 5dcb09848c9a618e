"""The greedy parser's model, in the style of spaCy's TransitionBasedParser.

tok2vec gives one vector per token. A precomputable affine layer ("lower")
computes once per batch every token's contribution to the hidden layer for
every context slot; a state's hidden vector is the sum of its slots'
contributions plus a bias, then maxout; a linear layer ("upper") scores the
moves. The artificial root node has its own learned vector, appended after
the batch's tokens.
"""
from typing import List, Optional

from spacy.ml._precomputable_affine import PrecomputableAffine
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, list2array, zero_init, normal_init
from thinc.types import Floats2d


@registry.architectures("spacy_nonmono.NonMonoParserModel.v1")
def build_parser_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 64,
    maxout_pieces: int = 2,
    n_context: Optional[int] = None,
    nO: Optional[int] = None,
) -> Model:
    """Build the parser model.

    tok2vec: any spaCy tok2vec layer (or a Tok2VecListener).
    hidden_width, maxout_pieces: size of the hidden maxout layer.
    n_context: number of context slots; set by the component from its
        transition system when left empty.
    nO: number of moves; set by the component once the labels are known.
    """
    t2v_width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
    lower = PrecomputableAffine(nO=hidden_width, nF=n_context, nI=t2v_width, nP=maxout_pieces)
    lower.name = "lower"
    upper = Linear(nO=nO, nI=hidden_width, init_W=zero_init)
    upper.name = "upper"
    token_vectors = chain(tok2vec, list2array())
    return Model(
        "nonmono_parser_model",
        forward,
        init=init,
        layers=[token_vectors, lower, upper],
        refs={"tok2vec": tok2vec, "token_vectors": token_vectors, "lower": lower, "upper": upper},
        params={"root": None},
        dims={"nI": t2v_width},
    )


def init(model: Model, X=None, Y=None) -> None:
    tok2vec = model.get_ref("tok2vec")
    lower = model.get_ref("lower")
    upper = model.get_ref("upper")
    if X is not None:
        model.get_ref("token_vectors").initialize(X=X)
    if not lower.has_dim("nI"):
        lower.set_dim("nI", tok2vec.get_dim("nO"))
    nI = lower.get_dim("nI")
    model.set_dim("nI", nI)
    if not model.has_param("root"):
        model.set_param("root", normal_init(model.ops, (1, nI)))
    lower.initialize()
    if upper.has_dim("nO"):
        upper.initialize()


def forward(model: Model, docs: List[Doc], is_train: bool):
    """Return the precomputed token table, shape (n_rows + 1, nF, nH, nP):
    row 0 is the per-slot padding, rows 1.. the batch's tokens in order, then
    the root. A state's hidden pre-activations are the lower bias plus the
    sum over slots f of table[row_f + 1, f].

    The backward pass takes (d_table, d_bias): the gradient of the whole
    table (scatter the states' gradients into it) and of the lower bias. As
    the table is linear in the token vectors, this costs two matrix products
    over the batch's tokens, however many transitions read them.
    """
    lower = model.get_ref("lower")
    ops = model.ops
    tokvecs, backprop_tok2vec = model.get_ref("token_vectors")(docs, is_train)
    n_tokens = tokvecs.shape[0]
    X = ops.xp.vstack((tokvecs, model.get_param("root")))
    table, _ = lower(X, is_train)

    def backprop(d_table_bias):
        d_table, d_bias = d_table_bias
        W = lower.get_param("W")                      # (nF, nH, nP, nI)
        nI = W.shape[-1]
        d_rows = d_table[1:].reshape((X.shape[0], -1))
        lower.inc_grad("pad", d_table[:1])
        lower.inc_grad("b", d_bias)
        lower.inc_grad("W", ops.gemm(d_rows, X, trans1=True).reshape(W.shape))
        dX = ops.gemm(d_rows, W.reshape((-1, nI)))
        model.inc_grad("root", dX[n_tokens:])
        return backprop_tok2vec(dX[:n_tokens])

    return table, backprop
