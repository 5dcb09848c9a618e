from .base cimport StateC, GoldC
from .covington cimport Covington


cdef enum LossKind:
    LOSS_LOWER = 0
    LOSS_PC_UPPER = 1
    LOSS_UPPER = 2


cdef int nm_scratch_size(int n) noexcept nogil
cdef int nm_bound(const StateC* s, const GoldC* gold, LossKind kind, int* scratch) noexcept nogil


cdef class CovingtonNM(Covington):
    cdef LossKind kind
    cdef float replace_cost
    cdef void break_replace_tie(self, const StateC* s, const GoldC* gold, const int* is_valid,
                                float* costs, int* arrays) noexcept nogil
