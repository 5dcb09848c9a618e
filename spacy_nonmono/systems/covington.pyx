# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Monotonic non-projective Covington parser (Nivre 2008 formulation).

Configuration <lambda1|i, lambda2, j|B, A>, stored as the focus words (i, j):
lambda1 = [0..i], lambda2 = [i+1..j-1], B = [j..n]. Node 0 is an explicit
root, so the root arc 0 -> r is built by Right-Arc like any other arc; one
root per sentence is enforced by allowing Right-Arc from 0 only while 0 has
no dependent. Moves: 0 = Shift, 1 = No-Arc, 2+l = Left-Arc(l), 2+L+l =
Right-Arc(l).

Oracles (Gomez-Rodriguez & Fernandez-Gonzalez 2015, Algorithm 1 of
Fernandez-Gonzalez & Gomez-Rodriguez 2017): the static oracle, and the exact
dynamic oracle loss |U| + cycles(A u I), plus one per correct arc with a
wrong label. A move's cost is the loss difference it causes.
"""
from libc.stdlib cimport malloc, free
from cymem.cymem cimport Pool

from .base cimport INVALID_COST, StateC, GoldC, TransitionSystem, alloc_state, copy_state, token_row
from ..graph.algorithms cimport weak_components, has_path, count_cycles_single_head

# Context slots read by the model (a subset of the paper's Table 2).
CONTEXT_NAMES = (
    "L0", "L1", "L2", "R0", "R1", "R2",
    "L0h", "L0h2", "L0l", "L0l'", "L0r", "L0r'",
    "R0h", "R0h2", "R0l", "R0l'",
    "CL", "CR",
)


cdef bint root_has_dependent(const StateC* s) noexcept nogil:
    cdef int k
    for k in range(1, s.n + 1):
        if s.heads[k] == 0:
            return True
    return False


cdef int label_error(const GoldC* gold, int head, int dep, int label) noexcept nogil:
    """1 if head -> dep is a gold arc and `label` is not its gold label."""
    return 1 if gold.heads[dep] == head and gold.labels[dep] != label else 0


cdef int covington_monotonic_loss(const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
    """Algorithm 1: |U(c, tG)| + n_c(A u I(c, tG)) + label errors in A.

    scratch: 3 * (n+1) ints.
    """
    cdef int n = s.n
    cdef int* comp = scratch
    cdef int* graph = scratch + (n + 1)     # heads of A u I
    cdef int* mark = scratch + 2 * (n + 1)
    cdef int i = s.i, j = s.j
    cdef int x, y, left, right, n_unreachable = 0, n_label_errors = 0
    cdef bint root_taken = root_has_dependent(s)
    weak_components(s.heads, n + 1, comp)
    graph[0] = -1
    for y in range(1, n + 1):
        x = gold.heads[y]
        if s.heads[y] == x:
            graph[y] = x
            if s.labels[y] != gold.labels[y]:
                n_label_errors += 1
            continue
        left = x if x < y else y
        right = y if x < y else x
        if (j > right
                or (j == right and i < left)
                or s.heads[y] != -1
                or comp[x] == comp[y]
                or (x == 0 and root_taken)):
            n_unreachable += 1
            graph[y] = s.heads[y]
        else:
            graph[y] = x     # individually reachable: y has no head in A
    return n_unreachable + count_cycles_single_head(graph, n + 1, mark) + n_label_errors


cdef class Covington(TransitionSystem):
    name = "covington"
    context_names = CONTEXT_NAMES

    def __init__(self, labels=(), oracle="dynamic", loss=None):
        TransitionSystem.__init__(self, labels, oracle, loss)
        self.n_moves = N_STRUCTURAL + 2 * self.n_labels
        self.n_context = len(CONTEXT_NAMES)

    def move_name(self, int move):
        if move == SHIFT:
            return "S"
        if move == NO_ARC:
            return "N"
        if N_STRUCTURAL <= move < N_STRUCTURAL + self.n_labels:
            return "L-" + self.labels[move - N_STRUCTURAL]
        if N_STRUCTURAL + self.n_labels <= move < self.n_moves:
            return "R-" + self.labels[move - N_STRUCTURAL - self.n_labels]
        raise ValueError(f"No move {move} in a system with {self.n_moves} moves.")

    cdef void init_state(self, StateC* s) noexcept nogil:
        cdef int k
        for k in range(s.n + 1):
            s.heads[k] = -1
            s.labels[k] = -1
        s.i = 0
        s.j = 1
        s.stack_len = 0

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return s.j > s.n

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        cdef int i = s.i, j = s.j, L = self.n_labels, m
        cdef bint live = j <= s.n
        cdef bint left_ok = (live and i >= 1 and s.heads[i] == -1
                             and not has_path(s.heads, s.n + 1, i, j))
        cdef bint right_ok = (live and i >= 0 and s.heads[j] == -1
                              and not has_path(s.heads, s.n + 1, j, i)
                              and (i != 0 or not root_has_dependent(s)))
        is_valid[SHIFT] = live
        is_valid[NO_ARC] = live and i >= 0
        for m in range(L):
            is_valid[N_STRUCTURAL + m] = left_ok
            is_valid[N_STRUCTURAL + L + m] = right_ok

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef int L = self.n_labels
        if move == SHIFT:
            s.i = s.j
            s.j += 1
            return
        if move >= N_STRUCTURAL + L:
            s.heads[s.j] = s.i
            s.labels[s.j] = move - N_STRUCTURAL - L
        elif move >= N_STRUCTURAL:
            s.heads[s.i] = s.j
            s.labels[s.i] = move - N_STRUCTURAL
        s.i -= 1

    cdef int scratch_size(self, int n) noexcept nogil:
        """Ints of scratch space `bound` needs for n words."""
        return 3 * (n + 1)

    cdef int bound(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        """The oracle's loss expression (here the exact loss)."""
        return covington_monotonic_loss(s, gold, scratch)

    cdef int loss(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int* scratch = <int*>malloc(self.scratch_size(s.n) * sizeof(int))
        cdef int value = self.bound(s, gold, scratch)
        free(scratch)
        return value

    cdef void set_costs(self, const StateC* s, const GoldC* gold, int* is_valid,
                        float* costs) noexcept nogil:
        """Cost of a move: how much it increases the loss expression (never
        below 0: an approximate loss may also decrease)."""
        cdef int n = s.n, L = self.n_labels, m, l, base, structural
        cdef int i = s.i, j = s.j
        cdef int* scratch = <int*>malloc(self.scratch_size(n) * sizeof(int))
        # A scratch configuration to apply moves to.
        cdef int* arrays = <int*>malloc(3 * (n + 1) * sizeof(int))
        cdef StateC tmp
        tmp.heads = arrays
        tmp.labels = arrays + (n + 1)
        tmp.stack = arrays + 2 * (n + 1)
        self.set_valid(s, is_valid)
        for m in range(self.n_moves):
            costs[m] = INVALID_COST
        base = self.bound(s, gold, scratch)
        for m in range(N_STRUCTURAL):
            if is_valid[m]:
                copy_state(&tmp, s)
                self.apply(&tmp, m)
                costs[m] = max(0, self.bound(&tmp, gold, scratch) - base)
        # Labelled arcs: the structure's cost is the same for every label; a
        # wrong label on a gold arc adds one.
        if L > 0 and is_valid[N_STRUCTURAL]:
            copy_state(&tmp, s)
            self.apply(&tmp, N_STRUCTURAL)
            structural = (self.bound(&tmp, gold, scratch) - base
                          - label_error(gold, j, i, 0))
            for l in range(L):
                costs[N_STRUCTURAL + l] = max(0, structural + label_error(gold, j, i, l))
        if L > 0 and is_valid[N_STRUCTURAL + L]:
            copy_state(&tmp, s)
            self.apply(&tmp, N_STRUCTURAL + L)
            structural = (self.bound(&tmp, gold, scratch) - base
                          - label_error(gold, i, j, 0))
            for l in range(L):
                costs[N_STRUCTURAL + L + l] = max(0, structural + label_error(gold, i, j, l))
        free(arrays)
        free(scratch)

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int i = s.i, j = s.j, k, L = self.n_labels
        if j > s.n:
            return -1
        if i < 0:
            return SHIFT
        if i >= 1 and gold.heads[i] == j:
            return N_STRUCTURAL + (gold.labels[i] if gold.labels[i] >= 0 else 0)
        if gold.heads[j] == i:
            return N_STRUCTURAL + L + (gold.labels[j] if gold.labels[j] >= 0 else 0)
        for k in range(i):
            if gold.heads[j] == k or (k >= 1 and gold.heads[k] == j):
                return NO_ARC
        return SHIFT

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        cdef int n = s.n, i = s.i, j = s.j, k, h
        cdef int l0l = -1, l0l_ = -1, l0r = -1, l0r_ = -1, r0l = -1, r0l_ = -1
        cdef int cl = -1, cr = -1
        if j > n:
            j = -1
        # One pass over the words finds the dependents of L0 and R0 and the
        # words between the focus words attached outside [L0, R0].
        for k in range(1, n + 1):
            h = s.heads[k]
            if i >= 0 and h == i:
                if k < i:
                    if l0l == -1:
                        l0l = k
                    l0l_ = k
                else:
                    if l0r_ == -1:
                        l0r_ = k
                    l0r = k
            elif j >= 0 and h == j and k < j:
                if r0l == -1:
                    r0l = k
                r0l_ = k
            if j >= 0 and i < k < j and (h < i or h > j):
                if cl == -1:
                    cl = k
                cr = k
        ids[0] = token_row(s, i)
        ids[1] = token_row(s, i - 1) if i >= 1 else -1
        ids[2] = token_row(s, i - 2) if i >= 2 else -1
        ids[3] = token_row(s, j)
        ids[4] = token_row(s, j + 1) if j >= 1 else -1
        ids[5] = token_row(s, j + 2) if j >= 1 else -1
        h = s.heads[i] if i >= 0 else -1
        ids[6] = token_row(s, h)
        ids[7] = token_row(s, s.heads[h]) if h >= 0 else -1
        ids[8] = token_row(s, l0l)
        ids[9] = token_row(s, l0l_)
        ids[10] = token_row(s, l0r)
        ids[11] = token_row(s, l0r_)
        h = s.heads[j] if j >= 0 else -1
        ids[12] = token_row(s, h)
        ids[13] = token_row(s, s.heads[h]) if h >= 0 else -1
        ids[14] = token_row(s, r0l)
        ids[15] = token_row(s, r0l_)
        ids[16] = token_row(s, cl)
        ids[17] = token_row(s, cr)

    cdef void finish(self, StateC* s) noexcept nogil:
        """Make A a single-rooted tree: the dependent of node 0 is the root
        (or, if there is none, the first headless word); every other headless
        word is attached to it with label -1 (written as "dep")."""
        cdef int k, root = -1
        for k in range(1, s.n + 1):
            if s.heads[k] == 0:
                root = k
                break
        if root == -1:
            for k in range(1, s.n + 1):
                if s.heads[k] == -1:
                    root = k
                    s.heads[k] = 0
                    break
        for k in range(1, s.n + 1):
            if s.heads[k] == -1:
                s.heads[k] = root
                s.labels[k] = -1
