# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Sentences and trees of a whole text at once: the best segmentation of n
words into sentences of at most L words, each with a projective tree of one
root, under first-order scores.

``best_segmentation(band, max_length, preset=None, start_scores=None) -> (starts, heads, score)``

- ``band``: (n, 2L - 1) scores, L = ``max_length``: ``band[m, L - 1 + h - m]``
  scores word h heading word m (|h - m| < L, h != m), and ``band[m, L - 1]``
  scores word m as its sentence's root. Entries for heads outside the text
  are never read. Log probabilities of each word's head (a softmax over its
  row) make the score the log probability of the whole analysis.
- ``start_scores``: None, or per word a score added when a sentence starts
  there (a per-word senter's log odds: with the band's log probabilities,
  the score is then the log probability of the analysis under both).
- ``preset``: None, or per word 1 where a sentence must start, -1 where
  none may, 0 where the chart decides (a Doc's SENT_START array). Where the
  -1s leave no segmentation within the bound, they are dropped.
- ``starts``: int64, the first word of each sentence (0 first).
- ``heads``: int32, each word's head (its index in the text), -1 for a root.
- ``score``: the sum of the chosen entries, the maximum over every
  segmentation and every projective single-rooted tree of each sentence.

A text's projective trees whose root word may have several children under a
dummy root are exactly its segmentations into sentences, each spanned by one
of the dummy root's subtrees; so the best analysis is Eisner's (1996) chart
over spans of at most L words, O(n L^2), and a semi-Markov pass over where
sentences end, O(n L). Ties go to the smaller split point and the earlier
sentence start, so the same input gives the same analysis. The chart is
filled word by word, reading only the spans of the last L words: its
scores take O(L^2) memory, the split points kept to read the trees back
O(n L).
"""
import numpy
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free



cdef struct Chart:
    int n
    int L
    const double* band     # (n, 2L - 1)
    const signed char* preset   # 1: a start, -1: no start, 0: free (or NULL)
    const double* start_scores  # added per sentence start (or NULL)
    # The scores of the spans that start at the last L words, by (start % L,
    # length): complete with the head at the left end (cr) or the right end
    # (cl), incomplete with the arc left to right (ir); and of the spans that
    # end at the current word, by length (the *_end rows). The chart is
    # filled by end word, so these L x L buffers are all it reads.
    double* cr
    double* cl
    double* ir
    double* cr_end
    double* cl_end
    double* il_end
    # Where each span [i, i + d] was split (k - i), by i * L + d, for reading
    # the trees back.
    unsigned short* cr_at
    unsigned short* cl_at
    unsigned short* inc_at
    double* best     # best[b]: the best analysis of words [0, b)
    int* best_from   # where the last sentence of best[b] starts
    int* best_root   # and its root


cdef inline double arc(const Chart* c, int h, int m) noexcept nogil:
    return c.band[m * (2 * c.L - 1) + c.L - 1 + h - m]


cdef void fill(Chart* c) noexcept nogil:
    cdef int n = c.n, L = c.L, i, j, d, t, arg, row, a, r, lo, forced = 0
    cdef double v, top, start
    c.best[0] = 0.0
    for j in range(n):
        row = (j % L) * L
        c.cr[row] = c.cl[row] = c.cr_end[0] = c.cl_end[0] = 0.0
        for d in range(1, L if L <= j + 1 else j + 1):
            i = j - d
            row = (i % L) * L
            # Incomplete [i, j]: [i, k] complete right + [k + 1, j] complete left.
            top = -INFINITY
            arg = 0
            for t in range(d):
                v = c.cr[row + t] + c.cl_end[d - 1 - t]
                if v > top:
                    top = v
                    arg = t
            c.ir[row + d] = top + arc(c, i, j)
            c.il_end[d] = top + arc(c, j, i)
            c.inc_at[i * L + d] = arg
            # Complete, head i: the arc i -> k, then k's complete span to j.
            top = -INFINITY
            arg = 1
            for t in range(1, d + 1):
                v = c.ir[row + t] + c.cr_end[d - t]
                if v > top:
                    top = v
                    arg = t
            c.cr[row + d] = c.cr_end[d] = top
            c.cr_at[i * L + d] = arg
            # Complete, head j: i's complete span to k, then the arc j -> k.
            top = -INFINITY
            arg = 0
            for t in range(d):
                v = c.cl[row + t] + c.il_end[d - t]
                if v > top:
                    top = v
                    arg = t
            c.cl[row + d] = c.cl_end[d] = top
            c.cl_at[i * L + d] = arg
        # Sentences [a, j] with root r: r's left span down to a, its right
        # span to j; none holds a preset start after a.
        if c.preset is not NULL and c.preset[j] == 1:
            forced = j
        lo = j + 1 - L if j + 1 > L else 0
        if lo < forced:
            lo = forced
        top = -INFINITY
        c.best_from[j + 1] = j
        c.best_root[j + 1] = j
        for a in range(lo, j + 1):
            if a > 0 and c.preset is not NULL and c.preset[a] == -1:
                continue
            row = (a % L) * L
            start = c.best[a] + (c.start_scores[a] if c.start_scores is not NULL else 0.0)
            for r in range(a, j + 1):
                v = start + c.cl[row + r - a] + c.cr_end[j - r] + arc(c, r, r)
                if v > top:
                    top = v
                    c.best_from[j + 1] = a
                    c.best_root[j + 1] = r
        c.best[j + 1] = top


cdef void read_complete(const Chart* c, int i, int j, bint head_left, int* heads) noexcept nogil:
    """Heads of the words of a complete span [i, j] but its head."""
    cdef int L = c.L, k
    if i == j:
        return
    if head_left:
        k = i + c.cr_at[i * L + j - i]
        read_incomplete(c, i, k, True, heads)
        read_complete(c, k, j, True, heads)
    else:
        k = i + c.cl_at[i * L + j - i]
        read_complete(c, i, k, False, heads)
        read_incomplete(c, k, j, False, heads)


cdef void read_incomplete(const Chart* c, int i, int j, bint head_left, int* heads) noexcept nogil:
    cdef int k = i + c.inc_at[i * c.L + j - i]
    if head_left:
        heads[j] = i
    else:
        heads[i] = j
    read_complete(c, i, k, True, heads)
    read_complete(c, k + 1, j, False, heads)


def best_segmentation(band, int max_length, preset=None, start_scores=None):
    """The best segmentation into sentences of at most max_length words and
    their projective trees: (starts, heads, score); see the module's doc."""
    cdef int L = max_length
    if not 1 <= L <= 65535:
        raise ValueError(f"max_length must be at least 1 (and at most 65535), not {max_length}")
    band = numpy.ascontiguousarray(band, dtype="float64")
    if band.ndim != 2 or band.shape[1] != 2 * L - 1:
        raise ValueError(f"band must have shape (n, {2 * L - 1}) for max_length {L}, "
                         f"not {band.shape}")
    cdef int n = band.shape[0]
    heads = numpy.full(n, -1, dtype="int32")
    if n == 0:
        return numpy.zeros(0, dtype="int64"), heads, 0.0
    if L > n:
        L = n
        band = numpy.ascontiguousarray(band[:, max_length - L: max_length + L - 1])
    cdef signed char[::1] preset_view
    if preset is not None:
        preset = numpy.ascontiguousarray(numpy.clip(preset, -1, 1), dtype="int8")
        if preset.shape != (n,):
            raise ValueError(f"preset must have one value a word ({n}), not {preset.shape}")
        preset_view = preset
    cdef double[::1] start_view
    if start_scores is not None:
        start_scores = numpy.ascontiguousarray(start_scores, dtype="float64")
        if start_scores.shape != (n,):
            raise ValueError(f"start_scores must have one value a word ({n}), "
                             f"not {start_scores.shape}")
        start_view = start_scores
    cdef double[:, ::1] band_view = band
    cdef int[::1] heads_view = heads
    cdef Chart c
    c.n = n
    c.L = L
    c.band = &band_view[0, 0]
    c.preset = &preset_view[0] if preset is not None else NULL
    c.start_scores = &start_view[0] if start_scores is not None else NULL
    cdef size_t cells = <size_t>n * L, square = <size_t>L * L
    c.cr = <double*>malloc((3 * square + 3 * L) * sizeof(double))
    c.cr_at = <unsigned short*>malloc(cells * 3 * sizeof(unsigned short))
    c.best = <double*>malloc((n + 1) * sizeof(double))
    c.best_from = <int*>malloc((n + 1) * 2 * sizeof(int))
    if c.cr is NULL or c.cr_at is NULL or c.best is NULL or c.best_from is NULL:
        free(c.cr); free(c.cr_at); free(c.best); free(c.best_from)
        raise MemoryError()
    c.cl = c.cr + square
    c.ir = c.cr + 2 * square
    c.cr_end = c.cr + 3 * square
    c.cl_end = c.cr_end + L
    c.il_end = c.cr_end + 2 * L
    c.cl_at = c.cr_at + cells
    c.inc_at = c.cr_at + 2 * cells
    c.best_root = c.best_from + n + 1
    cdef int b, a, r
    starts = []
    try:
        with nogil:
            fill(&c)
        if c.best[n] == -INFINITY and c.preset is not NULL:
            # The no-start marks leave no segmentation within the bound.
            preset[preset == -1] = 0
            with nogil:
                fill(&c)
        score = c.best[n]
        b = n
        while b > 0:
            a = c.best_from[b]
            r = c.best_root[b]
            starts.append(a)
            with nogil:
                read_complete(&c, a, r, False, &heads_view[0])
                read_complete(&c, r, b - 1, True, &heads_view[0])
            b = a
    finally:
        free(c.cr); free(c.cr_at); free(c.best); free(c.best_from)
    return numpy.asarray(starts[::-1], dtype="int64"), heads, float(score)
