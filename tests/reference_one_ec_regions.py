"""The crossing regions of the third-order 1EC chart as a deduction system
over the first-order 1EC chart's items (`spacy_nonmono/graph/ec_rules.py`),
and a pure-Python interpreter of both (issue 38).

A region item REG [i, j] is an INT0 [i, j] whose every inner point is
strictly under a crossed edge (`reference_third_order_1ec`). INT0's rules
that leave a point under no edge (i with no neighbour inside, i's farthest
neighbour k uncrossed, Q [i, p] + INT [p, j]) cannot build one, so a region
is INT0's other rules with i's farthest neighbour k crossed, restricted:

- ``_NE``: at least one x-edge (the edge i-k of C1 and Q crossed);
- ``X_N_EDGE [i, j; x]``: X_N_PLUS with its edge x-j (an X_N item leaves the
  point past its farthest x-target under no crossed edge otherwise);
- ``_COV`` (x left of [i, j]): every point of [i, j) strictly under a
  crossed edge, the x-edges counted as crossed (where these items are read,
  an edge of the rule crosses all their x-edges).

Scores are first-order here (every edge of a region reads the CROSSING
channel), so a structure with several derivations scores the same in all.
"""
import functools
from typing import Dict, List, Tuple

import numpy

from spacy_nonmono.graph import ec_rules as R
from spacy_nonmono.graph.ec_rules import (EDGE, I, INT, INT0, J, K, P, X, X_FAR, X_LR, X_N,
                                          X_N_PLUS, X_NEAR, X_NEAR_PLUS, CHAIN_I, CHAIN_IP,
                                          CHAIN_J, Q)

(REG, Q_NE, X_NEAR_NE, X_FAR_NE, X_NEAR_PLUS_NE, CHAIN_I_NE, CHAIN_J_NE, X_LR_NE, X_N_EDGE,
 X_NEAR_COV, X_NEAR_PLUS_COV) = range(len(R.KIND_NAMES), len(R.KIND_NAMES) + 11)
REGION_PAIR_KINDS = R.PAIR_KINDS + (REG, Q_NE)


class RegionRule(R.Rule):
    pair_kinds = REGION_PAIR_KINDS


def region_rules() -> List[R.Rule]:
    a = lambda sym, off=0: (sym, off)       # noqa: E731
    between = (I, 1, J, -1)
    return [RegionRule(kind, splits, parts) for kind, splits, parts in [
        # REG [i, j]: C1 (p < j and p = j), Q, and the two forms of C2.
        (REG, [between, (K, 1, J, -1)],
         [(EDGE, a(I), a(K), None), (X_NEAR_NE, a(I), a(K), P), (INT, a(K), a(P), None),
          (X_NEAR_PLUS_COV, a(P), a(J), K)]),
        (REG, [between], [(EDGE, a(I), a(K), None), (X_NEAR_NE, a(I), a(K), J),
                          (INT, a(K), a(J), None)]),
        (REG, [], [(Q_NE, a(I), a(J), None)]),
        (REG, [between, (I, 1, K, -1)],
         [(EDGE, a(I), a(K), None), (INT, a(I), a(P), None), (X_NEAR, a(P), a(K), I),
          (X_N_EDGE, a(K), a(J), P)]),
        (REG, [between, (I, 1, K, -1)],
         [(EDGE, a(I), a(K), None), (X_NEAR, a(I), a(P), K), (INT, a(P), a(K), None),
          (X_NEAR_PLUS_COV, a(K), a(J), P)]),
        (Q_NE, [between], [(EDGE, a(I), a(K), None), (X_LR_NE, a(I), a(K), J),
                           (INT, a(K), a(J), None)]),
        # The _NE kinds: their kind's rules with an x-edge or an _NE part.
        (X_NEAR_NE, [between], [(EDGE, a(X), a(K), None), (X_NEAR, a(I), a(K), X),
                                (X_N_PLUS, a(K), a(J), I)]),
        (X_NEAR_NE, [between], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                (X_NEAR_PLUS, a(K), a(J), I)]),
        (X_FAR_NE, [between], [(EDGE, a(X), a(K), None), (X_N_PLUS, a(I), a(K), J),
                               (X_FAR, a(K), a(J), X)]),
        (X_FAR_NE, [between], [(EDGE, a(X), a(K), None), (X_NEAR_PLUS, a(I), a(K), J),
                               (INT, a(K), a(J), None)]),
        (X_NEAR_PLUS_NE, [], [(X_NEAR_NE, a(I), a(J), X)]),
        (X_NEAR_PLUS_NE, [], [(EDGE, a(X), a(J), None), (X_NEAR, a(I), a(J), X)]),
        (CHAIN_I_NE, [], [(EDGE, a(I), a(J), None), (X_NEAR_PLUS_NE, a(I), a(J), X)]),
        (CHAIN_I_NE, [between], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                 (CHAIN_IP, a(K), a(J), I)]),
        (CHAIN_J_NE, [], [(EDGE, a(I), a(J), None), (X_FAR_NE, a(I), a(J), X)]),
        (CHAIN_J_NE, [between], [(EDGE, a(X), a(K), None), (INT, a(K), a(J), None),
                                 (CHAIN_IP, a(I), a(K), J)]),
        (X_LR_NE, [], [(X_NEAR_NE, a(I), a(J), X)]),
        (X_LR_NE, [], [(X_FAR_NE, a(I), a(J), X)]),
        (X_LR_NE, [between], [(CHAIN_I_NE, a(I), a(K), X), (X_FAR, a(K), a(J), X)]),
        (X_LR_NE, [between], [(CHAIN_I, a(I), a(K), X), (X_FAR_NE, a(K), a(J), X)]),
        (X_LR_NE, [between], [(X_NEAR_PLUS_NE, a(I), a(K), X), (CHAIN_J, a(K), a(J), X)]),
        (X_LR_NE, [between], [(X_NEAR_PLUS, a(I), a(K), X), (CHAIN_J_NE, a(K), a(J), X)]),
        (X_N_EDGE, [], [(EDGE, a(X), a(J), None), (X_N, a(I), a(J), X)]),
        # _COV: x-k covers [i, k); i's edges over k, crossed by x-k, cover k
        # and need the edge i-j (past an X_N) or a covered rest.
        (X_NEAR_COV, [between], [(EDGE, a(X), a(K), None), (X_NEAR, a(I), a(K), X),
                                 (X_N_EDGE, a(K), a(J), I)]),
        (X_NEAR_COV, [between], [(EDGE, a(X), a(K), None), (INT, a(I), a(K), None),
                                 (X_NEAR_PLUS_COV, a(K), a(J), I)]),
        (X_NEAR_PLUS_COV, [], [(EDGE, a(X), a(J), None), (X_NEAR, a(I), a(J), X)]),
        (X_NEAR_PLUS_COV, [], [(X_NEAR_COV, a(I), a(J), X)]),
    ]]


REGION_RULES = region_rules()
_RULES_BY_KIND: Dict[int, List[R.Rule]] = {}
for _rule in R.unpruned_rules() + REGION_RULES:
    _RULES_BY_KIND.setdefault(_rule.kind, []).append(_rule)

NEG = float("-inf")


class Items:
    """Every item's best score per connectivity state, by interpreting the
    rules over positions 0..n with first-order arc scores arc[head, dep]
    (the root 0 has no head)."""

    def __init__(self, arc: numpy.ndarray, n: int):
        self.arc = arc
        self.n = n
        self.value = functools.lru_cache(maxsize=None)(self._value)

    def edge(self, a: int, b: int) -> List[float]:
        out = [NEG] * R.N_PAIR_STATES
        out[R.LEFT_TOP] = float(self.arc[a, b]) if b > 0 else NEG
        out[R.RIGHT_TOP] = float(self.arc[b, a]) if a > 0 else NEG
        return out

    def _value(self, kind: int, a: int, b: int, x=None) -> Tuple[float, ...]:
        pair = kind in REGION_PAIR_KINDS
        out = [NEG] * (R.N_PAIR_STATES if pair else R.N_TRIPLE_STATES)
        if a >= b:
            return tuple(out)
        if kind == INT0 and b == a + 1:
            out[R.SEPARATE] = 0.0
        side = int(not pair and x > b)
        sign = -1 if side else 1            # oriented positions: x left of [i, j]
        symbols = {I: sign * (b if side else a), J: sign * (a if side else b)}
        if not pair:
            symbols[X] = sign * x
        for rule in _RULES_BY_KIND.get(kind, ()):
            for split in self._splits(rule, dict(symbols)):
                values = []
                for part_kind, (sa, oa), (sb, ob), xs in rule.parts:
                    lo, hi = sorted((sign * (split[sa] + oa), sign * (split[sb] + ob)))
                    if lo < 0 or hi > self.n:
                        break
                    if part_kind == EDGE:
                        values.append(self.edge(lo, hi))
                    else:
                        values.append(self.value(part_kind, lo, hi,
                                                 None if xs is None else sign * split[xs]))
                else:
                    for row in rule.combos[side]:
                        total = sum(v[s] for v, s in zip(values, row))
                        if total > out[row[-1]]:
                            out[row[-1]] = total
        return tuple(out)

    @staticmethod
    def _splits(rule: R.Rule, symbols: Dict[int, int]):
        """Every assignment of the rule's split points (oriented positions)."""
        def assign(s, sym):
            if s == len(rule.splits):
                yield dict(sym)
                return
            lo_sym, lo_off, hi_sym, hi_off = rule.splits[s]
            for v in range(sym[lo_sym] + lo_off, sym[hi_sym] + hi_off + 1):
                sym[(K, P)[s]] = v
                yield from assign(s + 1, sym)
            sym.pop((K, P)[s], None)
        yield from assign(0, symbols)


def region_table(T: numpy.ndarray, n: int, channel: int) -> Dict[Tuple[int, int, int], float]:
    """REG [l, r] per state (LEFT_TOP, RIGHT_TOP, SEPARATE of
    reference_third_order_1ec) from the interpreter, over T[:, :, channel]."""
    from reference_third_order_1ec import LEFT_TOP, RIGHT_TOP, SEPARATE
    items = Items(T[:, :, channel], n)
    states = {LEFT_TOP: R.LEFT_TOP, RIGHT_TOP: R.RIGHT_TOP, SEPARATE: R.SEPARATE}
    table = {}
    for l in range(n + 1):
        for r in range(l + 3, n + 1):
            v = items.value(REG, l, r)
            for state, index in states.items():
                if v[index] > NEG:
                    table[l, r, state] = v[index]
    return table
