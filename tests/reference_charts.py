"""Pure-Python references for the MH3/MH4 charts (spacy_nonmono.graph.charts).

Slow and literal, for sentences of a few words:

- ``computations(n, k)``: every computation (transition sequence) that the
  MH_k deduction system (Gomez-Rodriguez, Shi & Lee 2018, Fig. 2 and section
  3.2) covers, enumerated item by item straight from the deduction rules.
  This is what the chart searches; the MH4 *transition system* covers more
  (see ``PAPER_EXAMPLE``).
- ``brute_force(sh, red, k, gold, cost_weight)``: the best score over those
  computations (score + cost), and the trees they build.
- ``arc_hybrid_search(...)``: exhaustive (memoized) search over the arc-hybrid
  transition system (sh, la, ra) -- MH3's transition reading, an independent
  check of the MH3 chart.
- ``run_events(events, n)``: a stack/buffer simulator of the MH4 transitions
  that checks that a transition sequence is valid and returns the arcs.

Conventions (the chart's): positions 0..n+1, 0 the root node, n+1 the
end-of-buffer sentinel (never a head). An event is (kind, s1, s0, b0) with
kind -1 for sh (s1 = -1) and the reduce index t otherwise:
0 la (b0 -> s0), 1 ra (s1 -> s0), 2 la' (s0 -> s1), 3 ra' (s2 -> s1),
4 la2 (b0 -> s1), 5 ra2 (s2 -> s0). The forced sh(0) is not listed: a
computation starts with 0 on the stack and 1 at the front of the buffer.
Score of an event: sh -> sh_scores[s0, b0]; reduce -> red[t, s1, s0, b0]
("hybrid", red.ndim == 4) or red[t, s0, b0] ("two", red.ndim == 3); a reduce
adding head -> dep also adds cost_weight * (gold[dep] != head).
"""
import functools
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy

SH = -1
LA, RA, LA1, RA1, LA2, RA2 = range(6)     # la, ra, la', ra', la2, ra2
NAMES = {SH: "sh", LA: "la", RA: "ra", LA1: "la'", RA1: "ra'", LA2: "la2", RA2: "ra2"}

# Link steps of Fig. 2 as transitions (section 3.2). Key: (item length m,
# position j of the dropped interior head, position i of its new head),
# 1-based as in the paper; value: the transition.
LINKS = {
    (3, 2, 3): LA, (3, 2, 1): RA,
    (4, 3, 4): LA, (4, 3, 2): RA, (4, 3, 1): RA2,
    (4, 2, 3): LA1, (4, 2, 1): RA1, (4, 2, 4): LA2,
}

# Section 3.2's example: a tree over words 1..5 that the MH4 transition
# system builds (with the computation below) but no MH4 deduction covers.
# Heads of words 1..5 (0 = root): arcs 0->2, 2->4, 4->5, 5->3, 3->1.
PAPER_EXAMPLE_HEADS = (3, 0, 5, 2, 4)
# sh(0); sh(1); sh(2); la2(3->1); sh(3); sh(4); la2(5->3); sh(5); ra(4->5);
# ra(2->4); ra(0->2) -- as events, sh(0) left out.
PAPER_EXAMPLE_EVENTS = (
    (SH, -1, 0, 1), (SH, -1, 1, 2), (LA2, 1, 2, 3), (SH, -1, 2, 3), (SH, -1, 3, 4),
    (LA2, 3, 4, 5), (SH, -1, 4, 5), (RA, 4, 5, 6), (RA, 2, 4, 6), (RA, 0, 2, 6),
)

Event = Tuple[int, int, int, int]
Computation = Tuple[Tuple[Event, Tuple[int, int]], ...]   # (event, (head, dep)); (-1, -1) for sh


@functools.lru_cache(maxsize=None)
def computations(n: int, k: int, single_root: bool = False) -> FrozenSet[Computation]:
    """The computations of the goal item [0, n+1] of MH_k on n words.

    comps(item) is the set of transition sequences that the item stands for
    (without the item's first sh(h1), which the context scores): built from
    the rules of Fig. 2 that can conclude the item --
      Axiom/Shift  [h, h+1]: the empty sequence;
      Combine      [h1..hj] + [hj..hm]: left, sh(s0=h_{j-1}, b0=h_j), right;
      Link         [h1..y..hm] (one more head y, dropped as a dependent of
                   another head of that item): its sequences + the reduce.
    Link never makes n+1 a head (nor 0 a dependent: 0 is always h1).
    single_root: arcs from node 0 only by the last link [0, x, n+1] -> [0, n+1]
    (the computations whose tree has one word attached to 0)."""
    last = n + 1

    @functools.lru_cache(maxsize=None)
    def comps(item: Tuple[int, ...]) -> FrozenSet[Computation]:
        m = len(item)
        found = set()
        if m == 2 and item[1] == item[0] + 1:
            found.add(())
        for j in range(1, m - 1):                       # Combine at shared head item[j]
            left, right = item[: j + 1], item[j:]
            shift = ((SH, -1, item[j - 1], item[j]), (-1, -1))
            for lc in comps(left):
                for rc in comps(right):
                    found.add(lc + (shift,) + rc)
        if m < k:                                        # Link from an item with one head more
            for y in range(item[0] + 1, item[-1]):
                if y in item:
                    continue
                big = tuple(sorted(item + (y,)))
                j = big.index(y) + 1
                for i in range(1, len(big) + 1):
                    t = LINKS.get((len(big), j, i))
                    head = big[i - 1]
                    if t is None or head == last:
                        continue
                    if single_root and head == 0 and big != (0, y, last):
                        continue
                    s1, s0, b0 = big[-3], big[-2], big[-1]
                    event = ((t, s1, s0, b0), (head, y))
                    for c in comps(big):
                        found.add(c + (event,))
        return frozenset(found)

    return comps((0, last))


def tree_of(computation: Computation, n: int) -> Tuple[int, ...]:
    heads = [-1] * n
    for _, (head, dep) in computation:
        if dep >= 0:
            assert heads[dep - 1] == -1
            heads[dep - 1] = head
    return tuple(heads)


def reachable_trees(n: int, k: int, single_root: bool = False):
    return {tree_of(c, n) for c in computations(n, k, single_root)}


def event_score(event: Event, sh_scores, red) -> float:
    kind, s1, s0, b0 = event
    if kind == SH:
        return float(sh_scores[s0, b0])
    return float(red[kind, s1, s0, b0] if red.ndim == 4 else red[kind, s0, b0])


def brute_force(sh_scores, red, k: int, gold: Optional[Sequence[int]] = None,
                cost_weight: float = 0.0, single_root: bool = False):
    """(best score + cost, best model score, best cost, set of best trees)
    over every computation of MH_k, each scored event by event."""
    n = sh_scores.shape[0] - 2
    best, best_trees, best_parts = None, set(), None
    for comp in computations(n, k, single_root):
        score = sum(event_score(e, sh_scores, red) for e, _ in comp)
        cost = 0.0
        if gold is not None:
            cost = cost_weight * sum(gold[dep - 1] != head for _, (head, dep) in comp if dep >= 0)
        total = score + cost
        if best is None or total > best + 1e-9:
            best, best_trees, best_parts = total, {tree_of(comp, n)}, (score, cost)
        elif abs(total - best) <= 1e-9:
            best_trees.add(tree_of(comp, n))
    return best, best_parts[0], best_parts[1], best_trees


def arc_hybrid_search(sh_scores, red, gold=None, cost_weight: float = 0.0):
    """Best score + cost over all arc-hybrid computations (sh, la: b0 -> s0,
    ra: s1 -> s0), from stack [0] and buffer 1..n+1 to stack [0] and buffer
    [n+1]; la never with the sentinel n+1 as head. Memoized on (stack, b0),
    which is all the future depends on."""
    n = sh_scores.shape[0] - 2
    last = n + 1

    def cost(head, dep):
        return cost_weight * (gold[dep - 1] != head) if gold is not None else 0.0

    @functools.lru_cache(maxsize=None)
    def best(stack: Tuple[int, ...], b0: int) -> float:
        if stack == (0,) and b0 == last:
            return 0.0
        options = []
        if b0 <= n:
            options.append(float(sh_scores[stack[-1], b0]) + best(stack + (b0,), b0 + 1))
        if len(stack) >= 2:
            s1, s0 = stack[-2], stack[-1]
            if b0 != last:
                options.append(event_score((LA, s1, s0, b0), sh_scores, red) + cost(b0, s0)
                               + best(stack[:-1], b0))
            options.append(event_score((RA, s1, s0, b0), sh_scores, red) + cost(s1, s0)
                           + best(stack[:-1], b0))
        return max(options) if options else float("-inf")

    return best((0,), 1)


class InvalidTransition(AssertionError):
    pass


def run_events(events, n: int, transitions=range(6)) -> List[int]:
    """Replays events on a stack/buffer machine (stack [0], buffer 1..n+1):
    checks that each event's (s1, s0, b0) is the configuration's, that the
    transition is one of `transitions` and valid there, and that the run
    ends in the final configuration (stack [0], buffer [n+1]). Returns the
    heads of words 1..n (-1 where none)."""
    last = n + 1
    stack, b0 = [0], 1
    heads = [-1] * (n + 2)

    def check(condition, what):
        if not condition:
            raise InvalidTransition(f"{what} at {NAMES.get(kind, kind)} {tuple(event)}; "
                                    f"stack {stack}, b0 {b0}")

    for event in events:
        kind, s1, s0, b0_event = (int(x) for x in event)
        check(s0 == stack[-1] and b0_event == b0, "configuration mismatch")
        if kind == SH:
            check(s1 == -1 and b0 <= n, "bad sh")
            stack.append(b0)
            b0 += 1
            continue
        check(kind in transitions, "transition not in the system")
        check(len(stack) >= 2 and s1 == stack[-2], "s1 mismatch")
        s2 = stack[-3] if len(stack) >= 3 else None
        if kind == LA:
            head, dep = b0, stack[-1]
        elif kind == RA:
            head, dep = stack[-2], stack[-1]
        elif kind == LA1:
            head, dep = stack[-1], stack[-2]
        elif kind == RA1:
            check(s2 is not None, "ra' needs s2")
            head, dep = s2, stack[-2]
        elif kind == LA2:
            head, dep = b0, stack[-2]
        elif kind == RA2:
            check(s2 is not None, "ra2 needs s2")
            head, dep = s2, stack[-1]
        else:
            check(False, "unknown transition")
        check(head != last, "the sentinel as a head")
        check(dep != 0, "node 0 as a dependent")
        check(heads[dep] == -1, "second head")
        heads[dep] = head
        stack.remove(dep)
    check(stack == [0] and b0 == last, "not final")
    return heads[1 : n + 1]


def replay_score(events, sh_scores, red) -> float:
    return sum(event_score(tuple(int(x) for x in e), sh_scores, red) for e in events)


def all_head_arrays(n: int):
    """Every head array over n words (heads 0..n, no self-loops) that is a
    tree rooted at 0 (possibly several words attached to 0)."""
    import itertools

    for heads in itertools.product(range(n + 1), repeat=n):
        if any(h == d + 1 for d, h in enumerate(heads)):
            continue
        if is_tree(heads):
            yield heads


def is_tree(heads: Sequence[int]) -> bool:
    n = len(heads)
    for d in range(1, n + 1):
        seen, v = set(), d
        while v != 0:
            if v in seen or not 0 <= heads[v - 1] <= n:
                return False
            seen.add(v)
            v = heads[v - 1]
    return True


@functools.lru_cache(maxsize=None)
def computation_arrays(n: int, k: int, single_root: bool = False):
    """`computations` as arrays, for sentences where the set of tuples would
    not fit (MH4 has 2,888,960 computations on 7 words): the same recursion
    over items and rules, each item's computations as rows of event codes
    (kept unique) and rows of heads. Returns (codes, heads): codes int16
    or int32 (C, 2n), event codes in order (see `event_code`); heads int8 (C, n).
    Checked equal to `computations` in the tests."""
    N, last = n + 2, n + 1
    dtype = numpy.int16 if event_code((RA2, n + 1, n + 1, n + 1), N) < 2**15 else numpy.int32

    def unique(codes, heads):
        # Rows as opaque byte strings: numpy's unique sorts those far faster
        # than with axis=0.
        codes = numpy.ascontiguousarray(codes)
        if codes.shape[1] == 0:
            return codes[:1], heads[:1]
        rows = codes.view(numpy.dtype((numpy.void, codes.itemsize * codes.shape[1]))).ravel()
        _, index = numpy.unique(rows, return_index=True)
        return codes[index], heads[index]

    @functools.lru_cache(maxsize=None)
    def comps(item):
        m = len(item)
        parts = []
        if m == 2 and item[1] == item[0] + 1:
            parts.append((numpy.zeros((1, 0), dtype), numpy.full((1, n), -1, numpy.int8)))
        for j in range(1, m - 1):
            lcodes, lheads = comps(item[: j + 1])
            rcodes, rheads = comps(item[j:])
            a, b = len(lcodes), len(rcodes)
            shift = numpy.full((a * b, 1), event_code((SH, -1, item[j - 1], item[j]), N), dtype)
            codes = numpy.hstack([numpy.repeat(lcodes, b, axis=0), shift,
                                  numpy.tile(rcodes, (a, 1))])
            heads = numpy.maximum(numpy.repeat(lheads, b, axis=0), numpy.tile(rheads, (a, 1)))
            parts.append((codes, heads))
        if m < k:
            for y in range(item[0] + 1, item[-1]):
                if y in item:
                    continue
                big = tuple(sorted(item + (y,)))
                j = big.index(y) + 1
                bcodes, bheads = comps(big)
                for i in range(1, len(big) + 1):
                    t = LINKS.get((len(big), j, i))
                    head = big[i - 1]
                    if t is None or head == last:
                        continue
                    if single_root and head == 0 and big != (0, y, last):
                        continue
                    column = numpy.full((len(bcodes), 1),
                                        event_code((t, big[-3], big[-2], big[-1]), N), dtype)
                    heads = bheads.copy()
                    heads[:, y - 1] = head
                    parts.append((numpy.hstack([bcodes, column]), heads))
        return unique(numpy.vstack([c for c, _ in parts]), numpy.vstack([h for _, h in parts]))

    return comps((0, last))


def event_code(event: Event, N: int) -> int:
    """An event as a flat index into score_vector's vector."""
    kind, s1, s0, b0 = event
    if kind == SH:
        return s0 * N + b0
    return N * N + ((kind * N + s1) * N + s0) * N + b0


def score_vector(sh_scores, red) -> numpy.ndarray:
    """sh scores then hybrid reduce scores (a "two" table broadcast over s1),
    flat, in float64: the table event codes index."""
    N = sh_scores.shape[0]
    if red.ndim == 3:
        red = numpy.broadcast_to(red[:, None, :, :], (red.shape[0], N, N, N))
    return numpy.concatenate([numpy.asarray(sh_scores, numpy.float64).ravel(),
                              numpy.asarray(red, numpy.float64).ravel()])


def brute_force_arrays(sh_scores, red, k: int, gold=None, cost_weight: float = 0.0,
                       single_root: bool = False, keep=None):
    """`brute_force` on computation_arrays: (best total, its model score, its
    cost, set of best trees). keep: optional bool (n+2, n+2) [head, dep]:
    only the computations whose arcs are all kept (None if there is none)."""
    n = sh_scores.shape[0] - 2
    codes, heads = computation_arrays(n, k, single_root)
    if keep is not None:
        kept = numpy.asarray(keep, bool)[heads.astype(numpy.int64), numpy.arange(1, n + 1)].all(axis=1)
        if not kept.any():
            return None
        codes, heads = codes[kept], heads[kept]
    vector = score_vector(sh_scores, red)
    scores = numpy.zeros(len(codes))
    for column in codes.T:          # in event order, one column at a time (memory)
        scores += vector[column]
    costs = numpy.zeros(len(codes))
    if gold is not None:
        costs = cost_weight * (heads != numpy.asarray(gold)[None, :]).sum(axis=1)
    totals = scores + costs
    best = totals.max()
    winners = numpy.flatnonzero(totals >= best - 1e-9)
    first = winners[0]
    return (float(best), float(scores[first]), float(costs[first]),
            {tuple(int(h) for h in heads[w]) for w in winners})
