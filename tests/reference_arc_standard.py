"""Pure-Python reference for arc-standard (shift-reduce) parsing and its
optimal step, after Nederhof (2019), "Calculating the Optimal Step in
Shift-Reduce Dependency Parsing: From Cubic to Linear Time".

Independent of the Cython code in ``spacy_nonmono.graph.split_grammars`` and
``spacy_nonmono.systems.arc_standard``: everything here is exhaustive search
over computations (or, for projectivization, enumeration of trees), with no
grammar and no tabular algorithm.

Conventions (those of the package API):

- ``gold_heads[k-1]`` is the gold head of word k (0 = the artificial root),
  words 1..n;
- a configuration is a stack (node ids, bottom first; ``stack[0] == 0``) and
  a buffer (node ids, front first). Position p of a configuration is the
  index of a node in ``stack + buffer``;
- moves, in the package's names (Table 1 of the paper):

  ``S``  shift:        (α, bβ)     -> (αb, β)
  ``R``  reduce left:  (αa1a2, β)  -> (αa1, β)   + edge a1 -> a2 (a1 = 0 only
                                                 with an empty buffer: one root)
  ``L``  reduce right: (αa1a2, β)  -> (αa2, β)   + edge a2 -> a1, |α| > 0

  (so ``R`` makes a right arc, ``L`` a left arc); final: stack [0], empty
  buffer.

``config_score`` is the paper's W with the restrictions that the package's
cubic algorithm takes (``no_left_below``, ``no_left``, ``no_right``: the
paper's w(i, j) = -inf for some positions). ``step_scores`` is the paper's
σ values for the three strategies of section 2, found with the strategy
checked directly on the order of the edges of each computation, not by those
restrictions (which are what section 4 claims to be equivalent).
``best_projective`` enumerates every single-rooted projective tree.
"""
import functools
import itertools
from typing import Dict, List, Optional, Sequence, Tuple

from reference_charts import is_tree

STRATEGIES = ("nonstrict", "strict_left", "right_first")
MOVES = ("S", "L", "R")


# ----------------------------------------------------------- transitions

def initial_config(n: int) -> Tuple[List[int], List[int]]:
    return [0], list(range(1, n + 1))


def is_final(stack: Sequence[int], buffer: Sequence[int]) -> bool:
    return len(stack) == 1 and not buffer


def valid_moves(stack: Sequence[int], buffer: Sequence[int]) -> List[str]:
    out = []
    if buffer:
        out.append("S")
    if len(stack) >= 3:
        out.append("L")
    if len(stack) >= 3 or (len(stack) == 2 and not buffer):
        out.append("R")
    return out


def move_edge(stack: Sequence[int], move: str) -> Optional[Tuple[int, int]]:
    """(parent, child) of the edge a move makes, None for a shift."""
    if move == "R":
        return stack[-2], stack[-1]
    if move == "L":
        return stack[-1], stack[-2]
    return None


def apply_move(stack: Sequence[int], buffer: Sequence[int], move: str):
    """(new stack, new buffer, edge or None) as new lists."""
    stack, buffer = list(stack), list(buffer)
    if move == "S":
        if not buffer:
            raise ValueError("shift with an empty buffer")
        stack.append(buffer.pop(0))
        return stack, buffer, None
    if move == "R":
        if len(stack) < 2 or (len(stack) == 2 and buffer):
            raise ValueError("reduce left needs two stack elements, the root's only with "
                             "an empty buffer")
        child = stack.pop()
        return stack, buffer, (stack[-1], child)
    if move == "L":
        if len(stack) < 3:
            raise ValueError("reduce right needs three stack elements")
        top = stack.pop()
        child = stack.pop()
        stack.append(top)
        return stack, buffer, (top, child)
    raise ValueError(f"unknown move {move!r}")


def is_gold(gold_heads: Sequence[int], parent: int, child: int) -> bool:
    return child >= 1 and gold_heads[child - 1] == parent


# ----------------------------------------------- the paper's W, restricted

def config_score(stack, buffer, gold_heads, no_left_below=0, no_left=-1, no_right=-1):
    """The most gold edges any computation from (stack, buffer) to the final
    configuration creates, none of them forbidden; None if every
    computation creates a forbidden edge.

    Positions p index ``stack + buffer``. An edge from the node at position
    i to the node at position j is forbidden when j < i and
    (i < no_left_below or i == no_left), or when j > i and i == no_right.
    Exhaustive search over computations, memoised on (stack, buffer length).
    """
    nodes = list(stack) + list(buffer)
    if not stack or nodes[0] != 0:
        raise ValueError("the stack must start with the root 0")
    total = len(nodes)
    gold = [[1 if is_gold(gold_heads, nodes[i], nodes[j]) else 0 for j in range(total)]
            for i in range(total)]

    def allowed(i, j):
        if j < i:
            return not (i < no_left_below or i == no_left)
        return i != no_right

    @functools.lru_cache(maxsize=None)
    def best(st: Tuple[int, ...], next_pos: int) -> Optional[int]:
        if len(st) == 1 and next_pos == total:
            return 0
        options = []
        if next_pos < total:
            options.append(best(st + (next_pos,), next_pos + 1))
        if len(st) >= 3 or (len(st) == 2 and next_pos == total):   # R: st[-2] -> st[-1]
            i, j = st[-2], st[-1]
            if allowed(i, j):
                rest = best(st[:-1], next_pos)
                options.append(None if rest is None else rest + gold[i][j])
        if len(st) >= 3:                                   # L: st[-1] -> st[-2]
            i, j = st[-1], st[-2]
            if allowed(i, j):
                rest = best(st[:-2] + (i,), next_pos)
                options.append(None if rest is None else rest + gold[i][j])
        options = [v for v in options if v is not None]
        return max(options) if options else None

    return best(tuple(range(len(stack))), len(stack))


# ------------------------------------------------- σ values by strategy

def step_scores(stack, buffer, gold_heads, strategy: str) -> Dict[str, Optional[int]]:
    """{"S": σ, "L": σ, "R": σ}: for each move, the most gold edges created
    by a computation from (stack, buffer) to the final configuration whose
    first step is that move (its edge included) and which keeps the
    strategy; None when the move is invalid or no such computation exists.

    With c0 = (stack, buffer) and positions as in ``config_score``, k the
    top's position, a computation keeps

    - "nonstrict" (left-before-right): for each node at position >= k (the
      top of c0 or in its buffer), no left child after a right child;
    - "strict_left": that, and no left child at all for a node at position
      < k (in the stack of c0 below its top);
    - "right_first": for each node at position >= k, no right child after a
      left child.

    Exhaustive search; the state is (stack, buffer length, the nodes still
    present that have the flag: for the left-first strategies "has got a
    right child in this computation", for right_first "has got a left
    child"), the flag kept only for nodes at positions >= k.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    nodes = list(stack) + list(buffer)
    if not stack or nodes[0] != 0:
        raise ValueError("the stack must start with the root 0")
    total = len(nodes)
    k = len(stack) - 1
    gold = [[1 if is_gold(gold_heads, nodes[i], nodes[j]) else 0 for j in range(total)]
            for i in range(total)]
    left_first = strategy != "right_first"

    def edge(flags: frozenset, parent: int, child: int):
        """(allowed, flags after the edge)."""
        left = child < parent
        tracked = parent >= k
        if left:
            if strategy == "strict_left" and parent < k:
                return False, flags
            if left_first:
                return not (tracked and parent in flags), flags
            return True, (flags | {parent}) if tracked else flags
        if left_first:
            return True, (flags | {parent}) if tracked else flags
        return not (tracked and parent in flags), flags

    @functools.lru_cache(maxsize=None)
    def best(st: Tuple[int, ...], next_pos: int, flags: frozenset) -> Optional[int]:
        if len(st) == 1 and next_pos == total:
            return 0
        options = []
        for move, value in successors(st, next_pos, flags):
            if value is not None:
                options.append(value)
        return max(options) if options else None

    def successors(st, next_pos, flags):
        """(move, best value of computations starting with that move)."""
        if next_pos < total:
            yield "S", best(st + (next_pos,), next_pos + 1, flags)
        for move in ("L", "R"):
            if len(st) < (3 if move == "L" else 2) or (
                    move == "R" and len(st) == 2 and next_pos < total):
                continue
            if move == "R":
                parent, child, rest_st = st[-2], st[-1], st[:-1]
            else:
                parent, child, rest_st = st[-1], st[-2], st[:-2] + (st[-1],)
            ok, new_flags = edge(flags, parent, child)
            if not ok:
                yield move, None
                continue
            # Forget the flag of the child: it leaves for good.
            rest = best(rest_st, next_pos, new_flags - {child})
            yield move, None if rest is None else rest + gold[parent][child]

    out = {m: None for m in MOVES}
    for move, value in successors(tuple(range(len(stack))), len(stack), frozenset()):
        out[move] = value
    return out


def restricted_step_scores(stack, buffer, gold_heads, strategy: str) -> Dict[str, Optional[int]]:
    """The σ values as section 4 computes them: the step's gold edge plus
    ``config_score`` of the configuration after the step, with the
    restrictions that stand for the strategy (positions after the step):
    after a shift, the old top (position k) takes no left child (left-first
    strategies); strict_left: no stack node below the old top takes a left
    child; right_first: after reduce right (L), the new top takes no right
    child. This is the claim the package implements; ``step_scores`` checks
    it by brute force."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    k = len(stack) - 1
    out = {m: None for m in MOVES}
    for move in valid_moves(stack, buffer):
        new_stack, new_buffer, e = apply_move(stack, buffer, move)
        restrict = {}
        if move == "S":
            if strategy != "right_first":
                restrict["no_left"] = k
            if strategy == "strict_left":
                restrict["no_left_below"] = k
        elif move == "R":
            if strategy == "strict_left":
                restrict["no_left_below"] = k
        else:
            if strategy == "strict_left":
                restrict["no_left_below"] = k - 1
            if strategy == "right_first":
                restrict["no_right"] = k - 1
        rest = config_score(new_stack, new_buffer, gold_heads, **restrict)
        if rest is not None:
            out[move] = rest + (is_gold(gold_heads, *e) if e else 0)
    return out


# --------------------------------------------------- projective trees

def crossing_free(heads: Sequence[int]) -> bool:
    """No two arcs cross, the root arc 0 -> r included (so no arc spans
    over the root word). Written out here, independent of spaCy's test."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, start=1)]
    for (a, b), (c, d) in itertools.combinations(arcs, 2):
        if a < c < b < d or c < a < d < b:
            return False
    return True


@functools.lru_cache(maxsize=None)
def projective_trees(n: int) -> Tuple[Tuple[int, ...], ...]:
    """Every single-rooted projective tree over words 1..n, as head tuples,
    each once: the root word r (head 0) and, on each side of it, a cut of
    the span into consecutive subtrees of r, recursively."""

    @functools.lru_cache(maxsize=None)
    def subtrees(lo: int, hi: int) -> Tuple[Tuple[int, Tuple[int, ...]], ...]:
        # (root r, heads of lo..hi with r's head left as 0)
        out = []
        for r in range(lo, hi + 1):
            for left in cuts(lo, r - 1, r):
                for right in cuts(r + 1, hi, r):
                    out.append((r, left + (0,) + right))
        return tuple(out)

    @functools.lru_cache(maxsize=None)
    def cuts(lo: int, hi: int, parent: int) -> Tuple[Tuple[int, ...], ...]:
        # heads of lo..hi: consecutive subtrees, each root attached to parent
        if lo > hi:
            return ((),)
        out = []
        for end in range(lo, hi + 1):
            firsts = [heads[:r - lo] + (parent,) + heads[r - lo + 1:]
                      for r, heads in subtrees(lo, end)]
            for rest in cuts(end + 1, hi, parent):
                out.extend(f + rest for f in firsts)
        return tuple(out)

    if n == 0:
        return ((),)
    return tuple(heads for _, heads in subtrees(1, n))   # the root's head stays 0


def best_projective(gold_heads: Sequence[int]) -> Tuple[int, int]:
    """(the most arcs a single-rooted projective tree has in common with
    gold_heads, how many such trees reach it), by enumeration."""
    n = len(gold_heads)
    gold = tuple(gold_heads)
    if n >= 7:
        # The same count, vectorised over the enumeration.
        import numpy
        scores = (_tree_array(n) == numpy.asarray(gold, dtype=numpy.int8)).sum(axis=1)
        best = int(scores.max())
        return best, int((scores == best).sum())
    best, count = -1, 0
    for heads in projective_trees(n):
        score = sum(1 for h, g in zip(heads, gold) if h == g)
        if score > best:
            best, count = score, 1
        elif score == best:
            count += 1
    return best, count


@functools.lru_cache(maxsize=None)
def _tree_array(n: int):
    import numpy
    return numpy.array(projective_trees(n), dtype=numpy.int8).reshape(-1, n)


def common_arcs(heads: Sequence[int], gold_heads: Sequence[int]) -> int:
    return sum(1 for h, g in zip(heads, gold_heads) if h == g)


def is_single_rooted_tree(heads: Sequence[int]) -> bool:
    return sum(1 for h in heads if h == 0) == 1 and is_tree(heads)


# ------------------------------------------------------- random trees

def random_tree(rng, n: int) -> List[int]:
    """A random single-rooted tree over n words (projective or not), as
    1-based heads; conftest.random_heads."""
    from conftest import random_heads
    return random_heads(rng, n)


def random_projective_tree(rng, n: int) -> List[int]:
    from conftest import random_heads
    return random_heads(rng, n, projective=True)


def random_walk(rng, n: int, steps: Optional[int] = None):
    """The configurations (stack, buffer) of a random valid move sequence
    from the initial configuration for n words, the initial and (unless cut
    off after `steps` moves) the final one included."""
    stack, buffer = initial_config(n)
    out = [(list(stack), list(buffer))]
    while not is_final(stack, buffer) and (steps is None or len(out) <= steps):
        stack, buffer, _ = apply_move(stack, buffer, rng.choice(valid_moves(stack, buffer)))
        out.append((list(stack), list(buffer)))
    return out
