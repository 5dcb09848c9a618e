# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Monotonic non-projective Covington parser (Nivre 2008 formulation).

Configuration <lambda1|i, lambda2, j|B, A>, stored as the focus words (i, j):
lambda1 = [0..i], lambda2 = [i+1..j-1], B = [j..n]. Node 0 is an explicit
root, so the root arc 0 -> r is built by Right-Arc like any other arc; one
root per sentence is enforced by allowing Right-Arc from 0 only while 0 has
no dependent. Move kinds: Shift, No-Arc, Left-Arc(label), Right-Arc(label);
the move table numbers them S, N, L-<label>..., R-<label>....

Oracles (Gomez-Rodriguez & Fernandez-Gonzalez 2015, Algorithm 1 of
Fernandez-Gonzalez & Gomez-Rodriguez 2017): the static oracle, and the exact
dynamic oracle loss |U| + cycles(A u I), plus one per correct arc with a
wrong label. A move's cost is the loss difference it causes.
"""
from .base cimport (INVALID_COST, StateC, GoldC, TransitionSystem, ParseState, copy_state,
                   token_row, label_error)
import numpy

from .base import Option, probability
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


cdef int covington_monotonic_loss(const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
    """Algorithm 1: |U(c, tG)| + n_c(A u I(c, tG)) + label errors in A.

    scratch: 3 * (n+1) ints.
    """
    cdef int n = s.n
    cdef int* comp = scratch
    cdef int* graph = scratch + (n + 1)     # heads of A u I
    cdef int* mark = scratch + 2 * (n + 1)
    cdef int i = focus(s).i, j = focus(s).j
    cdef int x, y, left, right, n_unreachable = 0, n_label_errors = 0
    cdef bint root_taken = root_has_dependent(s)
    weak_components(s.heads, n + 1, comp)
    graph[0] = -1
    for y in range(1, n + 1):
        x = gold.heads[y]
        if s.heads[y] == x:
            graph[y] = x
            n_label_errors += label_error(gold, x, y, s.labels[y])
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


# How the training target breaks the tie when Shift and No-Arc both cost 0
# (the focus word has no reachable gold arc left to the left, so scanning on
# costs nothing but time): "none" keeps both as targets (the models then
# learn to scan all of lambda1); "shift" makes No-Arc a non-target;
# "shift_if_headed" does so only when the right focus word already has a
# head; "weighted" keeps No-Arc as a target of weight `no_arc_weight` (given
# as a fractional cost, 1 - weight; see the decoder's softmax_log_loss), which
# keeps the transitions near the static oracle's. A weaker No-Arc target also
# means training rarely visits the states a scan passes through;
# `scan_explore_prob` > 0 follows No-Arc instead of Shift there with that
# probability (targets and decoding unchanged). The defaults and what each
# choice costs: docs/systems/covington.md and docs/results/over_seeds/.
TIE_BREAKS = ("none", "shift", "shift_if_headed", "weighted")


# Which chosen moves scan exploration may replace by No-Arc: "any" move of
# least cost, or only "shift", the move that ends a scan. They differ where a
# wrong arc also costs 0 at the tie: in `covington` only after an error (the
# dependent's gold arc is already lost), in `covington_nm` often (a later arc
# can replace it), where "any" would never follow the model's zero-cost arcs.
# Measurements: docs/results/over_seeds/.
SCAN_EXPLORE_REPLACES = ("any", "shift")


def training_options(no_arc_weight, scan_explore_prob, scan_explore_replaces):
    """The tie_break options, with the system's defaults."""
    return {
        "tie_break": Option("weighted", choices=TIE_BREAKS,
                            doc="training target when Shift and No-Arc both cost 0"),
        "no_arc_weight": Option(no_arc_weight, check=probability,
                                doc="tie_break='weighted': the target weight of No-Arc"),
        "scan_explore_prob": Option(scan_explore_prob, check=probability,
                                    doc="training: the probability of following a weaker "
                                        "target (No-Arc under tie_break='weighted') instead "
                                        "of a least-cost move"),
        "scan_explore_replaces": Option(scan_explore_replaces, choices=SCAN_EXPLORE_REPLACES,
                                        doc="scan exploration replaces any least-cost move, "
                                            "or only Shift"),
    }


cdef class Covington(TransitionSystem):
    name = "covington"
    kinds = (("S", False), ("N", False), ("L", True), ("R", True))
    context_names = CONTEXT_NAMES
    option_specs = {
        "loss": Option("exact", choices=("exact",),
                       doc="the exact loss of Algorithm 1 (the only one)"),
        **training_options(0.9, 0.75, "any"),
    }

    def __init__(self, labels=(), oracle=None, **options):
        TransitionSystem.__init__(self, labels, oracle, **options)
        self.tie_break = TIE_BREAKS.index(self.options["tie_break"])
        self.no_arc_weight = self.options["no_arc_weight"]

    @property
    def weak_target_prob(self):
        return self.options["scan_explore_prob"]

    @property
    def weak_target_replaces(self):
        """None (any least-cost move) or, with scan_explore_replaces "shift",
        a mask of Shift alone: a zero-cost arc chosen at the tie is then
        followed, so training visits the states after the model's own arcs."""
        if self.options["scan_explore_replaces"] == "any":
            return None
        mask = numpy.zeros(self.n_moves, dtype=numpy.int32)
        mask[self.move_of(SHIFT, -1)] = 1
        return mask

    def describe(self, ParseState state):
        return {"focus": (focus(state.c).i, focus(state.c).j)}

    cdef int state_size(self, int n) noexcept nogil:
        return sizeof(Focus) // sizeof(int)

    cdef int move_limit(self, int n) noexcept nogil:
        """Every move but Shift moves i one word left, from j - 1 to -1 at
        most, and Shift moves j right: j + 1 moves at word j."""
        return n * (n + 3) // 2

    cdef int bound_scratch_size(self, int n) noexcept nogil:
        """Ints of scratch space `bound` needs for n words."""
        return 3 * (n + 1)

    cdef int scratch_size(self, int n) noexcept nogil:
        # The loss expression's scratch, then a configuration to try moves on.
        return self.bound_scratch_size(n) + 2 * (n + 1) + self.state_size(n)

    cdef void init_state(self, StateC* s) noexcept nogil:
        focus(s).i = 0
        focus(s).j = 1

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return focus(s).j > s.n

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        cdef int i = focus(s).i, j = focus(s).j
        cdef bint live = j <= s.n
        cdef bint[N_KINDS] ok
        ok[SHIFT] = live
        ok[NO_ARC] = live and i >= 0
        ok[LEFT_ARC] = (live and i >= 1 and s.heads[i] == -1
                        and not has_path(s.heads, s.n + 1, i, j))
        ok[RIGHT_ARC] = (live and i >= 0 and s.heads[j] == -1
                         and not has_path(s.heads, s.n + 1, j, i)
                         and (i != 0 or not root_has_dependent(s)))
        self.set_valid_by_kind(ok, is_valid)

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef Focus* f = focus(s)
        cdef int kind = self.c_moves[move].kind
        if kind == SHIFT:
            f.i = f.j
            f.j += 1
            return
        if kind == RIGHT_ARC:
            s.heads[f.j] = f.i
            s.labels[f.j] = self.c_moves[move].label
        elif kind == LEFT_ARC:
            s.heads[f.i] = f.j
            s.labels[f.i] = self.c_moves[move].label
        f.i -= 1

    cdef int bound(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        """The oracle's loss expression (here the exact loss)."""
        return covington_monotonic_loss(s, gold, scratch)

    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        return self.bound(s, gold, scratch)

    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* losses, int* scratch) noexcept nogil:
        """Loss of a move: how much it increases the loss expression (never
        below 0: an approximate loss may also decrease). A labelled arc's
        structural loss is the same for every label; a wrong label on a gold
        arc adds one."""
        self.set_valid(s, is_valid)
        # The scratch configuration comes after the bound's scratch.
        self.set_costs_from_loss(s, gold, is_valid, losses, scratch,
                                 scratch + self.bound_scratch_size(s.n), LEFT_ARC, RIGHT_ARC,
                                 focus(s).i, focus(s).j)

    cdef void adjust_targets(self, const StateC* s, const GoldC* gold, const int* is_valid,
                             float* costs, int* scratch) noexcept nogil:
        """The tie_break option."""
        self.break_scan_tie(s, costs)

    cdef void break_scan_tie(self, const StateC* s, float* costs) noexcept nogil:
        """Apply the tie_break option to the costs of Shift and No-Arc."""
        cdef int shift = self.move_of(SHIFT, -1), no_arc = self.move_of(NO_ARC, -1)
        if self.tie_break == TIE_NONE or costs[shift] != 0 or costs[no_arc] != 0:
            return
        if self.tie_break == TIE_SHIFT_IF_HEADED and s.heads[focus(s).j] == -1:
            return
        costs[no_arc] = 1.0 - self.no_arc_weight if self.tie_break == TIE_WEIGHTED else 1.0

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int i = focus(s).i, j = focus(s).j, k
        if j > s.n:
            return -1
        if i < 0:
            return self.move_of(SHIFT, -1)
        if i >= 1 and gold.heads[i] == j:
            return self.move_of(LEFT_ARC, gold.labels[i])
        if gold.heads[j] == i:
            return self.move_of(RIGHT_ARC, gold.labels[j])
        for k in range(i):
            if gold.heads[j] == k or (k >= 1 and gold.heads[k] == j):
                return self.move_of(NO_ARC, -1)
        return self.move_of(SHIFT, -1)

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        cdef int n = s.n, i = focus(s).i, j = focus(s).j, k, h
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
