"""A pure-Python interpreter of the 1EC deduction systems of
`spacy_nonmono/graph/ec_rules.py`: the first-order rules and the region
rules of the third-order chart (issue 38), item by item, memoised. The
reference the regions' rules are checked with (against brute force over
every region structure), and the region items of the pure-Python
third-order chart (`reference_third_order_1ec`)."""
import functools
from typing import Dict, List, Tuple

import numpy

from spacy_nonmono.graph import ec_rules as R
from spacy_nonmono.graph.ec_rules import EDGE, I, INT0, J, K, P, REG, X

_RULES_BY_KIND: Dict[int, List[R.Rule]] = {}
for _rule in R.unpruned_rules() + R.region_rules():
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
        pair = kind in R.PAIR_KINDS
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
