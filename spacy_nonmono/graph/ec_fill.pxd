"""The 1EC chart's C structures and its nogil kernels (`ec_fill.pyx`),
shared with the chart that plans and reads them (`ec_chart.pyx`)."""

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


cdef void fill(ChartC* c, float* side_best) noexcept nogil
cdef int evaluate(const ChartC* c, int kind, int i, int j, int x, float* best,
                  int find_state, float find_value, Found* found) noexcept nogil
cdef void item_values(const ChartC* c, int kind, int a, int b, int x,
                      float* out) noexcept nogil
