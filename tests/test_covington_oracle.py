"""Correctness of the monotonic Covington system and its oracles.

Every claim is checked against the pure-Python reference in
tests/reference_covington.py, whose loss is an exhaustive search over
transition sequences (no oracle logic):

- validity, transitions, loss and per-move costs agree with the reference on
  configurations reached by random (and partly random) move sequences;
- following zero-cost moves from any configuration reaches a final
  configuration whose actual loss is the predicted loss;
- invariants after every move (single head, acyclic, one dependent of 0,
  `finish` makes a single-rooted tree that keeps A);
- the static oracle rebuilds every gold tree, non-projective ones included;
- the same loss/cost checks on short real UD sentences (skipped without data);
- input validation (`check_gold_tree`, oracle names, invalid moves).

The systems are built with tie_break="none": the costs checked here are the
oracle's own; the training target's tie-break (tests/test_scan_targets.py)
then weights No-Arc down where Shift and No-Arc both cost 0.
"""
import random

import pytest
from hypothesis import given, settings

import reference_covington as ref
from conftest import scaled
from spacy_nonmono.graph.algorithms import count_cycles
from spacy_nonmono.graph import check_gold_tree
from spacy_nonmono.systems.base import INVALID
from spacy_nonmono.systems.covington import Covington

from covington_walks import (LABELS, N_LABELS, check_invariants, check_same_configuration,
                             gold_trees, seeds, walk, walk_policies)

# ------------------------------------------------------------------- helpers

def reference_loss(cfg, gold_heads, gold_labels, memo):
    return ref.exact_loss(cfg, gold_heads, gold_labels, memo)


def actual_loss(state, gold_heads, gold_labels):
    return ref.final_loss((-1,) + tuple(state.heads), (-1,) + tuple(state.labels),
                          gold_heads, gold_labels)


def check_oracle(system, state, cfg, gold_heads, gold_labels, memo):
    """Cython validity, loss and costs equal the reference's at cfg."""
    n_labels = system.n_labels
    check_same_configuration(state, cfg)
    valid = ref.valid_moves(cfg, n_labels)
    assert state.valid_moves() == valid, cfg
    before = reference_loss(cfg, gold_heads, gold_labels, memo)
    assert state.loss() == before, (cfg, gold_heads, gold_labels)
    costs = state.costs()
    assert len(costs) == system.n_moves
    for m in range(system.n_moves):
        if m in valid:
            after = reference_loss(ref.apply(cfg, m, n_labels), gold_heads, gold_labels, memo)
            assert costs[m] == after - before, (
                f"move {system.move_name(m)} at {cfg} for gold {gold_heads} {gold_labels}: "
                f"cost {costs[m]}, exact {after - before}")
        else:
            assert costs[m] == INVALID, (m, cfg)
    return before, costs


def zero_cost_completion(state, rng):
    """Follow random zero-cost moves to a final configuration; the loss must
    stay constant and some zero-cost move must always exist."""
    state = state.copy()
    predicted = state.loss()
    steps = 0
    while not state.is_final():
        costs = state.costs()
        zero = [m for m in state.valid_moves() if costs[m] == 0]
        assert zero, (state.focus, state.heads, costs)
        state.apply(rng.choice(zero))
        assert state.loss() == predicted
        steps += 1
        assert steps <= 4 * (state.n + 1) ** 2
    return state, predicted


# ------------------------------------------------- dynamic oracle, random trees

@settings(max_examples=scaled(150))
@given(tree=gold_trees(), policy=walk_policies, seed=seeds)
def test_dynamic_oracle_exact_on_random_walks(tree, policy, seed):
    gold_heads, gold_labels = tree
    rng = random.Random(seed)
    system = Covington(tie_break="none", labels=LABELS, oracle="dynamic")
    memo = {}
    walk(system, ref, gold_heads, gold_labels, rng, policy,
         lambda state, cfg: check_oracle(system, state, cfg, gold_heads, gold_labels, memo))


@settings(max_examples=scaled(100))
@given(tree=gold_trees(), policy=walk_policies, seed=seeds)
def test_zero_cost_moves_reach_predicted_loss(tree, policy, seed):
    gold_heads, gold_labels = tree
    rng = random.Random(seed)
    system = Covington(tie_break="none", labels=LABELS, oracle="dynamic")

    def complete(state, cfg):
        final, predicted = zero_cost_completion(state, rng)
        assert actual_loss(final, gold_heads, gold_labels) == predicted

    final, _ = walk(system, ref, gold_heads, gold_labels, rng, policy, complete)
    # The loss of a final configuration is its actual loss.
    assert final.loss() == actual_loss(final, gold_heads, gold_labels)


def test_zero_cost_moves_from_initial_reach_gold():
    rng = random.Random(7)
    system = Covington(tie_break="none", labels=LABELS)
    for heads, labels in ([0], [0]), ([3, 4, 0, 3], [0, 1, 2, 0]), \
            ([0, 4, 1, 1, 2], [1, 1, 1, 2, 0]), ([2, 0, 5, 2, 2, 3], [0, 1, 2, 0, 1, 2]):
        state = system.new_state(heads, labels)
        assert state.loss() == 0
        final, predicted = zero_cost_completion(state, rng)
        assert predicted == 0
        assert final.heads == heads and final.labels == labels


@settings(max_examples=scaled(40))
@given(tree=gold_trees(max_words=5), policy=walk_policies, seed=seeds)
def test_reference_restricted_search_equals_full_search(tree, policy, seed):
    """The reference's fast search (gold arcs only) equals its full search
    (every valid arc, gold and wrong labels) on small sentences, also after
    every valid move; this backs the argument in reference_covington."""
    gold_heads, gold_labels = tree
    rng = random.Random(seed)
    system = Covington(tie_break="none", labels=LABELS)
    fast, full = {}, {}

    def compare(state, cfg):
        for c in [cfg] + [ref.apply(cfg, m, N_LABELS) for m in ref.valid_moves(cfg, N_LABELS)]:
            assert (ref.exact_loss(c, gold_heads, gold_labels, fast)
                    == ref.exact_loss(c, gold_heads, gold_labels, full, gold_arcs_only=False))

    walk(system, ref, gold_heads, gold_labels, rng, policy, compare)


@pytest.mark.parametrize("heads,labels", [
    ([0], [0]),
    ([2, 0], [1, 2]),
    ([3, 4, 0, 3], [0, 1, 2, 0]),           # non-projective
    pytest.param([0, 4, 1, 1, 2], [0, 0, 1, 2, 1],   # non-projective, 5 words
                 marks=pytest.mark.slow),
])
def test_dynamic_oracle_exhaustive_small(heads, labels):
    """Every configuration reachable with one label per arc kind and every
    move from it, on fixed small trees (projective and not)."""
    system = Covington(tie_break="none", labels=LABELS)
    memo = {}
    seen = set()
    frontier = [(system.new_state(heads, labels), ref.initial_config(len(heads)))]
    while frontier:
        state, cfg = frontier.pop()
        if cfg in seen:
            continue
        seen.add(cfg)
        check_oracle(system, state, cfg, heads, labels, memo)
        for m in state.valid_moves():
            if m >= 2 and (m - 2) % N_LABELS >= 2:
                continue   # two labels per arc kind are enough
            nxt = state.copy()
            nxt.apply(m)
            check_invariants(nxt)
            frontier.append((nxt, ref.apply(cfg, m, N_LABELS)))
    assert len(seen) > 1


# ------------------------------------------------------------ static oracle

@settings(max_examples=scaled(150))
@given(tree=gold_trees())
def test_static_oracle_builds_gold_tree(tree):
    gold_heads, gold_labels = tree
    dynamic = Covington(tie_break="none", labels=LABELS, oracle="dynamic")
    static = Covington(tie_break="none", labels=LABELS, oracle="static")
    state = dynamic.new_state(gold_heads, gold_labels)
    static_state = static.new_state(gold_heads, gold_labels)
    n = len(gold_heads)
    steps = 0
    while not state.is_final():
        move = state.static_move()
        valid = state.valid_moves()
        assert move in valid, (move, state.focus, state.heads)
        assert static_state.static_move() == move
        # The static move is optimal, so the exact dynamic oracle costs it 0.
        assert state.costs()[move] == 0
        static_costs = static_state.costs()
        for m in range(static.n_moves):
            expected = 0.0 if m == move else (1.0 if m in valid else INVALID)
            assert static_costs[m] == expected
        state.apply(move)
        static_state.apply(move)
        check_invariants(state)
        steps += 1
        assert steps <= n * (n + 1) // 2 + n + 1
    assert state.static_move() == -1
    assert state.heads == list(gold_heads)
    assert state.labels == list(gold_labels)
    assert state.loss() == 0
    assert state.finish() == (list(gold_heads), list(gold_labels))


# ----------------------------------------------------------- real sentences

@pytest.mark.slow
def test_dynamic_oracle_exact_on_ud_sentences(ud_sentences):
    rng = random.Random(1234)
    n_checked = 0
    for treebank, words, heads, deprels in ud_sentences:
        label_names = sorted(set(deprels))
        label_ids = {name: k for k, name in enumerate(label_names)}
        gold_labels = [label_ids[d] for d in deprels]
        system = Covington(tie_break="none", labels=label_names, oracle="dynamic")
        memo = {}

        def on_config(state, cfg):
            check_oracle(system, state, cfg, list(heads), gold_labels, memo)

        for policy in (("random", 1.0), ("random", 0.3), ("wrong_arc", 0.2)):
            walk(system, ref, list(heads), gold_labels, rng, policy, on_config)
        n_checked += 1
    assert n_checked == len(ud_sentences) > 0


def test_ud_loader_gives_trees(ud_sentences):
    assert len(ud_sentences) <= 150
    for treebank, words, heads, deprels in ud_sentences:
        assert 1 <= len(words) <= 10
        assert len(words) == len(heads) == len(deprels)
        assert all(isinstance(h, int) for h in heads)
        check_gold_tree(list(heads))


# ---------------------------------------------------------- graph helpers

@pytest.mark.parametrize("heads,n_cycles", [
    ([-1], 0),
    ([-1, 0, 1, 1], 0),
    ([-1, -1, 1, -1], 0),
    ([-1, 2, 1], 1),
    ([-1, 2, 3, 1, -1], 1),
    ([-1, 2, 1, 4, 3], 2),
    ([-1, 2, 3, 2, 3], 1),   # a tail into a cycle
    ([-1, 1], 1),            # self-loop
])
def test_count_cycles(heads, n_cycles):
    assert count_cycles(heads) == n_cycles


# --------------------------------------------------------- input validation

@pytest.mark.parametrize("heads", [
    [0, 0],            # two roots
    [0, 1, 0],         # two roots
    [2, 1],            # no root (and a cycle)
    [],                # no words, no root
    [0, 3, 2],         # cycle beside the root
    [0, 3, 4, 2],      # longer cycle
    [0, 2],            # self-loop
    [1],               # self-loop, no root
    [0, 3],            # head outside the sentence
    [0, -1],           # negative head
    [0, 1, 7],         # head outside the sentence
])
def test_check_gold_tree_rejects(heads):
    with pytest.raises(ValueError):
        check_gold_tree(heads)


@pytest.mark.parametrize("heads", [[0], [2, 0], [0, 1, 1], [3, 4, 0, 3], [0, 4, 1, 1, 2]])
def test_check_gold_tree_accepts(heads):
    check_gold_tree(heads)


def test_new_state_rejects_bad_gold():
    system = Covington(tie_break="none", labels=LABELS)
    with pytest.raises(ValueError):
        system.new_state([0, 0], [0, 0])
    with pytest.raises(ValueError):
        system.new_state([0, 1], [0])


def test_unknown_oracle_name():
    with pytest.raises(ValueError):
        Covington(tie_break="none", labels=LABELS, oracle="exact")
    with pytest.raises(ValueError):
        Covington(tie_break="none", labels=LABELS, oracle="")


def test_invalid_moves_raise():
    system = Covington(tie_break="none", labels=LABELS)
    state = system.new_state([2, 0], [0, 1])
    assert state.focus == (0, 1)
    # Left-Arc is invalid at i = 0 (the root cannot be a dependent).
    assert state.valid_moves() == ref.valid_moves(ref.initial_config(2), N_LABELS)
    for move in (2, 2 + N_LABELS - 1, -1, system.n_moves):
        with pytest.raises(ValueError):
            state.apply(move)
    assert state.focus == (0, 1) and state.heads == [-1, -1]
    state.apply(2 + N_LABELS)     # Right-Arc 0 -> 1
    state.apply(0)                # Shift: focus (1, 2)
    # A second dependent of the root is refused.
    state.apply(1)                # No-Arc: focus (0, 2)
    assert all(m < 2 + N_LABELS for m in state.valid_moves())
    with pytest.raises(ValueError):
        state.apply(2 + N_LABELS)
    state.apply(0)
    assert state.is_final()
    assert state.valid_moves() == []
    with pytest.raises(ValueError):
        state.apply(0)


def test_cycle_term_example():
    """Gold 0->1, 1->3, 3->2; after the wrong Left-Arc 2->1 both 1->3 and
    3->2 are still individually reachable, but together with 2->1 they form
    a cycle, so one of them is lost too: loss 2, not 1."""
    gold_heads, gold_labels = [0, 3, 1], [0, 1, 2]
    system = Covington(tie_break="none", labels=LABELS)
    state = system.new_state(gold_heads, gold_labels)
    state.apply(0)                 # Shift: focus (1, 2)
    state.apply(2)                 # Left-Arc 2 -> 1
    assert state.focus == (0, 2) and state.heads == [2, -1, -1]
    cfg = ref.config_from_state(state)
    assert ref.exact_loss(cfg, gold_heads, gold_labels) == 2
    assert state.loss() == 2
