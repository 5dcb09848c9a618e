"""Evaluation: CoNLL-U parsing and scoring (CoNLL 2018 conventions), speed."""
from .conllu_eval import (
    ConlluError,
    Evaluation,
    evaluate_pipeline,
    evaluate_sentences,
    evaluate_trees,
    is_projective,
    read_conllu,
    read_gold,
    write_conllu,
)
from .speed import measure_speed

__all__ = [
    "ConlluError",
    "Evaluation",
    "evaluate_pipeline",
    "evaluate_sentences",
    "evaluate_trees",
    "is_projective",
    "read_conllu",
    "read_gold",
    "write_conllu",
    "measure_speed",
]
