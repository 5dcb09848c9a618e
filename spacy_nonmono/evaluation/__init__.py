"""Evaluation: scores on gold tokens and from raw text (CoNLL 2018
conventions), a tokenizer's scores, speed. Reading and writing CoNLL-U is
`conllu_io`'s; its readers are named here too, as the evaluation's inputs."""
from ..conllu_io import ConlluError, read_conllu, read_gold
from ..graph import is_projective
from .gold_tokens import Evaluation, evaluate_pipeline, evaluate_sentences, evaluate_trees
from .metrics import Score
from .raw_text import (RawTextEvaluation, TextMismatchError, evaluate_pipeline_raw_text,
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
    "measure_speed",
    "RawTextEvaluation",
    "Score",
    "TextMismatchError",
    "evaluate_pipeline_raw_text",
    "evaluate_raw_text",
    "evaluate_raw_text_files",
]
