# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The LSTM's recurrence in C: the time steps of one layer and direction
over packed sequences (models/encoders.py's layout), each step one BLAS
product for the previous hidden states and one fused loop for the gates,
without the GIL.

`lstm_forward` in encoders.py calls this on the CPU, where the recurrence
written with array operations costs a dozen passes and temporaries per step
(most of a character BiLSTM's time, whose steps are short); on CuPy, or with
recurrent dropout, it keeps its array version. The results are the array
version's to float32 rounding (tests/test_encoders.py), and the state left
for `lstm_backward` is the same: the gates after their activation, the cells
and the hidden states.
"""
import numpy
from thinc.backends.cblas cimport CBlas, sgemm

cdef extern from "vector_loops.h":
    pass

cdef extern from *:
    """
    /* exp(x) for float32 without a library call, so that loops over it
       vectorise: x = n ln2 + r, |r| <= ln2 / 2, exp(r) by its degree-6
       Taylor polynomial (relative error below 3e-7, float32's rounding), and
       2^n put in the exponent bits. x is clamped to [-87, 87]: the gates'
       sigmoids and tanhs are flat long before. */
    static inline NM_VECTORISE float lstm_exp(float x) {
        float fx, r, p;
        int n;
        union { float f; int i; } scale;
        x = x > -87.0f ? x : -87.0f;
        x = x < 87.0f ? x : 87.0f;
        /* n = round(x / ln2): adding and taking away 1.5 * 2^23 rounds to
           the nearest integer (no branch, so the loop vectorises). */
        fx = x * 1.44269504088896341f + 12582912.0f;
        fx = fx - 12582912.0f;
        n = (int)fx;
        r = x - fx * 0.693359375f;
        r = r + fx * 2.12194440e-4f;
        p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f + r * (4.1666667e-2f
            + r * (8.3333333e-3f + r * 1.3888889e-3f)))));
        scale.i = (n + 127) << 23;
        return p * scale.f;
    }
    /* The gates of `rows` rows of 4 nO pre-activations in place: sigmoid of
       the forget, input and output blocks, tanh of the cell candidate
       (2 sigmoid(2x) - 1); then each row's cell c = f c_prev + i cand and
       hidden state y = o tanh(c). */
    static NM_VECTORISE NM_CLONES void lstm_gates(float* NM_RESTRICT G, float* NM_RESTRICT C,
                           float* NM_RESTRICT Y, const float* NM_RESTRICT C_prev,
                           int c_prev_stride, Py_ssize_t rows, int nO) {
        Py_ssize_t r;
        int u;
        for (r = 0; r < rows; r++) {
            float* NM_RESTRICT g = G + r * 4 * nO;
            float* NM_RESTRICT c = C + r * nO;
            float* NM_RESTRICT y = Y + r * nO;
            const float* NM_RESTRICT c_prev = C_prev + r * c_prev_stride;
            for (u = 0; u < 3 * nO; u++)
                g[u] = 1.0f / (1.0f + lstm_exp(-g[u]));
            for (u = 3 * nO; u < 4 * nO; u++)
                g[u] = 2.0f / (1.0f + lstm_exp(-2.0f * g[u])) - 1.0f;
            for (u = 0; u < nO; u++) {
                c[u] = g[u] * c_prev[u] + g[nO + u] * g[3 * nO + u];
                y[u] = g[2 * nO + u] * (2.0f / (1.0f + lstm_exp(-2.0f * c[u])) - 1.0f);
            }
        }
    }
    """
    void lstm_gates(float* G, float* C, float* Y, const float* C_prev, int c_prev_stride,
                    Py_ssize_t rows, int nO) nogil


cdef void run_steps(CBlas cblas, float* G, float* Y, float* C, const float* Wh,
                    const float* h0, const float* c0, const float* h0_Wh,
                    const int* starts, const int* sizes, const int* prevs,
                    const int* n_prevs, int n_steps, int nO) noexcept nogil:
    cdef int k, u
    # Row offsets times widths can pass 2^31 on a large batch: Py_ssize_t.
    cdef Py_ssize_t r, start, size, prev, n_prev
    for k in range(n_steps):
        start, size, prev, n_prev = starts[k], sizes[k], prevs[k], n_prevs[k]
        # G[step] += H[prev rows] @ Wh.T for the rows that continue a sequence;
        # the rows that start one read the initial state's product.
        if n_prev:
            sgemm(cblas)(False, True, n_prev, 4 * nO, nO, 1.0, &Y[prev * nO], nO,
                         Wh, nO, 1.0, &G[start * 4 * nO], 4 * nO)
        for r in range(n_prev, size):
            g = &G[(start + r) * 4 * nO]
            for u in range(4 * nO):
                g[u] += h0_Wh[u]
        if n_prev:
            lstm_gates(&G[start * 4 * nO], &C[start * nO], &Y[start * nO], &C[prev * nO], nO,
                       n_prev, nO)
        if size > n_prev:
            lstm_gates(&G[(start + n_prev) * 4 * nO], &C[(start + n_prev) * nO],
                       &Y[(start + n_prev) * nO], c0, 0, size - n_prev, nO)


def lstm_steps(ops, G, Y, C, Wh, h0, c0, order):
    """Run the time steps of one layer and direction, in place.

    ops: thinc NumpyOps (its BLAS).
    G: (N, 4 nO) the input's gate pre-activations (input product and both
        biases) on entry; the gates after their activation on exit.
    Y, C: (N, nO) the hidden states and cells, filled.
    Wh: (4 nO, nO) the hidden-to-hidden weights; h0, c0: (nO,) the initial
        state.
    order: the steps in reading order, (start, size, prev_start, n_prev)
        each, as `_Steps.order` gives them.
    """
    cdef int nO = Y.shape[1]
    Wh = numpy.ascontiguousarray(Wh, dtype="f")
    if G.shape != (Y.shape[0], 4 * nO) or C.shape != Y.shape \
            or Wh.shape != (4 * nO, nO):
        raise ValueError(f"lstm_steps: G {G.shape}, Y {Y.shape}, "
                         f"C {C.shape} and Wh {Wh.shape} do not fit one layer "
                         "and direction.")
    cdef float[:, ::1] Wh_c = Wh
    cdef float[:, ::1] G_c = G
    cdef float[:, ::1] Y_c = Y
    cdef float[:, ::1] C_c = C
    cdef float[::1] h0_c = numpy.ascontiguousarray(h0, dtype="f")
    cdef float[::1] c0_c = numpy.ascontiguousarray(c0, dtype="f")
    cdef float[::1] h0_Wh = numpy.ascontiguousarray(
        Wh @ numpy.asarray(h0_c), dtype="f")
    cdef int[:, ::1] steps = numpy.ascontiguousarray(
        numpy.asarray(order, dtype="i").reshape((-1, 4)))
    cdef int n_steps = steps.shape[0]
    if n_steps == 0:
        return
    cdef int[::1] starts = numpy.ascontiguousarray(steps[:, 0])
    cdef int[::1] sizes = numpy.ascontiguousarray(steps[:, 1])
    cdef int[::1] prevs = numpy.ascontiguousarray(steps[:, 2])
    cdef int[::1] n_prevs = numpy.ascontiguousarray(steps[:, 3])
    cdef CBlas cblas = ops.cblas()
    with nogil:
        run_steps(cblas, &G_c[0, 0], &Y_c[0, 0], &C_c[0, 0], &Wh_c[0, 0], &h0_c[0], &c0_c[0],
                  &h0_Wh[0], &starts[0], &sizes[0], &prevs[0], &n_prevs[0], n_steps, nO)
