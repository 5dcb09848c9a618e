# cython: boundscheck=False, wraparound=False, cdivision=True, infer_types=True
"""The C-level interface every transition system implements, its move table
and options, plus a Python wrapper around one configuration (`ParseState`)
for tests and tools.

A system is one module: a subclass of `TransitionSystem` that declares its
move kinds, options and oracles, the ints of state it keeps, and implements
the cdef methods below. See the README's "Adding a transition system".
"""
from libc.string cimport memcpy
from cymem.cymem cimport Pool
import numpy
from ..graph.algorithms cimport single_root
from ..graph.trees import check_gold_tree

# Python view of the cost of invalid moves.
INVALID = INVALID_COST


cdef StateC* alloc_state(Pool mem, int n, int n_data) except NULL:
    cdef StateC* s = <StateC*>mem.alloc(1, sizeof(StateC))
    s.n = n
    s.heads = <int*>mem.alloc(n + 1, sizeof(int))
    s.labels = <int*>mem.alloc(n + 1, sizeof(int))
    s.n_data = n_data
    s.data = <int*>mem.alloc(max(1, n_data), sizeof(int))
    return s


cdef void copy_state(StateC* dst, const StateC* src) noexcept nogil:
    """Copy src into dst; both must have been allocated for the same system
    and n."""
    cdef int* heads = dst.heads
    cdef int* labels = dst.labels
    cdef int* data = dst.data
    memcpy(dst, src, sizeof(StateC))
    dst.heads = heads
    dst.labels = labels
    dst.data = data
    memcpy(dst.heads, src.heads, (src.n + 1) * sizeof(int))
    memcpy(dst.labels, src.labels, (src.n + 1) * sizeof(int))
    memcpy(dst.data, src.data, src.n_data * sizeof(int))


cdef int token_row(const StateC* s, int k) noexcept nogil:
    """Row of node k in the batch's token table: -1 (padding) for no node."""
    if k < 0 or k > s.n:
        return -1
    if k == 0:
        return s.root_id
    return s.offset + k - 1


cdef int label_error(const GoldC* gold, int head, int dep, int label) noexcept nogil:
    """1 if head -> dep is a gold arc and `label` is not its gold label. A
    gold label of -1 matches any label: the component gives the root arc no
    label to learn, as the root is always written ROOT."""
    return 1 if gold.heads[dep] == head and gold.labels[dep] >= 0 and gold.labels[dep] != label else 0


class Option:
    """A setting a system accepts: its default, and either the allowed
    values (`choices`) or a `check(value)` returning an error message or
    None."""

    def __init__(self, default, choices=None, check=None, doc=""):
        self.default = default
        self.choices = tuple(choices) if choices is not None else None
        self.check = check
        self.doc = doc

    def validate(self, system_name, option, value):
        if value is None:
            return self.default
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"Unknown {option} {value!r} (system option {option!r} of {system_name!r}): "
                f"expected one of "
                f"{', '.join(repr(c) for c in self.choices)}."
            )
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ValueError(f"Invalid {option} {value!r} (system option {option!r} of "
                                 f"{system_name!r}): {problem}.")
        return value


def probability(value):
    """Option check for a probability."""
    if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        return "expected a number in [0, 1]"
    return None


def rebuild_system(cls, labels, oracle, options):
    """Unpickle a transition system (see `TransitionSystem.__reduce__`)."""
    return cls(labels=labels, oracle=oracle, **options)


cdef class TransitionSystem:
    """Base class. A subclass declares, as class attributes:

    - `name`: its registry name;
    - `kinds`: its move kinds in move-id order, each (name, labelled); the
      move table has one move per unlabelled kind and one per label for a
      labelled kind (Covington: S, N, L-<label>..., R-<label>...);
    - `oracles`: the oracle names it implements, the first the default
      (losses come from `set_losses` and training targets from them
      by `adjust_targets` for "dynamic", from `static_move` for "static");
    - `option_specs`: {option name: Option} of the settings it takes;
    - `context_names`: the context slots `set_context` fills;
    - `projective`: whether it builds only projective trees (then the
      component's `projectivize` setting says how it learns from
      non-projective gold trees, `default_projectivize` when null);
    - `random_oracle`: whether its oracle flips coins, seeded by
      `reseed_oracle` from the training seed;
    - `follow_oracle_prob`: its exploration policy, the component's
      `follow_oracle_prob` when that is null;
    - `weak_target_prob` (a property, 0 here): in training, how often a
      state whose chosen move is of least cost follows instead a weaker
      target (a move of fractional cost; `choose_moves`);
    - `weak_target_replaces` (a property, None here: any): the moves a
      weaker target may replace, as an int32 mask over the moves;

    and implements the cdef methods. The component passes settings through
    as `options`; an unknown one is a ValueError listing the valid ones.
    """
    name = "base"
    kinds = ()
    oracles = ("dynamic", "static")
    option_specs = {}
    context_names = ()
    projective = False
    # The structure of global decoding (graph/structures.py) whose chart
    # holds all of this system's derivations, if one does: `decoding =
    # "global"` with this system decodes it.
    exact_structure = None
    # Whether the system parses documents and decides their sentences: its
    # gold is a forest of sentence trees over consecutive words, and
    # `finish` leaves one root (head 0) per sentence.
    decides_sentences = False
    # Whether the oracle flips coins (then `reseed_oracle` seeds them).
    random_oracle = False
    # Dynamic-oracle training: the probability of advancing a state by the
    # best zero-cost move instead of the prediction (close to Goldberg &
    # Nivre 2012's p = 0.9).
    follow_oracle_prob = 0.1

    def __init__(self, labels=(), oracle=None, **options):
        cls = type(self)
        if oracle is None:
            oracle = cls.oracles[0]
        if oracle not in cls.oracles:
            raise ValueError(
                f"Unknown oracle {oracle!r} for system {cls.name!r}: expected one of "
                f"{', '.join(repr(o) for o in cls.oracles)}."
            )
        unknown = sorted(set(options) - set(cls.option_specs))
        if unknown:
            valid = (f"its options are: {', '.join(repr(o) for o in cls.option_specs)}"
                     if cls.option_specs else "it takes no options")
            raise ValueError(
                f"System {cls.name!r} takes no option {unknown[0]!r} (in system_options); {valid}."
            )
        self.options = {
            key: spec.validate(cls.name, key, options.get(key))
            for key, spec in cls.option_specs.items()
        }
        self.oracle = oracle
        self.static_oracle = oracle == "static"
        self.labels = list(labels)
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"Duplicate labels: {self.labels}")
        self.label_ids = {label: i for i, label in enumerate(self.labels)}
        self.n_labels = len(self.labels)
        self.n_context = len(self.context_names)     # may depend on the options
        self._build_move_table()

    def __reduce__(self):
        # The move table and C arrays are rebuilt from what defines them, so
        # a pipeline pickles (nlp.pipe(n_process=...) under spawn).
        return (rebuild_system, (type(self), self.labels, self.oracle, self.options))

    def _build_move_table(self):
        table = [(k, label) for k, (_, labelled) in enumerate(type(self).kinds)
                 for label in (range(self.n_labels) if labelled else (-1,))]
        self.mem = Pool()
        self.n_kinds = len(type(self).kinds)
        if self.n_kinds > MAX_KINDS:
            raise ValueError(f"System {self.name!r} declares {self.n_kinds} move kinds; "
                             f"at most {MAX_KINDS} are supported.")
        self.n_moves = len(table)
        self.c_moves = <MoveC*>self.mem.alloc(max(1, self.n_moves), sizeof(MoveC))
        self.kind_first = <int*>self.mem.alloc(max(1, len(type(self).kinds)), sizeof(int))
        for m, (kind, label) in enumerate(table):
            self.c_moves[m].kind = kind
            self.c_moves[m].label = label
            if label <= 0:
                self.kind_first[kind] = m

    # -- the move table from Python --------------------------------------------

    def _check_move(self, int move):
        if not 0 <= move < self.n_moves:
            raise ValueError(f"No move {move} in system {self.name!r} with {self.n_moves} moves.")

    def move_kind(self, int move):
        """The name of a move's kind ("S", "L", ...)."""
        self._check_move(move)
        return type(self).kinds[self.c_moves[move].kind][0]

    def move_label(self, int move):
        """A move's label, or None for an unlabelled move."""
        self._check_move(move)
        label = self.c_moves[move].label
        return self.labels[label] if label >= 0 else None

    def move_name(self, int move):
        label = self.move_label(move)
        kind = self.move_kind(move)
        return kind if label is None else f"{kind}-{label}"

    def move_id(self, str kind, label=None):
        """The id of the move of `kind` with `label` (a name, or None)."""
        names = [k for k, _ in type(self).kinds]
        if kind not in names:
            raise ValueError(f"System {self.name!r} has no move kind {kind!r}: {names}.")
        k = names.index(kind)
        l = -1 if label is None else self.label_ids[label]
        for m in range(self.n_moves):
            if self.c_moves[m].kind == k and self.c_moves[m].label == l:
                return m
        raise ValueError(f"No move ({kind!r}, {label!r}) in system {self.name!r}.")

    @property
    def move_names(self):
        return [self.move_name(m) for m in range(self.n_moves)]

    @property
    def loss_name(self):
        """The dynamic oracle's loss expression, for systems that name one."""
        return self.options.get("loss")

    def reseed_oracle(self, seed):
        """Seed the oracle's coin flips (systems with `random_oracle`)."""

    def max_moves(self, int n):
        """The most moves any run on n words makes (None: not bounded)."""
        limit = self.move_limit(n)
        return None if limit < 0 else limit

    @property
    def default_projectivize(self):
        """The component's `projectivize` when that is null: "pseudo" for a
        projective system (its oracle needs projective trees), "none" for a
        non-projective one."""
        return "pseudo" if self.projective else "none"

    @property
    def weak_target_prob(self):
        return 0.0

    @property
    def weak_target_replaces(self):
        return None

    @property
    def uses_static_oracle(self):
        return bool(self.static_oracle)

    def new_state(self, gold_heads=None, gold_labels=None, n=None):
        """A ParseState at the initial configuration (for tests and tools).

        gold_heads[k-1] is the head of word k (0 = root); gold_labels are ids.
        """
        return ParseState(self, gold_heads, gold_labels, n)

    def describe(self, ParseState state):
        """System-specific parts of a configuration, as {name: value}; they
        are readable as attributes of the ParseState (Covington: `focus`)."""
        return {}

    # -- allocation ------------------------------------------------------------

    cdef StateC* create_state(self, Pool mem, int n) except NULL:
        """A configuration for n words at its initial state: no arcs, then
        the system's `init_state`."""
        cdef StateC* s = alloc_state(mem, n, self.state_size(n))
        cdef int k
        for k in range(n + 1):
            s.heads[k] = -1
            s.labels[k] = -1
        s.offset = 1
        s.root_id = 0
        self.init_state(s)
        return s

    cdef GoldC* create_gold(self, Pool mem, int n, const int* heads, const int* labels) except NULL:
        """The gold object of a sentence: heads[k], labels[k] for k in 1..n
        (index 0 unused), plus what `init_gold` precomputes."""
        cdef GoldC* gold = <GoldC*>mem.alloc(1, sizeof(GoldC))
        cdef int k
        gold.n = n
        gold.heads = <int*>mem.alloc(n + 1, sizeof(int))
        gold.labels = <int*>mem.alloc(n + 1, sizeof(int))
        gold.heads[0] = -1
        gold.labels[0] = -1
        for k in range(1, n + 1):
            gold.heads[k] = heads[k]
            gold.labels[k] = labels[k]
        gold.extra = NULL
        self.init_gold(mem, gold)
        return gold

    # -- what each system defines ----------------------------------------------

    cdef int state_size(self, int n) noexcept nogil:
        """Ints of system-owned state (StateC.data) for n words."""
        return 0

    cdef int move_limit(self, int n) noexcept nogil:
        """The most moves any run on n words makes, whatever the moves (-1:
        not bounded; a decoder that explores, the beam, refuses such a
        system)."""
        return -1

    cdef int scratch_size(self, int n) noexcept nogil:
        """Ints of scratch `set_losses`, `adjust_targets` and `loss` need for n words; the
        caller owns it and reuses it across calls."""
        return 0

    cdef int init_gold(self, Pool mem, GoldC* gold) except -1:
        """Precompute what the oracle needs into gold.extra (from `mem`)."""
        return 0

    cdef void init_state(self, StateC* s) noexcept nogil:
        """Set up the system's own state (the arcs start empty)."""
        pass

    cdef bint is_final(self, const StateC* s) noexcept nogil:
        return True

    cdef void set_valid(self, const StateC* s, int* is_valid) noexcept nogil:
        pass

    cdef void apply(self, StateC* s, int move) noexcept nogil:
        pass

    cdef void apply_scored(self, StateC* s, int move, const float* scores) noexcept nogil:
        """Apply a move the model chose with these scores (one per move;
        NULL when none, e.g. from Python). The decoders call this; a system
        that keeps something of the scores (arc_eager_nm2013 notes the
        best Right-Arc label at Shift) overrides it."""
        self.apply(s, move)

    cdef int loss(self, const StateC* s, const GoldC* gold, int* scratch) noexcept nogil:
        return 0

    cdef int loss_of(self, const StateC* s, const GoldC* gold, int variant,
                     int* scratch) noexcept nogil:
        """One of the system's loss expressions (`loss_deltas`), OWN_LOSS
        for `loss`; a system with a single one ignores `variant`."""
        return self.loss(s, gold, scratch)

    cdef void set_losses(self, const StateC* s, const GoldC* gold, int* is_valid,
                         float* losses, int* scratch) noexcept nogil:
        """Set is_valid, and the loss each valid move causes: how much it
        raises the system's loss expression (the best reachable loss, or the
        oracle's bound of it), plus its label's error; INVALID_COST for an
        invalid move. Only the loss: no training policy, so that any decoder
        (the beam's gold histories) can read it. A system with a dynamic
        oracle defines it; here every valid move costs 0."""
        cdef int m
        self.set_valid(s, is_valid)
        for m in range(self.n_moves):
            losses[m] = 0.0 if is_valid[m] else INVALID_COST

    cdef void adjust_targets(self, const StateC* s, const GoldC* gold, const int* is_valid,
                             float* costs, int* scratch) noexcept nogil:
        """Turn the dynamic oracle's losses (in `costs`) into training
        targets, as costs (0: a target; a fractional cost: a weaker target,
        see the greedy decoder's softmax_log_loss). Nothing by default; a
        system whose training breaks ties or explores (Covington's tie_break,
        the non-monotonic arc-eager tie-break, the stay-eager swap's coin
        flips) does it here, never in `set_losses`."""
        pass

    cdef int static_move(self, const StateC* s, const GoldC* gold) noexcept nogil:
        return -1

    cdef void set_context(self, const StateC* s, int* ids) noexcept nogil:
        pass

    cdef void finish(self, StateC* s) noexcept nogil:
        """Make the arcs a single-rooted tree by the tree layer's root rule
        (graph/algorithms.pyx `single_root`), the one rule of every system."""
        single_root(s.heads, s.labels, s.n + 1)

    cdef int move_of(self, int kind, int label) noexcept nogil:
        """The move id of (kind, label); label is ignored for an unlabelled
        kind. The only place move ids are computed from kinds."""
        return self.kind_first[kind] + (label if label > 0 else 0)

    cdef void set_valid_by_kind(self, const bint* kind_valid, int* is_valid) noexcept nogil:
        """is_valid for every move from the validity of its kind (for
        systems whose validity does not depend on the label)."""
        cdef int m
        for m in range(self.n_moves):
            is_valid[m] = kind_valid[self.c_moves[m].kind]

    cdef void set_oracle_costs(self, const StateC* s, const GoldC* gold,
                               int* is_valid, float* costs, int* scratch) noexcept nogil:
        """Training targets (as costs) of the configured oracle, for the
        greedy decoder's update: its losses, adjusted by a dynamic oracle's
        training policy."""
        self.set_oracle_losses(s, gold, is_valid, costs, scratch)
        if not self.static_oracle:
            self.adjust_targets(s, gold, is_valid, costs, scratch)

    cdef void set_oracle_losses(self, const StateC* s, const GoldC* gold,
                                int* is_valid, float* losses, int* scratch) noexcept nogil:
        """Losses of the configured oracle, for decoders that keep gold
        histories (the beam)."""
        if self.static_oracle:
            self.set_static_costs(s, gold, is_valid, losses)
        else:
            self.set_losses(s, gold, is_valid, losses, scratch)

    cdef void set_static_costs(self, const StateC* s, const GoldC* gold,
                               int* is_valid, float* costs) noexcept nogil:
        """A static oracle's costs, target and loss alike: its one move 0,
        every other valid move 1."""
        cdef int m, best
        self.set_valid(s, is_valid)
        best = self.static_move(s, gold)
        for m in range(self.n_moves):
            costs[m] = 0.0 if m == best else (1.0 if is_valid[m] else INVALID_COST)

    cdef void loss_deltas(self, const StateC* s, const GoldC* gold, const int* is_valid,
                          int variant, int* delta, int* loss_scratch, int* state_scratch,
                          int left_arc, int right_arc, int a, int b) noexcept nogil:
        """delta[kind]: what a valid move of each kind adds to the loss
        expression `loss_of(variant)`, applied on a copy of s, less its label
        0's error for the two labelled arc kinds (left_arc: a <- b, right_arc:
        a -> b), so that a move's label error is added per move; 0 for a kind
        with no valid move. `state_scratch` holds one configuration
        (2 (n + 1) + state_size(n) ints)."""
        cdef int n = s.n, m, kind, base
        cdef StateC tmp
        tmp.heads = state_scratch
        tmp.labels = state_scratch + (n + 1)
        tmp.data = state_scratch + 2 * (n + 1)
        base = self.loss_of(s, gold, variant, loss_scratch)
        for kind in range(self.n_kinds):
            delta[kind] = 0
            m = self.move_of(kind, 0)
            if m >= self.n_moves or self.c_moves[m].kind != kind or not is_valid[m]:
                continue
            copy_state(&tmp, s)
            self.apply(&tmp, m)
            delta[kind] = self.loss_of(&tmp, gold, variant, loss_scratch) - base
            if kind == left_arc:
                delta[kind] -= label_error(gold, b, a, 0)
            elif kind == right_arc:
                delta[kind] -= label_error(gold, a, b, 0)

    cdef void set_costs_from_deltas(self, const GoldC* gold, const int* is_valid,
                                    const int* delta, float* costs, int left_arc, int right_arc,
                                    int a, int b) noexcept nogil:
        """A move costs its kind's loss delta (never below 0: an approximate
        loss may also decrease) plus its label's error for the labelled arc
        kinds; an invalid move costs INVALID_COST."""
        cdef int m, kind
        for m in range(self.n_moves):
            if not is_valid[m]:
                costs[m] = INVALID_COST
                continue
            kind = self.c_moves[m].kind
            if kind == left_arc:
                costs[m] = max(0, delta[kind] + label_error(gold, b, a, self.c_moves[m].label))
            elif kind == right_arc:
                costs[m] = max(0, delta[kind] + label_error(gold, a, b, self.c_moves[m].label))
            else:
                costs[m] = max(0, delta[kind])

    cdef void set_costs_from_loss(self, const StateC* s, const GoldC* gold, const int* is_valid,
                                  float* costs, int* loss_scratch, int* state_scratch,
                                  int left_arc, int right_arc, int a, int b) noexcept nogil:
        """The dynamic oracle's costs from the system's `loss`."""
        cdef int[MAX_KINDS] delta
        self.loss_deltas(s, gold, is_valid, OWN_LOSS, delta, loss_scratch, state_scratch,
                         left_arc, right_arc, a, b)
        self.set_costs_from_deltas(gold, is_valid, delta, costs, left_arc, right_arc, a, b)


cdef ParseState _empty_state(TransitionSystem system, bint has_gold):
    cdef ParseState out = ParseState.__new__(ParseState)
    out.mem = Pool()
    out.system = system
    out.has_gold = has_gold
    return out


cdef GoldC* _no_gold(Pool mem, int n) except NULL:
    """A gold object with no tree (heads and labels -1), for states parsed
    without gold; the system's `init_gold` is not run on it."""
    cdef GoldC* gold = <GoldC*>mem.alloc(1, sizeof(GoldC))
    cdef int k
    gold.n = n
    gold.heads = <int*>mem.alloc(n + 1, sizeof(int))
    gold.labels = <int*>mem.alloc(n + 1, sizeof(int))
    for k in range(n + 1):
        gold.heads[k] = -1
        gold.labels[k] = -1
    gold.extra = NULL
    return gold


cdef int* _scratch(Pool mem, TransitionSystem system, int n) except NULL:
    return <int*>mem.alloc(max(1, system.scratch_size(n)), sizeof(int))


cdef class ParseState:
    """One configuration of a system, driven from Python. Slow; for tests,
    oracle analysis and tools, never for the parser's hot loops."""

    def __init__(self, TransitionSystem system, gold_heads=None, gold_labels=None, n=None):
        self.mem = Pool()
        self.system = system
        if gold_heads is None and n is None:
            raise ValueError("Give gold_heads or n.")
        self.has_gold = gold_heads is not None
        if self.has_gold:
            gold_heads = [int(h) for h in gold_heads]
            check_gold_tree(gold_heads, sentences=system.decides_sentences)
            n = len(gold_heads)
            if gold_labels is None:
                gold_labels = [-1] * n
            if len(gold_labels) != n:
                raise ValueError("gold_labels and gold_heads differ in length.")
        cdef int* heads
        cdef int* labels
        if self.has_gold:
            heads = <int*>self.mem.alloc(n + 1, sizeof(int))
            labels = <int*>self.mem.alloc(n + 1, sizeof(int))
            for k in range(n):
                heads[k + 1] = gold_heads[k]
                labels[k + 1] = int(gold_labels[k])
            self.gold = system.create_gold(self.mem, n, heads, labels)
        else:
            self.gold = _no_gold(self.mem, n)
        self.c = system.create_state(self.mem, n)
        self.scratch = _scratch(self.mem, system, n)

    def copy(self, TransitionSystem system=None):
        """A copy of this configuration; with `system`, read by that system
        instead (one with the same moves, e.g. another loss of the family)."""
        if system is not None and (system.n_moves != self.system.n_moves
                                   or type(system) is not type(self.system)):
            raise ValueError("copy(system=...) needs a system of the same kind and moves.")
        cdef ParseState other = _empty_state(system if system is not None else self.system,
                                             self.has_gold)
        other.c = alloc_state(other.mem, self.c.n, self.c.n_data)
        copy_state(other.c, self.c)
        other.gold = self.gold   # gold is immutable; keep self alive via reference
        other._gold_owner = self
        other.scratch = _scratch(other.mem, other.system, self.c.n)
        return other

    def __getattr__(self, name):
        fields = self.system.describe(self)
        if name in fields:
            return fields[name]
        raise AttributeError(f"{type(self.system).__name__} states have no attribute {name!r}.")

    @property
    def n(self):
        return self.c.n

    @property
    def data(self):
        """The system-owned ints of the configuration (see `describe`)."""
        return [self.c.data[k] for k in range(self.c.n_data)]

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
        """The training targets, as costs (INVALID for invalid moves)."""
        return self._oracle_values(True)

    def losses(self):
        """The loss each move causes (the configured oracle's; INVALID for
        invalid moves): `costs()` without the training policy."""
        return self._oracle_values(False)

    def _oracle_values(self, bint targets):
        self._require_gold()
        cdef Pool mem = Pool()
        cdef int* is_valid = <int*>mem.alloc(self.system.n_moves, sizeof(int))
        cdef float* values = <float*>mem.alloc(self.system.n_moves, sizeof(float))
        if targets:
            self.system.set_oracle_costs(self.c, self.gold, is_valid, values, self.scratch)
        else:
            self.system.set_oracle_losses(self.c, self.gold, is_valid, values, self.scratch)
        return [values[m] for m in range(self.system.n_moves)]

    def loss(self):
        self._require_gold()
        return self.system.loss(self.c, self.gold, self.scratch)

    def static_move(self):
        self._require_gold()
        return self.system.static_move(self.c, self.gold)

    def apply(self, int move, scores=None):
        """Apply a move; `scores` (one per move) stand for the model's, for
        systems that keep something of them."""
        if move < 0 or move >= self.system.n_moves or not self._valid()[move]:
            raise ValueError(f"Move {move} is not valid in this configuration.")
        cdef float[::1] row
        if scores is None:
            self.system.apply_scored(self.c, move, NULL)
            return
        row = numpy.ascontiguousarray(scores, dtype=numpy.float32)
        if row.shape[0] != self.system.n_moves:
            raise ValueError(f"Need {self.system.n_moves} scores, got {row.shape[0]}.")
        self.system.apply_scored(self.c, move, &row[0])

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
    cdef ParseState out = _empty_state(system, gold != NULL)
    out.c = alloc_state(out.mem, s.n, s.n_data)
    copy_state(out.c, s)
    if gold != NULL:
        out.gold = system.create_gold(out.mem, s.n, gold.heads, gold.labels)
    else:
        out.gold = _no_gold(out.mem, s.n)
    out.scratch = _scratch(out.mem, system, s.n)
    return out
