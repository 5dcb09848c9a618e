# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Arc-hybrid (mh3) and its mildly non-projective extension (mh4), on the
shared stack/buffer configuration (stack_buffer.pxd) with the root node 0 at
the bottom of the stack and the words 1..n in the buffer. Both are monotonic:
a word gets its head exactly when it leaves the stack, and no arc is ever
removed. Papers: M. Kuhlmann, C. Gómez-Rodríguez and G. Satta (2011),
*Dynamic programming algorithms for transition-based dependency parsers*
(arc-hybrid); Y. Goldberg and J. Nivre (2013), *Training deterministic
parsers with non-deterministic oracles* (its dynamic oracle); C.
Gómez-Rodríguez, T. Shi and L. Lee (2018), *Global transition-based
non-projective dependency parsing*, section 3.2 (mh4).

The moves, in the paper's notation (σ the stack, its top on the right; β the
buffer, its front on the left; h → d an arc from head h to dependent d):

  sh:   (σ, h4|β)          ⊢ (σ|h4, β)
  la:   (σ|h3, h4|β)       ⊢ (σ, h4|β)       + h4 → h3     B0 -> S0, pop S0
  ra:   (σ|h2|h3, β)       ⊢ (σ|h2, β)       + h2 → h3     S1 -> S0, pop S0
  la':  (σ|h2|h3, h4|β)    ⊢ (σ|h3, h4|β)    + h3 → h2     S0 -> S1, remove S1
  ra':  (σ|h1|h2|h3, β)    ⊢ (σ|h1|h3, β)    + h1 → h2     S2 -> S1, remove S1
  la2:  (σ|h2|h3, h4|β)    ⊢ (σ|h3, h4|β)    + h4 → h2     B0 -> S1, remove S1
  ra2:  (σ|h1|h2|h3, β)    ⊢ (σ|h1|h2, β)    + h1 → h3     S2 -> S0, pop S0

mh3 is arc-hybrid: sh, la, ra (kinds S, LA-<label>, RA-<label>). mh4 adds
la', ra', la2, ra2 (kinds LA'-, RA'-, LA2-, RA2-<label>): four projective
reduces and two non-adjacent ones (la2, ra2).

la' and the end of the buffer. In the paper's item semantics a computation
ends in (σ|0, n+1|β'): the buffer always ends with the position n + 1 of the
goal item [0, n + 1]. la' only reads that some buffer position h4 exists, so
it is valid with no word left in the buffer (h4 = n + 1); la and la2, whose
head is h4, need a word. Requiring a word for la' too would leave out trees
the MH4 chart covers (3 words already: 2 -> 1, 0 -> 2, 1 -> 3, which the
chart builds with Link 2 -> 1 in the item [0, 1, 2, 4]): on the Gothic
training set mh4 would rebuild 91.6% of the sentences instead of 98.8%,
below the chart's 97.25% (the paper's Table 3).

Node 0 and the root. Node 0 is never a dependent (la, la', la2, ra' need the
dependent to be a word). It is a head only by ra, and only once the buffer is
empty: ra' and ra2 never take node 0 as head. So exactly one word is attached
to node 0, the last one left on the stack above it, and a run ends (final)
with an empty buffer and only node 0 on the stack: every word has a head and
the tree is single-rooted without the base class's `finish` rule (which
repairs only configurations that did not reach the end). No single-rooted
tree is lost by this: in any computation that builds a tree, the root's arc
is the last one (once the root has left the stack with all its dependents,
no word can still be waiting for a head).

Termination: sh moves a buffer word to the stack and every reduce removes a
stack word, giving it its head; nothing goes back. Every run from the initial
configuration makes exactly 2n moves (`max_moves(n)`), whatever the model
predicts, and every non-final configuration has a valid move (sh while the
buffer has words, then ra).

Which arcs a configuration can still build, one at a time. The stack is
always in word order and the buffer is always the words B0..n; a word is on
the stack, in the buffer, or reduced (with its head). A gold arc h -> d whose
dependent d has no head yet is
  - lost if h is reduced;
  - reachable if d or h is in the buffer (both systems);
  - mh3, both on the stack: reachable iff h is right below d;
  - mh4, both on the stack: reachable (the words between are removed by la'
    under the upper one, then ra or la' builds the arc; node 0 as head: ra
    at the end).
`loss` counts the built arcs that are wrong (head or label) plus the gold arcs
of headless words that are not reachable in this sense (tests/test_hybrid.py
checks it against a search for each arc in the reference).

Oracles, chosen by `oracle`:

mh3, "dynamic" (the default): the arc-hybrid dynamic oracle of Goldberg &
Nivre (2013). Arc-hybrid is arc-decomposable for projective trees, so `loss`
is the exact loss (the least number of wrong words of any completion) on
projective gold trees, and a move's cost, the loss it adds plus its label's
error, is the exact loss increase: the zero-cost moves are exactly the
optimal ones. The root rule does not change this (tests/test_hybrid.py checks
the loss and every cost against exhaustive search). On non-projective gold
trees (a component trained with `projectivize = "none"`) `loss` is a lower
bound of the true loss: on random walks over random non-projective trees of
3-8 words it is below the exact loss in 45% of the configurations and 12%
have no zero-cost move, but no zero-cost move lost an arc.

mh3 and mh4, "static" (mh4's default): the first valid reduce, in the order
la, ra, la', ra', la2, ra2, that builds a gold arc whose dependent has all
its gold dependents; else sh (the gold-path move). Taking such a reduce
never makes the gold tree unreachable: a gold computation reduces that word
to that head later, and doing it earlier only turns the moves it stood
between into shorter ones (ra' into ra, la2 into la, ra2 into ra). Where no
such reduce is valid, every gold computation shifts. So the oracle builds
every tree the system can build: every projective tree in mh3; in mh4 more
than the MH4 chart covers, e.g. the example tree of section 3.2, by the
paper's computation.
  For a tree the system cannot build (mh3: non-projective, with
projectivize "none"; mh4: beyond its coverage, and the component trains
non-projective systems on the original trees), the sequence is a best effort
that still ends in a final configuration, in 2n moves. A word counts as having
all its dependents when the missing ones can no longer be attached to it (not
reachable, above), so the oracle goes on reducing words to their gold heads.
Where the gold-path move would add to `loss` (the lower bound above), or
there is none (an empty buffer and no such reduce), it takes the valid move
that adds least to `loss` instead (ties: the gold-path move, then kind order;
arcs with the dependent's gold label). The arcs of the tree that cannot be
built come out as attachments to another word on the stack, with their gold
labels. On the UD 2.0 training sets the oracle rebuilds, mh4: 98.8% of the
sentences and 99.7% of the arcs of Gothic-PROIEL, 99.0% and 99.9% of
Hungarian-Szeged, 95.5% and 99.0% of Latin-Perseus; mh3: every projective
sentence (78.4%, 79.0%, 59.0%) and 96.5%, 98.3% and 93.1% of the arcs.

mh4, "dynamic": no exact dynamic oracle is known for MH4 (it is not
arc-decomposable: arcs that can each still be built may not all be). The
costs come from `loss`, a lower bound of the true loss, checked against
exhaustive search. On random walks over random trees of up to 8 words it is
below the exact loss in 13% of the configurations for non-projective trees
(0.1% for projective ones), and 2.9% of the zero-cost moves lose an arc
(0.8%); tests/test_hybrid.py prints the counts. It is there for trying error
exploration; "static" is the default.

Context: the eight slots of spaCy's parser, as the arc-eager family (S0, S1,
S2, B0, B1, S0L, S0R, B0L). The paper's local MH4 models need {s1, s0, b0}
and gain nothing from s2; with the component's window encoders the outer
dependents help as in spaCy's parser, and S2 is the head of ra' and ra2.
"""
from libc.stdlib cimport malloc, free
from cymem.cymem cimport Pool
from .base cimport (StateC, GoldC, TransitionSystem, ParseState, MAX_KINDS, INVALID_COST,
                    label_error, copy_state)
from .stack_buffer cimport (stack_buffer_size, stack_depth, buffer_length, S, B, stack_at,
                            init_stack_buffer, push, pop, push_word, set_stack_buffer_context)
from .stack_buffer import CONTEXT_NAMES


cdef inline int stack_index(const StateC* s, int w) noexcept nogil:
    """Index of stack word w from the bottom (the stack is in word order), -1
    if w is not on the stack."""
    cdef int lo = 0, hi = stack_depth(s) - 1, mid, v
    while lo <= hi:
        mid = (lo + hi) // 2
        v = stack_at(s, mid)
        if v == w:
            return mid
        if v < w:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


cdef inline bint in_buffer(const StateC* s, int k) noexcept nogil:
    """The buffer is always the words B0..n."""
    return buffer_length(s) > 0 and k >= B(s, 0)


cdef inline bint is_present(const StateC* s, int k) noexcept nogil:
    """On the stack or in the buffer (not reduced): node 0, or headless."""
    return k == 0 or s.heads[k] == -1


cdef bint reachable(const StateC* s, bint four_heads, int h, int d) noexcept nogil:
    """Whether the arc h -> d, d headless, can still be built by itself (see
    the module doc)."""
    if not is_present(s, h):
        return False
    if four_heads or in_buffer(s, d) or in_buffer(s, h):
        return True
    # mh3, both on the stack.
    return h < d and stack_index(s, d) - stack_index(s, h) == 1


cdef int hybrid_loss(const StateC* s, const GoldC* gold, bint four_heads) noexcept nogil:
    """Wrong built arcs (head or label) plus gold arcs of headless words that
    are no longer reachable."""
    cdef int d, h, loss = 0
    for d in range(1, s.n + 1):
        h = gold.heads[d]
        if s.heads[d] != -1:
            if s.heads[d] != h:
                loss += 1
            else:
                loss += label_error(gold, h, d, s.labels[d])
        elif h >= 0 and not reachable(s, four_heads, h, d):
            loss += 1
    return loss


cdef class ArcHybrid(TransitionSystem):
    """What mh3 and mh4 share; `four_heads` switches on mh4's reduces and
    reachability."""
    name = "mh3"
    kinds = (("S", False), ("LA", True), ("RA", True))
    oracles = ("dynamic", "static")
    context_names = CONTEXT_NAMES
    projective = True
    exact_structure = "mh3_chart"
    _four_heads = False

    def __init__(self, labels=(), oracle=None, **options):
        TransitionSystem.__init__(self, labels, oracle, **options)
        self.four_heads = type(self)._four_heads

    def describe(self, ParseState state):
        cdef const StateC* s = state.c
        return {"stack": [stack_at(s, k) for k in range(stack_depth(s))],
                "buffer": [B(s, k) for k in range(buffer_length(s))]}

    cdef int move_limit(self, int n) noexcept nogil:
        """Exactly 2n: every word is shifted once and reduced once."""
        return 2 * n

    cdef int state_size(self, int n) noexcept nogil:
        return stack_buffer_size(n)

    cdef int scratch_size(self, int n) noexcept nogil:
        # A configuration to try moves on.
        return 2 * (n + 1) + self.state_size(n)

    cdef void init_state(self, StateC* s) noexcept nogil:
        init_stack_buffer(s, True)

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return buffer_length(s) == 0 and stack_depth(s) <= 1

    cdef bint is_valid_kind(self, const StateC* s, int kind) noexcept nogil:
        cdef int depth = stack_depth(s), blen = buffer_length(s)
        if kind == MH_SHIFT:
            return blen > 0
        if kind == MH_LA:
            return blen > 0 and depth >= 2
        if kind == MH_RA:
            return depth >= 2 and (depth >= 3 or blen == 0)
        if kind == MH_LA1:
            return depth >= 3
        if kind == MH_LA2:
            return blen > 0 and depth >= 3
        # ra' and ra2: s2 is the head, never node 0.
        return depth >= 4

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        # Validity does not depend on the label.
        cdef bint[MH_KINDS] ok
        cdef int kind
        for kind in range(self.n_kinds):
            ok[kind] = self.is_valid_kind(s, kind)
        self.set_valid_by_kind(ok, is_valid)

    cdef void arc_of(self, const StateC* s, int kind, int* head, int* dep) noexcept nogil:
        """The arc a reduce of this kind builds (-1, -1 for sh)."""
        if kind == MH_LA:
            head[0] = B(s, 0)
            dep[0] = S(s, 0)
        elif kind == MH_RA:
            head[0] = S(s, 1)
            dep[0] = S(s, 0)
        elif kind == MH_LA1:
            head[0] = S(s, 0)
            dep[0] = S(s, 1)
        elif kind == MH_RA1:
            head[0] = S(s, 2)
            dep[0] = S(s, 1)
        elif kind == MH_LA2:
            head[0] = B(s, 0)
            dep[0] = S(s, 1)
        elif kind == MH_RA2:
            head[0] = S(s, 2)
            dep[0] = S(s, 0)
        else:
            head[0] = -1
            dep[0] = -1

    cdef void apply_kind(self, StateC* s, int kind, int label) noexcept nogil:
        cdef int head = -1, dep = -1, s0
        if kind == MH_SHIFT:
            push(s)
            return
        self.arc_of(s, kind, &head, &dep)
        s.heads[dep] = head
        s.labels[dep] = label
        if kind == MH_LA or kind == MH_RA or kind == MH_RA2:
            pop(s)
        else:
            # la', ra', la2: remove s1 from under s0.
            s0 = S(s, 0)
            pop(s)
            pop(s)
            push_word(s, s0)

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        self.apply_kind(s, self.c_moves[move].kind, self.c_moves[move].label)

    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        return hybrid_loss(s, gold, self.four_heads)

    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* costs, int* scratch) noexcept nogil:
        """A move's loss: the loss its kind adds (applied with label 0, less
        that label's error) plus its own label's error."""
        cdef int n = s.n, m, kind, base
        cdef int[MAX_KINDS] delta
        cdef int[MAX_KINDS] heads
        cdef int[MAX_KINDS] deps
        cdef StateC tmp
        tmp.heads = scratch
        tmp.labels = scratch + (n + 1)
        tmp.data = scratch + 2 * (n + 1)
        self.set_valid(s, is_valid)
        base = hybrid_loss(s, gold, self.four_heads)
        for kind in range(self.n_kinds):
            delta[kind] = 0
            self.arc_of(s, kind, &heads[kind], &deps[kind])
            if not self.is_valid_kind(s, kind):
                continue
            copy_state(&tmp, s)
            self.apply_kind(&tmp, kind, 0)
            delta[kind] = hybrid_loss(&tmp, gold, self.four_heads) - base
            if kind != MH_SHIFT:
                delta[kind] -= label_error(gold, heads[kind], deps[kind], 0)
        for m in range(self.n_moves):
            if not is_valid[m]:
                costs[m] = INVALID_COST
                continue
            kind = self.c_moves[m].kind
            costs[m] = delta[kind]
            if kind != MH_SHIFT:
                costs[m] += label_error(gold, heads[kind], deps[kind], self.c_moves[m].label)

    cdef bint dependents_done(self, const StateC* s, const GoldC* gold, int d) noexcept nogil:
        """Whether no gold dependent of d can still be attached to it: each
        has its head, or d -> k is no longer reachable."""
        cdef int k
        for k in range(1, s.n + 1):
            if (gold.heads[k] == d and s.heads[k] == -1
                    and reachable(s, self.four_heads, d, k)):
                return False
        return True

    cdef int init_gold(self, Pool mem, GoldC* gold) except -1:
        # Room for one configuration, where the static oracle tries moves.
        gold.extra = mem.alloc(max(1, self.scratch_size(gold.n)), sizeof(int))
        return 0

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        """The gold-path move (a reduce building a gold arc whose dependent
        has its dependents, else sh); where it would add to `loss` (only off
        the gold path, for a tree the system cannot build) or there is none,
        the valid move that adds least, the gold-path move first on ties,
        then in kind order, arcs with their dependent's gold label."""
        cdef int kind, head = -1, dep = -1, preferred = -1, best = -1, cost, best_cost = 0, base
        cdef int* scratch = <int*>gold.extra
        cdef bint own = scratch == NULL
        if self.is_final(s):
            return -1
        for kind in range(1, self.n_kinds):
            if not self.is_valid_kind(s, kind):
                continue
            self.arc_of(s, kind, &head, &dep)
            if gold.heads[dep] == head and self.dependents_done(s, gold, dep):
                preferred = kind
                break
        if preferred == -1 and buffer_length(s) > 0:
            preferred = MH_SHIFT
        if own:
            scratch = <int*>malloc(max(1, self.scratch_size(s.n)) * sizeof(int))
            if scratch == NULL:
                return self.gold_move(s, gold, preferred if preferred != -1 else MH_RA)
        base = hybrid_loss(s, gold, self.four_heads)
        if preferred != -1 and self.kind_delta(s, gold, preferred, base, scratch) == 0:
            best = preferred
        else:
            for kind in range(self.n_kinds):
                if not self.is_valid_kind(s, kind):
                    continue
                cost = self.kind_delta(s, gold, kind, base, scratch)
                if (best == -1 or cost < best_cost
                        or (cost == best_cost and kind == preferred)):
                    best = kind
                    best_cost = cost
        if own:
            free(scratch)
        return self.gold_move(s, gold, best)

    cdef int gold_move(self, const StateC* s, const GoldC* gold, int kind) noexcept nogil:
        """The move of `kind` with its dependent's gold label (label 0 when
        the gold label is free)."""
        cdef int head = -1, dep = -1
        if kind == MH_SHIFT:
            return self.move_of(MH_SHIFT, -1)
        self.arc_of(s, kind, &head, &dep)
        return self.move_of(kind, gold.labels[dep])

    cdef int kind_delta(self, const StateC* s, const GoldC* gold, int kind, int base,
                        int* scratch) noexcept nogil:
        """What the move of `kind` with its dependent's gold label adds to
        `loss` (base: the loss of s). scratch: scratch_size(n) ints."""
        cdef StateC tmp
        tmp.heads = scratch
        tmp.labels = scratch + (s.n + 1)
        tmp.data = scratch + 2 * (s.n + 1)
        copy_state(&tmp, s)
        self.apply(&tmp, self.gold_move(s, gold, kind))
        return hybrid_loss(&tmp, gold, self.four_heads) - base

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        set_stack_buffer_context(s, ids)


cdef class MH3(ArcHybrid):
    name = "mh3"
    kinds = (("S", False), ("LA", True), ("RA", True))
    oracles = ("dynamic", "static")
    projective = True
    _four_heads = False


cdef class MH4(ArcHybrid):
    name = "mh4"
    kinds = (("S", False), ("LA", True), ("RA", True), ("LA'", True), ("RA'", True),
             ("LA2", True), ("RA2", True))
    oracles = ("static", "dynamic")
    projective = False
    exact_structure = "mh4_chart"
    _four_heads = True
