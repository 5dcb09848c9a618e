"""Pure-Python references for spacy_nonmono.graph.mst.

Heads are 1-based tuples: heads[k] is the head of word k+1, 0 the root node.
Scores are indexed [head, dependent] over nodes 0..n.

- ``all_trees(n)``: every head assignment that is acyclic (each word reaches
  the root node), found by enumerating all n^n assignments; the exact
  reference, for n <= 6.
- ``brute_force(...)``: the best objective (score + cost_weight * cost) over
  those trees, with one root arc or any number, and the trees reaching it.
- ``cle_one_root(...)``: textbook recursive Chu-Liu-Edmonds (contract one
  cycle, recurse, expand), O(n^3) per call, made single-rooted by trying each
  root word; an independent check for sentences too long to enumerate.
"""
import functools
import itertools
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

Heads = Tuple[int, ...]


def is_tree(heads: Sequence[int]) -> bool:
    """Every word's chain of heads reaches node 0 without repeating a word."""
    n = len(heads)
    for k in range(1, n + 1):
        seen = set()
        v = k
        while v != 0:
            if v in seen or not 0 <= heads[v - 1] <= n or heads[v - 1] == v:
                return False
            seen.add(v)
            v = heads[v - 1]
    return True


def n_roots(heads: Sequence[int]) -> int:
    return sum(1 for h in heads if h == 0)


@functools.lru_cache(maxsize=None)
def all_trees(n: int) -> Tuple[Heads, ...]:
    """All trees over words 1..n (any number of root arcs), in
    lexicographic order of the head tuples."""
    choices = [[h for h in range(n + 1) if h != k] for k in range(1, n + 1)]
    return tuple(heads for heads in itertools.product(*choices) if is_tree(heads))


def tree_score(scores, heads: Sequence[int]) -> float:
    return float(sum(float(scores[h, k + 1]) for k, h in enumerate(heads)))


def tree_cost(heads: Sequence[int], gold_heads: Optional[Sequence[int]]) -> int:
    if gold_heads is None:
        return 0
    return sum(1 for h, g in zip(heads, gold_heads) if h != g)


def objective(scores, heads, gold_heads=None, cost_weight=0.0) -> float:
    return tree_score(scores, heads) + cost_weight * tree_cost(heads, gold_heads)


def brute_force(scores, gold_heads=None, cost_weight=0.0, single_root=True):
    """(best objective, the trees reaching it) over all trees of the
    sentence (with exactly one root arc unless single_root is False)."""
    n = scores.shape[0] - 1
    trees = _tree_array(n, single_root)
    words = numpy.arange(1, n + 1)
    values = numpy.asarray(scores, dtype=numpy.float64)[trees, words].sum(axis=1)
    if gold_heads is not None:
        values = values + cost_weight * (trees != numpy.asarray(gold_heads)).sum(axis=1)
    best = values.max()
    return float(best), [tuple(int(h) for h in t) for t in trees[values == best]]


@functools.lru_cache(maxsize=None)
def _tree_array(n: int, single_root: bool) -> numpy.ndarray:
    """all_trees(n) (those with one root arc if single_root) as a (trees, n) array."""
    return numpy.array([t for t in all_trees(n) if not single_root or n_roots(t) == 1],
                       dtype=numpy.int64).reshape(-1, n)


def chu_liu_edmonds(weights: Dict[Tuple[int, int], float], nodes: List[int],
                    root: int) -> Dict[int, int]:
    """Maximum spanning arborescence rooted at `root` over `nodes`, from arc
    weights {(head, dependent): weight}; returns {dependent: head}. Assumes
    one exists. Textbook recursion: take each node's best incoming arc; if
    they form a cycle, contract it into a new node, solve, expand."""
    best = {}            # dependent -> (weight, head) of its best incoming arc
    for (h, d), w in weights.items():
        if d != root and (d not in best or (w, -h) > (best[d][0], -best[d][1])):
            best[d] = (w, h)
    best_in = {d: h for d, (w, h) in best.items()}
    cycle = _find_cycle(best_in)
    if cycle is None:
        return best_in
    in_cycle = set(cycle)
    c = max(nodes) + 1
    new_weights = {}
    origin = {}          # new arc -> the original arc it stands for
    for (h, d), w in weights.items():
        if h in in_cycle and d in in_cycle:
            continue
        if d in in_cycle:
            arc, w = (h, c), w - weights[(best_in[d], d)]
        elif h in in_cycle:
            arc = (c, d)
        else:
            arc = (h, d)
        if arc not in new_weights or w > new_weights[arc]:
            new_weights[arc] = w
            origin[arc] = (h, d)
    sub = chu_liu_edmonds(new_weights, [v for v in nodes if v not in in_cycle] + [c], root)
    heads = {}
    for d, h in sub.items():
        oh, od = origin[(h, d)]
        heads[od] = oh
    for v in cycle:
        if v not in heads:
            heads[v] = best_in[v]
    return heads


def _find_cycle(best_in: Dict[int, int]) -> Optional[List[int]]:
    for start in best_in:
        seen = []
        v = start
        while v in best_in and v not in seen:
            seen.append(v)
            v = best_in[v]
        if v in seen:
            return seen[seen.index(v):]
    return None


def cle_one_root(scores, gold_heads=None, cost_weight=0.0) -> Tuple[float, Heads]:
    """(best objective, a tree reaching it) with exactly one root arc: the
    best of n Chu-Liu-Edmonds searches, each allowing one root arc."""
    n = scores.shape[0] - 1
    base = {}
    for h in range(n + 1):
        for d in range(1, n + 1):
            if h != d:
                w = float(scores[h, d])
                if gold_heads is not None and gold_heads[d - 1] != h:
                    w += cost_weight
                base[(h, d)] = w
    best = None
    for r in range(1, n + 1):
        weights = {(h, d): w for (h, d), w in base.items() if h != 0 or d == r}
        found = chu_liu_edmonds(weights, list(range(n + 1)), 0)
        heads = tuple(found[k] for k in range(1, n + 1))
        value = objective(scores, heads, gold_heads, cost_weight)
        if best is None or value > best[0]:
            best = (value, heads)
    return best


def random_scores(rng: numpy.random.Generator, n: int, kind: str = "uniform"):
    """A (n+1, n+1) float32 score matrix of a few shapes that stress the
    decoder: uniform, integer ties, root-heavy (every word prefers the root)."""
    if kind == "uniform":
        scores = rng.uniform(-5, 5, (n + 1, n + 1))
    elif kind == "ties":
        scores = rng.integers(0, 3, (n + 1, n + 1))
    elif kind == "root_heavy":
        scores = rng.uniform(-1, 1, (n + 1, n + 1))
        scores[0, :] += 10
    elif kind == "constant":
        scores = numpy.ones((n + 1, n + 1))
    else:
        raise ValueError(kind)
    return scores.astype(numpy.float32)
