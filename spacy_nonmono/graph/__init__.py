"""Tree algorithms on head arrays, apart from models and systems:
connectivity, paths and cycle counting (Cython, `algorithms`), and
projectivity (spaCy's own test)."""
from typing import Sequence

from spacy.pipeline._parser_internals.nonproj import is_nonproj_tree


def is_projective(heads: Sequence[int]) -> bool:
    """Whether a tree given as 1-based heads (0 = the root) has no crossing
    arcs, by spaCy's `nonproj.is_nonproj_tree` (which takes absolute heads,
    the root its own head)."""
    return not is_nonproj_tree([k if h == 0 else h - 1 for k, h in enumerate(heads)])


def _register_structures():
    from ..registry import structures
    from .structures import MSTStructure, mh3_chart, mh4_chart

    structures.register("mst", func=MSTStructure)
    structures.register("mh3", func=mh3_chart)
    structures.register("mh4", func=mh4_chart)


_register_structures()
