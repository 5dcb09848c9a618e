"""`nonmono_senter`: spaCy's senter, with no sentence longer than a bound.

A global decoder's chart grows as n⁴ in the sentence's length, so a span the
senter leaves long costs far more per word than ordinary sentences: text
without punctuation (Gothic, Old Church Slavonic, transcripts, OCR) can leave
the senter finding few or no boundaries, and the parser then decodes windows
of `max_sentence_length` words. This component is spaCy's
`SentenceRecognizer` (same model, training, scores and serialization) whose
segmentation also keeps every sentence within `max_length` words: a longer
span is cut where the senter itself is likeliest to see boundaries. Under the
senter's per-token probabilities, the segmentation of a span with the most
likely boundaries, among those whose pieces are at most `max_length` words,
is the one whose chosen starts have the largest total log odds; a dynamic
program over the span finds it (`likeliest_starts`). Sentences the senter
finds within the bound are left as they are, and so are boundaries set
before it runs (gold sentences, `overwrite = false`).
"""
from typing import Callable, List, Optional

import numpy
from spacy.language import Language
from spacy.pipeline.senter import DEFAULT_SENTER_MODEL, SentenceRecognizer, senter_score
from spacy.tokens import Doc
from thinc.api import Model

# Spans from text without any boundary cue are cut into pieces of at most
# this many words: `python -m benchmarks text-cost` (docs/results/raw_text)
# measures the cost of unpunctuated text against this bound.
DEFAULT_MAX_LENGTH = 60


def likeliest_starts(log_odds: numpy.ndarray, max_length: int) -> Optional[List[int]]:
    """The positions 0 < p < n that start a piece, for the segmentation of a
    span of n words into pieces of at most `max_length` words whose starts
    have the largest sum of `log_odds[p]` (the log odds of word p starting a
    sentence; -inf where it may not). None when no such segmentation
    exists."""
    n = len(log_odds)
    # best[i]: the best score of a segmentation of words [0, i) whose last
    # piece ends at i; from[i]: where that last piece starts.
    best = numpy.full(n + 1, -numpy.inf)
    best[0] = 0.0
    came_from = numpy.zeros(n + 1, dtype="int64")
    for i in range(1, n + 1):
        low = max(0, i - max_length)
        j = low + int(numpy.argmax(best[low:i]))
        came_from[i] = j
        best[i] = best[j] + (log_odds[i] if i < n else 0.0)
    if not numpy.isfinite(best[n]):
        return None
    starts = []
    i = int(came_from[n])
    while i > 0:
        starts.append(i)
        i = int(came_from[i])
    return starts[::-1]


class BoundedSentenceRecognizer(SentenceRecognizer):
    """spaCy's senter whose sentences are at most `max_length` words (None:
    no bound); see the module's docstring."""

    def __init__(self, vocab, model: Model, name: str = "senter", *, overwrite: bool = False,
                 scorer: Optional[Callable] = senter_score,
                 max_length: Optional[int] = DEFAULT_MAX_LENGTH):
        super().__init__(vocab, model, name, overwrite=overwrite, scorer=scorer)
        if max_length is not None and max_length < 1:
            raise ValueError(f"max_length must be at least 1 (or null for no bound), "
                             f"not {max_length}")
        self.max_length = max_length

    def predict(self, docs):
        """The senter's guesses, with each doc's log odds of every word
        starting a sentence where sentences are bounded: (guesses, log odds)
        per doc."""
        if self.max_length is None or not any(len(doc) for doc in docs):
            return super().predict(docs)
        scores = self.model.predict(docs)
        guesses = self._scores2guesses(scores)
        return [(g, self._start_log_odds(s)) for g, s in zip(guesses, scores)]

    def _start_log_odds(self, scores) -> numpy.ndarray:
        scores = self.model.ops.to_numpy(scores).astype("float64")
        if self._outputs_probabilities():
            scores = numpy.log(numpy.clip(scores, 1e-12, 1.0))
        # Label 1 is "S" (starts a sentence), label 0 "I".
        return scores[:, 1] - scores[:, 0]

    def _outputs_probabilities(self) -> bool:
        # An unnormalized Softmax (spacy.Tagger.v2, normalize = false)
        # predicts logits; their difference is the same log odds.
        for node in self.model.walk():
            if "softmax_normalize" in node.attrs:
                return bool(node.attrs["softmax_normalize"])
        return True

    def set_annotations(self, docs, batch_tag_ids):
        if isinstance(docs, Doc):
            docs = [docs]
        if not batch_tag_ids or not isinstance(batch_tag_ids[0], tuple):
            return super().set_annotations(docs, batch_tag_ids)
        guesses = [doc_guesses for doc_guesses, _ in batch_tag_ids]
        # SENT_START before the senter: 1 a start, -1 not one, 0 unset.
        preset = [doc.to_array("SENT_START").astype("int64") for doc in docs]
        super().set_annotations(docs, guesses)
        if self.max_length is not None:
            for doc, (_, log_odds), fixed in zip(docs, batch_tag_ids, preset):
                self._bound(doc, log_odds, fixed)

    def _bound(self, doc: Doc, log_odds: numpy.ndarray, preset: numpy.ndarray) -> None:
        """Cut the doc's sentences longer than max_length at their likeliest
        boundaries; a word set not to start a sentence before the senter ran
        (and not overwritten) stays so."""
        for sent in list(doc.sents):
            if len(sent) <= self.max_length:
                continue
            odds = log_odds[sent.start:sent.end].copy()
            if not self.cfg["overwrite"]:
                odds[preset[sent.start:sent.end] == -1] = -numpy.inf
            starts = likeliest_starts(odds, self.max_length)
            for p in starts or ():
                doc[sent.start + p].is_sent_start = True


@Language.factory(
    "nonmono_senter",
    assigns=["token.is_sent_start"],
    default_config={"model": DEFAULT_SENTER_MODEL, "overwrite": False,
                    "scorer": {"@scorers": "spacy.senter_scorer.v1"},
                    "max_length": DEFAULT_MAX_LENGTH},
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_nonmono_senter(nlp: Language, name: str, model: Model, overwrite: bool,
                        scorer: Optional[Callable], max_length: Optional[int]):
    """spaCy's senter whose sentences are at most `max_length` words: a
    longer span is cut at the senter's likeliest boundaries (null: no
    bound). Same model, training and serialization as `senter`, so a
    trained `senter` loads as this component (`bound_sentences`)."""
    return BoundedSentenceRecognizer(nlp.vocab, model, name, overwrite=overwrite,
                                     scorer=scorer, max_length=max_length)


def takes_sentence_bound(nlp: Language, name: str = "senter") -> bool:
    """Whether the pipeline has a senter `name` whose sentences
    `bound_sentences` can bound: not a parser that decides sentences by its
    trees (`init-config --senter break`)."""
    return name in nlp.pipe_names and not getattr(nlp.get_pipe(name), "decides_sentences", False)


def bound_sentences(nlp: Language, max_length: Optional[int] = DEFAULT_MAX_LENGTH,
                    name: str = "senter") -> Language:
    """Bound the sentences of the pipeline's senter `name` to `max_length`
    words (None: no bound), in place: a spaCy `senter` becomes a
    `nonmono_senter` with the same trained model and settings."""
    if name not in nlp.pipe_names:
        raise ValueError(f"The pipeline has no component {name!r} (it has: "
                         f"{', '.join(nlp.pipe_names) or 'none'}).")
    senter = nlp.get_pipe(name)
    if isinstance(senter, BoundedSentenceRecognizer):
        if max_length is not None and max_length < 1:
            raise ValueError(f"max_length must be at least 1 (or None), not {max_length}")
        senter.max_length = max_length
        nlp.config["components"][name]["max_length"] = max_length
        return nlp
    if getattr(senter, "decides_sentences", False):
        raise ValueError(f"Component {name!r} is a parser whose trees decide the sentences; "
                         "it takes no bound on their length.")
    if not isinstance(senter, SentenceRecognizer):
        raise ValueError(f"Component {name!r} is a {type(senter).__name__}, not a senter.")
    settings = {key: value for key, value in nlp.config["components"][name].items()
                if key != "factory"}
    weights = senter.to_bytes()
    nlp.replace_pipe(name, "nonmono_senter", config={**settings, "max_length": max_length})
    nlp.get_pipe(name).from_bytes(weights)
    return nlp
