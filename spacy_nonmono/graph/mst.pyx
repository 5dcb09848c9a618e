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
        cdef MSTArc* arcs = self.arcs
        cdef MSTArc* row
        cdef MSTArc* mrow
        cdef double* in_w = self.in_w
        # Supernodes are ids 0..N-1 (the nodes) then N, N+1, ... (contractions,
        # in order). A supernode lives in a slot (a row and column of `arcs`);
        # a contraction takes the slot of one of its members.
        cdef int* status = self.ints
        cdef int* parent = status + M       # the contraction a supernode is in, -1
        cdef int* in_edge = status + 2 * M  # chosen incoming arc (original id; in_w: weight)
        cdef int* pos = status + 3 * M      # index on the path
        cdef int* path = status + 4 * M     # path[i+1] is the source of path[i]'s arc
        cdef int* stack = status + 5 * M
        cdef int* kids = status + 6 * M     # members of each contraction, in order
        cdef int* kid_start = status + 7 * M    # contraction c's: kid_start[c-N] ..
        cdef int* node_slot = status + 8 * M
        cdef int* slot_node = status + 9 * M    # N entries
        cdef int* active = status + 10 * M      # N entries: slot holds a supernode
        cdef int d, h, u, v, s, i, j, k, x, e, c, child, cur, cur_slot, c_slot
        cdef int best, top, src, next_id, n_kids, sp, m_slot, n_wrong
        cdef double w, total
        cdef float sc

        # Arc matrix, [dependent, head]: weight and original arc.
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
        for v in range(N):
            status[v] = UNSEEN
            parent[v] = -1
            node_slot[v] = v
            slot_node[v] = v
            active[v] = 1
        status[0] = DONE
        next_id = N
        n_kids = 0
        kid_start[0] = 0

        for s in range(1, N):
            if status[s] != UNSEEN:
                continue
            top = 0
            path[0] = s
            pos[s] = 0
            status[s] = ON_PATH
            cur = s
            while True:
                # The best incoming arc of cur (first best slot on ties), from
                # the root node only when no other supernode is left.
                cur_slot = node_slot[cur]
                row = arcs + <Py_ssize_t>cur_slot * N
                best = 0
                for u in range(1, N):
                    if u != cur_slot and active[u] and (best == 0 or row[u].w > row[best].w):
                        best = u
                in_edge[cur] = row[best].e
                in_w[cur] = row[best].w
                src = slot_node[best]
                if status[src] == DONE:
                    for i in range(top + 1):
                        status[path[i]] = DONE
                    break
                if status[src] == UNSEEN:
                    top += 1
                    path[top] = src
                    pos[src] = top
                    status[src] = ON_PATH
                    cur = src
                    continue
                # src is on the path: path[j..top] is a cycle. Contract it
                # into c, which takes src's slot.
                j = pos[src]
                c = next_id
                next_id += 1
                c_slot = node_slot[src]
                for i in range(j, top + 1):
                    x = path[i]
                    kids[n_kids] = x
                    n_kids += 1
                    parent[x] = c
                    status[x] = ABSORBED
                    active[node_slot[x]] = 0
                kid_start[c - N + 1] = n_kids
                # Row: entering the cycle at member x by an arc of weight a
                # gives the cycle a - (x's cycle arc). src's row is first.
                row = arcs + <Py_ssize_t>c_slot * N
                for u in range(N):
                    if active[u]:
                        row[u].w -= in_w[src]
                for i in range(j, top + 1):
                    x = path[i]
                    if x == src:
                        continue
                    m_slot = node_slot[x]
                    mrow = arcs + <Py_ssize_t>m_slot * N
                    for u in range(N):
                        if active[u] and mrow[u].w - in_w[x] > row[u].w:
                            row[u].w = mrow[u].w - in_w[x]
                            row[u].e = mrow[u].e
                # Column: leaving the cycle from any member, unchanged weights.
                for i in range(j, top + 1):
                    x = path[i]
                    if x == src:
                        continue
                    m_slot = node_slot[x]
                    for v in range(1, N):
                        if active[v]:
                            mrow = arcs + <Py_ssize_t>v * N
                            if mrow[m_slot].w > mrow[c_slot].w:
                                mrow[c_slot] = mrow[m_slot]
                active[c_slot] = 1
                slot_node[c_slot] = c
                node_slot[c] = c_slot
                status[c] = ON_PATH
                top = j
                path[top] = c
                pos[c] = top
                cur = c

        # Read the tree back: a top-level supernode's arc enters it at its
        # dependent d; every contraction between d and it is dismantled (its
        # own arc is superseded) and its other members keep their cycle arcs.
        sp = 0
        for x in range(1, next_id):
            if status[x] == DONE:
                stack[sp] = x
                sp += 1
        while sp > 0:
            sp -= 1
            x = stack[sp]
            e = in_edge[x]
            d = e % N
            heads[d - 1] = e // N
            child = d
            while child != x:
                c = parent[child]
                for k in range(kid_start[c - N], kid_start[c - N + 1]):
                    if kids[k] != child:
                        stack[sp] = kids[k]
                        sp += 1
                child = c

        total = 0.0
        n_wrong = 0
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
