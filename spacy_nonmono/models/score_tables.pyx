# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The global model's MLP score tables in C, without the GIL.

An MLP scorer scores a pair (p1, p2) as W relu(A[p1] + B[p2] + b) + c, and
the reduce scorer a triple (p1, p2, p3), p1 < p2 < p3, as
W relu(A[p1] + B[p2] + C[p3] + b) + c: m² pairs and about m³/6 triples in a
sentence of m positions. Written with array operations, a short sentence's
tables cost their Python calls and temporaries more than their arithmetic
(see docs/results/pruning, "The encoder's steps and the score tables in C").
Here the hidden vectors of one p1 (pairs) or one p2 (triples) are made in a
loop the compiler vectorises, then scored by one BLAS product.
`ScorerView` (global_model.py) calls these for whole tables; the array
version stays for a pruned chart's few triples.
"""
import numpy
from thinc.api import NumpyOps

cimport numpy as cnp
from thinc.backends.cblas cimport CBlas, sgemm

cnp.import_array()
_HOST_OPS = NumpyOps()

cdef extern from "vector_loops.h":
    pass

cdef extern from *:
    """
    /* h[k] = relu(ab[k] + c[k]) for k < n */
    static inline NM_VECTORISE void relu_sum(float* NM_RESTRICT h,
                                             const float* NM_RESTRICT ab,
                                             const float* NM_RESTRICT c, int n) {
        int k;
        float v;
        for (k = 0; k < n; k++) {
            v = ab[k] + c[k];
            h[k] = v > 0.0f ? v : 0.0f;
        }
    }
    /* The hidden vectors of one p2's triples, p1 < p2 < p3 < m, row
       p1 (m - p2 - 1) + (p3 - p2 - 1) of H: relu(A[p1] + B[p2] + C[p3] + b);
       ab: scratch of nH floats. */
    static NM_VECTORISE NM_CLONES void hidden_rows(
            float* NM_RESTRICT H, const float* A, const float* B, const float* C,
            const float* b, float* NM_RESTRICT ab, int m, int p2, int nH) {
        int p1, p3, k;
        long row = 0;
        for (p1 = 0; p1 < p2; p1++) {
            for (k = 0; k < nH; k++)
                ab[k] = A[(long)p1 * nH + k] + B[(long)p2 * nH + k] + b[k];
            for (p3 = p2 + 1; p3 < m; p3++, row++)
                relu_sum(H + row * nH, ab, C + (long)p3 * nH, nH);
        }
    }
    /* The hidden vectors of p1's pairs: row p2 of H is
       relu(A[p1] + B[p2] + b) for p2 < m; ab: scratch of nH floats. */
    static NM_VECTORISE NM_CLONES void pair_hidden_rows(
            float* NM_RESTRICT H, const float* A, const float* B, const float* b,
            float* NM_RESTRICT ab, int m, int p1, int nH) {
        int p2, k;
        for (k = 0; k < nH; k++)
            ab[k] = A[(long)p1 * nH + k] + b[k];
        for (p2 = 0; p2 < m; p2++)
            relu_sum(H + (long)p2 * nH, ab, B + (long)p2 * nH, nH);
    }
    """
    void pair_hidden_rows(float* H, const float* A, const float* B, const float* b, float* ab,
                          int m, int p1, int nH) nogil
    void hidden_rows(float* H, const float* A, const float* B, const float* C, const float* b,
                     float* ab, int m, int p2, int nH) nogil


cdef void fill_triples(CBlas cblas, float* out, const float* A, const float* B,
                       const float* C, const float* b, const float* W, const float* c,
                       float* H, float* S, float* ab, int m, int nH,
                       int n_out) noexcept nogil:
    # out: (n_out, m, m, m), zeros on entry. For each p2 the hidden vectors of
    # its p2 (m - p2 - 1) triples (H), then one product S = W H^T, scattered.
    cdef int p1, p2, p3, o, n_after, rows
    cdef long mm = <long>m * m
    cdef float* out_row
    cdef const float* s_row
    for p2 in range(1, m - 1):
        n_after = m - p2 - 1
        rows = p2 * n_after
        hidden_rows(H, A, B, C, b, ab, m, p2, nH)
        sgemm(cblas)(False, True, n_out, rows, nH, 1.0, W, nH, H, nH, 0.0, S, rows)
        for o in range(n_out):
            for p1 in range(p2):
                out_row = &out[o * mm * m + p1 * mm + p2 * m + p2 + 1]
                s_row = &S[o * rows + p1 * n_after]
                for p3 in range(n_after):
                    out_row[p3] = s_row[p3] + c[o]


cdef struct Scorer:
    # An MLP scorer's arrays: the slots' parts (m, nH) each (C: NULL for a
    # pair scorer), b (nH,), W (n_out, nH), c (n_out,).
    const float* A
    const float* B
    const float* C
    const float* b
    const float* W
    const float* c
    int m, nH, n_out


cdef Scorer scorer_arrays(str name, tuple parts, b, W, c, list keep) except *:
    """The scorer's arrays as C-contiguous float32 (kept alive in `keep`),
    checked to fit one MLP scorer."""
    cdef Scorer out
    parts = tuple(numpy.ascontiguousarray(x, dtype="f") for x in parts)
    b, W, c = (numpy.ascontiguousarray(x, dtype="f") for x in (b, W, c))
    keep.extend((*parts, b, W, c))
    m, nH = parts[0].shape
    if any(x.shape != (m, nH) for x in parts) or b.shape != (nH,) or W.ndim != 2 \
            or W.shape[1] != nH or c.shape != (W.shape[0],):
        raise ValueError(f"{name}: the parts, bias and weights do not fit one scorer.")
    out.m, out.nH, out.n_out = m, nH, W.shape[0]
    out.A = <const float*>cnp.PyArray_DATA(parts[0])
    out.B = <const float*>cnp.PyArray_DATA(parts[1])
    out.C = <const float*>cnp.PyArray_DATA(parts[2]) if len(parts) == 3 else NULL
    out.b = <const float*>cnp.PyArray_DATA(b)
    out.W = <const float*>cnp.PyArray_DATA(W)
    out.c = <const float*>cnp.PyArray_DATA(c)
    return out


def mlp_triple_table(A, B, C, b, W, c):
    """Scores of every (p1, p2, p3) triple with p1 < p2 < p3 under the MLP
    scorer W relu(A[p1] + B[p2] + C[p3] + b) + c: (n_out, m, m, m) float32,
    zeros elsewhere. A, B, C: (m, nH) the slots' parts; b: (nH,); W:
    (n_out, nH); c: (n_out,)."""
    keep = []
    cdef Scorer sc = scorer_arrays("mlp_triple_table", (A, B, C), b, W, c, keep)
    cdef int m = sc.m, nH = sc.nH, n_out = sc.n_out
    out = numpy.zeros((n_out, m, m, m), dtype="f")
    if m < 3 or n_out == 0 or nH == 0:
        return out
    cdef float[:, :, :, ::1] out_c = out
    # The most triples one p2 has: p2 (m - 1 - p2) at p2 = (m - 1) // 2.
    cdef int most = ((m - 1) // 2) * (m - 1 - (m - 1) // 2)
    cdef float[::1] H = numpy.empty(most * nH, dtype="f")
    cdef float[::1] S = numpy.empty(most * n_out, dtype="f")
    cdef float[::1] ab = numpy.empty(nH, dtype="f")
    cdef CBlas cblas = _HOST_OPS.cblas()
    with nogil:
        fill_triples(cblas, &out_c[0, 0, 0, 0], sc.A, sc.B, sc.C, sc.b, sc.W, sc.c, &H[0],
                     &S[0], &ab[0], m, nH, n_out)
    return out


def mlp_pair_table(A, B, b, W, c):
    """Scores of every (p1, p2) pair under the MLP scorer
    W relu(A[p1] + B[p2] + b) + c: (m, m, n_out) float32. A, B: (m, nH)
    the slots' parts; b: (nH,); W: (n_out, nH); c: (n_out,)."""
    keep = []
    cdef Scorer sc = scorer_arrays("mlp_pair_table", (A, B), b, W, c, keep)
    cdef int m = sc.m, nH = sc.nH, n_out = sc.n_out
    out = numpy.empty((m, m, n_out), dtype="f")
    out[...] = c
    if m == 0 or n_out == 0 or nH == 0:
        return out
    cdef float[:, :, ::1] out_c = out
    cdef float[::1] H = numpy.empty(m * nH, dtype="f")
    cdef float[::1] ab = numpy.empty(nH, dtype="f")
    cdef CBlas cblas = _HOST_OPS.cblas()
    cdef int p1
    with nogil:
        for p1 in range(m):
            pair_hidden_rows(&H[0], sc.A, sc.B, sc.b, &ab[0], m, p1, nH)
            # out[p1] = H @ W.T + c (c already there)
            sgemm(cblas)(False, True, m, n_out, nH, 1.0, &H[0], nH, sc.W, nH, 1.0,
                         &out_c[p1, 0, 0], n_out)
    return out
