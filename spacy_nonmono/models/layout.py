"""Where a batch's tokens are in the models' tables: one home for the row
layout every decoder reads.

A model's token table (the step model's token contributions, the global
model's parts) holds the batch docs' tokens in order, then the root's row
(and, for the global model, the end's row after it). Spans are (doc index,
start, end) token ranges of the batch's docs.
"""
from typing import List, Sequence, Tuple

import numpy
from spacy.tokens import Doc


def token_layout(docs: List[Doc], spans: Sequence[Tuple[int, int, int]]):
    """(lengths, offsets, root_row) of spans in the model's token table."""
    doc_offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    lengths = [end - start for _, start, end in spans]
    offsets = [int(doc_offsets[d]) + start for d, start, _ in spans]
    return lengths, offsets, int(doc_offsets[-1])


def span_rows(docs: List[Doc], spans: Sequence[Tuple[int, int, int]]) -> List[numpy.ndarray]:
    """For each span, the global model's parts rows of its positions 0..n+1
    (a chart's coordinates: 0 the root, 1..n the words, n + 1 the end): the
    root's row, the span's tokens, the end's row."""
    lengths, offsets, root = token_layout(docs, spans)
    end = root + 1
    return [numpy.concatenate(([root], numpy.arange(o, o + n), [end])).astype("int64")
            for o, n in zip(offsets, lengths)]
