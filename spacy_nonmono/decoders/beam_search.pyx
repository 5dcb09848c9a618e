# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""Beam search over any transition system: per sentence, the `width`
best-scoring partial move sequences (histories), a history's score the sum of
its moves' scores (as spaCy's beam parser and globally normalized models,
Andor et al. 2016). Parsing runs in C without the GIL, sentence after
sentence like the greedy loop; training drives a predicted and a gold beam
step by step from Python (decoders/beam.py).

Each step, every entry of a beam that is not final proposes each valid move
(its score plus the move's); a final entry proposes itself unchanged. The
`width` best candidates form the next beam, ties to the earlier entry, then
the lower move id, so width 1 takes exactly the greedy decoder's moves. With
a density above 0, candidates scoring below best + log(density) are dropped
(spaCy's beam_density: probability under a softmax over the candidates below
density times the best's). A sentence is done when every entry is final; a
system's move limit bounds the steps (`TransitionSystem.max_moves`).

With gold trees every entry's history loss is summed from the oracle's
losses (`set_oracle_losses`). A gold beam (`gold_only`) keeps only each
entry's training targets of least cost (the losses adjusted by the system's
training policy, `adjust_targets`, as the greedy decoder's update reads
them): moves of zero loss (tests/test_losses.py) that the policy prefers
(e.g. no wrong-for-wrong repair where a plain move is as good), so its
histories are the gold analyses the objective rewards.
"""
import numpy
from libc.math cimport log
from libc.string cimport memcpy
from cymem.cymem cimport Pool

from ..systems.base cimport StateC, GoldC, TransitionSystem, copy_state
from ..models.scoring cimport (StepWeights, HostWeights, ScoringScratch, score_state,
                               scoring_scratch)


cdef struct Candidate:
    double score
    int parent          # entry of the current beam
    int move            # -1: a final entry, carried over unchanged


cdef struct Beam:
    StateC** entries    # width configurations, the first `size` in use
    StateC** spare      # width more, the next step's beam is built in
    double* scores      # history score of each entry
    double* losses      # summed oracle loss of each entry's moves (with gold)
    unsigned long long* keys   # a hash of each entry's history
    int* parents        # after a step: each entry's parent in the previous beam
    int* moves          # after a step: the move it made (-1: carried over)
    float* rows         # width * nO: the move scores of each entry this step
    int* valid          # width * nO
    float* move_losses  # width * nO: the oracle's losses (with gold)
    float* targets      # width * nO: the oracle's training targets (gold beam)
    int size
    int steps
    int limit           # the system's move limit for this sentence
    bint done
    bint advanced       # whether the last `advance` call moved this beam


cdef class BeamBatch:
    """A beam per sentence. Sentence b has `lengths[b]` words whose token
    vectors are rows offsets[b] .. of the token table; the root's is row
    `root_id` (as StateBatch). With gold trees the oracle's losses are
    available, and with `gold_only` the beam keeps zero-loss moves only."""
    cdef Pool mem
    cdef readonly TransitionSystem system
    cdef Beam* beams
    cdef GoldC** golds
    cdef int* scratch
    cdef Candidate* candidates
    cdef Candidate* top
    cdef double* next_losses
    cdef unsigned long long* next_keys
    cdef readonly int size
    cdef readonly int width
    cdef readonly double density
    cdef readonly bint has_gold
    cdef readonly bint gold_only

    def __init__(self, TransitionSystem system, lengths, offsets, int root_id, int width,
                 double density=0.0, gold_heads=None, gold_labels=None, bint gold_only=False):
        if width < 1:
            raise ValueError(f"Beam width must be at least 1, got {width}.")
        if not 0.0 <= density < 1.0:
            raise ValueError(f"Beam density must be in [0, 1), got {density}.")
        if gold_only and gold_heads is None:
            raise ValueError("A gold beam needs gold trees.")
        self.mem = Pool()
        self.system = system
        self.size = len(lengths)
        self.width = width
        self.density = density
        self.has_gold = gold_heads is not None
        self.gold_only = gold_only
        cdef int nO = system.n_moves, b, i, n, max_n = 0
        self.beams = <Beam*>self.mem.alloc(max(1, self.size), sizeof(Beam))
        self.golds = <GoldC**>self.mem.alloc(max(1, self.size), sizeof(GoldC*))
        self.candidates = <Candidate*>self.mem.alloc(width * (nO + 1), sizeof(Candidate))
        self.top = <Candidate*>self.mem.alloc(width, sizeof(Candidate))
        self.next_losses = <double*>self.mem.alloc(width, sizeof(double))
        self.next_keys = <unsigned long long*>self.mem.alloc(width, sizeof(unsigned long long))
        cdef int[::1] heads, labels
        cdef Beam* beam
        for b in range(self.size):
            n = lengths[b]
            max_n = max(max_n, n)
            beam = &self.beams[b]
            beam.limit = system.move_limit(n)
            if beam.limit < 0:
                raise ValueError(f"Transition system {system.name!r} declares no move limit "
                                 "(move_limit), so a beam over it might never end.")
            beam.entries = <StateC**>self.mem.alloc(width, sizeof(StateC*))
            beam.spare = <StateC**>self.mem.alloc(width, sizeof(StateC*))
            for i in range(width):
                beam.entries[i] = system.create_state(self.mem, n)
                beam.entries[i].offset = offsets[b]
                beam.entries[i].root_id = root_id
                beam.spare[i] = system.create_state(self.mem, n)
            beam.scores = <double*>self.mem.alloc(width, sizeof(double))
            beam.losses = <double*>self.mem.alloc(width, sizeof(double))
            beam.keys = <unsigned long long*>self.mem.alloc(width, sizeof(unsigned long long))
            beam.parents = <int*>self.mem.alloc(width, sizeof(int))
            beam.moves = <int*>self.mem.alloc(width, sizeof(int))
            beam.rows = <float*>self.mem.alloc(width * nO, sizeof(float))
            beam.valid = <int*>self.mem.alloc(width * nO, sizeof(int))
            beam.move_losses = <float*>self.mem.alloc(width * nO, sizeof(float))
            beam.targets = <float*>self.mem.alloc(width * nO, sizeof(float))
            beam.size = 1
            beam.parents[0] = 0
            beam.moves[0] = -1
            beam.done = system.is_final(beam.entries[0])
            if self.has_gold:
                heads = numpy.ascontiguousarray(numpy.concatenate(([-1], gold_heads[b])),
                                                dtype=numpy.int32)
                labels = numpy.ascontiguousarray(numpy.concatenate(([-1], gold_labels[b])),
                                                 dtype=numpy.int32)
                self.golds[b] = system.create_gold(self.mem, n, &heads[0], &labels[0])
        self.scratch = <int*>self.mem.alloc(max(1, system.scratch_size(max_n)), sizeof(int))

    # -- parsing ---------------------------------------------------------------

    def parse(self, float[:, :, :, ::1] table, HostWeights weights):
        """Beam search on every sentence to the end, scoring states with the
        step model's C routine. Returns the number of transitions applied
        (to every entry: the decoding work)."""
        cdef const StepWeights* w = &weights.c
        weights.check(self.system.n_context, self.system.n_moves,
                      (table.shape[0], table.shape[1], table.shape[2], table.shape[3]))
        cdef Pool mem = Pool()
        cdef ScoringScratch s = scoring_scratch(mem, w)
        cdef int b, i
        cdef long status = 0, transitions = 0
        cdef Beam* beam
        cdef const float* t = &table[0, 0, 0, 0]
        with nogil:
            for b in range(self.size):
                beam = &self.beams[b]
                while not beam.done and status >= 0:
                    for i in range(beam.size):
                        if not self.system.is_final(beam.entries[i]):
                            self.system.set_context(beam.entries[i], s.ids)
                            score_state(w, t, s.ids, s.unmaxed, s.hidden, NULL,
                                        &beam.rows[i * w.nO])
                    status = self.advance_beam(beam, self.golds[b] if self.has_gold else NULL)
                    if status > 0:
                        transitions += status
                if status < 0:
                    break
        self.check(status)
        return transitions

    cdef int advance_beam(self, Beam* beam, const GoldC* gold) noexcept nogil:
        """One step of a beam whose entries' move scores are in beam.rows.
        Returns the number of moves applied, or -1 if a non-final entry has
        no valid move, -2 if the beam outran the system's move limit (system
        bugs: stop rather than loop)."""
        cdef int nO = self.system.n_moves, i, m, k, n_cand = 0, n_top = 0, applied = 0
        cdef bint any_valid
        cdef double best = -1e300, threshold
        cdef float least
        cdef Candidate c
        cdef StateC** swap
        if beam.steps >= beam.limit:
            return -2
        for i in range(beam.size):
            if self.system.is_final(beam.entries[i]):
                c.score = beam.scores[i]
                c.parent = i
                c.move = -1
                self.candidates[n_cand] = c
                n_cand += 1
                continue
            if gold != NULL:
                self.system.set_oracle_losses(beam.entries[i], gold, &beam.valid[i * nO],
                                              &beam.move_losses[i * nO], self.scratch)
            else:
                self.system.set_valid(beam.entries[i], &beam.valid[i * nO])
            if self.gold_only:
                # The training targets: the losses, adjusted as in
                # set_oracle_costs (without computing the losses twice).
                memcpy(&beam.targets[i * nO], &beam.move_losses[i * nO], nO * sizeof(float))
                if not self.system.static_oracle:
                    self.system.adjust_targets(beam.entries[i], gold, &beam.valid[i * nO],
                                               &beam.targets[i * nO], self.scratch)
            any_valid = False
            least = 1e30
            for m in range(nO):
                if beam.valid[i * nO + m]:
                    any_valid = True
                    if self.gold_only and beam.targets[i * nO + m] < least:
                        least = beam.targets[i * nO + m]
            for m in range(nO):
                if not beam.valid[i * nO + m]:
                    continue
                if self.gold_only and beam.targets[i * nO + m] > least:
                    continue
                c.score = beam.scores[i] + beam.rows[i * nO + m]
                c.parent = i
                c.move = m
                self.candidates[n_cand] = c
                n_cand += 1
            if not any_valid:
                return -1
        if n_cand == 0:
            return -1
        for k in range(n_cand):
            if self.candidates[k].score > best:
                best = self.candidates[k].score
        threshold = best + log(self.density) if self.density > 0.0 else -1e300
        # The `width` best candidates by score, ties kept in candidate order
        # (entry, then move id): a stable insertion.
        for k in range(n_cand):
            c = self.candidates[k]
            if c.score < threshold:
                continue
            if n_top == self.width and c.score <= self.top[n_top - 1].score:
                continue
            i = n_top if n_top < self.width else n_top - 1
            while i > 0 and self.top[i - 1].score < c.score:
                self.top[i] = self.top[i - 1]
                i -= 1
            self.top[i] = c
            if n_top < self.width:
                n_top += 1
        # The next beam, built in the spare configurations and arrays.
        for k in range(n_top):
            c = self.top[k]
            copy_state(beam.spare[k], beam.entries[c.parent])
            self.next_losses[k] = beam.losses[c.parent]
            self.next_keys[k] = beam.keys[c.parent]
            if c.move >= 0:
                self.system.apply_scored(beam.spare[k], c.move, &beam.rows[c.parent * nO])
                if gold != NULL:
                    self.next_losses[k] += beam.move_losses[c.parent * nO + c.move]
                self.next_keys[k] = self.next_keys[k] * 1000003ULL + <unsigned long long>(c.move + 1)
                applied += 1
        swap = beam.entries
        beam.entries = beam.spare
        beam.spare = swap
        beam.size = n_top
        beam.steps += 1
        beam.done = True
        for k in range(n_top):
            beam.scores[k] = self.top[k].score
            beam.parents[k] = self.top[k].parent
            beam.moves[k] = self.top[k].move
            beam.losses[k] = self.next_losses[k]
            beam.keys[k] = self.next_keys[k]
            if not self.system.is_final(beam.entries[k]):
                beam.done = False
        return applied

    def check(self, long status):
        if status == -1:
            raise RuntimeError(f"Transition system {self.system.name!r} offered no valid move "
                               "in a non-final configuration.")
        if status == -2:
            raise RuntimeError(f"A beam over {self.system.name!r} ran past the system's move "
                               "limit.")

    # -- training: the steps driven from Python ------------------------------------

    @property
    def is_done(self):
        cdef int b
        for b in range(self.size):
            if not self.beams[b].done:
                return False
        return True

    def live(self):
        """(sentence, entry) of every non-final entry of an unfinished beam,
        as two int32 arrays: the rows to score this step, in this order."""
        cdef int b, i, n = 0, total = 0
        for b in range(self.size):
            total += self.beams[b].size
        sentences = numpy.empty(total, dtype=numpy.int32)
        entries = numpy.empty(total, dtype=numpy.int32)
        cdef int[::1] s = sentences, e = entries
        for b in range(self.size):
            if self.beams[b].done:
                continue
            for i in range(self.beams[b].size):
                if not self.system.is_final(self.beams[b].entries[i]):
                    s[n] = b
                    e[n] = i
                    n += 1
        return sentences[:n], entries[:n]

    def get_context(self, int[::1] sentences, int[::1] entries):
        ids = numpy.empty((sentences.shape[0], self.system.n_context), dtype=numpy.int32)
        cdef int[:, ::1] view = ids
        cdef int r
        for r in range(sentences.shape[0]):
            self.system.set_context(self.beams[sentences[r]].entries[entries[r]], &view[r, 0])
        return ids

    def advance(self, int[::1] sentences, int[::1] entries, float[:, ::1] scores):
        """One step of every unfinished beam, row r of `scores` holding the
        move scores of entry entries[r] of sentence sentences[r] (`live`)."""
        cdef int nO = self.system.n_moves, r, b
        cdef long status
        if scores.shape[0] != sentences.shape[0] or (scores.shape[0] and scores.shape[1] != nO):
            raise ValueError("Scores do not match the live entries.")
        for r in range(sentences.shape[0]):
            memcpy(&self.beams[sentences[r]].rows[entries[r] * nO], &scores[r, 0],
                   nO * sizeof(float))
        for b in range(self.size):
            self.beams[b].advanced = not self.beams[b].done
            if self.beams[b].advanced:
                status = self.advance_beam(&self.beams[b], self.golds[b] if self.has_gold else NULL)
                if status < 0:
                    self.check(status)

    def snapshot(self):
        """Every beam after the last `advance`, as flat arrays over all
        entries, each sentence's best first: sentence, score, loss (summed
        oracle losses), key (a uint64 hash of the history), parent (its
        entry in the previous beam) and move (-1: carried over); a beam that
        did not move (done before) has each entry its own parent. Plus
        `first`, the offset of each sentence's entries (size + 1 values)."""
        cdef int b, i, k = 0, total = 0
        cdef Beam* beam
        for b in range(self.size):
            total += self.beams[b].size
        first = numpy.empty(self.size + 1, dtype=numpy.int32)
        sentence = numpy.empty(total, dtype=numpy.int32)
        score = numpy.empty(total, dtype=numpy.float64)
        loss = numpy.empty(total, dtype=numpy.float64)
        key = numpy.empty(total, dtype=numpy.uint64)
        parent = numpy.empty(total, dtype=numpy.int32)
        move = numpy.empty(total, dtype=numpy.int32)
        cdef int[::1] f = first, s = sentence, p = parent, m = move
        cdef double[::1] sc = score, lo = loss
        cdef unsigned long long[::1] ke = key
        for b in range(self.size):
            beam = &self.beams[b]
            f[b] = k
            for i in range(beam.size):
                s[k] = b
                sc[k] = beam.scores[i]
                lo[k] = beam.losses[i]
                ke[k] = beam.keys[i]
                p[k] = beam.parents[i] if beam.advanced else i
                m[k] = beam.moves[i] if beam.advanced else -1
                k += 1
        f[self.size] = k
        return {"first": first, "sentence": sentence, "score": score, "loss": loss,
                "key": key, "parent": parent, "move": move}

    def finish(self):
        """Each sentence's best entry finished to a tree: (heads, labels)
        lists of int32 arrays as StateBatch.finish."""
        cdef int b, k, n
        cdef StateC* best
        heads, labels = [], []
        for b in range(self.size):
            best = self.beams[b].entries[0]
            self.system.finish(best)
            n = best.n
            h = numpy.empty(n, dtype=numpy.int32)
            l = numpy.empty(n, dtype=numpy.int32)
            for k in range(n):
                h[k] = best.heads[k + 1]
                l[k] = best.labels[k + 1]
            heads.append(h)
            labels.append(l)
        return heads, labels
