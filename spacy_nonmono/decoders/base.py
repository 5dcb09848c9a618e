"""What a decoder is: the part of the parser that turns the model's output
into trees (`predict`) and learns from gold trees (`update`). The component
(pipeline/parser.py) orchestrates: it cuts docs into sentence spans, checks
gold trees and writes annotations; a decoder never sees a Doc's annotations.

Spans are (doc index, start, end) token ranges of the batch's docs. Trees are
per span: heads[k] is the head of word k + 1 (1-based within the span,
0 = the span's root) and labels[k] its label id (-1: none).
"""
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from thinc.api import Model

Span = Tuple[int, int, int]


class GoldTree(NamedTuple):
    heads: Sequence[int]        # head of word k + 1 at k, 0 = root
    labels: Sequence[int]       # label ids


class Parses(NamedTuple):
    heads: List[numpy.ndarray]
    labels: List[numpy.ndarray]
    transitions: int            # transitions applied (0 for chart decoders)


def token_layout(docs: List[Doc], spans: Sequence[Span]):
    """(lengths, offsets, root_row) of spans in the model's token table, which
    holds the docs' tokens in order, then the root vector."""
    doc_offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    lengths = [end - start for _, start, end in spans]
    offsets = [int(doc_offsets[d]) + start for d, start, _ in spans]
    return lengths, offsets, int(doc_offsets[-1])


class Decoder:
    """Base class of decoders (registered in `spacy_nonmono.registry.decoders`)."""

    name = "base"

    def predict(self, model: Model, system, docs: List[Doc], spans: Sequence[Span]) -> Parses:
        raise NotImplementedError

    def update(self, model: Model, system, docs: List[Doc], spans: Sequence[Span],
               golds: Sequence[GoldTree], *, follow_oracle_prob: float,
               rng: numpy.random.Generator,
               step_observer: Optional[Callable] = None) -> float:
        """Accumulate the gradients of one batch into `model`; return the loss."""
        raise NotImplementedError
