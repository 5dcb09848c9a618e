"""Evaluation: CoNLL-U parsing and scoring (CoNLL 2018 conventions) on gold
tokens and from raw text, CoNLL-U output, speed."""
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
from .raw_text import (RawTextEvaluation, Score, TextMismatchError, evaluate_pipeline_raw_text,
                       evaluate_raw_text, evaluate_raw_text_files)
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
    "RawTextEvaluation",
    "Score",
    "TextMismatchError",
    "evaluate_pipeline_raw_text",
    "evaluate_raw_text",
    "evaluate_raw_text_files",
]
