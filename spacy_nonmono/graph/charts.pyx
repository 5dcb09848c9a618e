# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Exact global decoding for MH3 and MH4 (Gómez-Rodríguez, Shi & Lee 2018).

The deduction system MH_k (paper Fig. 2; k = 3 or 4)
-----------------------------------------------------
Positions are 0..n+1: 0 the root node, 1..n the words, n+1 an end-of-buffer
sentinel. An item [h1, ..., hm] (2 <= m <= k, h1 < ... < hm) stands for a
forest of m dependency subtrees headed by h1, ..., hm whose yields are
disjoint and together make up the positions h1..hm: every other position in
between is already attached, inside one of these subtrees. Rules:

    Axiom    [0, 1]
    Shift    [h1..hm]  =>  [hm, hm+1]                    (hm <= n)
    Combine  [h1..hm] + [hm..hp]  =>  [h1..hp]           (p <= k)
    Link     [h1..hm]  =>  [h1..hm] without hj, arc hi -> hj
             (1 < j < m, i != j; n+1 is never a head, 0 never a dependent)
    Goal     [0, n+1]

Transition reading (paper section 3.2): an item [h1..hm] stands for the
computations that go from a configuration (sigma, h1|beta) to
(sigma|h1|...|h_{m-1}, hm|beta'); at its end s0 = h_{m-1}, s1 = h_{m-2},
s2 = h_{m-3} and b0 = hm. A Combine concatenates the two computations (the
right one begins with sh(hm), pushed onto s0 = h_{m-1}); a Link appends one
reduce transition:

    3-item [h1,h2,h3]:     la  h3 -> h2      ra  h1 -> h2
    4-item [h1,h2,h3,h4]:  la  h4 -> h3      ra  h2 -> h3
                           la' h3 -> h2      ra' h1 -> h2
                           la2 h4 -> h2      ra2 h1 -> h3

Transition indices t: 0 la, 1 ra, 2 la', 3 ra', 4 la2, 5 ra2 (MH3: 0 and 1).

How scores decompose (paper section 4.2)
----------------------------------------
The score of a computation is the sum of its transitions' scores:

- sh of hm, with s0 = h_{m-1}: ``sh_scores[s0, b0]``. Shift items score 0;
  the sh is scored by the Combine [..., h_{m-1}, hm] + [hm, ...] that puts
  it after the left computation. sh(0) is forced and unscored.
- a reduce t applied to an item: ``reduce_scores[t, s1, s0, b0]`` ("hybrid",
  a 4-d table) or ``reduce_scores[t, s0, b0]`` ("two", a 3-d table), with
  (s1, s0, b0) = (h1, h2, h3) of a 3-item and (h2, h3, h4) of a 4-item.
- optionally, arc scores: a reduce adding head -> dep also adds
  ``arc_scores[head, dep]``. With zero transition tables the chart is an
  arc-factored decoder over the trees MH_k derives (the structures
  ``mh3_arcs``/``mh4_arcs``: an ensemble's votes, an arc scorer's scores).
- cost augmentation (section 4.3): a reduce adding head -> dep also adds
  ``cost_weight * (gold_heads[dep - 1] != head)``. cost_weight = 1:
  loss-augmented decoding; cost_weight = -1e4: the best-scoring among the
  derivations with the most gold arcs (the "gold" derivation for training,
  the closest MH_k tree where gold is not an MH_k tree).

The chart keeps the best score (and a back-pointer) of every item: Viterbi
over the deduction system, so the result is the best of all computations
that MH_k's deduction system covers. That is less than the MH4 *transition
system* allows (the paper's section 3.2 example tree is built by the
transition system and by no derivation). With ``single_root=True`` arcs
from node 0 are only allowed as the last step, [0, x, n+1] => [0, n+1]: the
best computation whose tree has exactly one word attached to 0 (of those
the system covers).

Algorithm, time and memory
--------------------------
Items are finished in order of their right end d, then of their left end a
from right to left; for each (a, d): first the 4-items [a, b, c, d] (MH4),
then the 3-items [a, x, d], then the 2-item [a, d]. A 4-item is never an
antecedent of a Combine (the result would have more than 4 heads) and is
only linked into a 3-item with the same ends, so 4-items are never stored:
each is scored from its two Combines,

    [a,b] + [b,c,d] + sh(s0=a, b0=b)    or    [a,b,c] + [c,d] + sh(s0=b, b0=c),

and at once linked into [a, c, d] (drop b) and [a, b, d] (drop c). Time is
O(n^4) for MH4 (about n^4/24 4-items, each O(1)) and O(n^3) for MH3;
memory is O(n^3): the 3-items (C(n+2, 3) of them) twice, by (a, b) rows and
by (a, d) rows so that both inner-loop reads are contiguous, plus a
back-pointer each; the 2-items and per-d tables of the reduce scores (with
their a-independent costs folded in) are O(n^2). There is no dense
(n+2)^4 table, nor even a dense (n+2)^3 one. A ``Chart`` owns its buffers
and reuses them: they grow only when a longer sentence comes
(``buffer_bytes``, ``capacity``). Chart values are float64 (sums of the
float32 table entries and of the cost terms), so integer costs stay exact
and the best item value equals the events' sum up to float64 rounding.

docs/results/mh4/charts.md has the measured time and memory per length
(``benchmark()`` of benchmarks/charts_timing.py, in the repository) and the
length guard it recommends (150 words for MH4, the global decoder's default
``max_sentence_length``).

Ties are broken deterministically: of equal candidates the first one in the
loops' fixed order wins (Combine before Link; the left split before the
right one; lower dropped positions first; the transition order
ra' la' la2 and ra2 ra la for the 4-item links, la ra for the 3-item ones).
"""
import numpy
from libc.math cimport INFINITY
from libc.stdint cimport int64_t

cdef enum:
    SH = -1
    LA = 0
    RA = 1
    LA1 = 2     # la'
    RA1 = 3     # ra'
    LA2 = 4
    RA2 = 5

TRANSITIONS = ("la", "ra", "la'", "ra'", "la2", "ra2")
SHIFT = -1


cdef struct ChartData:
    int N                   # n + 2 positions
    int k
    int hybrid
    int t_last              # hybrid table laid out [((s1 * N + s0) * N + b0) * T + t]
    int T
    int single_root
    const float* sh         # [s0 * N + b0]
    const float* red        # hybrid [((t * N + s1) * N + s0) * N + b0]; two [(t * N + s0) * N + b0]
    const float* arc        # arc scores [head * N + dep]; NULL: none
    const int* gold         # gold[dep] = gold head of word dep (gold[0] unused); NULL: no cost
    double cost_weight
    const unsigned char* keep   # keep[head * N + dep]: the arc may be built; NULL: every arc
    # Pruned decoding's lists of live items (run_pruned), each in the
    # order it is filled:
    int* l2                 # [a * N + i]: the right ends d of the live 2-items [a, d]
    int* n2                 # [a]: their number
    int* l2t                # [d * N + i]: the left ends a of the live 2-items [a, d]
    int* n2t
    int* l3                 # [off_e[a * N + d] + i]: the x of the live 3-items [a, x, d]
    int* n3                 # [a * N + d]: their number
    int* stamp              # [b * N + c]: the d whose link tables' (b, c) entry is filled
    double* c2              # 2-items [a, d] at a * N + d
    double* c2t             # the same at d * N + a
    int* bp2                # back-pointer of [a, d]: -1 Shift; x * 8 + t: link from [a, x, d]
    double* c3f             # 3-items [a, b, c] at off_f[a * N + b] + c - b - 1
    double* c3e             # 3-items [a, c, d] at off_e[a * N + d] + c - a - 1
    int* bp3                # back-pointer, indexed as c3e: -1 Combine; (y * 8 + t) * 2 + split
    int64_t* off_f
    int64_t* off_e
    double* best3           # the 3-items [a, x, d] of the current (a, d), by x
    int* bpl
    double* cost_a          # cost of a -> c, by c (-inf where forbidden)
    double* q2              # per-d tables by b * N + c, for the links of [a, b, c, d]
    double* p2
    double* q3
    double* p3
    signed char* t2
    signed char* t3
    int* heads              # output, by word (heads[dep])
    int* events             # output, 4 ints per event
    int n_events
    double score_sum        # the model score of the traced events, in order
    double cost_sum
    unsigned char* reads    # NULL, or marks [(s1 * N + s0) * N + b0] the reduce entries read
    bint bad_score          # a reduce score read was NaN or +inf (pruned decoding checks
                            # the entries it reads instead of the whole table)


cdef inline double red_score(const ChartData* D, int t, int s1, int s0, int b0) noexcept nogil:
    cdef int64_t N = D.N
    if D.red == NULL:           # read_triples: no scores, every entry 0
        return 0.0
    if D.hybrid:
        if D.t_last:
            return D.red[((s1 * N + s0) * N + b0) * D.T + t]
        return D.red[((t * N + s1) * N + s0) * N + b0]
    return D.red[(t * N + s0) * N + b0]


cdef inline double red_read(ChartData* D, int t, int s1, int s0, int b0) noexcept nogil:
    """red_score, noting a NaN or +inf entry in bad_score (and the entry's
    triple in reads)."""
    cdef double v = red_score(D, t, s1, s0, b0)
    if D.reads != NULL:
        D.reads[(<int64_t> s1 * D.N + s0) * D.N + b0] = 1
    if not v < INFINITY:
        D.bad_score = True
    return v


cdef inline double arc_cost(const ChartData* D, int head, int dep) noexcept nogil:
    if D.gold != NULL and D.gold[dep] != head:
        return D.cost_weight
    return 0.0


cdef inline double arc_score(const ChartData* D, int head, int dep) noexcept nogil:
    if D.arc != NULL:
        return D.arc[head * D.N + dep]
    return 0.0


cdef inline double arc_term(const ChartData* D, int head, int dep) noexcept nogil:
    """What an arc adds besides its transition's score: its arc score and
    cost; -inf for an arc pruned away."""
    if D.keep != NULL and not D.keep[head * D.N + dep]:
        return -INFINITY
    return arc_score(D, head, dep) + arc_cost(D, head, dep)


cdef inline bint root_arc_ok(const ChartData* D, int head, int d) noexcept nogil:
    """With single_root, an arc from 0 only by the link [0, x, n+1] => [0, n+1]."""
    return not (D.single_root and head == 0 and d != D.N - 1)


cdef void set_offsets(ChartData* D) noexcept nogil:
    cdef int N = D.N
    cdef int a, b, d
    cdef int64_t total = 0
    for a in range(N):
        for b in range(a + 1, N):
            D.off_f[a * N + b] = total
            total += N - 1 - b
    total = 0
    for a in range(N):
        for d in range(a + 1, N):
            D.off_e[a * N + d] = total
            total += d - a - 1


cdef void set_2item(ChartData* D, int a, int d, double value, int bp) noexcept nogil:
    D.c2[a * D.N + d] = value
    D.c2t[d * D.N + a] = value
    D.bp2[a * D.N + d] = bp


cdef void link_2item(ChartData* D, int a, int d, const int* xs=NULL, int n_xs=0) noexcept nogil:
    """[a, d] from the 3-items [a, x, d] (their scores in best3): la (d -> x)
    or ra (a -> x), scored at (s1, s0, b0) = (a, x, d). xs: the x to try, in
    increasing order (pruned decoding's live ones); NULL: every x."""
    cdef int i, x, bp = -1
    cdef double best = 0.0, s
    cdef bint la_ok = d != D.N - 1
    cdef bint ra_ok = root_arc_ok(D, a, d)
    if xs == NULL:
        n_xs = d - a - 1
    for i in range(n_xs):
        x = a + 1 + i if xs == NULL else xs[i]
        if la_ok:
            s = D.best3[x] + red_read(D, LA, a, x, d) + arc_term(D, d, x)
            if bp < 0 or s > best:
                best = s
                bp = x * 8 + LA
        if ra_ok:
            s = D.best3[x] + red_read(D, RA, a, x, d) + arc_term(D, a, x)
            if bp < 0 or s > best:
                best = s
                bp = x * 8 + RA
    if bp < 0:
        best = -INFINITY
    set_2item(D, a, d, best, bp)


cdef void run_mh3(ChartData* D) noexcept nogil:
    cdef int N = D.N
    cdef int a, d, x
    for d in range(1, N):
        for a in range(d - 1, -1, -1):
            if d == a + 1:
                set_2item(D, a, d, 0.0, -1)
                continue
            # 3-items [a, x, d], only by Combine [a, x] + [x, d] + sh(a, x)
            for x in range(a + 1, d):
                D.best3[x] = D.c2[a * N + x] + D.sh[a * N + x] + D.c2t[d * N + x]
            link_2item(D, a, d)


cdef void fill_link_tables(ChartData* D, int d) noexcept nogil:
    """The links of 4-items [a, b, c, d] for this d, by (b, c): the score of
    each transition at (s1, s0, b0) = (b, c, d) plus its cost, with the
    a-independent choices made here (p2: la' or la2, dropping b; p3: ra or
    la, dropping c) and the a-dependent ones left for the inner loop (q2:
    ra' a -> b; q3: ra2 a -> c, their cost added there)."""
    cdef int b, c
    for b in range(1, d - 1):
        for c in range(b + 1, d):
            fill_link_entry(D, b, c, d)


cdef inline void fill_link_entry(ChartData* D, int b, int c, int d) noexcept nogil:
    """fill_link_tables for one (b, c). n + 1 heads nothing: no la2 or la
    into it (their scores are not read)."""
    cdef int i = b * D.N + c
    cdef bint head_d = d != D.N - 1
    D.q2[i] = red_read(D, RA1, b, c, d)
    keep_better(&D.p2[i], &D.t2[i], LA1, red_read(D, LA1, b, c, d) + arc_term(D, c, b),
                LA2, red_read(D, LA2, b, c, d) + arc_term(D, d, b) if head_d else -INFINITY)
    D.q3[i] = red_read(D, RA2, b, c, d)
    keep_better(&D.p3[i], &D.t3[i], RA, red_read(D, RA, b, c, d) + arc_term(D, b, c),
                LA, red_read(D, LA, b, c, d) + arc_term(D, d, c) if head_d else -INFINITY)


cdef inline void keep_better(double* p, signed char* t, int t1, double s1, int t2,
                             double s2) noexcept nogil:
    """p, t = s1, t1, or s2, t2 where s2 is higher (ties to the first)."""
    p[0] = s1
    t[0] = t1
    if s2 > s1:
        p[0] = s2
        t[0] = t2


cdef void mh4_pair(ChartData* D, int a, int d) noexcept nogil:
    """The 3-items [a, x, d] and the 2-item [a, d], given every item with a
    right end below d or with right end d and left end above a."""
    cdef int N = D.N
    cdef int b, c, x, split, t, tp, bp_b
    cdef bint better
    cdef double p, q
    cdef const double* cost_a = D.cost_a
    cdef double left, x0, x1, v4, r, s, best_b, cost_ab
    cdef const double* erow
    cdef const double* frow
    cdef const float* shb
    cdef const double* c2d = D.c2t + d * N
    cdef const double* q2
    cdef const double* p2
    cdef const double* q3
    cdef const double* p3
    cdef const signed char* t2
    cdef const signed char* t3
    cdef double* best3 = D.best3
    cdef int* bpl = D.bpl
    cdef int64_t row

    # Combine [a, x] + [x, d] + sh(s0=a, b0=x)
    for x in range(a + 1, d):
        best3[x] = D.c2[a * N + x] + D.sh[a * N + x] + c2d[x]
        bpl[x] = -1
    # ra' and ra2 attach to a; with single_root never to 0: the 3-item they
    # leave, [0, x, d], keeps a word x whose only possible head is 0 again.
    for c in range(a + 1, d):
        D.cost_a[c] = -INFINITY if D.single_root and a == 0 else arc_term(D, a, c)

    for b in range(a + 1, d - 1):
        left = D.c2[a * N + b] + D.sh[a * N + b]
        erow = D.c3e + D.off_e[b * N + d] - (b + 1)      # erow[c]: [b, c, d]
        frow = D.c3f + D.off_f[a * N + b] - (b + 1)      # frow[c]: [a, b, c]
        shb = D.sh + b * N                               # shb[c]: sh(s0=b, b0=c)
        q2 = D.q2 + b * N
        p2 = D.p2 + b * N
        q3 = D.q3 + b * N
        p3 = D.p3 + b * N
        t2 = D.t2 + b * N
        t3 = D.t3 + b * N
        cost_ab = D.cost_a[b]
        best_b = best3[b]
        bp_b = bpl[b]
        for c in range(b + 1, d):
            # the 4-item [a, b, c, d]
            # (written with conditional expressions, which compile to
            # branch-free selects: these comparisons are coin flips)
            x0 = left + erow[c]
            x1 = frow[c] + shb[c] + c2d[c]
            split = x1 > x0
            v4 = x1 if split else x0
            # drop b (ra' a -> b, la' c -> b, la2 d -> b): [a, c, d]
            q = q2[c] + cost_ab
            p = p2[c]
            tp = t2[c]
            better = p > q
            r = p if p > q else q
            t = RA1 + better * (tp - RA1)
            s = v4 + r
            if s > best3[c]:
                best3[c] = s
                bpl[c] = (b * 8 + t) * 2 + split
            # drop c (ra2 a -> c, ra b -> c, la d -> c): [a, b, d]
            q = q3[c] + cost_a[c]
            p = p3[c]
            tp = t3[c]
            better = p > q
            r = p if p > q else q
            t = RA2 + better * (tp - RA2)
            s = v4 + r
            if s > best_b:
                best_b = s
                bp_b = (c * 8 + t) * 2 + split
        best3[b] = best_b
        bpl[b] = bp_b

    row = D.off_e[a * N + d] - (a + 1)
    for x in range(a + 1, d):
        D.c3e[row + x] = best3[x]
        D.bp3[row + x] = bpl[x]
        D.c3f[D.off_f[a * N + x] + d - x - 1] = best3[x]
    link_2item(D, a, d)


cdef void run_mh4(ChartData* D) noexcept nogil:
    cdef int N = D.N
    cdef int a, d
    for d in range(1, N):
        if d >= 3:
            fill_link_tables(D, d)
        for a in range(d - 1, -1, -1):
            if d == a + 1:
                set_2item(D, a, d, 0.0, -1)
            else:
                mh4_pair(D, a, d)


# -- pruned decoding ---------------------------------------------------------------
#
# With a keep mask, most items are dead (-inf): no computation builds them
# from kept arcs. The pruned runs finish the same items in the same order as
# run_mh3 / run_mh4 but enumerate only combinations of live antecedents, read
# from lists of live items, so that their work follows the live items (about
# n^2 of them with a few heads kept per word) instead of n^4 (n^3 for MH3).
# Values are those of the full chart with the pruned arcs at -inf; among
# equal-scoring computations the one kept may differ (the enumeration order
# differs).

cdef inline void add_live_2item(ChartData* D, int a, int d) noexcept nogil:
    cdef int N = D.N
    D.l2[a * N + D.n2[a]] = d
    D.n2[a] += 1
    D.l2t[d * N + D.n2t[d]] = a
    D.n2t[d] += 1


cdef void start_pruned(ChartData* D) noexcept nogil:
    cdef int i
    for i in range(D.N):
        D.n2[i] = 0
        D.n2t[i] = 0
    if D.k == 4:
        for i in range(D.N * D.N):
            D.stamp[i] = -1


cdef void combine_live(ChartData* D, int a, int d) noexcept nogil:
    """best3[x] for x in (a, d): the Combines [a, x] + [x, d] + sh(a, x) of
    live 2-items, -inf elsewhere."""
    cdef int N = D.N
    cdef int i, x
    for x in range(a + 1, d):
        D.best3[x] = -INFINITY
        D.bpl[x] = -1
    for i in range(D.n2[a]):
        x = D.l2[a * N + i]
        if x >= d:
            break
        if D.c2[x * N + d] > -INFINITY:
            D.best3[x] = D.c2[a * N + x] + D.sh[a * N + x] + D.c2[x * N + d]


cdef inline void link_4item(ChartData* D, int a, int b, int c, int d, double v4,
                            int split) noexcept nogil:
    """Link the 4-item [a, b, c, d] of value v4 (split: which Combine built
    it) into [a, c, d] and [a, b, d], reading the per-d link tables and
    cost_a as mh4_pair does (the same choices, ties alike)."""
    cdef int i = b * D.N + c
    if D.stamp[i] != d:         # the link tables' entry of (b, c), filled on first use
        fill_link_entry(D, b, c, d)
        D.stamp[i] = d
    # drop b (ra' a -> b, or the better of la' and la2): [a, c, d]
    link_into(D, c, b, v4, D.q2[i] + D.cost_a[b], D.p2[i], D.t2[i], RA1, split)
    # drop c (ra2 a -> c, or the better of ra and la): [a, b, d]
    link_into(D, b, c, v4, D.q3[i] + D.cost_a[c], D.p3[i], D.t3[i], RA2, split)


cdef inline void link_into(ChartData* D, int x, int y, double v4, double q, double p, int tp,
                           int tq, int split) noexcept nogil:
    """The 3-item that keeps x and drops y from a 4-item of value v4: the
    link of score p (transition tp) where it beats q (transition tq)."""
    cdef double s = v4 + (p if p > q else q)
    cdef int t = tp if p > q else tq
    if s > D.best3[x]:
        D.best3[x] = s
        D.bpl[x] = (y * 8 + t) * 2 + split


cdef void mh4_pair_pruned(ChartData* D, int a, int d) noexcept nogil:
    """mh4_pair over live antecedents: the 4-items [a, b] + [b, c, d] for
    live [a, b] and [b, c, d], then [a, b, c] + [c, d] for live [c, d] and
    [a, b, c]."""
    cdef int N = D.N
    cdef int i, j, b, c, x, n_live = 0
    cdef int64_t base, row
    cdef double left, right
    combine_live(D, a, d)
    for x in range(a + 1, d):
        D.cost_a[x] = -INFINITY if D.single_root and a == 0 else arc_term(D, a, x)
    for i in range(D.n2[a]):
        b = D.l2[a * N + i]
        if b >= d - 1:
            break
        left = D.c2[a * N + b] + D.sh[a * N + b]
        base = D.off_e[b * N + d]
        for j in range(D.n3[b * N + d]):
            c = D.l3[base + j]
            link_4item(D, a, b, c, d, left + D.c3e[base + c - b - 1], 0)
    for i in range(D.n2t[d]):
        c = D.l2t[d * N + i]
        if c < a + 2:
            continue
        right = D.c2[c * N + d]
        base = D.off_e[a * N + c]
        for j in range(D.n3[a * N + c]):
            b = D.l3[base + j]
            link_4item(D, a, b, c, d, D.c3e[base + b - a - 1] + D.sh[b * N + c] + right, 1)
    base = D.off_e[a * N + d]
    row = base - (a + 1)
    for x in range(a + 1, d):
        D.c3e[row + x] = D.best3[x]
        D.bp3[row + x] = D.bpl[x]
        if D.best3[x] > -INFINITY:
            D.l3[base + n_live] = x
            n_live += 1
    D.n3[a * N + d] = n_live
    link_2item(D, a, d, D.l3 + base, n_live)


cdef void run_pruned(ChartData* D) noexcept nogil:
    """run_mh3 or run_mh4 over live items: each item's combinations of live
    antecedents only (the 3-items of MH3 come from Combines alone)."""
    cdef int N = D.N
    cdef int a, d
    start_pruned(D)
    for d in range(1, N):
        for a in range(d - 1, -1, -1):
            if d == a + 1:
                set_2item(D, a, d, 0.0, -1)
            elif D.k == 4:
                mh4_pair_pruned(D, a, d)
            else:
                combine_live(D, a, d)
                link_2item(D, a, d)
            if D.c2[a * N + d] > -INFINITY:
                add_live_2item(D, a, d)


# -- back-trace ------------------------------------------------------------------

cdef void emit(ChartData* D, int kind, int s1, int s0, int b0, int head, int dep) noexcept nogil:
    cdef int* e = D.events + 4 * D.n_events
    e[0] = kind
    e[1] = s1
    e[2] = s0
    e[3] = b0
    D.n_events += 1
    if kind == SH:
        D.score_sum += D.sh[s0 * D.N + b0]
    else:
        D.score_sum += red_score(D, kind, s1, s0, b0) + arc_score(D, head, dep)
        D.heads[dep] = head
        D.cost_sum += arc_cost(D, head, dep)


cdef void trace2(ChartData* D, int a, int d) noexcept nogil:
    cdef int code, x, t
    if d == a + 1:
        return                   # Shift (or the axiom): the sh is scored by its context
    code = D.bp2[a * D.N + d]
    x = code >> 3
    t = code & 7
    trace3(D, a, x, d)
    emit(D, t, a, x, d, d if t == LA else a, x)


cdef void trace3(ChartData* D, int a, int x, int d) noexcept nogil:
    cdef int code = -1, y, t, split, b, c, head
    if D.k == 4:
        code = D.bp3[D.off_e[a * D.N + d] + x - a - 1]
    if code < 0:                 # Combine [a, x] + [x, d]
        trace2(D, a, x)
        emit(D, SH, -1, a, x, 0, 0)
        trace2(D, x, d)
        return
    split = code & 1
    t = (code >> 1) & 7
    y = code >> 4
    b = y if y < x else x
    c = x if y < x else y
    if split == 0:               # [a, b] + [b, c, d]
        trace2(D, a, b)
        emit(D, SH, -1, a, b, 0, 0)
        trace3(D, b, c, d)
    else:                        # [a, b, c] + [c, d]
        trace3(D, a, b, c)
        emit(D, SH, -1, b, c, 0, 0)
        trace2(D, c, d)
    if t == LA:
        head = d
    elif t == RA:
        head = b
    elif t == RA2 or t == RA1:
        head = a
    elif t == LA1:
        head = c
    else:                        # LA2
        head = d
    emit(D, t, b, c, d, head, y)


# -- Python API ------------------------------------------------------------------

cdef void* _ptr(arr):
    """The data pointer of a C-contiguous numpy array."""
    cdef size_t address = arr.ctypes.data
    return <void*> address


cdef class Chart:
    """Exact MH_k decoder (k = 3 or 4) owning its buffers (see the module
    docstring for items, scores and memory). Not thread-safe: one Chart per
    thread; decoding itself runs without the GIL.

    single_root: only computations whose tree attaches one word to node 0.
    """
    cdef readonly int k
    cdef readonly int n_transitions
    cdef readonly bint single_root
    cdef readonly int capacity_positions
    cdef readonly long fallbacks
    cdef dict _buffers
    cdef ChartData D

    def __init__(self, int k, bint single_root=False):
        if k not in (3, 4):
            raise ValueError(f"k must be 3 (MH3) or 4 (MH4), not {k}")
        self.k = k
        self.n_transitions = 2 if k == 3 else 6
        self.single_root = single_root
        self.capacity_positions = 0
        self.fallbacks = 0
        self._buffers = {}

    def __reduce__(self):
        # Buffers are scratch space: a copy starts empty.
        return (Chart, (self.k, self.single_root))

    @property
    def capacity(self):
        """The longest sentence (words) the buffers hold without growing."""
        return max(0, self.capacity_positions - 2)

    @property
    def buffer_bytes(self):
        """Bytes of the buffers this chart owns."""
        return sum(b.nbytes for b in self._buffers.values())

    def buffer_sizes(self):
        """{name: number of entries} of the owned buffers."""
        return {name: b.size for name, b in self._buffers.items()}

    def _grow(self, int N):
        if N <= self.capacity_positions:
            return
        cdef int64_t n3 = (<int64_t> N * (N - 1) * (N - 2)) // 6
        sizes = {
            "c2": (N * N, numpy.float64), "c2t": (N * N, numpy.float64),
            "bp2": (N * N, numpy.int32), "best3": (N, numpy.float64),
            "bpl": (N, numpy.int32), "gold": (N, numpy.int32),
            "heads": (N, numpy.int32), "events": (8 * N, numpy.int32),
            "l2": (N * N, numpy.int32), "n2": (N, numpy.int32),
            "l2t": (N * N, numpy.int32), "n2t": (N, numpy.int32),
        }
        if self.k == 4:
            sizes.update({
                "c3f": (n3, numpy.float64), "c3e": (n3, numpy.float64),
                "bp3": (n3, numpy.int32), "l3": (n3, numpy.int32), "n3": (N * N, numpy.int32),
                "stamp": (N * N, numpy.int32),
                "off_f": (N * N, numpy.int64), "off_e": (N * N, numpy.int64),
                "cost_a": (N, numpy.float64),
                "q2": (N * N, numpy.float64), "p2": (N * N, numpy.float64),
                "q3": (N * N, numpy.float64), "p3": (N * N, numpy.float64),
                "t2": (N * N, numpy.int8), "t3": (N * N, numpy.int8),
            })
        self._buffers = {}      # free the old ones first
        self._buffers = {name: numpy.zeros(max(size, 1), dtype=dtype)
                         for name, (size, dtype) in sizes.items()}
        self.capacity_positions = N
        cdef ChartData* D = &self.D
        D.c2 = <double*> _ptr(self._buffers["c2"])
        D.c2t = <double*> _ptr(self._buffers["c2t"])
        D.bp2 = <int*> _ptr(self._buffers["bp2"])
        D.best3 = <double*> _ptr(self._buffers["best3"])
        D.bpl = <int*> _ptr(self._buffers["bpl"])
        D.heads = <int*> _ptr(self._buffers["heads"])
        D.events = <int*> _ptr(self._buffers["events"])
        D.l2 = <int*> _ptr(self._buffers["l2"])
        D.n2 = <int*> _ptr(self._buffers["n2"])
        D.l2t = <int*> _ptr(self._buffers["l2t"])
        D.n2t = <int*> _ptr(self._buffers["n2t"])
        if self.k == 4:
            D.l3 = <int*> _ptr(self._buffers["l3"])
            D.n3 = <int*> _ptr(self._buffers["n3"])
            D.stamp = <int*> _ptr(self._buffers["stamp"])
            D.c3f = <double*> _ptr(self._buffers["c3f"])
            D.c3e = <double*> _ptr(self._buffers["c3e"])
            D.bp3 = <int*> _ptr(self._buffers["bp3"])
            D.off_f = <int64_t*> _ptr(self._buffers["off_f"])
            D.off_e = <int64_t*> _ptr(self._buffers["off_e"])
            D.cost_a = <double*> _ptr(self._buffers["cost_a"])
            D.q2 = <double*> _ptr(self._buffers["q2"])
            D.p2 = <double*> _ptr(self._buffers["p2"])
            D.q3 = <double*> _ptr(self._buffers["q3"])
            D.p3 = <double*> _ptr(self._buffers["p3"])
            D.t2 = <signed char*> _ptr(self._buffers["t2"])
            D.t3 = <signed char*> _ptr(self._buffers["t3"])

    def decode(self, sh_scores, reduce_scores, gold_heads=None, double cost_weight=0.0,
               arc_scores=None, keep=None):
        """The best computation of MH_k under the scores (+ cost).

        sh_scores: float32 (n+2, n+2), [s0, b0]. reduce_scores: float32
        (T, n+2, n+2, n+2) [t, s1, s0, b0] ("hybrid") or (T, n+2, n+2)
        [t, s0, b0] ("two"), T = 2 (MH3: la, ra) or 6 (MH4: la, ra, la',
        ra', la2, ra2). Only entries of possible position orders are read;
        the others may hold anything. Scores must not be NaN or +inf (-inf
        forbids a transition, as long as some computation remains finite).
        arc_scores: optional float32 (n+2, n+2), [head, dep]: added for
        every arc the computation builds (counted in its score).
        gold_heads: optional ints (n,), 1-based heads (0 = root), for the cost
        term cost_weight * (number of arcs head -> dep with gold head != head).
        keep: optional bool (n+2, n+2), [head, dep]: pruned decoding, the
        best computation that builds only kept arcs, found by enumerating
        live items only (see "pruned decoding" above). Where no computation
        of finite score builds only kept arcs, the chart decodes again
        without keep (and counts it in `fallbacks`): a tree always comes out.

        Returns (score, cost, heads, events) of the computation with the
        highest score + cost:
          score   its model score: the sum of its events' table entries
                  (and of its arcs' arc_scores), in float64, added in the
                  events' order (cost not included);
          cost    its cost part, cost_weight * wrong arcs (0.0 without gold);
          heads   int32 (n,): the head of each word 1..n (0 = root);
          events  int32 (2n, 4): the computation's scored transitions in
                  order, rows (kind, s1, s0, b0); kind -1 = sh (s1 = -1;
                  scored sh_scores[s0, b0]), 0..T-1 a reduce (scored at
                  [kind, s1, s0, b0] or [kind, s0, b0]). The forced sh(0) is
                  left out: the computation starts with 0 on the stack and 1
                  at the front of the buffer, and ends with stack [0], buffer
                  [n+1].
        """
        sh = numpy.ascontiguousarray(sh_scores, dtype=numpy.float32)
        red = numpy.asarray(reduce_scores)
        # A hybrid table whose transitions are its last axis in memory (a
        # model's triple table, (N, N, N, T), moved to (T, N, N, N)) is read
        # where it lies: no copy, and a reduce's T scores share a cache line.
        t_last = (red.ndim == 4 and red.dtype == numpy.float32 and not red.flags.c_contiguous
                  and numpy.moveaxis(red, 0, -1).flags.c_contiguous)
        if not t_last:
            red = numpy.ascontiguousarray(red, dtype=numpy.float32)
        if sh.ndim != 2 or sh.shape[0] != sh.shape[1] or sh.shape[0] < 2:
            raise ValueError(f"sh_scores must be (n+2, n+2), not {sh.shape}")
        cdef int N = sh.shape[0]
        cdef int n = N - 2
        cdef int T = self.n_transitions
        if red.ndim == 4:
            if red.shape != (T, N, N, N):
                raise ValueError(f"hybrid reduce_scores must be {(T, N, N, N)} for MH{self.k} "
                                 f"with n = {n}, not {red.shape}")
        elif red.ndim == 3:
            if red.shape != (T, N, N):
                raise ValueError(f"two-feature reduce_scores must be {(T, N, N)} for "
                                 f"MH{self.k} with n = {n}, not {red.shape}")
        else:
            raise ValueError(f"reduce_scores must be 3-d (two) or 4-d (hybrid), not "
                             f"{red.ndim}-d")
        # max() is NaN if any entry is, and reads the table without a
        # temporary of its size
        arc = None
        if arc_scores is not None:
            arc = numpy.ascontiguousarray(arc_scores, dtype=numpy.float32)
            if arc.shape != (N, N):
                raise ValueError(f"arc_scores must be {(N, N)} with n = {n}, not {arc.shape}")
        keep_mask = None
        if keep is not None:
            keep_mask = numpy.ascontiguousarray(keep, dtype=numpy.uint8)
            if keep_mask.shape != (N, N):
                raise ValueError(f"keep must be {(N, N)} with n = {n}, not {keep_mask.shape}")
        # max() is NaN if any entry is; pruned decoding checks the reduce
        # scores it reads as it reads them (the whole table costs more to
        # scan than the pruned chart takes)
        if not (sh.max() < numpy.inf and (keep_mask is not None or red.max() < numpy.inf)
                and (arc is None or arc.max() < numpy.inf)):
            raise ValueError("scores must not be NaN or +inf")
        if cost_weight != cost_weight or abs(cost_weight) == INFINITY:
            raise ValueError(f"cost_weight must be finite, not {cost_weight}")
        self._grow(N)
        cdef ChartData* D = &self.D
        D.N = N
        D.k = self.k
        D.hybrid = red.ndim == 4
        D.t_last = t_last
        D.T = T
        D.single_root = self.single_root
        D.sh = <const float*> _ptr(sh)
        D.red = <const float*> _ptr(numpy.moveaxis(red, 0, -1) if t_last else red)
        D.arc = NULL
        if arc is not None:
            D.arc = <const float*> _ptr(arc)
        D.cost_weight = cost_weight
        D.gold = NULL
        if gold_heads is not None:
            gold = numpy.asarray(gold_heads)
            if gold.shape != (n,):
                raise ValueError(f"gold_heads must have one head per word ({n}), not "
                                 f"shape {gold.shape}")
            if n and (gold.min() < 0 or gold.max() > n):
                raise ValueError(f"gold heads must be in 0..{n}")
            buf = self._buffers["gold"]
            buf[0] = -1
            buf[1 : n + 1] = gold
            D.gold = <const int*> _ptr(buf)
        D.keep = NULL
        if keep_mask is not None:
            D.keep = <const unsigned char*> _ptr(keep_mask)
        D.n_events = 0
        D.score_sum = 0.0
        D.cost_sum = 0.0
        D.bad_score = False
        D.reads = NULL
        with nogil:
            if self.k == 4:
                set_offsets(D)
            if D.keep != NULL:
                run_pruned(D)
            if D.keep == NULL or D.c2[N - 1] == -INFINITY:
                if D.keep != NULL:
                    D.keep = NULL
                    self.fallbacks += 1
                if self.k == 4:
                    run_mh4(D)
                else:
                    run_mh3(D)
            if not D.bad_score:
                trace2(D, 0, N - 1)
        if D.bad_score:
            raise ValueError("scores must not be NaN or +inf")
        heads = self._buffers["heads"][1 : n + 1].copy()
        events = self._buffers["events"][: 4 * D.n_events].reshape(D.n_events, 4).copy()
        return float(D.score_sum), float(D.cost_sum), heads, events

    def read_triples(self, keep):
        """The (s1, s0, b0) triples whose reduce scores a decode pruned with
        this keep mask reads (hybrid tables): int64 (E, 3), in increasing
        order; None where no computation builds only kept arcs (that decode
        reads the whole table). Which items are live depends only on the
        mask as long as the scores are finite, so the decode reads these
        triples whatever the tables hold: a caller may score only them."""
        keep_mask = numpy.ascontiguousarray(keep, dtype=numpy.uint8)
        if keep_mask.ndim != 2 or keep_mask.shape[0] != keep_mask.shape[1] \
                or keep_mask.shape[0] < 2:
            raise ValueError(f"keep must be (n+2, n+2), not {keep_mask.shape}")
        cdef int N = keep_mask.shape[0]
        self._grow(N)
        reads = numpy.zeros(N * N * N, dtype=numpy.uint8)
        sh = numpy.zeros((N, N), dtype=numpy.float32)
        cdef ChartData* D = &self.D
        D.N = N
        D.k = self.k
        D.hybrid = True
        D.t_last = False
        D.T = self.n_transitions
        D.single_root = self.single_root
        D.sh = <const float*> _ptr(sh)
        D.red = NULL
        D.arc = NULL
        D.gold = NULL
        D.cost_weight = 0.0
        D.keep = <const unsigned char*> _ptr(keep_mask)
        D.reads = <unsigned char*> _ptr(reads)
        cdef bint live
        with nogil:
            if self.k == 4:
                set_offsets(D)
            run_pruned(D)
            live = D.c2[N - 1] > -INFINITY
        D.reads = NULL
        if not live:
            return None
        return numpy.stack(numpy.unravel_index(numpy.flatnonzero(reads), (N, N, N)), axis=1)


# -- coverage --------------------------------------------------------------------

_COVERAGE_CHARTS = {}


def coverage(gold_heads, int k, bint single_root=False, Chart chart=None):
    """How many gold arcs the best MH_k tree shares with the gold tree (n if
    gold is an MH_k tree): the chart with zero scores and cost_weight -1 on
    gold_heads (1-based heads, 0 = root; every arc counts, the root's too).
    chart: a Chart(k) to decode with (default: one per (k, single_root) kept
    by this module; not thread-safe)."""
    gold = numpy.asarray(gold_heads, dtype=numpy.int32)
    n = gold.shape[0]
    if chart is None:
        chart = _COVERAGE_CHARTS.get((k, single_root))
        if chart is None:
            chart = _COVERAGE_CHARTS[(k, single_root)] = Chart(k, single_root)
    elif chart.k != k or chart.single_root != single_root:
        raise ValueError("chart is not a Chart(k, single_root) of these settings")
    N = n + 2
    _, cost, heads, _ = chart.decode(numpy.zeros((N, N), numpy.float32),
                                     numpy.zeros((chart.n_transitions, N, N), numpy.float32),
                                     gold, cost_weight=-1.0)
    return int((heads == gold).sum())
