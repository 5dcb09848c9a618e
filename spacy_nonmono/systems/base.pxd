from cymem.cymem cimport Pool

# Cost given to invalid moves; any valid move costs less.
cdef enum:
    INVALID_COST = 9000
    # Most move kinds a system may declare (loss_deltas fills one int per
    # kind, kept on the caller's stack).
    MAX_KINDS = 16
    # `loss_of`'s variant for the system's own loss expression (`loss`).
    OWN_LOSS = -1


cdef struct MoveC:
    # One row of a system's move table: a kind of the system's own
    # (Covington: Shift, No-Arc, Left-Arc, Right-Arc) and a label id, -1 for
    # unlabelled kinds.
    int kind
    int label


cdef struct StateC:
    # A parser configuration. Words are 1..n, node 0 is the artificial root.
    # The arcs are common to every system; everything else a system keeps
    # (Covington's focus words, a stack and buffer, flags) lives in `data`,
    # `n_data` ints laid out by the system (see `state_size`), so one copy
    # routine serves every system.
    int n
    int* heads          # heads[k] for k in 0..n; -1 = no head (heads[0] is always -1)
    int* labels         # label id of the arc into k; -1 = none
    int* data
    int n_data
    int offset          # global row of word 1 in the batch's token table
    int root_id         # global row of the root vector in the token table


cdef struct GoldC:
    # A gold tree and whatever the system's oracle precomputes from it once
    # per sentence (`init_gold`); nothing outside the system reads `extra`.
    int n
    int* heads          # gold heads, heads[0] = -1, heads[k] in 0..n
    int* labels         # gold label ids (-1 when the label is unknown)
    void* extra


cdef StateC* alloc_state(Pool mem, int n, int n_data) except NULL
cdef void copy_state(StateC* dst, const StateC* src) noexcept nogil
cdef int token_row(const StateC* s, int k) noexcept nogil
cdef int label_error(const GoldC* gold, int head, int dep, int label) noexcept nogil


cdef class TransitionSystem:
    cdef Pool mem
    cdef MoveC* c_moves         # the move table, n_moves rows
    cdef int* kind_first        # per kind, the id of its first move
    cdef int n_kinds
    cdef readonly int n_moves
    cdef readonly int n_context
    cdef readonly int n_labels
    cdef readonly str oracle
    cdef readonly dict options
    cdef bint static_oracle
    cdef readonly list labels
    cdef readonly dict label_ids

    cdef StateC* create_state(self, Pool mem, int n) except NULL
    cdef GoldC* create_gold(self, Pool mem, int n, const int* heads, const int* labels) except NULL

    # -- what each system defines ------------------------------------------
    cdef int state_size(self, int n) noexcept nogil
    cdef int move_limit(self, int n) noexcept nogil
    cdef int scratch_size(self, int n) noexcept nogil
    cdef int init_gold(self, Pool mem, GoldC* gold) except -1
    cdef void init_state(self, StateC* s) noexcept nogil
    cdef bint is_final(self, const StateC* s) noexcept nogil
    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil
    cdef void apply(self, StateC* s, int move) noexcept nogil
    cdef void apply_scored(self, StateC* s, int move, const float* scores) noexcept nogil
    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil
    cdef int loss_of(self, const StateC* s, const GoldC* gold, int variant,
                     int* scratch) noexcept nogil
    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* losses, int* scratch) noexcept nogil
    cdef void adjust_targets(self, const StateC* s, const GoldC* gold, const int* is_valid,
                             float* costs, int* scratch) noexcept nogil
    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil
    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil
    cdef void finish(self, StateC* s) noexcept nogil

    # -- shared ----------------------------------------------------------------
    cdef int move_of(self, int kind, int label) noexcept nogil
    cdef void set_valid_by_kind(self, const bint* kind_valid, int* is_valid) noexcept nogil
    cdef void set_oracle_costs(self, const StateC* s, const GoldC* gold,
                               int* is_valid, float* costs, int* scratch) noexcept nogil
    cdef void set_oracle_losses(self, const StateC* s, const GoldC* gold,
                                int* is_valid, float* losses, int* scratch) noexcept nogil
    cdef void set_static_costs(self, const StateC* s, const GoldC* gold,
                               int* is_valid, float* costs) noexcept nogil
    cdef void loss_deltas(self, const StateC* s, const GoldC* gold, const int* is_valid,
                          int variant, int* delta, int* loss_scratch, int* state_scratch,
                          int left_arc, int right_arc, int a, int b) noexcept nogil
    cdef void set_costs_from_deltas(self, const GoldC* gold, const int* is_valid,
                                    const int* delta, float* costs, int left_arc, int right_arc,
                                    int a, int b) noexcept nogil
    cdef void set_costs_from_loss(self, const StateC* s, const GoldC* gold, const int* is_valid,
                                  float* costs, int* loss_scratch, int* state_scratch,
                                  int left_arc, int right_arc, int a, int b) noexcept nogil


cdef class ParseState:
    cdef Pool mem
    cdef StateC* c
    cdef GoldC* gold
    cdef int* scratch
    cdef readonly TransitionSystem system
    cdef readonly bint has_gold
    cdef object _gold_owner   # keeps the Pool that owns `gold` alive in copies


cdef ParseState wrap_state(TransitionSystem system, const StateC* s, const GoldC* gold)
