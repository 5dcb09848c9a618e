# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Non-monotonic Covington parser (Fernandez-Gonzalez & Gomez-Rodriguez 2017,
Figure 2) and its approximate dynamic oracle (section 4).

Left-Arc and Right-Arc are always allowed (while there is a left focus word
that can take the arc). The new arc replaces the dependent's previous head;
if it closes a cycle, the arc into the new head's side of the cycle is
removed: Left-Arc j -> i drops k -> j when i ->* k, Right-Arc i -> j drops
k -> i when j ->* k. With the explicit root node 0, a Right-Arc 0 -> j also
replaces the root's previous dependent (one root per sentence, later
decisions win), which is left headless.

Configuration, context, labels, static oracle and `finish` are those of the
monotonic `covington` system. The dynamic oracle's loss is one of three
expressions (section 4), each a count of gold arcs:

  lower     |U(c, tG)|: gold arcs not in A (with their label) whose words
            can no longer be the focus pair;
  pc_upper  |U| + the problematic cycles of A u I(c, tG): cycles whose arc
            removed by the closing arc (in Covington arc-building order) is gold;
  upper     |U| + all elementary cycles of A u I(c, tG) (Johnson's algorithm).

lower <= exact loss <= pc_upper <= upper; `exact_loss` finds the exact value
by branch-and-bound search (section 5).
"""
from cymem.cymem cimport Pool

from .base cimport StateC, GoldC, ParseState, alloc_state, copy_state, label_error
from .base import Option, probability
from .covington cimport Covington, Focus, focus, SHIFT, NO_ARC, LEFT_ARC, RIGHT_ARC, N_KINDS
from .covington import training_options
from ..graph.algorithms cimport (Digraph, cycle_visitor, digraph_from_heads, count_elementary_cycles,
                                 elementary_cycles_work_size, has_path)

LOSS_NAMES = ("lower", "pc_upper", "upper")

# A guard against pathological graphs: the cycle count stops growing here.
DEF MAX_CYCLES = 100000


cdef struct _CycleContext:
    const int* to_build     # to_build[y] = head of y's gold arc if still to build, else -1
    const int* gold_heads


cdef bint _is_problematic(const int* cycle, int length, void* ctx) noexcept nogil:
    """Whether a cycle of A u I would cost a gold arc: the transition sequence
    that builds I in Covington order (right word ascending, then left word
    descending) closes the cycle with its last arc to build, x -> y, and
    Figure 2 then removes the cycle's arc into x."""
    cdef _CycleContext* c = <_CycleContext*>ctx
    cdef int t, head, dep, left, right
    cdef int best = -1, best_right = -1, best_left = 0
    for t in range(length):
        head = cycle[t]
        dep = cycle[(t + 1) % length]
        if c.to_build[dep] != head:
            continue
        left = head if head < dep else dep
        right = dep if head < dep else head
        if right > best_right or (right == best_right and left < best_left):
            best, best_right, best_left = t, right, left
    if best < 0:
        return False   # not reachable: A alone is acyclic
    # The closing arc is cycle[best] -> cycle[best+1]; the arc into its head
    # is cycle[best-1] -> cycle[best].
    head = cycle[best - 1 if best > 0 else length - 1]
    return c.gold_heads[cycle[best]] == head


cdef int _unreachable(const StateC* s, const GoldC* gold, int* to_build) noexcept nogil:
    """|U(c, tG)|; fills to_build[y] with the head of y's gold arc when that
    arc is not in A (with its label) and still reachable, else -1."""
    cdef int n = s.n, i = focus(s).i, j = focus(s).j
    cdef int x, y, left, right, n_unreachable = 0
    to_build[0] = -1
    for y in range(1, n + 1):
        x = gold.heads[y]
        to_build[y] = -1
        if s.heads[y] == x and not label_error(gold, x, y, s.labels[y]):
            continue
        left = x if x < y else y
        right = y if x < y else x
        if j > right or (j == right and i < left):
            n_unreachable += 1
        else:
            to_build[y] = x
    return n_unreachable


cdef int _cycle_term(const StateC* s, const GoldC* gold, LossKind kind,
                     int* scratch) noexcept nogil:
    """The cycles (all, or problematic) of A u I, where I's arcs still to
    build are in scratch[0..n] as `_unreachable` left them; scratch holds
    nm_scratch_size(n) ints."""
    cdef int n = s.n, y
    cdef Digraph g
    cdef _CycleContext ctx
    cdef cycle_visitor visit = NULL
    for y in range(1, n + 2):
        if y > n:
            return 0      # nothing left to build: A alone is acyclic
        if scratch[y] >= 0:
            break
    # A u I: the arcs of A plus the gold arcs still to build (gold arcs
    # already in A are the same edges).
    digraph_from_heads(&g, s.heads, scratch, n + 1, scratch + (n + 1),
                       scratch + 2 * (n + 2))
    ctx.to_build = scratch
    ctx.gold_heads = gold.heads
    if kind == LOSS_PC_UPPER:
        visit = _is_problematic
    return count_elementary_cycles(&g, visit, &ctx, MAX_CYCLES, scratch + 5 * (n + 2))


cdef int nm_scratch_size(int n) noexcept nogil:
    """Ints of scratch `nm_bound` needs: to_build and the digraph of A u I
    (5 * (n + 2)), then Johnson's work space for its n + 1 nodes."""
    return 5 * (n + 2) + elementary_cycles_work_size(n + 1)


cdef int nm_bound(const StateC* s, const GoldC* gold, LossKind kind, int* scratch) noexcept nogil:
    """Algorithm 2 with the chosen term. scratch: nm_scratch_size(n) ints."""
    cdef int lower = _unreachable(s, gold, scratch)
    if kind == LOSS_LOWER:
        return lower
    return lower + _cycle_term(s, gold, kind, scratch)


# How the training target treats a zero-cost arc move that replaces an arc
# (removes one) without creating a gold arc: the oracle's loss does not
# change when a wrong arc gives way to another wrong arc, so such repairs cost
# 0, and the models learn to make them often. "none" keeps them as targets;
# "monotonic" makes them non-targets whenever a zero-cost move that removes no
# arc exists, as Honnibal & Johnson (2015) break ties toward fewer
# non-monotonic moves (and `arc_eager_unshift` here); "weighted" keeps them as
# targets of weight `replace_weight` in that case: it removes most of the
# excess repairs without the accuracy "monotonic" costs (measurements:
# docs/results/over_seeds/).
REPLACE_TIE_BREAKS = ("none", "monotonic", "weighted")


cdef class CovingtonNM(Covington):
    name = "covington_nm"
    option_specs = {
        "loss": Option("upper", choices=LOSS_NAMES,
                       doc="the oracle's loss expression: lower, pc_upper or upper bound"),
        **training_options(0.75, 0.0, "shift"),
        "replace_tie_break": Option("weighted", choices=REPLACE_TIE_BREAKS,
                                    doc="training target of zero-cost arc moves that replace "
                                    "a wrong arc by another wrong arc"),
        "replace_weight": Option(0.75, check=probability,
                                 doc="replace_tie_break='weighted': their target weight"),
    }

    def __init__(self, labels=(), oracle=None, **options):
        Covington.__init__(self, labels, oracle, **options)
        cdef int kind = LOSS_NAMES.index(self.options["loss"])
        self.kind = <LossKind>kind
        # The cost of a wrong-for-wrong replacement where the tie is broken, as
        # a fractional cost (see Covington.break_scan_tie): 1 is a non-target,
        # 0 ("none") leaves the costs alone.
        tie_break = self.options["replace_tie_break"]
        self.replace_cost = (0.0 if tie_break == "none" else 1.0 if tie_break == "monotonic"
                             else 1.0 - self.options["replace_weight"])

    cdef void adjust_targets(self, const StateC* s, const GoldC* gold, const int* is_valid,
                             float* costs, int* scratch) noexcept nogil:
        Covington.adjust_targets(self, s, gold, is_valid, costs, scratch)
        if self.replace_cost > 0:
            self.break_replace_tie(s, gold, is_valid, costs, scratch + self.bound_scratch_size(s.n))

    cdef void break_replace_tie(self, const StateC* s, const GoldC* gold, const int* is_valid,
                                float* costs, int* arrays) noexcept nogil:
        """Zero-cost arc moves that remove an arc and build a non-gold one
        cost replace_cost (1: non-targets), if a zero-cost move that removes
        nothing exists."""
        cdef int i = focus(s).i, j = focus(s).j, m, kind, k, n = s.n
        cdef bint[N_KINDS] wrong_repair
        cdef bint monotonic_optimum = False
        cdef StateC tmp
        tmp.heads = arrays
        tmp.labels = arrays + (n + 1)
        tmp.data = arrays + 2 * (n + 1)
        for kind in range(N_KINDS):
            wrong_repair[kind] = False
            m = self.move_of(kind, 0)
            if kind != LEFT_ARC and kind != RIGHT_ARC:
                continue
            if m >= self.n_moves or not is_valid[m]:
                continue
            if (gold.heads[i] == j) if kind == LEFT_ARC else (gold.heads[j] == i):
                continue       # the new arc is gold: a real repair (or no repair)
            copy_state(&tmp, s)
            self.apply(&tmp, m)
            for k in range(1, n + 1):
                if s.heads[k] >= 0 and tmp.heads[k] != s.heads[k]:
                    wrong_repair[kind] = True
                    break
        for m in range(self.n_moves):
            if is_valid[m] and costs[m] == 0 and not wrong_repair[self.c_moves[m].kind]:
                monotonic_optimum = True
                break
        if not monotonic_optimum:
            return
        for m in range(self.n_moves):
            if is_valid[m] and costs[m] == 0 and wrong_repair[self.c_moves[m].kind]:
                costs[m] = self.replace_cost

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        cdef int i = focus(s).i
        cdef bint live = focus(s).j <= s.n
        cdef bint[4] ok
        ok[SHIFT] = live
        ok[NO_ARC] = live and i >= 0
        ok[LEFT_ARC] = live and i >= 1      # the root takes no head
        ok[RIGHT_ARC] = live and i >= 0
        self.set_valid_by_kind(ok, is_valid)

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef Focus* f = focus(s)
        cdef int i = f.i, j = f.j, k
        cdef int kind = self.c_moves[move].kind
        if kind == SHIFT:
            f.i = j
            f.j += 1
            return
        if kind == RIGHT_ARC:
            # Right-Arc i -> j.
            if i == 0:
                for k in range(1, s.n + 1):
                    if s.heads[k] == 0:
                        s.heads[k] = -1
                        s.labels[k] = -1
            elif s.heads[i] >= 0 and has_path(s.heads, s.n + 1, j, s.heads[i]):
                s.heads[i] = -1
                s.labels[i] = -1
            s.heads[j] = i
            s.labels[j] = self.c_moves[move].label
        elif kind == LEFT_ARC:
            # Left-Arc j -> i.
            if s.heads[j] >= 0 and has_path(s.heads, s.n + 1, i, s.heads[j]):
                s.heads[j] = -1
                s.labels[j] = -1
            s.heads[i] = j
            s.labels[i] = self.c_moves[move].label
        f.i -= 1

    cdef int bound_scratch_size(self, int n) noexcept nogil:
        return nm_scratch_size(n)

    cdef int bound(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        return nm_bound(s, gold, self.kind, scratch)

    # -- analysis (Python; for tests and tools) --------------------------------

    def bounds(self, ParseState state):
        """(lower, pc_upper, upper) of a configuration with a gold tree."""
        state._require_gold()
        cdef int* scratch = state.scratch
        cdef int lower = _unreachable(state.c, state.gold, scratch)
        return (lower, lower + _cycle_term(state.c, state.gold, LOSS_PC_UPPER, scratch),
                lower + _cycle_term(state.c, state.gold, LOSS_UPPER, scratch))

    def exact_loss(self, ParseState state, long max_nodes=1000000):
        """The exact loss of a configuration: the fewest gold arcs (with
        labels) missing from any tree reachable from it, found by depth-first
        branch and bound (section 5). A configuration whose lower and
        pc_upper bounds agree is settled; children are searched in order of
        (lower, pc_upper) and cut when their lower bound reaches the best
        upper bound known. Arcs take the gold label on gold arcs and one label
        otherwise (a wrong label on a gold arc can only do worse). Exact as
        long as the bounds are (tests/test_covington_nm.py checks them and
        this search against an independent search that prunes with the
        lower bound only).

        Returns (loss, nodes searched); loss is None when max_nodes
        configurations did not settle it (the search is exponential where a
        cycle of A u I sits far ahead of the focus)."""
        state._require_gold()
        if self.n_labels == 0:
            raise ValueError("exact_loss needs a system with at least one label.")
        cdef _Search search
        search.system = <void*>self
        search.gold = state.gold
        search.n = state.c.n
        search.nodes = 0
        search.max_nodes = max_nodes
        cdef Pool mem = Pool()
        search.scratch = <int*>mem.alloc(nm_scratch_size(state.c.n), sizeof(int))
        # One child configuration per move kind per depth; the depth is at
        # most the number of transitions left, < (n + 1)^2.
        cdef int depth = (state.c.n + 2) * (state.c.n + 2)
        search.children = <StateC**>mem.alloc(depth * 4, sizeof(StateC*))
        search.max_depth = depth
        cdef int d
        for d in range(depth * 4):
            search.children[d] = NULL
        search.mem = <void*>mem
        search.is_valid = <int*>mem.alloc(self.n_moves, sizeof(int))
        cdef int lo, hi
        _lower_and_pc_upper(state.c, state.gold, search.scratch, &lo, &hi)
        value = _search(&search, state.c, 0, 1 << 30, lo, hi)
        return (None if value < 0 else value), search.nodes


cdef struct _Search:
    void* system        # the CovingtonNM
    const GoldC* gold
    int n
    long nodes
    long max_nodes
    int* scratch
    int* is_valid
    StateC** children   # 4 per depth, allocated on first use
    int max_depth
    void* mem           # the Pool owning the children


cdef StateC* _child(_Search* S, int depth, int k) except NULL:
    cdef StateC** slot = &S.children[depth * 4 + k]
    if slot[0] == NULL:
        slot[0] = alloc_state(<Pool>S.mem, S.n, (<CovingtonNM>S.system).state_size(S.n))
    return slot[0]


cdef void _lower_and_pc_upper(const StateC* s, const GoldC* gold, int* scratch,
                              int* lo, int* hi) noexcept nogil:
    lo[0] = _unreachable(s, gold, scratch)
    hi[0] = lo[0] + _cycle_term(s, gold, LOSS_PC_UPPER, scratch)


cdef int _search(_Search* S, const StateC* s, int depth, int cutoff, int lo, int hi) except -2:
    """Exact loss of s (whose lower and pc_upper bounds are lo and hi) if it
    is below `cutoff`; otherwise some value >= cutoff. -1 when the node
    budget is spent."""
    cdef CovingtonNM system = <CovingtonNM>S.system
    cdef int best, k, m, n_children = 0, value, tmp
    cdef int[4] child_lo
    cdef int[4] child_hi
    cdef int[4] order
    cdef StateC* child
    S.nodes += 1
    if S.nodes > S.max_nodes:
        return -1
    if lo == hi or lo >= cutoff:
        return lo
    best = hi if hi < cutoff else cutoff
    # Expand the four kinds of move; an arc takes the gold label when it is
    # the gold arc (any other label can only do worse), else label 0.
    system.set_valid(s, S.is_valid)
    for k in (SHIFT, NO_ARC, LEFT_ARC, RIGHT_ARC):
        m = _move_of(system, s, S.gold, k)
        if not S.is_valid[m]:
            continue
        child = _child(S, depth, n_children)
        copy_state(child, s)
        system.apply(child, m)
        _lower_and_pc_upper(child, S.gold, S.scratch, &child_lo[n_children],
                            &child_hi[n_children])
        if child_hi[n_children] < best:
            best = child_hi[n_children]
        order[n_children] = n_children
        n_children += 1
    # Insertion sort by (lower, upper) bound: likely winners first.
    for k in range(1, n_children):
        m = k
        while m > 0 and (child_lo[order[m - 1]] > child_lo[order[m]]
                         or (child_lo[order[m - 1]] == child_lo[order[m]]
                             and child_hi[order[m - 1]] > child_hi[order[m]])):
            tmp = order[m]
            order[m] = order[m - 1]
            order[m - 1] = tmp
            m -= 1
    for k in range(n_children):
        if child_lo[order[k]] >= best:
            break
        if child_lo[order[k]] == child_hi[order[k]]:
            value = child_lo[order[k]]      # settled without searching
        else:
            value = _search(S, S.children[depth * 4 + order[k]], depth + 1, best,
                            child_lo[order[k]], child_hi[order[k]])
        if value < 0:
            return -1
        if value < best:
            best = value
        if best == lo:
            break
    return best


cdef int _move_of(CovingtonNM system, const StateC* s, const GoldC* gold, int kind) noexcept:
    """The move of `kind` the search expands: an arc takes the gold label
    when it is the gold arc, else label 0."""
    cdef int i = focus(s).i, j = focus(s).j, label = 0
    if kind == LEFT_ARC and i >= 1 and gold.heads[i] == j:
        label = gold.labels[i]
    elif kind == RIGHT_ARC and i >= 0 and gold.heads[j] == i:
        label = gold.labels[j]
    return system.move_of(kind, label)
