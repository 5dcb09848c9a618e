# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The optimal step of shift-reduce (arc-standard) parsing for a projective
gold tree: Nederhof (2019), "Calculating the optimal step in shift-reduce
dependency parsing: from cubic to linear time", section 5 (Table 5, O(n^2))
and section 6 (O(n)).

``config_score_projective(c, linear, scratch)`` (nogil, cimport it from
optimal_step.pxd) gives, for a configuration c (graph/split_grammars.pxd's
ShiftReduceConfig: positions 0..top the stack, top+1..last the remaining
input) and a projective gold tree, the most gold edges that any computation
from c to the final configuration adds, sigma_max - |T n Tg| in the paper's
terms, or NEG_SCORE when the restrictions leave no computation. It equals the
cubic algorithm of section 4 (graph/split_grammars.pyx) on every configuration
tested against brute force (tests/test_optimal_step_projective.py). The
Python function ``config_score_projective(stack, buffer, gold_heads, ...)``
(defined as config_score_projective_py; the module's dict holds it under
both names) calls it, with the signature of tests/reference_arc_standard.config_score
(gold_heads[k-1] the head of word k; None for NEG_SCORE).

Notation as in the paper: a_0..a_k the stack (a_i = the node at position i,
k = c.top), B the remaining input, b_1..b_m its critical nodes (in order),
and the paper's functions, tabulated once per call in O(n):
  M          gold edges inside B;
  critical   b in B with a gold descendant in A, or whose gold parent is not
             in B;
  R(j)       the largest j' with b_j' an ancestor (or b_j itself) of b_j
             through gold edges between critical nodes;
  p(i)       j with b_j -> a_i gold; p>=(i) the first defined of p(i),
             p(i+1), .., p(k); P(i) = R(p(i)), P>=(i) = R(p>=(i));
  c(i)       the smallest j with a_i -> b_j gold;
  p'(i, j)   p(i) if P(i) = R(j), else undefined;
  nchildren(i)  |{b in B : w(a_i, b) = 1}|;
  tau, tau'  the state updates over N (none), C (consumed), F (fresh);
  kappa(i)   the smallest l < i with a gold edge between a_l and a_i, else
             i - 1;
  lambda(i, j)   some l < i has a gold edge with a_j;
  lambda'(i, j)  some l < i has a gold edge with a critical b_j' with
                 R(j') = R(j);
and sigma_max - |T n Tg| = M + score(k-1, k, N) + nchildren(k).

The quadratic algorithm fills the tables score[i][j][q] (0 <= i < j <= k) and
score'[i][j] (0 <= i < k, 1 <= j <= m) in order of increasing i (score(i, ..)
reads score(i-1, ..) and score'(i, ..); score'(i, ..) reads score'(i-1, ..)
and score(i-1, ..)): O(k (k + m)) time. The linear one evaluates the same
equations, with section 6's replacements, top down from score(k-1, k, N),
memoised in a sparse set (Briggs & Torczon 1993) over the same key space, so
that no table is cleared: the time is that of the states it visits, O(n) by
section 6 (tests: at most 20 per position), plus an O(log k) binary search
for each gold head on the stack (heads in the remaining input, whose node
ids are consecutive, are looked up directly; any other layout is searched
whole). Its recursion depth is at most 2(k + 1) calls. The sparse set reads
scratch ints that may never have been written; any value there is safe (a
hit needs the dense entry it points to to name the key).

Decisions where the paper is terse or silent (each checked against brute
force over every configuration of random walks on random projective trees
with every restriction below; the alternatives marked "no difference" were
tried in a Python transcription of Table 5, for the paper's model with
several roots, on about 10^5 configurations, and changed no result):

- Gold edges only between nodes of the configuration. The paper's Tg is the
  whole sentence's; nodes already attached are gone, so "the parent of b is
  not in B" includes a parent already attached (b is then critical and the
  root of its component), and descendants are followed only through nodes
  of the configuration. (No difference found when such a b is not counted
  as critical: it can always be attached with a non-gold edge.)
- R(j) is, as written, the largest ancestor index, although the text calls
  it "the critical element that is rightmost in that component" (they
  differ only for a component whose root has no gold parent in A; no
  difference found).
- Restrictions (the paper: "w(i, j) = -inf for an appropriate subset of
  pairs"): w = edge_weight of the configuration. nchildren(i) and c(i) count
  only edges with w = 1 (the paper defines nchildren through w; c through
  w too, so that c(i) is a child nchildren(i) counts; no difference found
  defining it through Tg). Every edge a step of the recursion creates
  explicitly is weighted by w: score's first value by w(i, j), its second by
  w(j, i), its third needs w(b_p(j), a_j) > -inf; score'(i, j)'s first value
  needs w(b, a_i) > -inf for the b it reduces a_i into, its second
  w(a_i, b_j) > -inf (the paper writes no w in score' and in score's third
  value: without restrictions on the remaining input, only the second of
  these can be -inf, and only for i = top, which score' never has).
  Table 5 is exact for these restrictions, the strategies' (section 2):
  no_left_below <= top + 1 and no_left <= top (any stack positions without
  left children) and no_right -1 or top. For no_right below the top (never
  used by a strategy) the section 6 pruning is not exact, as it assumes
  that a non-gold right edge is always possible; the Python function
  refuses those (no_right = 0 aside, see below), and restrictions inside the
  remaining input.
- One root (the package's model, graph/split_grammars.pxd): node 0 takes exactly
  one child, by the computation's last step; the paper lets node 0 take
  children at any time. The only place Table 5 lets node 0 take a child is
  score(0, j, q)'s first value (a_j, then node 0's children in B: a final
  phase of subtrees hung from node 0), and every such phase can be rebuilt
  with one root at no loss: the other subtrees (and a_j) hang from the gold
  root g if g is among them (as left children of g, or as its right
  children), else from a_j (right children) or from the last subtree's root
  (left children), none of them a buffer node's forbidden edge. The one
  exception: a_j = g, the top, with no_right = its position and remaining
  input (j = top then, so i = 0 means the input is untouched): g cannot be
  the root over that input, so the edge 0 -> a_j counts 0 there instead of
  1. With that change (and NEG_SCORE below) the results equal the
  single-rooted brute force; without it they differ, e.g. stack [0, 1],
  buffer [2], gold 0 -> 1 -> 2, no_right = 1: 1 with several roots, 0 with one.
- NEG_SCORE: with these restrictions the only configurations with no
  computation are those with no_right = 0 (node 0 takes no child) and words
  left: answered directly. Everything else has one (shifts, then
  Right-Arcs; with no_right = top, the top first reduced into the node below
  it or, for the stack [0, a], into the next word).
- score's third value: the paper says "a reduction of a_i into b_l"; it is
  a_j, the top, that is reduced into its parent b_l = b_p(j) (the stack
  becomes a_0 .. a_i b_l, as the paper says, and as score'(i, p(j)) reads).
- kappa(i): "the smallest l' such that a_l' and a_i share a gold edge" is
  taken over l' < i (a larger l' is not below a_i on the stack); lambda
  likewise over l < i, as written. Gold edges in kappa, lambda and lambda'
  are Tg's (not w's).
- Edge cases: stack [0] (k = 0): score(-1, 0, N) = 0 and the result is
  M + nchildren(0); an empty buffer has m = 0, so score' is never read;
  node 0 is never a child (w(j, 0) = -inf), which also covers gold edges
  from the remaining input into node 0 (they do not exist: node 0 has no
  parent, and edges b -> 0 are impossible), and node 0 as a_0 is an
  ordinary stack node otherwise.

Times per call by algorithm and length: `python -m benchmarks optimal-step-timing`
(docs/results/arc_standard/).
"""
from cymem.cymem cimport Pool

from ..graph.split_grammars cimport NEG_SCORE, ShiftReduceConfig, config_from_python, edge_weight


cdef enum:
    Q_N = 0     # none of the current component's critical nodes shifted
    Q_C = 1     # the current critical node consumed
    Q_F = 2     # fresh: not consumed, but an earlier one of its component


cdef struct Ctx:
    const ShiftReduceConfig* c
    bint linear
    int k               # top
    int m               # critical nodes b_1..b_m
    int M
    int* hp             # [position] gold head's position, -1 if none present
    int* cidx           # [position] critical index 1..m, 0 if not critical
    int* crit           # [1..m] position of b_j
    int* Rr             # [0..m] R(j), R(0) = 0 (0 stands for undefined)
    int* minAR          # [1..m] smallest stack l with a gold edge into R's group
    int* p              # [stack] p(i)
    int* pge            # [stack] p>=(i)
    int* Pge            # [stack] P>=(i)
    int* cc             # [stack] c(i)
    int* nch            # [stack] nchildren(i)
    int* minnb          # [stack] smallest l with a gold edge to a_i (i if none)
    int n_score_keys    # k (k + 1) 3
    int* table          # quadratic: score then score'; linear: the sparse array
    int* dense_key      # linear: the sparse set's dense part
    int* dense_val
    int count


cdef inline int mul(int a, int b) noexcept nogil:
    if a <= NEG_SCORE or b <= NEG_SCORE:
        return NEG_SCORE
    return a + b


cdef inline int imax(int a, int b) noexcept nogil:
    return a if a > b else b


cdef int projective_scratch_size(int length) noexcept nogil:
    cdef int L = length - 1 if length > 1 else 1
    # 16 arrays of length + 1 for the tabulated functions; the key space of
    # the tables is k (k + 1) 3 + k (m + 1) <= 4 L (L + 1), three times over
    # for the sparse set.
    return 16 * (length + 1) + 12 * L * (L + 1)


cdef int find_position(const ShiftReduceConfig* c, int node, bint contiguous) noexcept nogil:
    """The position of node id `node` in the configuration, -1 if absent."""
    cdef int lo = 0, hi = c.last, mid
    if node < 0 or node > c.nodes[c.last]:
        return -1
    if contiguous and c.last > c.top:
        if node >= c.nodes[c.top + 1]:
            return c.top + 1 + node - c.nodes[c.top + 1]
        hi = c.top
    while lo <= hi:
        mid = (lo + hi) >> 1
        if c.nodes[mid] == node:
            return mid
        if c.nodes[mid] < node:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


cdef void prepare(Ctx* x, const ShiftReduceConfig* c, int* scratch) noexcept nogil:
    """Tabulate the paper's functions (see the module docstring) in O(n)."""
    cdef int L = c.last, k = c.top, n = L + 1
    cdef int i, j, y, h, t, r, acc, lo, hi
    cdef bint contiguous = L == k or c.nodes[L] - c.nodes[k + 1] == L - k - 1
    cdef int* mark = scratch
    cdef int* path = scratch + (n + 1)
    x.c = c
    x.k = k
    x.hp = scratch + 2 * (n + 1)
    x.cidx = scratch + 3 * (n + 1)
    x.crit = scratch + 4 * (n + 1)
    x.Rr = scratch + 5 * (n + 1)
    x.minAR = scratch + 6 * (n + 1)
    x.p = scratch + 7 * (n + 1)
    x.pge = scratch + 8 * (n + 1)
    x.Pge = scratch + 9 * (n + 1)
    x.cc = scratch + 10 * (n + 1)
    x.nch = scratch + 11 * (n + 1)
    x.minnb = scratch + 12 * (n + 1)
    x.table = scratch + 16 * (n + 1)
    cdef int* hp = x.hp
    cdef int* cidx = x.cidx
    for i in range(n):
        hp[i] = -1 if i == 0 else find_position(c, c.gold_heads[c.nodes[i]], contiguous)
        mark[i] = 0
        cidx[i] = 0
    # Nodes with a gold descendant on the stack.
    for i in range(k + 1):
        y = hp[i]
        while y >= 0 and not mark[y]:
            mark[y] = 1
            y = hp[y]
    # Critical nodes, M.
    x.m = 0
    x.M = 0
    for i in range(k + 1, n):
        if hp[i] > k:
            x.M += 1
        if mark[i] or hp[i] <= k:
            x.m += 1
            x.crit[x.m] = i
            cidx[i] = x.m
    # R(j) = max(j, R(critical parent of b_j)): each node once, along paths.
    x.Rr[0] = 0
    for j in range(1, x.m + 1):
        x.Rr[j] = 0
    for j in range(1, x.m + 1):
        t = 0
        y = j
        while y and not x.Rr[y]:
            path[t] = y
            t += 1
            h = hp[x.crit[y]]
            y = cidx[h] if h > k else 0
        acc = x.Rr[y] if y else 0
        while t > 0:
            t -= 1
            acc = imax(acc, path[t])
            x.Rr[path[t]] = acc
    # lambda': smallest stack position with a gold edge into each R group.
    for j in range(1, x.m + 1):
        x.minAR[j] = k + 1
    for i in range(n):
        h = hp[i]
        if i <= k and h > k:
            r = x.Rr[cidx[h]]
        elif i > k and cidx[i] and 0 <= h <= k:
            r = x.Rr[cidx[i]]
        else:
            continue
        lo = i if i <= k else h
        if r and lo < x.minAR[r]:
            x.minAR[r] = lo
    # The stack's functions.
    for i in range(k + 1):
        h = hp[i]
        x.p[i] = cidx[h] if h > k else 0
        x.cc[i] = 0
        x.nch[i] = 0
        x.minnb[i] = i
    x.pge[k] = x.p[k]
    for i in range(k - 1, -1, -1):
        x.pge[i] = x.p[i] if x.p[i] else x.pge[i + 1]
    for i in range(k + 1):
        x.Pge[i] = x.Rr[x.pge[i]]
    for i in range(k + 1, n):
        h = hp[i]
        if 0 <= h <= k and edge_weight(c, h, i) == 1:
            x.nch[h] += 1
            if not x.cc[h]:
                x.cc[h] = cidx[i]
    for i in range(k + 1):
        h = hp[i]
        if 0 <= h <= k:
            lo = h if h < i else i
            hi = i if h < i else h
            if lo < x.minnb[hi]:
                x.minnb[hi] = lo
    x.n_score_keys = k * (k + 1) * 3
    x.count = 0
    cdef int n_keys = x.n_score_keys + k * (x.m + 1)
    x.dense_key = x.table + n_keys
    x.dense_val = x.dense_key + n_keys


cdef inline int tau(const Ctx* x, int i, int j, int q) noexcept nogil:
    if q == Q_N or x.Pge[i] != x.Pge[j]:
        return Q_N
    if x.pge[i] != x.pge[j]:
        return Q_F
    return q


cdef inline int tau_prime(const Ctx* x, int i, int j) noexcept nogil:
    if x.Pge[i] != x.Rr[j]:
        return Q_N
    if x.pge[i] != j:
        return Q_F
    return Q_C


cdef inline int kappa(const Ctx* x, int i) noexcept nogil:
    return x.minnb[i] if x.minnb[i] < i else i - 1


cdef inline int score_key(const Ctx* x, int i, int j, int q) noexcept nogil:
    return (i * (x.k + 1) + j) * 3 + q


cdef inline int score_prime_key(const Ctx* x, int i, int j) noexcept nogil:
    return x.n_score_keys + i * (x.m + 1) + j


cdef inline int memo(Ctx* x, int key, int* value) noexcept nogil:
    """Linear: 1 and the value if the sparse set holds key, else 0."""
    cdef int slot = x.table[key]
    if <unsigned int>slot < <unsigned int>x.count and x.dense_key[slot] == key:
        value[0] = x.dense_val[slot]
        return 1
    return 0


cdef inline void remember(Ctx* x, int key, int value) noexcept nogil:
    x.table[key] = x.count
    x.dense_key[x.count] = key
    x.dense_val[x.count] = value
    x.count += 1


cdef int get_score(Ctx* x, int i, int j, int q) noexcept nogil:
    cdef int key, value
    if i < 0:
        return 0
    key = score_key(x, i, j, q)
    if not x.linear:
        return x.table[key]
    if memo(x, key, &value):
        return value
    value = compute_score(x, i, j, q)
    remember(x, key, value)
    return value


cdef int get_score_prime(Ctx* x, int i, int j) noexcept nogil:
    cdef int key, value
    if i < 0:
        return 0
    key = score_prime_key(x, i, j)
    if not x.linear:
        return x.table[key]
    if memo(x, key, &value):
        return value
    value = compute_score_prime(x, i, j)
    remember(x, key, value)
    return value


cdef int compute_score(Ctx* x, int i, int j, int q) noexcept nogil:
    """score(i, j, q) for i >= 0: from stack a_0..a_i a_j, the remaining
    input as q says."""
    cdef const ShiftReduceConfig* c = x.c
    cdef int best = NEG_SCORE, w, d, pj
    # a_j reduced into a_i, then a_i's children in B.
    w = edge_weight(c, i, j)
    if i == 0 and w == 1 and j == c.no_right and c.last > c.top:
        # Node 0 takes a_j only as its one child, by the last step: a_j,
        # taking no right child, cannot be the root over the remaining input.
        w = 0
    if w != NEG_SCORE:
        d = 1 if q != Q_N and x.cc[i] and x.cc[i] == x.Pge[j] else 0
        best = imax(best, mul(x.nch[i] - d + w, get_score(x, i - 1, i, tau(x, i, j, q))))
    # a_i reduced into a_j.
    w = edge_weight(c, j, i)
    if not x.linear:
        if w != NEG_SCORE:
            best = imax(best, mul(w, get_score(x, i - 1, j, q)))
    elif w == 1:
        best = imax(best, mul(1, get_score(x, i - 1, j, q)))
    elif w == 0 and x.minnb[j] < i:
        best = imax(best, get_score(x, kappa(x, i), j, q))
    # a_j reduced into its parent b_p(j), shifted.
    pj = x.p[j]
    if pj and q != Q_C and edge_weight(c, x.crit[pj], j) != NEG_SCORE:
        best = imax(best, mul(1 if q == Q_N else 0, get_score_prime(x, i, pj)))
    return best


cdef int compute_score_prime(Ctx* x, int i, int j) noexcept nogil:
    """score'(i, j) for i >= 0: from stack a_0..a_i b_j."""
    cdef const ShiftReduceConfig* c = x.c
    cdef int best = NEG_SCORE, pi = x.p[i], b = x.crit[j]
    if pi and x.Rr[pi] == x.Rr[j]:
        # a_i reduced into its gold parent b_p(i), in b_j's group.
        if edge_weight(c, x.crit[pi], i) != NEG_SCORE:
            best = mul(1, get_score_prime(x, i - 1, pi))
    elif edge_weight(c, b, i) != NEG_SCORE:
        # a_i reduced into b_j, not gold.
        if not x.linear:
            best = get_score_prime(x, i - 1, j)
        elif x.minAR[x.Rr[j]] < i:
            best = get_score_prime(x, kappa(x, i), j)
    # b_j reduced into a_i, then a_i's children in B.
    if edge_weight(c, i, b) != NEG_SCORE:
        best = imax(best, mul(x.nch[i], get_score(x, i - 1, i, tau_prime(x, i, j))))
    return best


cdef int config_score_projective(const ShiftReduceConfig* c, bint linear, int* scratch) noexcept nogil:
    cdef int n_states
    return score_and_states(c, linear, scratch, &n_states)


cdef int score_and_states(const ShiftReduceConfig* c, bint linear, int* scratch,
                          int* n_states) noexcept nogil:
    """config_score_projective, and in n_states the number of values
    score/score' the algorithm computed."""
    cdef Ctx x
    cdef int i, j, q, k = c.top, m, score
    n_states[0] = 0
    if c.no_right == 0 and c.last > 0:
        return NEG_SCORE        # node 0 takes no child, yet some node needs a parent
    prepare(&x, c, scratch)
    x.linear = linear
    m = x.m
    if not linear:
        for i in range(k):
            for j in range(1, m + 1):
                x.table[score_prime_key(&x, i, j)] = compute_score_prime(&x, i, j)
            for j in range(i + 1, k + 1):
                for q in range(3):
                    x.table[score_key(&x, i, j, q)] = compute_score(&x, i, j, q)
        n_states[0] = k * m + 3 * k * (k + 1) // 2
    score = mul(x.M, mul(get_score(&x, k - 1, k, Q_N), x.nch[k]))
    if linear:
        n_states[0] = x.count
    return score


def config_score_projective_py(stack, buffer, gold_heads, int no_left_below=0, int no_left=-1,
                               int no_right=-1, bint linear=False):
    """Section 5's (linear=False) or section 6's (linear=True) algorithm from
    Python (tests, tools), with the signature of the cubic
    ``graph.split_grammars.config_score``: the most gold edges a computation from
    the configuration (stack bottom first, starting with 0; buffer front
    first) to the final one creates without a forbidden edge, None if no
    computation avoids them. gold_heads: head of word k at gold_heads[k-1]; the
    gold tree must be projective. Restrictions (positions index stack +
    buffer): those of the strategies only, no_left_below <= top + 1,
    no_left <= top, no_right -1, 0 or top (ValueError otherwise)."""
    return run(stack, buffer, gold_heads, no_left_below, no_left, no_right, linear)[0]


def run(stack, buffer, gold_heads, int no_left_below=0, int no_left=-1, int no_right=-1,
        bint linear=False, int repeats=1):
    """config_score_projective_py's work, `repeats` times over (for timing
    the nogil function by hand), returning (score or None, the number of
    score/score' values computed: all k (k + 1) 3 / 2 + k m of the tables for
    the quadratic algorithm, those visited for the linear one)."""
    nodes_list = list(stack) + list(buffer)
    cdef int top = len(stack) - 1, r, score = 0, n_states = 0
    if no_left_below > top + 1 or no_left > top or no_right not in (-1, 0, top):
        raise ValueError("Only the strategies' restrictions are supported: "
                         "no_left_below <= top + 1, no_left <= top, no_right -1, 0 or top.")
    if any(b <= a for a, b in zip(nodes_list, nodes_list[1:])):
        raise ValueError("The node ids must increase along stack + buffer.")
    cdef Pool mem = Pool()
    cdef ShiftReduceConfig c = config_from_python(mem, stack, buffer, gold_heads, no_left_below,
                                                  no_left, no_right)
    cdef int* scratch = <int*>mem.alloc(projective_scratch_size(c.last + 1), sizeof(int))
    with nogil:
        for r in range(repeats):
            score = score_and_states(&c, linear, scratch, &n_states)
    return (None if score <= NEG_SCORE else score), n_states


# The Python name of the function above is that of the cdef function (which a
# module's dict does not hold; Cython refuses a def of the same name).
globals()["config_score_projective"] = config_score_projective_py
