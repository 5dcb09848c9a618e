"""The deduction system of the first-order 1-Endpoint-Crossing chart
(`ec_chart.pyx`), as data: item kinds, their rules, and for each rule the
table of connectivity states its antecedents combine into.

Pitler, Kannan & Marcus (2013) decompose a 1EC tree into intervals; this is
our derivation of their idea over undirected edges, with direction and
acyclicity kept by a generic connectivity state (docs/systems/global.md):

- ``INT [i, j]``: the edges with both ends in [i, j]; nothing from the open
  interval (i, j) leaves it. ``INT0``: the same without the edge i-j.
- ``X_T [i, j; x]`` (x outside [i, j]): the edges inside [i, j] and edges
  from the exterior point x to (i, j). Each x-edge's crossers inside [i, j]
  all touch: ``N`` none (no crossers), ``NEAR`` the boundary point next to
  x, ``FAR`` the other one, ``LR`` either (per edge; the edge i-j is outside
  the item and crosses every x-edge). ``*_PLUS`` adds the optional edge from
  x to the far boundary point (it crosses nothing inside).
- ``CHAIN_I``/``CHAIN_IP``/``CHAIN_J``: the alternating chains of crossing
  edges an ``LR`` item needs where its near- and far-crossed x-edges meet.
- ``Q [i, p]``: an edge i-k crossed by edges from p (> k) only, with the
  ``LR`` item under it: the part of ``INT0 [i, j]`` left of p.

A state of an item is, over its boundary points (2 or 3, in position
order), a partition into connected components plus each component's top: the
one point with no parent inside the item (its edges point away from it).
Combining items sharing points is valid when the union stays acyclic and no
point gets a parent in two of them; a point that stops being a boundary
point must have its parent inside by then.

Rules are written with x on the left of [i, j] ("oriented"); an item with x
on the right is computed in mirrored positions (u -> n - u), so each rule has
a state table per orientation.
"""
from itertools import product
from typing import Dict, List, Optional, Sequence, Tuple

# Item kinds. Stored kinds first, in the order the chart fills those of one
# [i, j] (each reads only earlier kinds of the same [i, j]); then the region
# kinds (`region_rules`), which only the third-order chart fills.
INT, INT0, Q, Q_NE, REG = 0, 1, 2, 3, 4                     # pairs [i, j]
X_N, X_NEAR, X_FAR, X_N_PLUS, X_NEAR_PLUS, CHAIN_I, CHAIN_IP, CHAIN_J, X_LR = range(5, 14)
(X_NEAR_NE, X_FAR_NE, X_NEAR_PLUS_NE, CHAIN_I_NE, CHAIN_J_NE, X_LR_NE, X_N_EDGE, X_NEAR_COV,
 X_NEAR_PLUS_COV) = range(14, 23)
# The edge, read from the arc table.
EDGE = 23
N_STORED_PAIR = 5
N_STORED_TRIPLE = 18
# Read only with x right of [i, j]: X_LR (under Q) and what it reads of the
# same orientation, and the region kinds under Q_NE and C1. The chart leaves
# them out for x on the left, and the region kinds read only with x on the
# left (under C1's and C2's right part) out for x on the right.
RIGHT_ONLY = (X_FAR, CHAIN_J, X_LR, X_NEAR_NE, X_FAR_NE, X_NEAR_PLUS_NE, CHAIN_I_NE,
              CHAIN_J_NE, X_LR_NE)
LEFT_ONLY = (X_N_EDGE, X_NEAR_COV, X_NEAR_PLUS_COV)
KIND_NAMES = ("int", "int0", "q", "q_ne", "reg", "x_n", "x_near", "x_far", "x_n_plus",
              "x_near_plus", "chain_i", "chain_ip", "chain_j", "x_lr", "x_near_ne", "x_far_ne",
              "x_near_plus_ne", "chain_i_ne", "chain_j_ne", "x_lr_ne", "x_n_edge", "x_near_cov",
              "x_near_plus_cov", "edge")
PAIR_KINDS = (INT, INT0, Q, Q_NE, REG, EDGE)

# Symbols of a rule's positions: the item's i, j, x and the split points.
I, J, X, K, P = 0, 1, 2, 3, 4


def states(n_points: int) -> List[frozenset]:
    """All states over points 0..n_points-1, in a fixed order: partitions
    (blocks of point indices) with a top per block."""
    out = []
    for partition in _partitions(list(range(n_points))):
        for tops in product(*partition):
            out.append(frozenset((frozenset(b), t) for b, t in zip(partition, tops)))
    return out


def _partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        yield [[first]] + part
        for k in range(len(part)):
            yield part[:k] + [[first] + part[k]] + part[k + 1:]


STATES = {1: states(1), 2: states(2), 3: states(3)}
STATE_INDEX = {k: {s: n for n, s in enumerate(v)} for k, v in STATES.items()}
N_PAIR_STATES, N_TRIPLE_STATES = len(STATES[2]), len(STATES[3])   # 3, 10
# Pair states: 0 = separate, 1 = joined with the left point on top, 2 = the right.
SEPARATE = STATE_INDEX[2][frozenset([(frozenset([0]), 0), (frozenset([1]), 1)])]
LEFT_TOP = STATE_INDEX[2][frozenset([(frozenset([0, 1]), 0)])]
RIGHT_TOP = STATE_INDEX[2][frozenset([(frozenset([0, 1]), 1)])]


def join(blocks: Sequence[Tuple[frozenset, object]], keep: Sequence[object]) -> Optional[frozenset]:
    """The state over `keep` of the union of blocks (points named by any
    hashable), or None where the union has a cycle, a point with two
    parents, or a dropped point without its parent."""
    parent: Dict[object, object] = {}

    def find(v):
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    n_parents: Dict[object, int] = {}
    for points, top in blocks:
        points = list(points)
        for p in points:
            find(p)
            if p != top:
                n_parents[p] = n_parents.get(p, 0) + 1
        for p in points[1:]:
            a, b = find(points[0]), find(p)
            if a == b:
                return None
            parent[a] = b
    for p in keep:
        find(p)
    if any(c > 1 for c in n_parents.values()):
        return None
    if any(p not in keep and n_parents.get(p, 0) != 1 for p in parent):
        return None
    groups: Dict[object, list] = {}
    for p in keep:
        groups.setdefault(find(p), []).append(p)
    return frozenset((frozenset(g), next(p for p in g if not n_parents.get(p, 0)))
                     for g in groups.values())


class Rule:
    """One way to build an item: split points ranging between positions,
    antecedents (kind, a, b, x) over symbols, and per orientation the valid
    combinations of the antecedents' states with the consequent's state."""

    def __init__(self, kind: int, splits: Sequence[Tuple[int, int, int, int]],
                 parts: Sequence[Tuple[int, Tuple[int, int], Tuple[int, int], Optional[int]]]):
        self.kind = kind
        self.splits = list(splits)    # (lo symbol, lo offset, hi symbol, hi offset), inclusive
        self.parts = list(parts)      # (kind, (sym, off) a, (sym, off) b, x symbol or None)
        # Per orientation: the valid rows (antecedents' states + the result's),
        # and each antecedent's orientation (1: its x right of it; pairs 0).
        self.combos, self.sides = [], []
        for mirrored in (False, True):
            combos, sides = self._combos(mirrored)
            self.combos.append(combos)
            self.sides.append(sides)

    def _combos(self, mirrored: bool) -> Tuple[List[Tuple[int, ...]], Tuple[int, ...]]:
        # Symbolic positions, oriented: x < i < (i+1) <= k, p < j (with the
        # order the splits imply); only the relative order matters.
        order = {(X, 0): -1, (I, 0): 0, (I, 1): 0.5, (J, 0): 10}
        split_rank = {K: 5, P: 5}
        for s, (lo, lo_off, hi, hi_off) in enumerate(self.splits):
            sym = (K, P)[s]
            if s == 1 and lo == K:
                split_rank[P] = 7       # p after k
            elif s == 1 and hi == K:
                split_rank[P] = 3       # p before k
            order[(sym, 0)] = split_rank[sym]
        sign = -1 if mirrored else 1

        def pos(point):
            return sign * order[point]

        consequent = [(I, 0), (J, 0)] + ([(X, 0)] if self.kind not in PAIR_KINDS else [])
        keep = sorted(consequent, key=pos)
        part_points, sides = [], []
        for kind, a, b, x in self.parts:
            pts = [a, b] + ([(x, 0)] if x is not None else [])
            part_points.append(sorted(pts, key=pos))
            sides.append(int(x is not None and pos((x, 0)) > pos(a)))
        combos = []
        for choice in product(*(range(len(STATES[len(pts)])) for pts in part_points)):
            blocks = []
            for pts, s in zip(part_points, choice):
                for block, top in STATES[len(pts)][s]:
                    blocks.append((frozenset(pts[v] for v in block), pts[top]))
            state = join(blocks, keep)
            if state is not None:
                index = {p: n for n, p in enumerate(keep)}
                local = frozenset((frozenset(index[p] for p in b), index[t]) for b, t in state)
                combos.append(choice + (STATE_INDEX[len(keep)][local],))
        return combos, tuple(sides)


def unpruned_rules() -> List[Rule]:
    """The rules with every valid row (RULES leaves out the dead ones)."""
    a = lambda sym, off=0: (sym, off)       # noqa: E731
    between_ij = (I, 1, J, -1)              # i < k < j
    rules = [
        # INT0 [i, j]: i has no neighbour inside: [i+1, j].
        Rule(INT0, [], [(INT, a(I, 1), a(J), None)]),
        # k = i's farthest neighbour inside; i-k crossed by nothing,
        Rule(INT0, [between_ij], [(EDGE, a(I), a(K), None), (INT0, a(I), a(K), None),
                                  (INT, a(K), a(J), None)]),
        # crossed by edges from p in (k, j] into (i, k) ("C1"), k-edges into (p, j]
        Rule(INT0, [between_ij, (K, 1, J, -1)],
             [(EDGE, a(I), a(K), None), (X_NEAR, a(I), a(K), P), (INT, a(K), a(P), None),
              (X_NEAR_PLUS, a(P), a(J), K)]),
        Rule(INT0, [between_ij], [(EDGE, a(I), a(K), None), (X_NEAR, a(I), a(K), J),
                                  (INT, a(K), a(J), None)]),
        # or none (Q: the edge i-k with the LR item under it),
        Rule(INT0, [(I, 2, J, -1)], [(Q, a(I), a(K), None), (INT, a(K), a(J), None)]),
        Rule(INT0, [], [(Q, a(I), a(J), None)]),
        # crossed by edges from p in (i, k) into (k, j] ("C2"), all crossing at i or at k.
        Rule(INT0, [between_ij, (I, 1, K, -1)],
             [(EDGE, a(I), a(K), None), (INT, a(I), a(P), None), (X_NEAR, a(P), a(K), I),
              (X_N_PLUS, a(K), a(J), P)]),
        Rule(INT0, [between_ij, (I, 1, K, -1)],
             [(EDGE, a(I), a(K), None), (X_NEAR, a(I), a(P), K), (INT, a(P), a(K), None),
              (X_NEAR_PLUS, a(K), a(J), P)]),
        # INT: with or without the edge i-j.
        Rule(INT, [], [(INT0, a(I), a(J), None)]),
        Rule(INT, [], [(EDGE, a(I), a(J), None), (INT0, a(I), a(J), None)]),
        # Q [i, p] (the split is k): i-k, LR [i, k; p], [k, p].
        Rule(Q, [between_ij], [(EDGE, a(I), a(K), None), (X_LR, a(I), a(K), J),
                               (INT, a(K), a(J), None)]),
        # X_N: no x-edge, or k = the x-target farthest from x.
        Rule(X_N, [], [(INT, a(I), a(J), None)]),
        Rule(X_N, [between_ij], [(EDGE, a(X), a(K), None), (X_N, a(I), a(K), X),
                                 (INT, a(K), a(J), None)]),
        # X_NEAR: k the farthest x-target; i-edges over k crossed at x, or x-k alone.
        Rule(X_NEAR, [], [(INT, a(I), a(J), None)]),
        Rule(X_NEAR, [between_ij], [(EDGE, a(X), a(K), None), (X_NEAR, a(I), a(K), X),
                                    (X_N_PLUS, a(K), a(J), I)]),
        Rule(X_NEAR, [between_ij], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                    (X_NEAR_PLUS, a(K), a(J), I)]),
        # X_FAR: k the nearest x-target; j-edges over k crossed at x, or x-k alone.
        Rule(X_FAR, [], [(INT, a(I), a(J), None)]),
        Rule(X_FAR, [between_ij], [(EDGE, a(X), a(K), None), (X_N_PLUS, a(I), a(K), J),
                                   (X_FAR, a(K), a(J), X)]),
        Rule(X_FAR, [between_ij], [(EDGE, a(X), a(K), None), (X_NEAR_PLUS, a(I), a(K), J),
                                   (INT, a(K), a(J), None)]),
        # X_LR: all near, all far, or near-crossed x-edges left of far-crossed
        # ones, joined by a chain ending at k.
        Rule(X_LR, [], [(X_NEAR, a(I), a(J), X)]),
        Rule(X_LR, [], [(X_FAR, a(I), a(J), X)]),
        Rule(X_LR, [between_ij], [(CHAIN_I, a(I), a(K), X), (X_FAR, a(K), a(J), X)]),
        Rule(X_LR, [between_ij], [(X_NEAR_PLUS, a(I), a(K), X), (CHAIN_J, a(K), a(J), X)]),
        # CHAIN_I [i, j; x]: the edge i-j over near-crossed x-edges, or x-k
        # crossed by an edge from i (CHAIN_IP [k, j; i]).
        Rule(CHAIN_I, [], [(EDGE, a(I), a(J), None), (X_NEAR_PLUS, a(I), a(J), X)]),
        Rule(CHAIN_I, [between_ij], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                     (CHAIN_IP, a(K), a(J), I)]),
        Rule(CHAIN_IP, [between_ij], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                      (CHAIN_I, a(K), a(J), I)]),
        # CHAIN_J [i, j; x]: the edge i-j over far-crossed x-edges, or x-k with
        # a chain from j on [i, k].
        Rule(CHAIN_J, [], [(EDGE, a(I), a(J), None), (X_FAR, a(I), a(J), X)]),
        Rule(CHAIN_J, [between_ij], [(EDGE, a(X), a(K), None), (INT, a(K), a(J), None),
                                     (CHAIN_IP, a(I), a(K), J)]),
        # *_PLUS: the optional edge from x to the far boundary point j.
        Rule(X_N_PLUS, [], [(X_N, a(I), a(J), X)]),
        Rule(X_N_PLUS, [], [(EDGE, a(X), a(J), None), (X_N, a(I), a(J), X)]),
        Rule(X_NEAR_PLUS, [], [(X_NEAR, a(I), a(J), X)]),
        Rule(X_NEAR_PLUS, [], [(EDGE, a(X), a(J), None), (X_NEAR, a(I), a(J), X)]),
    ]
    return rules


def possible_states(rules: Sequence[Rule]) -> Dict[Tuple[int, int], set]:
    """The states each kind can reach, per orientation (pairs: 0), whatever
    the scores: the least fixpoint of the rules from the edge's two states
    and the empty INT0 [i, i+1]. The chains, for one, never have some."""
    possible = {(kind, side): set() for kind in range(len(KIND_NAMES)) for side in (0, 1)}
    possible[EDGE, 0] |= {LEFT_TOP, RIGHT_TOP}
    possible[INT0, 0].add(SEPARATE)
    changed = True
    while changed:
        changed = False
        for rule in rules:
            for side in ((0,) if rule.kind in PAIR_KINDS else (0, 1)):
                found = possible[rule.kind, side]
                for row in rule.combos[side]:
                    if row[-1] not in found and _reads_possible(rule, side, row, possible):
                        found.add(row[-1])
                        changed = True
    return possible


def read_states(rules: Sequence[Rule]) -> Dict[Tuple[int, int], set]:
    """The states of each kind some rule reads, per orientation of the
    antecedent (1: its x right of it)."""
    read = {(kind, side): set() for kind in range(len(KIND_NAMES)) for side in (0, 1)}
    for rule in rules:
        for side in ((0,) if rule.kind in PAIR_KINDS else (0, 1)):
            for row in rule.combos[side]:
                for p, part in enumerate(rule.parts):
                    read[part[0], rule.sides[side][p]].add(row[p])
    return read


def _prune(rules: Sequence[Rule]) -> None:
    """Drops the rows that read a state its antecedent never has (a third
    of the chains' rows), and the rows of a 3-point kind giving a state no
    rule reads (half of X_LR's), until neither is left: the chart's results
    are the same, found sooner, with fewer states stored."""
    while True:
        possible = possible_states(rules)
        read = read_states(rules)
        n_rows = sum(len(rule.combos[0]) + len(rule.combos[1]) for rule in rules)
        for rule in rules:
            for side in (0, 1):
                rule.combos[side] = [
                    row for row in rule.combos[side]
                    if _reads_possible(rule, side, row, possible)
                    and (rule.kind in PAIR_KINDS or row[-1] in read[rule.kind, side])]
        if sum(len(rule.combos[0]) + len(rule.combos[1]) for rule in rules) == n_rows:
            return


def _reads_possible(rule: Rule, side: int, row, possible) -> bool:
    """Whether every antecedent state of this row is one its kind can have."""
    return all(row[p] in possible[part[0], rule.sides[side][p]]
               for p, part in enumerate(rule.parts))


def region_rules() -> List[Rule]:
    """The crossing regions of the third-order chart (`graph/ec3_chart.pyx`):
    REG [i, j] is an INT0 [i, j] whose every inner point is strictly under a
    crossed edge. INT0's rules that leave a point under no edge (i with no
    neighbour inside, i's farthest neighbour k uncrossed, Q [i, p] + INT
    [p, j]) cannot build one; the others can, with k crossed, restricted:

    - ``_NE``: at least one x-edge (C1's and Q's edge i-k crossed);
    - ``X_N_EDGE [i, j; x]``: X_N_PLUS with its edge x-j (an X_N leaves the
      point past its farthest x-target under no crossed edge otherwise);
    - ``_COV`` (x left of [i, j]): every point of [i, j) strictly under a
      crossed edge, the x-edges counted as crossed (where these items are
      read, an edge of the rule crosses all their x-edges).

    Every edge of a region is scored alike (first-order), so the several
    derivations some regions have score the same."""
    a = lambda sym, off=0: (sym, off)       # noqa: E731
    between = (I, 1, J, -1)
    rules = [
        # REG [i, j]: C1 (p < j, p = j), Q, and C2's two forms.
        Rule(REG, [between, (K, 1, J, -1)],
             [(EDGE, a(I), a(K), None), (X_NEAR_NE, a(I), a(K), P), (INT, a(K), a(P), None),
              (X_NEAR_PLUS_COV, a(P), a(J), K)]),
        Rule(REG, [between], [(EDGE, a(I), a(K), None), (X_NEAR_NE, a(I), a(K), J),
                              (INT, a(K), a(J), None)]),
        Rule(REG, [], [(Q_NE, a(I), a(J), None)]),
        Rule(REG, [between, (I, 1, K, -1)],
             [(EDGE, a(I), a(K), None), (INT, a(I), a(P), None), (X_NEAR, a(P), a(K), I),
              (X_N_EDGE, a(K), a(J), P)]),
        Rule(REG, [between, (I, 1, K, -1)],
             [(EDGE, a(I), a(K), None), (X_NEAR, a(I), a(P), K), (INT, a(P), a(K), None),
              (X_NEAR_PLUS_COV, a(K), a(J), P)]),
        Rule(Q_NE, [between], [(EDGE, a(I), a(K), None), (X_LR_NE, a(I), a(K), J),
                               (INT, a(K), a(J), None)]),
        # The _NE kinds: their kind's rules with an x-edge or an _NE part.
        Rule(X_NEAR_NE, [between], [(EDGE, a(X), a(K), None), (X_NEAR, a(I), a(K), X),
                                    (X_N_PLUS, a(K), a(J), I)]),
        Rule(X_NEAR_NE, [between], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                    (X_NEAR_PLUS, a(K), a(J), I)]),
        Rule(X_FAR_NE, [between], [(EDGE, a(X), a(K), None), (X_N_PLUS, a(I), a(K), J),
                                   (X_FAR, a(K), a(J), X)]),
        Rule(X_FAR_NE, [between], [(EDGE, a(X), a(K), None), (X_NEAR_PLUS, a(I), a(K), J),
                                   (INT, a(K), a(J), None)]),
        Rule(X_NEAR_PLUS_NE, [], [(X_NEAR_NE, a(I), a(J), X)]),
        Rule(X_NEAR_PLUS_NE, [], [(EDGE, a(X), a(J), None), (X_NEAR, a(I), a(J), X)]),
        Rule(CHAIN_I_NE, [], [(EDGE, a(I), a(J), None), (X_NEAR_PLUS_NE, a(I), a(J), X)]),
        Rule(CHAIN_I_NE, [between], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                     (CHAIN_IP, a(K), a(J), I)]),
        Rule(CHAIN_J_NE, [], [(EDGE, a(I), a(J), None), (X_FAR_NE, a(I), a(J), X)]),
        Rule(CHAIN_J_NE, [between], [(EDGE, a(X), a(K), None), (INT, a(K), a(J), None),
                                     (CHAIN_IP, a(I), a(K), J)]),
        Rule(X_LR_NE, [], [(X_NEAR_NE, a(I), a(J), X)]),
        Rule(X_LR_NE, [], [(X_FAR_NE, a(I), a(J), X)]),
        Rule(X_LR_NE, [between], [(CHAIN_I_NE, a(I), a(K), X), (X_FAR, a(K), a(J), X)]),
        Rule(X_LR_NE, [between], [(CHAIN_I, a(I), a(K), X), (X_FAR_NE, a(K), a(J), X)]),
        Rule(X_LR_NE, [between], [(X_NEAR_PLUS_NE, a(I), a(K), X), (CHAIN_J, a(K), a(J), X)]),
        Rule(X_LR_NE, [between], [(X_NEAR_PLUS, a(I), a(K), X), (CHAIN_J_NE, a(K), a(J), X)]),
        Rule(X_N_EDGE, [], [(EDGE, a(X), a(J), None), (X_N, a(I), a(J), X)]),
        # _COV: x-k covers [i, k); i's edges over k, crossed by x-k, cover k
        # and need the edge i-j (past an X_N) or a covered rest.
        Rule(X_NEAR_COV, [between], [(EDGE, a(X), a(K), None), (X_NEAR, a(I), a(K), X),
                                     (X_N_EDGE, a(K), a(J), I)]),
        Rule(X_NEAR_COV, [between], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                     (X_NEAR_PLUS_COV, a(K), a(J), I)]),
        Rule(X_NEAR_PLUS_COV, [], [(EDGE, a(X), a(J), None), (X_NEAR, a(I), a(J), X)]),
        Rule(X_NEAR_PLUS_COV, [], [(X_NEAR_COV, a(I), a(J), X)]),
    ]
    return rules


RULES = unpruned_rules()
_prune(RULES)
# The first-order rules and the region rules, for the third-order chart.
RULES_WITH_REGIONS = unpruned_rules() + region_rules()
_prune(RULES_WITH_REGIONS)
