# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The C-level interface every transition system implements, plus a Python
wrapper around one configuration (`ParseState`) for tests and tools."""
from libc.string cimport memcpy
from cymem.cymem cimport Pool

# Python view of the cost of invalid moves.
INVALID = INVALID_COST


cdef StateC* alloc_state(Pool mem, int n) except NULL:
    cdef StateC* s = <StateC*>mem.alloc(1, sizeof(StateC))
    s.n = n
    s.heads = <int*>mem.alloc(n + 1, sizeof(int))
    s.labels = <int*>mem.alloc(n + 1, sizeof(int))
    s.stack = <int*>mem.alloc(n + 1, sizeof(int))
    return s


cdef void copy_state(StateC* dst, const StateC* src) noexcept nogil:
    """Copy src into dst; both must have been allocated for the same n."""
    cdef int* heads = dst.heads
    cdef int* labels = dst.labels
    cdef int* stack = dst.stack
    memcpy(dst, src, sizeof(StateC))
    dst.heads = heads
    dst.labels = labels
    dst.stack = stack
    memcpy(dst.heads, src.heads, (src.n + 1) * sizeof(int))
    memcpy(dst.labels, src.labels, (src.n + 1) * sizeof(int))
    memcpy(dst.stack, src.stack, (src.n + 1) * sizeof(int))


cdef int token_row(const StateC* s, int k) noexcept nogil:
    """Row of node k in the batch's token table: -1 (padding) for no node."""
    if k < 0 or k > s.n:
        return -1
    if k == 0:
        return s.root_id
    return s.offset + k - 1


cdef class TransitionSystem:
    """Base class. Subclasses define moves, validity, oracles and context.

    Moves are ints 0..n_moves-1. `oracle` is "dynamic" (costs are loss
    differences) or "static" (cost 0 for the static oracle's move only).
    `loss` names the loss expression of the dynamic oracle, one of the
    class's `loss_names` (None: the first).
    """
    name = "base"
    n_structural = 0
    loss_names = ("exact",)

    def __init__(self, labels=(), oracle="dynamic", loss=None):
        if oracle not in ("dynamic", "static"):
            raise ValueError(
                f"Unknown oracle {oracle!r} for system {self.name!r}: "
                "expected 'dynamic' or 'static'."
            )
        if loss is None:
            loss = self.loss_names[0]
        if loss not in self.loss_names:
            raise ValueError(
                f"Unknown loss {loss!r} for system {self.name!r}: expected one of "
                f"{', '.join(repr(name) for name in self.loss_names)}."
            )
        self.loss_name = loss
        self.oracle = oracle
        self.static_oracle = oracle == "static"
        self.labels = list(labels)
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"Duplicate labels: {self.labels}")
        self.label_ids = {label: i for i, label in enumerate(self.labels)}
        self.n_labels = len(self.labels)

    def move_name(self, int move):
        raise NotImplementedError

    @property
    def move_names(self):
        return [self.move_name(m) for m in range(self.n_moves)]

    def new_state(self, gold_heads=None, gold_labels=None, n=None):
        """A ParseState at the initial configuration (for tests and tools).

        gold_heads[k-1] is the head of word k (0 = root); gold_labels are ids.
        """
        return ParseState(self, gold_heads, gold_labels, n)

    cdef void init_state(self, StateC* s) noexcept nogil:
        pass

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return True

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        pass

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        pass

    cdef int loss(self, const StateC* s, const GoldC* gold) noexcept nogil:
        return 0

    cdef void set_costs(self, const StateC* s, const GoldC* gold, int* is_valid,
                        float* costs) noexcept nogil:
        pass

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        return -1

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        pass

    cdef void finish(self, StateC* s) noexcept nogil:
        pass

    cdef void set_oracle_costs(self, const StateC* s, const GoldC* gold,
                               int* is_valid, float* costs) noexcept nogil:
        """Costs used for training, following the configured oracle."""
        cdef int m, best
        if self.static_oracle:
            self.set_valid(s, is_valid)
            best = self.static_move(s, gold)
            for m in range(self.n_moves):
                costs[m] = 0.0 if m == best else (1.0 if is_valid[m] else INVALID_COST)
        else:
            self.set_costs(s, gold, is_valid, costs)


def check_gold_tree(heads):
    """Raise ValueError unless heads (head of word k at k-1, 0 = root) is a
    single-rooted tree over words 1..n."""
    n = len(heads)
    roots = [k + 1 for k, h in enumerate(heads) if h == 0]
    for k, h in enumerate(heads):
        if not isinstance(h, int) and not hasattr(h, "__index__"):
            raise ValueError(f"Head of word {k+1} is not an integer: {h!r}")
        if h < 0 or h > n:
            raise ValueError(f"Head of word {k+1} is {h}, outside the sentence (0..{n}).")
        if h == k + 1:
            raise ValueError(f"Word {k+1} is its own head.")
    if len(roots) != 1:
        raise ValueError(f"Gold tree must have exactly one root, found {len(roots)}: words {roots}.")
    for k in range(1, n + 1):
        seen = set()
        v = k
        while v != 0:
            if v in seen:
                raise ValueError(f"Gold heads contain a cycle through word {v}.")
            seen.add(v)
            v = heads[v - 1]


cdef class ParseState:
    """One configuration of a system, driven from Python. Slow; for tests,
    oracle analysis and tools, never for the parser's hot loops."""

    def __init__(self, TransitionSystem system, gold_heads=None, gold_labels=None, n=None):
        self.mem = Pool()
        self.system = system
        if gold_heads is None and n is None:
            raise ValueError("Give gold_heads or n.")
        if gold_heads is not None:
            gold_heads = [int(h) for h in gold_heads]
            check_gold_tree(gold_heads)
            n = len(gold_heads)
            if gold_labels is None:
                gold_labels = [-1] * n
            if len(gold_labels) != n:
                raise ValueError("gold_labels and gold_heads differ in length.")
        self.c = alloc_state(self.mem, n)
        self.gold = <GoldC*>self.mem.alloc(1, sizeof(GoldC))
        self.gold.n = n
        self.gold.heads = <int*>self.mem.alloc(n + 1, sizeof(int))
        self.gold.labels = <int*>self.mem.alloc(n + 1, sizeof(int))
        self.gold.heads[0] = -1
        self.gold.labels[0] = -1
        self.has_gold = gold_heads is not None
        if self.has_gold:
            for k in range(n):
                self.gold.heads[k + 1] = gold_heads[k]
                self.gold.labels[k + 1] = int(gold_labels[k])
        self.c.offset = 1
        self.c.root_id = 0
        system.init_state(self.c)

    def copy(self, TransitionSystem system=None):
        """A copy of this configuration; with `system`, read by that system
        instead (one with the same moves, e.g. another loss of the family)."""
        if system is not None and (system.n_moves != self.system.n_moves
                                   or type(system) is not type(self.system)):
            raise ValueError("copy(system=...) needs a system of the same kind and moves.")
        cdef ParseState other = ParseState.__new__(ParseState)
        other.mem = Pool()
        other.system = system if system is not None else self.system
        other.has_gold = self.has_gold
        other.c = alloc_state(other.mem, self.c.n)
        copy_state(other.c, self.c)
        other.gold = self.gold   # gold is immutable; keep self alive via reference
        other._gold_owner = self
        return other

    @property
    def n(self):
        return self.c.n

    @property
    def focus(self):
        return (self.c.i, self.c.j)

    @property
    def heads(self):
        return [self.c.heads[k] for k in range(1, self.c.n + 1)]

    @property
    def labels(self):
        return [self.c.labels[k] for k in range(1, self.c.n + 1)]

    @property
    def gold_heads(self):
        self._require_gold()
        return [self.gold.heads[k] for k in range(1, self.c.n + 1)]

    @property
    def stack(self):
        return [self.c.stack[k] for k in range(self.c.stack_len)]

    def is_final(self):
        return self.system.is_final(self.c)

    def _valid(self):
        cdef Pool mem = Pool()
        cdef int* is_valid = <int*>mem.alloc(self.system.n_moves, sizeof(int))
        self.system.set_valid(self.c, is_valid)
        return [is_valid[m] for m in range(self.system.n_moves)]

    def valid_moves(self):
        return [m for m, v in enumerate(self._valid()) if v]

    def _require_gold(self):
        if not self.has_gold:
            raise ValueError("This state has no gold tree.")

    def costs(self):
        self._require_gold()
        cdef Pool mem = Pool()
        cdef int* is_valid = <int*>mem.alloc(self.system.n_moves, sizeof(int))
        cdef float* costs = <float*>mem.alloc(self.system.n_moves, sizeof(float))
        self.system.set_oracle_costs(self.c, self.gold, is_valid, costs)
        return [costs[m] for m in range(self.system.n_moves)]

    def loss(self):
        self._require_gold()
        return self.system.loss(self.c, self.gold)

    def static_move(self):
        self._require_gold()
        return self.system.static_move(self.c, self.gold)

    def apply(self, int move):
        if move < 0 or move >= self.system.n_moves or not self._valid()[move]:
            raise ValueError(f"Move {move} is not valid in this configuration.")
        self.system.apply(self.c, move)

    def context(self):
        cdef Pool mem = Pool()
        cdef int* ids = <int*>mem.alloc(max(1, self.system.n_context), sizeof(int))
        self.system.set_context(self.c, ids)
        return [ids[f] for f in range(self.system.n_context)]

    def finish(self):
        """(heads, labels) of the tree the system makes of this configuration."""
        other = self.copy()
        self.system.finish((<ParseState>other).c)
        return other.heads, other.labels


cdef ParseState wrap_state(TransitionSystem system, const StateC* s, const GoldC* gold):
    """A ParseState holding copies of a configuration and its gold tree (NULL:
    none), e.g. to analyse the states of a batch from Python."""
    cdef ParseState out = ParseState.__new__(ParseState)
    cdef int k
    out.mem = Pool()
    out.system = system
    out.c = alloc_state(out.mem, s.n)
    copy_state(out.c, s)
    out.gold = <GoldC*>out.mem.alloc(1, sizeof(GoldC))
    out.gold.n = s.n
    out.gold.heads = <int*>out.mem.alloc(s.n + 1, sizeof(int))
    out.gold.labels = <int*>out.mem.alloc(s.n + 1, sizeof(int))
    out.has_gold = gold != NULL
    for k in range(s.n + 1):
        out.gold.heads[k] = gold.heads[k] if gold != NULL else -1
        out.gold.labels[k] = gold.labels[k] if gold != NULL else -1
    return out
