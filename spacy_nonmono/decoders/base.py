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


def chunks(docs: List[Doc], spans: Sequence[Span], max_tokens: int):
    """Split a batch into consecutive groups of docs of at most max_tokens
    tokens (a longer doc alone), each with its spans, renumbered to index the
    group's docs, and the positions of those spans in `spans`. Spans must
    come in doc order, as the component makes them. Bounding the tokens of a
    model call bounds the token table, which the parse loop reads at random:
    it must stay small for parsing to be as fast with nlp.pipe's batch_size
    1000 as with 64."""
    start = 0
    position = 0
    while start < len(docs):
        end, tokens = start, 0
        while end < len(docs) and (end == start or tokens + len(docs[end]) <= max_tokens):
            tokens += len(docs[end])
            end += 1
        chunk_spans = []
        first = position
        while position < len(spans) and spans[position][0] < end:
            d, begin, stop = spans[position]
            chunk_spans.append((d - start, begin, stop))
            position += 1
        yield docs[start:end], chunk_spans, range(first, position)
        start = end


class Decoder:
    """Base class of decoders (registered in `spacy_nonmono.registry.decoders`).

    A decoder owns what it parses with: it builds the structure it decodes
    from the component's `system`, `oracle` and `system_options` settings
    (`build_system`: a transition system for transition decoders) and sizes
    the model head it reads (`size_model`). Decoders whose models are
    interchangeable share a `model_kind`: a saved pipeline can be loaded with
    any decoder of its kind."""

    name = "base"
    model_kind = "transitions"

    def configure(self, **settings) -> None:
        """Take the component's decoder settings (beam_width, beam_density,
        beam_update_prob, beam_update); a decoder that has none ignores them."""

    def build_system(self, name: str, labels: Sequence[str], oracle: Optional[str],
                     options: dict):
        """The transition system `name` for these labels (a ValueError for an
        unknown name, oracle or option)."""
        from ..registry import get_system

        if name == "mst":
            raise ValueError("'mst' is decoded globally only (it is no transition system): "
                             "set decoding = \"global\" and the model "
                             "spacy_nonmono.GlobalParserModel.v1.")
        return get_system(name)(labels=labels, oracle=oracle, **options)

    def size_model(self, model: Model, system) -> None:
        """Size the model for the system: its context slots and, once labels
        are known, its moves."""
        from ..models.parser_model import set_transition_dims

        set_transition_dims(model, system.n_context, system.n_moves if system.labels else None)

    def is_initialized(self, model: Model) -> bool:
        from ..models.parser_model import is_initialized

        return is_initialized(model)

    def predict(self, model: Model, system, docs: List[Doc], spans: Sequence[Span]) -> Parses:
        raise NotImplementedError

    def update(self, model: Model, system, docs: List[Doc], spans: Sequence[Span],
               golds: Sequence[GoldTree], *, follow_oracle_prob: float,
               rng: numpy.random.Generator,
               step_observer: Optional[Callable] = None) -> float:
        """Accumulate the gradients of one batch into `model`; return the loss."""
        raise NotImplementedError
