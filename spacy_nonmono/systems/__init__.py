"""Transition systems, looked up by name from a registry.

A system is registered under its config name in ``spacy_nonmono.registry.systems``
(catalogue, with entry points, so other packages can add systems).
"""
from ..registry import systems, get_system
from .covington import Covington

systems.register("covington", func=Covington)

__all__ = ["get_system", "Covington"]
