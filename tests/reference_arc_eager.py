"""Pure-Python reference for the four arc-eager systems.

Independent of the Cython code in ``spacy_nonmono.systems.arc_eager``: the
validity rules and transitions are written again from the papers and the
package's spec:

- ``arc_eager``: Nivre (2003), monotonic;
- ``arc_eager_tree``: Nivre & Fernandez-Gonzalez (2014), arc-eager plus an
  Unshift of a headless stack top once the buffer is empty;
- ``arc_eager_unshift``: Honnibal & Johnson (2015), Table 1: Left-Arc may
  replace ("clobber") the head of s0, Unshift of a headless s0 whenever the
  stack holds at least two words, and the bit-vector S that keeps Shift from
  pushing an unshifted word again (unless the stack is empty);
- ``arc_eager_nm2013``: Honnibal, Goldberg & Johnson (2013): Left-Arc may
  replace the head of s0, and Reduce of a headless s0 (stack of two words or
  more) attaches it to s1 with the Right-Arc label noted when s0 was shifted;
  driven from Python there are no model scores, so no label is noted and the
  arc gets label -1 (never a gold label);
- ``arc_eager_break``: ``arc_eager`` over a document (several sentences),
  plus Break ("B"), valid when the stack and the buffer are not empty: it
  closes the sentence before b0 and pops the whole stack. The stack's first
  headless word (in word order) becomes that sentence's root (head 0), every
  other headless stack word is attached to it with label -1, as ``finish``
  does for the last sentence; the gold tree is a forest, one tree per
  sentence over consecutive words.

Words are 1..n; there is no dummy root node. A configuration is an immutable
``Config``: the stack (bottom..top), the buffer (front..back), heads and
labels indexed by word (index 0 unused, -1 = none) and the set ``shifted``
(the paper's S). Gold trees are given as in the package API:
``gold_heads[k-1]`` is the gold head of word k (0 = root), ``gold_labels[k-1]``
its label id, -1 meaning "any label" (what the engine gives the root).

Moves for L labels: 0 = Shift "S", 1 = "D" (Reduce; in arc_eager_tree and
arc_eager_unshift Reduce or Unshift depending on whether s0 has a head),
2+l = Left-Arc(l) "L-<l>" (b0 -> s0), 2+L+l = Right-Arc(l) "R-<l>" (s0 -> b0),
and for arc_eager_break 2+2L = Break "B".

``finish``: the first headless word in word order becomes the root (head 0,
label unchanged); every other headless word is attached to it with label -1
(in arc_eager_break the words of the sentences Break closed all have heads,
so this closes the last sentence).
The loss of a final configuration is the number of words whose (head, label)
after ``finish`` differs from the gold one. ``exact_loss`` is the minimum of
that loss over every final configuration reachable from a configuration,
by exhaustive memoised search that uses only ``valid_moves``, ``apply``,
``is_final``, ``finish`` and the final loss: no oracle logic.
"""
from typing import Dict, FrozenSet, NamedTuple, Optional, Sequence, Tuple

SHIFT = 0
REDUCE = 1          # "D": Reduce, or Unshift where the system has one

SYSTEM_NAMES = ("arc_eager", "arc_eager_tree", "arc_eager_unshift", "arc_eager_nm2013")
# The document system (its gold trees are forests, tested apart).
BREAK_SYSTEM = "arc_eager_break"

# Written into a configuration by the search for "some arc that is wrong":
# a head that is not the gold head, or the gold head with a wrong label.
# Validity and the transitions only ask whether a word has a head, never
# which, so every wrong arc behaves like every other (the WRONG_LABEL idea of
# reference_covington, taken one step further: the head of a wrong arc is
# irrelevant here too, as arc-eager moves check no paths).
WRONG = -2

CONTEXT_NAMES = ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "B0L")


class Config(NamedTuple):
    stack: Tuple[int, ...]      # bottom .. top
    buffer: Tuple[int, ...]     # front .. back
    heads: Tuple[int, ...]      # heads[k] for word k = 1..n (index 0 unused, -1)
    labels: Tuple[int, ...]     # labels[k]; -1 = none
    shifted: FrozenSet[int]     # the paper's S

    @property
    def n(self) -> int:
        return len(self.heads) - 1


def initial_config(n: int) -> Config:
    return Config((), tuple(range(1, n + 1)), (-1,) * (n + 1), (-1,) * (n + 1), frozenset())


def decode(move: int, n_labels: int):
    """('S'|'D'|'L'|'R', label or None)."""
    if move == SHIFT:
        return "S", None
    if move == REDUCE:
        return "D", None
    if 2 <= move < 2 + n_labels:
        return "L", move - 2
    if 2 + n_labels <= move < 2 + 2 * n_labels:
        return "R", move - 2 - n_labels
    if move == 2 + 2 * n_labels:
        return "B", None
    raise ValueError(f"no move {move} with {n_labels} labels")


def encode(kind: str, label: Optional[int], n_labels: int) -> int:
    if kind == "S":
        return SHIFT
    if kind == "D":
        return REDUCE
    if kind == "L":
        return 2 + label
    if kind == "R":
        return 2 + n_labels + label
    if kind == "B":
        return 2 + 2 * n_labels
    raise ValueError(kind)


def move_name(move: int, n_labels: int, label_names=None) -> str:
    kind, label = decode(move, n_labels)
    if label is None:
        return kind
    return f"{kind}-{label_names[label] if label_names is not None else label}"


class System:
    """One of the five systems, for n_labels labels."""

    def __init__(self, name: str, n_labels: int):
        if name not in SYSTEM_NAMES + (BREAK_SYSTEM,):
            raise ValueError(f"unknown system {name!r}")
        self.name = name
        self.n_labels = n_labels
        self.breaks = name == BREAK_SYSTEM
        self.n_moves = 2 + 2 * n_labels + self.breaks
        self.tree = name == "arc_eager_tree"
        self.unshift = name == "arc_eager_unshift"
        self.nm2013 = name == "arc_eager_nm2013"
        self.uses_shifted = self.tree or self.unshift

    def __repr__(self):
        return f"System({self.name!r}, {self.n_labels})"

    # -- final configurations ---------------------------------------------

    def is_final(self, c: Config) -> bool:
        if self.name == "arc_eager" or self.breaks:
            return not c.buffer
        if self.tree:
            return not c.buffer and len(c.stack) <= 1
        return not c.buffer and len(c.stack) == 1

    # -- validity ------------------------------------------------------------

    def kind_valid(self, c: Config, kind: str) -> bool:
        """Validity of a move kind; no move is valid in a final
        configuration (arc_eager's Reduce included, once the buffer is
        empty)."""
        if self.is_final(c):
            return False
        stack, buffer = c.stack, c.buffer
        s0_headed = bool(stack) and c.heads[stack[-1]] != -1
        if kind == "S":
            if not buffer:
                return False
            if self.uses_shifted:
                return buffer[0] not in c.shifted or not stack
            return True
        if kind == "R":
            return bool(stack) and bool(buffer)
        if kind == "B":
            return self.breaks and bool(stack) and bool(buffer)
        if kind == "L":
            if not (stack and buffer):
                return False
            return True if (self.unshift or self.nm2013) else not s0_headed
        if kind == "D":
            if not stack:
                return False
            if s0_headed:
                return True                       # Reduce
            if self.tree:                         # Unshift (N & F-G 2014)
                return not buffer and len(stack) >= 2
            if self.unshift or self.nm2013:       # Unshift (H & J 2015) or
                return len(stack) >= 2            # attach to s1 (H, G & J 2013)
            return False                          # arc_eager: no Unshift
        raise ValueError(kind)

    def is_valid(self, c: Config, move: int) -> bool:
        kind, _ = decode(move, self.n_labels)
        return self.kind_valid(c, kind)

    def valid_moves(self, c: Config):
        return [m for m in range(self.n_moves) if self.is_valid(c, m)]

    def is_unshift(self, c: Config) -> bool:
        """Whether "D" would be an Unshift here (s0 exists and is headless)."""
        return bool(c.stack) and c.heads[c.stack[-1]] == -1

    # -- transitions ---------------------------------------------------------

    def apply_kind(self, c: Config, kind: str, label: Optional[int] = None) -> Config:
        if not self.kind_valid(c, kind):
            raise ValueError(f"{kind} is not valid in {c} ({self.name})")
        stack, buffer, heads, labels, shifted = c
        if kind == "S":
            b0 = buffer[0]
            if self.uses_shifted:
                shifted = shifted | {b0}
            return Config(stack + (b0,), buffer[1:], heads, labels, shifted)
        if kind == "R":
            s0, b0 = stack[-1], buffer[0]
            heads = _set(heads, b0, s0)
            labels = _set(labels, b0, label)
            return Config(stack + (b0,), buffer[1:], heads, labels, shifted)
        if kind == "L":
            s0, b0 = stack[-1], buffer[0]
            heads = _set(heads, s0, b0)           # replaces any head of s0
            labels = _set(labels, s0, label)
            return Config(stack[:-1], buffer, heads, labels, shifted)
        if kind == "B":
            heads, labels = list(heads), list(labels)
            close_sentence(heads, labels, stack)  # bottom..top: word order
            return Config((), buffer, tuple(heads), tuple(labels), shifted)
        # "D"
        s0 = stack[-1]
        if heads[s0] != -1:                       # Reduce
            return Config(stack[:-1], buffer, heads, labels, shifted)
        if self.nm2013:                           # Reduce attaching s0 to s1
            heads = _set(heads, s0, stack[-2])
            labels = _set(labels, s0, -1)
            return Config(stack[:-1], buffer, heads, labels, shifted)
        if self.tree:                             # Unshift, marks s0 shifted
            shifted = shifted | {s0}
        # arc_eager_unshift: s0 was pushed by Shift, so it is already in S.
        return Config(stack[:-1], (s0,) + buffer, heads, labels, shifted)

    def apply(self, c: Config, move: int) -> Config:
        kind, label = decode(move, self.n_labels)
        return self.apply_kind(c, kind, label)

    # -- static oracle -----------------------------------------------------

    def static_move(self, c: Config, gold_heads, gold_labels) -> int:
        """The classic arc-eager static oracle (for projective gold trees):
        the gold Left-Arc, else the gold Right-Arc, else Reduce once s0 has a
        head and no gold dependent left in the buffer, else (arc_eager_break)
        Break when no gold arc joins a word before b0 to b0 or a word after
        it, else Shift; -1 when final. Arcs get their gold label (label 0 for
        a gold label of -1)."""
        if self.is_final(c):
            return -1
        gh = (-1,) + tuple(gold_heads)
        gl = (-1,) + tuple(gold_labels)
        stack, buffer = c.stack, c.buffer
        if stack and buffer:
            s0, b0 = stack[-1], buffer[0]
            if gh[s0] == b0 and self.kind_valid(c, "L"):
                return encode("L", max(gl[s0], 0), self.n_labels)
            if gh[b0] == s0:
                return encode("R", max(gl[b0], 0), self.n_labels)
        if stack and c.heads[stack[-1]] != -1:
            s0 = stack[-1]
            if not any(gh[k] == s0 for k in buffer):
                return REDUCE
        if self.breaks and stack and buffer:
            b0 = buffer[0]
            if not any(h > 0 and (d < b0) != (h < b0) for d, h in enumerate(gh) if d > 0):
                return encode("B", None, self.n_labels)
        if buffer and self.kind_valid(c, "S"):
            return SHIFT
        raise AssertionError(f"static oracle stuck at {c} for gold {gold_heads}")

    # -- the tree -------------------------------------------------------------

    def finish(self, c: Config):
        return finish(c)

    def config_loss(self, c: Config, gold_heads, gold_labels) -> int:
        return config_loss(c, gold_heads, gold_labels)

    # -- context -------------------------------------------------------------

    def context(self, c: Config) -> Dict[str, int]:
        """Token rows (word k -> k; -1 absent) of the context slots: the top
        three stack words, the first two buffer words, the leftmost and
        rightmost dependent of s0 in A and the leftmost dependent of b0 in A
        (leftmost/rightmost in word order, on either side of the head)."""
        stack, buffer = c.stack, c.buffer

        def at(seq, k):
            return seq[k] if k < len(seq) else -1

        def deps(h):
            return [k for k in range(1, c.n + 1) if c.heads[k] == h]

        s0 = stack[-1] if stack else -1
        b0 = buffer[0] if buffer else -1
        s0_deps = deps(s0) if s0 != -1 else []
        b0_deps = deps(b0) if b0 != -1 else []
        return {
            "S0": s0,
            "S1": stack[-2] if len(stack) >= 2 else -1,
            "S2": stack[-3] if len(stack) >= 3 else -1,
            "B0": b0,
            "B1": at(buffer, 1),
            "S0L": min(s0_deps) if s0_deps else -1,
            "S0R": max(s0_deps) if s0_deps else -1,
            "B0L": min(b0_deps) if b0_deps else -1,
        }


def _set(values: Tuple[int, ...], k: int, v: int) -> Tuple[int, ...]:
    out = list(values)
    out[k] = v
    return tuple(out)


# --------------------------------------------------------------------- finish

def close_sentence(heads, labels, words) -> None:
    """In place, on heads and labels indexed by word: the first headless
    word of `words` (in word order) becomes the root (head 0, label
    unchanged), every other headless one is attached to it with label -1."""
    root = None
    for w in words:
        if heads[w] == -1:
            if root is None:
                root = w
                heads[w] = 0
            else:
                heads[w] = root
                labels[w] = -1


def finish(c: Config):
    """(heads, labels) for words 1..n after the system's finish: the
    sentence rule (`close_sentence`) over every word."""
    heads, labels = list(c.heads), list(c.labels)
    close_sentence(heads, labels, range(1, len(heads)))
    return heads[1:], labels[1:]


def label_matches(label: int, gold_label: int) -> bool:
    """A gold label of -1 matches any label; a label of -1 matches only it."""
    return gold_label == -1 or label == gold_label


def final_loss(heads: Sequence[int], labels: Sequence[int], gold_heads, gold_labels) -> int:
    """Words k whose (head, label) differs from the gold one; heads/labels
    are for words 1..n (index k-1), as `finish` returns them."""
    return sum(1 for h, l, gh, gl in zip(heads, labels, gold_heads, gold_labels)
               if not (h == gh and label_matches(l, gl)))


def config_loss(c: Config, gold_heads, gold_labels) -> int:
    """Loss of the tree `finish` makes of c (c final or not)."""
    heads, labels = finish(c)
    return final_loss(heads, labels, gold_heads, gold_labels)


# ------------------------------------------------------------------ exact loss

def _labels_to_try(head: int, dep: int, gh, gl, n_labels: int):
    """The labels an arc head -> dep needs in the search: one that makes the
    arc correct (if any), and one that makes it wrong (if any). Every other
    label gives a configuration equal to one of these after _canonical."""
    good = bad = None
    for l in range(n_labels):
        if head == gh[dep] and label_matches(l, gl[dep]):
            if good is None:
                good = l
        elif bad is None:
            bad = l
        if good is not None and bad is not None:
            break
    return [l for l in (good, bad) if l is not None]


def _canonical(c: Config, gh, gl):
    """(offset, key): c with every fact the future cannot depend on erased.

    - An arc into a word on the stack is kept as the gold arc when correct,
      else as (WRONG, WRONG): moves read only whether a word has a head, and
      the final count only whether the arc is correct.
    - A word that is neither on the stack nor in the buffer is reduced: it
      has a head (only Reduce and Left-Arc remove words, and both leave a
      headed word) that no move will ever change, so it is written as
      correct and counted in `offset` when it is not (arc_eager_break's
      Break gives every word it pops a head, 0 for a sentence's root).
    - `shifted` is read only for b0 and grows only by Shift and Unshift, so
      only its buffer words and headless stack words (those Unshift may put
      back in the buffer) are kept.
    exact_loss(c) = offset + exact_loss(key)."""
    in_play = set(c.stack) | set(c.buffer)
    heads = list(c.heads)
    labels = list(c.labels)
    offset = 0
    for k in range(1, len(heads)):
        correct = heads[k] == gh[k] and label_matches(labels[k], gl[k])
        if k not in in_play:
            assert heads[k] != -1, ("reduced word without a head", c)
            offset += not correct
            heads[k], labels[k] = gh[k], gl[k]
        elif heads[k] != -1:
            heads[k], labels[k] = (gh[k], gl[k]) if correct else (WRONG, WRONG)
    keep = set(c.buffer) | {k for k in c.stack if c.heads[k] == -1}
    key = Config(c.stack, c.buffer, tuple(heads), tuple(labels), c.shifted & keep)
    return offset, key


def _gold(gold_heads, gold_labels):
    return (-1,) + tuple(int(h) for h in gold_heads), (-1,) + tuple(int(l) for l in gold_labels)


def exact_loss(system: System, c: Config, gold_heads, gold_labels,
               memo: Optional[dict] = None, canonical: bool = True) -> int:
    """Minimum final loss over every transition sequence from c.

    canonical=True (default): memoised on `_canonical` keys, arc moves tried
    with one correct and one wrong label (`_labels_to_try`).
    canonical=False: memoised on the configuration itself, every valid move
    with every label tried; slow, for checking the default on short
    sentences. `memo` may be shared between calls for the same system, gold
    tree and value of `canonical`.
    """
    gh, gl = _gold(gold_heads, gold_labels)
    if len(gh) != len(c.heads):
        raise ValueError("gold tree and configuration differ in length")
    if memo is None:
        memo = {}
    limit = 4 * c.n + 4    # depth guard: a longer path means a cycle of moves

    if not canonical:
        def full(cfg: Config, depth: int) -> int:
            value = memo.get(cfg)
            if value is not None:
                return value
            assert depth <= limit, ("no final configuration within 4n+4 moves", cfg)
            if system.is_final(cfg):
                value = system.config_loss(cfg, gold_heads, gold_labels)
            else:
                moves = system.valid_moves(cfg)
                assert moves, ("stuck", cfg)
                value = min(full(system.apply(cfg, m), depth + 1) for m in moves)
            memo[cfg] = value
            return value

        return full(c, 0)

    def successors(cfg: Config):
        for kind in ("S", "D", "B"):
            if system.kind_valid(cfg, kind):
                yield system.apply_kind(cfg, kind)
        for kind in ("L", "R"):
            if system.kind_valid(cfg, kind):
                s0, b0 = cfg.stack[-1], cfg.buffer[0]
                head, dep = (b0, s0) if kind == "L" else (s0, b0)
                for label in _labels_to_try(head, dep, gh, gl, system.n_labels):
                    yield system.apply_kind(cfg, kind, label)

    def search(key: Config, depth: int) -> int:
        value = memo.get(key)
        if value is not None:
            return value
        assert depth <= limit, ("no final configuration within 4n+4 moves", key)
        if system.is_final(key):
            value = system.config_loss(key, gold_heads, gold_labels)
        else:
            best = None
            for nxt in successors(key):
                offset, nkey = _canonical(nxt, gh, gl)
                v = offset + search(nkey, depth + 1)
                if best is None or v < best:
                    best = v
            assert best is not None, ("stuck", key)
            value = best
        memo[key] = value
        return value

    offset, key = _canonical(c, gh, gl)
    return offset + search(key, 0)


# ---------------------------------------------------------------- helpers

def is_projective(gold_heads) -> bool:
    """Whether the tree (heads of words 1..n, 0 = root) has no crossing arcs
    (the root arc 0 -> r included, as a word spanning 0..r)."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(gold_heads, start=1)]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


def config_from_state(st) -> Config:
    """A reference Config holding the same configuration as a Cython ParseState."""
    return Config(tuple(st.stack), tuple(st.buffer), (-1,) + tuple(st.heads),
                  (-1,) + tuple(st.labels), frozenset(st.shifted))
