# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Shift-reduce (arc-standard) dependency parsing with the optimal-step
oracle of Nederhof (2019), on the shared stack/buffer configuration
(stack_buffer.pxd) with node 0 at the stack's bottom.

Moves (Table 1; kinds S, L-<label>, R-<label>):
  Shift      (s, j|b)     => (s|j, b)
  Left-Arc   (s|i|j, b)   => (s|j, b)  + j -> i    i != 0  (the paper's "reduce right")
  Right-Arc  (s|i|j, b)   => (s|i, b)  + i -> j    i = 0 only with an empty buffer
                                                    (the paper's "reduce left")
Final: the buffer empty and only node 0 on the stack, after exactly 2n
moves. Node 0 takes exactly one child, by the last move: trees have one
root, as UD's. (The paper's Table 1 lets node 0 take children at any time;
its optimal steps then count trees with several roots, which the root rule
of every system cuts back to one, losing arcs the oracle had counted.)

Oracles:
  "optimal_step" (default): for the configuration and the gold tree,
  projective or not, the most gold arcs reachable after each step (the
  paper's sigma_1..3, less the gold arcs already built); a step costs the
  best sigma less its own, plus 1 for a gold arc with a wrong label. Each
  sigma is the step's own gold arc plus the best score of the configuration
  it leads to, computed by the O(n^3) tabular algorithm of section 4
  (graph/split_grammars.pyx) for a non-projective gold tree and by the linear one of
  section 6 (optimal_step.pyx) for a projective one.
  "static": Left-Arc or Right-Arc when the gold arc joins S1 and S0 and the
  dependent has all its dependents, else Shift; on a non-projective gold
  tree, once nothing else applies, Right-Arc.

Strategy (system option `strategy`, section 2): which computations the
oracle counts, as edges the step's continuation may not create (positions
in the configuration after the step, top = its stack top):
  "nonstrict"    left-before-right: after a Shift the old top takes no
                 left child
  "strict_left"  strict left-before-right: no stack word below the top
                 takes a left child; after a Right-Arc the new top neither
  "right_first"  right-before-left: after a Left-Arc the top takes no
                 right child
The parser's moves are never restricted: the strategy only says which
optimal computations the oracle prefers.
"""
from cymem.cymem cimport Pool

from .base cimport StateC, GoldC, TransitionSystem, ParseState, label_error, INVALID_COST
from .base import Option
from .stack_buffer cimport (stack_buffer_size, stack_depth, buffer_length, S, B, stack_at,
                            init_stack_buffer, push, reduce_left_arc, reduce_right_arc,
                            set_arc_standard_context, stack_buffer_fields, has_gold_dependents)
from .stack_buffer import ARC_STANDARD_CONTEXT_NAMES
from ..graph.split_grammars cimport (NEG_SCORE, ShiftReduceConfig, config_scratch_size,
                              config_score_cubic)
from .optimal_step cimport config_score_projective, projective_scratch_size
from ..graph import is_projective

STRATEGIES = ("nonstrict", "strict_left", "right_first")
ALGORITHMS = {"auto": AUTO, "cubic": CUBIC, "quadratic": QUADRATIC, "linear": LINEAR}


cdef inline bint gold_is_projective(const GoldC* gold) noexcept nogil:
    return (<int*>gold.extra)[0] != 0


cdef int positions(const StateC* s, int* nodes) noexcept nogil:
    """Stack (bottom first) then buffer (front first) into nodes; the index
    of the stack top."""
    cdef int depth = stack_depth(s), k
    for k in range(depth):
        nodes[k] = stack_at(s, k)
    for k in range(buffer_length(s)):
        nodes[depth + k] = B(s, k)
    return depth - 1


cdef class ArcStandard(TransitionSystem):
    name = "arc_standard"
    kinds = (("S", False), ("L", True), ("R", True))
    oracles = ("optimal_step", "static")
    projective = True
    context_names = ARC_STANDARD_CONTEXT_NAMES
    option_specs = {
        "strategy": Option("nonstrict", choices=STRATEGIES,
                           doc="which optimal computations the optimal-step oracle counts "
                               "(section 2): left-before-right, strict, or right-before-left"),
    }

    def __init__(self, labels=(), oracle=None, **options):
        TransitionSystem.__init__(self, labels, oracle, **options)
        self.strategy = STRATEGIES.index(self.options["strategy"])
        self.algorithm = AUTO

    @property
    def default_projectivize(self):
        """The optimal-step oracle learns from non-projective gold trees as
        they are: "none" (docs/results/arc_standard: never below the other
        choices over 3 seeds); the static oracle needs "pseudo"."""
        return "pseudo" if self.oracle == "static" else "none"

    def describe(self, ParseState state):
        return stack_buffer_fields(state.c)

    cdef int move_limit(self, int n) noexcept nogil:
        """Every run is n Shifts and n reductions."""
        return 2 * n

    cdef int state_size(self, int n) noexcept nogil:
        return stack_buffer_size(n)

    cdef int scratch_size(self, int n) noexcept nogil:
        # Two position lists, then the algorithms' tables.
        return 2 * (n + 1) + max(config_scratch_size(n + 1), projective_scratch_size(n + 1))

    cdef int init_gold(self, Pool mem, GoldC* gold) except -1:
        cdef int* extra = <int*>mem.alloc(1, sizeof(int))
        extra[0] = is_projective([gold.heads[k] for k in range(1, gold.n + 1)])
        gold.extra = extra
        return 0

    cdef void init_state(self, StateC* s) noexcept nogil:
        init_stack_buffer(s, True)

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return buffer_length(s) == 0 and stack_depth(s) <= 1

    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil:
        if kind == AS_SHIFT:
            return buffer_length(s) > 0
        if kind == AS_RIGHT_ARC:
            return stack_depth(s) >= 3 or (stack_depth(s) == 2 and buffer_length(s) == 0)
        return stack_depth(s) >= 3

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        cdef bint[AS_KINDS] ok
        cdef int kind
        for kind in range(AS_KINDS):
            ok[kind] = self.is_valid_kind(s, kind)
        self.set_valid_by_kind(ok, is_valid)

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef int kind = self.c_moves[move].kind
        if kind == AS_SHIFT:
            push(s)
        elif kind == AS_LEFT_ARC:
            reduce_left_arc(s, self.c_moves[move].label)
        else:
            reduce_right_arc(s, self.c_moves[move].label)

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        set_arc_standard_context(s, ids)

    # -- oracles ------------------------------------------------------------------

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int j = S(s, 0), i = S(s, 1)
        if self.is_final(s):
            return -1
        if i > 0 and gold.heads[i] == j and has_gold_dependents(s, gold, i):
            return self.move_of(AS_LEFT_ARC, gold.labels[i])
        if (gold.heads[j] == i and has_gold_dependents(s, gold, j)
                and self.is_valid_kind(s, AS_RIGHT_ARC)):
            return self.move_of(AS_RIGHT_ARC, gold.labels[j])
        if buffer_length(s) > 0:
            return self.move_of(AS_SHIFT, -1)
        return self.move_of(AS_RIGHT_ARC, -1)

    cdef int config_score(self, const ShiftReduceConfig* c, const GoldC* gold, int algorithm,
                          int* scratch) noexcept nogil:
        """The most gold arcs a computation from c creates (NEG_SCORE: none
        obeys c's restrictions), by `algorithm` (AUTO: LINEAR for a
        projective gold tree, else CUBIC; callers check that QUADRATIC and
        LINEAR get a projective one)."""
        if algorithm == AUTO:
            algorithm = LINEAR if gold_is_projective(gold) else CUBIC
        if algorithm == CUBIC:
            return config_score_cubic(c, scratch)
        return config_score_projective(c, algorithm == LINEAR, scratch)

    cdef void step_scores_c(self, const StateC* s, const GoldC* gold, int algorithm,
                            int* sigma, int* scratch) noexcept nogil:
        """sigma[kind]: the most gold arcs reachable after each step, less
        those already built; NEG_SCORE for an invalid step (or one after
        which no computation obeys the strategy)."""
        cdef int n = s.n, top, k, w, arc
        cdef int* nodes = scratch
        cdef int* reduced = scratch + (n + 1)
        cdef int* tables = scratch + 2 * (n + 1)
        cdef ShiftReduceConfig c
        top = positions(s, nodes)
        c.gold_heads = gold.heads
        c.last = top + buffer_length(s)
        for k in range(AS_KINDS):
            sigma[k] = NEG_SCORE
            if not self.is_valid_kind(s, k):
                continue
            c.no_left_below = 0
            c.no_left = -1
            c.no_right = -1
            if k == AS_SHIFT:
                c.nodes = nodes
                c.top = top + 1
                arc = 0
                if self.strategy == NONSTRICT:
                    c.no_left = top
            else:
                # Drop the dependent's position: S0 for Right-Arc, S1 for Left-Arc.
                w = top if k == AS_RIGHT_ARC else top - 1
                for j in range(c.last + 1):
                    if j != w:
                        reduced[j - (j > w)] = nodes[j]
                c.nodes = reduced
                c.top = top - 1
                c.last -= 1
                if k == AS_RIGHT_ARC:
                    arc = gold.heads[nodes[top]] == nodes[top - 1]
                    if self.strategy == STRICT_LEFT:
                        c.no_left = c.top
                else:
                    arc = gold.heads[nodes[top - 1]] == nodes[top]
                    if self.strategy == RIGHT_FIRST:
                        c.no_right = c.top
            if self.strategy == STRICT_LEFT:
                c.no_left_below = c.top
            score = self.config_score(&c, gold, algorithm, tables)
            if score >= 0:
                sigma[k] = score + arc
            if k != AS_SHIFT:
                c.last += 1

    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        """The gold arcs the best continuation misses (the root's included),
        plus built gold arcs with a wrong label."""
        cdef int n = s.n, k, built = 0, wrong_labels = 0, score
        cdef ShiftReduceConfig c
        for k in range(1, n + 1):
            if s.heads[k] != -1 and s.heads[k] == gold.heads[k]:
                built += 1
                wrong_labels += label_error(gold, gold.heads[k], k, s.labels[k])
        c.nodes = scratch
        c.top = positions(s, scratch)
        c.last = c.top + buffer_length(s)
        c.gold_heads = gold.heads
        c.no_left_below = c.top if self.strategy == STRICT_LEFT else 0
        c.no_left = -1
        c.no_right = -1
        score = self.config_score(&c, gold, self.algorithm, scratch + 2 * (n + 1))
        return n - built - score + wrong_labels

    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* costs, int* scratch) noexcept nogil:
        """A move's loss: the best attainable score less the score after it
        (Nederhof's optimal step), plus its label's error."""
        cdef int[AS_KINDS] sigma
        cdef int m, kind, best = NEG_SCORE, i = S(s, 1), j = S(s, 0)
        self.set_valid(s, is_valid)
        self.step_scores_c(s, gold, self.algorithm, sigma, scratch)
        for kind in range(AS_KINDS):
            best = max(best, sigma[kind])
        for m in range(self.n_moves):
            if not is_valid[m]:
                costs[m] = INVALID_COST
                continue
            kind = self.c_moves[m].kind
            # A continuation the strategy rules out costs more than any other.
            costs[m] = best - sigma[kind] if sigma[kind] >= 0 else s.n + 1
            if kind == AS_LEFT_ARC:
                costs[m] += label_error(gold, j, i, self.c_moves[m].label)
            elif kind == AS_RIGHT_ARC:
                costs[m] += label_error(gold, i, j, self.c_moves[m].label)

    # -- from Python ----------------------------------------------------------------

    def step_scores(self, ParseState state, algorithm="auto", int repeats=1):
        """{"S": sigma, "L": sigma, "R": sigma}: the most gold arcs reachable
        after each step, less those already built (None: invalid, or no
        computation after it obeys the strategy). `algorithm`: "cubic",
        "quadratic" or "linear" (the last two need a projective gold tree),
        or "auto". `repeats`: how many times the scores are computed, in a
        loop in C without the GIL or Python in between (so that a caller can
        time one computation: benchmarks/optimal_step.py)."""
        state._require_gold()
        if algorithm not in ALGORITHMS:
            raise ValueError(f"Unknown algorithm {algorithm!r}: expected one of "
                             f"{', '.join(repr(a) for a in ALGORITHMS)}.")
        if algorithm in ("quadratic", "linear") and not gold_is_projective(state.gold):
            raise ValueError(f"The {algorithm} optimal-step algorithm needs a projective gold tree.")
        if repeats < 1:
            raise ValueError(f"repeats must be at least 1, got {repeats}.")
        cdef int[AS_KINDS] sigma
        cdef int r, code = ALGORITHMS[algorithm]
        with nogil:
            for r in range(repeats):
                self.step_scores_c(state.c, state.gold, code, sigma, state.scratch)
        return {name: (sigma[k] if sigma[k] >= 0 else None)
                for k, (name, _) in enumerate(type(self).kinds)}
