"""Tree algorithms on head arrays, apart from models and systems:
connectivity, paths and cycle counting (Cython, `algorithms`), the gold-tree
check and projectivity (`trees`), and the structures of exact decoding
(`structures`, registered here by name)."""
from .trees import check_gold_tree, is_projective


def _register_structures():
    from ..registry import structures
    from .structures import MSTStructure, mh3_chart, mh4_chart

    structures.register("mst", func=MSTStructure)
    structures.register("mh3", func=mh3_chart)
    structures.register("mh4", func=mh4_chart)


_register_structures()
