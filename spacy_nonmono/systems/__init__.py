"""Transition systems, looked up by name from a registry.

A system is registered under its config name in ``spacy_nonmono.registry.systems``
(catalogue, with entry points, so other packages can add systems).
"""
from ..registry import systems, get_system
from .covington import Covington
from .covington_nm import CovingtonNM

systems.register("covington", func=Covington)
systems.register("covington_nm", func=CovingtonNM)

__all__ = ["get_system", "Covington", "CovingtonNM"]
