from .base cimport StateC, GoldC, TransitionSystem
from ..graph.split_grammars cimport ShiftReduceConfig


# Move kinds, in move-table order: S, L-<label>..., R-<label>...
cdef enum:
    AS_SHIFT = 0
    AS_LEFT_ARC = 1     # the paper's "reduce right": S1 becomes S0's left child
    AS_RIGHT_ARC = 2    # the paper's "reduce left": S0 becomes S1's right child
    AS_KINDS = 3


# The strategies of section 2.
cdef enum Strategy:
    NONSTRICT = 0       # left-before-right
    STRICT_LEFT = 1     # strict left-before-right
    RIGHT_FIRST = 2     # right-before-left


# Which optimal-step algorithm computes a configuration's score.
cdef enum Algorithm:
    AUTO = 0            # CUBIC for a non-projective gold tree, LINEAR for a projective one
    CUBIC = 1
    QUADRATIC = 2
    LINEAR = 3


cdef class ArcStandard(TransitionSystem):
    cdef int strategy
    cdef int algorithm
    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil
    cdef int config_score(self, const ShiftReduceConfig* c, const GoldC* gold,
                          int algorithm, int* scratch) noexcept nogil
    cdef void step_scores_c(self, const StateC* s, const GoldC* gold, int algorithm,
                            int* sigma, int* scratch) noexcept nogil
