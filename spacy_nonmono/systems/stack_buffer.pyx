# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Context tokens and a Python view of the stack/buffer configuration (see
stack_buffer.pxd for the layout and the inline operations)."""
from .base cimport token_row

# The context slots of the family, the eight of spaCy's own parser: the top
# three stack words, the first two buffer words, the leftmost and rightmost
# dependents of S0 and the leftmost dependent of B0 (in the arcs built so far).
# Systems that attach S0 and B0 (arc-eager, stay-eager swap) use these.
CONTEXT_NAMES = ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "B0L")
# Arc-standard systems (swap_lazy) attach S1 and S0, so the dependents of S1
# matter instead of B0's (Chen & Manning 2014's leftmost/rightmost children of
# S0 and S1).
ARC_STANDARD_CONTEXT_NAMES = ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "S1L", "S1R")
# A wider context for the swap systems (stay-eager swap's `context="wide"`):
# the buffer two words further (a swap decision turns on where the words
# behind B0 attach; Nivre 2009's swap parser read B0-B3), B0's rightmost and
# S1's outer dependents (words put back by Swap may carry dependents).
WIDE_CONTEXT_NAMES = CONTEXT_NAMES + ("B0R", "B2", "B3", "S1L", "S1R")


cdef inline void outer_dependents(const StateC* s, int h, int* left, int* right) noexcept nogil:
    """The leftmost and rightmost dependent of node h in word order (either
    side of h), -1 if none or h is -1."""
    cdef int k
    left[0] = -1
    right[0] = -1
    if h == -1:
        return
    for k in range(1, s.n + 1):
        if s.heads[k] == h:
            if left[0] == -1:
                left[0] = k
            right[0] = k


cdef inline void set_context_with_dependents(const StateC* s, int* ids, int a, int b,
                                             bint b_rightmost) noexcept nogil:
    """S0, S1, S2, B0, B1, the leftmost and rightmost dependents of word a, the
    leftmost of word b and, if b_rightmost, its rightmost."""
    cdef int al, ar, bl, br
    outer_dependents(s, a, &al, &ar)
    outer_dependents(s, b, &bl, &br)
    ids[0] = token_row(s, S(s, 0))
    ids[1] = token_row(s, S(s, 1))
    ids[2] = token_row(s, S(s, 2))
    ids[3] = token_row(s, B(s, 0))
    ids[4] = token_row(s, B(s, 1))
    ids[5] = token_row(s, al)
    ids[6] = token_row(s, ar)
    ids[7] = token_row(s, bl)
    if b_rightmost:
        ids[8] = token_row(s, br)


cdef void set_stack_buffer_context(const StateC* s, int* ids) noexcept nogil:
    set_context_with_dependents(s, ids, S(s, 0), B(s, 0), False)


cdef void set_arc_standard_context(const StateC* s, int* ids) noexcept nogil:
    set_context_with_dependents(s, ids, S(s, 0), S(s, 1), True)


cdef void set_wide_context(const StateC* s, int* ids) noexcept nogil:
    """WIDE_CONTEXT_NAMES."""
    cdef int s1l, s1r
    set_context_with_dependents(s, ids, S(s, 0), B(s, 0), True)
    outer_dependents(s, S(s, 1), &s1l, &s1r)
    ids[9] = token_row(s, B(s, 2))
    ids[10] = token_row(s, B(s, 3))
    ids[11] = token_row(s, s1l)
    ids[12] = token_row(s, s1r)


cdef dict stack_buffer_fields(const StateC* s):
    """stack (bottom first), buffer (front first), shifted and unshifted
    words (sorted)."""
    flags = [word_flags(s)[k] for k in range(s.n + 1)]
    return {
        "stack": [stack_at(s, d) for d in range(stack_depth(s))],
        "buffer": [B(s, i) for i in range(buffer_length(s))],
        "shifted": [k for k in range(1, s.n + 1) if flags[k] & FLAG_SHIFTED],
        "unshifted": [k for k in range(1, s.n + 1) if flags[k] & FLAG_UNSHIFTED],
    }
