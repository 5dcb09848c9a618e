"""Transition systems, looked up by name from a registry.

A system is registered under its config name in ``spacy_nonmono.registry.systems``
(catalogue, with entry points, so other packages can add systems).
"""
from ..registry import systems, get_system
from .arc_eager import ArcEager, ArcEagerTree, ArcEagerUnshift
from .covington import Covington
from .covington_nm import CovingtonNM

systems.register("covington", func=Covington)
systems.register("covington_nm", func=CovingtonNM)
systems.register("arc_eager", func=ArcEager)
systems.register("arc_eager_tree", func=ArcEagerTree)
systems.register("arc_eager_unshift", func=ArcEagerUnshift)

__all__ = ["get_system", "Covington", "CovingtonNM", "ArcEager", "ArcEagerTree",
           "ArcEagerUnshift"]
