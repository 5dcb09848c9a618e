"""Pure-Python reference for the arc-hybrid systems mh3 and mh4.

Independent of the Cython code in ``spacy_nonmono.systems.hybrid``: the moves
are written again from section 3.2 of Gómez-Rodríguez, Shi & Lee (2018), in
their notation (σ the stack with its top on the right, β the buffer with its
front on the left):

  sh:   (σ, h4|β)          ⊢ (σ|h4, β)
  la:   (σ|h3, h4|β)       ⊢ (σ, h4|β)       + h4 → h3
  ra:   (σ|h2|h3, β)       ⊢ (σ|h2, β)       + h2 → h3
  la':  (σ|h2|h3, h4|β)    ⊢ (σ|h3, h4|β)    + h3 → h2
  ra':  (σ|h1|h2|h3, β)    ⊢ (σ|h1|h3, β)    + h1 → h2
  la2:  (σ|h2|h3, h4|β)    ⊢ (σ|h3, h4|β)    + h4 → h2
  ra2:  (σ|h1|h2|h3, β)    ⊢ (σ|h1|h2, β)    + h1 → h3

mh3 has sh, la, ra; mh4 all seven. The package's root rule: node 0 (at the
stack's bottom from the start) is never a dependent, and is a head only by ra
with an empty buffer. Final: empty buffer, only node 0 on the stack.

A configuration is an immutable ``Config``: stack (bottom..top), buffer
(front..back), heads and labels indexed by node (index 0 unused, -1 = none).
Gold trees are given as in the package API: ``gold_heads[k-1]`` is the head of
word k (0 = root), ``gold_labels[k-1]`` its label id, -1 meaning any label
(what the engine gives the root).

Moves for L labels follow the engine's move table: 0 = sh "S", then L moves
per arc kind in the order LA, RA (mh3), LA', RA', LA2, RA2 (mh4):
move 1 + k*L + l is kind k (0 = LA) with label l.

``finish`` is the engine's single root rule: the first word attached to node
0 is the root, else the first headless word; every other headless or
root-attached word is attached to the root with label -1.

``exact_loss`` is the least final loss (words whose head or label differs from
gold after ``finish``) over every move sequence from a configuration, by
exhaustive memoised search that uses only the moves, their validity and the
final loss. Validity reads only the stack and the buffer, and a word gets its
head exactly when it leaves the stack, never to change: so the loss of a
completion is the wrong arcs already built plus those the completion builds,
and the search runs over (stack, buffer) with each arc move costing 1 unless
it is a gold arc (its gold label is then free to take). ``canonical=False``
searches the full configurations with every label instead (slow; it checks
the fast one). ``reachable`` says by the same kind of search whether one arc
can still be built (alone), and ``lower_bound_loss`` counts the arcs that
cannot (plus wrong built arcs), which is what the package's ``loss`` claims
to compute.
"""
from typing import Dict, NamedTuple, Optional, Tuple

SYSTEM_NAMES = ("mh3", "mh4")
KINDS = {"mh3": ("S", "LA", "RA"),
         "mh4": ("S", "LA", "RA", "LA'", "RA'", "LA2", "RA2")}
CONTEXT_NAMES = ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "B0L")


class Config(NamedTuple):
    stack: Tuple[int, ...]      # bottom .. top; node 0 at the bottom
    buffer: Tuple[int, ...]     # front .. back
    heads: Tuple[int, ...]      # heads[k] for node k = 0..n (-1 = none)
    labels: Tuple[int, ...]

    @property
    def n(self) -> int:
        return len(self.heads) - 1


def initial_config(n: int) -> Config:
    return Config((0,), tuple(range(1, n + 1)), (-1,) * (n + 1), (-1,) * (n + 1))


def _set(values, k, v):
    out = list(values)
    out[k] = v
    return tuple(out)


def match(c: Config, kind: str):
    """The paper's pattern for `kind` on c: (head, dependent, new stack, new
    buffer), or None when the pattern does not match. sh gives (None, None,
    ...)."""
    st, bu = c.stack, c.buffer
    if kind == "S":
        if not bu:
            return None
        h4, beta = bu[0], bu[1:]
        return None, None, st + (h4,), beta
    if kind == "LA":                     # (σ|h3, h4|β) ⊢ (σ, h4|β) + h4 → h3
        if len(st) < 1 or not bu:
            return None
        sigma, h3, h4 = st[:-1], st[-1], bu[0]
        return h4, h3, sigma, bu
    if kind == "RA":                     # (σ|h2|h3, β) ⊢ (σ|h2, β) + h2 → h3
        if len(st) < 2:
            return None
        sigma, h2, h3 = st[:-2], st[-2], st[-1]
        return h2, h3, sigma + (h2,), bu
    if kind == "LA'":                    # (σ|h2|h3, h4|β) ⊢ (σ|h3, h4|β) + h3 → h2
        # h4 is only read as "some buffer position": the end position n + 1
        # of the paper's goal item [0, n + 1] is always there, so la' needs
        # no word in the buffer.
        if len(st) < 2:
            return None
        sigma, h2, h3 = st[:-2], st[-2], st[-1]
        return h3, h2, sigma + (h3,), bu
    if kind == "RA'":                    # (σ|h1|h2|h3, β) ⊢ (σ|h1|h3, β) + h1 → h2
        if len(st) < 3:
            return None
        sigma, h1, h2, h3 = st[:-3], st[-3], st[-2], st[-1]
        return h1, h2, sigma + (h1, h3), bu
    if kind == "LA2":                    # (σ|h2|h3, h4|β) ⊢ (σ|h3, h4|β) + h4 → h2
        if len(st) < 2 or not bu:
            return None
        sigma, h2, h3, h4 = st[:-2], st[-2], st[-1], bu[0]
        return h4, h2, sigma + (h3,), bu
    if kind == "RA2":                    # (σ|h1|h2|h3, β) ⊢ (σ|h1|h2, β) + h1 → h3
        if len(st) < 3:
            return None
        sigma, h1, h2, h3 = st[:-3], st[-3], st[-2], st[-1]
        return h1, h3, sigma + (h1, h2), bu
    raise ValueError(kind)


class System:
    def __init__(self, name: str, n_labels: int):
        if name not in SYSTEM_NAMES:
            raise ValueError(name)
        self.name = name
        self.kinds = KINDS[name]
        self.n_labels = n_labels
        self.n_moves = 1 + (len(self.kinds) - 1) * n_labels

    def __repr__(self):
        return f"System({self.name!r}, {self.n_labels})"

    # -- moves ---------------------------------------------------------------

    def decode(self, move: int):
        if move == 0:
            return "S", None
        k, label = divmod(move - 1, self.n_labels)
        return self.kinds[1 + k], label

    def encode(self, kind: str, label: Optional[int] = None) -> int:
        if kind == "S":
            return 0
        return 1 + (self.kinds.index(kind) - 1) * self.n_labels + label

    def move_name(self, move: int) -> str:
        kind, label = self.decode(move)
        return kind if label is None else f"{kind}-{label}"

    def is_final(self, c: Config) -> bool:
        return not c.buffer and c.stack == (0,)

    def kind_valid(self, c: Config, kind: str) -> bool:
        m = match(c, kind)
        if m is None:
            return False
        head, dep = m[0], m[1]
        if kind == "S":
            return True
        if dep == 0:                     # node 0 is never a dependent
            return False
        if head == 0:                    # ... and a head only by ra, at the end
            return kind == "RA" and not c.buffer
        return True

    def valid_moves(self, c: Config):
        return [m for m in range(self.n_moves) if self.kind_valid(c, self.decode(m)[0])]

    def apply_kind(self, c: Config, kind: str, label: Optional[int] = None) -> Config:
        if not self.kind_valid(c, kind):
            raise ValueError(f"{kind} is not valid in {c} ({self.name})")
        head, dep, stack, buffer = match(c, kind)
        heads, labels = c.heads, c.labels
        if kind != "S":
            heads = _set(heads, dep, head)
            labels = _set(labels, dep, label)
        return Config(stack, buffer, heads, labels)

    def apply(self, c: Config, move: int) -> Config:
        kind, label = self.decode(move)
        return self.apply_kind(c, kind, label)

    def arc(self, c: Config, move: int):
        """(head, dependent) of an arc move, None for sh."""
        kind, _ = self.decode(move)
        if kind == "S":
            return None
        return match(c, kind)[:2]

    # -- context ---------------------------------------------------------------

    def context(self, c: Config) -> Dict[str, int]:
        """Nodes of the eight context slots (-1 absent): the top three stack
        nodes, the first two buffer words, the leftmost and rightmost
        dependent of S0 and the leftmost of B0 in the arcs built so far."""
        def at(seq, k):
            return seq[k] if 0 <= k < len(seq) else -1

        def deps(h):
            return [k for k in range(1, c.n + 1) if h != -1 and c.heads[k] == h]

        s0 = at(c.stack, len(c.stack) - 1)
        b0 = at(c.buffer, 0)
        s0d, b0d = deps(s0), deps(b0)
        return {"S0": s0, "S1": at(c.stack, len(c.stack) - 2),
                "S2": at(c.stack, len(c.stack) - 3), "B0": b0, "B1": at(c.buffer, 1),
                "S0L": min(s0d, default=-1), "S0R": max(s0d, default=-1),
                "B0L": min(b0d, default=-1)}


# --------------------------------------------------------------------- finish

def finish(c: Config):
    """(heads, labels) of words 1..n after the engine's root rule."""
    heads = list(c.heads[1:])
    labels = list(c.labels[1:])
    n = len(heads)
    root = next((k for k in range(1, n + 1) if heads[k - 1] == 0), None)
    if root is None:
        root = next((k for k in range(1, n + 1) if heads[k - 1] == -1), None)
        if root is not None:
            heads[root - 1] = 0
    for k in range(1, n + 1):
        if k != root and heads[k - 1] in (-1, 0):
            heads[k - 1] = root
            labels[k - 1] = -1
    return heads, labels


def label_matches(label: int, gold_label: int) -> bool:
    return gold_label == -1 or label == gold_label


def final_loss(heads, labels, gold_heads, gold_labels) -> int:
    return sum(1 for h, l, gh, gl in zip(heads, labels, gold_heads, gold_labels)
               if not (h == gh and label_matches(l, gl)))


def config_loss(c: Config, gold_heads, gold_labels) -> int:
    heads, labels = finish(c)
    return final_loss(heads, labels, gold_heads, gold_labels)


def _gold(gold_heads, gold_labels):
    return (-1,) + tuple(int(h) for h in gold_heads), (-1,) + tuple(int(l) for l in gold_labels)


def built_errors(c: Config, gh, gl) -> int:
    """Arcs built so far whose head or label is not the gold one."""
    return sum(1 for k in range(1, c.n + 1)
               if c.heads[k] != -1 and not (c.heads[k] == gh[k]
                                            and label_matches(c.labels[k], gl[k])))


# ------------------------------------------------------------------ exact loss

def _structure(system: System, key):
    """Successors of a (stack, buffer) pair: (kind, head, dependent, next
    key) per valid kind (head and dependent None for sh)."""
    stack, buffer = key
    c = Config(stack, buffer, (), ())
    out = []
    for kind in system.kinds:
        if system.kind_valid(c, kind):
            head, dep, st, bu = match(c, kind)
            out.append((kind, head, dep, (st, bu)))
    return out


def exact_loss(system: System, c: Config, gold_heads, gold_labels,
               memo: Optional[dict] = None, canonical: bool = True) -> int:
    """Least final loss over every move sequence from c (see the module doc).
    `memo` may be shared between calls for one system, gold tree and value
    of `canonical`."""
    gh, gl = _gold(gold_heads, gold_labels)
    if len(gh) != len(c.heads):
        raise ValueError("gold tree and configuration differ in length")
    if memo is None:
        memo = {}
    limit = 2 * c.n + 2

    if not canonical:
        def full(cfg: Config, depth: int) -> int:
            if cfg in memo:
                return memo[cfg]
            assert depth <= limit, ("no final configuration within 2n+2 moves", cfg)
            if system.is_final(cfg):
                value = config_loss(cfg, gold_heads, gold_labels)
            else:
                moves = system.valid_moves(cfg)
                assert moves, ("stuck", cfg)
                value = min(full(system.apply(cfg, m), depth + 1) for m in moves)
            memo[cfg] = value
            return value
        return full(c, 0)

    def search(key, depth):
        if key in memo:
            return memo[key]
        assert depth <= limit, ("no final configuration within 2n+2 moves", key)
        if not key[1] and key[0] == (0,):
            value = 0
        else:
            options = [(0 if head is None or gh[dep] == head else 1) + search(nxt, depth + 1)
                       for _, head, dep, nxt in _structure(system, key)]
            assert options, ("stuck", key)
            value = min(options)
        memo[key] = value
        return value

    for k in range(1, c.n + 1):
        on = k in c.stack or k in c.buffer
        assert on == (c.heads[k] == -1), ("a word has a head iff it has left the stack", c)
    return built_errors(c, gh, gl) + search((c.stack, c.buffer), 0)


def can_build(system: System, gold_heads) -> bool:
    """Whether some move sequence builds the tree (unlabelled)."""
    n = len(gold_heads)
    return exact_loss(system, initial_config(n), gold_heads, [-1] * n) == 0


def reachable(system: System, c: Config, head: int, dep: int,
              memo: Optional[dict] = None) -> bool:
    """Whether some move sequence from c builds the arc head -> dep (dep
    headless in c). `memo` may be shared between any calls for one system."""
    if memo is None:
        memo = {}

    def search(key):
        mkey = (head, dep, key)
        if mkey in memo:
            return memo[mkey]
        memo[mkey] = False               # no move cycles, but be safe
        found = False
        for _, h, d, nxt in _structure(system, key):
            if d == dep:
                if h == head:
                    found = True
                    break
                continue                 # dep got another head
            if d == head:
                continue                 # head left the stack
            if search(nxt):
                found = True
                break
        memo[mkey] = found
        return found

    return search((c.stack, c.buffer))


def lower_bound_loss(system: System, c: Config, gold_heads, gold_labels,
                     memo: Optional[dict] = None) -> int:
    """Wrong built arcs plus gold arcs of headless words that no move
    sequence can build any more (each by itself)."""
    gh, gl = _gold(gold_heads, gold_labels)
    loss = built_errors(c, gh, gl)
    for d in range(1, c.n + 1):
        if c.heads[d] == -1 and not reachable(system, c, gh[d], d, memo):
            loss += 1
    return loss


def gold_computations(system: System, gold_heads, limit: int = 1000):
    """Up to `limit` move sequences (unlabelled kinds) that build the tree."""
    n = len(gold_heads)
    gh = (-1,) + tuple(gold_heads)
    out = []

    def search(key, path):
        if len(out) >= limit:
            return
        if not key[1] and key[0] == (0,):
            out.append(list(path))
            return
        for kind, h, d, nxt in _structure(system, key):
            if h is None or gh[d] == h:
                search(nxt, path + [kind])

    search(((0,), tuple(range(1, n + 1))), [])
    return out


# ---------------------------------------------------------------- helpers

def is_projective(gold_heads) -> bool:
    """No crossing arcs, the root arc 0 -> r included."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(gold_heads, start=1)]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


def config_from_state(st) -> Config:
    """The reference Config of a Cython ParseState."""
    return Config(tuple(st.stack), tuple(st.buffer), (-1,) + tuple(st.heads),
                  (-1,) + tuple(st.labels))
