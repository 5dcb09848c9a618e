from .base cimport StateC, GoldC, TransitionSystem


# Move kinds of swap_lazy, in move-table order: S, W, L-<label>..., R-<label>...
cdef enum:
    LAZY_SHIFT = 0
    LAZY_SWAP = 1
    LAZY_LEFT_ARC = 2
    LAZY_RIGHT_ARC = 3
    LAZY_KINDS = 4


# Move kinds of swap_stay_eager, in move-table order:
# S, D, W, U, RR, SL-<label>..., SR-<label>...
cdef enum:
    SES_SHIFT = 0
    SES_REDUCE = 1
    SES_SWAP = 2
    SES_UNSHIFT = 3
    SES_RIGHT_ROOT = 4
    SES_STAY_LEFT = 5
    SES_STAY_RIGHT = 6
    SES_KINDS = 7


cdef class SwapSystem(TransitionSystem):
    # What both swap systems share: the configuration with node 0 on the
    # stack, the end, gold facts, context and finish.
    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil


cdef class SwapLazy(SwapSystem):
    pass


cdef class StayEagerSwap(SwapSystem):
    cdef bint nonstatic
    cdef bint wide_context
    cdef double shift_probability
    cdef double root_shift_probability
    cdef unsigned long long rng_state
    cdef double draw(self) noexcept nogil
    cdef bint is_cross(self, const StateC* s, const GoldC* gold) noexcept nogil
    cdef bint shift_is_safe(self, const StateC* s, const GoldC* gold) noexcept nogil
