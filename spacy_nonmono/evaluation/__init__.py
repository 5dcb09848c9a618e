"""Evaluation: CoNLL-U parsing and scoring (CoNLL 2018 conventions), speed."""
from .conllu_eval import (
    Evaluation,
    evaluate_pipeline,
    evaluate_trees,
    is_projective,
    read_conllu,
    write_conllu,
)
from .speed import measure_speed

__all__ = [
    "Evaluation",
    "evaluate_pipeline",
    "evaluate_trees",
    "is_projective",
    "read_conllu",
    "write_conllu",
    "measure_speed",
]
