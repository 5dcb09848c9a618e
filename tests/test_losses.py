"""Losses and training targets are separate: `ParseState.losses()` is the
loss each move causes (what a beam reads), `costs()` the greedy decoder's
targets, which may add training policy on top. The targets are the same as
before the two were separated (digests of seeded random walks, see
training_targets.py)."""
import json
import random

import pytest

from spacy_nonmono.systems import get_system
from training_targets import CONFIGURATIONS, DIGESTS, LABELS, key, random_tree, walk_digest

EXPECTED = json.loads(DIGESTS.read_text())


@pytest.mark.parametrize("configuration", CONFIGURATIONS, ids=lambda c: key(*c))
def test_training_targets_unchanged(configuration):
    assert walk_digest(*configuration) == EXPECTED[key(*configuration)]


def gold_errors(state, gold_heads, gold_labels):
    """Words whose arc in the finished tree is not the gold one (label
    included; a gold label of -1 matches any)."""
    heads, labels = state.finish()
    return sum(1 for h, l, gh, gl in zip(heads, labels, gold_heads, gold_labels)
               if h != gh or (gl >= 0 and l != gl))


def projective(heads):
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, 1)]
    return not any(a < c < b < e for a, b in arcs for c, e in arcs)


def static_oracle_parses(system, heads, labels):
    """Whether following the static oracle from the start builds the gold
    tree (a static oracle needs trees its system can build)."""
    state = system.new_state(heads, labels)
    while not state.is_final():
        move = state.static_move()
        if move not in state.valid_moves():
            return False
        state.apply(move)
    return gold_errors(state, heads, labels) == 0


def walks(name, oracle, options, n_trees=40, seed=1):
    """(system, heads, labels, rng) for random trees, with the root's label
    -1 as the component gives it: projective ones for a projective system
    (the component projectivizes what it trains them on), and for a static
    oracle, trees it builds."""
    system = get_system(name)(labels=LABELS, oracle=oracle, **options)
    rng = random.Random(seed)
    out = []
    while len(out) < n_trees:
        heads = random_tree(rng, rng.randint(1, 8))
        labels = [-1 if h == 0 else rng.randrange(len(LABELS)) for h in heads]
        if system.projective and not projective(heads):
            continue
        if system.uses_static_oracle and not static_oracle_parses(system, heads, labels):
            continue
        out.append((system, heads, labels, rng))
    return out


DYNAMIC = [c for c in CONFIGURATIONS if not get_system(c[0])(oracle=c[1], **c[2]).uses_static_oracle]

# Oracles whose loss is a documented lower bound of the true loss (module
# docs of systems/swap.pyx, hybrid.pyx, covington_nm.pyx): a zero-loss move
# may lose an arc, so their zero-loss histories need not reach the best loss.
LOWER_BOUNDS = {("swap_stay_eager", "dynamic"), ("mh4", "dynamic")}


def exact(configuration):
    name, oracle, options = configuration
    return (name, oracle) not in LOWER_BOUNDS and options.get("loss") != "lower"


@pytest.mark.parametrize("configuration", DYNAMIC, ids=lambda c: key(*c))
def test_targets_only_add_to_losses(configuration):
    """Losses are never negative, every training target has zero loss, and
    a target's cost is at least its loss (the policy only demotes moves)."""
    for system, heads, labels, rng in walks(*configuration, n_trees=15):
        state = system.new_state(heads, labels)
        while not state.is_final():
            valid = state.valid_moves()
            losses, costs = state.losses(), state.costs()
            for m in valid:
                assert 0 <= losses[m] <= costs[m]
                if costs[m] == min(costs[v] for v in valid) and costs[m] < 1:
                    assert losses[m] == 0
            state.apply(rng.choice(valid))


@pytest.mark.parametrize("configuration", [c for c in CONFIGURATIONS if exact(c)],
                         ids=lambda c: key(*c))
def test_zero_loss_histories_reach_the_best_reachable_loss(configuration):
    """Any sequence of zero-loss moves (what the beam treats as gold) ends
    in a tree with the loss of the initial configuration: every gold arc a
    system can build (all of them, or for a projective system on a
    non-projective tree, the best it can reach)."""
    for system, heads, labels, rng in walks(*configuration):
        state = system.new_state(heads, labels)
        best = state.loss()
        while not state.is_final():
            losses = state.losses()
            state.apply(rng.choice([m for m in state.valid_moves() if losses[m] == 0]))
        assert gold_errors(state, heads, labels) == best, (heads, labels)


@pytest.mark.parametrize("name", sorted({c[0] for c in CONFIGURATIONS}))
def test_every_run_ends_within_max_moves(name):
    """A decoder that explores (the beam) relies on each system's bound on
    the moves of any run: random runs stay within it, and runs that prefer
    the last valid move (the slowest kinds come last in most systems) too."""
    system = get_system(name)(labels=LABELS)
    rng = random.Random(3)
    longest = {}
    for t in range(300):
        n = rng.randint(1, 8)
        state = system.new_state(n=n)
        steps = 0
        while not state.is_final():
            valid = state.valid_moves()
            state.apply(valid[-1] if t % 3 == 0 else rng.choice(valid))
            steps += 1
            assert steps <= system.max_moves(n)
        longest[n] = max(longest.get(n, 0), steps)
    assert longest
