from .base cimport StateC, GoldC, TransitionSystem


# Move kinds, in move-table order. mh3 has the first three (S, LA-<label>...,
# RA-<label>...), mh4 all seven.
cdef enum:
    MH_SHIFT = 0
    MH_LA = 1           # la:   b0 -> s0, pop s0
    MH_RA = 2           # ra:   s1 -> s0, pop s0
    MH_LA1 = 3          # la':  s0 -> s1, remove s1
    MH_RA1 = 4          # ra':  s2 -> s1, remove s1
    MH_LA2 = 5          # la2:  b0 -> s1, remove s1
    MH_RA2 = 6          # ra2:  s2 -> s0, pop s0
    MH_KINDS = 7


cdef class ArcHybrid(TransitionSystem):
    # mh3 (arc-hybrid) and, with the four extra reduces, mh4.
    cdef bint four_heads
    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil
    cdef void arc_of(self, const StateC* s, int kind, int* head, int* dep) noexcept nogil
    cdef bint dependents_done(self, const StateC* s, const GoldC* gold, int d) noexcept nogil
    cdef int gold_move(self, const StateC* s, const GoldC* gold, int kind) noexcept nogil
    cdef int kind_delta(self, const StateC* s, const GoldC* gold, int kind, int base,
                        int* scratch) noexcept nogil
    cdef void apply_kind(self, StateC* s, int kind, int label) noexcept nogil


cdef class MH3(ArcHybrid):
    pass


cdef class MH4(ArcHybrid):
    pass
