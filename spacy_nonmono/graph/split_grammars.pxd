"""Weighted parsing with split context-free grammars (Nederhof 2019, Table 2):
the generic cubic tabular algorithm behind optimal projectivization (the
grammar of Table 3) and the optimal step of shift-reduce parsing (the grammar
of Table 4). See split_grammars.pyx."""

cdef enum:
    # The zero of the max-plus semiring (-infinity); sums of a few of these
    # stay far below any real score and far above INT_MIN.
    NEG_SCORE = -100000000
    MAX_STATES = 4
    MAX_TUPLES = 16


cdef struct Grammar:
    # A split grammar, in the form the tabular algorithm reads. Left states
    # N_l, right states N_r and complete symbols N are small ints.
    int n_left
    int n_right
    int n_terminals
    int init_left[MAX_STATES]       # terminal a: (B, C) -> a gives B ...
    int init_right[MAX_STATES]      # ... and C
    # Left attachment joined with the child's completion: (C', D, B, C) for
    # (C', ) -> A (C, ) and A -> (D, B): a node in left state C takes a
    # left child whose left and right states ended in D and B, and moves to C'.
    int n_left_tuples
    int left_tuples[MAX_TUPLES][4]
    # Right attachment likewise: (B', B, C, D) for ( , B') -> ( , B) A and
    # A -> (C, D).
    int n_right_tuples
    int right_tuples[MAX_TUPLES][4]
    # The start rules S -> (B, C): (B, C) pairs.
    int n_start
    int start[MAX_STATES][2]
    # Derived (`finish_grammar`): the tuples grouped by (state after, the
    # child's outer state), so that each group's incomplete items are maxed
    # once per position pair and its attachments scan the split points once;
    # and which states can cover more than their own position (the others
    # are only ever initial states: their items need no split scan).
    int n_left_groups
    int left_groups[MAX_TUPLES][2]
    int left_group_of[MAX_TUPLES]
    int n_right_groups
    int right_groups[MAX_TUPLES][2]
    int right_group_of[MAX_TUPLES]
    bint left_spans[MAX_STATES]
    bint right_spans[MAX_STATES]


cdef struct ShiftReduceConfig:
    # A shift-reduce configuration as the optimal-step algorithms read it:
    # positions 0..last hold node ids c_0..c_last (c_0 = 0, the artificial
    # root); positions 0..top are the stack (top last), top+1..last the
    # remaining input. The weight of a possible edge c_i -> c_j
    # (`edge_weight`) is 1 if it is gold, 0 if not, NEG_SCORE if the
    # strategy forbids it. Node 0 has no child yet and takes exactly one,
    # by the computation's last step (single-rooted trees).
    const int* nodes
    int last
    int top
    const int* gold_heads       # by node id; gold_heads[0] = -1
    int no_left_below           # positions i < no_left_below take no left child
    int no_left                 # a position that takes no left child (-1: none)
    int no_right                # a position that takes no right child (-1: none)


cdef inline int edge_weight(const ShiftReduceConfig* c, int i, int j) noexcept nogil:
    """w(i, j) for the edge c_i -> c_j (parent i, child j)."""
    if j == 0:
        return NEG_SCORE
    if j < i:
        if i < c.no_left_below or i == c.no_left:
            return NEG_SCORE
    elif i == c.no_right:
        return NEG_SCORE
    return 1 if c.gold_heads[c.nodes[j]] == c.nodes[i] else 0


from cymem.cymem cimport Pool


cdef ShiftReduceConfig config_from_python(Pool mem, stack, buffer, gold_heads,
                                           int no_left_below, int no_left,
                                           int no_right) except *
cdef int tabular_scratch_size(const Grammar* g, int length) noexcept nogil
cdef int best_single_rooted(const Grammar* g, const int* terminals, int length,
                            const int* weights, const int* root_weights, int* tables,
                            double* counts, double* n_best, int* root) noexcept nogil

# The optimal step's O(n^3) algorithm (section 4): the most gold edges any
# computation from the configuration to the final one adds, or NEG_SCORE if
# the strategy leaves none. `scratch`: config_scratch_size(last + 1) ints.
cdef int config_scratch_size(int length) noexcept nogil
cdef int config_score_cubic(const ShiftReduceConfig* c, int* scratch) noexcept nogil
