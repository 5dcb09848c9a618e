from .base cimport StateC, GoldC, TransitionSystem


cdef enum:
    SHIFT = 0
    NO_ARC = 1
    N_STRUCTURAL = 2   # moves before the labelled ones


cdef bint root_has_dependent(const StateC* s) noexcept nogil
cdef int label_error(const GoldC* gold, int head, int dep, int label) noexcept nogil


cdef class Covington(TransitionSystem):
    cdef int scratch_size(self, int n) noexcept nogil
    cdef int bound(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil
