# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The third-order 1-Endpoint-Crossing chart: the best 1EC tree with one
root arc under a crossing-sensitive grand-sibling factorization.

The factorization (defined over the tree; docs/systems/global.md): an arc is
*crossed* when another arc crosses it; a *crossing region* is a maximal
interval [l, r] covered by crossed arcs' spans that overlap in more than a
point. The arcs with both ends in a region, but the arc l-r, are region
arcs, scored first-order from the CROSSING channel; the others, *backbone*
arcs, are uncrossed and under no crossed arc, and h -> m scores
T[g, m, GRAND] + T[h, m, HEAD] + T[s, m, SIB], with g h's head where h's
arc is a backbone arc (else PAD, the root's child included) and s h's
nearest child between h and m where that child's arc is a backbone arc
(else PAD). Tables T are (n + 2, n + 2, 4): rows 0..n and PAD = n + 1.

The chart: the regions are the REG items of the first-order chart with its
region kinds (`EcChart(regions=True)`, ec_rules.region_rules); over them,
Koo & Collins' grand-sibling items for the backbone, where a region joins
as a pseudo-arc from its top to its other end, or as the gap between the
spans of two siblings:

- C[g, h, e]: all of h..e under h (g: h's grandparent context);
- I[g, h, m]: the backbone arc h -> m and everything between;
- S[h, s, m]: adjacent backbone siblings s (inner) and m of h, between them;
- J[h, m, k]: m's span (m a child of h) from k's neighbour, or from the
  end of a region gap that starts at k;
- L[h, k]: a region from h that holds r, and r's span to k;
- F[h, m]: what lies before h's innermost backbone child m.

O(n^4) time, O(n^3) memory, in order of span; float32 values and sums,
as the regions' and the models' scores. The reference, a pure-Python
chart checked against brute force over every 1EC tree, is
tests/reference_third_order_1ec.py.
"""
import warnings

import numpy
from libc.math cimport INFINITY

from . import ec_rules as R
from .ec_chart import EcChart

cdef enum:
    GRAND = 0
    HEAD = 1
    SIB = 2
    CROSSING = 3
    N_CHANNELS = 4

NEG_INF = -numpy.inf
# The channels of a score table, by name.
CHANNELS = {"grandparent": GRAND, "head": HEAD, "sibling": SIB, "crossing": CROSSING}


cdef struct Tables:
    int n, N, G             # positions 0..n; N = n + 1; G = n + 2 (PAD = n + 1)
    const float* T          # [(a * G + m) * 4 + channel]
    const float* reg        # [(l * N + r) * 3 + state]: REG
    int left_top, right_top, separate
    float* C                # [(g * N + h) * N + e], g < G
    float* I                # [(g * N + h) * N + m]
    float* F                # [h * N + m]
    float* L                # [h * N + k]
    # J and S of one (h, m), where I[., h, m] and F[h, m] read them (fill_rows):
    float* J                # J[h, m, k] at [k]
    float* S                # S[h, s, m] at [s]


cdef inline float part(const Tables* t, int g, int h, int m, int s) noexcept nogil:
    return (t.T[(g * t.G + m) * N_CHANNELS + GRAND] + t.T[(h * t.G + m) * N_CHANNELS + HEAD]
            + t.T[(s * t.G + m) * N_CHANNELS + SIB])


cdef inline float region(const Tables* t, int top, int other) noexcept nogil:
    """The best region between top and other with top on top of both."""
    if top < other:
        return t.reg[(top * t.N + other) * 3 + t.left_top]
    return t.reg[(other * t.N + top) * 3 + t.right_top]


cdef inline float gap(const Tables* t, int a, int b) noexcept nogil:
    """The best region between a and b with both on top (heads outside)."""
    if a < b:
        return t.reg[(a * t.N + b) * 3 + t.separate]
    return t.reg[(b * t.N + a) * 3 + t.separate]


cdef inline float* C_at(const Tables* t, int g, int h, int e) noexcept nogil:
    return &t.C[(g * t.N + h) * t.N + e]


cdef inline float* I_at(const Tables* t, int g, int h, int m) noexcept nogil:
    return &t.I[(g * t.N + h) * t.N + m]


cdef inline float J_value(const Tables* t, int h, int m, int k) noexcept nogil:
    """J[h, m, k], from C (filled for spans shorter than |m - k|)."""
    cdef int step = 1 if m > k else -1
    cdef int k2
    cdef float v
    cdef float out = C_at(t, h, m, k + step)[0]
    k2 = k + 2 * step
    while k2 != m + step:
        v = gap(t, k, k2) + C_at(t, h, m, k2)[0]
        if v > out:
            out = v
        k2 += step
    return out


cdef inline float S_value(const Tables* t, int h, int s, int m) noexcept nogil:
    cdef int step = 1 if m > s else -1
    cdef int k = s
    cdef float v
    cdef float out = -INFINITY
    while k != m:
        v = C_at(t, h, s, k)[0] + t.J[k]
        if v > out:
            out = v
        k += step
    return out


cdef inline float L_value(const Tables* t, int h, int k) noexcept nogil:
    cdef int step = 1 if k > h else -1
    cdef int r = h + step
    cdef float v
    cdef float out = -INFINITY
    while r != k + step:
        v = region(t, h, r) + C_at(t, t.G - 1, r, k)[0]
        if v > out:
            out = v
        r += step
    return out


cdef inline float F_value(const Tables* t, int h, int m) noexcept nogil:
    cdef int step = 1 if m > h else -1
    cdef int k = h + step
    cdef float v
    cdef float out = t.J[h]
    while k != m:
        v = t.L[h * t.N + k] + t.J[k]
        if v > out:
            out = v
        k += step
    return out


cdef void fill_rows(const Tables* t, int h, int m) noexcept nogil:
    """J[h, m, k] for k from h to m (m excluded), then S[h, s, m] for s
    strictly between: what F[h, m] and I[., h, m] read. Each is read by
    these alone, so they are not stored (n^3 floats each), and they read
    spans shorter than |h - m| (C) or each other."""
    cdef int step = 1 if m > h else -1
    cdef int k = h
    while k != m:
        t.J[k] = J_value(t, h, m, k)
        k += step
    k = h + step
    while k != m:
        t.S[k] = S_value(t, h, k, m)
        k += step


cdef inline float I_value(const Tables* t, int g, int h, int m) noexcept nogil:
    cdef int step = 1 if m > h else -1
    cdef int s = h + step
    cdef float v
    cdef float out = part(t, g, h, m, t.G - 1) + t.F[h * t.N + m]
    while s != m:
        v = I_at(t, g, h, s)[0] + t.S[s] + part(t, g, h, m, s)
        if v > out:
            out = v
        s += step
    return out


cdef inline float C_value(const Tables* t, int g, int h, int e) noexcept nogil:
    cdef int step = 1 if e > h else -1
    cdef int m = h + step
    cdef float v
    cdef float out = -INFINITY
    while m != e + step:
        v = I_at(t, g, h, m)[0] + C_at(t, h, m, e)[0]
        if v > out:
            out = v
        v = region(t, h, m) + C_at(t, t.G - 1, m, e)[0]
        if v > out:
            out = v
        m += step
    return out


cdef inline bint outside(int g, int a, int b) noexcept nogil:
    """Whether g can be the head of h with h..e spanning [a, b] (either order)."""
    if a > b:
        a, b = b, a
    return g < a or g > b


cdef void fill(Tables* t) noexcept nogil:
    """Every item, by span d = 1..n, both directions; within a span L, F
    and I (with the J and S they read), then C (each reads shorter spans
    and those before it)."""
    cdef int d, stage, a, b, g, step
    cdef int n = t.n, N = t.N, G = t.G
    for d in range(1, n + 1):
        for stage in range(2):
            for a in range(N):
                for step in range(-1, 2, 2):
                    b = a + step * d
                    if b < 0 or b > n:
                        continue
                    if stage == 0:
                        t.L[a * N + b] = L_value(t, a, b)
                        if b > 0:
                            fill_rows(t, a, b)
                            t.F[a * N + b] = F_value(t, a, b)
                            for g in range(G):
                                if g == G - 1 or outside(g, a, b):
                                    I_at(t, g, a, b)[0] = I_value(t, g, a, b)
                    else:
                        for g in range(G):
                            if g == G - 1 or outside(g, a, b):
                                C_at(t, g, a, b)[0] = C_value(t, g, a, b)


def one_ec_o3_terms(heads):
    """The table entries (a, m, channel) a tree's score sums under the
    third-order factorization: (pairs (E, 2), channels (E,)); heads
    1-based (0 the root), PAD = n + 1."""
    cdef int n = len(heads)
    cdef int pad = n + 1
    cdef int m, o, h, lo, hi, lo2, hi2, c, nearest
    head = numpy.zeros(n + 1, dtype=numpy.int64)
    head[1:] = numpy.asarray(heads, dtype=numpy.int64)
    cdef long long[::1] hd = head
    lows = numpy.minimum(head[1:], numpy.arange(1, n + 1))
    highs = numpy.maximum(head[1:], numpy.arange(1, n + 1))
    # crossed[m - 1]: m's arc crosses another; region: crossed or under a crossed one.
    cross = ((lows[:, None] < lows[None, :]) & (lows[None, :] < highs[:, None])
             & (highs[:, None] < highs[None, :]))
    cross |= cross.T
    crossed = cross.any(axis=1)
    under = ((lows[None, :] <= lows[:, None]) & (highs[:, None] <= highs[None, :])
             & crossed[None, :])
    numpy.fill_diagonal(under, False)
    in_region = numpy.ascontiguousarray(crossed | under.any(axis=1), dtype=numpy.uint8)
    cdef unsigned char[::1] reg = in_region
    pairs, channels = [], []
    for m in range(1, n + 1):
        h = hd[m]
        if reg[m - 1]:
            pairs.append((h, m))
            channels.append(CROSSING)
            continue
        g = hd[h] if h != 0 and not reg[h - 1] else pad
        nearest = -1
        step = 1 if m > h else -1
        c = m - step
        while c != h:
            if hd[c] == h:
                nearest = c
                break
            c -= step
        s = nearest if nearest >= 0 and not reg[nearest - 1] else pad
        pairs += [(g, m), (h, m), (s, m)]
        channels += [GRAND, HEAD, SIB]
    return (numpy.asarray(pairs, dtype=numpy.int64).reshape(-1, 2),
            numpy.asarray(channels, dtype=numpy.int64))


def _buffer_sizes(int n):
    """The float counts of C, I, F, L, J and S for n words."""
    cdef int N = n + 1, G = n + 2
    return (G * N * N, G * N * N, N * N, N * N, N, N)


def _working_bytes(int n):
    """About what a decode allocates besides the buffers (copies of the
    tables, index arrays, the root penalty's temporaries), which the memory
    limit leaves room for: tracemalloc's peak less the buffers, 1.3-1.4 MB
    at 88-100 words."""
    return 160 * (n + 2) ** 2


cdef class Ec3Chart:
    """The third-order 1EC chart, reusable across sentences."""
    cdef Tables t
    cdef object _regions, _buffers, _tables, _reg
    cdef public object memory_limit

    def __init__(self, memory_limit=100e6):
        # memory_limit (bytes, None: none): where the buffers of a sentence
        # and its working arrays would pass it, the regions' chart computes
        # some of its blocks where it reads them (EcChart's over_p: less
        # memory, more time).
        self.memory_limit = memory_limit
        self._regions = EcChart(regions=True, memory_limit=None)
        self._buffers = None

    @property
    def buffer_bytes(self) -> int:
        own = sum(b.nbytes for b in self._buffers) if self._buffers is not None else 0
        return int(own + self._regions.buffer_bytes)

    @property
    def over_p(self) -> bool:
        """Whether the last sentence passed the memory limit (EcChart.over_p)."""
        return self._regions.over_p

    @property
    def computed_blocks(self):
        """The regions' blocks computed where read (EcChart.computed_blocks)."""
        return self._regions.computed_blocks

    def decode(self, scores, one_root=True):
        """(score, heads): the best 1EC tree under scores, float (n + 2,
        n + 2, 4) [a, m, channel] over positions 0..n + 1 (0 the root; row
        n + 1 the PAD grandparent and sibling; columns 0 and n + 1 are not
        read): the tree's score and int32 heads, 1-based (0 = root). With
        one_root, one root arc. Scores must be finite, or -inf in HEAD and
        CROSSING to forbid an arc (as long as some tree remains finite)."""
        T = numpy.array(scores, dtype=numpy.float64)
        if T.ndim != 3 or T.shape[0] != T.shape[1] or T.shape[2] != N_CHANNELS or T.shape[0] < 3:
            raise ValueError(f"scores must be (n+2, n+2, 4) with n >= 1, got {T.shape}")
        if numpy.isnan(T).any() or numpy.isposinf(T).any() or \
                numpy.isneginf(T[:, :, [GRAND, SIB]]).any():
            raise ValueError("scores must not be NaN or +inf, nor -inf outside HEAD and CROSSING")
        n = T.shape[0] - 2
        T[:, 0, :] = NEG_INF            # nothing heads the root
        words = numpy.arange(1, n + 1)
        T[words, words, HEAD] = T[words, words, CROSSING] = NEG_INF
        penalty = 0.0
        if one_root:
            penalty = self._root_penalty(T, n)
            T[0, 1:, HEAD] -= penalty
            T[0, 1:, CROSSING] -= penalty
        heads = self._decode(T, n)
        pairs, channels = one_ec_o3_terms(heads)
        original = numpy.asarray(scores, dtype=numpy.float64)
        return float(original[pairs[:, 0], pairs[:, 1], channels].sum()), heads

    @staticmethod
    def _root_penalty(T, n):
        """More than the difference of any two trees' scores: each word's
        best contribution against its worst."""
        finite = numpy.where(numpy.isfinite(T), T, numpy.nan)[:, 1:n + 1, :]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # a channel all -inf
            high = numpy.nanmax(finite, axis=0)
            low = numpy.nanmin(finite, axis=0)
        # fmax/fmin: a channel with no finite score does not count.
        best = numpy.fmax(high[:, CROSSING], high[:, GRAND] + high[:, HEAD] + high[:, SIB])
        worst = numpy.fmin(low[:, CROSSING], low[:, GRAND] + low[:, HEAD] + low[:, SIB])
        if numpy.isnan(best).any():
            raise ValueError("every word needs a head with a finite score")
        return 1.0 + float((best - worst).sum())

    def _decode(self, T, int n):
        cdef int N = n + 1, G = n + 2
        self._regions.memory_limit = (None if self.memory_limit is None else
                                      self.memory_limit - 4 * sum(_buffer_sizes(n))
                                      - _working_bytes(n))
        self._regions.fill(T[:N, :N, CROSSING])
        # REG over [l, r], l < r (the others are not set).
        reg = numpy.full((N, N, 3), -numpy.inf, dtype=numpy.float32)
        upper = numpy.triu_indices(N, 1)
        reg[upper] = self._regions.pair_values(R.REG, N)[upper]
        self._reg = reg
        T = self._tables = numpy.ascontiguousarray(T, dtype=numpy.float32)
        self._prepare(n)
        cdef float[:, :, ::1] T_view = T
        cdef float[:, :, ::1] reg_view = reg
        self.t.T = &T_view[0, 0, 0]
        self.t.reg = &reg_view[0, 0, 0]
        with nogil:
            fill(&self.t)
        score = C_at(&self.t, G - 1, 0, n)[0]
        if not score > -INFINITY:
            raise ValueError("no 1-Endpoint-Crossing tree has a finite score")
        heads = numpy.full(n, -1, dtype=numpy.int32)
        self._trace(heads)
        return heads

    def _prepare(self, int n):
        cdef int N = n + 1, G = n + 2
        self.t.n, self.t.N, self.t.G = n, N, G
        self.t.left_top, self.t.right_top, self.t.separate = R.LEFT_TOP, R.RIGHT_TOP, R.SEPARATE
        sizes = _buffer_sizes(n)
        if self._buffers is None or self._buffers[0].size < sizes[0]:
            self._buffers = [numpy.empty(size, dtype=numpy.float32) for size in sizes]
        for buffer, size in zip(self._buffers, sizes):
            buffer[:size] = -numpy.inf
        cdef float[::1] C = self._buffers[0]
        cdef float[::1] I = self._buffers[1]
        cdef float[::1] F = self._buffers[2]
        cdef float[::1] L = self._buffers[3]
        cdef float[::1] J = self._buffers[4]
        cdef float[::1] S = self._buffers[5]
        self.t.C, self.t.I, self.t.F = &C[0], &I[0], &F[0]
        self.t.L, self.t.J, self.t.S = &L[0], &J[0], &S[0]
        cdef int g, h
        for g in range(G):
            for h in range(N):
                C_at(&self.t, g, h, h)[0] = 0.0

    def _trace(self, heads):
        """Writes the best tree's arcs to heads by re-deriving each item
        (the same sums in the same order as fill), the regions' arcs by
        their chart's trace."""
        cdef const Tables* t = &self.t
        cdef int G = t.G, N = t.N
        cdef int g, h, e, m, s, k, k2, r, step, pad = t.G - 1
        cdef float value
        stack = [("C", pad, 0, t.n)]
        while stack:
            item = stack.pop()
            kind = item[0]
            if kind == "C":
                _, g, h, e = item
                if h == e:
                    continue
                value = C_at(t, g, h, e)[0]
                step = 1 if e > h else -1
                m = h + step
                while m != e + step:
                    if I_at(t, g, h, m)[0] + C_at(t, h, m, e)[0] == value:
                        stack += [("I", g, h, m), ("C", h, m, e)]
                        break
                    if region(t, h, m) + C_at(t, pad, m, e)[0] == value:
                        self._region(h, m, heads)
                        stack.append(("C", pad, m, e))
                        break
                    m += step
                else:
                    self._lost("C", item)
            elif kind == "I":
                _, g, h, m = item
                heads[m - 1] = h
                value = I_at(t, g, h, m)[0]
                if part(t, g, h, m, pad) + t.F[h * N + m] == value:
                    stack.append(("F", h, m))
                    continue
                fill_rows(t, h, m)
                step = 1 if m > h else -1
                s = h + step
                while s != m:
                    if I_at(t, g, h, s)[0] + t.S[s] + part(t, g, h, m, s) == value:
                        stack += [("I", g, h, s), ("S", h, s, m)]
                        break
                    s += step
                else:
                    self._lost("I", item)
            elif kind == "F":
                _, h, m = item
                value = t.F[h * N + m]
                fill_rows(t, h, m)
                if t.J[h] == value:
                    stack.append(("J", h, m, h))
                    continue
                step = 1 if m > h else -1
                k = h + step
                while k != m:
                    if t.L[h * N + k] + t.J[k] == value:
                        stack += [("L", h, k), ("J", h, m, k)]
                        break
                    k += step
                else:
                    self._lost("F", item)
            elif kind == "L":
                _, h, k = item
                value = t.L[h * N + k]
                step = 1 if k > h else -1
                r = h + step
                while r != k + step:
                    if region(t, h, r) + C_at(t, pad, r, k)[0] == value:
                        self._region(h, r, heads)
                        stack.append(("C", pad, r, k))
                        break
                    r += step
                else:
                    self._lost("L", item)
            elif kind == "J":
                _, h, m, k = item
                value = J_value(t, h, m, k)
                step = 1 if m > k else -1
                if C_at(t, h, m, k + step)[0] == value:
                    stack.append(("C", h, m, k + step))
                    continue
                k2 = k + 2 * step
                while k2 != m + step:
                    if gap(t, k, k2) + C_at(t, h, m, k2)[0] == value:
                        self._region(k, k2, heads, gap=True)
                        stack.append(("C", h, m, k2))
                        break
                    k2 += step
                else:
                    self._lost("J", item)
            else:
                _, h, s, m = item
                fill_rows(t, h, m)
                value = t.S[s]
                step = 1 if m > s else -1
                k = s
                while k != m:
                    if C_at(t, h, s, k)[0] + t.J[k] == value:
                        stack += [("C", h, s, k), ("J", h, m, k)]
                        break
                    k += step
                else:
                    self._lost("S", item)

    def _region(self, int a, int b, heads, gap=False):
        """The arcs of the region between a and b into heads: a on top of
        both, or (gap) each on top of its side."""
        lo, hi = min(a, b), max(a, b)
        state = R.SEPARATE if gap else (R.LEFT_TOP if a == lo else R.RIGHT_TOP)
        self._regions._trace(R.REG, lo, hi, -1, state, self._reg[lo, hi, state], heads)

    @staticmethod
    def _lost(kind, item):
        raise RuntimeError(f"third-order 1EC chart: no derivation of {kind} {item[1:]}")
