"""Random gold trees and random walks through a Covington-family system,
shared by the oracle tests of `covington` and `covington_nm`."""
from hypothesis import strategies as st

from spacy_nonmono.graph.algorithms import count_cycles
from spacy_nonmono.graph import check_gold_tree

N_LABELS = 3
LABELS = [f"l{k}" for k in range(N_LABELS)]


@st.composite
def gold_trees(draw, min_words=1, max_words=8, n_labels=N_LABELS):
    """(heads, labels): a random single-rooted tree over words 1..n.

    A random permutation of the words; its first word is the root (head 0)
    and every later word is attached to a word earlier in the permutation.
    This gives every labelled tree shape, projective or not.
    """
    n = draw(st.integers(min_words, max_words))
    order = draw(st.permutations(list(range(1, n + 1))))
    heads = [0] * n
    for pos in range(1, n):
        heads[order[pos] - 1] = order[draw(st.integers(0, pos - 1))]
    labels = draw(st.lists(st.integers(0, n_labels - 1), min_size=n, max_size=n))
    return heads, labels


# How walks leave the gold path: ("random", p) takes a uniformly random valid
# move with probability p at each step (p = 1: a purely random sequence);
# ("wrong_arc", p) takes a random arc move of positive cost with probability p,
# which keeps the rest of the gold tree reachable and so makes cycles in
# A u I (the second term of the loss) common. Otherwise a random zero-cost move.
walk_policies = st.sampled_from([
    ("random", 1.0), ("random", 0.6), ("random", 0.3), ("random", 0.1),
    ("wrong_arc", 0.1), ("wrong_arc", 0.3),
])
# Walks draw from random.Random(seed): hypothesis' own `randoms()` favours
# simple values, which rarely leave the gold path in interesting ways.
seeds = st.integers(0, 2**32 - 1)


def check_same_configuration(state, cfg):
    assert state.focus == (cfg.i, cfg.j)
    assert state.heads == list(cfg.heads[1:])
    assert state.labels == list(cfg.labels[1:])
    assert state.is_final() == (cfg.j > cfg.n)


def check_invariants(state):
    n = state.n
    heads = state.heads
    labels = state.labels
    for k, h in enumerate(heads, start=1):
        assert -1 <= h <= n and h != k, heads
        assert (h == -1) == (labels[k - 1] == -1), (heads, labels)
    assert sum(1 for h in heads if h == 0) <= 1, heads
    assert count_cycles([-1] + heads) == 0, heads
    tree_heads, tree_labels = state.finish()
    check_gold_tree(tree_heads)      # raises unless a single-rooted tree
    for k in range(n):
        if heads[k] != -1:          # finish keeps every arc of A
            assert tree_heads[k] == heads[k]
            assert tree_labels[k] == labels[k]
    assert state.heads == heads     # and leaves the state itself alone


def walk(system, ref, gold_heads, gold_labels, rng, policy, on_config):
    """A walk from the initial configuration following `policy` (see
    walk_policies). `ref` is the system's pure-Python reference module.
    Calls on_config(state, cfg) at every configuration, the final one
    included, and checks that the reference and the Cython transitions agree
    and the invariants hold after every move."""
    kind, p = policy
    n_labels = system.n_labels
    state = system.new_state(gold_heads, gold_labels)
    cfg = ref.initial_config(len(gold_heads))
    check_invariants(state)
    while True:
        on_config(state, cfg)
        if state.is_final():
            break
        valid = state.valid_moves()
        costs = state.costs()
        wrong_arcs = [m for m in valid if m >= 2 and costs[m] > 0]
        if kind == "random" and rng.random() < p:
            move = rng.choice(valid)
        elif kind == "wrong_arc" and wrong_arcs and rng.random() < p:
            move = rng.choice(wrong_arcs)
        else:   # a random move of least cost (0 for an exact oracle)
            least = min(costs[m] for m in valid)
            move = rng.choice([m for m in valid if costs[m] == least])
        state.apply(move)
        cfg = ref.apply(cfg, move, n_labels)
        check_same_configuration(state, cfg)
        check_invariants(state)
    assert ref.is_final(cfg)
    return state, cfg
