"""Predicted tags as parser input (Dozat, Qi & Manning 2017: the tagger's
UPOS and XPOS embedded beside each word's vector).

`spacy_nonmono.TagInput.v1` wraps a tok2vec (usually the parser's
`Tok2VecListener` of the shared encoder): docs -> one array per doc, the
tok2vec's vector of each token followed by an embedding of each of its
annotations named in `attrs` (`POS`, `TAG`, `MORPH`: the morphologizer's and
tagger's predictions; any token attribute spaCy's `Doc.to_array` reads).
An annotation is embedded by hashing its value (thinc's `HashEmbed`: no
inventory to build or save; a value never seen still gets a vector), and an
unset one reads the same vector as a dropped one. In training each
annotation of each token is dropped with probability `dropout` (tag
dropout), so the parser does not trust the taggers blindly.

The annotations must be on the docs when the parser runs: in a pipeline the
taggers come before it, and in training they annotate the training docs
with their predictions, spaCy's `[training] annotating_components`, with the
shared `tok2vec` among them so that the taggers' listeners read it
(`configs.add_tag_input` writes both; docs/configuration.md). Put a BiLSTM
over it (`spacy_nonmono.BiLSTMEncoder.v1` with this layer as its tok2vec)
for a parser-only layer that reads the tags in context.
"""
from typing import List, Sequence

import numpy
from spacy.attrs import IDS
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import HashEmbed, Model
from thinc.types import Floats2d

from .encoders import check_rate

# The key a dropped (or unset) annotation is embedded as: spaCy's 0, "no value".
DROPPED = 0


@registry.architectures("spacy_nonmono.TagInput.v1")
def TagInput(
    tok2vec: Model[List[Doc], List[Floats2d]],
    attrs: Sequence[str] = ("POS", "TAG", "MORPH"),
    width: int = 32,
    rows: int = 2000,
    dropout: float = 0.33,
) -> Model[List[Doc], List[Floats2d]]:
    """The tok2vec's vectors with the tokens' annotations embedded beside
    them: docs -> one (len(doc), tok2vec's nO + len(attrs) * width) array each.

    tok2vec: the word vectors (a `spacy.Tok2VecListener.v1`, or any tok2vec).
    attrs: the token annotations read (spaCy attribute names, each once).
    width: the width of each annotation's embedding.
    rows: rows of each annotation's hashed table.
    dropout: the probability of dropping each annotation of each token, in
        training.
    """
    attrs = list(attrs)
    if not attrs:
        raise ValueError("TagInput: give at least one attribute in `attrs` (e.g. POS, TAG, "
                         "MORPH).")
    unknown = [a for a in attrs if not isinstance(a, str) or a.upper() not in IDS]
    if unknown:
        raise ValueError(f"TagInput: unknown token attributes {unknown}; e.g. POS, TAG, MORPH.")
    if len({a.upper() for a in attrs}) != len(attrs):
        raise ValueError(f"TagInput: each attribute once; got {attrs}.")
    for name, value in (("width", width), ("rows", rows)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"TagInput: {name} must be a positive integer; got {value!r}.")
    check_rate("TagInput", "dropout", dropout)
    tables = [HashEmbed(width, rows, seed=11 + k) for k in range(len(attrs))]
    model = Model("tag_input", _forward, init=_init, layers=[tok2vec, *tables],
                  dims={"nO": None},
                  attrs={"attrs": [a.upper() for a in attrs], "dropout": float(dropout),
                         "width": width})
    if tok2vec.has_dim("nO"):
        model.set_dim("nO", tok2vec.get_dim("nO") + len(attrs) * width)
    return model


def _init(model: Model, X=None, Y=None) -> None:
    tok2vec, *tables = model.layers
    tok2vec.initialize(X=X)
    for table in tables:
        table.initialize()
    model.set_dim("nO", tok2vec.get_dim("nO") + len(tables) * model.attrs["width"],
                  force=True)


def annotation_keys(docs: Sequence[Doc], attrs: Sequence[str]) -> numpy.ndarray:
    """(n_tokens, len(attrs)) uint64: the docs' token annotations, one column each."""
    if not docs:
        return numpy.zeros((0, len(attrs)), dtype="uint64")
    return numpy.concatenate([doc.to_array(list(attrs)).reshape(len(doc), len(attrs))
                              for doc in docs]).astype("uint64")


def _forward(model: Model, docs: List[Doc], is_train: bool):
    ops = model.ops
    tok2vec, *tables = model.layers
    vectors, backprop_tok2vec = tok2vec(docs, is_train)
    lengths = ops.asarray1i([len(doc) for doc in docs])
    nO, width = model.get_dim("nO"), model.attrs["width"]
    if not sum(len(doc) for doc in docs):
        return [ops.alloc2f(0, nO) for _ in docs], lambda dYs: backprop_tok2vec(
            [ops.alloc2f(0, nO - len(tables) * width) for _ in docs])
    keys = annotation_keys(docs, model.attrs["attrs"])
    p = model.attrs["dropout"]
    if is_train and p > 0:
        keys[numpy.random.random_sample(keys.shape) < p] = DROPPED
    flat = ops.flatten(vectors)
    n_vec = flat.shape[1]
    embedded, backprops = [], []
    for k, table in enumerate(tables):
        E, backprop_table = table(ops.asarray(numpy.ascontiguousarray(keys[:, k]),
                                              dtype="uint64"), is_train)
        embedded.append(E)
        backprops.append(backprop_table)
    Y = ops.xp.hstack([flat, *embedded])

    def backprop(dYs: List[Floats2d]) -> List:
        dY = ops.flatten(dYs)
        for k, backprop_table in enumerate(backprops):
            start = n_vec + k * width
            backprop_table(ops.xp.ascontiguousarray(dY[:, start:start + width]))
        return backprop_tok2vec(ops.unflatten(ops.xp.ascontiguousarray(dY[:, :n_vec]),
                                              lengths))

    return ops.unflatten(Y, lengths), backprop
