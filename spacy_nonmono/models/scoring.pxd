cdef struct StepWeights:
    # Host views of a step model's parameters (see models/step_model.py).
    const float* hidden_bias    # (nH, nP)
    const float* output_Wt      # (nH, nO): the output weights, transposed
    const float* output_b       # (nO,)
    int nF
    int nH
    int nP
    int nO


cdef class HostWeights:
    cdef StepWeights c
    cdef object _arrays         # keeps the arrays behind the pointers alive


cdef void score_state(const StepWeights* w, const float* table, const int* ids,
                      float* unmaxed, float* hidden, int* which,
                      float* scores) noexcept nogil
