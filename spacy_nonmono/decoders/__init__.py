"""Decoders, looked up by the component's `decoding` setting: `greedy` (the
batched greedy loop in Cython); exact chart decoders register here later."""
from ..registry import decoders, get_decoder
from .base import Decoder, GoldTree, Parses
from .greedy import GreedyDecoder

decoders.register("greedy", func=GreedyDecoder)

__all__ = ["Decoder", "GoldTree", "Parses", "GreedyDecoder", "get_decoder"]
