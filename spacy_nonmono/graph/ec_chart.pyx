# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The first-order 1-Endpoint-Crossing chart: the best tree with one root arc
among the 1EC trees (Pitler, Kannan & Marcus 2013) under arc scores.

The deduction system is data (`ec_rules.py`: item kinds, rules, and the
connectivity-state table of each rule); this module compiles it into C
structures and plans the chart's memory, the kernels of `ec_fill.pyx` fill
the chart by interpreting it, nogil, in order of span, and the chart reads
the best tree back by re-deriving each item on the way down (no back-pointers are stored: each
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

Time and memory by length: docs/results/one_ec/README.md, hence the length
guard of `1ec_arcs`. An ``EcChart`` keeps its buffers and grows them only
for a longer sentence.
"""
import numpy
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from .ec_fill cimport (MAX_GROUPS, MAX_INNER, MAX_KINDS, MAX_PARTS, MAX_RULES, MAX_STATES,
                       MEMO_SLOTS, SRC_BLOCK_X, SRC_FIXED_EDGE, SRC_GATHER, SRC_INNER,
                       ChartC, Found, RuleC, evaluate, fill, item_values)

from . import ec_rules as R


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
        item_values(&self.c, kind, a, b, x, values)
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
