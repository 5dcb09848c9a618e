"""The Covington training targets that stop the scan (`tie_break`): when Shift
and No-Arc both cost 0, the target prefers Shift (or weights No-Arc down).
Following the preferred moves (the targets of full weight) from any
configuration must still reach a tree with the oracle's loss: exactly the
exact loss for `covington`, at most the loss expression's value for
`covington_nm`. And the tie-break must actually fire."""
import random

import numpy

import pytest
from hypothesis import given, settings

import reference_covington as ref
from benchmarks.oracle_analysis import observing
from conftest import scaled
from covington_walks import LABELS, gold_trees, seeds, walk, walk_policies
from spacy_nonmono.systems.covington import TIE_BREAKS, Covington
from spacy_nonmono.systems.covington_nm import CovingtonNM

TIES = [t for t in TIE_BREAKS if t != "none"]


def actual_loss(state, gold_heads, gold_labels):
    return ref.final_loss((-1,) + tuple(state.heads), (-1,) + tuple(state.labels),
                          gold_heads, gold_labels)


def preferred_completion(state, rng, tally):
    """Follow random moves of least cost (the targets of full weight) to a
    final configuration; return it and the least costs paid on the way."""
    state = state.copy()
    paid = 0.0
    while not state.is_final():
        costs = state.costs()
        valid = state.valid_moves()
        least = min(costs[m] for m in valid)
        preferred = [m for m in valid if costs[m] == least]
        shift, no_arc = 0, 1
        if least == 0 and costs[shift] == 0 and no_arc in valid and costs[no_arc] > 0:
            tally["broken ties"] += 1
            assert costs[no_arc] <= 1.0
        paid += least
        state.apply(rng.choice(preferred))
    return state, paid


@pytest.mark.parametrize("tie_break", TIES)
@settings(max_examples=scaled(60))
@given(tree=gold_trees(), policy=walk_policies, seed=seeds)
def test_preferred_moves_reach_the_exact_loss(tie_break, tree, policy, seed):
    gold_heads, gold_labels = tree
    rng = random.Random(seed)
    system = Covington(labels=LABELS, tie_break=tie_break)
    tally = {"broken ties": 0}

    def complete(state, cfg):
        expected = state.loss()
        final, paid = preferred_completion(state, rng, tally)
        assert paid == 0        # an exact oracle always has a zero-cost move
        assert actual_loss(final, gold_heads, gold_labels) == expected

    walk(system, ref, gold_heads, gold_labels, rng, policy, complete)


@pytest.mark.parametrize("loss", ["lower", "pc_upper", "upper"])
@pytest.mark.parametrize("tie_break", TIES)
@settings(max_examples=scaled(30))
@given(tree=gold_trees(), policy=walk_policies, seed=seeds)
def test_nonmonotonic_preferred_moves_stay_within_the_bound(loss, tie_break, tree, policy, seed):
    import reference_covington_nm as ref_nm

    gold_heads, gold_labels = tree
    rng = random.Random(seed)
    system = CovingtonNM(labels=LABELS, loss=loss, tie_break=tie_break)
    tally = {"broken ties": 0}

    def complete(state, cfg):
        bound = state.loss()
        final, paid = preferred_completion(state, rng, tally)
        assert actual_loss(final, gold_heads, gold_labels) <= bound + paid

    walk(system, ref_nm, gold_heads, gold_labels, rng, policy, complete)


def _wrong_repairs(state, gold_heads):
    """The valid arc moves that would remove an arc and build a non-gold one."""
    i, j = state.focus
    wrong = []
    for m in state.valid_moves():
        kind = state.system.move_kind(m)
        if kind not in ("L", "R"):
            continue
        head, dep = (j, i) if kind == "L" else (i, j)
        after = state.copy()
        after.apply(m)
        removed = any(h != -1 and h != a for h, a in zip(state.heads, after.heads))
        if removed and gold_heads[dep - 1] != head:
            wrong.append(m)
    return wrong


@pytest.mark.parametrize("loss", ["lower", "upper"])
@pytest.mark.parametrize("options,replace_cost", [
    ({"replace_tie_break": "monotonic"}, 1.0),
    ({"replace_tie_break": "weighted", "replace_weight": 0.25}, 0.75)])
@settings(max_examples=scaled(40))
@given(tree=gold_trees(), policy=walk_policies, seed=seeds)
def test_replace_tie_break_keeps_the_bound_and_fires(loss, options, replace_cost, tree, policy,
                                                     seed):
    """replace_tie_break "monotonic" ("weighted"): a zero-cost arc move that
    replaces a wrong arc by a wrong arc is a non-target (a target of weight
    replace_weight, cost 1 - weight) exactly when another zero-cost move
    removes no arc; the other costs are those of "none"; following the
    preferred moves stays within the loss expression."""
    import reference_covington_nm as ref_nm

    gold_heads, gold_labels = tree
    rng = random.Random(seed)
    plain = CovingtonNM(labels=LABELS, loss=loss, replace_tie_break="none")
    system = CovingtonNM(labels=LABELS, loss=loss, **options)
    tally = {"broken ties": 0}

    def complete(state, cfg):
        costs = state.costs()
        plain_costs = state.copy(plain).costs()
        wrong = set(_wrong_repairs(state, gold_heads))
        keepers = [m for m in state.valid_moves() if m not in wrong and plain_costs[m] == 0]
        for m in state.valid_moves():
            if m in wrong and plain_costs[m] == 0 and keepers:
                assert costs[m] == replace_cost
                tally["broken ties"] += 1
            else:
                assert costs[m] == plain_costs[m]
        bound = state.loss()
        final, paid = preferred_completion(state, rng, {"broken ties": 0})
        assert actual_loss(final, gold_heads, gold_labels) <= bound + paid
        tally["configurations"] = tally.get("configurations", 0) + 1

    walk(system, ref_nm, gold_heads, gold_labels, rng, policy, complete)


@pytest.mark.parametrize("system_class", [Covington, CovingtonNM])
@pytest.mark.parametrize("tie_break", TIES)
def test_preferred_moves_from_the_start_rebuild_gold_and_break_ties(system_class, tie_break):
    rng = random.Random(3)
    system = system_class(labels=LABELS, tie_break=tie_break)
    tally = {"broken ties": 0}
    for heads, labels in ([0], [0]), ([3, 4, 0, 3], [0, 1, 2, 0]), \
            ([0, 4, 1, 1, 2], [1, 1, 1, 2, 0]), ([2, 0, 5, 2, 2, 3], [0, 1, 2, 0, 1, 2]):
        final, paid = preferred_completion(system.new_state(heads, labels), rng, tally)
        assert paid == 0 and (final.heads, final.labels) == (heads, labels)
    assert tally["broken ties"] > 0


def test_preferred_moves_on_ud_sentences(ud_sentences):
    rng = random.Random(5)
    for tie_break in TIES:
        system = Covington(labels=LABELS, tie_break=tie_break)
        tally = {"broken ties": 0}
        for _, _, heads, deprels in ud_sentences[:60]:
            heads = list(heads)
            labels = [sum(map(ord, d)) % len(LABELS) for d in deprels]
            state = system.new_state(heads, labels)
            # From a configuration a few random moves in, and from the start.
            for _ in range(rng.randrange(0, 2 * len(heads))):
                if state.is_final():
                    break
                state.apply(rng.choice(state.valid_moves()))
            expected = state.loss()
            final, paid = preferred_completion(state, rng, tally)
            assert paid == 0 and actual_loss(final, heads, labels) == expected
        assert tally["broken ties"] > 0


def test_replace_tie_break_fires_on_random_walks():
    """The tie-break is not vacuous: over random walks with wrong arcs, some
    zero-cost wrong-for-wrong replacements become non-targets."""
    rng = random.Random(7)
    system = CovingtonNM(labels=LABELS, loss="upper", replace_tie_break="monotonic")
    plain = CovingtonNM(labels=LABELS, loss="upper", replace_tie_break="none")
    fired = 0
    for heads in ([2, 0, 2, 3, 3, 5], [0, 1, 1, 3, 4, 4, 2], [3, 3, 0, 3, 6, 4]):
        for _ in range(40):
            state = system.new_state(heads, [0] * len(heads))
            while not state.is_final():
                costs, plain_costs = state.costs(), state.copy(plain).costs()
                fired += sum(1 for m in state.valid_moves() if costs[m] != plain_costs[m])
                state.apply(rng.choice(state.valid_moves()))
    assert fired > 0


def test_tie_break_options():
    assert Covington(labels=LABELS).options["tie_break"] == "weighted"
    assert Covington(labels=LABELS).options["no_arc_weight"] == 0.9
    assert Covington(labels=LABELS).options["scan_explore_prob"] == 0.75
    assert CovingtonNM(labels=LABELS).options["scan_explore_prob"] == 0.0
    assert Covington(labels=LABELS).weak_target_replaces is None      # "any" least-cost move
    shift_only = Covington(labels=LABELS, scan_explore_replaces="shift").weak_target_replaces
    assert shift_only.tolist() == [int(name == "S") for name in Covington(labels=LABELS).move_names]
    with pytest.raises(ValueError, match="scan_explore_replaces"):
        Covington(labels=LABELS, scan_explore_replaces="arcs")
    with pytest.raises(ValueError, match="Invalid scan_explore_prob 1.5"):
        Covington(labels=LABELS, scan_explore_prob=1.5)
    assert CovingtonNM(labels=LABELS).options["no_arc_weight"] == 0.75
    assert CovingtonNM(labels=LABELS).options["replace_tie_break"] == "weighted"
    assert CovingtonNM(labels=LABELS).options["replace_weight"] == 0.75
    with pytest.raises(ValueError, match="Invalid replace_weight 1.5"):
        CovingtonNM(labels=LABELS, replace_tie_break="weighted", replace_weight=1.5)
    with pytest.raises(ValueError, match="Unknown tie_break 'scan'"):
        Covington(labels=LABELS, tie_break="scan")
    with pytest.raises(ValueError, match="Invalid no_arc_weight 2"):
        Covington(labels=LABELS, tie_break="weighted", no_arc_weight=2)
    # Gold 0 -> 1 -> 2: after building both arcs the focus is (0, 2), where
    # Shift and No-Arc both cost 0 in the exact oracle.
    for tie_break, no_arc_cost in [("none", 0.0), ("shift", 1.0), ("shift_if_headed", 1.0),
                                   ("weighted", 0.75)]:
        system = Covington(labels=LABELS, tie_break=tie_break, no_arc_weight=0.25)
        state = system.new_state([0, 1], [0, 0])
        for move in (system.move_id("R", "l0"), 0, system.move_id("R", "l0")):
            state.apply(move)
        assert state.focus == (0, 2)
        assert state.costs()[:2] == [0.0, no_arc_cost], tie_break


@settings(max_examples=scaled(200), deadline=None)
@given(gold_trees(max_words=12))
def test_static_oracle_transitions_per_word(tree):
    """The reference the scan is measured against: the static oracle visits
    the focus words i = j-1 down to the leftmost word linked to j (the
    artificial root 0 included), one transition each, then shifts."""
    from benchmarks.oracle_analysis import static_oracle_transitions_per_word

    heads, labels = tree
    n = len(heads)
    expected = 0
    for j in range(1, n + 1):
        linked = [k for k in range(j) if heads[j - 1] == k or (k >= 1 and heads[k - 1] == j)]
        expected += (j - min(linked) + 1) if linked else 1
    for name in ("covington", "covington_nm"):
        assert static_oracle_transitions_per_word(name, [tree]) == pytest.approx(expected / n)


@pytest.mark.parametrize("explore", [0.0, 1.0])
def test_scan_explore_follows_no_arc_at_the_tie_in_training(explore):
    """scan_explore_prob: in a training update that follows the oracle, a
    state where Shift costs 0 and No-Arc is the weaker target ("weighted")
    takes No-Arc with that probability (always at 1, never at 0); the targets
    themselves are unchanged."""
    from spacy.tokens import Doc
    from spacy.training import Example
    from conftest import make_nlp, sample_docs

    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=8)]
    nlp = make_nlp(system="covington", follow_oracle_prob=1.0,
                   system_options={"scan_explore_prob": explore})
    nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("nonmono_parser")
    shift, no_arc = parser.moves.move_id("S"), parser.moves.move_id("N")
    tally = {"ties": 0, "no_arc": 0, "transitions": 0}

    def observe(batch, active, moves):
        costs, _ = batch.get_costs(active)
        tally["transitions"] += len(active)
        for row, move in zip(costs, moves):
            if row[shift] == 0 and 0 < row[no_arc] < 1:
                assert row[no_arc] == pytest.approx(0.1)     # the default weight 0.9
                tally["ties"] += 1
                tally["no_arc"] += int(move) == no_arc

    decoder = parser.decoder
    with observing(parser, observe):
        parser.update(examples, sgd=None, drop=0.0)
    assert parser.decoder is decoder     # the lab's observing decoder is gone again
    assert tally["ties"] > 0
    assert tally["no_arc"] == (tally["ties"] if explore == 1.0 else 0)


def test_scan_explore_replaces_only_shift_in_covington_nm():
    """In covington_nm a wrong arc that a later arc can replace often costs 0
    at the Shift/No-Arc tie; scan exploration replaces only Shift there, so
    with scan_explore_prob 1 a training update that follows the oracle takes
    No-Arc or a zero-cost arc at every tie, never Shift, and does take such
    arcs (a model with random output weights scores them above Shift at
    some ties; a fresh one scores every move alike and picks Shift, the
    lowest id)."""
    from spacy.tokens import Doc
    from spacy.training import Example
    from conftest import make_nlp, sample_docs

    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=8)]
    nlp = make_nlp(system="covington_nm", follow_oracle_prob=1.0,
                   system_options={"scan_explore_prob": 1.0, "replace_tie_break": "none"})
    nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("nonmono_parser")
    system = parser.moves
    shift, no_arc = system.move_id("S"), system.move_id("N")
    assert system.options["scan_explore_replaces"] == "shift"       # covington_nm's default
    assert system.weak_target_replaces.tolist() == [int(m == shift) for m in range(system.n_moves)]
    step = parser.model.get_ref("step")
    rng = numpy.random.default_rng(0)
    for name in ("W", "b"):
        step.set_param(name, rng.normal(size=step.get_param(name).shape).astype("f"))
    tally = {"ties": 0, "arcs": 0}

    def observe(batch, active, moves):
        costs, _ = batch.get_costs(active)
        for row, move in zip(costs, moves):
            if row[shift] == 0 and 0 < row[no_arc] < 1:
                tally["ties"] += 1
                assert move != shift
                if move != no_arc:
                    assert system.move_kind(int(move)) in ("L", "R") and row[move] == 0
                    tally["arcs"] += 1

    with observing(parser, observe):
        parser.update(examples, sgd=None, drop=0.0)
    assert tally["ties"] > 0 and tally["arcs"] > 0
