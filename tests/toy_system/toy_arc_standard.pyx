# distutils: language = c++
# cython: boundscheck=False, wraparound=False, language_level=3
"""A toy transition system written the way a new system is added to the
engine: one module and one registry entry (the README's worked example).

Arc-standard (Nivre 2004) with a static oracle only: Shift moves the front
of the buffer onto the stack; Left-Arc makes the stack top the head of the
word below it and pops that word; Right-Arc makes the word below the head of
the stack top and pops the top. The root node 0 starts on the stack and takes
its one dependent last. Projective trees only: on a non-projective gold tree
the static oracle does its best and the tree it builds is wrong somewhere.
"""
from spacy_nonmono.systems.base cimport StateC, GoldC, TransitionSystem, token_row

# Move kinds, in the order of `kinds` below.
cdef enum:
    SHIFT = 0
    LEFT = 1
    RIGHT = 2


cdef struct Stack:
    # The system's state beyond the arcs, in StateC.data: the buffer is
    # words next..n, the stack words[0..length-1] follow this header.
    int length
    int next


cdef inline Stack* stack(const StateC* s) noexcept nogil:
    return <Stack*>s.data


cdef inline int* words(const StateC* s) noexcept nogil:
    return s.data + 2


cdef inline int top(const StateC* s, int depth) noexcept nogil:
    """The word `depth` below the stack top, or -1."""
    return words(s)[stack(s).length - 1 - depth] if stack(s).length > depth else -1


cdef class ToyArcStandard(TransitionSystem):
    name = "toy_arc_standard"
    kinds = (("S", False), ("L", True), ("R", True))
    oracles = ("static",)
    context_names = ("S0", "S1", "S2", "B0", "B1")

    def describe(self, state):
        data = state.data
        return {"stack": data[2:2 + data[0]], "buffer_start": data[1]}

    cdef int state_size(self, int n) noexcept nogil:
        return 2 + n + 1

    cdef void init_state(self, StateC* s) noexcept nogil:
        stack(s).length = 1
        stack(s).next = 1
        words(s)[0] = 0

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return stack(s).next > s.n and stack(s).length == 1

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        cdef bint buffer_empty = stack(s).next > s.n
        cdef bint[3] ok
        ok[SHIFT] = not buffer_empty
        ok[LEFT] = stack(s).length >= 2 and top(s, 1) != 0
        # The root takes its dependent last: one root per sentence.
        ok[RIGHT] = stack(s).length >= 2 and (top(s, 1) != 0 or buffer_empty)
        self.set_valid_by_kind(ok, is_valid)

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef int kind = self.c_moves[move].kind
        cdef int head, dep
        if kind == SHIFT:
            words(s)[stack(s).length] = stack(s).next
            stack(s).length += 1
            stack(s).next += 1
            return
        if kind == LEFT:
            head, dep = top(s, 0), top(s, 1)
            words(s)[stack(s).length - 2] = head
        else:
            head, dep = top(s, 1), top(s, 0)
        stack(s).length -= 1
        s.heads[dep] = head
        s.labels[dep] = self.c_moves[move].label

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int s0 = top(s, 0), s1 = top(s, 1), k
        cdef bint buffer_empty = stack(s).next > s.n
        if s1 >= 1 and gold.heads[s1] == s0:
            return self.move_of(LEFT, gold.labels[s1])
        if s1 >= 0 and gold.heads[s0] == s1 and (s1 != 0 or buffer_empty):
            # Right-Arc once s0 has all its dependents.
            for k in range(stack(s).next, s.n + 1):
                if gold.heads[k] == s0:
                    break
            else:
                return self.move_of(RIGHT, gold.labels[s0])
        if not buffer_empty:
            return self.move_of(SHIFT, -1)
        # Non-projective gold: no gold move left; reduce to the root anyway.
        return self.move_of(LEFT if s1 >= 1 else RIGHT, 0)

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        ids[0] = token_row(s, top(s, 0))
        ids[1] = token_row(s, top(s, 1))
        ids[2] = token_row(s, top(s, 2))
        ids[3] = token_row(s, stack(s).next)
        ids[4] = token_row(s, stack(s).next + 1)
