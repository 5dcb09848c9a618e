# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""A batch of parser configurations: greedy parsing in C, and the per-step
calls training needs (context, oracle costs, moves)."""
import numpy
from libc.math cimport exp, log
from libc.string cimport memset, memcpy
from libc.stdlib cimport calloc, free
from cymem.cymem cimport Pool

from ..systems.base cimport StateC, GoldC, TransitionSystem, alloc_state, wrap_state


cdef class StateBatch:
    """Configurations for a list of sentences. Sentence b has `lengths[b]`
    words whose token vectors are rows offsets[b] .. offsets[b]+lengths[b]-1 of
    the batch's token table; the root vector is row `root_id`."""
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef StateC** states
    cdef GoldC** golds
    cdef readonly int size
    cdef readonly bint has_gold

    def __init__(self, TransitionSystem system, lengths, offsets, int root_id,
                 gold_heads=None, gold_labels=None):
        self.mem = Pool()
        self.system = system
        self.size = len(lengths)
        self.states = <StateC**>self.mem.alloc(max(1, self.size), sizeof(StateC*))
        self.golds = <GoldC**>self.mem.alloc(max(1, self.size), sizeof(GoldC*))
        self.has_gold = gold_heads is not None
        cdef int b, k, n
        cdef int[::1] heads, labels
        for b in range(self.size):
            n = lengths[b]
            self.states[b] = alloc_state(self.mem, n)
            self.states[b].offset = offsets[b]
            self.states[b].root_id = root_id
            system.init_state(self.states[b])
            if self.has_gold:
                heads = numpy.ascontiguousarray(gold_heads[b], dtype=numpy.int32)
                labels = numpy.ascontiguousarray(gold_labels[b], dtype=numpy.int32)
                self.golds[b] = <GoldC*>self.mem.alloc(1, sizeof(GoldC))
                self.golds[b].n = n
                self.golds[b].heads = <int*>self.mem.alloc(n + 1, sizeof(int))
                self.golds[b].labels = <int*>self.mem.alloc(n + 1, sizeof(int))
                self.golds[b].heads[0] = -1
                self.golds[b].labels[0] = -1
                for k in range(n):
                    self.golds[b].heads[k + 1] = heads[k]
                    self.golds[b].labels[k + 1] = labels[k]

    def active(self):
        """Indices of the configurations that are not final."""
        return numpy.asarray(
            [b for b in range(self.size) if not self.system.is_final(self.states[b])],
            dtype=numpy.int32,
        )

    def get_context(self, int[::1] active):
        cdef int nF = self.system.n_context
        ids = numpy.empty((active.shape[0], nF), dtype=numpy.int32)
        cdef int[:, ::1] view = ids
        cdef int a
        for a in range(active.shape[0]):
            self.system.set_context(self.states[active[a]], &view[a, 0])
        return ids

    def get_costs(self, int[::1] active):
        """Oracle costs and validity, each (n_active, n_moves)."""
        cdef int nO = self.system.n_moves
        costs = numpy.empty((active.shape[0], nO), dtype=numpy.float32)
        valid = numpy.empty((active.shape[0], nO), dtype=numpy.int32)
        cdef float[:, ::1] c = costs
        cdef int[:, ::1] v = valid
        cdef int a
        for a in range(active.shape[0]):
            self.system.set_oracle_costs(
                self.states[active[a]], self.golds[active[a]], &v[a, 0], &c[a, 0])
        return costs, valid

    def parse_state(self, int b):
        """A copy of configuration b (with its gold tree) as a ParseState,
        for analysis from Python."""
        if not 0 <= b < self.size:
            raise IndexError(b)
        return wrap_state(self.system, self.states[b],
                          self.golds[b] if self.has_gold else NULL)

    def apply(self, int[::1] active, int[::1] moves):
        cdef int a
        for a in range(active.shape[0]):
            self.system.apply(self.states[active[a]], moves[a])

    def finish(self):
        """Finish every configuration to a tree; return (heads, labels) lists
        of int32 arrays (head of word k at k-1, 0 = root; label -1 = repair)."""
        cdef int b, k
        heads, labels = [], []
        for b in range(self.size):
            self.system.finish(self.states[b])
            n = self.states[b].n
            h = numpy.empty(n, dtype=numpy.int32)
            l = numpy.empty(n, dtype=numpy.int32)
            for k in range(n):
                h[k] = self.states[b].heads[k + 1]
                l[k] = self.states[b].labels[k + 1]
            heads.append(h)
            labels.append(l)
        return heads, labels

    def parse(self, float[:, :, :, ::1] table, float[:, ::1] lower_bias,
              float[:, ::1] upper_W, float[::1] upper_b):
        """Greedy parsing of every configuration to the end, without the GIL.

        table: (n_rows + 1, nF, nH, nP) precomputed contributions of each
        token row per context slot; row 0 is the per-slot padding, so token
        row r is at table[r + 1]. upper_W: (nO, nH); upper_b: (nO,).
        Returns the number of transitions applied.
        """
        cdef int nF = table.shape[1], nH = table.shape[2], nP = table.shape[3]
        cdef int nO = upper_W.shape[0]
        if nF != self.system.n_context or nO != self.system.n_moves:
            raise ValueError(
                f"Model shape (context {nF}, moves {nO}) does not match the "
                f"transition system (context {self.system.n_context}, moves "
                f"{self.system.n_moves})."
            )
        # Moves are scored from the transposed weights (nH, nO): the inner loop
        # then runs over moves with contiguous weights and independent sums,
        # which the compiler vectorizes (a dot product per move would be one
        # dependent chain of additions).
        weights_t = numpy.ascontiguousarray(numpy.asarray(upper_W).T)
        cdef float[:, ::1] upper_Wt = weights_t
        cdef long n_transitions
        with nogil:
            n_transitions = greedy_parse(
                self.system, self.states, self.size, &table[0, 0, 0, 0],
                &lower_bias[0, 0], &upper_Wt[0, 0], &upper_b[0], nF, nH, nP, nO)
        return n_transitions


cdef inline void sum_context_rows(float* out, const float* table, const int* ids,
                                  const float* bias, int nF, int HP) noexcept nogil:
    """out = bias + sum over slots f of table[ids[f] + 1, f]: a state's hidden
    pre-activations (nH * nP) from the precomputed token table."""
    cdef int f, h
    cdef const float* feat
    memcpy(out, bias, HP * sizeof(float))
    for f in range(nF):
        feat = &table[((ids[f] + 1) * nF + f) * HP]
        for h in range(HP):
            out[h] += feat[h]


def gather_hidden(float[:, :, :, ::1] table, int[:, ::1] ids, float[:, ::1] bias):
    """Hidden pre-activations (n_states, nH, nP) of states with context ids."""
    cdef int nB = ids.shape[0], nF = table.shape[1], nH = table.shape[2], nP = table.shape[3]
    cdef int b
    unmaxed = numpy.empty((nB, nH, nP), dtype=numpy.float32)
    if nB == 0:
        return unmaxed
    cdef float[:, :, ::1] out = unmaxed
    with nogil:
        for b in range(nB):
            sum_context_rows(&out[b, 0, 0], &table[0, 0, 0, 0], &ids[b, 0], &bias[0, 0], nF, nH * nP)
    return unmaxed


def scatter_hidden_grad(float[:, :, :, ::1] d_table, int[:, ::1] ids,
                        float[:, :, ::1] d_unmaxed):
    """The backward of gather_hidden for the table: d_table[ids[b, f] + 1, f]
    += d_unmaxed[b] for every state b and slot f."""
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


cdef long greedy_parse(TransitionSystem system, StateC** batch, int size,
                       const float* table, const float* lower_bias,
                       const float* upper_Wt, const float* upper_b,
                       int nF, int nH, int nP, int nO) except -1 nogil:
    """Parse every state to the end, each by its best-scoring valid move;
    return the number of transitions applied. upper_Wt: (nH, nO), the
    output weights transposed."""
    cdef int HP = nH * nP
    cdef int* ids = <int*>calloc(nF, sizeof(int))
    cdef float* unmaxed = <float*>calloc(HP, sizeof(float))
    cdef float* hidden = <float*>calloc(nH, sizeof(float))
    cdef float* scores = <float*>calloc(nO, sizeof(float))
    cdef int* is_valid = <int*>calloc(nO, sizeof(int))
    cdef int b, h, p, m, best
    cdef long n_transitions = 0
    cdef float mx, x
    cdef const float* w
    cdef StateC* state
    for b in range(size):
        state = batch[b]
        while not system.is_final(state):
            system.set_context(state, ids)
            sum_context_rows(unmaxed, table, ids, lower_bias, nF, HP)
            for h in range(nH):
                mx = unmaxed[h * nP]
                for p in range(1, nP):
                    if unmaxed[h * nP + p] > mx:
                        mx = unmaxed[h * nP + p]
                hidden[h] = mx
            memcpy(scores, upper_b, nO * sizeof(float))
            for h in range(nH):
                x = hidden[h]
                w = &upper_Wt[h * nO]
                for m in range(nO):
                    scores[m] += w[m] * x
            system.set_valid(state, is_valid)
            best = -1
            for m in range(nO):
                if is_valid[m] and (best == -1 or scores[m] > scores[best]):
                    best = m
            if best == -1:
                # No valid move in a non-final state would be a system bug;
                # stop rather than loop forever.
                free(ids); free(unmaxed); free(hidden); free(scores); free(is_valid)
                with gil:
                    raise RuntimeError("Transition system offered no valid move.")
            system.apply(state, best)
            n_transitions += 1
    free(ids); free(unmaxed); free(hidden); free(scores); free(is_valid)
    return n_transitions


def softmax_log_loss(float[:, ::1] scores, float[:, ::1] costs, int[:, ::1] valid):
    """Gradient of -log P(zero-cost moves) under a softmax over the valid
    moves, and the summed loss. Zero-cost means the minimum cost among the
    valid moves (always 0 for an exact oracle)."""
    cdef int nB = scores.shape[0], nO = scores.shape[1], b, m
    d_scores = numpy.zeros((nB, nO), dtype=numpy.float32)
    cdef float[:, ::1] d = d_scores
    cdef double mx, Z, gZ, best_cost, total = 0.0
    for b in range(nB):
        best_cost = 1e9
        mx = -1e30
        for m in range(nO):
            if valid[b, m]:
                if costs[b, m] < best_cost:
                    best_cost = costs[b, m]
                if scores[b, m] > mx:
                    mx = scores[b, m]
        if mx == -1e30:
            continue
        Z = 0.0
        gZ = 0.0
        for m in range(nO):
            if valid[b, m]:
                Z += exp(scores[b, m] - mx)
                if costs[b, m] <= best_cost:
                    gZ += exp(scores[b, m] - mx)
        for m in range(nO):
            if valid[b, m]:
                d[b, m] = exp(scores[b, m] - mx) / Z
                if costs[b, m] <= best_cost:
                    d[b, m] -= exp(scores[b, m] - mx) / gZ
        total += log(Z) - log(gZ)
    return d_scores, total
