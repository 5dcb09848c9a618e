# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Swap systems: non-projective parsing by reordering words on the shared
stack/buffer configuration (stack_buffer.pxd), with the root node 0 at the
stack's bottom. Both are monotonic (an arc, once built, stays) and end with an
empty buffer and only node 0 on the stack.

swap_lazy: arc-standard with Swap (Nivre 2009), kinds S, W, L-<label>, R-<label>
  Shift      (s, j|b)     => (s|j, b)
  Swap       (s|i|j, b)   => (s|j, i|b)       0 < i < j (word order)
  Left-Arc   (s|i|j, b)   => (s|j, b)  + j->i   i != 0
  Right-Arc  (s|i|j, b)   => (s|i, b)  + i->j   i = 0 only with an empty buffer
                                                 (one root)
  Oracle "static": the lazy oracle of Nivre, Kuhlmann & Hall (2009): Left-Arc
  or Right-Arc when the gold arc joins S1 and S0 and the dependent has all its
  dependents; Swap when S0 precedes S1 in the gold tree's projective order
  (in-order traversal) and S0 and B0 are not in the same maximal projective
  component (the subtrees the swap-free arc-standard oracle builds in word
  order), or the buffer is empty; else Shift.

swap_stay_eager: stay-eager swap (Kohita, Noji & Matsumoto 2017), Table 1,
  kinds S, D, W, U, RR, SL-<label>, SR-<label>. With i = S0 and j = B0:
  Stay-Left  (s|i, j|b) => + j->i     i != 0, i headless, no path i ->* j
  Stay-Right (s|i, j|b) => + i->j     j headless, no path j ->* i (i may be 0)
  Shift      (s, j|b)   => (s|j, b)   any time, except a word that Unshift put
                                      back while it is still headless
  Reduce     (s|i, b)   => (s, b)     i != 0 has a head
  Swap       (s|i, j|b) => (s, j|i|b) 0 < i < j
  Unshift    (s|i, [])  => (s, [i])   i headless, below it a word other than 0:
                                      the only valid move there, so decoding
                                      takes it whatever its score (section 3.3)
  Right-Root ([0, i], []) => ([0], []) + 0->i   i headless
  The converted table's condition column is shifted by a row: as printed,
  Shift needs a head and Reduce needs i < j, which Table 3 contradicts (t=1
  shifts the headless word 1; t=7 reduces 1 with the buffer front 3 > 1). We
  give Shift no condition, Reduce "i has a head" and Swap the order
  condition 0 < i < j, as in arc-standard swap. Several words may be
  attached to node 0 by Stay-Right; `finish` keeps the first as the root.

  Oracles, chosen by `oracle`: "static" (Table 2: Stay-Left, Stay-Right, Swap
  when isCross(i, j), Reduce when i has its head and all its dependents, else
  Shift) and "nonstatic" (section 3.2: where the static oracle reduces and
  Shift is safe -- B0 has no unbuilt gold arc to a stack word -- Shift with
  probability `shift_probability`; where it attaches the root from node 0,
  Shift with probability `root_shift_probability`, so that the root is left
  on the stack and attached by Right-Root at the end). isCross(i, j): i has
  an unbuilt gold arc to a word behind j in the buffer and j one to a word
  below i on the stack. One reading of Table 3 fixed by us: the word attached
  to node 0 is not reduced while the buffer has words (t=12 and t=15 shift
  where Reduce would also rebuild the tree).

  Oracle "dynamic" (ours; the paper has only the two above): training with
  error exploration, like the other families, on approximate costs. The loss
  of a configuration (`ses_loss`) counts the arcs built wrong (head or label)
  and the headless words whose gold head is gone (reduced) or below them
  (the arc would close a cycle); it ignores word order, so it is a lower
  bound of the true loss (tests/test_swap.py checks it against exhaustive
  search), exact on the gold path. A move's cost is the loss it adds. Shift
  and Swap never add to this loss, so they cost one more than that unless
  they are the nonstatic oracle's move: where and when to reorder stays the
  paper's static decision (as in de Lhoneux et al. 2017's static-dynamic
  oracle for arc-hybrid swap), while attachments and Reduce follow the costs.

Termination (both systems, any move sequence): no move but Swap changes the
order of the words in stack + buffer, and Swap puts the larger word of a pair
before the smaller one, which no move undoes, so each pair is swapped at most
once: at most n(n-1)/2 swaps. Every word gets one head (monotonic arcs) and
leaves the stack once. Shift moves words that started in, or were put back on,
the buffer. In stay-eager swap a word is unshifted at most once (it must be
headless, and stays in the buffer until it gets a head). Hence at most
n^2 + n moves for swap_lazy and n^2 + 4n for swap_stay_eager
(`max_moves`), and every non-final configuration has a valid move.
"""
from .base cimport StateC, GoldC, TransitionSystem, ParseState, label_error
from .base import Option, probability
from .stack_buffer cimport (FLAG_UNSHIFTED, stack_buffer_size, stack_depth, buffer_length, S,
                            B, stack_at, word_flags, init_stack_buffer, push, pop, unshift,
                            push_word, buffer_push_front, buffer_pop_front,
                            set_stack_buffer_context, set_arc_standard_context, set_wide_context,
                            stack_buffer_fields, has_gold_dependents, reduce_left_arc,
                            reduce_right_arc)
from .stack_buffer import CONTEXT_NAMES, ARC_STANDARD_CONTEXT_NAMES, WIDE_CONTEXT_NAMES
from ..graph.algorithms cimport has_path
from cymem.cymem cimport Pool


# -- gold-tree facts the oracles use (GoldC.extra: 3 arrays of n + 1 ints) ----

cdef inline int* gold_n_deps(const GoldC* gold) noexcept nogil:
    return <int*>gold.extra


cdef inline int* gold_order(const GoldC* gold) noexcept nogil:
    """Position of each node in the gold tree's projective order."""
    return <int*>gold.extra + (gold.n + 1)


cdef inline int* gold_component(const GoldC* gold) noexcept nogil:
    """Each word's maximal projective component (the id of its top word)."""
    return <int*>gold.extra + 2 * (gold.n + 1)


cdef int inorder(const int* heads, int n, int node, int* order, int position) noexcept nogil:
    """Number `node`'s subtree in projective order from `position`: left
    dependents' subtrees, the node, right dependents' subtrees (word order)."""
    cdef int k
    for k in range(1, node):
        if heads[k] == node:
            position = inorder(heads, n, k, order, position)
    order[node] = position
    position += 1
    for k in range(node + 1, n + 1):
        if heads[k] == node:
            position = inorder(heads, n, k, order, position)
    return position


cdef void projective_components(const GoldC* gold, int* component, int* stack,
                                int* built) noexcept nogil:
    """The swap-free arc-standard oracle in word order: shift each word, then
    attach while S1 and S0 are joined by a gold arc whose dependent is
    complete. Each word's component is the top of its built subtree."""
    cdef int n = gold.n, w, a, b, depth = 0, k
    cdef int* n_deps = gold_n_deps(gold)
    for k in range(n + 1):
        built[k] = 0          # dependents attached so far
        component[k] = k
    for w in range(1, n + 1):
        stack[depth] = w
        depth += 1
        while depth >= 2:
            a = stack[depth - 2]
            b = stack[depth - 1]
            if gold.heads[a] == b and built[a] == n_deps[a]:
                component[a] = b
                built[b] += 1
                stack[depth - 2] = b
                depth -= 1
            elif gold.heads[b] == a and built[b] == n_deps[b]:
                component[b] = a
                built[a] += 1
                depth -= 1
            else:
                break
    # Point every word at its component's top.
    for w in range(1, n + 1):
        k = w
        while component[k] != k:
            k = component[k]
        component[w] = k


cdef int init_swap_gold(Pool mem, GoldC* gold) except -1:
    cdef int n = gold.n, k
    cdef int* extra = <int*>mem.alloc(3 * (n + 1), sizeof(int))
    cdef int* work = <int*>mem.alloc(2 * (n + 1), sizeof(int))
    gold.extra = extra
    for k in range(1, n + 1):
        if gold.heads[k] >= 0:
            extra[gold.heads[k]] += 1
    inorder(gold.heads, n, 0, gold_order(gold), 0)
    projective_components(gold, gold_component(gold), work, work + (n + 1))
    return 0


cdef inline bint unbuilt_gold_arc(const StateC* s, const GoldC* gold, int a, int b) noexcept nogil:
    """Whether a and b are joined by a gold arc (either way) not yet built."""
    return ((gold.heads[b] == a and s.heads[b] != a)
            or (a > 0 and gold.heads[a] == b and s.heads[a] != b))


cdef int ses_loss(const StateC* s, const GoldC* gold, int* present) noexcept nogil:
    """The dynamic oracle's loss (see the module doc): arcs built wrong, plus
    headless words whose gold head has been reduced or is their descendant.
    `present`: n + 1 ints of scratch."""
    cdef int n = s.n, k, d, g, loss = 0
    for k in range(n + 1):
        present[k] = 0
    present[0] = 1
    for k in range(stack_depth(s)):
        present[stack_at(s, k)] = 1
    for k in range(buffer_length(s)):
        present[B(s, k)] = 1
    for d in range(1, n + 1):
        g = gold.heads[d]
        if s.heads[d] != -1:
            if s.heads[d] != g or label_error(gold, g, d, s.labels[d]):
                loss += 1
        elif g != 0 and (not present[g] or has_path(s.heads, n + 1, d, g)):
            loss += 1
    return loss


cdef class SwapSystem(TransitionSystem):
    """The configuration, end, gold facts, context and finish of both swap
    systems; a subclass gives its kinds, validity, moves and oracle."""
    context_names = CONTEXT_NAMES
    projective = False

    def describe(self, ParseState state):
        return stack_buffer_fields(state.c)

    cdef int state_size(self, int n) noexcept nogil:
        return stack_buffer_size(n)

    cdef int scratch_size(self, int n) noexcept nogil:
        return self.n_moves

    cdef int init_gold(self, Pool mem, GoldC* gold) except -1:
        return init_swap_gold(mem, gold)

    cdef void init_state(self, StateC* s) noexcept nogil:
        init_stack_buffer(s, True)

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return buffer_length(s) == 0 and stack_depth(s) <= 1

    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil:
        return False

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        # Validity does not depend on the label.
        cdef bint[SES_KINDS] ok
        cdef int kind
        for kind in range(self.n_kinds):
            ok[kind] = self.is_valid_kind(s, kind)
        self.set_valid_by_kind(ok, is_valid)

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        set_stack_buffer_context(s, ids)


cdef class SwapLazy(SwapSystem):
    name = "swap_lazy"
    kinds = (("S", False), ("W", False), ("L", True), ("R", True))
    oracles = ("static",)
    # Arcs join S1 and S0: their dependents are the context, not B0's.
    context_names = ARC_STANDARD_CONTEXT_NAMES

    cdef int move_limit(self, int n) noexcept nogil:
        """See the module doc."""
        return n * n + n

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        set_arc_standard_context(s, ids)

    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil:
        cdef int depth = stack_depth(s), i = S(s, 1), j = S(s, 0)
        if kind == LAZY_SHIFT:
            return buffer_length(s) > 0
        if kind == LAZY_RIGHT_ARC:
            return depth >= 2 and (i != 0 or buffer_length(s) == 0)
        if depth < 3:
            return False
        if kind == LAZY_LEFT_ARC:
            return True
        return i < j            # Swap; i != 0 as depth >= 3

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef int kind = self.c_moves[move].kind, j = S(s, 0), i = S(s, 1)
        if kind == LAZY_SHIFT:
            push(s)
        elif kind == LAZY_SWAP:
            pop(s)
            unshift(s)
            push_word(s, j)
        elif kind == LAZY_LEFT_ARC:
            reduce_left_arc(s, self.c_moves[move].label)
        else:
            reduce_right_arc(s, self.c_moves[move].label)

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int j = S(s, 0), i = S(s, 1), b0 = B(s, 0)
        cdef int* order = gold_order(gold)
        cdef int* component = gold_component(gold)
        if self.is_final(s):
            return -1
        if i != -1:
            if i != 0 and gold.heads[i] == j and has_gold_dependents(s, gold, i):
                return self.move_of(LAZY_LEFT_ARC, gold.labels[i])
            if (gold.heads[j] == i and has_gold_dependents(s, gold, j)
                    and self.is_valid_kind(s, LAZY_RIGHT_ARC)):
                return self.move_of(LAZY_RIGHT_ARC, gold.labels[j])
            if (i != 0 and order[j] < order[i] and self.is_valid_kind(s, LAZY_SWAP)
                    and (b0 == -1 or component[j] != component[b0])):
                return self.move_of(LAZY_SWAP, -1)
        if b0 != -1:
            return self.move_of(LAZY_SHIFT, -1)
        return -1


cdef class StayEagerSwap(SwapSystem):
    name = "swap_stay_eager"
    kinds = (("S", False), ("D", False), ("W", False), ("U", False), ("RR", False),
             ("SL", True), ("SR", True))
    # "dynamic" (ours) is the default: it trains better models than the
    # paper's "nonstatic" (docs/results/swap/).
    oracles = ("dynamic", "nonstatic", "static")
    random_oracle = True
    option_specs = {
        "shift_probability": Option(
            0.33, check=probability,
            doc="nonstatic and dynamic oracles: probability of Shift where the static oracle reduces "
                "and Shift is safe"),
        "root_shift_probability": Option(
            0.33, check=probability,
            doc="nonstatic and dynamic oracles: probability of Shift where the static oracle attaches "
                "the root, which Right-Root then attaches at the end"),
        "context": Option("narrow", choices=("narrow", "wide"),
                          doc="the context slots: spaCy's eight (narrow) or 13 with B2, B3 and "
                              "more dependents (wide)"),
    }

    def __init__(self, labels=(), oracle=None, **options):
        SwapSystem.__init__(self, labels, oracle, **options)
        # "dynamic" keeps the nonstatic oracle's choices for Shift and Swap.
        self.nonstatic = self.oracle != "static"
        # The static and nonstatic oracles give one move per configuration:
        # training follows it; "dynamic" explores (adjust_targets).
        self.static_oracle = self.oracle != "dynamic"
        self.shift_probability = self.options["shift_probability"]
        self.root_shift_probability = self.options["root_shift_probability"]
        self.rng_state = 0x9E3779B97F4A7C15
        self.wide_context = self.options["context"] == "wide"

    @property
    def context_names(self):
        return WIDE_CONTEXT_NAMES if self.options["context"] == "wide" else CONTEXT_NAMES

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        if self.wide_context:
            set_wide_context(s, ids)
        else:
            set_stack_buffer_context(s, ids)

    def reseed_oracle(self, seed):
        """Seed the nonstatic oracle's coin flips."""
        self.rng_state = (int(seed) * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF or 1

    cdef int move_limit(self, int n) noexcept nogil:
        """See the module doc."""
        return n * n + 4 * n

    cdef int scratch_size(self, int n) noexcept nogil:
        # The loss's presence marks, then a configuration to try moves on.
        return (n + 1) + 2 * (n + 1) + self.state_size(n)

    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        return ses_loss(s, gold, scratch)

    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* losses, int* scratch) noexcept nogil:
        """Each move's loss: what it adds to the loss, and its label's error."""
        self.set_valid(s, is_valid)
        self.set_costs_from_loss(s, gold, is_valid, losses, scratch, scratch + (s.n + 1),
                                 SES_STAY_LEFT, SES_STAY_RIGHT, S(s, 0), B(s, 0))

    cdef void adjust_targets(self, const StateC* s, const GoldC* gold, const int* is_valid,
                             float* costs, int* scratch) noexcept nogil:
        """One more for a Shift or Swap the nonstatic oracle does not choose
        (its coin flips)."""
        cdef int m, kind
        cdef int chosen = self.static_move(s, gold)
        for m in range(self.n_moves):
            kind = self.c_moves[m].kind
            if is_valid[m] and (kind == SES_SHIFT or kind == SES_SWAP) and m != chosen:
                costs[m] += 1

    cdef double draw(self) noexcept nogil:
        """A uniform number in [0, 1) (xorshift64*)."""
        cdef unsigned long long x = self.rng_state
        x ^= x >> 12
        x ^= x << 25
        x ^= x >> 27
        self.rng_state = x
        return ((x * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0)

    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil:
        cdef int i = S(s, 0), j = B(s, 0), depth = stack_depth(s)
        if kind == SES_STAY_LEFT:
            return (j != -1 and i > 0 and s.heads[i] == -1
                    and not has_path(s.heads, s.n + 1, i, j))
        if kind == SES_STAY_RIGHT:
            return (j != -1 and i != -1 and s.heads[j] == -1
                    and not has_path(s.heads, s.n + 1, j, i))
        if kind == SES_SHIFT:
            return j != -1 and not (word_flags(s)[j] & FLAG_UNSHIFTED and s.heads[j] == -1)
        if kind == SES_REDUCE:
            return i > 0 and s.heads[i] != -1
        if kind == SES_SWAP:
            return j != -1 and 0 < i < j
        if kind == SES_UNSHIFT:
            return j == -1 and depth >= 3 and s.heads[i] == -1
        # Right-Root
        return j == -1 and depth == 2 and s.heads[i] == -1

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef int kind = self.c_moves[move].kind, i = S(s, 0), j = B(s, 0)
        if kind == SES_SHIFT:
            push(s)
        elif kind == SES_REDUCE:
            pop(s)
        elif kind == SES_SWAP:
            buffer_pop_front(s)
            unshift(s)
            buffer_push_front(s, j)
        elif kind == SES_UNSHIFT:
            word_flags(s)[i] |= FLAG_UNSHIFTED
            unshift(s)
        elif kind == SES_RIGHT_ROOT:
            s.heads[i] = 0
            s.labels[i] = -1
            pop(s)
        elif kind == SES_STAY_LEFT:
            s.heads[i] = j
            s.labels[i] = self.c_moves[move].label
        else:
            s.heads[j] = i
            s.labels[j] = self.c_moves[move].label

    cdef bint is_cross(self, const StateC* s, const GoldC* gold) noexcept nogil:
        """isCross(S0, B0) of Table 2."""
        cdef int i = S(s, 0), j = B(s, 0), k
        cdef bint i_crosses = False
        for k in range(1, buffer_length(s)):
            if unbuilt_gold_arc(s, gold, i, B(s, k)):
                i_crosses = True
                break
        if not i_crosses:
            return False
        for k in range(1, stack_depth(s)):
            if unbuilt_gold_arc(s, gold, j, S(s, k)):
                return True
        return False

    cdef bint shift_is_safe(self, const StateC* s, const GoldC* gold) noexcept nogil:
        """B0 has no unbuilt gold arc to a word on the stack."""
        cdef int j = B(s, 0), k
        for k in range(stack_depth(s)):
            if unbuilt_gold_arc(s, gold, j, stack_at(s, k)):
                return False
        return self.is_valid_kind(s, SES_SHIFT)

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int i = S(s, 0), j = B(s, 0)
        if self.is_final(s):
            return -1
        if j != -1:
            if i > 0 and gold.heads[i] == j and self.is_valid_kind(s, SES_STAY_LEFT):
                return self.move_of(SES_STAY_LEFT, gold.labels[i])
            if gold.heads[j] == i and self.is_valid_kind(s, SES_STAY_RIGHT):
                if (i == 0 and self.nonstatic and self.root_shift_probability > 0
                        and self.is_valid_kind(s, SES_SHIFT)
                        and self.draw() < self.root_shift_probability):
                    return self.move_of(SES_SHIFT, -1)
                return self.move_of(SES_STAY_RIGHT, gold.labels[j])
            if self.is_valid_kind(s, SES_SWAP) and self.is_cross(s, gold):
                return self.move_of(SES_SWAP, -1)
        if (i > 0 and s.heads[i] != -1 and has_gold_dependents(s, gold, i)
                and (s.heads[i] != 0 or j == -1)):
            if (j != -1 and self.nonstatic and self.shift_probability > 0
                    and self.shift_is_safe(s, gold) and self.draw() < self.shift_probability):
                return self.move_of(SES_SHIFT, -1)
            return self.move_of(SES_REDUCE, -1)
        if j != -1 and self.is_valid_kind(s, SES_SHIFT):
            return self.move_of(SES_SHIFT, -1)
        if self.is_valid_kind(s, SES_RIGHT_ROOT):
            return self.move_of(SES_RIGHT_ROOT, -1)
        if self.is_valid_kind(s, SES_UNSHIFT):
            return self.move_of(SES_UNSHIFT, -1)
        return -1
