"""The stack/buffer configuration shared by the arc-eager, swap and arc-standard
families: a stack, a buffer any word can be put back on (Unshift, Swap) and a
flag per word, laid out in StateC.data (the arcs are the engine's).

Layout for n words (`stack_buffer_size(n)` ints):
  data[0]                  stack depth
  data[1]                  buffer length
  data[2 .. 2+n)           the stack, bottom first
  data[2+n .. 2+2n)        the buffer, back first (its front is the last
                           entry, so putting a word back in front is O(1))
  data[2+2n .. 3+3n)       flags of words 0..n (FLAG_SHIFTED, ...)
Words are 1..n; a system of this family has no dummy root node (the engine's
node 0 is never on the stack or buffer).
"""
from .base cimport StateC


cdef enum:
    # The word was moved by Shift since it last entered the buffer (the
    # bit-vector S of Honnibal & Johnson 2015, Table 1).
    FLAG_SHIFTED = 1


cdef inline int stack_buffer_size(int n) noexcept nogil:
    return 3 + 3 * n


cdef inline int stack_depth(const StateC* s) noexcept nogil:
    return s.data[0]


cdef inline int buffer_length(const StateC* s) noexcept nogil:
    return s.data[1]


cdef inline int S(const StateC* s, int i) noexcept nogil:
    """The i-th word from the stack top (0 = top), -1 if none."""
    if i < 0 or i >= s.data[0]:
        return -1
    return s.data[2 + s.data[0] - 1 - i]


cdef inline int B(const StateC* s, int i) noexcept nogil:
    """The i-th word from the buffer front (0 = front), -1 if none."""
    if i < 0 or i >= s.data[1]:
        return -1
    return s.data[2 + s.n + s.data[1] - 1 - i]


cdef inline int stack_at(const StateC* s, int depth) noexcept nogil:
    """The word at `depth` from the stack bottom (0 = bottom)."""
    return s.data[2 + depth]


cdef inline int* word_flags(const StateC* s) noexcept nogil:
    return s.data + 2 + 2 * s.n


cdef inline void init_stack_buffer(StateC* s) noexcept nogil:
    """Empty stack; buffer 1..n; no flags."""
    cdef int n = s.n, k
    s.data[0] = 0
    s.data[1] = n
    for k in range(n):
        s.data[2 + n + k] = n - k
    for k in range(n + 1):
        s.data[2 + 2 * n + k] = 0


cdef inline void push(StateC* s) noexcept nogil:
    """Move the buffer front onto the stack."""
    cdef int b = B(s, 0)
    s.data[1] -= 1
    s.data[2 + s.data[0]] = b
    s.data[0] += 1


cdef inline void pop(StateC* s) noexcept nogil:
    s.data[0] -= 1


cdef inline void unshift(StateC* s) noexcept nogil:
    """Move the stack top back to the buffer front."""
    cdef int w = S(s, 0)
    s.data[0] -= 1
    s.data[2 + s.n + s.data[1]] = w
    s.data[1] += 1


cdef void set_stack_buffer_context(const StateC* s, int* ids) noexcept nogil
cdef dict stack_buffer_fields(const StateC* s)
