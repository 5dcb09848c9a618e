# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The arc-eager family (Honnibal & Johnson 2015 and its baselines), on the
shared stack/buffer configuration (stack_buffer.pxd). No dummy root: words
are 1..n and the root is the word left without a head.

Moves (kinds S, D, L-<label>, R-<label>):
  Shift      push B0 (marks it shifted)
  D          Reduce: pop S0 if it has a head. In arc_eager_tree and
             arc_eager_unshift the same class is Unshift when S0 has no
             head: S0 goes back to the buffer front (one class for both, as
             in section 3.1 of the paper)
  Left-Arc   B0 -> S0, pop S0
  Right-Arc  S0 -> B0, push B0

Variants:
  arc_eager          Nivre (2003): Reduce needs a head, Left-Arc needs S0
                     headless; final when the buffer is empty.
  arc_eager_tree     Nivre & Fernandez-Gonzalez (2014): plus Unshift of a
                     headless S0 when the buffer is empty.
  arc_eager_unshift  Honnibal & Johnson (2015), Table 1: Unshift of a
                     headless S0 at any time, Left-Arc replaces an existing
                     head of S0, Shift refused for a word shifted before (the
                     bit-vector S).
  arc_eager_nm2013   Honnibal, Goldberg & Johnson (2013): Left-Arc replaces
                     an existing head; Reduce of a headless S0 attaches it to
                     S1 with the Right-Arc label that scored best when S0 was
                     shifted (noted at Shift; -1 without model scores).
  arc_eager_break    arc_eager over a document (several sentences), plus
                     Break (kind B): close the sentence before B0 and pop the
                     whole stack, when the stack and the buffer are not
                     empty. Break alone decides the sentences: the stack's
                     first headless word becomes the closed sentence's root
                     and every other headless stack word is attached to it
                     (label -1), as `finish` does for the last sentence. A
                     word the parser failed to attach so stays in its
                     sentence instead of starting one; as no arc passes over
                     a headless word, the words Break pops and their trees
                     cover consecutive words.
  In the three non-monotonic variants the run ends with an empty buffer and
  one word on the stack. Two rules of ours keep every configuration live and the run
  within 4n moves: Shift is always allowed on an empty stack, and Unshift
  needs two words on the stack (unshifting the only one would loop with
  that Shift). Each word is then pushed at most twice (a word pushed on an
  empty stack stays at its bottom and is never unshifted), so popped at
  most twice.

`finish` makes the first headless word in word order the root and attaches
any other headless word to it (label -1, written "dep"); in arc_eager_break
it does so among the words no Break has closed (the last sentence).

Oracles. The loss of a configuration counts the gold arcs (the root's
included: the gold root must end headless and first) that no move sequence
can still build, plus built gold arcs with a wrong label. Which arcs remain
buildable follows Goldberg & Nivre (2013) for the monotonic moves and
section 2.2 of the paper for the non-monotonic ones (rules 4 and 5: Left-Arc
replaces a head; two stack words can still be joined when the upper one has
no head; in arc_eager_nm2013, a headless stack word can still be attached to
the word right below it, by Reduce, correctly labelled if its noted label is
the gold one). In arc_eager_break the gold tree is a document's forest (one
tree per sentence, each over consecutive words); a gold root on the stack is
lost above a headless word (Break will close both into one sentence, the
lower one its root), and one Break closed is correct when it became a root. A
move's cost is the loss increase it causes. For
arc_eager_unshift and arc_eager_nm2013, ties are broken toward fewer
non-monotonic moves (section 2.2): when a monotonic move keeps both the non-monotonic and the monotonic
loss, a repair (Unshift or a Reduce of a headless word, or a Left-Arc replacing a
head) and a move that keeps
only the non-monotonic loss (it would need a repair later) cost 1. In
arc_eager_break, where B0 starts a gold sentence Break is the only target,
and elsewhere Break is not one while another move costs 0
(`break_at_boundaries`). The static oracle builds a projective gold tree: Left-Arc, Right-Arc,
Reduce when B0 is linked to a word below S0, else (arc_eager_break) Break
when no gold arc joins the words before B0 to the rest, else Shift.
"""
from .base cimport (MAX_KINDS, OWN_LOSS, StateC, GoldC, TransitionSystem, ParseState,
                   label_error)
from .stack_buffer cimport (FLAG_SHIFTED, stack_buffer_size, stack_depth, buffer_length, S, B,
                            stack_at, word_flags, init_stack_buffer, push, pop, unshift,
                            set_stack_buffer_context,
                            stack_buffer_fields)
from .stack_buffer import CONTEXT_NAMES

cdef inline int* noted_labels(const StateC* s) noexcept nogil:
    """arc_eager_nm2013: per word, the best Right-Arc label when it was
    shifted (after the stack/buffer ints)."""
    return s.data + stack_buffer_size(s.n)


# Where a word is, for the loss: its stack depth from the bottom (>= 0), or:
cdef enum:
    IN_BUFFER = -1
    REDUCED = -2


cdef bint arc_buildable(const StateC* s, const GoldC* gold, int variant, const int* where,
                        int h, int d) noexcept nogil:
    """Whether h -> d (not in A) can still be built from s, with its label."""
    cdef int wd = where[d], wh = where[h], upper
    if wd == REDUCED or wh == REDUCED:
        return False
    if s.heads[d] != -1:
        # d's head is wrong. A Left-Arc from the buffer can replace it in the
        # non-monotonic variants; in arc_eager_unshift also one from a
        # headless word above d on the stack (after Unshift).
        if variant == MONOTONIC or variant == DOCUMENTS or variant == TREE or wd < 0:
            return False
        return wh == IN_BUFFER or (variant == UNSHIFT and wh > wd and s.heads[h] == -1)
    if wd == IN_BUFFER or wh == IN_BUFFER:
        return True
    # Both on the stack.
    if variant == MONOTONIC or variant == DOCUMENTS:
        return False
    if variant == NM2013:
        # Reduce attaches d to the word right below it, with the noted label.
        return wh == wd - 1 and label_error(gold, h, d, noted_labels(s)[d]) == 0
    # By Unshift of the upper one, if it is headless.
    upper = h if wh > wd else d
    return s.heads[upper] == -1


cdef int arc_eager_loss(const StateC* s, const GoldC* gold, int variant, int* scratch) noexcept nogil:
    """Gold arcs that can no longer be built, plus built gold arcs with a
    wrong label. scratch: 2 * (n + 1) ints."""
    cdef int n = s.n, k, d, h, w, depth = stack_depth(s), headless = 0, loss = 0
    cdef int* where = scratch
    cdef int* headless_below = scratch + (n + 1)
    for k in range(n + 1):
        where[k] = REDUCED
    for k in range(depth):
        w = stack_at(s, k)
        where[w] = k
        headless_below[k] = headless
        if s.heads[w] == -1:
            headless += 1
    for k in range(buffer_length(s)):
        where[B(s, k)] = IN_BUFFER
    for d in range(1, n + 1):
        h = gold.heads[d]
        if h == 0:
            # The root must end headless and be the first headless word; in
            # the monotonic system a headless word below it on the stack
            # stays headless; in arc_eager_nm2013 it must be the stack's
            # bottom word (everything above gets a head). In arc_eager_break
            # the same holds within a sentence (the stack since the last
            # Break), and a Break that closed d's sentence made it its root
            # (head 0) or attached it.
            if s.heads[d] == 0 and variant == DOCUMENTS:
                pass
            elif s.heads[d] != -1:
                loss += 1
            elif ((variant == MONOTONIC or variant == DOCUMENTS) and where[d] >= 0
                    and headless_below[where[d]] > 0):
                loss += 1
            elif variant == NM2013 and where[d] > 0:
                loss += 1
        elif s.heads[d] == h:
            loss += label_error(gold, h, d, s.labels[d])
        elif not arc_buildable(s, gold, variant, where, h, d):
            loss += 1
    return loss


cdef inline void close_sentence(StateC* s) noexcept nogil:
    """Break: the stack's first headless word (bottom up is word order)
    becomes the sentence's root, every other headless one is attached to it
    with label -1; then the stack is popped."""
    cdef int k, root = -1
    for k in range(stack_depth(s)):
        join_sentence(s, stack_at(s, k), &root)
    while stack_depth(s) > 0:
        pop(s)


cdef inline void join_sentence(StateC* s, int w, int* root) noexcept nogil:
    """The sentence rule, word by word in word order: a headless w becomes
    the root (head 0) if the sentence has none yet, else is attached to it
    with label -1."""
    if s.heads[w] != -1:
        return
    if root[0] == -1:
        root[0] = w
        s.heads[w] = 0
    else:
        s.heads[w] = root[0]
        s.labels[w] = -1


cdef bint crosses(const GoldC* gold, int b) noexcept nogil:
    """Whether a gold arc joins a word before b to one at b or after (then
    no sentence starts at b)."""
    cdef int d, h
    for d in range(1, gold.n + 1):
        h = gold.heads[d]
        if h > 0 and (d < b) != (h < b):
            return True
    return False


cdef inline bint is_repair(const StateC* s, int kind) noexcept nogil:
    """Whether the move of this kind is non-monotonic here: Unshift, or a
    Left-Arc that replaces a head."""
    cdef int s0 = S(s, 0)
    return s0 != -1 and s.heads[s0] != -1 if kind == LEFT_ARC else (
        kind == REDUCE and s0 != -1 and s.heads[s0] == -1)


cdef class ArcEager(TransitionSystem):
    name = "arc_eager"
    kinds = (("S", False), ("D", False), ("L", True), ("R", True))
    context_names = CONTEXT_NAMES
    projective = True
    # Section 2.2's exploration policy: always follow the predicted move
    # (k = 1, p = 1.0). The whole family trains so, as the paper's baselines
    # do, and as spaCy's parser does.
    follow_oracle_prob = 0.0
    _variant = MONOTONIC
    _loss_variant = MONOTONIC

    def __init__(self, labels=(), oracle=None, **options):
        TransitionSystem.__init__(self, labels, oracle, **options)
        self.variant = type(self)._variant
        self.loss_variant = type(self)._loss_variant

    def describe(self, ParseState state):
        return stack_buffer_fields(state.c)

    cdef int state_size(self, int n) noexcept nogil:
        return stack_buffer_size(n) + n + 1

    cdef int move_limit(self, int n) noexcept nogil:
        """Monotonic: each word is pushed and popped once; the non-monotonic
        variants: at most twice (module doc)."""
        return 2 * n if self.variant == MONOTONIC or self.variant == DOCUMENTS else 4 * n

    cdef int scratch_size(self, int n) noexcept nogil:
        # The loss's scratch, then a configuration to try moves on.
        return 2 * (n + 1) + 2 * (n + 1) + self.state_size(n)

    cdef void init_state(self, StateC* s) noexcept nogil:
        cdef int k
        init_stack_buffer(s, False)
        for k in range(s.n + 1):
            noted_labels(s)[k] = -1

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        if buffer_length(s) > 0:
            return False
        return self.variant == MONOTONIC or self.variant == DOCUMENTS or stack_depth(s) <= 1

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        # Validity does not depend on the label.
        cdef bint[MAX_KINDS] ok
        cdef int kind
        for kind in range(self.n_kinds):
            ok[kind] = self.is_valid_move(s, self.move_of(kind, 0))
        self.set_valid_by_kind(ok, is_valid)

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        cdef int kind = self.c_moves[move].kind, s0 = S(s, 0), b0 = B(s, 0)
        if kind == SHIFT:
            if self.variant == TREE or self.variant == UNSHIFT:
                word_flags(s)[b0] |= FLAG_SHIFTED
            push(s)
        elif kind == REDUCE:
            if s.heads[s0] != -1:
                pop(s)
            elif self.variant == NM2013:
                s.heads[s0] = S(s, 1)
                s.labels[s0] = noted_labels(s)[s0]
                pop(s)
            else:
                unshift(s)
        elif kind == LEFT_ARC:
            s.heads[s0] = b0
            s.labels[s0] = self.c_moves[move].label
            pop(s)
        elif kind == RIGHT_ARC:
            s.heads[b0] = s0
            s.labels[b0] = self.c_moves[move].label
            push(s)
        else:
            # Break: nothing on the stack takes another dependent.
            close_sentence(s)

    cdef void apply_scored(self, StateC* s, int move, const float* scores) noexcept nogil:
        cdef int m, best = -1
        if (self.variant == NM2013 and scores != NULL
                and self.c_moves[move].kind == SHIFT):
            for m in range(self.move_of(RIGHT_ARC, 0), self.n_moves):
                if best == -1 or scores[m] > scores[best]:
                    best = m
            noted_labels(s)[B(s, 0)] = self.c_moves[best].label if best != -1 else -1
        self.apply(s, move)

    cdef int loss_of(self, const StateC* s, const GoldC* gold, int variant,
                     int* scratch) noexcept nogil:
        return arc_eager_loss(s, gold, self.loss_variant if variant == OWN_LOSS else variant,
                              scratch)

    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        return arc_eager_loss(s, gold, self.loss_variant, scratch)

    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* losses, int* scratch) noexcept nogil:
        self.set_valid(s, is_valid)
        self.set_costs_from_loss(s, gold, is_valid, losses, scratch, scratch + 2 * (s.n + 1),
                                 LEFT_ARC, RIGHT_ARC, S(s, 0), B(s, 0))

    cdef void adjust_targets(self, const StateC* s, const GoldC* gold, const int* is_valid,
                             float* costs, int* scratch) noexcept nogil:
        """The non-monotonic variants' tie-break."""
        cdef int m, kind
        cdef int s0 = S(s, 0), b0 = B(s, 0)
        cdef int[MAX_KINDS] mono_delta
        cdef bint monotonic_optimum = False
        cdef int* state_scratch = scratch + 2 * (s.n + 1)
        if self.variant == DOCUMENTS:
            self.break_at_boundaries(s, gold, is_valid, costs)
            return
        if self.variant != UNSHIFT and self.variant != NM2013:
            return
        # The tie-break of the non-monotonic variants: where a zero-cost move
        # is also optimal for the monotonic loss and repairs nothing, the
        # zero-cost moves that are not become non-targets.
        self.loss_deltas(s, gold, is_valid, MONOTONIC, mono_delta, scratch, state_scratch,
                         LEFT_ARC, RIGHT_ARC, s0, b0)
        for m in range(self.n_moves):
            kind = self.c_moves[m].kind
            if (is_valid[m] and costs[m] == 0 and mono_delta[kind] <= 0
                    and not is_repair(s, kind)):
                monotonic_optimum = True
        if not monotonic_optimum:
            return
        for m in range(self.n_moves):
            kind = self.c_moves[m].kind
            if (is_valid[m] and costs[m] == 0
                    and (mono_delta[kind] > 0 or is_repair(s, kind))):
                costs[m] = 1.0

    cdef void break_at_boundaries(self, const StateC* s, const GoldC* gold,
                                  const int* is_valid, float* costs) noexcept nogil:
        """arc_eager_break's tie-break: where B0 starts a gold sentence,
        Break (which then costs nothing) is the only target; elsewhere Break
        is not a target while another move costs nothing. The loss counts
        arcs only, so it would let the parser Shift a next sentence's first
        word that is not its root and Break later, or Break inside a
        sentence whose arcs across the cut are already lost; both put a
        boundary where the gold has none."""
        cdef int m, brk = self.move_of(BREAK, -1)
        cdef bint boundary, other = False
        if not is_valid[brk] or costs[brk] != 0:
            return
        boundary = not crosses(gold, B(s, 0))
        for m in range(self.n_moves):
            if m != brk and is_valid[m] and costs[m] == 0:
                other = True
                if boundary:
                    costs[m] = 1.0
        if other and not boundary:
            costs[brk] = 1.0

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        cdef int s0 = S(s, 0), b0 = B(s, 0), k, w, m
        cdef int[N_KINDS] preference
        if self.is_final(s):
            return -1
        if s0 != -1 and b0 != -1:
            if gold.heads[s0] == b0:
                return self.move_of(LEFT_ARC, gold.labels[s0])
            if gold.heads[b0] == s0:
                return self.move_of(RIGHT_ARC, gold.labels[b0])
        if s0 != -1 and s.heads[s0] != -1:
            if b0 == -1:
                return self.move_of(REDUCE, -1)
            for k in range(stack_depth(s) - 1):
                w = stack_at(s, k)
                if gold.heads[w] == b0 or gold.heads[b0] == w:
                    return self.move_of(REDUCE, -1)
        if b0 == -1:
            return self.move_of(REDUCE, -1)     # Unshift
        if self.variant == DOCUMENTS and s0 != -1 and not crosses(gold, b0):
            return self.move_of(BREAK, -1)
        m = self.move_of(SHIFT, -1)
        if self.is_valid_move(s, m):
            return m
        # Off a projective gold path (a non-projective gold tree): any
        # valid move, so that the run still ends.
        preference[0] = self.move_of(REDUCE, -1)
        preference[1] = self.move_of(RIGHT_ARC, gold.labels[b0])
        preference[2] = self.move_of(LEFT_ARC, gold.labels[s0] if s0 != -1 else -1)
        preference[3] = m
        for k in range(N_KINDS):
            if self.is_valid_move(s, preference[k]):
                return preference[k]
        return -1

    cdef bint is_valid_move(self, const StateC* s, int move) noexcept nogil:
        cdef int kind = self.c_moves[move].kind, s0 = S(s, 0), b0 = B(s, 0)
        cdef int depth = stack_depth(s)
        if self.is_final(s):
            return False
        if kind == BREAK:
            return s0 != -1 and b0 != -1
        if kind == SHIFT:
            return b0 != -1 and (self.variant == MONOTONIC or self.variant == DOCUMENTS
                                 or self.variant == NM2013
                                 or depth == 0 or not (word_flags(s)[b0] & FLAG_SHIFTED))
        if kind == RIGHT_ARC:
            return s0 != -1 and b0 != -1
        if kind == LEFT_ARC:
            return (s0 != -1 and b0 != -1
                    and (self.variant == UNSHIFT or self.variant == NM2013 or s.heads[s0] == -1))
        if s0 == -1:
            return False
        if s.heads[s0] != -1:
            return True
        # A headless S0: Unshift, or arc_eager_nm2013's attaching Reduce.
        if self.variant == MONOTONIC or self.variant == DOCUMENTS or depth < 2:
            return False
        return self.variant != TREE or b0 == -1

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        set_stack_buffer_context(s, ids)

    cdef void finish(self, StateC* s) noexcept nogil:
        cdef int k, root
        if self.variant != DOCUMENTS:
            TransitionSystem.finish(self, s)
            return
        # The sentences Break closed have their roots (head 0); the headless
        # words left form the last sentence, under the first of them.
        root = -1
        for k in range(1, s.n + 1):
            join_sentence(s, k, &root)


cdef class ArcEagerTree(ArcEager):
    name = "arc_eager_tree"
    _variant = TREE
    _loss_variant = MONOTONIC


cdef class ArcEagerNM2013(ArcEager):
    name = "arc_eager_nm2013"
    _variant = NM2013
    _loss_variant = NM2013


cdef class ArcEagerBreak(ArcEager):
    name = "arc_eager_break"
    kinds = ArcEager.kinds + (("B", False),)
    decides_sentences = True
    _variant = DOCUMENTS
    _loss_variant = DOCUMENTS


cdef class ArcEagerUnshift(ArcEager):
    name = "arc_eager_unshift"
    _variant = UNSHIFT
    _loss_variant = UNSHIFT
