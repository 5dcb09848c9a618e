# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The nogil kernels of the first-order 1EC chart (`ec_chart.pyx`): filling
every stored item from the compiled rules (`fill`), and re-deriving one
item's candidates (`evaluate`, which the chart's trace reads back with).
The structures they work on, and the constants, are in `ec_fill.pxd`.

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
"""
from libc.math cimport INFINITY
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

cdef int K_INT = R.INT, K_INT0 = R.INT0, K_Q = R.Q, K_Q_NE = R.Q_NE, K_REG = R.REG
cdef int K_X_N = R.X_N, K_EDGE = R.EDGE
cdef int N_PAIR_STORED = R.N_STORED_PAIR, N_TRIPLE_STORED = R.N_STORED_TRIPLE
cdef int SYM_I = R.I, SYM_J = R.J, SYM_X = R.X


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


cdef void item_values(const ChartC* c, int kind, int a, int b, int x,
                      float* out) noexcept nogil:
    """part_values for the chart's Python side (its inline copy stays in the kernels)."""
    part_values(c, kind, a, b, x, out)
