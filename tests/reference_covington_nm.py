"""Pure-Python reference for the non-monotonic Covington system.

Written again from the paper (Fernandez-Gonzalez & Gomez-Rodriguez 2017,
Figure 2 and section 4), independent of ``spacy_nonmono.systems.covington_nm``,
with the package's root convention: node 0 is an explicit root whose single
dependent is replaced by a later Right-Arc from 0. Configurations, move
numbering and the final loss are those of ``reference_covington``.

- ``apply``: Figure 2 (arcs always allowed, replacing the dependent's head,
  and breaking a cycle by removing the arc into the new head).
- ``lower``, ``pc_upper``, ``upper``: the three loss expressions, with cycles
  found by a plain search over simple paths (not Johnson's algorithm).
- ``covington_completion``: the transition sequence the paper's bounds reason
  about (build the individually reachable gold arcs in Covington order, No-Arc
  or Shift otherwise); its final loss is an achievable loss.
- ``exact_loss``: the minimum final loss over every transition sequence,
  by depth-first branch and bound that prunes only with the lower bound (a
  count of gold arcs that no move can build any more, so it is valid by
  construction) against the best final loss actually reached. It uses none
  of the upper bounds, so it can check them.
- ``unpruned_loss``: the same minimum by plain enumeration of every valid
  move (every label of the system included) down to every final
  configuration, memoised on the configuration and nothing else: no bound,
  no cut-off, no move left out. It checks ``exact_loss`` and the library's
  search on short sentences.
"""
from reference_covington import (Config, SHIFT, NO_ARC, WRONG_LABEL, decode, final_loss,
                                 has_path, initial_config, is_final, _gold_tuples)

__all__ = ["Config", "initial_config", "is_final", "valid_moves", "apply", "lower",
           "pc_upper", "upper", "covington_completion", "exact_loss", "unpruned_loss",
           "elementary_cycles", "SearchBudgetExceeded"]


def valid_moves(c: Config, n_labels: int):
    """Shift always; No-Arc and Right-Arc with a left focus word; Left-Arc
    when the left focus word is a word (the root takes no head)."""
    if is_final(c):
        return []
    moves = [SHIFT]
    if c.i >= 0:
        moves.append(NO_ARC)
    if c.i >= 1:
        moves.extend(range(2, 2 + n_labels))
    if c.i >= 0:
        moves.extend(range(2 + n_labels, 2 + 2 * n_labels))
    return moves


def apply_kind(c: Config, kind: str, label=None) -> Config:
    if kind == "S":
        return Config(c.j, c.j + 1, c.heads, c.labels)
    if kind == "N":
        return Config(c.i - 1, c.j, c.heads, c.labels)
    heads, labels = list(c.heads), list(c.labels)
    head, dep = (c.j, c.i) if kind == "L" else (c.i, c.j)
    # (A u {head -> dep}) \ {x -> dep} \ {k -> head | dep ->* k}
    if head == 0:
        for k in range(1, len(heads)):
            if heads[k] == 0:          # the root keeps one dependent
                heads[k], labels[k] = -1, -1
    elif heads[head] != -1 and has_path(c.heads, dep, heads[head]):
        heads[head], labels[head] = -1, -1
    heads[dep], labels[dep] = head, label
    return Config(c.i - 1, c.j, tuple(heads), tuple(labels))


def apply(c: Config, move: int, n_labels: int) -> Config:
    if move not in valid_moves(c, n_labels):
        raise ValueError(f"move {move} is not valid in {c}")
    kind, label = decode(move, n_labels)
    return apply_kind(c, kind, label)


def _satisfied(c: Config, gh, gl, y: int) -> bool:
    return c.heads[y] == gh[y] and c.labels[y] == gl[y]


def _position_reachable(c: Config, x: int, y: int) -> bool:
    left, right = min(x, y), max(x, y)
    return not (c.j > right or (c.j == right and c.i < left))


def to_build(c: Config, gh, gl):
    """{dep: head} of the gold arcs not in A (with their label) that the
    focus can still reach: I(c, tG) minus the gold arcs already in A."""
    return {y: gh[y] for y in range(1, len(gh))
            if not _satisfied(c, gh, gl, y) and _position_reachable(c, gh[y], y)}


def lower(c: Config, gold_heads, gold_labels) -> int:
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    return sum(1 for y in range(1, len(gh))
               if not _satisfied(c, gh, gl, y) and not _position_reachable(c, gh[y], y))


def elementary_cycles(arcs):
    """Elementary cycles of a set of (head, dep) arcs, each as its list of
    arcs, found once (from its least node) by following simple paths."""
    succ = {}
    for h, d in arcs:
        succ.setdefault(h, set()).add(d)
    cycles = []

    def extend(path):
        for w in sorted(succ.get(path[-1], ())):
            if w == path[0]:
                cycles.append([(path[t], path[(t + 1) % len(path)]) for t in range(len(path))])
            elif w > path[0] and w not in path:
                extend(path + [w])

    for start in sorted(succ):
        extend([start])
    return cycles


def _cycles_of_union(c: Config, gh, gl):
    build = to_build(c, gh, gl)
    arcs = {(h, d) for d, h in enumerate(c.heads) if h >= 0}
    arcs |= {(h, d) for d, h in build.items()}
    return elementary_cycles(arcs), build


def upper(c: Config, gold_heads, gold_labels) -> int:
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    cycles, _ = _cycles_of_union(c, gh, gl)
    return lower(c, gold_heads, gold_labels) + len(cycles)


def pc_upper(c: Config, gold_heads, gold_labels) -> int:
    """Problematic cycles: the last arc to build of the cycle in Covington
    order (right word ascending, left word descending), x -> y, makes Figure
    2 remove the cycle's arc into x; the cycle costs a gold arc if that arc is
    gold."""
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    cycles, build = _cycles_of_union(c, gh, gl)
    n_problematic = 0
    for cycle in cycles:
        pending = [(h, d) for h, d in cycle if build.get(d) == h]
        closing = max(pending, key=lambda a: (max(a), -min(a)))
        into_head = next(h for h, d in cycle if d == closing[0])
        if gh[closing[0]] == into_head:
            n_problematic += 1
    return lower(c, gold_heads, gold_labels) + n_problematic


def covington_completion(c: Config, gold_heads, gold_labels) -> Config:
    """Finish c the way the paper's bounds assume: at each focus pair build
    the gold arc between them if it is not in A with its label, else No-Arc
    (Shift when the left list is empty)."""
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    while not is_final(c):
        i, j = c.i, c.j
        if i >= 1 and gh[i] == j and not _satisfied(c, gh, gl, i):
            c = apply_kind(c, "L", gl[i])
        elif i >= 0 and gh[j] == i and not _satisfied(c, gh, gl, j):
            c = apply_kind(c, "R", gl[j])
        elif i >= 0:
            c = apply_kind(c, "N")
        else:
            c = apply_kind(c, "S")
    return c


def _normalise(c: Config, gh, gl) -> Config:
    labels = tuple(-1 if h == -1 else (l if (h == gh[k] and l == gl[k]) else WRONG_LABEL)
                   for k, (h, l) in enumerate(zip(c.heads, c.labels)))
    return Config(c.i, c.j, c.heads, labels)


def _successors(c: Config, gh, gl):
    """Every move, with the labels that can make a difference: an arc takes
    its gold label when it is the gold arc (a wrong label on it can only do
    worse), otherwise one wrong label stands for all. Non-gold arcs must be
    searched: replacing a wrong head by another wrong head can break a cycle."""
    if is_final(c):
        return []
    out = [apply_kind(c, "S")]
    if c.i >= 0:
        out.append(apply_kind(c, "N"))
    for kind, head, dep in (("L", c.j, c.i), ("R", c.i, c.j)):
        if dep < 1 or head < 0:
            continue
        out.append(apply_kind(c, kind, gl[dep] if gh[dep] == head else WRONG_LABEL))
    return [_normalise(s, gh, gl) for s in out]


class SearchBudgetExceeded(RuntimeError):
    pass


def exact_loss(c: Config, gold_heads, gold_labels, max_nodes=200000) -> int:
    gh, gl = _gold_tuples(gold_heads, gold_labels)
    if len(gh) != len(c.heads):
        raise ValueError("gold tree and configuration differ in length")
    done = {}      # config -> (value, exact?) ; not exact: the loss is >= value
    nodes = [0]

    def achieved(cfg):
        end = covington_completion(cfg, gold_heads, gold_labels)
        return final_loss(end.heads, end.labels, gold_heads, gold_labels)

    def search(cfg, cutoff):
        """Exact loss of cfg if below cutoff, else a value >= cutoff."""
        known = done.get(cfg)
        if known is not None and (known[1] or known[0] >= cutoff):
            return known[0]
        nodes[0] += 1
        if nodes[0] > max_nodes:
            raise SearchBudgetExceeded(cfg)
        lo = lower(cfg, gold_heads, gold_labels)
        if is_final(cfg):
            value, exact = final_loss(cfg.heads, cfg.labels, gold_heads, gold_labels), True
        elif lo >= cutoff:
            value, exact = lo, False
        else:
            best = min(cutoff, achieved(cfg))
            if best > lo:
                children = sorted(_successors(cfg, gh, gl),
                                  key=lambda s: lower(s, gold_heads, gold_labels))
                for child in children:
                    if lower(child, gold_heads, gold_labels) >= best:
                        break
                    best = min(best, search(child, best))
                    if best == lo:
                        break
            value = best
            exact = value < cutoff
        done[cfg] = (value, exact)
        return value

    start = _normalise(c, gh, gl)
    return search(start, achieved(start) + 1)


def _merge_key(c: Config, gh) -> Config:
    """c with the label of every arc whose head is not the gold head set to
    WRONG_LABEL. Configurations that differ only there have the same loss:
    no transition reads a label (``valid_moves``/``apply_kind`` never look at
    ``labels``), ``final_loss`` reads the label of word k only when k has its
    gold head, and the head of an arc never changes while the arc exists (a
    new head for k rewrites k's label with it; removing the arc clears it).
    So a non-gold arc's label is never read before it is overwritten, in
    any continuation. Labels of gold arcs are kept as they are."""
    labels = tuple(l if h == -1 or h == gh[k] else WRONG_LABEL
                   for k, (h, l) in enumerate(zip(c.heads, c.labels)))
    return Config(c.i, c.j, c.heads, labels)


def unpruned_loss(c: Config, gold_heads, gold_labels, n_labels: int, memo=None,
                  max_configs=None, merge_wrong_labels: bool = True) -> int:
    """Minimum final loss over every transition sequence from c, by plain
    enumeration: every move of ``valid_moves(c, n_labels)`` (Left-Arc and
    Right-Arc with each of the n_labels labels) from every configuration,
    and the minimum of ``final_loss`` over the final configurations reached.
    Memoised on the configuration; with merge_wrong_labels, configurations
    that differ only in the labels of non-gold arcs share one entry (see
    ``_merge_key`` for why that loses nothing; the tests also compare it
    with merge_wrong_labels=False). `memo` may be shared between calls for
    the same gold tree and the same merge_wrong_labels. Raises
    SearchBudgetExceeded when the memo would grow past max_configs entries
    (entries already in it stay exact)."""
    gh, _ = _gold_tuples(gold_heads, gold_labels)
    if len(gh) != len(c.heads):
        raise ValueError("gold tree and configuration differ in length")
    if memo is None:
        memo = {}
    key = (lambda cfg: _merge_key(cfg, gh)) if merge_wrong_labels else (lambda cfg: cfg)

    def search(cfg: Config) -> int:
        k = key(cfg)
        value = memo.get(k)
        if value is not None:
            return value
        if max_configs is not None and len(memo) >= max_configs:
            raise SearchBudgetExceeded(cfg)
        if is_final(cfg):
            value = final_loss(cfg.heads, cfg.labels, gold_heads, gold_labels)
        else:
            value = min(search(apply(cfg, m, n_labels)) for m in valid_moves(cfg, n_labels))
        memo[k] = value
        return value

    return search(c)
