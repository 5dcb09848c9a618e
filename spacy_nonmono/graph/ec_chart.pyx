# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The first-order 1-Endpoint-Crossing chart: the best tree with one root arc
among the 1EC trees (Pitler, Kannan & Marcus 2013) under arc scores.

The deduction system is data (`ec_rules.py`: item kinds, rules, and the
connectivity-state table of each rule); this module fills the chart by
interpreting it, nogil, in order of span, and reads the best tree back by
re-deriving each item on the way down (no back-pointers are stored: each
item's winning antecedents are found again by recomputing its candidates,
which gives the same float32 sums in the same order).

Time O(n^4) (items [i, j; x] with one split point, and INT0's C1 and C2
rules of [i, j] with two), memory O(n^3): nine kinds of 3-point items
(three only for x right of [i, j], where they are read), each storing the
connectivity states it can reach and some rule reads (all ten but for the
chains and X_LR, four to seven: ec_rules.possible_states after _prune),
float32, as is the arc table the chart reads, and so are the sums (as the
models' scores are): the loops over x run four values per instruction.
The kinds built without a split point (X_N_PLUS, X_NEAR_PLUS, ...) are
stored only on the sides where rules read the same rows again (X_LR's
X_NEAR_PLUS for x right, INT0's C2 over p for x left); elsewhere they are
computed where read, from the same interval's X_N or X_NEAR. A sentence
whose buffers would pass `memory_limit` has some of them computed where
read on the other sides too (ChartC.derived), as few as the limit allows,
those that save the least time per byte first (STORE_FIRST).

The hot loops are vectorised over one position:
- A block of items [i, j; x] holds each state as a row over x, so the items
  [i, j; x] of all x on one side are filled together: for a rule and its
  split point, the antecedents that read x are rows of the arc table (or of
  its transpose) and of stored blocks; the rows of the rule's state table
  that differ only in the states of the other antecedents share one
  max-plus loop over x.
- The rules with two split points k and p (INT0's C1 and C2) have one
  antecedent that depends on j. The sum of the others is kept for the
  current i, by k and by group of rows with the same last state and
  result (two_split_partial, O(n^3) in all), so INT0 [i, j] takes one
  loop over p per k and group: the partial sum plus a row of the last
  antecedent (of a stored block, or of an "inner-point" copy of the items
  it reads, with p as the inner point). Hence the fill order: i from
  right to left, j from left to right.
- The antecedents of the next split point are prefetched.
- A kind computed where read is computed for the states the reading rule
  uses only; its items read at one x (derived_values) are kept in a small
  direct-mapped table, as several rules of one [i, j] read the same ones.
Time and memory by length: docs/results/one_ec/README.md, hence the length
guard of `1ec_arcs`. An ``EcChart`` keeps its buffers and grows them only
for a longer sentence.
"""
import numpy
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define EC_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define EC_PREFETCH(address) ((void)(address))
    #endif
    """
    # A hint to load the cache line at address (a no-op on other compilers).
    void EC_PREFETCH(const void* address) nogil


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #define EC_RESTRICT __restrict
    #else
    #define EC_RESTRICT __restrict__
    #endif
    static inline void ec_max_row(float* EC_RESTRICT out, float fixed,
                                  const float* EC_RESTRICT m1,
                                  const float* EC_RESTRICT m2, int width) {
        int x;
        float v;
        if (m2) {
            for (x = 0; x < width; x++) {
                v = fixed + m1[x] + m2[x];
                out[x] = v > out[x] ? v : out[x];
            }
        } else if (m1) {
            for (x = 0; x < width; x++) {
                v = fixed + m1[x];
                out[x] = v > out[x] ? v : out[x];
            }
        } else {
            for (x = 0; x < width; x++)
                out[x] = fixed > out[x] ? fixed : out[x];
        }
    }
    """
    # out[x] = max(out[x], fixed + m1[x] + m2[x]) over x < width (m2 or both
    # NULL: left out), in loops the compiler vectorises: out never overlaps
    # the rows it reads (restrict: no overlap checks).
    void max_row "ec_max_row" (float* out, float fixed, const float* m1, const float* m2,
                               int width) nogil

from . import ec_rules as R

cdef enum:
    MEMO_SLOTS = 4096           # 2 ** 12: part_values' hash keeps the top 12 bits
    ALL_STATES = 0x3ff          # fill_side's results: every state, (1 << MAX_STATES) - 1
    MAX_PARTS = 4
    MAX_STATES = 10
    MAX_KINDS = 32
    MAX_RULES = 64
    MAX_INNER = 4
    MAX_GROUPS = 32

# Where a part of a rule with two split points reads its values at
# consecutive p (vectorised_two_split): the edge does not move with p.
cdef enum:
    SRC_FIXED_EDGE = 0
    SRC_BLOCK_X = 1         # a stored block (a, b), over its x slots
    SRC_INNER = 2           # an inner-point copy of a triple kind, over its inner point
    SRC_GATHER = 3          # stored items gathered one p at a time (parts summed
                            # once per i and k, by two_split_partial)

cdef int K_INT = R.INT, K_INT0 = R.INT0, K_Q = R.Q, K_Q_NE = R.Q_NE, K_REG = R.REG
cdef int K_X_N = R.X_N, K_EDGE = R.EDGE
cdef int N_PAIR_STORED = R.N_STORED_PAIR, N_TRIPLE_STORED = R.N_STORED_TRIPLE
cdef int SYM_I = R.I, SYM_J = R.J, SYM_X = R.X


cdef struct RuleC:
    int kind
    int n_splits
    int split[2][4]             # lo symbol, lo offset, hi symbol, hi offset
    int n_parts
    int part[MAX_PARTS][6]      # kind, a symbol, a offset, b symbol, b offset, x symbol (-1: none)
    int moves[MAX_PARTS]        # whether the part reads the consequent's x
    int* combos[2]              # per orientation: n_combos rows of n_parts states + the result,
    int n_combos[2]             # sorted by the first antecedent's state:
    int first[2][MAX_STATES + 1]    # its rows for state s: first[o][s] .. first[o][s + 1]
    int n_first_states
    int* group_last[2]          # triple kinds: 1 on a row whose next row differs in
                                # the states of the parts that read x or in the result
    int need[2][MAX_PARTS][MAX_STATES + 1]  # the states a part's rows read: count, states
    unsigned int need_mask[2][MAX_PARTS]    # the same as a bit mask
    int src[MAX_PARTS]          # rules with two split points: SRC_* by part,
    int inner[MAX_PARTS]        # the inner-point copy a SRC_INNER part reads,
    int two_index               # their index among such rules,
    int* row_group              # each row's group: its last part's state and result,
    int n_groups
    int group_last_state[MAX_GROUPS]    # the last part's state of a group,
    int group_result[MAX_GROUPS]    # and its result


cdef struct ChartC:
    int n                       # positions 0..n
    int N                       # n + 1
    const float* arc            # [head * N + dep], float32 as every stored value
    const float* arc_t          # the transpose, [dep * N + head]
    float* pair                 # [(kind * N + a) * N + b) * 3 + s], kinds INT, INT0, Q
    float* triple               # blocks of (kind, a, b): a row per stored state, of L(a, b) x slots
    long long* offset           # first x slot of (a, b): offset[a * N + b] (block at n_rows times it)
    long long* offset_right     # the same counting only x > b (RIGHT_ONLY kinds)
    long long* offset_left      # and only x < a (LEFT_ONLY kinds)
    long long kind_base[MAX_KINDS]
    int kind_side[MAX_KINDS]    # 0: x on both sides, 1: right only, -1: left only
    int stored[MAX_KINDS]       # whether this chart's rules build the kind
    int derived[MAX_KINDS][2]   # by side (1: x right): a kind built without split
                                # points (X_N_PLUS, ...) with no block there (the
                                # layout: EcChart._set_layout); its items are
                                # computed where read, from the same interval's
                                # stored items (its inner-point copies are filled)
    int block_side[MAX_KINDS]   # the sides stored as blocks: as kind_side, 2: none
    int n_rows[MAX_KINDS]       # the states a kind stores (those it can reach),
    int row_of[MAX_KINDS][MAX_STATES]   # and the row of each (-1: not stored, -inf)
    int* two_split_rule         # the rules with two split points, in order
    int n_two_split
    # Inner-point copies: the items (kind, a, b, x) of one side of a triple
    # kind again, in blocks by their outer points (lo, hi) = (x, b) for x
    # left, (a, x) for x right, with the states the two-split rules read
    # as rows over the inner point (a, or b) in (lo, hi).
    int n_inner
    float* inner_data[MAX_INNER]
    int inner_kind[MAX_INNER]
    int inner_side[MAX_INNER]
    int inner_rows[MAX_INNER]
    int inner_row_of[MAX_INNER][MAX_STATES]
    long long* offset_inner     # first slot of the block (lo, hi): offset_inner[lo * N + hi]
    # The two-split rules' sums of their first three parts, which do not
    # depend on j, by (rule, k) for the current i: block [t * N + k] at
    # partial_off, a row per group of partial_len slots, for p from
    # partial_p0 (the p of any i and j).
    float* partial
    long long* partial_off
    int* partial_p0
    int* partial_len
    float* gather               # SRC_GATHER rows: [(q * MAX_STATES + s) * N + p]
    # The items of derived kinds read at one x, as computed last (several
    # rules of one [i, j] read the same ones): a direct-mapped table of
    # MEMO_SLOTS items by key (kind, a, b, x), -1 where empty.
    long long* memo_key
    float* memo_values          # [slot * MAX_STATES + s]
    float* derived_rows[2]      # fill_side's rows of a derived part that reads x,
                                # by moving part: [s * width + x - x_lo]
    RuleC* rules
    int n_rules
    int* first_rule             # rules of kind k: first_rule[k] .. first_rule[k + 1]
    int* n_states_of            # by kind
    int pair_separate, pair_left, pair_right


cdef struct Found:
    int n_parts
    int kind[MAX_PARTS]
    int a[MAX_PARTS]
    int b[MAX_PARTS]
    int x[MAX_PARTS]
    int state[MAX_PARTS]
    float value[MAX_PARTS]


cdef inline float* triple_slot(const ChartC* c, int kind, int a, int b, int x,
                               int* stride) noexcept nogil:
    """The first stored row of item (kind, a, b, x) of a stored kind of
    triples; state s is at row_of[kind][s] * stride (see state_row). A
    block (kind, a, b) holds its states as rows over its x slots (x < a,
    then x > b; x > b only for RIGHT_ONLY kinds, x < a only for LEFT_ONLY
    ones), so that the items of consecutive x are neighbours."""
    cdef int xi
    if c.block_side[kind] == 1:
        stride[0] = c.n - b
        return &c.triple[c.kind_base[kind] + c.offset_right[a * c.N + b] * c.n_rows[kind]
                         + x - b - 1]
    if c.block_side[kind] == -1:
        stride[0] = a
        return &c.triple[c.kind_base[kind] + c.offset_left[a * c.N + b] * c.n_rows[kind] + x]
    stride[0] = c.N - (b - a + 1)
    xi = x if x < a else x - (b - a + 1)
    return &c.triple[c.kind_base[kind] + c.offset[a * c.N + b] * c.n_rows[kind] + xi]


cdef inline const float* state_row(const ChartC* c, int kind, const float* slot, int stride,
                                   int s) noexcept nogil:
    """State s of the item at slot (triple_slot), or NULL where the kind
    never reaches s (its value is -inf)."""
    if c.row_of[kind][s] < 0:
        return NULL
    return slot + c.row_of[kind][s] * stride


cdef inline void apply_rows(const RuleC* rule, int mirrored, const float** pv,
                            float* best) noexcept nogil:
    """The hot loop: best[s] = max(best[s], the rule's candidates of state s
    from the antecedents' state vectors pv). Rows are grouped by the first
    antecedent's state (skipped where it is -inf), one version per number of
    antecedents."""
    cdef int s, row, rows_lo, rows_hi
    cdef int n_parts = rule.n_parts
    cdef const int* combo
    cdef const float* v0 = pv[0]
    cdef const float* v1 = pv[1] if n_parts > 1 else NULL
    cdef const float* v2 = pv[2] if n_parts > 2 else NULL
    cdef const float* v3 = pv[3] if n_parts > 3 else NULL
    cdef float v, a0
    for s in range(rule.n_first_states):
        a0 = v0[s]
        if a0 == -INFINITY:
            continue
        rows_lo = rule.first[mirrored][s]
        rows_hi = rule.first[mirrored][s + 1]
        combo = rule.combos[mirrored] + rows_lo * (n_parts + 1)
        if n_parts == 1:
            for row in range(rows_lo, rows_hi):
                if a0 > best[combo[1]]:
                    best[combo[1]] = a0
                combo += 2
        elif n_parts == 2:
            for row in range(rows_lo, rows_hi):
                v = a0 + v1[combo[1]]
                if v > best[combo[2]]:
                    best[combo[2]] = v
                combo += 3
        elif n_parts == 3:
            for row in range(rows_lo, rows_hi):
                v = a0 + v1[combo[1]] + v2[combo[2]]
                if v > best[combo[3]]:
                    best[combo[3]] = v
                combo += 4
        else:
            for row in range(rows_lo, rows_hi):
                v = a0 + v1[combo[1]] + v2[combo[2]] + v3[combo[3]]
                if v > best[combo[4]]:
                    best[combo[4]] = v
                combo += 5


cdef inline void set_symbols(const ChartC* c, int* sym, int i, int j, int x,
                             int mirrored) noexcept nogil:
    """The rule symbols I, J, X of item [i, j; x]: its positions, mirrored
    (u -> n - u) for x right of [i, j], where the oriented rules read them."""
    sym[SYM_I] = c.n - j if mirrored else i
    sym[SYM_J] = c.n - i if mirrored else j
    sym[SYM_X] = c.n - x if mirrored else x


cdef struct SplitIter:
    int started, k, p, k_hi, p_hi


cdef inline int next_split(const RuleC* rule, int* sym, SplitIter* it) noexcept nogil:
    """Steps sym[3] (k) and sym[4] (p) through the rule's split points (one
    pass for a rule without them); 0 when done. Start with it.started = 0."""
    cdef int p_lo
    if not it.started:
        it.started = 1
        split_range(rule, 0, sym, &it.k, &it.k_hi)
        it.k -= 1
        it.p = 0
        it.p_hi = -1
    it.p += 1
    while it.p > it.p_hi:
        it.k += 1
        if it.k > it.k_hi:
            return 0
        sym[3] = it.k
        split_range(rule, 1, sym, &p_lo, &it.p_hi)
        it.p = p_lo
    sym[4] = it.p
    return 1


cdef inline void split_range(const RuleC* rule, int which, const int* sym,
                             int* lo, int* hi) noexcept nogil:
    """The range of the rule's split point `which` (0: k, 1: p); [0, 0] for
    a split the rule does not have (one pass, no split point)."""
    if which < rule.n_splits:
        lo[0] = sym[rule.split[which][0]] + rule.split[which][1]
        hi[0] = sym[rule.split[which][2]] + rule.split[which][3]
    else:
        lo[0] = 0
        hi[0] = 0


cdef void fill_side(const ChartC* c, int kind, int i, int j, int mirrored, int x_lo, int x_hi,
                    float* best, unsigned int results) noexcept nogil:
    """Every item (kind, i, j, x) of a stored kind of triples with x in
    [x_lo, x_hi), all on one side of [i, j]: best[s * (x_hi - x_lo) + x - x_lo].
    The same candidates as `evaluate`, summed in the same order (the parts
    fixed over x, then those that read x), with x the innermost loop: a part
    that reads x is, state by state, a row of the arc table (or of its
    transpose) or a row of a stored block, contiguous over x. At most two
    parts of a rule read x (checked at init). Only the states in the bit
    mask `results` are computed (the others are left -inf): where a kind is
    computed for a rule, those the rule reads."""
    cdef int r, t, p, m, a, b, px, row, n_parts, stride, k, s
    cdef SplitIter splits
    cdef int width = x_hi - x_lo
    cdef int sym[5]
    cdef float fixed_val[MAX_PARTS][MAX_STATES]     # a fixed part's values by state
    cdef const float* moving[2][MAX_STATES]     # a moving part's row at x_lo by state
    cdef int moving_part[2]
    cdef int n_moving
    cdef const float* slot
    cdef const int* combo
    cdef const RuleC* rule
    cdef float fixed, group_fixed
    for t in range(width * MAX_STATES):
        best[t] = -INFINITY
    set_symbols(c, sym, i, j, x_lo, mirrored)
    for r in range(c.first_rule[kind], c.first_rule[kind + 1]):
        rule = &c.rules[r]
        n_parts = rule.n_parts
        splits.started = 0
        while next_split(rule, sym, &splits):
            if rule.n_splits == 1 and splits.k < splits.k_hi:
                prefetch_next_split(c, rule, sym, mirrored)
            n_moving = 0
            for p in range(n_parts):
                locate_part(c, rule, p, sym, mirrored, &a, &b, &px)
                if rule.moves[p]:
                    m = n_moving
                    moving_part[m] = p
                    n_moving += 1
                    if rule.part[p][0] == K_EDGE:
                        # The edge x-k over x: rows k of arc (k -> x)
                        # and of arc_t (x -> k).
                        k = b if a == x_lo else a
                        moving[m][c.pair_separate] = NULL
                        if a == x_lo:       # x left of k: "left on top" is x -> k
                            moving[m][c.pair_left] = &c.arc_t[k * c.N + x_lo]
                            moving[m][c.pair_right] = &c.arc[k * c.N + x_lo]
                        else:
                            moving[m][c.pair_left] = &c.arc[k * c.N + x_lo]
                            moving[m][c.pair_right] = &c.arc_t[k * c.N + x_lo]
                    elif c.derived[rule.part[p][0]][mirrored]:
                        # Its rows over the same x, computed here (its rules
                        # read no derived kind: checked at init).
                        fill_side(c, rule.part[p][0], a, b, mirrored, x_lo, x_hi,
                                  c.derived_rows[m], rule.need_mask[mirrored][p])
                        for s in range(MAX_STATES):
                            moving[m][s] = (&c.derived_rows[m][s * width]
                                            if c.row_of[rule.part[p][0]][s] >= 0 else NULL)
                    else:
                        slot = triple_slot(c, rule.part[p][0], a, b, px, &stride)
                        for s in range(MAX_STATES):
                            moving[m][s] = state_row(c, rule.part[p][0], slot, stride, s)
                else:
                    part_values(c, rule.part[p][0], a, b, px, fixed_val[p])
            combo = rule.combos[mirrored]
            group_fixed = -INFINITY
            for row in range(rule.n_combos[mirrored]):
                fixed = 0.0
                for p in range(n_parts):
                    if not rule.moves[p]:
                        fixed += fixed_val[p][combo[p]]
                if fixed > group_fixed:
                    group_fixed = fixed
                if not rule.group_last[mirrored][row]:
                    combo += n_parts + 1
                    continue
                # The last row of its group: one loop over x with the
                # group's best fixed sum.
                fixed = group_fixed
                group_fixed = -INFINITY
                if fixed > -INFINITY and (results >> combo[n_parts]) & 1:
                    if n_moving == 0:
                        max_row(&best[combo[n_parts] * width], fixed, NULL, NULL, width)
                    elif n_moving == 1:
                        if moving[0][combo[moving_part[0]]] != NULL:
                            max_row(&best[combo[n_parts] * width], fixed,
                                    moving[0][combo[moving_part[0]]], NULL, width)
                    elif moving[0][combo[moving_part[0]]] != NULL and \
                            moving[1][combo[moving_part[1]]] != NULL:
                        max_row(&best[combo[n_parts] * width], fixed,
                                moving[0][combo[moving_part[0]]],
                                moving[1][combo[moving_part[1]]], width)
                combo += n_parts + 1


cdef inline void prefetch_next_split(const ChartC* c, const RuleC* rule, int* sym,
                                    int mirrored) noexcept nogil:
    """Asks for the stored triple parts of the next split point while this
    one is summed: every state of a part fixed over x (fill_side reads them
    all, one cache line each) and the start of each row of a part that
    reads x. Their blocks are far apart, so each would be a cache miss."""
    cdef int p, s, a, b, x, stride, kind
    cdef const float* slot
    sym[3] += 1
    for p in range(rule.n_parts):
        kind = rule.part[p][0]
        if kind < N_PAIR_STORED or kind == K_EDGE:
            continue
        locate_part(c, rule, p, sym, mirrored, &a, &b, &x)
        if c.derived[kind][x > b]:
            continue
        slot = triple_slot(c, kind, a, b, x, &stride)
        for s in range(MAX_STATES):
            if c.row_of[kind][s] >= 0:
                EC_PREFETCH(slot + c.row_of[kind][s] * stride)
                if rule.moves[p]:
                    EC_PREFETCH(slot + c.row_of[kind][s] * stride + 16)
    sym[3] -= 1


cdef int evaluate(const ChartC* c, int kind, int i, int j, int x, float* best,
                  int find_state, float find_value, Found* found) noexcept nogil:
    """All candidates of item (kind, i, j, x) (original positions). Fill
    mode (find_state < 0): best[s] = the best value of each state. Find mode:
    stop at the first candidate giving find_state with find_value, write its
    antecedents to found; returns 1 if one was found."""
    cdef int mirrored = 0, r, p, s, n_parts, row
    cdef SplitIter splits
    cdef int sym[5]
    cdef int pa[MAX_PARTS]
    cdef int pb[MAX_PARTS]
    cdef int px[MAX_PARTS]
    cdef float vec[MAX_PARTS][MAX_STATES]
    cdef const float* pv[MAX_PARTS]
    cdef const int* combo
    cdef const RuleC* rule
    cdef float v
    cdef int n_states = c.n_states_of[kind]
    if find_state < 0:
        for s in range(n_states):
            best[s] = -INFINITY
    if kind >= K_X_N and kind != K_EDGE and x > j:
        mirrored = 1
    set_symbols(c, sym, i, j, x, mirrored)
    for r in range(c.first_rule[kind], c.first_rule[kind + 1]):
        rule = &c.rules[r]
        if find_state < 0 and rule.n_splits == 2:
            continue            # filled by vectorised_two_split
        n_parts = rule.n_parts
        splits.started = 0
        while next_split(rule, sym, &splits):
            if not fetch_parts(c, rule, sym, mirrored, pa, pb, px, vec, pv):
                continue
            combo = rule.combos[mirrored]
            if find_state < 0 and kind < N_PAIR_STORED:
                apply_rows(rule, mirrored, pv, best)
                continue
            for row in range(rule.n_combos[mirrored]):
                # fill_side's order: the parts fixed over x, then those
                # that read it (pairs read none: the parts' order).
                v = 0.0
                for p in range(n_parts):
                    if not rule.moves[p]:
                        v += pv[p][combo[p]]
                for p in range(n_parts):
                    if rule.moves[p]:
                        v += pv[p][combo[p]]
                s = combo[n_parts]
                if find_state < 0:
                    if v > best[s]:     # a derived triple kind (part_values)
                        best[s] = v
                elif s == find_state and v == find_value:
                    found.n_parts = n_parts
                    for p in range(n_parts):
                        found.kind[p] = rule.part[p][0]
                        found.a[p] = pa[p]
                        found.b[p] = pb[p]
                        found.x[p] = px[p]
                        found.state[p] = combo[p]
                        found.value[p] = pv[p][combo[p]]
                    return 1
                combo += n_parts + 1
    return 0


cdef inline void locate_part(const ChartC* c, const RuleC* rule, int p, const int* sym,
                             int mirrored, int* a, int* b, int* x) noexcept nogil:
    """Antecedent p's positions (a < b, x or -1) at these split points."""
    a[0] = sym[rule.part[p][1]] + rule.part[p][2]
    b[0] = sym[rule.part[p][3]] + rule.part[p][4]
    x[0] = sym[rule.part[p][5]] if rule.part[p][5] >= 0 else -1
    if mirrored:
        a[0] = c.n - a[0]
        b[0] = c.n - b[0]
        if x[0] >= 0:
            x[0] = c.n - x[0]
    if a[0] > b[0]:
        a[0], b[0] = b[0], a[0]


cdef inline void part_values(const ChartC* c, int kind, int a, int b, int x,
                             float* out) noexcept nogil:
    """The values by state of the edge a-b or of a stored item (kind, a, b, x)."""
    cdef int s, stride, slot_index
    cdef long long key
    cdef const float* slot
    cdef const float* row
    if kind == K_EDGE:
        out[c.pair_separate] = -INFINITY
        out[c.pair_left] = c.arc[a * c.N + b]
        out[c.pair_right] = c.arc[b * c.N + a]
    elif kind < N_PAIR_STORED:
        for s in range(3):
            out[s] = c.pair[((kind * c.N + a) * c.N + b) * 3 + s]
    elif c.derived[kind][x > b]:
        key = ((<long long>kind * c.N + a) * c.N + b) * c.N + x
        slot_index = <int>((<unsigned long long>key * 11400714819323198485ULL) >> 52)
        if c.memo_key[slot_index] != key:
            derived_values(c, kind, a, b, x, &c.memo_values[slot_index * MAX_STATES])
            c.memo_key[slot_index] = key
        memcpy(out, &c.memo_values[slot_index * MAX_STATES], MAX_STATES * sizeof(float))
    else:
        slot = triple_slot(c, kind, a, b, x, &stride)
        for s in range(MAX_STATES):
            row = state_row(c, kind, slot, stride, s)
            out[s] = row[0] if row != NULL else -INFINITY


cdef void derived_values(const ChartC* c, int kind, int a, int b, int x,
                         float* out) noexcept nogil:
    """The values by state of item (kind, a, b, x) of a kind computed where
    read: its rules have no split point and read the edge x-b or a stored
    item of the same (a, b, x) (checked at init). evaluate's sums (every
    part reads x: in order), without its general split and part handling."""
    cdef int r, p, q, s, pa, pb, px, row, stride, n_parts, part_kind
    cdef int mirrored = x > b
    cdef int sym[5]
    cdef float val[MAX_PARTS][MAX_STATES]
    cdef const float* slot
    cdef const int* combo
    cdef const int* need
    cdef const RuleC* rule
    cdef float v
    for s in range(MAX_STATES):
        out[s] = -INFINITY
    set_symbols(c, sym, a, b, x, mirrored)
    for r in range(c.first_rule[kind], c.first_rule[kind + 1]):
        rule = &c.rules[r]
        n_parts = rule.n_parts
        for p in range(n_parts):
            part_kind = rule.part[p][0]
            locate_part(c, rule, p, sym, mirrored, &pa, &pb, &px)
            if part_kind == K_EDGE:
                part_values(c, K_EDGE, pa, pb, px, val[p])
            else:
                slot = triple_slot(c, part_kind, pa, pb, px, &stride)
                need = rule.need[mirrored][p]
                for q in range(need[0]):
                    s = need[q + 1]
                    val[p][s] = (slot[c.row_of[part_kind][s] * stride]
                                 if c.row_of[part_kind][s] >= 0 else -INFINITY)
        combo = rule.combos[mirrored]
        for row in range(rule.n_combos[mirrored]):
            v = 0.0
            for p in range(n_parts):
                v += val[p][combo[p]]
            s = combo[n_parts]
            if v > out[s]:
                out[s] = v
            combo += n_parts + 1


cdef int fetch_parts(const ChartC* c, const RuleC* rule, const int* sym, int mirrored,
                     int* pa, int* pb, int* px, float (*vec)[MAX_STATES],
                     const float** pv) noexcept nogil:
    """The state vectors of the rule's antecedents at these split points;
    0 if one of them has no finite state (the rule gives nothing)."""
    cdef int p, kind, a, b, x, s, any_finite
    for p in range(rule.n_parts):
        kind = rule.part[p][0]
        locate_part(c, rule, p, sym, mirrored, &a, &b, &x)
        pa[p] = a
        pb[p] = b
        px[p] = x
        if kind < N_PAIR_STORED:
            pv[p] = &c.pair[((kind * c.N + a) * c.N + b) * 3]
        else:
            part_values(c, kind, a, b, x, vec[p])
            pv[p] = vec[p]
        any_finite = 0
        for s in range(c.n_states_of[kind]):
            if pv[p][s] > -INFINITY:
                any_finite = 1
                break
        if not any_finite:
            return 0
    return 1


cdef void store_pair(ChartC* c, int kind, int i, int j, float* tmp,
                     float* scratch) noexcept nogil:
    cdef int s
    cdef float* out = &c.pair[((kind * c.N + i) * c.N + j) * 3]
    evaluate(c, kind, i, j, -1, tmp, -1, 0.0, NULL)
    vectorised_two_split(c, kind, i, j, tmp, scratch)
    for s in range(3):
        out[s] = tmp[s]


cdef void two_split_partial(const ChartC* c, int i, int k) noexcept nogil:
    """For the rules with two split points (INT0's C1 and C2, and REG's):
    once the items of [i, k] are stored, the sum of each row's first three
    parts (the edge i-k and two parts that do not depend on j), at every p
    any j > k reads, kept per group of rows (the last part's state and the
    result) as their maximum. A row's candidate is that sum plus the last
    part, so each group's best sum gives its best candidate (rounding is
    monotonic): INT0 [i, j] then reads one row per group and k."""
    cdef int r, u, t, g, p, p_lo, p_hi, k_lo, k_hi, row, p0, width, length
    cdef int sym[5]
    cdef float edge[3]
    cdef const float* rows[MAX_PARTS][MAX_STATES]
    cdef const int* combo
    cdef const RuleC* rule
    cdef float* block
    cdef float* out
    cdef const float* a
    cdef const float* b
    cdef float e, v
    for u in range(c.n_two_split):
        rule = &c.rules[c.two_split_rule[u]]
        t = rule.two_index
        set_symbols(c, sym, i, c.n, -1, 0)       # j = n: every p a later j reads
        sym[3] = k
        split_range(rule, 0, sym, &k_lo, &k_hi)
        if k < k_lo or k > k_hi:
            continue
        width = two_split_rows(c, rule, sym, 0, 3, edge, rows, 1)
        if not width:
            continue
        p_lo = sym[4]
        p_hi = p_lo + width - 1
        p0 = c.partial_p0[t * c.N + k]
        length = c.partial_len[t * c.N + k]
        block = &c.partial[c.partial_off[t * c.N + k]]
        for g in range(rule.n_groups):
            out = block + g * length
            for p in range(p_lo, p_hi + 1):
                out[p - p0] = -INFINITY
        combo = rule.combos[0]
        for row in range(rule.n_combos[0]):
            e = edge[combo[0]]
            a = rows[1][combo[1]]
            b = rows[2][combo[2]]
            if e > -INFINITY and a != NULL and b != NULL:
                out = block + rule.row_group[row] * length + p_lo - p0
                for p in range(p_hi - p_lo + 1):
                    v = e + a[p] + b[p]
                    out[p] = v if v > out[p] else out[p]
            combo += rule.n_parts + 1


cdef void vectorised_two_split(const ChartC* c, int kind, int i, int j, float* best,
                               float* acc) noexcept nogil:
    """The candidates of the pair item (kind, i, j) from its rules with two
    split points (INT0's C1 and C2), maxed into best[s]: for each k, each
    group of rows is one vectorised loop over p adding the last part (a
    row of a stored block or of an inner-point copy) to the group's partial
    sum (two_split_partial), in `evaluate`'s order; acc[s * N + p] keeps
    the best by state and p (acc: 3N scratch)."""
    cdef int r, t, g, k, k_lo, k_hi, p, p_lo, p_hi, q, s, width
    cdef int any_rule = 0
    cdef int sym[5]
    cdef float edge[3]
    cdef const float* rows[MAX_PARTS][MAX_STATES]
    cdef const float* last
    cdef const float* block
    cdef const RuleC* rule
    cdef float v
    for r in range(c.first_rule[kind], c.first_rule[kind + 1]):
        rule = &c.rules[r]
        if rule.n_splits != 2:
            continue
        if not any_rule:
            any_rule = 1
            for q in range(3 * c.N):
                acc[q] = -INFINITY
        t = rule.two_index
        set_symbols(c, sym, i, j, -1, 0)
        split_range(rule, 0, sym, &k_lo, &k_hi)
        for k in range(k_lo, k_hi + 1):
            if k < k_hi:
                # The next k's rows, asked for while this one's are summed.
                sym[3] = k + 1
                width = two_split_rows(c, rule, sym, 3, 4, edge, rows, 0)
                if width:
                    block = partial_row(c, t, k + 1, sym[4])
                    for s in range(MAX_STATES):
                        if rows[3][s] != NULL:
                            EC_PREFETCH(rows[3][s])
                    for g in range(rule.n_groups):
                        EC_PREFETCH(block + g * c.partial_len[t * c.N + k + 1])
            sym[3] = k
            width = two_split_rows(c, rule, sym, 3, 4, edge, rows, 1)
            if not width:
                continue
            p_lo = sym[4]
            block = partial_row(c, t, k, p_lo)
            for g in range(rule.n_groups):
                last = rows[3][rule.group_last_state[g]]
                if last != NULL:
                    # 0 + the partial sum is the partial sum: the same
                    # float sums as evaluate's.
                    max_row(&acc[rule.group_result[g] * c.N + p_lo], 0.0,
                            block + g * c.partial_len[t * c.N + k], last, width)
    if any_rule:
        for s in range(3):
            for p in range(i, j + 1):
                v = acc[s * c.N + p]
                if v > best[s]:
                    best[s] = v


cdef inline const float* partial_row(const ChartC* c, int t, int k, int p) noexcept nogil:
    """Group 0's partial sum at p of two-split rule t and split point k
    (group g is g * partial_len[t * N + k] further)."""
    return &c.partial[c.partial_off[t * c.N + k] + p - c.partial_p0[t * c.N + k]]


cdef inline int two_split_rows(const ChartC* c, const RuleC* rule, int* sym, int q_lo,
                               int q_hi, float* edge, const float* (*rows)[MAX_STATES],
                               int compute) noexcept nogil:
    """For the split point k = sym[3] of a two-split rule: sets sym[4] to
    the first p, and for its parts q_lo..q_hi-1 the edge's values by state
    or rows[q][s], part q's row of state s from that p on (NULL: -inf);
    returns the number of p. A derived kind read over p is computed into
    derived_rows[0] (without `compute`, for a prefetch: left NULL)."""
    cdef int q, s, a, b, x, stride, p_lo, p_hi
    cdef const float* slot
    split_range(rule, 1, sym, &p_lo, &p_hi)
    if p_lo > p_hi:
        return 0
    sym[4] = p_lo
    for q in range(q_lo, q_hi):
        locate_part(c, rule, q, sym, 0, &a, &b, &x)
        if rule.src[q] == SRC_FIXED_EDGE:
            edge[c.pair_separate] = -INFINITY
            edge[c.pair_left] = c.arc[a * c.N + b]
            edge[c.pair_right] = c.arc[b * c.N + a]
            continue
        for s in range(MAX_STATES):
            rows[q][s] = NULL
        if rule.src[q] == SRC_BLOCK_X and c.derived[rule.part[q][0]][x > b]:
            if compute:
                fill_side(c, rule.part[q][0], a, b, x > b, p_lo, p_hi + 1, c.derived_rows[0],
                          rule.need_mask[0][q])
                for s in range(MAX_STATES):
                    if c.row_of[rule.part[q][0]][s] >= 0:
                        rows[q][s] = &c.derived_rows[0][s * (p_hi - p_lo + 1)]
        elif rule.src[q] == SRC_BLOCK_X:
            slot = triple_slot(c, rule.part[q][0], a, b, x, &stride)
            for s in range(MAX_STATES):
                rows[q][s] = state_row(c, rule.part[q][0], slot, stride, s)
        elif rule.src[q] == SRC_INNER:
            inner_rows(c, rule.inner[q], a, b, x, rows[q])
        else:
            gather_rows(c, rule, q, sym, p_lo, p_hi, rows[q])
    return p_hi - p_lo + 1


cdef void gather_rows(const ChartC* c, const RuleC* rule, int q, int* sym, int p_lo,
                      int p_hi, const float** rows) noexcept nogil:
    """rows[s]: part q's values of state s for p = p_lo..p_hi (a stored
    pair or triple kind), read item by item into the gather scratch."""
    cdef int p, s, a, b, x
    cdef int kind = rule.part[q][0]
    cdef float values[MAX_STATES]
    for s in range(MAX_STATES):
        rows[s] = &c.gather[(q * MAX_STATES + s) * c.N]
    for p in range(p_lo, p_hi + 1):
        sym[4] = p
        locate_part(c, rule, q, sym, 0, &a, &b, &x)
        part_values(c, kind, a, b, x, values)
        for s in range(c.n_states_of[kind]):
            c.gather[(q * MAX_STATES + s) * c.N + p - p_lo] = values[s]
    sym[4] = p_lo


cdef inline long long inner_block(const ChartC* c, int ic, int a, int b, int x,
                                  int* lo, int* hi, int* inner) noexcept nogil:
    """The outer points and inner point of item (a, b, x) in inner copy ic;
    returns the block's first slot."""
    if c.inner_side[ic] == 0:
        lo[0], hi[0], inner[0] = x, b, a
    else:
        lo[0], hi[0], inner[0] = a, x, b
    return c.offset_inner[lo[0] * c.N + hi[0]] * c.inner_rows[ic]


cdef inline void inner_rows(const ChartC* c, int ic, int a, int b, int x,
                            const float** rows) noexcept nogil:
    """rows[s]: state s of item (a, b, x) in inner copy ic, whose next
    inner point follows it (NULL: a state the copy does not keep)."""
    cdef int lo, hi, inner, s
    cdef long long block = inner_block(c, ic, a, b, x, &lo, &hi, &inner)
    for s in range(MAX_STATES):
        if c.inner_row_of[ic][s] < 0:
            rows[s] = NULL
        else:
            rows[s] = &c.inner_data[ic][block + c.inner_row_of[ic][s] * (hi - lo - 1)
                                        + inner - lo - 1]


cdef void fill(ChartC* c, float* side_best) noexcept nogil:
    """Every stored item, each after the items of its subintervals (which
    are all it reads): i from right to left, j from left to right, so that
    the two-split rules' sums that do not depend on j serve every j of an i.
    side_best: N * MAX_STATES scratch."""
    cdef int d, i, j, x, kind, s
    cdef float* dst
    cdef float tmp[MAX_STATES]
    cdef int N = c.N
    for i in range(N - 2, -1, -1):
        for j in range(i + 1, N):
            d = j - i
            if d == 1:
                dst = &c.pair[((K_INT0 * N + i) * N + j) * 3]
                for s in range(3):
                    dst[s] = -INFINITY
                dst[c.pair_separate] = 0.0
                dst = &c.pair[((K_Q * N + i) * N + j) * 3]
                for s in range(3):
                    dst[s] = -INFINITY
            else:
                store_pair(c, K_Q, i, j, tmp, side_best)
                store_pair(c, K_INT0, i, j, tmp, side_best)
            store_pair(c, K_INT, i, j, tmp, side_best)
            if c.stored[K_REG]:
                if d == 1:
                    for s in range(3):
                        c.pair[((K_Q_NE * N + i) * N + j) * 3 + s] = -INFINITY
                        c.pair[((K_REG * N + i) * N + j) * 3 + s] = -INFINITY
                else:
                    store_pair(c, K_Q_NE, i, j, tmp, side_best)
                    store_pair(c, K_REG, i, j, tmp, side_best)
            # The kinds in order (each reads earlier kinds of the same
            # [i, j; x]), x on the left (but for RIGHT_ONLY kinds) and right
            # (but for LEFT_ONLY ones).
            for kind in range(K_X_N, K_X_N + N_TRIPLE_STORED):
                if not c.stored[kind]:
                    continue
                if i > 0 and c.kind_side[kind] != 1 and (
                        not c.derived[kind][0] or has_inner_copy(c, kind, 0)):
                    fill_side(c, kind, i, j, 0, 0, i, side_best, ALL_STATES)
                    store_side(c, kind, i, j, 0, i, side_best)
                if j < c.n and c.kind_side[kind] != -1 and (
                        not c.derived[kind][1] or has_inner_copy(c, kind, 1)):
                    fill_side(c, kind, i, j, 1, j + 1, N, side_best, ALL_STATES)
                    store_side(c, kind, i, j, j + 1, N, side_best)
            two_split_partial(c, i, j)


cdef inline int has_inner_copy(const ChartC* c, int kind, int side) noexcept nogil:
    cdef int ic
    for ic in range(c.n_inner):
        if c.inner_kind[ic] == kind and c.inner_side[ic] == side:
            return 1
    return 0


cdef inline void store_side(ChartC* c, int kind, int i, int j, int x_lo, int x_hi,
                            const float* best) noexcept nogil:
    cdef int x, s, stride
    cdef int width = x_hi - x_lo
    cdef float* out
    cdef int row, ic, lo, hi, inner, side = x_lo > j
    cdef long long block
    if not c.derived[kind][side]:
        out = triple_slot(c, kind, i, j, x_lo, &stride)
        for s in range(MAX_STATES):
            row = c.row_of[kind][s]
            if row >= 0:
                for x in range(width):
                    out[row * stride + x] = best[s * width + x]
    # The inner-point copies of this kind and side: one item per block.
    for ic in range(c.n_inner):
        if c.inner_kind[ic] != kind or c.inner_side[ic] != side:
            continue
        for x in range(x_lo, x_hi):
            block = inner_block(c, ic, i, j, x, &lo, &hi, &inner)
            for s in range(MAX_STATES):
                row = c.inner_row_of[ic][s]
                if row >= 0:
                    c.inner_data[ic][block + row * (hi - lo - 1) + inner - lo - 1] = \
                        best[s * width + x - x_lo]


cdef int* int_data(object array):
    cdef int[::1] view = array
    return &view[0]


def _compile_rules(rules):
    order = sorted(range(len(rules)), key=lambda r: rules[r].kind)
    n_kinds = len(R.KIND_NAMES)
    first = [0] * (n_kinds + 1)
    for r in order:
        first[rules[r].kind + 1] += 1
    for k in range(n_kinds):
        first[k + 1] += first[k]
    return [rules[r] for r in order], first


def _derived_sides(rules, over_p):
    """The (kind, side) the chart computes where they are read instead of
    storing (ChartC.derived): triple kinds whose rules have no split point
    and read no such kind, on the sides where they are read once per item
    computed. Not on the sides a rule with split points reads as rows over
    x (X_LR's X_NEAR_PLUS [k, j; x], x > j: the same rows for every i < k)
    or a two-split rule reads as a block over p (C2's X_N_PLUS [k, j; p],
    p < k: the same for every i < p), but with over_p: every side that can
    be computed where read, then computed for each i (more time, less
    memory; EcChart._prepare stores some again, as the limit allows)."""
    splits = {}
    for rule in rules:
        splits.setdefault(rule.kind, []).append(len(rule.splits))
    kinds = {kind for kind in range(R.X_N, R.X_N + R.N_STORED_TRIPLE)
             if kind in splits and not any(splits[kind])}
    kinds -= {part[0] for rule in rules if rule.kind in kinds for part in rule.parts}
    # derived_values reads the edge x-j or an item of the same [i, j; x].
    assert all(part[0] == R.EDGE or part[1:] == ((R.I, 0), (R.J, 0), R.X)
               for rule in rules if rule.kind in kinds for part in rule.parts)
    read_over_p = {(part[0], rule.sides[0][q], q) for rule in rules if len(rule.splits) == 2
                   for q, part in enumerate(rule.parts) if part[3] == R.P}
    read_over_x = {(part[0], rule.sides[o][q]) for rule in rules if len(rule.splits) == 1
                   for o in (0, 1) if rule.combos[o]
                   for q, part in enumerate(rule.parts) if part[3] == R.X}
    derived = {(kind, side) for kind in kinds for side in (0, 1)}
    if over_p:
        # One such part per rule: two_split_rows computes it into one scratch.
        assert all(q == 3 for kind, side, q in read_over_p if (kind, side) in derived)
        return derived
    return derived - {(kind, side) for kind, side, q in read_over_p} - read_over_x


# Over the memory limit, the blocks stored again as far as the limit allows,
# in this order: the most time saved per byte first (instructions of a fill
# at 50 words with each stored, docs/results/one_ec). Any other such block
# comes after them.
STORE_FIRST = ((R.X_NEAR_PLUS, 1), (R.X_NEAR_PLUS_COV, 0), (R.X_NEAR_PLUS_NE, 1),
               (R.X_NEAR_PLUS, 0), (R.X_N_EDGE, 0), (R.X_N_PLUS, 0))


def _checked_arcs(arc_scores):
    """A float64 copy of (n+1, n+1) arc scores, no arc into the root or
    from a word to itself."""
    arcs = numpy.array(arc_scores, dtype=numpy.float64)
    if arcs.ndim != 2 or arcs.shape[0] != arcs.shape[1] or arcs.shape[0] < 2:
        raise ValueError(f"arc_scores must be (n+1, n+1) with n >= 1, got {arcs.shape}")
    if numpy.isnan(arcs).any() or numpy.isposinf(arcs).any():
        raise ValueError("arc_scores must not be NaN or +inf")
    arcs[:, 0] = -numpy.inf
    numpy.fill_diagonal(arcs, -numpy.inf)
    return arcs


cdef class EcChart:
    """The 1EC chart, reusable across sentences (its buffers grow to the
    longest one)."""
    cdef ChartC c
    cdef readonly object _pair, _triple, _inner
    cdef object _offset, _arc, _combos, _first, _n_states, _two_split, _two_split_rule
    cdef object _partial, _gather, _memo_key, _memo_values
    cdef object _full_derived, _optional, _derived
    cdef readonly bint regions
    cdef public object memory_limit
    cdef RuleC* _rules

    def __cinit__(self):
        self._rules = NULL

    def __init__(self, prune=True, regions=False, memory_limit=100e6):
        # prune=False keeps the rows that read states an antecedent never
        # has (ec_rules.possible_states): the same results, slower (tests).
        # regions=True adds the region kinds of the third-order chart
        # (ec_rules.region_rules; REG [i, j] by item_values).
        # memory_limit (bytes, None: none): a sentence whose buffers would
        # pass it has some of the blocks rules read over x or p computed
        # where read (over_p; as few as the limit allows, STORE_FIRST).
        self.regions = regions
        self.memory_limit = memory_limit
        if prune:
            rule_set = R.RULES_WITH_REGIONS if regions else R.RULES
        else:
            rule_set = R.unpruned_rules() + (R.region_rules() if regions else [])
        rules, first = _compile_rules(rule_set)
        assert len(rules) <= MAX_RULES
        self._rules = <RuleC*>malloc(len(rules) * sizeof(RuleC))
        self._combos = []
        for r, rule in enumerate(rules):
            self._rules[r].kind = rule.kind
            self._rules[r].n_splits = len(rule.splits)
            for s, split in enumerate(rule.splits):
                for q in range(4):
                    self._rules[r].split[s][q] = split[q]
            self._rules[r].n_parts = len(rule.parts)
            assert len(rule.parts) <= MAX_PARTS
            for p, (kind, a, b, x) in enumerate(rule.parts):
                values = (kind, a[0], a[1], b[0], b[1], -1 if x is None else x)
                for q in range(6):
                    self._rules[r].part[p][q] = values[q]
                moves = R.X in (a[0], b[0], x)
                self._rules[r].moves[p] = moves
                if R.X_N <= rule.kind < R.X_N + R.N_STORED_TRIPLE:
                    # What fill_side can read.
                    assert kind == R.EDGE or (kind < R.N_STORED_PAIR and not moves) or (
                        R.X_N <= kind < R.X_N + R.N_STORED_TRIPLE and a[0] != R.X != b[0])
            if R.X_N <= rule.kind < R.X_N + R.N_STORED_TRIPLE:
                assert sum(R.X in (a[0], b[0], x) for kind, a, b, x in rule.parts) <= 2
            for o in range(2):
                table = numpy.asarray(rule.combos[o], dtype=numpy.int32).reshape(
                    -1, len(rule.parts) + 1)
                for q in range(len(rule.parts)):
                    need = sorted({int(state) for state in table[:, q]})
                    self._rules[r].need[o][q][0] = len(need)
                    for t, state in enumerate(need):
                        self._rules[r].need[o][q][t + 1] = state
                    self._rules[r].need_mask[o][q] = sum(1 << state for state in need)
                self._rules[r].group_last[o] = NULL
                if R.X_N <= rule.kind < R.X_N + R.N_STORED_TRIPLE:
                    # fill_side: rows that differ only in the fixed parts' states
                    # are neighbours, so it takes their best fixed sum and runs
                    # one loop over x for them.
                    moving = [q for q, part in enumerate(rule.parts)
                              if R.X in (part[1][0], part[2][0], part[3])]
                    keys = [tuple(row[q] for q in moving) + (row[len(rule.parts)],)
                            for row in table]
                    order = sorted(range(len(keys)), key=lambda t: keys[t])
                    table = table[order]
                    keys = [keys[t] for t in order]
                    last = numpy.asarray([int(t + 1 == len(keys) or keys[t + 1] != keys[t])
                                          for t in range(len(keys))], dtype=numpy.int32)
                    self._combos.append(last)
                    if last.size:
                        self._rules[r].group_last[o] = int_data(last)
                table = numpy.ascontiguousarray(table)
                self._combos.append(table)
                self._rules[r].combos[o] = int_data(table.reshape(-1)) if table.size else NULL
                self._rules[r].n_combos[o] = table.shape[0]
                n_first = R.N_PAIR_STATES if rule.parts[0][0] in R.PAIR_KINDS \
                    else R.N_TRIPLE_STATES
                self._rules[r].n_first_states = n_first
                if rule.kind < R.N_STORED_PAIR:
                    # apply_rows (pairs): rows grouped by the first part's state.
                    column = table[:, 0]
                    assert (numpy.diff(column) >= 0).all()
                    for state in range(n_first + 1):
                        self._rules[r].first[o][state] = int(numpy.searchsorted(column, state))
        self._first = numpy.asarray(first, dtype=numpy.int32)
        self._plan_two_split(rules)
        # A triple kind stores the states it can reach on the sides it is
        # stored (the chains reach half of them); unpruned, all of them.
        assert len(R.KIND_NAMES) <= MAX_KINDS
        built = {rule.kind for rule in rules}
        for kind in range(len(R.KIND_NAMES)):
            self.c.stored[kind] = kind in built
            self.c.kind_side[kind] = (1 if kind in R.RIGHT_ONLY
                                      else -1 if kind in R.LEFT_ONLY else 0)
        # The layouts: every block stored but those computed where read in
        # any case, and over the limit, without some of the _optional blocks.
        self._full_derived = frozenset(_derived_sides(rules, False))
        optional = _derived_sides(rules, True) - self._full_derived
        self._optional = [block for block in STORE_FIRST if block in optional] + sorted(
            optional - set(STORE_FIRST))
        self._set_layout(self._full_derived)
        possible = R.possible_states(rule_set) if prune else None
        for kind in range(R.X_N, R.X_N + R.N_STORED_TRIPLE):
            stored = set(range(R.N_TRIPLE_STATES)) if kind in built else set()
            if prune:
                stored = ((set() if kind in R.LEFT_ONLY else possible[kind, 1])
                          | (set() if kind in R.RIGHT_ONLY else possible[kind, 0]))
            self.c.n_rows[kind] = len(stored)
            for s in range(MAX_STATES):
                self.c.row_of[kind][s] = sorted(stored).index(s) if s in stored else -1
        n_states = [R.N_PAIR_STATES if k in R.PAIR_KINDS else R.N_TRIPLE_STATES
                    for k in range(len(R.KIND_NAMES))]
        self._n_states = numpy.asarray(n_states, dtype=numpy.int32)
        self.c.rules = self._rules
        self.c.n_rules = len(rules)
        self.c.first_rule = int_data(self._first)
        self.c.n_states_of = int_data(self._n_states)
        self.c.pair_separate = R.SEPARATE
        self.c.pair_left = R.LEFT_TOP
        self.c.pair_right = R.RIGHT_TOP
        self._pair = numpy.zeros(0)
        self._triple = numpy.zeros(0)
        self._inner = numpy.zeros(0)
        self._partial = numpy.zeros(0)
        self._gather = numpy.zeros(0)
        self._memo_key = numpy.empty(MEMO_SLOTS, dtype=numpy.longlong)
        self._memo_values = numpy.empty(MEMO_SLOTS * MAX_STATES, dtype=numpy.float32)

    def _plan_two_split(self, rules):
        """Where each part of a rule with two split points reads its values
        over p (two_split_partial, vectorised_two_split), the inner-point
        copies that needs, and the rule's groups of rows: the edge is fixed,
        the other parts move with p by one slot."""
        inner = {}              # (kind, side) -> states read, in order of first use
        self._two_split = []    # (rule, its number of groups)
        two_split_rule = []
        for r, rule in enumerate(rules):
            if len(rule.splits) != 2:
                continue
            # two_split_partial sums the first three parts for every j: only
            # the last part may depend on j.
            assert rule.kind in (R.INT0, R.REG) and len(rule.parts) == 4
            two_split_rule.append(r)
            assert all(R.J not in (a[0], b[0], x) for kind, a, b, x in rule.parts[:3])
            self._rules[r].two_index = len(self._two_split)
            groups = sorted({(row[3], row[4]) for row in rule.combos[0]})
            self._two_split.append((rule, len(groups)))
            assert len(groups) <= MAX_GROUPS
            self._rules[r].n_groups = len(groups)
            for g, (last, result) in enumerate(groups):
                self._rules[r].group_last_state[g] = last
                self._rules[r].group_result[g] = result
            row_group = numpy.asarray([groups.index((row[3], row[4])) for row in rule.combos[0]],
                                      dtype=numpy.int32)
            self._combos.append(row_group)
            self._rules[r].row_group = int_data(row_group) if row_group.size else NULL
            for q, (kind, a, b, x) in enumerate(rule.parts):
                self._rules[r].inner[q] = -1
                reads = {row[q] for row in rule.combos[0]}
                if kind == R.EDGE:
                    assert q == 0 and R.P not in (a[0], b[0])
                    self._rules[r].src[q] = SRC_FIXED_EDGE
                elif x == R.P:
                    self._rules[r].src[q] = SRC_BLOCK_X
                elif q < 3:
                    assert kind != R.EDGE and R.P in (a[0], b[0])
                    self._rules[r].src[q] = SRC_GATHER
                else:
                    assert R.X_N <= kind < R.X_N + R.N_STORED_TRIPLE and R.P in (a[0], b[0])
                    assert a[1] == b[1] == 0 and kind not in R.RIGHT_ONLY
                    side = int(b[0] == R.P)     # p the right end: x right of the item
                    inner.setdefault((kind, side), set()).update(reads)
                    self._rules[r].src[q] = SRC_INNER
                    self._rules[r].inner[q] = list(inner).index((kind, side))
        assert len(inner) <= MAX_INNER
        self._two_split_rule = numpy.asarray(two_split_rule + [0], dtype=numpy.int32)
        self.c.two_split_rule = int_data(self._two_split_rule)
        self.c.n_two_split = len(two_split_rule)
        order = list(inner)
        self.c.n_inner = len(order)
        for ic, (kind, side) in enumerate(order):
            kept = sorted(inner[kind, side])
            self.c.inner_kind[ic] = kind
            self.c.inner_side[ic] = side
            self.c.inner_rows[ic] = len(kept)
            for s in range(MAX_STATES):
                self.c.inner_row_of[ic][s] = kept.index(s) if s in kept else -1

    def _block_sides(self, derived):
        """By kind, the sides stored as blocks when the (kind, side) in
        `derived` are computed where read: 0 both, -1 left, 1 right, 2 none."""
        block_side = []
        for kind in range(len(R.KIND_NAMES)):
            blocks = {side for side in (0, 1) if (kind, side) not in derived
                      and self.c.kind_side[kind] != (1, -1)[side]}
            block_side.append(0 if blocks == {0, 1} else -1 if blocks == {0}
                              else 1 if blocks == {1} else 2)
        return block_side

    def _set_layout(self, derived):
        """Which sides of which kinds have blocks (ChartC.derived, block_side)."""
        self._derived = frozenset(derived)
        block_side = self._block_sides(derived)
        for kind in range(len(R.KIND_NAMES)):
            for side in (0, 1):
                self.c.derived[kind][side] = (kind, side) in derived
            self.c.block_side[kind] = block_side[kind]

    @property
    def over_p(self):
        """Whether the last sentence passed the memory limit: some blocks
        were computed where read (computed_blocks)."""
        return self._derived != self._full_derived

    @property
    def computed_blocks(self):
        """The blocks of the last sentence computed where read because of
        the memory limit: "kind:side" (0 left, 1 right of the item)."""
        return sorted(f"{R.KIND_NAMES[kind]}:{side}"
                      for kind, side in self._derived - self._full_derived)

    def __dealloc__(self):
        if self._rules != NULL:
            free(self._rules)

    @property
    def buffer_bytes(self) -> int:
        return int(self._pair.nbytes + self._triple.nbytes + self._inner.nbytes
                   + self._partial.nbytes)

    def decode(self, arc_scores):
        """(score, heads): the best 1EC tree with one root arc under
        arc_scores, float (n+1, n+1) [head, dep] over positions 0..n (0 the
        root; column 0 is not read). heads: int32 (n,), 1-based (0 = root).
        Scores must be finite or -inf (forbidding the arc, as long as some
        tree remains finite)."""
        arcs = _checked_arcs(arc_scores)
        N = arcs.shape[0]
        n = N - 1
        if n == 1:
            return float(arcs[0, 1]), numpy.zeros(1, dtype=numpy.int32)
        # One root arc: a penalty on every root arc larger than any difference
        # of two trees' scores (each word's best head against its worst).
        finite = numpy.isfinite(arcs)
        if not finite[:, 1:].any(axis=0).all():
            raise ValueError("every word needs a head with a finite score")
        masked = numpy.where(finite, arcs, numpy.nan)[:, 1:]
        spread = numpy.nanmax(masked, axis=0) - numpy.nanmin(masked, axis=0)
        penalty = 1.0 + float(spread.sum())
        arcs[0, 1:] -= penalty
        self._fill(arcs)
        top_state = R.LEFT_TOP
        score = self._pair_value(R.INT, 0, n, top_state)
        if not score > -numpy.inf:
            raise ValueError("no 1-Endpoint-Crossing tree has a finite score")
        heads = numpy.full(n, -1, dtype=numpy.int32)
        self._trace(R.INT, 0, n, -1, top_state, score, heads)
        total = float(numpy.asarray(arc_scores, dtype=numpy.float64)[
            heads, numpy.arange(1, n + 1)].sum())
        return total, heads

    def fill(self, arc_scores):
        """Fills every item under arc_scores as they are, float (n+1, n+1)
        [head, dep], -inf where an arc is not allowed (column 0, the root,
        is not read), without decode's one-root penalty: for item_values
        (the third-order chart reads its REG items so)."""
        self._fill(_checked_arcs(arc_scores))

    def _fill(self, arcs):
        N = arcs.shape[0]
        self._prepare(N)
        arcs32 = arcs.astype(numpy.float32)
        arcs_t = numpy.ascontiguousarray(arcs32.T)
        self._arc = (arcs32, arcs_t)
        cdef float[:, ::1] arc_view = arcs32
        cdef float[:, ::1] arc_t_view = arcs_t
        self.c.arc = &arc_view[0, 0]
        self.c.arc_t = &arc_t_view[0, 0]
        side_best = numpy.empty(N * MAX_STATES, dtype=numpy.float32)
        cdef float[::1] side_view = side_best
        with nogil:
            fill(&self.c, &side_view[0])

    def _prepare(self, int N):
        cdef int a, b
        self.c.n = N - 1
        self.c.N = N
        offset = numpy.zeros(N * N, dtype=numpy.longlong)
        offset_right = numpy.zeros(N * N, dtype=numpy.longlong)
        offset_left = numpy.zeros(N * N, dtype=numpy.longlong)
        t = t_right = t_left = 0
        for a in range(N):
            for b in range(a + 1, N):
                offset[a * N + b] = t
                offset_right[a * N + b] = t_right
                offset_left[a * N + b] = t_left
                t += N - (b - a + 1)
                t_right += N - 1 - b
                t_left += a
        self._offset = (offset, offset_right, offset_left)
        cdef long long[::1] offset_view = offset
        cdef long long[::1] offset_right_view = offset_right
        cdef long long[::1] offset_left_view = offset_left
        self.c.offset = &offset_view[0]
        self.c.offset_right = &offset_right_view[0]
        self.c.offset_left = &offset_left_view[0]
        slots = {0: t, 1: t_right, -1: t_left}
        # The pair kinds up to Q, and Q_NE and REG with the regions.
        n_pair = R.N_STORED_PAIR if self.regions else R.Q + 1
        if self._pair.size < n_pair * N * N * 3:
            self._pair = numpy.empty(n_pair * N * N * 3, dtype=numpy.float32)
        cdef float[::1] pair = self._pair
        self.c.pair = &pair[0]
        other_bytes = 4 * n_pair * N * N * 3
        # The two-split rules' inner-point copies, with blocks (lo, hi) of
        # hi - lo - 1 slots.
        offset_inner = numpy.zeros(N * N, dtype=numpy.longlong)
        t = 0
        for a in range(N):
            for b in range(a + 2, N):
                offset_inner[a * N + b] = t
                t += b - a - 1
        cdef long long[::1] offset_inner_view = offset_inner
        self.c.offset_inner = &offset_inner_view[0]
        self._offset = self._offset + (offset_inner,)
        size = max(1, t * sum(self.c.inner_rows[ic] for ic in range(self.c.n_inner)))
        other_bytes += 4 * size
        if self._inner.size < size:
            self._inner = numpy.empty(size, dtype=numpy.float32)
        cdef float[::1] inner = self._inner
        cdef long long at = 0
        for ic in range(self.c.n_inner):
            self.c.inner_data[ic] = &inner[at]
            at += t * self.c.inner_rows[ic]
        # The two-split rules' partial sums (one i at a time): for each rule
        # and k, a row per group over the p of any i and j (i = 0, j = n).
        partial_off = numpy.zeros(max(1, len(self._two_split)) * N, dtype=numpy.longlong)
        partial_p0 = numpy.zeros(max(1, len(self._two_split)) * N, dtype=numpy.int32)
        partial_len = numpy.zeros(max(1, len(self._two_split)) * N, dtype=numpy.int32)
        size = 0
        for r, (rule, n_groups) in enumerate(self._two_split):
            lo_sym, lo_off, hi_sym, hi_off = rule.splits[1]
            for k in range(N):
                at_symbol = {R.I: 0, R.J: N - 1, R.K: k}
                p0 = at_symbol[lo_sym] + lo_off
                partial_off[r * N + k] = size
                partial_p0[r * N + k] = p0
                partial_len[r * N + k] = max(0, at_symbol[hi_sym] + hi_off - p0 + 1)
                size += n_groups * partial_len[r * N + k]
        other_bytes += 4 * size
        if self._partial.size < max(1, size):
            self._partial = numpy.empty(max(1, size), dtype=numpy.float32)
        self._offset = self._offset + (partial_off, partial_p0, partial_len)
        cdef float[::1] partial = self._partial
        cdef long long[::1] partial_off_view = partial_off
        cdef int[::1] partial_p0_view = partial_p0
        cdef int[::1] partial_len_view = partial_len
        self.c.partial = &partial[0]
        if self._gather.size < (MAX_PARTS + 2) * MAX_STATES * N:
            self._gather = numpy.empty((MAX_PARTS + 2) * MAX_STATES * N, dtype=numpy.float32)
        cdef float[::1] gather = self._gather
        self.c.gather = &gather[0]
        self.c.derived_rows[0] = &gather[MAX_PARTS * MAX_STATES * N]
        self.c.derived_rows[1] = &gather[(MAX_PARTS + 1) * MAX_STATES * N]
        self._memo_key[:] = -1      # a new sentence
        cdef long long[::1] memo_key = self._memo_key
        cdef float[::1] memo_values = self._memo_values
        self.c.memo_key = &memo_key[0]
        self.c.memo_values = &memo_values[0]
        self.c.partial_off = &partial_off_view[0]
        self.c.partial_p0 = &partial_p0_view[0]
        self.c.partial_len = &partial_len_view[0]
        # The blocks: all of them if they fit memory_limit with the rest,
        # else without the optional ones but as many as fit, in their order.
        derived = set(self._full_derived)
        if self.memory_limit is not None and \
                other_bytes + 4 * self._triple_size(slots, derived)[0] > self.memory_limit:
            derived.update(self._optional)
            for block in self._optional:
                if other_bytes + 4 * self._triple_size(slots, derived - {block})[0] \
                        <= self.memory_limit:
                    derived.discard(block)
        self._set_layout(derived)
        size, base = self._triple_size(slots, derived)
        for kind in range(R.X_N, R.X_N + R.N_STORED_TRIPLE):
            self.c.kind_base[kind] = base[kind - R.X_N]
        if self._triple.size < max(1, size):
            self._triple = numpy.empty(max(1, size), dtype=numpy.float32)
        cdef float[::1] triple = self._triple
        self.c.triple = &triple[0]

    def _triple_size(self, slots, derived):
        """The blocks' float count in a layout (the blocks computed where
        read), and the first float of each stored triple kind's (kind_base)."""
        block_side = self._block_sides(derived)
        size, base = 0, []
        for kind in range(R.X_N, R.X_N + R.N_STORED_TRIPLE):
            base.append(size)
            if block_side[kind] != 2:
                size += slots[block_side[kind]] * self.c.n_rows[kind]
        return size, base

    def item_values(self, int kind, int a, int b, int x=-1):
        """The values by state of a stored item of the last sentence decoded
        (for tests): kind INT/INT0/Q over [a, b], or a stored triple kind
        over [a, b] with exterior point x."""
        if not 0 <= a < b <= self.c.n or (kind >= R.X_N and not (x < a or x > b)):
            raise ValueError(f"no item {R.KIND_NAMES[kind]} [{a}, {b}; {x}]")
        if not (0 <= kind < R.X_N + R.N_STORED_TRIPLE and self.c.stored[kind]) or (
                x < a and kind in R.RIGHT_ONLY) or (x > b and kind in R.LEFT_ONLY):
            raise ValueError(f"{R.KIND_NAMES[kind]} [{a}, {b}; {x}] is not stored")
        if kind < R.N_STORED_PAIR:
            return [self._pair_value(kind, a, b, s) for s in range(R.N_PAIR_STATES)]
        cdef float values[MAX_STATES]
        part_values(&self.c, kind, a, b, x, values)
        return [values[s] for s in range(R.N_TRIPLE_STATES)]

    def pair_values(self, int kind, int N):
        """The values by state of pair kind `kind` over every [a, b], a < b,
        of the last fill over positions 0..N-1: a (N, N, 3) float32 view
        (entries with a >= b are not set)."""
        if not (0 <= kind < R.N_STORED_PAIR and self.c.stored[kind]) or N != self.c.N:
            raise ValueError(f"no {R.KIND_NAMES[kind]} items over {N} positions")
        return self._pair[kind * N * N * 3:(kind + 1) * N * N * 3].reshape(N, N, 3)

    def _pair_value(self, int kind, int a, int b, int s):
        return self.c.pair[((kind * self.c.N + a) * self.c.N + b) * 3 + s]

    def _trace(self, int kind, int a, int b, int x, int state, float value, heads):
        """Writes the arcs of the item's best derivation in `state` to heads."""
        cdef Found found
        cdef int p, n_found
        stack = [(kind, a, b, x, state, value)]
        while stack:
            kind, a, b, x, state, value = stack.pop()
            if kind == R.EDGE:
                h, d = (a, b) if state == R.LEFT_TOP else (b, a)
                heads[d - 1] = h
                continue
            if kind == R.INT0 and b == a + 1:
                continue            # the base item: no edge
            n_found = evaluate(&self.c, kind, a, b, x, NULL, state, value, &found)
            if not n_found:
                raise RuntimeError(f"1EC chart: no derivation of {R.KIND_NAMES[kind]} "
                                   f"[{a}, {b}; {x}] in state {state}")
            for p in range(found.n_parts):
                stack.append((found.kind[p], found.a[p], found.b[p], found.x[p],
                              found.state[p], found.value[p]))
