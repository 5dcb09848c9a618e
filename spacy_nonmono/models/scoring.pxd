from cymem.cymem cimport Pool


cdef struct StepWeights:
    # Host views of a step model's parameters (see models/step_model.py).
    const float* hidden_bias    # (nH, nP)
    const float* output_Wt      # (nH, nO): the output weights, transposed
    const float* output_b       # (nO,)
    int nF
    int nH
    int nP
    int nO


cdef struct ScoringScratch:
    # What score_state needs besides the weights and table: a state's
    # context ids (nF), the hidden pre-activations (nH * nP) and the hidden
    # vector (nH).
    int* ids
    float* unmaxed
    float* hidden


cdef ScoringScratch scoring_scratch(Pool mem, const StepWeights* w) except *


cdef class HostWeights:
    cdef StepWeights c
    cdef object _arrays         # keeps the arrays behind the pointers alive


cdef void score_state(const StepWeights* w, const float* table, const int* ids,
                      float* unmaxed, float* hidden, int* which,
                      float* scores) noexcept nogil
