# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Weighted parsing with split context-free grammars (Nederhof 2019,
"Calculating the optimal step in shift-reduce dependency parsing", section 3),
and its two uses:

- ``optimal_projectivization(heads) -> (proj_heads, kept, count)``: a
  projective tree with the most arcs in common with a (possibly
  non-projective) tree, and how many such trees there are (end of section 3);
- ``config_score`` / ``config_score_cubic``: the O(n^3) optimal-step
  algorithm of section 4: the most gold edges that any shift-reduce
  computation from a configuration can still create, whether or not the gold
  tree is projective (node 0 taking one child, at the end). The `arc_standard` system's oracle calls it three times
  per configuration, once per step.

The tabular algorithm (Table 2) works for any split grammar (`Grammar`): a
node's left children are attached by rules (B', ) -> A (B, ) from the inside
out, its right children by ( , C') -> ( , C) A, each process starting from the
states of the node's terminal rule (B, C) -> a and ending in a complete symbol
A -> (B, C). With edge weights w(i, j) for parent i, child j, the max-plus
semiring gives the best derivation's weight; with `counts`, the number of
best derivations is counted alongside (the counting semiring restricted to
the argmax). Items, for positions i <= j:

  CL[B][i][j]     j's left part over i..j, ended in left state B
  CR[C][i][j]     i's right part over i..j, ended in right state C
  IL[C][B][i][j]  i's right part (state C) + j's left part (state B) with
                  the edge j -> i: i is about to become j's left child
  IR[C][B][i][j]  the same with the edge i -> j

  IL/IR[C][B][i][j] = max_k CR[C][i][k] + CL[B][k+1][j]  (+ w(j,i) / w(i,j))
  CL[B'][i][j]      = max over (B', D, C, B), i <= k < j:  CL[D][i][k] + IL[C][B][k][j]
  CR[C'][i][j]      = max over (C', C, B, D), i < k <= j:  IR[C][B][i][k] + CR[D][k][j]
  W                 = max over S -> (B, C): CL[B][0][0] + CR[C][0][n]

in O(n^3) time and O(n^2) memory (tables in the caller's buffer), weights
restricted to 0, 1 and NEG_SCORE (so a negative item is dead). Each tree has
one derivation in a grammar without spurious ambiguity (Eisner's order:
children attached from the inside out), so the counts count trees.

Single-rooted trees (`best_single_rooted`): the root node takes exactly one
child x, and x's left and right parts span all the words, so the best tree
is the best over x of CL(0..x) + CR(x..n-1) + w(root, x) over the words'
items (UD trees have one root; the paper's grammars let node 0 take
several children).

Grammars:

- Table 3's (one symbol S): projective trees, for optimal projectivization.
  The optimum is the same with one root or several (every extra child of 0
  can be re-attached to the kept one at no loss); the counts are of
  single-rooted trees.
- Table 4's for a configuration with stack a_0..a_k and remaining input
  b_1..b_m, the words read as p^(k-1) s^(m+1): P is a stack word below the
  top with no children, S a word with the top or an input word among its
  descendants. Node 0 taking one child by the last step makes the optimal
  step exact for arc_standard, whose Right-Arc attaches to node 0 only then.
  The strategies of section 2 enter as forbidden edges (see
  `ShiftReduceConfig`).
"""
from cymem.cymem cimport Pool

# Table 4's symbols (left states, right states and complete symbols alike)
# and terminals.
cdef enum:
    P = 0
    S = 1

cdef Grammar TABLE4
cdef Grammar TABLE3


cdef void set_left_tuple(Grammar* g, int c_after, int d, int b, int c_before):
    cdef int t = g.n_left_tuples
    g.left_tuples[t][0] = c_after
    g.left_tuples[t][1] = d
    g.left_tuples[t][2] = b
    g.left_tuples[t][3] = c_before
    g.n_left_tuples += 1


cdef void set_right_tuple(Grammar* g, int b_after, int b_before, int c, int d):
    cdef int t = g.n_right_tuples
    g.right_tuples[t][0] = b_after
    g.right_tuples[t][1] = b_before
    g.right_tuples[t][2] = c
    g.right_tuples[t][3] = d
    g.n_right_tuples += 1


cdef void set_start(Grammar* g, int b, int c):
    g.start[g.n_start][0] = b
    g.start[g.n_start][1] = c
    g.n_start += 1


cdef int group_of(int (*groups)[2], int* n_groups, int after, int child) noexcept:
    cdef int gr
    for gr in range(n_groups[0]):
        if groups[gr][0] == after and groups[gr][1] == child:
            return gr
    groups[n_groups[0]][0] = after
    groups[n_groups[0]][1] = child
    n_groups[0] += 1
    return n_groups[0] - 1


cdef void finish_grammar(Grammar* g):
    """The derived fields (see Grammar in split_grammars.pxd)."""
    cdef int t, state
    g.n_left_groups = 0
    g.n_right_groups = 0
    for state in range(MAX_STATES):
        g.left_spans[state] = False
        g.right_spans[state] = False
    for t in range(g.n_left_tuples):
        g.left_group_of[t] = group_of(g.left_groups, &g.n_left_groups,
                                      g.left_tuples[t][0], g.left_tuples[t][1])
        g.left_spans[g.left_tuples[t][0]] = True
    for t in range(g.n_right_tuples):
        g.right_group_of[t] = group_of(g.right_groups, &g.n_right_groups,
                                       g.right_tuples[t][0], g.right_tuples[t][3])
        g.right_spans[g.right_tuples[t][0]] = True


cdef void build_table4(Grammar* g):
    """Table 4: (P,P) -> p; (S,S) -> s; P -> (P,P); S -> (P,S); S -> (S,S);
    (S, ) -> P (S, ); (S, ) -> S (S, ); (S, ) -> P (P, ); ( , S) -> ( , P) S;
    ( , S) -> ( , S) S; start symbol S."""
    g.n_left = 2
    g.n_right = 2
    g.n_terminals = 2
    g.init_left[P] = P
    g.init_right[P] = P
    g.init_left[S] = S
    g.init_right[S] = S
    g.n_left_tuples = 0
    g.n_right_tuples = 0
    g.n_start = 0
    # Left children: a P child (P -> (P,P)) moves P or S to S; an S child
    # (S -> (P,S) | (S,S)) keeps S.
    set_left_tuple(g, S, P, P, S)
    set_left_tuple(g, S, P, P, P)
    set_left_tuple(g, S, P, S, S)
    set_left_tuple(g, S, S, S, S)
    # Right children are S children (S -> (P,S) | (S,S)), from P or S to S.
    set_right_tuple(g, S, P, P, S)
    set_right_tuple(g, S, P, S, S)
    set_right_tuple(g, S, S, P, S)
    set_right_tuple(g, S, S, S, S)
    set_start(g, P, S)
    set_start(g, S, S)


cdef void build_table3(Grammar* g):
    """Table 3, projective trees: (S,S) -> a; S -> (S,S); (S, ) -> S (S, );
    ( , S) -> ( , S) S."""
    g.n_left = 1
    g.n_right = 1
    g.n_terminals = 1
    g.init_left[0] = 0
    g.init_right[0] = 0
    g.n_left_tuples = 0
    g.n_right_tuples = 0
    g.n_start = 0
    set_left_tuple(g, 0, 0, 0, 0)
    set_right_tuple(g, 0, 0, 0, 0)
    set_start(g, 0, 0)


build_table4(&TABLE4)
build_table3(&TABLE3)
finish_grammar(&TABLE4)
finish_grammar(&TABLE3)


# -- the tabular algorithm ------------------------------------------------------

cdef inline int item_cells(const Grammar* g) noexcept nogil:
    """Tables per position pair: CL, CR, IL, IR, the groups' IL, IR, and CL,
    CR transposed."""
    return (2 * (g.n_left + g.n_right) + 2 * g.n_left * g.n_right + g.n_left_groups
            + g.n_right_groups)


cdef int tabular_scratch_size(const Grammar* g, int length) noexcept nogil:
    return item_cells(g) * length * length


cdef struct Tables:
    int N               # positions
    int* cl             # [B][i][j]
    int* cr             # [C][i][j]
    int* il             # [C][B][i][j]
    int* ir
    int* ilg            # [left group][j][i] (transposed): the group's best IL item
    int* irg            # [right group][i][j]
    int* clt            # CL and CR again, transposed ([state][j][i]), so that
    int* crt            # every split scan reads consecutive cells
    double* ncl         # the same layout for counts (NULL: not counted)
    double* ncr
    double* nil
    double* nir
    double* nilg
    double* nirg


cdef inline Tables split_tables(const Grammar* g, int N, int* tables, double* counts) noexcept nogil:
    cdef Tables t
    cdef int NN = N * N
    cdef int n_incomplete = g.n_left * g.n_right * NN
    t.N = N
    t.cl = tables
    t.cr = t.cl + g.n_left * NN
    t.il = t.cr + g.n_right * NN
    t.ir = t.il + n_incomplete
    t.ilg = t.ir + n_incomplete
    t.irg = t.ilg + g.n_left_groups * NN
    t.clt = t.irg + g.n_right_groups * NN
    t.crt = t.clt + g.n_left * NN
    if counts != NULL:
        t.ncl = counts
        t.ncr = t.ncl + g.n_left * NN
        t.nil = t.ncr + g.n_right * NN
        t.nir = t.nil + n_incomplete
        t.nilg = t.nir + n_incomplete
        t.nirg = t.nilg + g.n_left_groups * NN
    else:
        t.ncl = t.ncr = t.nil = t.nir = t.nilg = t.nirg = NULL
    return t


cdef inline int plus(int a, int b) noexcept nogil:
    return NEG_SCORE if a < 0 or b < 0 else a + b


cdef inline int max_sum(const int* a, const int* b, int lo, int hi) noexcept nogil:
    """max over k in lo..hi of a[k] + b[k], NEG_SCORE if every sum is
    negative (a dead item). Stored items are >= 0 or exactly NEG_SCORE, so
    no sum overflows; a plain loop the compiler vectorizes."""
    cdef int k, v, best = NEG_SCORE
    for k in range(lo, hi + 1):
        v = a[k] + b[k]
        if v > best:
            best = v
    return best if best >= 0 else NEG_SCORE


cdef inline void keep_best(int v, double n, int* best, double* count) noexcept nogil:
    """Max-plus (with the count of derivations reaching the max) of a
    candidate v reached by n derivations."""
    if v < 0 or v < best[0]:
        return
    if v > best[0]:
        best[0] = v
        count[0] = 0.0
    count[0] += n


cdef void fill_tables(const Grammar* g, const int* terminals, int length, const int* weights,
                      Tables T) noexcept nogil:
    """Every item over positions 0..length-1 with these terminals; weights[i
    * length + j] = w(i, j) in {0, 1, NEG_SCORE}."""
    cdef int N = length, NN = N * N, i, j, k, d, b, c, t, gr, best, lo, hi, x, y
    cdef int dd
    cdef double cnt
    cdef bint counting = T.ncl != NULL
    for i in range(N):
        for b in range(g.n_left):
            T.cl[b * NN + i * N + i] = 0 if b == g.init_left[terminals[i]] else NEG_SCORE
            T.clt[b * NN + i * N + i] = T.cl[b * NN + i * N + i]
            if counting:
                T.ncl[b * NN + i * N + i] = 1.0 if b == g.init_left[terminals[i]] else 0.0
        for c in range(g.n_right):
            T.cr[c * NN + i * N + i] = 0 if c == g.init_right[terminals[i]] else NEG_SCORE
            T.crt[c * NN + i * N + i] = T.cr[c * NN + i * N + i]
            if counting:
                T.ncr[c * NN + i * N + i] = 1.0 if c == g.init_right[terminals[i]] else 0.0
    for d in range(1, N):
        for i in range(N - d):
            j = i + d
            # Incomplete items: i's right part (i..k) meets j's left part
            # (k+1..j); a part in a state that never spans stays one position.
            for c in range(g.n_right):
                for b in range(g.n_left):
                    best = NEG_SCORE
                    cnt = 0.0
                    lo = i if g.left_spans[b] else j - 1
                    hi = j - 1 if g.right_spans[c] else i
                    if not counting:
                        best = max_sum(T.cr + c * NN + i * N, T.clt + b * NN + j * N + 1, lo, hi)
                    for k in range(lo, hi + 1 if counting else lo):
                        x = c * NN + i * N + k
                        y = b * NN + j * N + k + 1
                        keep_best(plus(T.cr[x], T.clt[y]),
                                  T.ncr[x] * T.ncl[b * NN + (k + 1) * N + j], &best, &cnt)
                    t = (c * g.n_left + b) * NN + i * N + j
                    T.il[t] = plus(best, weights[j * N + i])
                    T.ir[t] = plus(best, weights[i * N + j])
                    if counting:
                        T.nil[t] = cnt if T.il[t] >= 0 else 0.0
                        T.nir[t] = cnt if T.ir[t] >= 0 else 0.0
            # Each attachment group's best incomplete item.
            for gr in range(g.n_left_groups):
                best = NEG_SCORE
                cnt = 0.0
                for t in range(g.n_left_tuples):
                    if g.left_group_of[t] == gr:
                        x = (g.left_tuples[t][2] * g.n_left + g.left_tuples[t][3]) * NN + i * N + j
                        keep_best(T.il[x], T.nil[x] if counting else 0.0, &best, &cnt)
                T.ilg[gr * NN + j * N + i] = best
                if counting:
                    T.nilg[gr * NN + i * N + j] = cnt
            for gr in range(g.n_right_groups):
                best = NEG_SCORE
                cnt = 0.0
                for t in range(g.n_right_tuples):
                    if g.right_group_of[t] == gr:
                        x = (g.right_tuples[t][1] * g.n_left + g.right_tuples[t][2]) * NN + i * N + j
                        keep_best(T.ir[x], T.nir[x] if counting else 0.0, &best, &cnt)
                T.irg[gr * NN + i * N + j] = best
                if counting:
                    T.nirg[gr * NN + i * N + j] = cnt
            # Complete left: j takes its outermost left child k, whose own
            # left part is i..k.
            for b in range(g.n_left):
                best = NEG_SCORE
                cnt = 0.0
                for gr in range(g.n_left_groups):
                    if g.left_groups[gr][0] != b:
                        continue
                    dd = g.left_groups[gr][1]
                    hi = j - 1 if g.left_spans[dd] else i
                    if not counting:
                        best = max(best, max_sum(T.cl + dd * NN + i * N, T.ilg + gr * NN + j * N,
                                                 i, hi))
                    for k in range(i, hi + 1 if counting else i):
                        x = dd * NN + i * N + k
                        y = gr * NN + j * N + k
                        keep_best(plus(T.cl[x], T.ilg[y]),
                                  T.ncl[x] * T.nilg[gr * NN + k * N + j], &best, &cnt)
                T.cl[b * NN + i * N + j] = best
                T.clt[b * NN + j * N + i] = best
                if counting:
                    T.ncl[b * NN + i * N + j] = cnt
            # Complete right: i takes its outermost right child k, whose own
            # right part is k..j.
            for c in range(g.n_right):
                best = NEG_SCORE
                cnt = 0.0
                for gr in range(g.n_right_groups):
                    if g.right_groups[gr][0] != c:
                        continue
                    dd = g.right_groups[gr][1]
                    lo = i + 1 if g.right_spans[dd] else j
                    if not counting:
                        best = max(best, max_sum(T.irg + gr * NN + i * N, T.crt + dd * NN + j * N,
                                                 lo, j))
                    for k in range(lo, j + 1 if counting else lo):
                        x = gr * NN + i * N + k
                        y = dd * NN + j * N + k
                        keep_best(plus(T.irg[x], T.crt[y]),
                                  T.nirg[x] * T.ncr[dd * NN + k * N + j], &best, &cnt)
                T.cr[c * NN + i * N + j] = best
                T.crt[c * NN + j * N + i] = best
                if counting:
                    T.ncr[c * NN + i * N + j] = cnt


cdef int best_single_rooted(const Grammar* g, const int* terminals, int length,
                            const int* weights, const int* root_weights, int* tables,
                            double* counts, double* n_best, int* root) noexcept nogil:
    """The best tree over positions 0..length-1 (the words) whose root x
    hangs from an extra root node by an arc of weight root_weights[x]: the
    best of max over S -> (B, C) of CL[B][0][x] + CR[C][x][length-1] +
    root_weights[x], or NEG_SCORE if there is none (length 0: 0). `tables`
    (and `counts`, unless NULL): tabular_scratch_size(g, length) cells, left
    holding the items for a backtrace; root[0] is the best x (the first);
    with counts, n_best[0] is the number of best trees."""
    cdef int N = length, NN = N * N, x, t, v, best = NEG_SCORE
    cdef double cnt = 0.0
    cdef Tables T = split_tables(g, N, tables, counts)
    root[0] = -1
    if N == 0:
        if counts != NULL:
            n_best[0] = 1.0
        return 0
    fill_tables(g, terminals, N, weights, T)
    for x in range(N):
        for t in range(g.n_start):
            v = plus(plus(T.cl[g.start[t][0] * NN + x], T.cr[g.start[t][1] * NN + x * N + N - 1]),
                     root_weights[x])
            if v < 0 or v < best:
                continue
            if v > best:
                best = v
                cnt = 0.0
                root[0] = x
            if counts != NULL:
                cnt += T.ncl[g.start[t][0] * NN + x] * T.ncr[g.start[t][1] * NN + x * N + N - 1]
    if counts != NULL:
        n_best[0] = cnt
    return best


# -- optimal projectivization ------------------------------------------------------

cdef enum:
    ITEM_LEFT = 0           # CL[state][i][j]
    ITEM_RIGHT = 1          # CR[state][i][j]
    ITEM_EDGE_LEFT = 2      # IL[state][state2][i][j]: edge j -> i
    ITEM_EDGE_RIGHT = 3     # IR[state][state2][i][j]: edge i -> j


cdef void backtrace(const Grammar* g, Tables* T, const int* weights, int item, int state,
                    int state2, int i, int j, list heads):
    """Write into heads the edges of the item's best derivation (the first
    split found that reaches its weight)."""
    cdef int N = T.N, NN = N * N, k, t, dd, c2, b2, target
    if item == ITEM_EDGE_LEFT or item == ITEM_EDGE_RIGHT:
        if item == ITEM_EDGE_RIGHT:
            target = T.ir[(state * g.n_left + state2) * NN + i * N + j] - weights[i * N + j]
        else:
            target = T.il[(state * g.n_left + state2) * NN + i * N + j] - weights[j * N + i]
        for k in range(i, j):
            if plus(T.cr[state * NN + i * N + k], T.cl[state2 * NN + (k + 1) * N + j]) == target:
                backtrace(g, T, weights, ITEM_RIGHT, state, -1, i, k, heads)
                backtrace(g, T, weights, ITEM_LEFT, state2, -1, k + 1, j, heads)
                return
    elif item == ITEM_LEFT and i < j:
        # j's outermost left child k.
        target = T.cl[state * NN + i * N + j]
        for t in range(g.n_left_tuples):
            if g.left_tuples[t][0] != state:
                continue
            dd, c2, b2 = g.left_tuples[t][1], g.left_tuples[t][2], g.left_tuples[t][3]
            for k in range(i, j):
                if plus(T.cl[dd * NN + i * N + k],
                        T.il[(c2 * g.n_left + b2) * NN + k * N + j]) == target:
                    heads[k] = j
                    backtrace(g, T, weights, ITEM_LEFT, dd, -1, i, k, heads)
                    backtrace(g, T, weights, ITEM_EDGE_LEFT, c2, b2, k, j, heads)
                    return
    elif item == ITEM_RIGHT and i < j:
        # i's outermost right child k.
        target = T.cr[state * NN + i * N + j]
        for t in range(g.n_right_tuples):
            if g.right_tuples[t][0] != state:
                continue
            c2, b2, dd = g.right_tuples[t][1], g.right_tuples[t][2], g.right_tuples[t][3]
            for k in range(i + 1, j + 1):
                if plus(T.ir[(c2 * g.n_left + b2) * NN + i * N + k],
                        T.cr[dd * NN + k * N + j]) == target:
                    heads[k] = i
                    backtrace(g, T, weights, ITEM_EDGE_RIGHT, c2, b2, i, k, heads)
                    backtrace(g, T, weights, ITEM_RIGHT, dd, -1, k, j, heads)
                    return


def optimal_projectivization(heads):
    """A single-rooted projective tree with the most arcs in common with
    `heads`, how many arcs it keeps and how many such trees there are.

    heads: head of word k at heads[k-1] (0 = the root), a single-rooted tree
    (projective or not). Returns (proj_heads, kept, count): proj_heads in the
    same format, kept = the words whose head is unchanged (the root's
    included), count = the number of single-rooted projective trees keeping
    that many (a float; exact below 2**53). Among the best trees, the one
    returned is fixed by the search order (the paper, too, takes an
    arbitrary one)."""
    cdef int n = len(heads), i, j, best, root
    cdef double n_best = 0.0
    cdef Pool mem = Pool()
    cdef int* terminals = <int*>mem.alloc(max(1, n), sizeof(int))
    cdef int* weights = <int*>mem.alloc(max(1, n * n), sizeof(int))
    cdef int* root_weights = <int*>mem.alloc(max(1, n), sizeof(int))
    cdef int size = max(1, tabular_scratch_size(&TABLE3, n))
    cdef int* tables = <int*>mem.alloc(size, sizeof(int))
    cdef double* counts = <double*>mem.alloc(size, sizeof(double))
    # Position i is word i + 1.
    for i in range(n):
        root_weights[i] = 1 if heads[i] == 0 else 0
        for j in range(n):
            weights[i * n + j] = 1 if heads[j] == i + 1 else 0
    best = best_single_rooted(&TABLE3, terminals, n, weights, root_weights, tables, counts,
                              &n_best, &root)
    if n == 0:
        return [], 0, 1.0
    cdef Tables T = split_tables(&TABLE3, n, tables, counts)
    positions = [-1] * n
    positions[root] = -1
    backtrace(&TABLE3, &T, weights, ITEM_LEFT, TABLE3.start[0][0], -1, 0, root, positions)
    backtrace(&TABLE3, &T, weights, ITEM_RIGHT, TABLE3.start[0][1], -1, root, n - 1, positions)
    return [h + 1 for h in positions], best, n_best


# -- the optimal step (section 4) ------------------------------------------------

cdef int config_scratch_size(int length) noexcept nogil:
    return length + length * length + tabular_scratch_size(&TABLE4, length)


cdef int config_score_cubic(const ShiftReduceConfig* c, int* scratch) noexcept nogil:
    """Table 4's grammar over the positions of the words (p below the stack
    top, s from the top on), weights from `edge_weight`; node 0 takes one
    child, the root of the rest (see split_grammars.pxd)."""
    cdef int N = c.last, i, j, root
    cdef int* terminals = scratch
    cdef int* root_weights = scratch + N
    cdef int* weights = scratch + 2 * N
    for i in range(N):
        terminals[i] = P if i + 1 < c.top else S
        root_weights[i] = edge_weight(c, 0, i + 1)
        for j in range(N):
            weights[i * N + j] = NEG_SCORE if i == j else edge_weight(c, i + 1, j + 1)
    return best_single_rooted(&TABLE4, terminals, N, weights, root_weights, weights + N * N,
                              NULL, NULL, &root)


cdef ShiftReduceConfig config_from_python(Pool mem, stack, buffer, gold_heads,
                                           int no_left_below, int no_left,
                                           int no_right) except *:
    """A ShiftReduceConfig (its arrays in `mem`) from Python lists: the stack
    bottom first, starting with 0; the buffer front first; gold_heads[k-1]
    the head of word k."""
    nodes_list = list(stack) + list(buffer)
    if not stack or stack[0] != 0:
        raise ValueError("The stack must start with the root node 0.")
    cdef int N = len(nodes_list), k
    cdef int* nodes = <int*>mem.alloc(N, sizeof(int))
    cdef int* gold = <int*>mem.alloc(len(gold_heads) + 1, sizeof(int))
    for k in range(N):
        nodes[k] = nodes_list[k]
    gold[0] = -1
    for k in range(len(gold_heads)):
        gold[k + 1] = gold_heads[k]
    cdef ShiftReduceConfig c
    c.nodes = nodes
    c.last = N - 1
    c.top = len(stack) - 1
    c.gold_heads = gold
    c.no_left_below = no_left_below
    c.no_left = no_left
    c.no_right = no_right
    return c


def config_score(stack, buffer, gold_heads, int no_left_below=0, int no_left=-1,
                 int no_right=-1):
    """The cubic algorithm from Python (tests, tools): the most gold edges a
    computation from the configuration (stack bottom first, starting with 0;
    buffer front first) to the final one creates without a forbidden edge
    (see ShiftReduceConfig; positions index stack + buffer), None if no
    computation avoids them. gold_heads: head of word k at gold_heads[k-1]."""
    cdef Pool mem = Pool()
    cdef ShiftReduceConfig c = config_from_python(mem, stack, buffer, gold_heads, no_left_below,
                                                  no_left, no_right)
    cdef int* scratch = <int*>mem.alloc(config_scratch_size(c.last + 1), sizeof(int))
    score = config_score_cubic(&c, scratch)
    return None if score < 0 else score
