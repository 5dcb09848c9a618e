"""Pure-Python reference for the monotonic non-projective Covington system.

Independent of the Cython code in ``spacy_nonmono.systems.covington``: the
validity rules, the transitions and the loss are written again here from the
paper (Fernandez-Gonzalez & Gomez-Rodriguez 2017, Figure 1 and section 2.2),
plus the two conventions of this package (explicit root node 0 whose arcs are
built by Right-Arc, and at most one dependent of node 0).

Configurations are immutable ``Config`` tuples; ``heads``/``labels`` are
indexed by node (index 0 is the root, always -1). Gold trees are given as in
the package API: ``gold_heads[k-1]`` is the gold head of word k, likewise
``gold_labels``.

Moves, for a system with L labels: 0 = Shift, 1 = No-Arc, 2+l = Left-Arc(l)
(j -> i), 2+L+l = Right-Arc(l) (i -> j).

``exact_loss`` finds the minimum, over every transition sequence from the
configuration to a final one, of the number of words whose final head is not
the gold head plus the number of words whose head is gold but whose label is
not, by exhaustive memoized search. Nothing of the oracle (reachability,
cycle counting) is used: only ``valid_moves``/``apply`` and the final count.
"""
from typing import NamedTuple, Sequence, Tuple

SHIFT = 0
NO_ARC = 1

# Label written into a configuration by the search for "some label that is not
# the gold one". Labels never affect validity, so every wrong label behaves
# exactly like every other wrong label; one stands for all of them.
WRONG_LABEL = -2


class Config(NamedTuple):
    i: int
    j: int
    heads: Tuple[int, ...]   # heads[k] for node k = 0..n; -1 = no head
    labels: Tuple[int, ...]  # labels[k]; -1 = no arc

    @property
    def n(self) -> int:
        return len(self.heads) - 1


def initial_config(n: int) -> Config:
    return Config(0, 1, (-1,) * (n + 1), (-1,) * (n + 1))


def is_final(c: Config) -> bool:
    return c.j > c.n


def has_path(heads: Sequence[int], src: int, dst: int) -> bool:
    """Whether src ->* dst (possibly empty path) in the arc set `heads`.

    Collects all descendants of src by repeated scans: slow but obviously
    right, and it does not rely on A being acyclic.
    """
    reached = {src}
    changed = True
    while changed:
        changed = False
        for node, head in enumerate(heads):
            if head in reached and node not in reached:
                reached.add(node)
                changed = True
    return dst in reached


def can_shift(c: Config) -> bool:
    return c.j <= c.n


def can_no_arc(c: Config) -> bool:
    return c.j <= c.n and c.i >= 0


def can_left_arc(c: Config) -> bool:
    """j -> i: i is a word (not the root), has no head, and i ->* j is absent."""
    return (c.j <= c.n and c.i >= 1 and c.heads[c.i] == -1
            and not has_path(c.heads, c.i, c.j))


def can_right_arc(c: Config) -> bool:
    """i -> j: j has no head, j ->* i is absent, and node 0 gets one dependent."""
    if not (c.j <= c.n and c.i >= 0):
        return False
    if c.heads[c.j] != -1 or has_path(c.heads, c.j, c.i):
        return False
    if c.i == 0 and any(h == 0 for h in c.heads[1:]):
        return False
    return True


def decode(move: int, n_labels: int):
    """('S'|'N'|'L'|'R', label or None)."""
    if move == SHIFT:
        return "S", None
    if move == NO_ARC:
        return "N", None
    if 2 <= move < 2 + n_labels:
        return "L", move - 2
    if 2 + n_labels <= move < 2 + 2 * n_labels:
        return "R", move - 2 - n_labels
    raise ValueError(f"no move {move} with {n_labels} labels")


def is_valid(c: Config, move: int, n_labels: int) -> bool:
    kind, _ = decode(move, n_labels)
    return {"S": can_shift, "N": can_no_arc, "L": can_left_arc,
            "R": can_right_arc}[kind](c)


def valid_moves(c: Config, n_labels: int):
    return [m for m in range(2 + 2 * n_labels) if is_valid(c, m, n_labels)]


def _with_arc(c: Config, head: int, dep: int, label: int) -> Config:
    heads = list(c.heads)
    labels = list(c.labels)
    heads[dep] = head
    labels[dep] = label
    return Config(c.i - 1, c.j, tuple(heads), tuple(labels))


def apply_kind(c: Config, kind: str, label=None) -> Config:
    """Apply a transition given by kind; raises ValueError when invalid."""
    checks = {"S": can_shift, "N": can_no_arc, "L": can_left_arc, "R": can_right_arc}
    if not checks[kind](c):
        raise ValueError(f"{kind} is not valid in {c}")
    if kind == "S":
        # <l1, l2, j|B, A> => <l1.l2|j, [], B, A>
        return Config(c.j, c.j + 1, c.heads, c.labels)
    if kind == "N":
        # <l1|i, l2, B, A> => <l1, i|l2, B, A>
        return Config(c.i - 1, c.j, c.heads, c.labels)
    if kind == "L":
        return _with_arc(c, c.j, c.i, label)
    return _with_arc(c, c.i, c.j, label)


def apply(c: Config, move: int, n_labels: int) -> Config:
    kind, label = decode(move, n_labels)
    return apply_kind(c, kind, label)


def _gold_tuples(gold_heads, gold_labels):
    gh = (-1,) + tuple(int(h) for h in gold_heads)
    gl = (-1,) + tuple(int(l) for l in gold_labels)
    return gh, gl


def final_loss(heads, labels, gold_heads, gold_labels) -> int:
    """Words with a non-gold (or no) head, plus words with the gold head and a
    non-gold label. heads/labels are node-indexed (index 0 = root) tuples."""
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    loss = 0
    for k in range(1, len(gh)):
        if heads[k] != gh[k]:
            loss += 1
        elif labels[k] != gl[k]:
            loss += 1
    return loss


def _normalise(c: Config, gh, gl) -> Config:
    """Replace every label that is not the gold label of a gold arc by
    WRONG_LABEL (or -1 where there is no arc): labels never affect validity,
    and only "gold arc with the gold label" counts, so this loses nothing."""
    labels = []
    for k, (h, l) in enumerate(zip(c.heads, c.labels)):
        if h == -1:
            labels.append(-1)
        elif h == gh[k] and l == gl[k]:
            labels.append(l)
        else:
            labels.append(WRONG_LABEL)
    return Config(c.i, c.j, c.heads, tuple(labels))


def _search_moves(c: Config, gh, gl, gold_arcs_only: bool):
    """Successor configurations considered by the search.

    Full search (gold_arcs_only=False): Shift, No-Arc, and every valid arc
    with each label that can make a difference: the gold label when the arc
    is gold, and one wrong label.

    Restricted search (gold_arcs_only=True): Shift, No-Arc, and only gold
    arcs with their gold label. This is enough for the minimum because
    every validity condition of an arc move only gets stricter as A grows,
    and Shift/No-Arc do not depend on A: in any sequence, replacing a non-gold
    arc (or a gold arc with a wrong label) by No-Arc (respectively by the same
    arc with the gold label) keeps every later move valid, moves the focus in
    the same way, and does not increase the final loss (the dependent was
    already counted wrong; a headless word is counted wrong too). The test
    suite checks both searches agree on small sentences.
    """
    out = []
    if can_shift(c):
        out.append(apply_kind(c, "S"))
    if can_no_arc(c):
        out.append(apply_kind(c, "N"))
    for kind, head, dep in (("L", c.j, c.i), ("R", c.i, c.j)):
        if not is_valid_kind(c, kind):
            continue
        gold_arc = gh[dep] == head
        if gold_arc:
            out.append(apply_kind(c, kind, gl[dep]))
        if not gold_arcs_only:
            out.append(apply_kind(c, kind, WRONG_LABEL))
    return out


def is_valid_kind(c: Config, kind: str) -> bool:
    return {"S": can_shift, "N": can_no_arc, "L": can_left_arc, "R": can_right_arc}[kind](c)


def exact_loss(c: Config, gold_heads, gold_labels, memo=None,
               gold_arcs_only: bool = True) -> int:
    """Minimum final loss over all transition sequences from c.

    `memo` may be shared between calls for the same gold tree and the same
    value of gold_arcs_only (it is keyed on the normalised configuration).
    """
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    if len(gh) != len(c.heads):
        raise ValueError("gold tree and configuration differ in length")
    if memo is None:
        memo = {}
    start = _normalise(c, gh, gl)

    def search(cfg: Config) -> int:
        value = memo.get(cfg)
        if value is not None:
            return value
        if is_final(cfg):
            value = final_loss(cfg.heads, cfg.labels, gold_heads, gold_labels)
        else:
            successors = _search_moves(cfg, gh, gl, gold_arcs_only)
            # A non-final configuration always has Shift.
            assert successors, cfg
            value = min(search(nxt) for nxt in successors)
        memo[cfg] = value
        return value

    return search(start)


def config_from_state(st) -> Config:
    """A reference Config holding the same configuration as a Cython ParseState."""
    i, j = st.focus
    return Config(i, j, (-1,) + tuple(st.heads), (-1,) + tuple(st.labels))
