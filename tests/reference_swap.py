"""A pure-Python reference for the swap systems (spacy_nonmono/systems/swap.pyx),
written from their specification: arc-standard swap with the lazy oracle of
Nivre, Kuhlmann & Hall (2009), and stay-eager swap (Kohita, Noji & Matsumoto
2017, Tables 1-3). Plain lists and dicts, no speed concerns.

A configuration is a Config: stack (bottom first, node 0 at the bottom),
buffer (front first), heads and labels of nodes 0..n (-1 = none), and the
set of words Unshift put back. A move is (kind, label); label None for the
unlabelled kinds.
"""
from dataclasses import dataclass, field
from typing import List, Optional, Set, Tuple

LAZY_KINDS = ("S", "W", "L", "R")
SES_KINDS = ("S", "D", "W", "U", "RR", "SL", "SR")
LABELLED = {"L", "R", "SL", "SR"}


@dataclass
class Config:
    stack: List[int]
    buffer: List[int]
    heads: List[int]
    labels: List[int]
    unshifted: Set[int] = field(default_factory=set)

    def copy(self):
        return Config(list(self.stack), list(self.buffer), list(self.heads),
                      list(self.labels), set(self.unshifted))


def initial(n: int) -> Config:
    return Config([0], list(range(1, n + 1)), [-1] * (n + 1), [-1] * (n + 1))


def is_final(c: Config) -> bool:
    return not c.buffer and c.stack == [0]


def ancestor_or_self(heads, a, b) -> bool:
    """Whether there is a path a ->* b in the built arcs."""
    seen = 0
    while b != -1 and seen <= len(heads):
        if b == a:
            return True
        b = heads[b]
        seen += 1
    return False


def context(c: Config) -> dict:
    """Node ids of every context slot either system may use (-1 absent): the
    top three stack nodes, the first four buffer words, and the leftmost and
    rightmost dependents (word order, either side) of S0, S1 and B0 in the
    arcs built so far."""
    def at(seq, k):
        return seq[k] if 0 <= k < len(seq) else -1

    def outer(h):
        deps = [k for k in range(1, len(c.heads)) if h != -1 and c.heads[k] == h]
        return (min(deps), max(deps)) if deps else (-1, -1)

    slots = {"S0": at(c.stack, len(c.stack) - 1), "S1": at(c.stack, len(c.stack) - 2),
             "S2": at(c.stack, len(c.stack) - 3), "B0": at(c.buffer, 0), "B1": at(c.buffer, 1),
             "B2": at(c.buffer, 2), "B3": at(c.buffer, 3)}
    for name in ("S0", "S1", "B0"):
        slots[name + "L"], slots[name + "R"] = outer(slots[name])
    return slots


# The slots each system reads: stay-eager swap attaches S0 and B0 (arc-eager's
# context), arc-standard swap attaches S1 and S0.
CONTEXT_NAMES = {
    "swap_stay_eager": ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "B0L"),
    "swap_lazy": ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "S1L", "S1R"),
    # stay-eager swap with context="wide"
    "swap_stay_eager-wide": ("S0", "S1", "S2", "B0", "B1", "S0L", "S0R", "B0L", "B0R", "B2", "B3",
                             "S1L", "S1R"),
}


def moves(kinds, n_labels):
    return [(k, l) for k in kinds for l in (range(n_labels) if k in LABELLED else [None])]


# -------------------------------------------------------------- swap_lazy

def lazy_valid_kinds(c: Config) -> Set[str]:
    ok = set()
    if c.buffer:
        ok.add("S")
    if len(c.stack) >= 2 and (c.stack[-2] != 0 or not c.buffer):
        ok.add("R")
    if len(c.stack) >= 3:
        ok.add("L")
        if c.stack[-2] < c.stack[-1]:
            ok.add("W")
    return ok


def lazy_apply(c: Config, kind: str, label: Optional[int]) -> Config:
    c = c.copy()
    if kind == "S":
        c.stack.append(c.buffer.pop(0))
    elif kind == "W":
        j = c.stack.pop()
        i = c.stack.pop()
        c.stack.append(j)
        c.buffer.insert(0, i)
    elif kind == "L":
        j = c.stack.pop()
        i = c.stack.pop()
        c.heads[i], c.labels[i] = j, label
        c.stack.append(j)
    else:
        j = c.stack.pop()
        c.heads[j], c.labels[j] = c.stack[-1], label
    return c


def projective_order(gold_heads: List[int]) -> List[int]:
    """Position of each node 0..n in the in-order traversal of the gold tree."""
    n = len(gold_heads)
    heads = [-1] + list(gold_heads)
    order = []

    def visit(node):
        deps = [k for k in range(1, n + 1) if heads[k] == node]
        for k in deps:
            if k < node:
                visit(k)
        order.append(node)
        for k in deps:
            if k > node:
                visit(k)

    visit(0)
    position = [0] * (n + 1)
    for p, node in enumerate(order):
        position[node] = p
    return position


def projective_components(gold_heads: List[int]) -> List[int]:
    """The top word of each word's subtree built by the swap-free arc-standard
    oracle in word order (no attachment to node 0)."""
    n = len(gold_heads)
    heads = [-1] + list(gold_heads)
    built = [-1] * (n + 1)

    def complete(w):
        return all(built[k] == w for k in range(1, n + 1) if heads[k] == w)

    stack = []
    for w in range(1, n + 1):
        stack.append(w)
        while len(stack) >= 2:
            a, b = stack[-2], stack[-1]
            if heads[a] == b and complete(a):
                built[a] = b
                del stack[-2]
            elif heads[b] == a and complete(b):
                built[b] = a
                stack.pop()
            else:
                break
    top = [0] * (n + 1)
    for w in range(1, n + 1):
        k = w
        while built[k] != -1:
            k = built[k]
        top[w] = k
    return top


def complete(c: Config, gold: List[int], w: int) -> bool:
    """w has all its gold dependents attached (gold: heads of 0..n)."""
    return all(c.heads[k] == w for k in range(1, len(gold)) if gold[k] == w)


def lazy_oracle(c: Config, gold_heads, gold_labels) -> Tuple[str, Optional[int]]:
    gold = [-1] + list(gold_heads)
    labels = [-1] + list(gold_labels)
    order = projective_order(gold_heads)
    component = projective_components(gold_heads)
    valid = lazy_valid_kinds(c)
    if len(c.stack) >= 2:
        i, j = c.stack[-2], c.stack[-1]
        if i != 0 and gold[i] == j and complete(c, gold, i):
            return "L", max(labels[i], 0)
        if gold[j] == i and complete(c, gold, j) and "R" in valid:
            return "R", max(labels[j], 0)
        if ("W" in valid and order[j] < order[i]
                and (not c.buffer or component[j] != component[c.buffer[0]])):
            return "W", None
    return "S", None


# -------------------------------------------------------- swap_stay_eager

def ses_valid_kinds(c: Config) -> Set[str]:
    i = c.stack[-1]
    j = c.buffer[0] if c.buffer else None
    ok = set()
    if j is not None:
        if i != 0 and c.heads[i] == -1 and not ancestor_or_self(c.heads, i, j):
            ok.add("SL")
        if c.heads[j] == -1 and not ancestor_or_self(c.heads, j, i):
            ok.add("SR")
        if not (j in c.unshifted and c.heads[j] == -1):
            ok.add("S")
        if 0 < i < j:
            ok.add("W")
    if i != 0 and c.heads[i] != -1:
        ok.add("D")
    if j is None and c.heads[i] == -1 and i != 0:
        ok.add("U" if len(c.stack) >= 3 else "RR")
    return ok


def ses_apply(c: Config, kind: str, label: Optional[int]) -> Config:
    c = c.copy()
    i = c.stack[-1]
    if kind == "S":
        c.stack.append(c.buffer.pop(0))
    elif kind == "D":
        c.stack.pop()
    elif kind == "W":
        c.stack.pop()
        c.buffer.insert(1, i)
    elif kind == "U":
        c.stack.pop()
        c.buffer.insert(0, i)
        c.unshifted.add(i)
    elif kind == "RR":
        c.stack.pop()
        c.heads[i], c.labels[i] = 0, -1
    elif kind == "SL":
        c.heads[i], c.labels[i] = c.buffer[0], label
    else:
        j = c.buffer[0]
        c.heads[j], c.labels[j] = i, label
    return c


def unbuilt(c: Config, gold, a, b) -> bool:
    """A gold arc joins a and b (either way) and is not built."""
    return (gold[b] == a and c.heads[b] != a) or (a > 0 and gold[a] == b and c.heads[a] != b)


def is_cross(c: Config, gold) -> bool:
    i, j = c.stack[-1], c.buffer[0]
    return (any(unbuilt(c, gold, i, b) for b in c.buffer[1:])
            and any(unbuilt(c, gold, j, s) for s in c.stack[:-1]))


def ses_oracle(c: Config, gold_heads, gold_labels, nonstatic=False):
    """The moves the oracle may choose: one for the static oracle; for the
    nonstatic one, also Shift where a coin may replace the root's Stay-Right
    or a Reduce (Shift safe: B0 has no unbuilt gold arc to a stack word)."""
    gold = [-1] + list(gold_heads)
    labels = [-1] + list(gold_labels)
    valid = ses_valid_kinds(c)
    i = c.stack[-1]
    j = c.buffer[0] if c.buffer else None
    if j is not None:
        if i > 0 and gold[i] == j and "SL" in valid:
            return {("SL", max(labels[i], 0))}
        if gold[j] == i and "SR" in valid:
            chosen = {("SR", max(labels[j], 0))}
            if nonstatic and i == 0 and "S" in valid:
                chosen.add(("S", None))
            return chosen
        if "W" in valid and is_cross(c, gold):
            return {("W", None)}
    if i > 0 and c.heads[i] != -1 and complete(c, gold, i) and (c.heads[i] != 0 or j is None):
        chosen = {("D", None)}
        if (nonstatic and j is not None and "S" in valid
                and not any(unbuilt(c, gold, j, s) for s in c.stack)):
            chosen.add(("S", None))
        return chosen
    for kind in ("S", "RR", "U"):
        if kind in valid:
            return {(kind, None)}
    return set()


SYSTEMS = {
    "swap_lazy": (LAZY_KINDS, lazy_valid_kinds, lazy_apply),
    "swap_stay_eager": (SES_KINDS, ses_valid_kinds, ses_apply),
}


# ------------------------------------- swap_stay_eager's dynamic oracle

def ses_loss(c: Config, gold_heads, gold_labels) -> int:
    """The dynamic oracle's approximate loss: arcs built with a wrong head or
    label, plus headless words whose gold head is reduced (neither on the
    stack nor in the buffer) or is their own descendant."""
    gold = [-1] + list(gold_heads)
    labels = [-1] + list(gold_labels)
    present = set(c.stack) | set(c.buffer) | {0}
    loss = 0
    for d in range(1, len(gold)):
        h = c.heads[d]
        if h != -1:
            loss += h != gold[d] or (labels[d] >= 0 and c.labels[d] != labels[d])
        elif gold[d] != 0 and (gold[d] not in present or ancestor_or_self(c.heads, d, gold[d])):
            loss += 1
    return loss


def ses_dynamic_costs(c: Config, gold_heads, gold_labels, n_labels, chosen):
    """{move: cost} over the valid moves: the loss a move adds, plus one for
    a Shift or Swap that is not `chosen` (the nonstatic oracle's move)."""
    base = ses_loss(c, gold_heads, gold_labels)
    costs = {}
    for kind in ses_valid_kinds(c):
        for label in (range(n_labels) if kind in LABELLED else [None]):
            after = ses_apply(c, kind, label)
            cost = ses_loss(after, gold_heads, gold_labels) - base
            if kind in ("S", "W") and (kind, label) != chosen:
                cost += 1
            costs[(kind, label)] = cost
    return costs


def final_loss(c: Config, gold_heads, gold_labels) -> int:
    """Wrong heads or labels of a final configuration, before `finish`."""
    return sum(c.heads[d] != h or (l >= 0 and c.labels[d] != l)
               for d, (h, l) in enumerate(zip(gold_heads, gold_labels), start=1))


def ses_exact_losses(gold_heads, gold_labels):
    """{configuration key: the least final loss reachable from it} over every
    configuration reachable from the initial one, by exhaustive search (arcs
    take the dependent's gold label, the best choice)."""
    import sys
    n = len(gold_heads)
    gold = [-1] + list(gold_heads)
    labels = [-1] + [max(l, 0) for l in gold_labels]
    memo = {}
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def best(c):
        k = config_key(c)
        if k not in memo:
            if is_final(c):
                memo[k] = final_loss(c, gold_heads, gold_labels)
            else:
                i = c.stack[-1]
                j = c.buffer[0] if c.buffer else None
                label_of = {"SL": labels[i] if gold[i] == j else 0,
                            "SR": labels[j] if j is not None and gold[j] == i else 0}
                memo[k] = min(best(ses_apply(c, kind, label_of.get(kind)))
                              for kind in ses_valid_kinds(c))
        return memo[k]

    best(initial(n))
    return memo


def config_key(c: Config):
    return (tuple(c.stack), tuple(c.buffer), tuple(c.heads), tuple(c.labels),
            frozenset(c.unshifted))
