from .base cimport StateC, GoldC, TransitionSystem


# Move kinds, in move-table order: S, N, L-<label>..., R-<label>...
cdef enum:
    SHIFT = 0
    NO_ARC = 1
    LEFT_ARC = 2
    RIGHT_ARC = 3
    N_KINDS = 4


cdef struct Focus:
    # Covington's configuration beyond the arcs: lambda1 = [0..i],
    # lambda2 = [i+1..j-1], B = [j..n]. Lives in StateC.data.
    int i               # left focus word (-1 = lambda1 empty)
    int j               # right focus word (n+1 = buffer empty)


cdef inline Focus* focus(const StateC* s) noexcept nogil:
    return <Focus*>s.data


cdef enum TieBreak:
    TIE_NONE = 0
    TIE_SHIFT = 1
    TIE_SHIFT_IF_HEADED = 2
    TIE_WEIGHTED = 3


cdef bint root_has_dependent(const StateC* s) noexcept nogil


cdef class Covington(TransitionSystem):
    cdef int tie_break
    cdef float no_arc_weight
    cdef void break_scan_tie(self, const StateC* s, float* costs) noexcept nogil
    cdef int bound_scratch_size(self, int n) noexcept nogil
    cdef int bound(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil
