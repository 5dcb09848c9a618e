from .base cimport StateC, GoldC, TransitionSystem


# Move kinds, in move-table order: S, D, L-<label>..., R-<label>...
cdef enum:
    SHIFT = 0
    REDUCE = 1          # Reduce; with Unshift, the Reduce/Unshift class
    LEFT_ARC = 2
    RIGHT_ARC = 3
    BREAK = 4           # arc_eager_break only
    N_KINDS = 4         # the kinds every variant has


# What the variants of the family allow beyond Nivre's monotonic arc-eager.
cdef enum Variant:
    MONOTONIC = 0       # arc_eager
    TREE = 1            # arc_eager_tree: Unshift only with an empty buffer
    UNSHIFT = 2         # arc_eager_unshift: Unshift any time, Left-Arc clobbers
    NM2013 = 3          # arc_eager_nm2013: Reduce attaches a headless S0, Left-Arc clobbers
    DOCUMENTS = 4       # arc_eager_break: monotonic, over documents, Break pops the stack


cdef class ArcEager(TransitionSystem):
    cdef int variant
    cdef int loss_variant
    cdef bint is_valid_move(self, const StateC* s, int move) noexcept nogil
    cdef void break_at_boundaries(self, const StateC* s, const GoldC* gold,
                                  const int* is_valid, float* costs) noexcept nogil
