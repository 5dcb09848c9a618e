"""Attachment scores like the CoNLL 2018 shared task evaluation: over all
words, punctuation included, labels compared on their universal part (the
part before ':'), given gold tokenization and gold sentences."""
from dataclasses import dataclass
from typing import Iterable, Sequence

from spacy.tokens import Doc


def universal_label(label: str) -> str:
    return label.split(":", 1)[0].lower()


def is_projective(heads: Sequence[int]) -> bool:
    """Whether a tree (heads[k-1] = head of word k, 0 = root) has no crossing
    arcs, the root arc included."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, start=1)]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


@dataclass
class AttachmentScores:
    """Counts of words with correct head (UAS) and head and label (LAS),
    overall and on projective and non-projective sentences."""

    words: int = 0
    heads: int = 0
    labelled: int = 0
    nonproj_words: int = 0
    nonproj_heads: int = 0
    nonproj_labelled: int = 0
    sentences: int = 0
    nonproj_sentences: int = 0

    @staticmethod
    def _pct(part: int, whole: int) -> float:
        return 100.0 * part / whole if whole else 0.0

    @property
    def uas(self) -> float:
        return self._pct(self.heads, self.words)

    @property
    def las(self) -> float:
        return self._pct(self.labelled, self.words)

    @property
    def nonproj_uas(self) -> float:
        return self._pct(self.nonproj_heads, self.nonproj_words)

    @property
    def nonproj_las(self) -> float:
        return self._pct(self.nonproj_labelled, self.nonproj_words)

    def to_dict(self) -> dict:
        return {
            "uas": self.uas,
            "las": self.las,
            "nonproj_uas": self.nonproj_uas,
            "nonproj_las": self.nonproj_las,
            "words": self.words,
            "sentences": self.sentences,
            "nonproj_sentences": self.nonproj_sentences,
        }


def attachment_scores(gold_docs: Iterable[Doc], pred_docs: Iterable[Doc]) -> AttachmentScores:
    """Score predicted parses against gold ones over the same tokens; the
    gold sentences define the sentence units (projectivity)."""
    gold_docs, pred_docs = list(gold_docs), list(pred_docs)
    if len(gold_docs) != len(pred_docs):
        raise ValueError(f"{len(gold_docs)} gold docs but {len(pred_docs)} predicted docs.")
    scores = AttachmentScores()
    for gold, pred in zip(gold_docs, pred_docs):
        if len(gold) != len(pred):
            raise ValueError(
                f"Gold and predicted docs differ in length ({len(gold)} vs {len(pred)} "
                "tokens); evaluation needs gold tokenization."
            )
        for sent in gold.sents:
            gold_heads = [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
            nonproj = not is_projective(gold_heads)
            scores.sentences += 1
            scores.nonproj_sentences += nonproj
            for g in sent:
                p = pred[g.i]
                head_ok = (p.head.i == g.head.i)
                label_ok = head_ok and universal_label(p.dep_) == universal_label(g.dep_)
                scores.words += 1
                scores.heads += head_ok
                scores.labelled += label_ok
                if nonproj:
                    scores.nonproj_words += 1
                    scores.nonproj_heads += head_ok
                    scores.nonproj_labelled += label_ok
    return scores
