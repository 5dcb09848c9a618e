"""What a decoder is: the part of the parser that turns the model's output
into trees (`predict`) and learns from gold trees (`update`). The component
(pipeline/parser.py) orchestrates: it cuts docs into sentence spans, checks
gold trees and writes annotations; a decoder never sees a Doc's annotations.

Spans are (doc index, start, end) token ranges of the batch's docs. Trees are
per span: heads[k] is the head of word k + 1 (1-based within the span,
0 = the span's root) and labels[k] its label id (-1: none).
"""
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from thinc.api import Model

from ..models.layout import token_layout  # noqa: F401  (decoders read it from here too)

Span = Tuple[int, int, int]


class GoldTree(NamedTuple):
    heads: Sequence[int]        # head of word k + 1 at k, 0 = root
    labels: Sequence[int]       # label ids


class Parses(NamedTuple):
    heads: List[numpy.ndarray]
    labels: List[numpy.ndarray]
    transitions: int            # transitions applied (0 for chart decoders)


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

    A decoder owns everything about decoding the component does not:
    - its settings (`settings`: name -> default; the component's
      `decoding_options` override them, checked by `configure`);
    - what it parses with: the structure it builds from the component's
      `system`, `oracle` and `system_options` (`build_system`: a transition
      system for transition decoders), and the model head it reads
      (`size_model`);
    - the model that goes with it (`default_model`: a config block, built
      when the component's `model` is null) and its length guard
      (`length_guard`: `max_sentence_length`, or less for what it decodes;
      the component's `max_sentence_length` when that is set).
    Decoders whose models are interchangeable share a `model_kind`: a saved
    pipeline can be loaded with any decoder of its kind."""

    name = "base"
    model_kind = "transitions"
    model_name = "nonmono_parser_model"      # the name of the models it reads
    settings: Dict[str, object] = {}
    max_sentence_length = 256
    default_system = "covington_nm"     # what `init-config --decoding` picks
    # A doc without sentence boundaries (no senter or other segmenter before
    # the parser) is one span, cut into windows of max_sentence_length, unless
    # the decoder splits it at sentence-final punctuation first: decoders
    # whose cost grows faster than linearly with the length do.
    splits_unsegmented_docs = False

    def __init__(self):
        self.configure({})

    @property
    def default_model(self) -> str:
        """The model block (a config with a [model] section) that goes with
        the decoder."""
        from ..models.parser_model import DEFAULT_CONFIG

        return DEFAULT_CONFIG

    def configure(self, options: Dict[str, object]) -> None:
        """Take the component's `decoding_options` (a ValueError for an
        unknown one or a bad value); the others keep their defaults. Options
        of other decoders are left aside, so that a trained pipeline can
        switch decoders at load time (`decoding` alone)."""
        from ..registry import decoders

        others = {key for name, decoder in decoders.get_all().items() if name != self.name
                  for key in getattr(decoder, "settings", {})}
        unknown = sorted(set(options) - set(self.settings) - others)
        if unknown:
            known = ", ".join(repr(k) for k in self.settings) or "none"
            raise ValueError(f"decoding = {self.name!r} has no option "
                             f"{', '.join(repr(k) for k in unknown)}; its options: {known}.")
        values = {**self.settings, **{k: v for k, v in options.items() if k in self.settings}}
        self.check(values)
        self.options = values

    def check(self, options: Dict[str, object]) -> None:
        """ValueError for a setting out of range."""

    def check_model(self, model: Model, component: str) -> None:
        """ValueError unless the model is one this decoder reads."""
        if model.name == self.model_name:
            return
        from ..registry import decoders

        readers = [name for name, decoder in sorted(decoders.get_all().items())
                   if getattr(decoder, "model_name", None) == model.name]
        of = f" (the model of decoding = {' or '.join(map(repr, readers))})" if readers else ""
        raise ValueError(
            f"[{component}] decoding = {self.name!r} reads a {self.model_name!r} model, but the "
            f"model is a {model.name!r}{of}: leave the component's model null for the "
            "decoder's default, or write one (`spacy-nonmono init-config --decoding "
            f"{self.name}` writes a config with it).")

    def build_system(self, name: str, labels: Sequence[str], oracle: Optional[str],
                     options: dict):
        """The transition system `name` for these labels (a ValueError for an
        unknown name, oracle or option)."""
        from ..registry import structures   # the built-ins: registered by graph, which decoders import
        from ..systems import get_system, systems

        if name in systems:
            return get_system(name)(labels=labels, oracle=oracle, **options)
        if name in structures:
            raise ValueError(f"{name!r} is a structure of global decoding, not a transition "
                             f"system: set decoding = \"global\" to decode it "
                             f"(decoding = {self.name!r} decodes transition systems).")
        known = ", ".join(sorted(systems.get_all()))
        raise ValueError(f"Unknown transition system {name!r}. Known transition systems: "
                         f"{known}. Structures of decoding = \"global\": "
                         f"{', '.join(sorted(structures.get_all()))}")

    def size_model(self, model: Model, system) -> None:
        """Size the model for the system: its context slots and, once labels
        are known, its moves."""
        from ..models.parser_model import set_transition_dims

        set_transition_dims(model, system.n_context, system.n_moves if system.labels else None)

    def length_guard(self, system) -> int:
        """The longest sentence decoded whole (longer ones are parsed in
        windows, and left out in training) for what this decoder decodes."""
        return self.max_sentence_length

    def model_inputs(self, system) -> tuple:
        """What the model reads of a state, which a trained model fixes: the
        transition system's context tokens."""
        return tuple(system.context_names)

    def default_follow_oracle_prob(self, system) -> float:
        """The exploration in training when the component's
        `follow_oracle_prob` is null: the transition system's default."""
        return system.follow_oracle_prob

    def default_oracle(self, system) -> Optional[str]:
        """The oracle training uses when the component's `oracle` is null:
        the transition system's default."""
        return system.oracle

    def is_initialized(self, model: Model) -> bool:
        from ..models.parser_model import is_initialized

        return is_initialized(model)

    def predict(self, model: Model, system, docs: List[Doc], spans: Sequence[Span]) -> Parses:
        raise NotImplementedError

    def update(self, model: Model, system, docs: List[Doc], spans: Sequence[Span],
               golds: Sequence[GoldTree], *, follow_oracle_prob: float,
               rng: numpy.random.Generator) -> float:
        """Accumulate the gradients of one batch into `model`; return the loss."""
        raise NotImplementedError
