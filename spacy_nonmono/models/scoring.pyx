# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The step model's arithmetic in C: one routine scores a state's moves from
the precomputed token table, for greedy parsing and training alike.

A state's hidden pre-activations are the hidden bias plus, for each context
slot f, row ids[f] + 1 of the table's slot f (row 0 is the slot's padding);
maxout over the pieces gives the hidden vector, and a linear layer the move
scores. The gradients are computed on the thinc side (step_model.py).
"""
import numpy
from libc.string cimport memcpy
from cymem.cymem cimport Pool


cdef ScoringScratch scoring_scratch(Pool mem, const StepWeights* w) except *:
    """Scratch for score_state with these weights, owned by `mem`."""
    cdef ScoringScratch out
    out.ids = <int*>mem.alloc(max(1, w.nF), sizeof(int))
    out.unmaxed = <float*>mem.alloc(w.nH * w.nP, sizeof(float))
    out.hidden = <float*>mem.alloc(w.nH, sizeof(float))
    return out


cdef class HostWeights:
    """Contiguous float32 host copies of a step model's parameters, and the
    C view the scoring routine reads."""

    def __init__(self, hidden_bias, output_W, output_b, int nF):
        hidden_bias = numpy.ascontiguousarray(hidden_bias, dtype="f")
        output_Wt = numpy.ascontiguousarray(numpy.asarray(output_W, dtype="f").T)
        output_b = numpy.ascontiguousarray(output_b, dtype="f")
        nH, nP = hidden_bias.shape
        nO = output_b.shape[0]
        if output_Wt.shape != (nH, nO):
            raise ValueError(f"Output weights of shape {output_Wt.T.shape}, expected {(nO, nH)}.")
        self._arrays = (hidden_bias, output_Wt, output_b)
        cdef float[:, ::1] hb = hidden_bias
        cdef float[:, ::1] wt = output_Wt
        cdef float[::1] ob = output_b
        self.c.hidden_bias = &hb[0, 0]
        self.c.output_Wt = &wt[0, 0]
        self.c.output_b = &ob[0]
        self.c.nF = nF
        self.c.nH = nH
        self.c.nP = nP
        self.c.nO = nO

    def check(self, int n_context, int n_moves, table_shape):
        """ValueError unless these weights score n_moves moves from
        n_context slots of a token table of this shape."""
        cdef StepWeights w = self.c
        if (w.nF, w.nO) != (n_context, n_moves) or tuple(table_shape[1:]) != (w.nF, w.nH, w.nP):
            raise ValueError(
                f"Model shape (context {w.nF}, moves {w.nO}) does not match the "
                f"transition system (context {n_context}, moves {n_moves}) or the token "
                f"table {tuple(table_shape)}.")

    @property
    def shape(self):
        """(nF, nH, nP, nO)."""
        return (self.c.nF, self.c.nH, self.c.nP, self.c.nO)


cdef void score_state(const StepWeights* w, const float* table, const int* ids,
                      float* unmaxed, float* hidden, int* which,
                      float* scores) noexcept nogil:
    """Scores of one state's moves (nO) from its context ids (nF). unmaxed:
    nH * nP floats of scratch; hidden (nH) and which (nH, the winning piece;
    may be NULL) receive the maxout output."""
    cdef int nF = w.nF, nH = w.nH, nP = w.nP, nO = w.nO, HP = nH * nP
    cdef int f, h, p, m, best
    cdef const float* feat
    cdef const float* row
    cdef float mx, x
    memcpy(unmaxed, w.hidden_bias, HP * sizeof(float))
    for f in range(nF):
        feat = &table[((ids[f] + 1) * nF + f) * HP]
        for h in range(HP):
            unmaxed[h] += feat[h]
    for h in range(nH):
        best = 0
        mx = unmaxed[h * nP]
        for p in range(1, nP):
            if unmaxed[h * nP + p] > mx:
                mx = unmaxed[h * nP + p]
                best = p
        hidden[h] = mx
        if which != NULL:
            which[h] = best
    # Moves are scored from the transposed weights (nH, nO): the inner loop
    # runs over moves with contiguous weights and independent sums, which
    # the compiler vectorizes (a dot product per move would be one dependent
    # chain of additions).
    memcpy(scores, w.output_b, nO * sizeof(float))
    for h in range(nH):
        x = hidden[h]
        row = &w.output_Wt[h * nO]
        for m in range(nO):
            scores[m] += row[m] * x


def score_states(HostWeights weights, float[:, :, :, ::1] table, int[:, ::1] ids):
    """Scores (n, nO), hidden vectors (n, nH) and maxout choices (n, nH) of
    n states with context ids (n, nF), from the token table (rows + 1, nF,
    nH, nP)."""
    cdef const StepWeights* w = &weights.c
    if (table.shape[1], table.shape[2], table.shape[3]) != (w.nF, w.nH, w.nP) \
            or ids.shape[1] != w.nF:
        raise ValueError(
            f"Token table {tuple(table.shape)[1:]} and context {ids.shape[1]} do not "
            f"match the step model (nF, nH, nP) = {(w.nF, w.nH, w.nP)}.")
    cdef int n = ids.shape[0], b
    scores = numpy.empty((n, w.nO), dtype="f")
    hidden = numpy.empty((n, w.nH), dtype="f")
    which = numpy.empty((n, w.nH), dtype="i")
    unmaxed = numpy.empty(w.nH * w.nP, dtype="f")
    cdef float[:, ::1] s = scores
    cdef float[:, ::1] hv = hidden
    cdef int[:, ::1] wv = which
    cdef float[::1] u = unmaxed
    if n == 0:
        return scores, hidden, which
    with nogil:
        for b in range(n):
            score_state(w, &table[0, 0, 0, 0], &ids[b, 0], &u[0], &hv[b, 0], &wv[b, 0], &s[b, 0])
    return scores, hidden, which


def scatter_hidden_grad(float[:, :, :, ::1] d_table, int[:, ::1] ids,
                        float[:, :, ::1] d_unmaxed):
    """The table's share of the backward pass: d_table[ids[b, f] + 1, f] +=
    d_unmaxed[b] for every state b and slot f."""
    cdef int nB = ids.shape[0], nF = d_table.shape[1]
    cdef int HP = d_table.shape[2] * d_table.shape[3]
    cdef int b, f, h
    cdef float* dst
    cdef const float* src
    with nogil:
        for b in range(nB):
            src = &d_unmaxed[b, 0, 0]
            for f in range(nF):
                dst = &d_table[ids[b, f] + 1, f, 0, 0]
                for h in range(HP):
                    dst[h] += src[h]
