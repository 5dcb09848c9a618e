"""The stack/buffer configuration shared by the arc-eager, swap and arc-standard
families: a stack, a buffer any word can be put back on (Unshift, Swap) and a
flag per word, laid out in StateC.data (the arcs are the engine's).

Layout for n words (`stack_buffer_size(n)` ints):
  data[0]                  stack depth
  data[1]                  buffer length
  data[2 .. 3+n)           the stack, bottom first (room for n words and the root)
  data[3+n .. 3+2n)        the buffer, back first (its front is the last
                           entry, so putting a word back in front is O(1))
  data[3+2n .. 4+3n)       flags of nodes 0..n (FLAG_SHIFTED, ...)
Words are 1..n. The arc-eager family has no dummy root (the engine's node 0
is never on the stack or buffer); the swap systems start with node 0 at the
stack's bottom (`init_stack_buffer(s, True)`) and attach the root from it.
"""
from .base cimport StateC, GoldC


cdef enum:
    # The word was moved by Shift since it last entered the buffer (the
    # bit-vector S of Honnibal & Johnson 2015, Table 1).
    FLAG_SHIFTED = 1
    # The word was put back on the empty buffer by Unshift (stay-eager swap).
    FLAG_UNSHIFTED = 2


cdef inline int stack_buffer_size(int n) noexcept nogil:
    return 4 + 3 * n


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
    return s.data[3 + s.n + s.data[1] - 1 - i]


cdef inline int stack_at(const StateC* s, int depth) noexcept nogil:
    """The word at `depth` from the stack bottom (0 = bottom)."""
    return s.data[2 + depth]


cdef inline int* word_flags(const StateC* s) noexcept nogil:
    return s.data + 3 + 2 * s.n


cdef inline void init_stack_buffer(StateC* s, bint root_on_stack) noexcept nogil:
    """Buffer 1..n; the stack empty, or holding the root node 0; no flags."""
    cdef int n = s.n, k
    s.data[0] = 0
    s.data[1] = n
    for k in range(n):
        s.data[3 + n + k] = n - k
    for k in range(n + 1):
        s.data[3 + 2 * n + k] = 0
    if root_on_stack:
        s.data[0] = 1
        s.data[2] = 0


cdef inline void push_word(StateC* s, int w) noexcept nogil:
    s.data[2 + s.data[0]] = w
    s.data[0] += 1


cdef inline void pop(StateC* s) noexcept nogil:
    s.data[0] -= 1


cdef inline void buffer_push_front(StateC* s, int w) noexcept nogil:
    s.data[3 + s.n + s.data[1]] = w
    s.data[1] += 1


cdef inline int buffer_pop_front(StateC* s) noexcept nogil:
    s.data[1] -= 1
    return s.data[3 + s.n + s.data[1]]


cdef inline void push(StateC* s) noexcept nogil:
    """Move the buffer front onto the stack."""
    push_word(s, buffer_pop_front(s))


cdef inline void unshift(StateC* s) noexcept nogil:
    """Move the stack top back to the buffer front."""
    cdef int w = S(s, 0)
    pop(s)
    buffer_push_front(s, w)


cdef inline void reduce_left_arc(StateC* s, int label) noexcept nogil:
    """Arc-standard Left-Arc: (s|i|j, b) => (s|j, b) + j -> i."""
    cdef int j = S(s, 0), i = S(s, 1)
    s.heads[i] = j
    s.labels[i] = label
    pop(s)
    pop(s)
    push_word(s, j)


cdef inline void reduce_right_arc(StateC* s, int label) noexcept nogil:
    """Arc-standard Right-Arc: (s|i|j, b) => (s|i, b) + i -> j."""
    cdef int j = S(s, 0), i = S(s, 1)
    s.heads[j] = i
    s.labels[j] = label
    pop(s)


cdef inline bint has_gold_dependents(const StateC* s, const GoldC* gold, int w) noexcept nogil:
    """Whether every gold dependent of w is attached to w."""
    cdef int k
    for k in range(1, s.n + 1):
        if gold.heads[k] == w and s.heads[k] != w:
            return False
    return True


cdef void set_stack_buffer_context(const StateC* s, int* ids) noexcept nogil
cdef void set_arc_standard_context(const StateC* s, int* ids) noexcept nogil
cdef void set_wide_context(const StateC* s, int* ids) noexcept nogil
cdef dict stack_buffer_fields(const StateC* s)
