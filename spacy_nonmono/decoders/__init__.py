"""Decoders, looked up by the component's `decoding` setting: `greedy` (the
batched greedy loop in Cython) and `global` (exact decoding: the MH3 and MH4
charts, MST)."""
from ..registry import decoders, get_decoder
from .base import Decoder, GoldTree, Parses
from .global_decoder import GlobalDecoder
from .greedy import GreedyDecoder

decoders.register("greedy", func=GreedyDecoder)
decoders.register("global", func=GlobalDecoder)

__all__ = ["Decoder", "GoldTree", "Parses", "GlobalDecoder", "GreedyDecoder", "get_decoder"]
