"""Decoders, looked up by the component's `decoding` setting: `greedy` (the
batched greedy loop in Cython), `beam` (beam search over any transition
system, trained globally) and `global` (exact decoding: the MH3 and MH4
charts, MST)."""
from ..registry import decoders, lookup
from .base import Decoder, GoldTree, Parses
from .beam import BeamDecoder
from .global_decoder import GlobalDecoder
from .greedy import GreedyDecoder

decoders.register("greedy", func=GreedyDecoder)
decoders.register("beam", func=BeamDecoder)
decoders.register("global", func=GlobalDecoder)


def get_decoder(name: str):
    """The decoder registered as `name`, with a clear error."""
    return lookup(decoders, "decoder", name)

__all__ = ["Decoder", "GoldTree", "Parses", "BeamDecoder", "GlobalDecoder", "GreedyDecoder",
           "get_decoder"]
