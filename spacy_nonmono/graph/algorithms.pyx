# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Graph algorithms on head arrays, callable without the GIL."""
import numpy
from libc.stdlib cimport malloc, free


cdef int uf_find(int* parent, int x) noexcept nogil:
    """Union-find root of x, with path halving."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef void weak_components(const int* heads, int n_nodes, int* comp) noexcept nogil:
    """comp[k] = representative of k's weakly connected component."""
    cdef int k, a, b
    for k in range(n_nodes):
        comp[k] = k
    for k in range(n_nodes):
        if heads[k] >= 0:
            a = uf_find(comp, k)
            b = uf_find(comp, heads[k])
            if a != b:
                comp[a] = b
    for k in range(n_nodes):
        comp[k] = uf_find(comp, k)


cdef bint has_path(const int* heads, int n_nodes, int src, int dst) noexcept nogil:
    """Whether there is a (possibly empty) directed path src ->* dst.

    With at most one head per node, such a path exists iff src is dst or an
    ancestor of dst, so we walk up from dst. The walk is bounded by n_nodes
    steps, which makes it safe on graphs that already contain a cycle.
    """
    cdef int k = dst
    cdef int steps = 0
    while k >= 0 and steps <= n_nodes:
        if k == src:
            return True
        k = heads[k]
        steps += 1
    return False


cdef int count_cycles_single_head(const int* heads, int n_nodes, int* mark) noexcept nogil:
    """Number of cycles of a graph where every node has at most one head.

    This is Tarjan's strongly-connected-components search specialised to
    out-degree one (each node points to its head): every depth-first search is
    a walk up the heads, and each non-trivial component is exactly one cycle,
    found when the walk meets a node of its own walk. O(n). `mark` is scratch
    space of n_nodes ints.
    """
    cdef int k, v, walk, n_cycles = 0
    for k in range(n_nodes):
        mark[k] = 0
    for k in range(n_nodes):
        if mark[k] != 0:
            continue
        walk = k + 1          # walks are labelled 1..n so 0 means unvisited
        v = k
        while v >= 0 and mark[v] == 0:
            mark[v] = walk
            v = heads[v]
        if v >= 0 and mark[v] == walk:
            n_cycles += 1
    return n_cycles


def count_cycles(heads):
    """Python entry point for count_cycles_single_head (used by tools/tests)."""
    arr = numpy.ascontiguousarray(heads, dtype=numpy.int32)
    cdef int[::1] view = arr
    cdef int n = arr.shape[0]
    if n == 0:
        return 0
    cdef int* mark = <int*>malloc(n * sizeof(int))
    try:
        return count_cycles_single_head(&view[0], n, mark)
    finally:
        free(mark)
