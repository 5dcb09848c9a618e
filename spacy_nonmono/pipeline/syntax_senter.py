"""`nonmono_syntax_senter`: sentences decided with syntax, over whole texts.

Where punctuation does not mark sentences (the PROIEL treebanks, speech,
OCR), a per-word senter guesses each boundary on its own. This one parses:
a first-order model (`spacy_nonmono.SentenceHeads.v1`) scores every word's
head across the whole text, and the boundaries are those of the best
analysis of the text into sentences of at most `max_length` words, each a
projective tree with one root (`graph/segmentation.pyx`: exact, O(n L²)).
A boundary falls where the words on both sides are complete trees, as in
joint segmentation and parsing (Björkelund et al. 2016), while the
pipeline's parser still parses each sentence as it is configured to.

Training: each word's head, or its being a sentence's root, under a softmax
over the words within `max_length - 1` and the root slot (log-loss), on
training docs that hold several consecutive sentences (gold heads never
cross a sentence, so the model learns where trees end). The component is a
`nonmono_senter` otherwise: same scorer (`sents_f`), boundaries set before
it are kept (`overwrite = false`), saved and loaded the same way.
"""
from typing import Callable, List, Optional

import numpy
from spacy.language import Language
from spacy.pipeline.senter import senter_score
from spacy.tokens import Doc
from thinc.api import Model

from ..graph.segmentation import best_segmentation
from ..models.sentence_heads import masked_log_softmax
from .senter import DEFAULT_MAX_LENGTH, BoundedSentenceRecognizer

DEFAULT_SYNTAX_SENTER_MODEL = {
    "@architectures": "spacy_nonmono.SentenceHeads.v1", "width": 128, "dropout": 0.25,
    "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None,
                "width": 96, "depth": 4, "embed_size": 2000, "window_size": 1,
                "maxout_pieces": 3, "subword_features": True}}


class SyntaxSentenceRecognizer(BoundedSentenceRecognizer):
    """Sentences as the best analysis of the text into trees (see the module)."""

    def __init__(self, vocab, model: Model, name: str = "senter", *, overwrite: bool = False,
                 scorer: Optional[Callable] = senter_score,
                 max_length: Optional[int] = DEFAULT_MAX_LENGTH):
        super().__init__(vocab, model, name, overwrite=overwrite, scorer=scorer,
                         max_length=max_length)

    @property
    def max_length(self) -> int:
        return self.model.attrs["max_length"]

    @max_length.setter
    def max_length(self, value: Optional[int]) -> None:
        if value is None:
            raise ValueError("The syntax senter's sentences are always bounded (its chart "
                             "spans at most max_length words): give a number of words.")
        self.model.attrs["max_length"] = int(value)

    def predict(self, docs: List[Doc]) -> List[numpy.ndarray]:
        """Each doc's sentence starts."""
        if not any(len(doc) for doc in docs):
            return [numpy.zeros(0, dtype="int64") for _ in docs]
        bands = self.model.predict(docs)
        L = self.max_length
        starts = []
        for doc, band in zip(docs, bands):
            if not len(doc):
                starts.append(numpy.zeros(0, dtype="int64"))
                continue
            preset = None if self.cfg["overwrite"] else \
                doc.to_array("SENT_START").astype("int64")
            scores = masked_log_softmax(self.model.ops.to_numpy(band), L)
            starts.append(best_segmentation(scores, L, preset)[0])
        return starts

    def set_annotations(self, docs, batch_starts) -> None:
        if isinstance(docs, Doc):
            docs = [docs]
        for doc, starts in zip(docs, batch_starts):
            is_start = numpy.zeros(len(doc), dtype=bool)
            is_start[starts] = True
            for token, value in zip(doc, is_start.tolist()):
                if self.cfg["overwrite"] or token.is_sent_start is None:
                    token.is_sent_start = value

    def get_loss(self, examples, bands):
        """The log-loss of each word's gold head (or its being a root) and
        its gradient for the bands; words without a gold head, or with one
        max_length or more words away, have none."""
        ops = self.model.ops
        L = self.max_length
        loss, d_bands = 0.0, []
        for eg, band in zip(examples, bands):
            log_p = masked_log_softmax(ops.to_numpy(band), L)
            n = log_p.shape[0]
            d = numpy.exp(log_p)
            target = numpy.full(n, -1, dtype="int64")
            for m, head in enumerate(eg.get_aligned("HEAD")):
                if head is not None and abs(head - m) < L:
                    target[m] = L - 1 + head - m
            rows = numpy.flatnonzero(target >= 0)
            loss -= float(log_p[rows, target[rows]].sum())
            d[rows, target[rows]] -= 1.0
            d[target < 0] = 0.0
            d_bands.append(ops.asarray2f(d.astype("float32")))
        return loss, d_bands


@Language.factory(
    "nonmono_syntax_senter",
    assigns=["token.is_sent_start"],
    default_config={"model": DEFAULT_SYNTAX_SENTER_MODEL, "overwrite": False,
                    "scorer": {"@scorers": "spacy.senter_scorer.v1"},
                    "max_length": DEFAULT_MAX_LENGTH},
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_nonmono_syntax_senter(nlp: Language, name: str, model: Model, overwrite: bool,
                               scorer: Optional[Callable], max_length: int):
    """Sentences decided with syntax: the best analysis of the whole text
    into sentences of at most `max_length` words, each one projective tree
    under first-order head scores (see the module)."""
    return SyntaxSentenceRecognizer(nlp.vocab, model, name, overwrite=overwrite,
                                    scorer=scorer, max_length=max_length)
