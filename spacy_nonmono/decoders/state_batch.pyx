# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""A batch of parser configurations: greedy parsing in C, and the per-step
calls training needs (context, oracle costs, moves)."""
import numpy
from libc.math cimport exp, log
from cymem.cymem cimport Pool

from ..systems.base cimport StateC, GoldC, TransitionSystem, wrap_state
from ..models.scoring cimport (StepWeights, HostWeights, ScoringScratch, score_state,
                               scoring_scratch)


cdef class StateBatch:
    """Configurations for a list of sentences. Sentence b has `lengths[b]`
    words whose token vectors are rows offsets[b] .. offsets[b]+lengths[b]-1 of
    the batch's token table; the root vector is row `root_id`. With gold
    trees (gold_heads[b][k-1] = head of word k, 0 = root; label ids), each
    sentence's gold object is built once by the system."""
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef StateC** states
    cdef GoldC** golds
    cdef int* scratch          # the system's cost scratch, sized for the longest sentence
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
        cdef int b, n, max_n = 0
        cdef int[::1] heads, labels
        for b in range(self.size):
            n = lengths[b]
            max_n = max(max_n, n)
            self.states[b] = system.create_state(self.mem, n)
            self.states[b].offset = offsets[b]
            self.states[b].root_id = root_id
            if self.has_gold:
                # Index 0 is the root's (unused) slot.
                heads = numpy.ascontiguousarray(numpy.concatenate(([-1], gold_heads[b])), dtype=numpy.int32)
                labels = numpy.ascontiguousarray(numpy.concatenate(([-1], gold_labels[b])), dtype=numpy.int32)
                self.golds[b] = system.create_gold(self.mem, n, &heads[0], &labels[0])
        self.scratch = <int*>self.mem.alloc(max(1, system.scratch_size(max_n)), sizeof(int))

    def active(self):
        """Indices of the configurations that are not final."""
        out = numpy.empty(self.size, dtype=numpy.int32)
        cdef int[::1] view = out
        cdef int b, n = 0
        for b in range(self.size):
            if not self.system.is_final(self.states[b]):
                view[n] = b
                n += 1
        return out[:n]

    def get_context(self, int[::1] active):
        cdef int nF = self.system.n_context
        ids = numpy.empty((active.shape[0], nF), dtype=numpy.int32)
        cdef int[:, ::1] view = ids
        cdef int a
        for a in range(active.shape[0]):
            self.system.set_context(self.states[active[a]], &view[a, 0])
        return ids

    def get_valid(self, int[::1] active):
        """Validity of every move, (n_active, n_moves) int32."""
        valid = numpy.empty((active.shape[0], self.system.n_moves), dtype=numpy.int32)
        cdef int[:, ::1] v = valid
        cdef int a
        for a in range(active.shape[0]):
            self.system.set_valid(self.states[active[a]], &v[a, 0])
        return valid

    def get_costs(self, int[::1] active):
        """Oracle costs and validity, each (n_active, n_moves)."""
        if not self.has_gold:
            raise ValueError("This batch has no gold trees.")
        cdef int nO = self.system.n_moves
        costs = numpy.empty((active.shape[0], nO), dtype=numpy.float32)
        valid = numpy.empty((active.shape[0], nO), dtype=numpy.int32)
        cdef float[:, ::1] c = costs
        cdef int[:, ::1] v = valid
        cdef int a
        for a in range(active.shape[0]):
            self.system.set_oracle_costs(self.states[active[a]], self.golds[active[a]],
                                         &v[a, 0], &c[a, 0], self.scratch)
        return costs, valid

    def parse_state(self, int b):
        """A copy of configuration b (with its gold tree) as a ParseState,
        for analysis from Python."""
        if not 0 <= b < self.size:
            raise IndexError(b)
        return wrap_state(self.system, self.states[b],
                          self.golds[b] if self.has_gold else NULL)

    def apply(self, int[::1] active, int[::1] moves, float[:, ::1] scores=None):
        """Apply moves[a] to state active[a], chosen with scores[a] (if given)."""
        cdef int a
        cdef const float* row = NULL
        for a in range(active.shape[0]):
            if scores is not None:
                row = &scores[a, 0]
            self.system.apply_scored(self.states[active[a]], moves[a], row)

    def finish(self):
        """Finish every configuration to a tree; return (heads, labels) lists
        of int32 arrays (head of word k at k-1, 0 = root; label -1 = none)."""
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

    def parse(self, float[:, :, :, ::1] table, HostWeights weights):
        """Greedy parsing of every configuration to the end, without the GIL,
        scoring states with the step model's C routine.

        table: (n_rows + 1, nF, nH, nP), the token table (row 0 padding).
        Returns the number of transitions applied.
        """
        cdef const StepWeights* w = &weights.c
        weights.check(self.system.n_context, self.system.n_moves,
                      (table.shape[0], table.shape[1], table.shape[2], table.shape[3]))
        cdef Pool mem = Pool()
        cdef ScoringScratch scratch = scoring_scratch(mem, w)
        cdef float* scores = <float*>mem.alloc(max(1, w.nO), sizeof(float))
        cdef int* is_valid = <int*>mem.alloc(max(1, w.nO), sizeof(int))
        cdef long n_transitions
        with nogil:
            n_transitions = greedy_parse(self.system, self.states, self.size, w,
                                         &table[0, 0, 0, 0], &scratch, scores, is_valid)
        if n_transitions < 0:
            raise RuntimeError(f"Transition system {self.system.name!r} offered no valid move "
                               "in a non-final configuration.")
        return n_transitions


cdef long greedy_parse(TransitionSystem system, StateC** batch, int size,
                       const StepWeights* w, const float* table, ScoringScratch* scratch,
                       float* scores, int* is_valid) noexcept nogil:
    """Parse every state to the end, each by its best-scoring valid move;
    return the number of transitions applied, or -1 if a non-final state
    had no valid move (a system bug: stop rather than loop forever)."""
    cdef int b, m, best
    cdef long n_transitions = 0
    cdef StateC* state
    for b in range(size):
        state = batch[b]
        while not system.is_final(state):
            system.set_context(state, scratch.ids)
            score_state(w, table, scratch.ids, scratch.unmaxed, scratch.hidden, NULL, scores)
            system.set_valid(state, is_valid)
            best = -1
            for m in range(w.nO):
                if is_valid[m] and (best == -1 or scores[m] > scores[best]):
                    best = m
            if best == -1:
                return -1
            system.apply_scored(state, best, scores)
            n_transitions += 1
    return n_transitions


def softmax_log_loss(float[:, ::1] scores, float[:, ::1] costs, int[:, ::1] valid):
    """Gradient of -log sum_m w_m P(m) under a softmax over the valid moves,
    and the summed loss. The target weight of a valid move is
    w_m = max(0, 1 - (cost_m - least cost)): 1 for the moves of least cost
    (0 for an exact oracle), 0 for moves costing at least one more, and in
    between for fractional costs, which a system uses to keep a move as a
    weaker target (Covington's tie_break "weighted")."""
    cdef int nB = scores.shape[0], nO = scores.shape[1], b, m
    d_scores = numpy.zeros((nB, nO), dtype=numpy.float32)
    cdef float[:, ::1] d = d_scores
    cdef double mx, Z, gZ, best_cost, weight, total = 0.0
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
                gZ += _target_weight(costs[b, m], best_cost) * exp(scores[b, m] - mx)
        for m in range(nO):
            if valid[b, m]:
                weight = _target_weight(costs[b, m], best_cost)
                d[b, m] = exp(scores[b, m] - mx) / Z - weight * exp(scores[b, m] - mx) / gZ
        total += log(Z) - log(gZ)
    return d_scores, total


cdef inline double _target_weight(double cost, double best_cost) noexcept nogil:
    return max(0.0, 1.0 - (cost - best_cost))


def choose_moves(float[:, ::1] scores, float[:, ::1] costs, int[:, ::1] valid,
                 double[::1] draws, double follow_prob,
                 double[::1] weak_draws=None, double weak_prob=0.0,
                 int[::1] replaceable=None):
    """Per state, the best-scoring valid move, or, when its draw is below
    follow_prob (always when follow_prob >= 1; draws may then be empty), the
    best-scoring move of least cost. Then, when weak_prob > 0, a state whose
    chosen move is of least cost (and, if `replaceable` is given, a move with
    replaceable[move] != 0) and whose weak draw is below weak_prob follows
    instead its best-scoring weaker target (a valid move costing less than
    one more: a target of fractional weight, see softmax_log_loss), if it has
    one. Ties go to the lower move id."""
    cdef int nB = scores.shape[0], nO = scores.shape[1], b, m, best, gold, weak
    cdef float least
    moves = numpy.empty(nB, dtype=numpy.int32)
    cdef int[::1] out = moves
    for b in range(nB):
        best = gold = weak = -1
        least = 1e30
        for m in range(nO):
            if valid[b, m] and costs[b, m] < least:
                least = costs[b, m]
        for m in range(nO):
            if not valid[b, m]:
                continue
            if best == -1 or scores[b, m] > scores[b, best]:
                best = m
            if costs[b, m] <= least and (gold == -1 or scores[b, m] > scores[b, gold]):
                gold = m
            if (least < costs[b, m] < least + 1.0
                    and (weak == -1 or scores[b, m] > scores[b, weak])):
                weak = m
        out[b] = gold if follow_prob >= 1.0 or draws[b] < follow_prob else best
        if (weak_prob > 0.0 and weak != -1 and costs[b, out[b]] <= least
                and (replaceable is None or replaceable[out[b]])
                and weak_draws[b] < weak_prob):
            out[b] = weak
    return moves
