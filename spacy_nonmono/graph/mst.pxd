# Maximum spanning tree with exactly one root (see mst.pyx).

cdef struct MSTArc:
    double w        # reweighted score (+ cost term) of the best arc between two supernodes
    int e           # the original arc it stands for: head * n_nodes + dependent


cdef class MST:
    cdef int capacity           # nodes (words + 1) the buffers hold
    cdef MSTArc* arcs           # capacity * capacity, [dependent slot, head slot]
    cdef int* ints              # N_INT_FIELDS * 2 * capacity
    cdef double* in_w           # 2 * capacity

    cdef int reserve(self, int n_nodes) except -1
    # Decode one sentence of n_words words: scores[h * s_head + d * s_dep] is
    # the score of arc h -> d over nodes 0..n_words (0 = the root node); gold
    # (NULL or n_words 1-based heads) and cost_weight add the cost term. Writes
    # the 1-based heads, the chosen arcs' total score (without cost) and their
    # number of arcs not in gold. reserve(n_words + 1) first. Returns 0, or -1
    # (nothing written) when a score it reads is not finite.
    cdef int decode(self, const float* scores, Py_ssize_t s_head, Py_ssize_t s_dep,
                    int n_words, const int* gold, double cost_weight,
                    int* heads, double* score, int* cost) noexcept nogil
