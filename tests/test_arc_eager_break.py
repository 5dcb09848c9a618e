"""Correctness of arc_eager_break: arc-eager over a document, with Break.

Against the pure-Python reference (tests/reference_arc_eager.py, whose loss
is an exhaustive search over move sequences, no oracle logic), on random gold
documents (consecutive projective sentence trees):

- validity, transitions, `finish`, the context agree with the reference at
  every step of random and partly random walks; after every move the
  parse is a forest whose trees each cover consecutive words (the
  sentences), keeping the arcs built; Break alone decides the sentences
  (one root for the words it pops);
- the dynamic oracle is exact: its loss is the exact loss and every move's
  loss is the exact loss difference, Break included; following zero-cost
  moves ends with the predicted loss; its targets break exactly at the gold
  boundaries (the tie-break among moves that lose nothing);
- the static oracle rebuilds every gold document, sentence boundaries
  included, with a Break before every sentence but the first;
- random move sequences end within 2n moves, never stuck;
- the reference's fast search equals its plain search on documents.

The three tests that search exhaustively are in the slow tier.
"""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_arc_eager as ref
from conftest import check_fast_search, random_heads, scaled
from covington_walks import LABELS, N_LABELS, seeds, walk_policies
from spacy_nonmono.graph import check_gold_tree, sentence_spans
from spacy_nonmono.systems import get_system
from spacy_nonmono.systems.base import INVALID
from test_arc_eager import (actual_loss, check_every_reachable_configuration, check_invariants,
                            check_oracle, check_same_configuration, walk,
                            zero_cost_completion)

NAME = ref.BREAK_SYSTEM


def make_system(oracle=None, labels=LABELS):
    return get_system(NAME)(labels=labels, oracle=oracle)


def document(sentences):
    """(heads, labels) of a document from its sentences' (heads, labels),
    heads 1-based within each sentence (0 = its root)."""
    heads, labels = [], []
    for sent_heads, sent_labels in sentences:
        offset = len(heads)
        heads += [h + offset if h else 0 for h in sent_heads]
        labels += [-1 if h == 0 else l for h, l in zip(sent_heads, sent_labels)]
    return heads, labels


def random_document(rng, max_sentences=3, max_words=4):
    sentences = []
    for _ in range(rng.randint(1, max_sentences)):
        n = rng.randint(1, max_words)
        sentences.append((random_heads(rng, n, projective=True),
                          [rng.randrange(N_LABELS) for _ in range(n)]))
    return document(sentences)


@st.composite
def documents(draw, max_sentences=3, max_words=4):
    return random_document(random.Random(draw(seeds)), max_sentences, max_words)


# ---------------------------------------------------------- gold documents

def test_sentence_spans_and_document_check():
    heads, _ = document([([0], [0]), ([2, 0, 2], [0, 0, 0]), ([0, 1], [0, 0])])
    assert heads == [0, 3, 0, 3, 0, 5]
    assert sentence_spans(heads) == [(0, 1), (1, 4), (4, 6)]
    check_gold_tree(heads, sentences=True)
    with pytest.raises(ValueError, match="exactly one root"):
        check_gold_tree(heads)
    # Two trees interleaved: 1 <- 3 and 2, 4 <- 2.
    with pytest.raises(ValueError, match="consecutive"):
        check_gold_tree([3, 0, 0, 2], sentences=True)
    with pytest.raises(ValueError, match="cycle"):
        check_gold_tree([0, 3, 2], sentences=True)
    # A new state checks its gold document.
    with pytest.raises(ValueError, match="consecutive"):
        make_system().new_state([3, 0, 0, 2])


def test_move_table():
    system = make_system()
    assert system.move_names == ["S", "D"] + [f"L-{l}" for l in LABELS] + [
        f"R-{l}" for l in LABELS] + ["B"]
    assert system.decides_sentences and not get_system("arc_eager").decides_sentences
    state = system.new_state([0, 0], [-1, -1])
    assert state.valid_moves() == [0]          # Break needs a stack and a buffer
    state.apply(0)
    assert system.move_name(state.valid_moves()[-1]) == "B"
    state.apply(system.n_moves - 1)
    assert state.stack == [] and state.buffer == [2] and state.heads == [0, -1]


def test_break_closes_one_sentence_under_its_first_headless_word():
    """Shift 1, 2, 3 without arcs, Break, Shift 4: Break makes 1 the root
    of the sentence 1-3 and attaches 2 and 3 to it (label -1), so words the
    parser left unattached do not start sentences; finish does the same for
    the last sentence. Against the gold 1 <- 2 -> 3 | 4, the sentence
    boundary is right, the root of the first sentence is lost."""
    heads, labels = document([([2, 0, 2], [0, 0, 1]), ([0], [0])])
    system = make_system()
    state = system.new_state(heads, labels)
    brk = system.n_moves - 1
    for _ in range(3):
        state.apply(0)
    state.apply(brk)
    assert state.heads == [0, 1, 1, -1] and state.labels[1:3] == [-1, -1]
    state.apply(0)
    tree_heads, tree_labels = state.finish()
    assert list(tree_heads) == [0, 1, 1, 0]
    assert sentence_spans(list(tree_heads)) == [(0, 3), (3, 4)]
    assert state.loss() == 3      # 2 is not the root; 1 <- 2 and 2 -> 3 lost


# ------------------------------------------------------------ the reference

@pytest.mark.slow
@settings(max_examples=scaled(10))
@given(doc=documents(max_words=2), n_labels=st.integers(1, 3), seed=seeds)
def test_reference_canonical_search_equals_full_search(doc, n_labels, seed):
    check_fast_search(ref, [NAME], *doc, n_labels, seed)


# ------------------------------------------------------------ the oracles

@pytest.mark.slow
@settings(max_examples=scaled(60))
@given(doc=documents(max_words=3), policy=walk_policies, seed=seeds)
def test_dynamic_oracle_is_exact_on_random_walks(doc, policy, seed):
    gold_heads, gold_labels = doc
    rng = random.Random(seed)
    system = make_system()
    rsys = ref.System(NAME, N_LABELS)
    memo = {}
    walk(system, rsys, gold_heads, gold_labels, rng, policy,
         lambda state, cfg: check_oracle(system, rsys, state, cfg, gold_heads, gold_labels,
                                         memo, exact=True))


@settings(max_examples=scaled(25))
@given(doc=documents(), policy=walk_policies, seed=seeds)
def test_zero_cost_moves_reach_predicted_loss(doc, policy, seed):
    gold_heads, gold_labels = doc
    rng = random.Random(seed)
    system = make_system()
    rsys = ref.System(NAME, N_LABELS)

    def complete(state, cfg):
        final, predicted = zero_cost_completion(state, rng)
        assert actual_loss(final, gold_heads, gold_labels) == predicted, (cfg, final.heads)

    final, _ = walk(system, rsys, gold_heads, gold_labels, rng, policy, complete)
    assert final.loss() == actual_loss(final, gold_heads, gold_labels)


@pytest.mark.slow
def test_dynamic_oracle_exhaustive_small():
    """Every configuration reachable on small documents."""
    system = make_system()
    rsys = ref.System(NAME, N_LABELS)
    for sentences in ([([0], [0]), ([0], [0])],
                      [([2, 0], [0, 0]), ([0, 1], [1, 0])],
                      [([0, 1], [1, 0]), ([0], [0]), ([2, 0], [1, 0])]):
        check_every_reachable_configuration(system, rsys, *document(sentences), exact=True)


def test_break_costs_the_arcs_it_cuts():
    """Gold 2 -> 1 | 3 <- 4 ... : Break after Shift 1 loses 2 -> 1; after
    Left-Arc 2 -> 1, Shift 2 it is free; Break inside the second sentence
    loses the arcs across it."""
    heads, labels = document([([2, 0], [0, 0]), ([2, 0, 2], [1, 0, 2])])
    system = make_system()
    state = system.new_state(heads, labels)
    brk = system.n_moves - 1
    state.apply(0)                                 # Shift 1
    assert state.costs()[brk] == 1
    state.apply(system.move_id("L", "l0"))         # 2 -> 1
    state.apply(0)                                 # Shift 2
    assert state.costs()[brk] == 0
    state.apply(brk)
    assert state.loss() == 0 and state.stack == []
    state.apply(0)                                 # Shift 3
    assert state.costs()[brk] == 1                 # 4 -> 3 lost
    state.apply(system.move_id("L", "l1"))
    state.apply(0)                                 # Shift 4
    assert state.costs()[brk] == 1                 # 4 -> 5 lost


@settings(max_examples=scaled(60))
@given(doc=documents(max_sentences=4, max_words=6), explore=st.sampled_from([0.0, 0.3, 1.0]),
       seed=seeds)
def test_targets_break_exactly_at_gold_boundaries(doc, explore, seed):
    """The dynamic oracle's targets (`costs`, the tie-break over `losses`):
    a non-empty subset of the moves that lose nothing, in every
    configuration of walks that take a random move with probability
    `explore`; where B0 starts a gold sentence Break is the only target,
    elsewhere it is one only when no other move loses nothing. Following the
    targets alone rebuilds the document, a Break before every sentence but
    the first."""
    gold_heads, gold_labels = doc
    starts = {start + 1 for start, _ in sentence_spans(gold_heads)}
    rng = random.Random(seed)
    system = make_system()
    brk = system.n_moves - 1
    state = system.new_state(gold_heads, gold_labels)
    breaks = 0
    while not state.is_final():
        valid = state.valid_moves()
        losses, costs = state.losses(), state.costs()
        free = [m for m in valid if losses[m] == 0]
        targets = [m for m in valid if costs[m] == 0]
        assert targets and set(targets) <= set(free), (state.stack, state.buffer, losses, costs)
        if brk in valid and state.buffer[0] in starts:
            assert targets == [brk], (state.stack, state.buffer, costs)
        elif brk in targets:
            assert free == [brk], (state.stack, state.buffer, losses)
        move = rng.choice(valid) if rng.random() < explore else rng.choice(targets)
        breaks += move == brk
        state.apply(move)
    if explore == 0.0:
        assert state.loss() == 0 and breaks == len(starts) - 1
        assert list(state.finish()[0]) == gold_heads


@settings(max_examples=scaled(60))
@given(doc=documents(max_sentences=4, max_words=6))
def test_static_oracle_builds_gold_document(doc):
    gold_heads, gold_labels = doc
    n = len(gold_heads)
    rsys = ref.System(NAME, N_LABELS)
    dynamic = make_system()
    static = make_system(oracle="static")
    state = dynamic.new_state(gold_heads, gold_labels)
    static_state = static.new_state(gold_heads, gold_labels)
    cfg = ref.initial_config(n)
    breaks = steps = 0
    while not state.is_final():
        move = static_state.static_move()
        valid = static_state.valid_moves()
        assert move in valid, (move, cfg)
        assert state.costs()[move] == 0
        static_costs = static_state.costs()
        for m in range(static.n_moves):
            assert static_costs[m] == (0.0 if m == move else (1.0 if m in valid else INVALID))
        breaks += move == static.n_moves - 1
        if move == static.n_moves - 1:
            # A Break exactly where a gold sentence starts.
            assert any(start == state.buffer[0] - 1 for start, _ in sentence_spans(gold_heads))
        state.apply(move)
        static_state.apply(move)
        cfg = rsys.apply(cfg, move)
        check_same_configuration(static, rsys, static_state, cfg)
        check_invariants(static_state)
        steps += 1
        assert steps <= 2 * n
    assert breaks == len(sentence_spans(gold_heads)) - 1
    tree_heads, tree_labels = state.finish()
    assert list(tree_heads) == gold_heads
    assert all(tree_labels[k] == gold_labels[k] for k in range(n) if gold_heads[k] != 0)
    assert state.loss() == 0


def test_random_move_sequences_terminate():
    """Uniformly random valid moves on documents of 1..40 words: never
    stuck, final within 2n moves, a forest of consecutive trees."""
    rng = random.Random(11)
    system = make_system()
    rsys = ref.System(NAME, N_LABELS)
    for _ in range(scaled(100)):
        heads, labels = random_document(rng, max_sentences=6, max_words=8)
        n = len(heads)
        state = system.new_state(heads, labels)
        cfg = ref.initial_config(n)
        steps = 0
        while not state.is_final():
            valid = state.valid_moves()
            assert valid and valid == rsys.valid_moves(cfg)
            move = rng.choice(valid)
            state.apply(move)
            cfg = rsys.apply(cfg, move)
            steps += 1
            assert steps <= 2 * n
        check_invariants(state)
        sentence_spans(list(state.finish()[0]))
