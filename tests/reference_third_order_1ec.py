"""The crossing-sensitive third-order factorization of 1-Endpoint-Crossing
trees, defined over the tree, and a pure-Python chart for it: the reference
for the `1ec` structure (issue 38).

Words 1..n, the root 0; heads as in `reference_mst` (heads[k - 1] is word
k's head). A score table T[a, m, channel] has rows 0..n + 1; row PAD = n + 1
stands for a missing grandparent or sibling. Channels as the MH4 paper's 1EC
scorer: GRAND (grandparent -> m), HEAD (head -> m), SIB (sibling -> m) and
CROSSING (head -> m, for arcs of crossing regions).

The factorization. An arc is *crossed* when another arc crosses it. A
*crossing region* is a maximal interval [l, r] covered by the spans of crossed
arcs that overlap in more than a point; the arcs with both ends in a region,
except the arc l-r, are *region arcs* (the crossed arcs and the uncrossed arcs
under a crossed one); the others are *backbone arcs*, uncrossed and not under
a crossed arc. A region's interior words attach inside it, so backbone arcs
form a projective tree in which each region acts as one arc (one of l, r
heads the other through it) or as the gap between two subtrees (both have
heads outside). The score of a tree:

- a region arc h -> m: T[h, m, CROSSING];
- a backbone arc h -> m: T[g, m, GRAND] + T[h, m, HEAD] + T[s, m, SIB],
  g = h's head where h's own arc is a backbone arc, else PAD (h the root, or
  h's head in a region); s = h's nearest child between h and m where that
  child's arc is a backbone arc, else PAD (no such child, or a region arc).

This is the MH4 paper's "scores depending on whether an edge is crossed" made
tree-level: the authors' chart (acl18/ec.pyx) scores some trees by more than
one derivation, with different scores.

The chart (`best`) is Koo & Collins' grand-sibling chart over the backbone,
with a region item REG[l, r, state] where a region joins it: as a pseudo-arc
from its top (l or r) to the other end, or as the junction between the spans
of two siblings. REG comes from the regions' deduction system
(`reference_one_ec_regions`) or from brute force over each interval's region
structures (`region_structures`).
"""
import functools
import itertools
from typing import Dict, List, Sequence, Tuple

import numpy

from test_one_endpoint_crossing import crosses, edges_are_1ec as is_1ec

GRAND, HEAD, SIB, CROSSING = 0, 1, 2, 3
N_CHANNELS = 4
# Region states: which end is the top (has its head outside), or both.
LEFT_TOP, RIGHT_TOP, SEPARATE = 0, 1, 2

Heads = Tuple[int, ...]
Term = Tuple[int, int, int]


def region_arcs(arcs) -> set:
    """The arcs (h, m) that are crossed or under a crossed arc's span."""
    crossed = [a for a in arcs if any(crosses(a, b) for b in arcs)]
    spans = [sorted(a) for a in crossed]
    out = set(crossed)
    for a in arcs:
        lo, hi = sorted(a)
        if any(l <= lo and hi <= r for l, r in spans):
            out.add(a)
    return out


def tree_terms(heads: Sequence[int]) -> List[Term]:
    """The score table entries (a, m, channel) a tree's score sums."""
    n = len(heads)
    pad = n + 1
    head = (None,) + tuple(heads)
    arcs = [(head[m], m) for m in range(1, n + 1)]
    regional = region_arcs(arcs)
    terms = []
    for h, m in arcs:
        if (h, m) in regional:
            terms.append((h, m, CROSSING))
            continue
        g = head[h] if h != 0 and (head[h], h) not in regional else pad
        lo, hi = sorted((h, m))
        between = [c for c in range(lo + 1, hi) if head[c] == h]
        s = pad
        if between:
            nearest = max(between) if m > h else min(between)
            if (h, nearest) not in regional:
                s = nearest
        terms += [(g, m, GRAND), (h, m, HEAD), (s, m, SIB)]
    return terms


def tree_score(T: numpy.ndarray, heads: Sequence[int]) -> float:
    return float(sum(T[t] for t in tree_terms(heads)))


@functools.lru_cache(maxsize=None)
def region_structures(length: int) -> Tuple[Tuple[Tuple[Tuple[int, int], ...], int], ...]:
    """Every region structure over the points 0..length: (arcs, state). The
    interior points have heads inside, 0 and `length` a head inside or none
    (not each other: that arc is a backbone arc), no cycle, 1EC, and every
    interior point strictly under a crossed arc."""
    if length < 3:
        return ()
    interior = range(1, length)
    choices = [[h for h in range(length + 1) if h != w] for w in interior]
    end_choices = [None] + list(interior)
    out = []
    for left, right in itertools.product(end_choices, end_choices):
        for inner in itertools.product(*choices):
            head = {0: left, length: right}
            head.update(zip(interior, inner))
            if _has_cycle(head):
                continue
            arcs = [(h, m) for m, h in head.items() if h is not None]
            if not is_1ec(arcs):
                continue
            crossed = [sorted(a) for a in arcs if any(crosses(a, b) for b in arcs)]
            if not all(any(l < w < r for l, r in crossed) for w in interior):
                continue
            state = SEPARATE if left is None and right is None else (
                LEFT_TOP if left is None else RIGHT_TOP)
            out.append((tuple(arcs), state))
    return tuple(out)


def _has_cycle(head: Dict[int, int]) -> bool:
    for start in head:
        seen, v = set(), start
        while v is not None:
            if v in seen:
                return True
            seen.add(v)
            v = head[v]
    return False


def region_table(T: numpy.ndarray, n: int) -> Dict[Tuple[int, int, int], float]:
    """REG[l, r, state]: the best region structure over [l, r] by brute force
    (for l = 0, the root, those where it has no head)."""
    table: Dict[Tuple[int, int, int], float] = {}
    for length in range(3, n + 1):
        for arcs, state in region_structures(length):
            for l in range(0, n + 1 - length):
                if l == 0 and any(m == 0 for _, m in arcs):
                    continue        # the root has no head
                key = (l, l + length, state)
                value = sum(T[l + h, l + m, CROSSING] for h, m in arcs)
                if value > table.get(key, float("-inf")):
                    table[key] = value
    return table


def best(T: numpy.ndarray, n: int, regions: str = "rules") -> float:
    """The best score of a 1EC tree over words 1..n (any number of root arcs),
    with the region items from the deduction system of
    `reference_one_ec_regions` ("rules") or from brute force ("brute")."""
    pad = n + 1
    neg = float("-inf")
    if regions == "rules":
        from reference_one_ec_regions import region_table as rules_region_table
        REG = rules_region_table(T, n, CROSSING)
    else:
        REG = region_table(T, n)

    def part(g, h, m, s):
        return T[g, m, GRAND] + T[h, m, HEAD] + T[s, m, SIB]

    def region(top, other):
        """A region between top and other with `top` on top of both."""
        lo, hi = sorted((top, other))
        return REG.get((lo, hi, LEFT_TOP if top == lo else RIGHT_TOP), neg)

    def gap(a, b):
        lo, hi = sorted((a, b))
        return REG.get((lo, hi, SEPARATE), neg)

    @functools.lru_cache(maxsize=None)
    def C(g, h, e):
        """Complete: all of h..e under h; g is h's grandparent context."""
        if h == e:
            return 0.0
        step = 1 if e > h else -1
        # h's outermost child here a backbone arc,
        out = max(I(g, h, m) + C(h, m, e) for m in range(h + step, e + step, step))
        # or none: a region from h holds r, whose own span reaches e.
        for r in range(h + step, e + step, step):
            out = max(out, region(h, r) + C(pad, r, e))
        return out

    @functools.lru_cache(maxsize=None)
    def I(g, h, m):
        """The backbone arc h -> m and everything strictly between h and m."""
        step = 1 if m > h else -1
        # m is h's innermost backbone child: before it, nothing of h's or a
        # region from h that holds r (r's span reaching k); then m's span.
        out = joined(h, m, h)
        for r in range(h + step, m, step):
            for k in range(r, m, step):
                out = max(out, region(h, r) + C(pad, r, k) + joined(h, m, k))
        out += part(g, h, m, pad)
        # or s is m's inner sibling.
        for s in range(h + step, m, step):
            out = max(out, I(g, h, s) + S(h, s, m) + part(g, h, m, s))
        return out

    @functools.lru_cache(maxsize=None)
    def S(h, s, m):
        """Adjacent backbone siblings s (inner) and m of h: s's span towards
        m up to k, then m's span."""
        step = 1 if m > s else -1
        return max(C(h, s, k) + joined(h, m, k) for k in range(s, m, step))

    @functools.lru_cache(maxsize=None)
    def joined(h, m, k):
        """m's span (m a child of h) reaching k's neighbour towards m, or a
        region gap from k to k2 and m's span reaching k2."""
        step = 1 if m > k else -1
        out = C(h, m, k + step)
        for k2 in range(k + 2 * step, m + step, step):
            out = max(out, gap(k, k2) + C(h, m, k2))
        return out

    return C(pad, 0, n)


def one_root_penalty(T: numpy.ndarray, penalty: float) -> numpy.ndarray:
    """T with `penalty` taken from every root arc (the HEAD and CROSSING
    channels of row 0): the best tree then has one root arc."""
    out = T.copy()
    out[0, :, HEAD] -= penalty
    out[0, :, CROSSING] -= penalty
    return out
