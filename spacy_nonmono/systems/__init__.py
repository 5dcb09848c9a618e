"""Transition systems, looked up by name from a registry.

A system is registered under its config name in ``spacy_nonmono.registry.systems``
(catalogue, with entry points, so other packages can add systems).
"""
from ..registry import lookup, systems
from .arc_eager import ArcEager, ArcEagerBreak, ArcEagerNM2013, ArcEagerTree, ArcEagerUnshift
from .arc_standard import ArcStandard
from .covington import Covington
from .covington_nm import CovingtonNM
from .hybrid import MH3, MH4
from .swap import StayEagerSwap, SwapLazy

systems.register("covington", func=Covington)
systems.register("covington_nm", func=CovingtonNM)
systems.register("arc_eager", func=ArcEager)
systems.register("arc_eager_break", func=ArcEagerBreak)
systems.register("arc_eager_nm2013", func=ArcEagerNM2013)
systems.register("arc_eager_tree", func=ArcEagerTree)
systems.register("arc_eager_unshift", func=ArcEagerUnshift)
systems.register("arc_standard", func=ArcStandard)
systems.register("swap_lazy", func=SwapLazy)
systems.register("swap_stay_eager", func=StayEagerSwap)
systems.register("mh3", func=MH3)
systems.register("mh4", func=MH4)


def get_system(name: str):
    """The transition system class registered as `name`, with a clear error."""
    return lookup(systems, "transition system", name)

__all__ = ["get_system", "Covington", "CovingtonNM", "ArcEager", "ArcEagerBreak", "ArcEagerNM2013",
           "ArcEagerTree", "ArcEagerUnshift", "ArcStandard", "SwapLazy", "StayEagerSwap", "MH3", "MH4"]
