# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Maximum spanning tree with exactly one root, for edge-factored global parsing.

``mst(scores, gold_heads=None, cost_weight=0.0) -> (heads, score, cost)``

- ``scores``: (n+1, n+1) float32 (other real dtypes are converted), indexed
  [head, dependent] over nodes 0..n, node 0 the root node. Column 0 and the
  diagonal are never read (they may hold anything, -inf included); every other
  entry must be finite (to rule an arc out, give it a large negative score).
- ``heads``: int32 array of length n, ``heads[k]`` the head of word k+1
  (1-based, 0 = the root node). Exactly one word is attached to node 0 and the
  arcs form a tree.
- ``score``: the sum of ``scores[heads[k], k+1]`` (without the cost term).
- ``gold_heads``: None, or n gold heads in the same format as ``heads``. The
  search maximises ``score + cost_weight * cost`` where ``cost`` is the number
  of words whose head differs from gold (a gold head of -1 counts every head
  as wrong, so it changes nothing): cost_weight = +1 is loss-augmented
  decoding; a large negative weight (more than n times the score range) gives
  the best-scoring tree among those with the most gold arcs. The returned
  ``cost`` is that count for the result (0 when gold_heads is None).
- Ties are broken deterministically: the same input gives the same tree.

``MST()`` is the same decoder owning its buffers (grown on demand, reused
across calls; ``mst`` uses one per thread); Cython callers can cimport it and
call ``reserve`` then the nogil ``decode`` (mst.pxd).

Algorithm: Chu-Liu-Edmonds in O(n^2) time and memory, Tarjan's (1977)
formulation for dense graphs (as in Gabow, Galil, Spencer & Tarjan 1986 with a
matrix instead of heaps). Supernodes grow a path by following each one's best
incoming arc; when the path closes a cycle, the cycle's k supernodes are merged
into one by merging their k rows (incoming arcs, each reweighted by minus the
member's chosen arc) and k columns (outgoing arcs) of the arc matrix, O(k n);
the cycles' sizes sum to less than 2n, and fewer than 2n supernodes each scan
one row for their best incoming arc, so the whole search is O(n^2). The tree
is read back from the forest of contractions in O(n): the supernode entered by
an arc is dismantled along the path down to the arc's dependent, and the other
members of each cycle on that path keep their cycle arcs.

One root (Stanojević & Cohen 2021, "A Root of a Problem"): every root arc's
weight is lowered by a constant C. A tree with k root arcs pays k*C, so with
C > n * (max - min) over the arc weights read (scores plus cost term), which
exceeds the difference between any two trees' weights, every tree with
k >= 2 root arcs weighs less than every tree with one root arc (it loses at
least C and gains less than C), while the trees with one root arc keep their
order (all pay C once): the unconstrained maximum under the new weights is the
constrained maximum under the old ones, exactly. Here C is kept symbolic
(C -> infinity, the same order as any C above that bound): no arithmetic on C
is done, so nothing is rounded (a numeric C would cost root arcs the low bits
of their scores). In the search, C only ever sits on the root node's column:
the rows are reweighted by minus the members' cycle arcs, and a cycle never
contains the root node, so those arcs never carry C. So a supernode's best
incoming arc is its best arc from another supernode (w - C loses to any
finite w), and the root arcs, compared among themselves with C cancelling,
are taken only by the last supernode, when all words have been merged. Trying
each root word instead would be n searches, O(n^3).

Arithmetic: the scores are read as float32 and searched in float64 (the
reweighted values are differences of sums of scores).

`python -m benchmarks length-cost` (the lab, in the repository) measures the
time per length in a pipeline.
"""
import threading

import numpy

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport isfinite

cdef enum:
    UNSEEN = 0      # not yet on a path
    ON_PATH = 1     # on the path being grown
    DONE = 2        # connected to the root node (its incoming arc is final at its level)
    ABSORBED = 3    # merged into a contracted supernode

cdef enum:
    N_INT_FIELDS = 11   # int arrays of 2 * capacity ints each in MST.ints


cdef struct Forest:
    # The search's working arrays (in MST.ints and MST.in_w). Supernodes are
    # ids 0..N-1 (the nodes) then N, N+1, ... (contractions, in order). A
    # supernode lives in a slot (a row and column of the arc matrix); a
    # contraction takes the slot of one of its members.
    int* status
    int* parent         # the contraction a supernode is in, -1
    int* in_edge        # chosen incoming arc (original id; in_w: its weight)
    double* in_w
    int* pos            # index on the path
    int* path           # path[i+1] is the source of path[i]'s arc
    int* stack
    int* kids           # members of each contraction, in order
    int* kid_start      # contraction c's: kid_start[c-N] .. kid_start[c-N+1]
    int* node_slot
    int* slot_node      # N entries
    int* active         # N entries: slot holds a supernode
    int n_kids


cdef int fill_arcs(MSTArc* arcs, const float* scores, Py_ssize_t s_head, Py_ssize_t s_dep,
                   int N, const int* gold, double cost_weight) noexcept nogil:
    """The arc matrix, [dependent, head]: weight (score + cost term) and
    original arc. -1 when a score read is not finite."""
    cdef int d, h
    cdef float sc
    cdef double w
    cdef MSTArc* row
    for d in range(1, N):
        row = arcs + <Py_ssize_t>d * N
        for h in range(N):
            if h == d:
                continue
            sc = scores[h * s_head + d * s_dep]
            if not isfinite(sc):
                return -1
            w = sc
            if gold != NULL and gold[d - 1] != h:
                w += cost_weight
            row[h].w = w
            row[h].e = h * N + d
    return 0


cdef void contract(MSTArc* arcs, Forest* f, int N, int j, int top, int c) noexcept nogil:
    """Merge the cycle path[j..top] into the new supernode c, which takes the
    slot of path[j] (the cycle's closing source)."""
    cdef int i, u, v, x, m_slot
    cdef int src = f.path[j]
    cdef int c_slot = f.node_slot[src]
    cdef MSTArc* row
    cdef MSTArc* mrow
    for i in range(j, top + 1):
        x = f.path[i]
        f.kids[f.n_kids] = x
        f.n_kids += 1
        f.parent[x] = c
        f.status[x] = ABSORBED
        f.active[f.node_slot[x]] = 0
    f.kid_start[c - N + 1] = f.n_kids
    # Row: entering the cycle at member x by an arc of weight a gives the
    # cycle a - (x's cycle arc). src's row is first.
    row = arcs + <Py_ssize_t>c_slot * N
    for u in range(N):
        if f.active[u]:
            row[u].w -= f.in_w[src]
    for i in range(j, top + 1):
        x = f.path[i]
        if x == src:
            continue
        m_slot = f.node_slot[x]
        mrow = arcs + <Py_ssize_t>m_slot * N
        for u in range(N):
            if f.active[u] and mrow[u].w - f.in_w[x] > row[u].w:
                row[u].w = mrow[u].w - f.in_w[x]
                row[u].e = mrow[u].e
    # Column: leaving the cycle from any member, unchanged weights.
    for i in range(j, top + 1):
        x = f.path[i]
        if x == src:
            continue
        m_slot = f.node_slot[x]
        for v in range(1, N):
            if f.active[v]:
                mrow = arcs + <Py_ssize_t>v * N
                if mrow[m_slot].w > mrow[c_slot].w:
                    mrow[c_slot] = mrow[m_slot]
    f.active[c_slot] = 1
    f.slot_node[c_slot] = c
    f.node_slot[c] = c_slot


cdef int search(MSTArc* arcs, Forest* f, int N) noexcept nogil:
    """Grow paths of best incoming arcs from every node, contracting the
    cycles they close, until every supernode is connected to the root node.
    Returns the number of supernode ids used."""
    cdef int s, u, v, i, j, cur, cur_slot, best, top, src, c
    cdef int next_id = N
    cdef MSTArc* row
    for v in range(N):
        f.status[v] = UNSEEN
        f.parent[v] = -1
        f.node_slot[v] = v
        f.slot_node[v] = v
        f.active[v] = 1
    f.status[0] = DONE
    f.n_kids = 0
    f.kid_start[0] = 0
    for s in range(1, N):
        if f.status[s] != UNSEEN:
            continue
        top = 0
        f.path[0] = s
        f.pos[s] = 0
        f.status[s] = ON_PATH
        cur = s
        while True:
            # The best incoming arc of cur (first best slot on ties), from
            # the root node only when no other supernode is left.
            cur_slot = f.node_slot[cur]
            row = arcs + <Py_ssize_t>cur_slot * N
            best = 0
            for u in range(1, N):
                if u != cur_slot and f.active[u] and (best == 0 or row[u].w > row[best].w):
                    best = u
            f.in_edge[cur] = row[best].e
            f.in_w[cur] = row[best].w
            src = f.slot_node[best]
            if f.status[src] == DONE:
                for i in range(top + 1):
                    f.status[f.path[i]] = DONE
                break
            if f.status[src] == UNSEEN:
                top += 1
                f.path[top] = src
                f.pos[src] = top
                f.status[src] = ON_PATH
                cur = src
                continue
            # src is on the path: path[j..top] is a cycle, contracted into c.
            j = f.pos[src]
            c = next_id
            next_id += 1
            contract(arcs, f, N, j, top, c)
            f.status[c] = ON_PATH
            top = j
            f.path[top] = c
            f.pos[c] = top
            cur = c
    return next_id


cdef void read_tree(Forest* f, int N, int next_id, int* heads) noexcept nogil:
    """The tree, back from the forest of contractions: a top-level
    supernode's arc enters it at its dependent d; every contraction between d
    and it is dismantled (its own arc is superseded) and its other members
    keep their cycle arcs."""
    cdef int x, e, d, child, c, k
    cdef int sp = 0
    for x in range(1, next_id):
        if f.status[x] == DONE:
            f.stack[sp] = x
            sp += 1
    while sp > 0:
        sp -= 1
        x = f.stack[sp]
        e = f.in_edge[x]
        d = e % N
        heads[d - 1] = e // N
        child = d
        while child != x:
            c = f.parent[child]
            for k in range(f.kid_start[c - N], f.kid_start[c - N + 1]):
                if f.kids[k] != child:
                    f.stack[sp] = f.kids[k]
                    sp += 1
            child = c


cdef class MST:
    """A maximum-spanning-tree decoder with exactly one root, owning its buffers
    (grown to the longest sentence seen, reused across calls). Call it like
    ``mst``; see the module docstring."""

    def __cinit__(self):
        self.capacity = 0
        self.arcs = NULL
        self.ints = NULL
        self.in_w = NULL

    def __dealloc__(self):
        PyMem_Free(self.arcs)
        PyMem_Free(self.ints)
        PyMem_Free(self.in_w)

    def __reduce__(self):
        return (MST, ())

    cdef int reserve(self, int n_nodes) except -1:
        """Buffers for sentences of up to n_nodes - 1 words."""
        if n_nodes <= self.capacity:
            return 0
        PyMem_Free(self.arcs)
        PyMem_Free(self.ints)
        PyMem_Free(self.in_w)
        self.capacity = 0
        self.arcs = <MSTArc*>PyMem_Malloc(<size_t>n_nodes * n_nodes * sizeof(MSTArc))
        self.ints = <int*>PyMem_Malloc(<size_t>N_INT_FIELDS * 2 * n_nodes * sizeof(int))
        self.in_w = <double*>PyMem_Malloc(<size_t>2 * n_nodes * sizeof(double))
        if self.arcs == NULL or self.ints == NULL or self.in_w == NULL:
            raise MemoryError()
        self.capacity = n_nodes
        return 0

    cdef int decode(self, const float* scores, Py_ssize_t s_head, Py_ssize_t s_dep,
                    int n_words, const int* gold, double cost_weight,
                    int* heads, double* score, int* cost) noexcept nogil:
        cdef int N = n_words + 1            # nodes, and the arc matrix's side
        cdef int M = 2 * N                  # bound on supernode ids (< N + n_words)
        cdef Forest f
        cdef int d, h, n_wrong = 0
        cdef double total = 0.0
        if fill_arcs(self.arcs, scores, s_head, s_dep, N, gold, cost_weight) < 0:
            return -1
        f.status = self.ints
        f.parent = self.ints + M
        f.in_edge = self.ints + 2 * M
        f.pos = self.ints + 3 * M
        f.path = self.ints + 4 * M
        f.stack = self.ints + 5 * M
        f.kids = self.ints + 6 * M
        f.kid_start = self.ints + 7 * M
        f.node_slot = self.ints + 8 * M
        f.slot_node = self.ints + 9 * M
        f.active = self.ints + 10 * M
        f.in_w = self.in_w
        read_tree(&f, N, search(self.arcs, &f, N), heads)
        for d in range(1, N):
            h = heads[d - 1]
            total += scores[h * s_head + d * s_dep]
            if gold != NULL and gold[d - 1] != h:
                n_wrong += 1
        score[0] = total
        cost[0] = n_wrong
        return 0

    def __call__(self, scores, gold_heads=None, double cost_weight=0.0):
        """(heads, score, cost): see the module docstring."""
        arr = numpy.asarray(scores)
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
            raise ValueError(
                f"scores must be a square (n+1, n+1) array over the root node and n words, "
                f"not of shape {arr.shape}.")
        if arr.dtype != numpy.float32 or any(st % 4 for st in arr.strides):
            arr = numpy.ascontiguousarray(arr, dtype=numpy.float32)
        cdef int n = arr.shape[0] - 1
        heads = numpy.zeros(n, dtype=numpy.int32)
        if n == 0:
            return heads, 0.0, 0
        if not isfinite(cost_weight):
            raise ValueError(f"cost_weight must be finite, not {cost_weight}.")
        cdef const float[:, :] view = arr
        cdef int[::1] heads_view = heads
        cdef const int* gold_ptr = NULL
        cdef const int[::1] gold_view
        if gold_heads is not None:
            gold_arr = numpy.ascontiguousarray(gold_heads, dtype=numpy.int32)
            if gold_arr.shape != (n,):
                raise ValueError(
                    f"gold_heads must hold one 1-based head per word ({n}, the format of the "
                    f"returned heads), not an array of shape {gold_arr.shape}.")
            gold_view = gold_arr
            gold_ptr = &gold_view[0]
        cdef Py_ssize_t s_head = view.strides[0] // 4
        cdef Py_ssize_t s_dep = view.strides[1] // 4
        cdef double total = 0.0
        cdef int n_wrong = 0
        cdef int rc
        self.reserve(n + 1)
        with nogil:
            rc = self.decode(&view[0, 0], s_head, s_dep, n, gold_ptr, cost_weight,
                             &heads_view[0], &total, &n_wrong)
        if rc != 0:
            mask = ~numpy.isfinite(arr)
            mask[:, 0] = False
            numpy.fill_diagonal(mask, False)
            h, d = numpy.argwhere(mask)[0]
            raise ValueError(
                f"scores[{h}, {d}] is {arr[h, d]}: every score an arc can take must be finite "
                f"(give a ruled-out arc a large negative score).")
        return heads, total, n_wrong


_local = threading.local()


def mst(scores, gold_heads=None, cost_weight=0.0):
    """Maximum spanning tree with exactly one root: (heads, score, cost).
    See the module docstring."""
    decoder = getattr(_local, "decoder", None)
    if decoder is None:
        decoder = _local.decoder = MST()
    return decoder(scores, gold_heads, cost_weight)
