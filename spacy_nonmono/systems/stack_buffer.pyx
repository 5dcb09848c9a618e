# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Context tokens and a Python view of the stack/buffer configuration (see
stack_buffer.pxd for the layout and the inline operations)."""
from .base cimport token_row

# The context slots of the family, the eight of spaCy's own parser: the top
# three stack words, the first two buffer words, the leftmost and rightmost
# dependents of S0 and the leftmost dependent of B0 (in the arcs built so far).
CONTEXT_NAMES = ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "B0L")


cdef void set_stack_buffer_context(const StateC* s, int* ids) noexcept nogil:
    cdef int s0 = S(s, 0), b0 = B(s, 0), k, h
    cdef int s0l = -1, s0r = -1, b0l = -1
    for k in range(1, s.n + 1):
        h = s.heads[k]
        if h == -1:
            continue
        if h == s0 and s0 != -1:
            if s0l == -1:
                s0l = k
            s0r = k
        elif h == b0 and b0 != -1 and b0l == -1:
            b0l = k
    ids[0] = token_row(s, s0)
    ids[1] = token_row(s, S(s, 1))
    ids[2] = token_row(s, S(s, 2))
    ids[3] = token_row(s, b0)
    ids[4] = token_row(s, B(s, 1))
    ids[5] = token_row(s, s0l)
    ids[6] = token_row(s, s0r)
    ids[7] = token_row(s, b0l)


cdef void finish_single_root(StateC* s) noexcept nogil:
    """Make the arcs a single-rooted tree: the first word (in word order) that
    is headless or attached to the root node becomes the root, and any other
    such word is attached to it (label -1, written "dep")."""
    cdef int k, root = -1
    for k in range(1, s.n + 1):
        if s.heads[k] == -1 or s.heads[k] == 0:
            if root == -1:
                root = k
                s.heads[k] = 0
            else:
                s.heads[k] = root
                s.labels[k] = -1


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
