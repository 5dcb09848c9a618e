"""1-Endpoint-Crossing trees (Pitler, Kannan & Marcus 2013): the tree
layer's check (`graph.is_one_endpoint_crossing`, Cython) equals the
definition written out over sets, on every tree of up to 6 words and on
random trees; projective trees are always 1EC."""
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import random_heads, scaled
from reference_mst import all_trees, n_roots
from spacy_nonmono.graph import is_one_endpoint_crossing, is_projective


def reference_is_1ec(heads):
    """For every edge, the set of nodes that are endpoints of all the edges
    crossing it is not empty (edges as node pairs, node 0 the root)."""
    return edges_are_1ec([(h, d) for d, h in enumerate(heads, start=1)])


def crosses(e, f) -> bool:
    (a, b), (c, d) = sorted(e), sorted(f)
    return a < c < b < d or c < a < d < b


def edges_are_1ec(edges) -> bool:
    """The same over any set of edges (node pairs in either order)."""
    for e in edges:
        shared = None
        for f in edges:
            if crosses(e, f):
                shared = set(f) if shared is None else shared & set(f)
        if shared is not None and not shared:
            return False
    return True


def test_every_tree_of_up_to_6_words():
    not_1ec = 0
    for n in range(1, 7):
        for heads in (h for h in all_trees(n) if n_roots(h) == 1):
            expected = reference_is_1ec(heads)
            assert is_one_endpoint_crossing(heads) == expected, heads
            not_1ec += not expected
    assert not_1ec > 0     # the check can say no


@settings(max_examples=scaled(300))
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), projective=st.booleans())
def test_random_trees(seed, n, projective):
    heads = random_heads(random.Random(seed), n, projective=projective)
    assert is_one_endpoint_crossing(heads) == reference_is_1ec(heads)
    if is_projective(heads):
        assert is_one_endpoint_crossing(heads)


def test_a_tree_that_is_not_1ec():
    # The root's edge (0, 4) is crossed by (1, 5) and (2, 6), which share no
    # endpoint; every other word hangs from 4.
    heads = [5, 6, 4, 0, 4, 4]
    assert not reference_is_1ec(heads) and not is_one_endpoint_crossing(heads)
