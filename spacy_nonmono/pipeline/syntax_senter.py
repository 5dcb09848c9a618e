"""`nonmono_syntax_senter`: sentences decided with syntax, over whole texts.

Where punctuation does not mark sentences (the PROIEL treebanks, speech,
OCR), a per-word senter guesses each boundary on its own. This one parses:
a first-order model (`spacy_nonmono.SentenceHeads.v1`) scores every word's
head across the whole text, and each word's log odds of starting a sentence
(spaCy's senter on the same vectors), and the boundaries are those of the
best analysis of the text into sentences of at most `max_length` words, each
a projective tree with one root, under both (`graph/segmentation.pyx`:
exact, O(n L²); the start scores weigh `start_weight`, 0 for syntax alone).
A boundary falls where the words on both sides are complete trees, as in
joint segmentation and parsing (Björkelund et al. 2016), while the
pipeline's parser still parses each sentence as it is configured to.

Training: each word's head, or its being a sentence's root, under a softmax
over the words within `max_length - 1` and the root slot (log-loss), and
whether it starts a sentence (log-loss of a sigmoid), on training docs that
hold several consecutive sentences (gold heads never cross a sentence, so
the model learns where trees end). The component is a
`nonmono_senter` otherwise: same scorer (`sents_f`), boundaries set before
it are kept (`overwrite = false`), saved and loaded the same way.
"""
from collections import Counter
from typing import Callable, List, Optional

import numpy
from spacy.language import Language
from spacy.pipeline.senter import senter_score
from spacy.tokens import Doc
from thinc.api import Model

from ..graph.segmentation import best_segmentation
from ..models.sentence_heads import masked_log_softmax
from .senter import DEFAULT_MAX_LENGTH, BoundedSentenceRecognizer
from .sentences import gold_trees

DEFAULT_SYNTAX_SENTER_MODEL = {
    "@architectures": "spacy_nonmono.SentenceHeads.v1", "width": 128, "dropout": 0.25,
    "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None,
                "width": 96, "depth": 4, "embed_size": 2000, "window_size": 1,
                "maxout_pieces": 3, "subword_features": True}}


class SyntaxSentenceRecognizer(BoundedSentenceRecognizer):
    """Sentences as the best analysis of the text into trees (see the module)."""

    def __init__(self, vocab, model: Model, name: str = "senter", *, overwrite: bool = False,
                 scorer: Optional[Callable] = senter_score,
                 max_length: Optional[int] = DEFAULT_MAX_LENGTH, start_weight: float = 1.0):
        super().__init__(vocab, model, name, overwrite=overwrite, scorer=scorer,
                         max_length=max_length)
        if isinstance(start_weight, bool) or not isinstance(start_weight, (int, float)) \
                or start_weight < 0:
            raise ValueError(f"start_weight must be a number >= 0, not {start_weight!r}")
        # A setting of the config, not of the trained weights: a pipeline
        # loaded with another start_weight decides with it.
        self.start_weight = float(start_weight)

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
        outputs = self.model.predict(docs)
        L = self.max_length
        starts = []
        for doc, output in zip(docs, outputs):
            if not len(doc):
                starts.append(numpy.zeros(0, dtype="int64"))
                continue
            output = self.model.ops.to_numpy(output)
            preset = None if self.cfg["overwrite"] else \
                doc.to_array("SENT_START").astype("int64")
            start_scores = self.start_weight * output[:, 2 * L - 1].astype("float64")
            starts.append(best_segmentation(masked_log_softmax(output, L), L, preset,
                                            start_scores)[0])
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

    def head_targets(self, examples) -> List[numpy.ndarray]:
        """Per doc, each word's column of the gold head in the band (L - 1
        for a root), -1 for a word of a sentence that cannot be trained on
        (longer than max_length, heads missing or not a tree: `gold_trees`)."""
        L = self.max_length
        targets = [numpy.full(len(eg.predicted), -1, dtype="int64") for eg in examples]
        for d, start, _, heads, _ in gold_trees(examples, L, "none", Counter()):
            for k, h in enumerate(heads):
                targets[d][start + k] = L - 1 if h == 0 else L - 1 + h - 1 - k
        return targets

    def get_loss(self, examples, outputs):
        """The log-loss of each word's gold head (or its being a root) and of
        its starting a sentence or not, and their gradient; a word of a
        sentence that cannot be trained on (`head_targets`) has no head loss,
        one without a gold boundary no start loss."""
        ops = self.model.ops
        L = self.max_length
        loss, d_outputs = 0.0, []
        targets = self.head_targets(examples)
        for k, (eg, output) in enumerate(zip(examples, outputs)):
            output = ops.to_numpy(output)
            log_p = masked_log_softmax(output, L)
            n = log_p.shape[0]
            d = numpy.zeros((n, 2 * L), dtype="float64")
            target = targets[k]
            rows = numpy.flatnonzero(target >= 0)
            loss -= float(log_p[rows, target[rows]].sum())
            d[rows, :2 * L - 1] = numpy.exp(log_p[rows])
            d[rows, target[rows]] -= 1.0
            gold = numpy.asarray([-1 if s is None else int(s == 1)
                                  for s in eg.get_aligned_sent_starts()], dtype="int64")
            rows = numpy.flatnonzero(gold >= 0)
            z = output[rows, 2 * L - 1].astype("float64")
            y = gold[rows]
            # log(1 + exp(-z)) for a start, log(1 + exp(z)) otherwise.
            loss += float(numpy.logaddexp(0.0, numpy.where(y == 1, -z, z)).sum())
            d[rows, 2 * L - 1] = numpy.exp(-numpy.logaddexp(0.0, -z)) - y   # sigmoid(z) - y
            d_outputs.append(ops.asarray2f(d.astype("float32")))
        return loss, d_outputs


@Language.factory(
    "nonmono_syntax_senter",
    assigns=["token.is_sent_start"],
    default_config={"model": DEFAULT_SYNTAX_SENTER_MODEL, "overwrite": False,
                    "scorer": {"@scorers": "spacy.senter_scorer.v1"},
                    "max_length": DEFAULT_MAX_LENGTH, "start_weight": 1.0},
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_nonmono_syntax_senter(nlp: Language, name: str, model: Model, overwrite: bool,
                               scorer: Optional[Callable], max_length: int,
                               start_weight: float):
    """Sentences decided with syntax: the best analysis of the whole text
    into sentences of at most `max_length` words, each one projective tree
    under first-order head scores, plus `start_weight` times the log odds of
    each sentence's first word starting one (see the module)."""
    return SyntaxSentenceRecognizer(nlp.vocab, model, name, overwrite=overwrite,
                                    scorer=scorer, max_length=max_length,
                                    start_weight=start_weight)
