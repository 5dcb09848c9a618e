"""Tree algorithms on head arrays, apart from models and systems:
connectivity, paths, cycle counting and the root rule (Cython,
`algorithms`), the gold-tree check and projectivity (`trees`), and the
structures of exact decoding (`structures`, registered here by name)."""
from .. import registry
from .algorithms import attach_to_single_root, is_one_endpoint_crossing
from .trees import check_gold_tree, is_projective, sentence_spans
from .structures import (MSTStructure, mh3_arcs, mh3_chart, mh4_arcs, mh4_chart, one_ec,
                         one_ec_arcs)

registry.structures.register("mst", func=MSTStructure)
registry.structures.register("mh3_chart", func=mh3_chart)
registry.structures.register("mh4_chart", func=mh4_chart)
registry.structures.register("mh3_arcs", func=mh3_arcs)
registry.structures.register("mh4_arcs", func=mh4_arcs)
registry.structures.register("1ec_arcs", func=one_ec_arcs)
registry.structures.register("1ec", func=one_ec)


def get_structure(name: str):
    """The structure of global decoding registered as `name`, with a clear error."""
    return registry.lookup(registry.structures, "structure", name)


__all__ = ["attach_to_single_root", "is_one_endpoint_crossing", "check_gold_tree", "sentence_spans",
           "is_projective", "get_structure"]
