"""`nonmono_positional_tagger`: an XPOS tagger that predicts a positional
tag one position at a time.

Some treebanks' XPOS is positional: each character is one category (Latin
PROIEL and Perseus, `v3spia---`: part of speech, person, number, tense, mood,
voice, gender, case, degree; Czech's PDT tags likewise). A tagger of whole
tags (spaCy's `tagger`) chooses among every combination seen in training,
and never predicts one it has not seen; this one has a softmax per position
over the characters seen there and writes the tag its positions spell, so a
combination absent from training can still be right, and every position
learns from every word.

It is spaCy's `Tagger` (same settings, scorer, saving, `token.tag_`) with
another output and loss: the model gives, per token, one score per (position,
character) (`spacy_nonmono.PositionalTagger.v1`: a linear layer on any
tok2vec); the loss is the sum over positions of the softmax log-loss of the
gold character (with `label_smoothing`). A shorter tag is padded with the
empty character, so tags of several lengths work too. The labels
(`tagger.labels`) are the whole tags seen in training; the positions'
characters are taken from them.
"""
from typing import Callable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline.tagger import Tagger, tagger_score
from spacy.util import registry
from thinc.api import Linear, Model, chain, with_array, zero_init
from thinc.types import Floats2d

@registry.architectures("spacy_nonmono.PositionalTagger.v1")
def PositionalTaggerModel(tok2vec: Model, nO: Optional[int] = None) -> Model:
    """Scores of each (position, character) of a positional tag: docs -> one
    (len(doc), nO) array each; nO is set by the component from its labels."""
    output = Linear(nO=nO, init_W=zero_init)
    model = chain(tok2vec, with_array(output))
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("output", output)
    return model


def tag_positions(tags: Sequence[str]) -> List[List[str]]:
    """The characters seen at each position of the tags, sorted ("" where a
    shorter tag has ended)."""
    length = max((len(tag) for tag in tags), default=0)
    return [sorted({tag[k] if k < len(tag) else "" for tag in tags}) for k in range(length)]


class PositionalTagger(Tagger):
    """spaCy's Tagger with one softmax per tag position (see the module)."""

    @property
    def positions(self) -> List[List[str]]:
        return self._layout()[0]

    def _blocks(self) -> List[Tuple[int, int]]:
        return self._layout()[1]

    def _layout(self):
        """The positions' characters and each position's columns of the
        scores, derived from the labels once (labels only grow)."""
        cached = getattr(self, "_cached_layout", None)
        if cached is None or cached[0] != len(self.labels):
            positions = tag_positions(self.labels)
            blocks, start = [], 0
            for chars in positions:
                blocks.append((start, start + len(chars)))
                start += len(chars)
            self._cached_layout = cached = (len(self.labels), positions, blocks)
        return cached[1], cached[2]

    def predict(self, docs):
        n_positions = len(self.positions)
        if not any(len(doc) for doc in docs):
            return [numpy.zeros((0, n_positions), dtype="int32") for _ in docs]
        scores = self.model.predict(docs)
        guesses = []
        blocks = self._blocks()
        for doc_scores in scores:
            doc_scores = self.model.ops.to_numpy(doc_scores)
            guesses.append(numpy.stack(
                [doc_scores[:, start:end].argmax(axis=1) for start, end in blocks],
                axis=1).astype("int32") if len(doc_scores) else
                numpy.zeros((0, n_positions), dtype="int32"))
        return guesses

    def set_annotations(self, docs, batch_char_ids) -> None:
        positions = self.positions
        overwrite = self.cfg["overwrite"]
        for doc, char_ids in zip(docs, batch_char_ids):
            for token, ids in zip(doc, char_ids):
                if overwrite or not token.tag_:
                    token.tag_ = "".join(chars[i] for chars, i in zip(positions, ids))

    def get_loss(self, examples, scores) -> Tuple[float, List[Floats2d]]:
        ops = self.model.ops
        positions = self.positions
        index = [{char: k for k, char in enumerate(chars)} for chars in positions]
        smoothing = self.cfg["label_smoothing"]
        gold = []
        for eg in examples:
            for tag in eg.get_aligned("TAG", as_string=True):
                gold.append([-1] * len(positions) if not tag else
                            [index[k].get(tag[k] if k < len(tag) else "", -1)
                             for k in range(len(positions))])
        gold = numpy.asarray(gold, dtype="int64").reshape(-1, len(positions))
        S = ops.to_numpy(ops.flatten(scores)).astype("float64")
        d = numpy.zeros_like(S)
        loss = 0.0
        for k, (start, end) in enumerate(self._blocks()):
            block = S[:, start:end]
            P = numpy.exp(block - block.max(axis=1, keepdims=True))
            P /= P.sum(axis=1, keepdims=True)
            rows = numpy.flatnonzero(gold[:, k] >= 0)
            target = numpy.zeros_like(P[rows])
            if end - start > 1 and smoothing:
                target += smoothing / (end - start)
                target[numpy.arange(len(rows)), gold[rows, k]] += 1.0 - smoothing
            else:
                target[numpy.arange(len(rows)), gold[rows, k]] = 1.0
            d[rows, start:end] = P[rows] - target
            loss -= float((target * numpy.log(numpy.maximum(P[rows], 1e-30))).sum())
        lengths = ops.asarray1i([len(s) for s in scores])
        return loss, ops.unflatten(ops.asarray2f(d.astype("float32")), lengths)

    def initialize(self, get_examples, *, nlp=None, labels=None) -> None:
        from spacy.training import validate_get_examples

        validate_get_examples(get_examples, "PositionalTagger.initialize")
        if labels is None:
            labels = sorted({t.tag_ for eg in get_examples() for t in eg.y if t.tag_})
        for tag in labels:
            self.add_label(tag)
        self._require_labels()
        self.model.get_ref("output").set_dim("nO", sum(len(c) for c in self.positions))
        docs = [eg.x for _, eg in zip(range(10), get_examples())]
        self.model.initialize(X=docs)


@Language.factory(
    "nonmono_positional_tagger",
    assigns=["token.tag"],
    default_config={"model": {"@architectures": "spacy_nonmono.PositionalTagger.v1",
                              "nO": None,
                              "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2",
                                          "pretrained_vectors": None, "width": 96,
                                          "depth": 4, "embed_size": 2000, "window_size": 1,
                                          "maxout_pieces": 3, "subword_features": True}},
                    "overwrite": False, "neg_prefix": "!", "label_smoothing": 0.0,
                    "scorer": {"@scorers": "spacy.tagger_scorer.v1"}},
    default_score_weights={"tag_acc": 1.0},
)
def make_positional_tagger(nlp: Language, name: str, model: Model, overwrite: bool,
                           neg_prefix: str, label_smoothing: float,
                           scorer: Optional[Callable] = tagger_score) -> PositionalTagger:
    """An XPOS tagger predicting each position of a positional tag (see the module)."""
    return PositionalTagger(nlp.vocab, model, name, overwrite=overwrite, scorer=scorer,
                            neg_prefix=neg_prefix, label_smoothing=label_smoothing)
