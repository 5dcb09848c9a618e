"""Evaluation: attachment scores (CoNLL 2018 conventions) and parse speed."""
from .attachment import AttachmentScores, attachment_scores, is_projective
from .speed import words_per_second

__all__ = ["AttachmentScores", "attachment_scores", "is_projective", "words_per_second"]
