"""Word representations of the full-strength recipe (Gómez-Rodríguez, Shi &
Lee 2018, after Kiperwasser & Goldberg 2016): word embeddings over a
vocabulary built from the training data, and a character BiLSTM whose vector
stands in for rare, unknown and dropped words.

- `spacy_nonmono.CharEncoder.v1`: word forms -> one vector each. The
  characters of a form, between a begin and an end marker, are embedded by
  hashing their code points (thinc's `HashEmbed`: no character inventory to
  build or save, unseen characters still get vectors), read by a BiLSTM
  (models/encoders.py), and the last forward and first backward states go
  through a tanh layer. Each distinct form of a batch is encoded once; every
  time step is one matrix product over all the batch's forms.
- `spacy_nonmono.WordEmbed.v1`: docs -> one vector per token, a spaCy
  tok2vec. Known words (normalised form seen `min_freq` times in training)
  read a row of an embedding table. With `combine = "replace"` (the MH4
  paper's recipe) the others read the character encoder instead (or one
  learned unknown-word vector without one); with `"sum"` or `"concat"`
  (the CoNLL 2017-2018 winners' recipe: Dozat et al. 2017, UDPipe 2) every
  word reads its characters too, added to its row or beside it, and the
  others read a learned unknown-word row. In training a known word of count
  c keeps its row with probability c / (c + word_dropout) and is an unknown
  word otherwise (word dropout), and a whole token vector is zeroed with
  probability `token_dropout` (block dropout; the rest scaled up).
  With `vectors` (`StaticVectors` below), the pipeline's static vectors,
  frozen and projected to the width by a learned matrix, are added to every
  token's vector: a third source, learned from raw text, that the training
  treebank does not limit.
- `spacy_nonmono.StaticVectors.v1`: docs -> (n_tokens, nO), the vectors of
  the docs' vocab (`nlp.vocab.vectors`, filled by `[initialize] vectors`; a
  table, or floret's hashed subword rows) times a learned projection. The
  table stays in the vocab (saved once, with it) and never changes (on a GPU
  it stays on the device: a batch gathers its tokens' rows there); a token
  the table lacks reads zeros and sends no gradient. spaCy's own
  `StaticVectors` computes the same vectors, but its gradient takes a token
  the table lacks for the table's last row (spaCy 3.8).

The vocabulary is built before the pipeline is initialized, from the whole
training corpus, by the `spacy_nonmono.count_words.v1` callback in
`[initialize.before_init]` (a layer's own initialize only sees a sample of
ten docs). It is stored in the layer's attrs, so it is saved and loaded (and
pickled) with the model. A layer initialized without counts builds its
vocabulary from the docs it is initialized with, and warns.

The dropouts are fixed by the config; `training.dropout` does not change them.
"""
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Sequence

import numpy
from spacy.attrs import ORTH
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vectors import Mode
from spacy.util import registry
from thinc.api import HashEmbed, Model, glorot_uniform_init, uniform_init
from thinc.types import Floats2d
from thinc.util import get_array_module

from .encoders import BiLSTM, check_rate
from .floret import floret_vectors

# Hashed ids of the markers around a word's characters: past the last code
# point, so no character shares them.
BEGIN, END = 0x110000, 0x110001
# The name of the word-embedding layer, which the count_words callback looks for.
WORD_EMBED = "word_embed"
# How a word's character vector meets its row (WordEmbed's `combine`).
COMBINE = ("replace", "sum", "concat")
_DIGIT = re.compile(r"\d")


def normalize_form(text: str) -> str:
    """The vocabulary's key of a word: lowercased, every digit a 0."""
    return _DIGIT.sub("0", text.lower())


# -- characters ---------------------------------------------------------------------


@registry.architectures("spacy_nonmono.CharEncoder.v1")
def CharEncoder(
    width: int,
    char_width: int = 64,
    lstm_width: int = 128,
    depth: int = 2,
    rows: int = 2000,
    dropout: float = 0.0,
    max_chars: int = 40,
) -> Model[List[str], Floats2d]:
    """A character BiLSTM word encoder: a list of forms -> (n_forms, width).

    width: the output width (a tanh layer over the BiLSTM's final states).
    char_width: the width of the character embeddings.
    lstm_width: the BiLSTM's width, both directions (even).
    depth: the BiLSTM's layers.
    rows: rows of the hashed character table.
    dropout: dropout on the input of each BiLSTM layer, in training.
    max_chars: the characters read of a longer form: its first and last
        max_chars / 2 (a URL or a run of 100,000 letters costs no more than
        a long word; a word's prefixes and endings are what is kept).
    """
    _check_width("CharEncoder", "width", width)
    _check_width("CharEncoder", "max_chars", max_chars)
    _check_width("CharEncoder", "char_width", char_width)
    _check_width("CharEncoder", "rows", rows)
    chars = HashEmbed(char_width, rows, seed=7)
    lstm = BiLSTM(lstm_width, depth=depth, nI=char_width, layer_dropout=dropout)
    return Model(
        "char_encoder",
        _char_forward,
        init=_char_init,
        layers=[chars, lstm],
        dims={"nO": width, "nI": lstm_width},
        params={"W": None, "b": None},
        attrs={"max_chars": max_chars},
    )


def bounded(form: str, max_chars: int) -> str:
    """The characters of a form a CharEncoder reads: all of them, or the
    first and last max_chars // 2 (and one more at the end if odd)."""
    if len(form) <= max_chars:
        return form
    head = max_chars // 2
    return form[:head] + form[len(form) - (max_chars - head):]


def _char_init(model: Model, X=None, Y=None) -> None:
    for layer in model.layers:
        layer.initialize()
    nO, nI = model.get_dim("nO"), model.get_dim("nI")
    if not model.has_param("W"):
        model.set_param("W", glorot_uniform_init(model.ops, (nO, nI)))
        model.set_param("b", model.ops.alloc1f(nO))


def _char_forward(model: Model, forms: Sequence[str], is_train: bool):
    ops = model.ops
    chars, lstm = model.layers
    nO, nI = model.get_dim("nO"), model.get_dim("nI")
    if not len(forms):
        return ops.alloc2f(0, nO), lambda dY: []
    forms = [bounded(form, model.attrs["max_chars"]) for form in forms]
    lengths = [len(form) + 2 for form in forms]
    ids = numpy.fromiter((c for form in forms for c in (BEGIN, *map(ord, form), END)),
                         dtype="uint64", count=sum(lengths))
    vectors, backprop_chars = chars(ops.asarray(ids, dtype="uint64"), is_train)
    states, backprop_lstm = lstm(ops.unflatten(vectors, ops.asarray1i(lengths)), is_train)
    half = nI // 2
    # The forward direction's last state and the backward direction's first.
    finals = ops.xp.vstack([ops.xp.concatenate((S[-1, :half], S[0, half:])) for S in states])
    W, b = model.get_param("W"), model.get_param("b")
    Y = ops.xp.tanh(ops.gemm(finals, W, trans2=True) + b)

    def backprop(dY: Floats2d) -> List:
        d_pre = dY * (1 - Y * Y)
        model.inc_grad("W", ops.gemm(d_pre, finals, trans1=True))
        model.inc_grad("b", d_pre.sum(axis=0))
        d_finals = ops.gemm(d_pre, W)
        d_states = [ops.alloc2f(*S.shape) for S in states]
        for dS, d in zip(d_states, d_finals):
            dS[-1, :half] = d[:half]
            dS[0, half:] = d[half:]
        backprop_chars(ops.flatten(backprop_lstm(d_states)))
        return []

    return Y, backprop


# -- words --------------------------------------------------------------------------


@registry.architectures("spacy_nonmono.WordEmbed.v1")
def WordEmbed(
    width: int,
    chars: Optional[Model[List[str], Floats2d]] = None,
    min_freq: int = 5,
    word_dropout: float = 2.5,
    token_dropout: float = 0.0,
    vocabulary: bool = True,
    vectors: Optional[Model[List[Doc], Floats2d]] = None,
    combine: str = "replace",
) -> Model[List[Doc], List[Floats2d]]:
    """Vocabulary embeddings and a character encoder: docs -> one
    (len(doc), nO) array each (nO = width, or 2 * width with "concat").

    width: the rows' width (a character encoder's width must be the same).
    chars: the encoder of words without an embedding (unknown, rare or
        dropped): `spacy_nonmono.CharEncoder.v1`; None: one learned vector.
    min_freq: the training count a normalised form needs to get a row.
    word_dropout: alpha of the word dropout, keep probability c / (c + alpha)
        for a word of training count c, in training (0: off).
    token_dropout: the probability of zeroing a whole token vector, in training.
    vocabulary: False: no embedding table, every word reads `chars` (the
        character encoder alone as a tok2vec).
    vectors: the pipeline's static vectors projected to `width`
        (`spacy_nonmono.StaticVectors.v1`), added to every token's vector
        (to its row's half with "concat"); None: none. The pipeline needs
        vectors (`[initialize] vectors`).
    combine: "replace": the characters only for words without a row
        (unknown, rare or dropped); "sum": every word's characters added to
        its row; "concat": every word's characters beside its row. Each
        distinct form of a batch is encoded once in every case.
    """
    _check_width("WordEmbed", "width", width)
    _check_width("WordEmbed", "min_freq", min_freq)
    if not isinstance(word_dropout, (int, float)) or isinstance(word_dropout, bool) \
            or word_dropout < 0:
        raise ValueError(f"WordEmbed: word_dropout must be a number >= 0; got {word_dropout!r}.")
    check_rate("WordEmbed", "token_dropout", token_dropout)
    for name, layer in (("character encoder", chars), ("static vectors' projection", vectors)):
        if layer is not None and layer.has_dim("nO") and layer.get_dim("nO") != width:
            raise ValueError(f"WordEmbed: the {name}'s width ({layer.get_dim('nO')}) "
                             f"must be the word vectors' width ({width}).")
    if not vocabulary and chars is None:
        raise ValueError("WordEmbed: without a vocabulary every word reads the character "
                         "encoder: give `chars`.")
    if combine not in COMBINE:
        raise ValueError(f"WordEmbed: combine must be one of {', '.join(COMBINE)}; "
                         f"got {combine!r}.")
    if combine != "replace" and (chars is None or not vocabulary):
        raise ValueError(f"WordEmbed: combine = {combine!r} joins the characters and the "
                         "vocabulary's rows: give `chars` and keep `vocabulary`.")
    if vectors is not None:
        vectors.set_dim("nO", width)
    model = Model(
        WORD_EMBED,
        _word_forward,
        init=_word_init,
        layers=[layer for layer in (chars, vectors) if layer is not None],
        dims={"nO": 2 * width if combine == "concat" else width, "nE": width},
        params={"E": None},
        attrs={"min_freq": min_freq, "word_dropout": float(word_dropout),
               "token_dropout": float(token_dropout), "vocabulary": bool(vocabulary),
               "combine": combine,
               # form -> row of E, and each row's training count (set_word_counts)
               "rows": {}, "counts": [], "has_counts": False},
    )
    model.set_ref("chars", chars)
    model.set_ref("vectors", vectors)
    return model


def sublayer(model: Model, name: str) -> Optional[Model]:
    """A WordEmbed layer's "chars" or "vectors" layer, None where it has none."""
    return model.get_ref(name) if model.has_ref(name) else None


def set_word_counts(model: Model, counts: Counter) -> None:
    """Give a WordEmbed layer its vocabulary from training counts of raw word
    forms (before it is initialized): the normalised forms seen min_freq times."""
    if model.has_param("E") and model.attrs["has_counts"]:
        raise ValueError("WordEmbed: the vocabulary of a trained layer cannot change.")
    normalised = Counter()
    for form, n in counts.items():
        normalised[normalize_form(form)] += n
    kept = sorted((f for f, n in normalised.items() if n >= model.attrs["min_freq"]),
                  key=lambda f: (-normalised[f], f))
    model.attrs["rows"] = {form: row for row, form in enumerate(kept)}
    model.attrs["counts"] = [normalised[form] for form in kept]
    model.attrs["has_counts"] = True


def _word_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    chars, vectors = sublayer(model, "chars"), sublayer(model, "vectors")
    if chars is not None:
        chars.initialize()
    if vectors is not None:
        vectors.initialize(X=X)
    if model.has_param("E"):
        return
    if model.attrs["vocabulary"] and not model.attrs["has_counts"]:
        warnings.warn(
            "WordEmbed: no training counts were given (the spacy_nonmono.count_words.v1 "
            "callback in [initialize.before_init]); the vocabulary is built from the "
            f"{len(X or [])} docs the layer is initialized with.", stacklevel=2)
        set_word_counts(model, Counter(t.text for doc in X or [] for t in doc))
    # Unknown words read one extra row, the last, unless their characters
    # replace it.
    n_rows = len(model.attrs["rows"]) + (0 if _chars_replace(model) else 1)
    # Uniform in +-sqrt(3 / width): entries of variance 1 / width, vectors of norm ~1.
    width = model.get_dim("nE")
    bound = (3.0 / width) ** 0.5
    model.set_param("E", uniform_init(model.ops, (max(n_rows, 1), width), lo=-bound, hi=bound))


def _chars_replace(model: Model) -> bool:
    """Whether the characters stand in for the rows of words without one."""
    return sublayer(model, "chars") is not None and \
        model.attrs.get("combine", "replace") == "replace"


def _word_forward(model: Model, docs: List[Doc], is_train: bool):
    ops = model.ops
    xp = ops.xp
    nO, nE = model.get_dim("nO"), model.get_dim("nE")
    E = model.get_param("E")
    attrs = model.attrs
    combine = attrs.get("combine", "replace")
    texts = [t.text for doc in docs for t in doc]
    lengths = [len(doc) for doc in docs]
    rows = numpy.full(len(texts), -1, dtype="int64")
    if attrs["vocabulary"]:
        table = attrs["rows"]
        rows[:] = [table.get(normalize_form(text), -1) for text in texts]
        if is_train and attrs["word_dropout"] > 0:
            known = numpy.flatnonzero(rows >= 0)
            counts = numpy.asarray(attrs["counts"], dtype="f")[rows[known]]
            keep = numpy.random.random_sample(len(known)) < counts / (counts + attrs["word_dropout"])
            rows[known[~keep]] = -1
    chars, vectors = sublayer(model, "chars"), sublayer(model, "vectors")
    if not _chars_replace(model):
        rows[rows < 0] = E.shape[0] - 1     # the unknown-word row
    known = rows >= 0
    # The words whose characters are read: those without a row, or all.
    spelled = numpy.flatnonzero(~known) if combine == "replace" else numpy.arange(len(texts))
    rowed = numpy.flatnonzero(known)
    Y = ops.alloc2f(len(texts), nO)
    R = Y[:, :nE]               # the rows' part (all of Y but with "concat")
    R[rowed] = E[rows[rowed]]
    backprop_chars = None
    if chars is not None and len(spelled):
        forms, inverse = numpy.unique(numpy.asarray(texts, dtype=object)[spelled],
                                      return_inverse=True)
        form_vectors, backprop_chars = chars(list(forms), is_train)
        if combine == "concat":
            Y[:, nE:] = form_vectors[inverse]
        else:
            Y[spelled] += form_vectors[inverse]
    backprop_vectors = None
    if vectors is not None:
        static, backprop_vectors = vectors(docs, is_train)
        R += static
    mask = None
    if is_train and attrs["token_dropout"] > 0:
        p = attrs["token_dropout"]
        mask = (numpy.random.random_sample(len(texts)) >= p).astype("f") / (1 - p)
        mask = ops.asarray(mask)[:, None]
        Y *= mask

    def backprop(dYs: List[Floats2d]) -> List:
        dY = ops.flatten(dYs) if dYs else ops.alloc2f(0, nO)
        if mask is not None:
            dY = dY * mask
        dR = dY[:, :nE]
        dE = ops.alloc2f(*E.shape)
        xp.add.at(dE, rows[rowed], dR[rowed])
        if backprop_chars is not None:
            d_spelled = dY[:, nE:] if combine == "concat" else dY[spelled]
            d_forms = ops.alloc2f(len(forms), chars.get_dim("nO"))
            xp.add.at(d_forms, inverse, d_spelled)
            backprop_chars(d_forms)
        model.inc_grad("E", dE)
        if backprop_vectors is not None:
            backprop_vectors(ops.xp.ascontiguousarray(dR))
        return []

    return ops.unflatten(Y, ops.asarray1i(lengths)), backprop


# -- static vectors -----------------------------------------------------------------


@registry.architectures("spacy_nonmono.StaticVectors.v1")
def StaticVectors(nO: Optional[int] = None, nM: Optional[int] = None) -> Model[List[Doc], Floats2d]:
    """The static vectors of the docs' vocab, frozen, times a learned
    projection: docs -> (n_tokens, nO) over all their tokens.

    nO: the output width (a WordEmbed layer sets its own).
    nM: the vectors' width (read from the vocab at initialization).
    """
    return Model("static_vectors", _vectors_forward, init=_vectors_init,
                 dims={"nO": nO, "nM": nM}, params={"W": None})


def _vectors_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    if model.has_param("W"):
        return
    if not X:
        raise ValueError("StaticVectors: the projection is sized by the pipeline's vectors: "
                         "initialize the layer with docs.")
    width = X[0].vocab.vectors.shape[1]
    if width == 0:
        raise ValueError("StaticVectors: the pipeline has no static vectors: give them in "
                         "[initialize] vectors (e.g. --paths.vectors with a folder made by "
                         "`spacy init vectors`), or take the vectors layer out of the config.")
    model.set_dim("nM", width)
    model.set_param("W", glorot_uniform_init(model.ops, (model.get_dim("nO"), width)))


def token_vectors(docs: Sequence[Doc]):
    """The static vectors of the docs' tokens, (n_tokens, nM) float32 where
    the table is (on the device once `nlp.initialize` has moved it to the
    current ops); a token the table lacks reads zeros. Only the tokens' rows
    are gathered: the table itself never leaves its device."""
    table = docs[0].vocab.vectors
    attr = getattr(table, "attr", ORTH)
    keys = numpy.concatenate([doc.to_array(attr) for doc in docs]).astype("uint64")
    xp = get_array_module(table.data)
    if table.mode == Mode.floret:
        if xp is numpy:     # in C (models/floret.pyx): spaCy's get_batch, faster
            return floret_vectors(table, keys)
        return table.get_batch(keys).astype("f", copy=False)
    # The rows on the host, from the table's key -> row dict (Vectors.find
    # would build them on the table's device, to be copied back).
    key2row = table.key2row
    rows = numpy.fromiter((key2row.get(int(key), -1) for key in keys), dtype="i",
                          count=len(keys))
    missing = rows < 0
    V = table.data[xp.asarray(numpy.where(missing, 0, rows))].astype("f", copy=False)
    V[xp.asarray(missing)] = 0.0
    return V


def _vectors_forward(model: Model, docs: List[Doc], is_train: bool):
    ops = model.ops
    W = model.get_param("W")
    if not sum(len(doc) for doc in docs):
        return ops.alloc2f(0, model.get_dim("nO")), lambda dY: []
    if docs[0].vocab.vectors.shape[1] != model.get_dim("nM"):
        raise ValueError(f"StaticVectors: the pipeline's vectors have width "
                         f"{docs[0].vocab.vectors.shape[1]}, the projection reads "
                         f"{model.get_dim('nM')}: these are not the vectors it was trained on.")
    # A host table's rows are copied to the device here, a device table's stay.
    V = ops.asarray2f(token_vectors(docs))
    Y = ops.gemm(V, W, trans2=True)

    def backprop(dY: Floats2d) -> List:
        model.inc_grad("W", ops.gemm(dY, V, trans1=True))
        return []

    return Y, backprop


# -- the vocabulary callback ------------------------------------------------------


@registry.callbacks("spacy_nonmono.count_words.v1")
def count_words(path: Optional[Path]) -> Callable[[Language], Language]:
    """An `[initialize.before_init]` callback: count the word forms of the
    training corpus at `path` (a .spacy file or folder, as `spacy train`
    reads) and give the counts to every WordEmbed layer of the pipeline."""

    def before_init(nlp: Language) -> Language:
        from spacy.training import Corpus

        if path is None or not Path(path).exists():
            raise ValueError(f"spacy_nonmono.count_words.v1: no training corpus at {path!r} "
                             "(set paths.train).")
        counts = Counter(t.text for eg in Corpus(path)(nlp) for t in eg.reference)
        for layer in word_embed_layers(nlp):
            set_word_counts(layer, counts)
        return nlp

    return before_init


def word_embed_layers(nlp: Language) -> Iterable[Model]:
    """Every WordEmbed layer in the pipeline's models (each once)."""
    seen = set()
    for _, pipe in nlp.components:
        model = getattr(pipe, "model", None)
        if not isinstance(model, Model):
            continue
        for node in model.walk():
            if node.name == WORD_EMBED and node.id not in seen:
                seen.add(node.id)
                yield node


def _check_width(name: str, setting: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: {setting} must be a positive integer; got {value!r}.")

