"""The arc-standard reference (tests/reference_arc_standard.py) on its own:
hand-worked examples, and the claim of section 4 of Nederhof (2019) that
the strategies of section 2 amount to forbidding some edges by position
(``restricted_step_scores``) checked by brute force against
``step_scores``, which tests the strategies on the order of the edges."""
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_arc_standard as ref
from conftest import scaled
from spacy_nonmono.graph import is_projective

seeds = st.integers(0, 2**32 - 1)


# ------------------------------------------------------------ transitions

def test_moves():
    assert ref.valid_moves([0], [1, 2]) == ["S"]
    assert ref.valid_moves([0, 1], []) == ["R"]
    assert ref.valid_moves([0, 1, 2], [3]) == ["S", "L", "R"]
    assert ref.apply_move([0, 1, 2], [3], "S") == ([0, 1, 2, 3], [], None)
    assert ref.apply_move([0, 1, 2], [3], "R") == ([0, 1], [3], (1, 2))
    assert ref.apply_move([0, 1, 2], [3], "L") == ([0, 2], [3], (2, 1))
    with pytest.raises(ValueError):
        ref.apply_move([0, 1], [], "L")


def test_longest_and_shortest_computation():
    """Every computation for n words takes 2n moves (n shifts, n reductions)."""
    rng = random.Random(0)
    for n in range(1, 7):
        walk = ref.random_walk(rng, n)
        assert len(walk) == 2 * n + 1
        assert ref.is_final(*walk[-1])


# ---------------------------------------------------------- config_score

def test_config_score_projective_gold_is_n():
    # 2 -> 1, 0 -> 2, 2 -> 4, 4 -> 3
    gold = [2, 0, 4, 2]
    assert ref.config_score([0], [1, 2, 3, 4], gold) == 4
    # After the wrong reduction 1 -> 2, word 2 is gone with its arcs 0 -> 2,
    # 2 -> 1 and 2 -> 4: only 4 -> 3 is left.
    assert ref.config_score([0, 1], [3, 4], gold) == 1


def test_config_score_non_projective_four_words():
    # 3 -> 1 and 4 -> 2 cross: one arc must go.
    gold = [3, 4, 0, 3]
    assert not is_projective(gold)
    assert ref.config_score([0], [1, 2, 3, 4], gold) == 3
    assert ref.best_projective(gold) == (3, 2)


def test_config_score_restrictions():
    gold = [2, 0]                     # 0 -> 2 -> 1
    assert ref.config_score([0], [1, 2], gold) == 2
    # Position 2 (word 2) may not take a left child: 2 -> 1 is lost, and
    # so is 0 -> 2, as node 0 takes one child (1 -> 2 keeps word 1 the root).
    assert ref.config_score([0], [1, 2], gold, no_left=2) == 0
    assert ref.config_score([0], [1, 2], gold, no_left_below=3) == 0
    assert ref.config_score([0], [1, 2], gold, no_left_below=2) == 2
    # The root may take no right child: nothing reaches the final configuration.
    assert ref.config_score([0], [1, 2], gold, no_right=0) is None
    assert ref.config_score([0], [], []) == 0
    assert ref.config_score([0], [], [], no_right=0) == 0
    # Word 1 may take no right child: 1 -> 2 is not gold anyway.
    assert ref.config_score([0], [1, 2], gold, no_right=1) == 2
    # Positions follow stack + buffer, not node ids.
    assert ref.config_score([0, 2], [], [2, 0]) == 1
    assert ref.config_score([0, 2], [], [2, 0], no_right=0) is None


@settings(max_examples=scaled(30))
@given(seed=seeds, n=st.integers(1, 7))
def test_config_score_of_projective_tree_from_anywhere(seed, n):
    """On a projective gold tree the score from the initial configuration is
    n; along a random walk the gold edges built plus the score of the
    configuration never rise, and end as the gold edges of the tree built."""
    rng = random.Random(seed)
    gold = ref.random_projective_tree(rng, n)
    assert ref.config_score(*ref.initial_config(n), gold) == n
    built = 0
    stack, buffer = ref.initial_config(n)
    last = n
    while not ref.is_final(stack, buffer):
        stack, buffer, e = ref.apply_move(stack, buffer, rng.choice(ref.valid_moves(stack, buffer)))
        built += bool(e and ref.is_gold(gold, *e))
        total = built + ref.config_score(stack, buffer, gold)
        assert total <= last
        last = total
    assert last == built


# ---------------------------------------------------------- step_scores

def test_step_scores_hand_example():
    """Stack [0, a1, a2], buffer [b1]; gold 0 -> a2, a2 -> a1, a2 -> b1.

    Left-first: a shift covers a2, which then gets a right child before it
    is on top again, so a2 -> a1 is lost (S: only a2 -> b1); reduce right
    (L) makes a2 -> a1 and keeps the rest (3); reduce left (R) makes the
    non-gold a1 -> a2 and loses all. Right-first: after a shift a2 takes b1
    and then a1 (3); after L, a2 has a left child and may take no right
    child, so b1 can only take a2 and be the root: only a2 -> a1 is left (1)."""
    gold = [2, 0, 2]
    for strategy in ("nonstrict", "strict_left"):
        assert ref.step_scores([0, 1, 2], [3], gold, strategy) == {"S": 1, "L": 3, "R": 0}
    assert ref.step_scores([0, 1, 2], [3], gold, "right_first") == {"S": 3, "L": 1, "R": 0}


def test_step_scores_strict_differs():
    """Stack [0, 1, 2, 3], buffer [4]; gold 0 -> 2, 2 -> 1, 2 -> 3, 3 -> 4.
    Word 2 is below the top: the non-strict strategy lets it take its left
    child 1 later (after its right child 3), the strict one does not."""
    gold = [2, 0, 2, 3]
    c = ([0, 1, 2, 3], [4])
    assert ref.step_scores(*c, gold, "nonstrict") == {"S": 4, "L": 1, "R": 3}
    assert ref.step_scores(*c, gold, "strict_left") == {"S": 2, "L": 1, "R": 1}
    assert ref.step_scores(*c, gold, "right_first") == {"S": 4, "L": 0, "R": 3}


def test_step_scores_invalid_moves():
    assert ref.step_scores([0], [1], [0], "nonstrict") == {"S": 1, "L": None, "R": None}
    assert ref.step_scores([0, 1], [], [0], "nonstrict") == {"S": None, "L": None, "R": 1}
    assert ref.step_scores([0], [], [], "nonstrict") == {"S": None, "L": None, "R": None}
    with pytest.raises(ValueError, match="strategy"):
        ref.step_scores([0], [1], [0], "left_first")


@settings(max_examples=scaled(40))
@given(seed=seeds, n=st.integers(1, 7), projective=st.booleans())
def test_strategies_are_position_restrictions(seed, n, projective):
    """Section 4's claim: the σ values of each strategy are the step's gold
    edge plus W with some edges forbidden by position; and the best σ under
    every strategy is the unrestricted best (no strategy loses a tree)."""
    rng = random.Random(seed)
    gold = ref.random_projective_tree(rng, n) if projective else ref.random_tree(rng, n)
    for stack, buffer in ref.random_walk(rng, n):
        best = ref.config_score(stack, buffer, gold)
        for strategy in ref.STRATEGIES:
            sigma = ref.step_scores(stack, buffer, gold, strategy)
            assert sigma == ref.restricted_step_scores(stack, buffer, gold, strategy), (
                strategy, stack, buffer, gold)
            valid = ref.valid_moves(stack, buffer)
            assert all((sigma[m] is not None) == (m in valid) for m in ref.MOVES)
            if valid and strategy != "strict_left":
                assert max(sigma[m] for m in valid) == best
            elif valid:
                # Strict: stack nodes below the top take no left child.
                assert max(sigma[m] for m in valid) == ref.config_score(
                    stack, buffer, gold, no_left_below=len(stack) - 1)


@settings(max_examples=scaled(30))
@given(seed=seeds, n=st.integers(1, 7), projective=st.booleans())
def test_following_best_steps_keeps_the_best_score(seed, n, projective):
    """From the initial configuration, taking any move of highest σ at
    every step ends in a tree with config_score(initial) gold edges, for
    every strategy."""
    rng = random.Random(seed)
    gold = ref.random_projective_tree(rng, n) if projective else ref.random_tree(rng, n)
    target = ref.config_score(*ref.initial_config(n), gold)
    for strategy in ref.STRATEGIES:
        stack, buffer = ref.initial_config(n)
        built = 0
        while not ref.is_final(stack, buffer):
            sigma = ref.step_scores(stack, buffer, gold, strategy)
            top = max(v for v in sigma.values() if v is not None)
            move = rng.choice([m for m, v in sigma.items() if v == top])
            stack, buffer, e = ref.apply_move(stack, buffer, move)
            built += bool(e and ref.is_gold(gold, *e))
        assert built == target, (strategy, gold)


# ------------------------------------------------------ best_projective

def test_projective_trees_are_all_and_only_the_projective_ones():
    for n in range(1, 7):
        every = [h for h in itertools.product(range(n + 1), repeat=n)
                 if ref.is_single_rooted_tree(h)]
        projective = {h for h in every if ref.crossing_free(h)}
        trees = ref.projective_trees(n)
        assert len(trees) == len(set(trees)) == len(projective)
        assert set(trees) == projective
        # The package's projectivity test agrees with ours (root arc included).
        assert all(is_projective(list(h)) == (h in projective) for h in every)
    # Single-rooted projective trees: 1, 2, 7, 30, 143, 728, ... (C(3n-2, n-1)/n)
    assert [len(ref.projective_trees(n)) for n in range(1, 9)] == [
        1, 2, 7, 30, 143, 728, 3876, 21318]


def test_best_projective_small():
    assert ref.best_projective([0]) == (1, 1)
    assert ref.best_projective([2, 0, 2]) == (3, 1)
    # 1 <- 3, 2 <- 4 cross, root 3 -> 4: keep 3 of 4 arcs, 2 ways
    # (2's head 1 or 3).
    assert ref.best_projective([3, 4, 0, 3]) == (3, 2)
    # Root 1; 1 -> 3 and 2 -> 4 cross: 3's head 2 or 4, or 4's head 1 or 3.
    assert ref.best_projective([0, 1, 1, 2]) == (3, 4)


@settings(max_examples=scaled(30))
@given(seed=seeds, n=st.integers(1, 8))
def test_best_projective_of_projective_tree(seed, n):
    rng = random.Random(seed)
    gold = ref.random_projective_tree(rng, n)
    assert ref.crossing_free(gold) and is_projective(gold)
    assert ref.best_projective(gold) == (n, 1)


@settings(max_examples=scaled(30))
@given(seed=seeds, n=st.integers(1, 7))
def test_best_projective_is_config_score_from_start(seed, n):
    """Arc-standard from the initial configuration builds every projective
    tree, with several children of 0 too; but at most one of those is gold,
    and attaching the others to one of them crosses nothing and loses
    nothing, so its best score is the best single-rooted projective tree's."""
    rng = random.Random(seed)
    gold = ref.random_tree(rng, n)
    best, count = ref.best_projective(gold)
    assert count >= 1
    assert ref.config_score(*ref.initial_config(n), gold) == best


@settings(max_examples=scaled(10))
@given(seed=seeds, n=st.integers(7, 8))
def test_best_projective_vectorised_equals_loop(seed, n):
    gold = ref.random_tree(random.Random(seed), n)
    scores = [ref.common_arcs(h, gold) for h in ref.projective_trees(n)]
    assert ref.best_projective(gold) == (max(scores), scores.count(max(scores)))
