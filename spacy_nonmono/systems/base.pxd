from cymem.cymem cimport Pool

# Cost given to invalid moves; any valid move costs less.
cdef enum:
    INVALID_COST = 9000


cdef struct StateC:
    # A parser configuration. Words are 1..n, node 0 is the artificial root.
    int n
    int* heads          # heads[k] for k in 0..n; -1 = no head (heads[0] is always -1)
    int* labels         # label id of the arc into k; -1 = none
    int i               # Covington: left focus word (-1 = lambda_1 empty)
    int j               # Covington: right focus word (n+1 = buffer empty)
    int* stack          # working list for stack-based systems (n+1 ints)
    int stack_len
    int offset          # global row of word 1 in the batch's token table
    int root_id         # global row of the root vector in the token table


cdef struct GoldC:
    int n
    int* heads          # gold heads, heads[0] = -1, heads[k] in 0..n
    int* labels         # gold label ids (may be -1 when the label is unknown)


cdef StateC* alloc_state(Pool mem, int n) except NULL
cdef void copy_state(StateC* dst, const StateC* src) noexcept nogil
cdef int token_row(const StateC* s, int k) noexcept nogil


cdef class TransitionSystem:
    cdef readonly int n_moves
    cdef readonly int n_context
    cdef readonly int n_labels
    cdef readonly str oracle
    cdef readonly str loss_name
    cdef bint static_oracle
    cdef readonly list labels
    cdef readonly dict label_ids

    cdef void init_state(self, StateC* s) noexcept nogil
    cdef bint is_final(self, const StateC* s) noexcept nogil
    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil
    cdef void apply(self, StateC* s, int move) noexcept nogil
    cdef int loss(self, const StateC* s, const GoldC* gold) noexcept nogil
    cdef void set_costs(self, const StateC* s, const GoldC* gold, int* is_valid,
                        float* costs) noexcept nogil
    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil
    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil
    cdef void finish(self, StateC* s) noexcept nogil
    cdef void set_oracle_costs(self, const StateC* s, const GoldC* gold,
                               int* is_valid, float* costs) noexcept nogil


cdef class ParseState:
    cdef Pool mem
    cdef StateC* c
    cdef GoldC* gold
    cdef readonly TransitionSystem system
    cdef readonly bint has_gold
    cdef object _gold_owner   # keeps the Pool that owns `gold` alive in copies


cdef ParseState wrap_state(TransitionSystem system, const StateC* s, const GoldC* gold)
