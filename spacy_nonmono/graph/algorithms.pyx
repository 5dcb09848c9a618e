# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Graph algorithms on head arrays, callable without the GIL."""
import numpy
from libc.string cimport memset


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


cdef int single_root(int* heads, int* labels, int n_nodes) noexcept nogil:
    """The root rule, the same for every system and decoder: make the arcs
    over nodes 1..n_nodes-1 a single-rooted forest under node 0. The first
    word attached to node 0 is the root (if none is, the first headless word
    becomes it); every other headless or root-attached word is attached to
    it with label -1 (written "dep"). Returns the root (-1 for no words)."""
    cdef int k, root = -1
    for k in range(1, n_nodes):
        if heads[k] == 0:
            root = k
            break
    if root == -1:
        for k in range(1, n_nodes):
            if heads[k] == -1:
                root = k
                heads[k] = 0
                break
    for k in range(1, n_nodes):
        if k != root and (heads[k] == -1 or heads[k] == 0):
            heads[k] = root
            labels[k] = -1
    return root


def attach_to_single_root(heads, labels):
    """The root rule (`single_root`) on 1-based heads of words 1..n (0 = the
    root, -1 = none) and their label ids: new int32 arrays (heads, labels)."""
    cdef int n = len(heads)
    if len(labels) != n:
        raise ValueError(f"{n} heads but {len(labels)} labels.")
    cdef int[::1] h = numpy.concatenate([[-1], numpy.asarray(heads)]).astype("int32")
    cdef int[::1] l = numpy.concatenate([[-1], numpy.asarray(labels)]).astype("int32")
    if n:
        single_root(&h[0], &l[0], n + 1)
    return numpy.asarray(h[1:]), numpy.asarray(l[1:])


cdef inline bint _crossing(int a, int b, int c, int d) noexcept nogil:
    """Whether the edges spanning a < b and c < d cross (no shared endpoint)."""
    return (a < c < b < d) or (c < a < d < b)


cdef bint one_endpoint_crossing(const int* heads, int n_nodes) noexcept nogil:
    """Whether the tree (heads over nodes 0..n_nodes-1, node 0 the root,
    -1: none) is 1-Endpoint-Crossing (Pitler, Kannan & Marcus 2013): the
    edges crossing any one edge all share an endpoint. The root's edge from
    node 0 counts. O(n^2): per edge, the endpoints every crossing edge so far
    shares (at most the two of the first)."""
    cdef int e, f, lo, hi, lo_f, hi_f, p, q
    cdef bint crossed
    for e in range(1, n_nodes):
        if heads[e] < 0:
            continue
        lo, hi = min(e, heads[e]), max(e, heads[e])
        crossed = False
        p = q = -1
        for f in range(1, n_nodes):
            if f == e or heads[f] < 0:
                continue
            lo_f, hi_f = min(f, heads[f]), max(f, heads[f])
            if not _crossing(lo, hi, lo_f, hi_f):
                continue
            if not crossed:
                crossed = True
                p, q = lo_f, hi_f
                continue
            if p != lo_f and p != hi_f:
                p = -1
            if q != lo_f and q != hi_f:
                q = -1
            if p == -1 and q == -1:
                return False
    return True


def is_one_endpoint_crossing(heads) -> bool:
    """`one_endpoint_crossing` for 1-based heads of words 1..n (0 = the root)."""
    cdef int[::1] h = numpy.concatenate([[-1], numpy.asarray(heads, dtype="int64")]).astype("int32")
    return bool(one_endpoint_crossing(&h[0], h.shape[0]))


def count_cycles(heads):
    """Python entry point for count_cycles_single_head (used by tools/tests)."""
    arr = numpy.ascontiguousarray(heads, dtype=numpy.int32)
    cdef int[::1] view = arr
    cdef int n = arr.shape[0]
    if n == 0:
        return 0
    mark = numpy.empty(n, dtype=numpy.int32)
    cdef int[::1] mark_view = mark
    return count_cycles_single_head(&view[0], n, &mark_view[0])


# -- Elementary cycles (Johnson 1975) -------------------------------------------

cdef void digraph_from_heads(Digraph* g, const int* heads_a, const int* heads_b,
                             int n_nodes, int* start, int* succ) noexcept nogil:
    """The union of two head arrays (arcs heads_x[k] -> k; -1 = none, and
    heads_b may be NULL) as successor lists. An arc in both is kept once.
    start: n_nodes + 1 ints; succ: 2 * n_nodes ints."""
    cdef int k, h, v
    for v in range(n_nodes + 1):
        start[v] = 0
    # Count out-degrees (into start[h+1]), then prefix sums, then fill.
    for k in range(n_nodes):
        if heads_a[k] >= 0:
            start[heads_a[k] + 1] += 1
        if heads_b != NULL and heads_b[k] >= 0 and heads_b[k] != heads_a[k]:
            start[heads_b[k] + 1] += 1
    for v in range(n_nodes):
        start[v + 1] += start[v]
    for k in range(n_nodes):
        h = heads_a[k]
        if h >= 0:
            succ[start[h]] = k
            start[h] += 1
        h = heads_b[k] if heads_b != NULL else -1
        if h >= 0 and h != heads_a[k]:
            succ[start[h]] = k
            start[h] += 1
    # The fill advanced start[v] to the end of v's list; shift back.
    for v in range(n_nodes, 0, -1):
        start[v] = start[v - 1]
    start[0] = 0
    g.n_nodes = n_nodes
    g.start = start
    g.succ = succ


cdef struct _Johnson:
    const Digraph* g
    int n
    int least           # the start vertex s of the current search
    int* comp           # SCC id of each node in the subgraph of nodes >= least
    int* index          # Tarjan bookkeeping
    int* low
    int* tstack
    int tstack_len
    int* on_tstack
    int counter
    int n_comps
    int* blocked
    int* bmat           # bmat[w * n + v]: v is in B(w)
    int* blist          # blist[w * n ..]: the members of B(w)
    int* blen
    int* path           # the current path from `least`
    int path_len
    cycle_visitor visit
    void* ctx
    int count
    int limit


cdef void _tarjan(_Johnson* J, int v) noexcept nogil:
    """Strongly connected components of the subgraph on nodes >= J.least."""
    cdef int e, w
    J.index[v] = J.counter
    J.low[v] = J.counter
    J.counter += 1
    J.tstack[J.tstack_len] = v
    J.tstack_len += 1
    J.on_tstack[v] = 1
    for e in range(J.g.start[v], J.g.start[v + 1]):
        w = J.g.succ[e]
        if w < J.least:
            continue
        if J.index[w] < 0:
            _tarjan(J, w)
            if J.low[w] < J.low[v]:
                J.low[v] = J.low[w]
        elif J.on_tstack[w] and J.index[w] < J.low[v]:
            J.low[v] = J.index[w]
    if J.low[v] == J.index[v]:
        while True:
            J.tstack_len -= 1
            w = J.tstack[J.tstack_len]
            J.on_tstack[w] = 0
            J.comp[w] = J.n_comps
            if w == v:
                break
        J.n_comps += 1


cdef void _components(_Johnson* J, int least) noexcept nogil:
    """Strongly connected components (J.comp) of the subgraph on nodes >= least."""
    cdef int v
    J.least = least
    J.counter = 0
    J.n_comps = 0
    J.tstack_len = 0
    for v in range(least, J.n):
        J.index[v] = -1
    for v in range(least, J.n):
        if J.index[v] < 0:
            _tarjan(J, v)


cdef void _unblock(_Johnson* J, int u) noexcept nogil:
    cdef int k, w
    J.blocked[u] = 0
    while J.blen[u] > 0:
        J.blen[u] -= 1
        w = J.blist[u * J.n + J.blen[u]]
        J.bmat[u * J.n + w] = 0
        if J.blocked[w]:
            _unblock(J, w)


cdef bint _circuit(_Johnson* J, int v) noexcept nogil:
    cdef int e, w
    cdef bint found = False
    J.path[J.path_len] = v
    J.path_len += 1
    J.blocked[v] = 1
    for e in range(J.g.start[v], J.g.start[v + 1]):
        if J.count >= J.limit:
            break
        w = J.g.succ[e]
        if w < J.least or J.comp[w] != J.comp[J.least]:
            continue
        if w == J.least:
            found = True
            if J.visit == NULL or J.visit(J.path, J.path_len, J.ctx):
                J.count += 1
        elif not J.blocked[w]:
            if _circuit(J, w):
                found = True
    if found:
        _unblock(J, v)
    else:
        for e in range(J.g.start[v], J.g.start[v + 1]):
            w = J.g.succ[e]
            if w < J.least or J.comp[w] != J.comp[J.least]:
                continue
            if not J.bmat[w * J.n + v]:
                J.bmat[w * J.n + v] = 1
                J.blist[w * J.n + J.blen[w]] = v
                J.blen[w] += 1
    J.path_len -= 1
    return found


cdef int elementary_cycles_work_size(int n_nodes) noexcept nogil:
    """Ints of work space `count_elementary_cycles` needs for n_nodes."""
    return 8 * n_nodes + 2 * n_nodes * n_nodes


cdef int count_elementary_cycles(const Digraph* g, cycle_visitor visit, void* ctx,
                                 int limit, int* work) noexcept nogil:
    """Johnson's algorithm: enumerate the elementary cycles of g, calling
    `visit` (if not NULL) on each, and return how many counted (visit
    returned true), stopping at `limit`. O((n + e)(c + 1)) time. `work`:
    elementary_cycles_work_size(n) ints owned by the caller (no allocation
    here, so oracles can call this at every transition).

    For each start vertex s in increasing order, the search runs in the
    strongly connected component of s within the subgraph of nodes >= s, so
    every cycle is found once, from its least node."""
    cdef _Johnson J
    cdef int n = g.n_nodes, s, v, e, w
    cdef bint cyclic
    if n == 0 or g.start[n] == 0:
        return 0
    J.g = g
    J.n = n
    J.visit = visit
    J.ctx = ctx
    J.count = 0
    J.limit = limit
    J.path_len = 0
    J.comp = work
    J.index = work + n
    J.low = work + 2 * n
    J.tstack = work + 3 * n
    J.path = work + 4 * n
    J.blen = work + 5 * n
    J.on_tstack = work + 6 * n
    J.blocked = work + 7 * n
    J.bmat = work + 8 * n
    J.blist = work + 8 * n + n * n
    memset(J.on_tstack, 0, 2 * n * sizeof(int))
    # Most graphs the oracles ask about are acyclic: one linear component
    # search over the whole graph settles those before the n^2 part of the
    # work space is touched.
    _components(&J, 0)
    cyclic = False
    for v in range(n):
        for e in range(g.start[v], g.start[v + 1]):
            if J.comp[g.succ[e]] == J.comp[v]:
                cyclic = True
    if not cyclic:
        return 0
    memset(J.bmat, 0, n * n * sizeof(int))
    for v in range(n):
        J.blen[v] = 0
    for s in range(n):
        if J.count >= J.limit:
            break
        if s > 0:
            _components(&J, s)
        # Does s lie on a cycle of the subgraph on nodes >= s (a non-trivial
        # component or a self-loop)?
        cyclic = False
        for e in range(g.start[s], g.start[s + 1]):
            w = g.succ[e]
            if w >= s and J.comp[w] == J.comp[s]:
                cyclic = True
                break
        if not cyclic:
            continue
        for v in range(s, n):
            if J.comp[v] == J.comp[s]:
                J.blocked[v] = 0
                while J.blen[v] > 0:
                    J.blen[v] -= 1
                    J.bmat[v * n + J.blist[v * n + J.blen[v]]] = 0
        _circuit(&J, s)
    return J.count


def elementary_cycles(successors):
    """All elementary cycles of a directed graph given as successor lists
    (successors[v] = nodes v points to), each as a list of nodes starting at
    its least node. Python entry point for tests and tools."""
    cdef int n = len(successors)
    if n == 0:
        return []
    degrees = [len(s) for s in successors]
    start_arr = numpy.zeros(n + 1, dtype=numpy.int32)
    start_arr[1:] = numpy.cumsum(degrees)
    succ_arr = numpy.asarray([w for s in successors for w in s] or [0], dtype=numpy.int32)
    for w in succ_arr[:start_arr[n]]:
        if not 0 <= w < n:
            raise ValueError(f"Successor {w} outside the graph (0..{n-1}).")
    cdef int[::1] start = start_arr
    cdef int[::1] succ = succ_arr
    cdef Digraph g
    g.n_nodes = n
    g.start = &start[0]
    g.succ = &succ[0]
    found = []
    work = numpy.empty(elementary_cycles_work_size(n), dtype=numpy.int32)
    cdef int[::1] work_view = work
    count_elementary_cycles(&g, _collect, <void*>found, 2 ** 30, &work_view[0])
    return found


cdef bint _collect(const int* cycle, int length, void* ctx) noexcept nogil:
    with gil:
        (<list>ctx).append([cycle[k] for k in range(length)])
    return True
