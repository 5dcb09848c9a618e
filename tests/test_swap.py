"""The swap systems (swap_lazy, swap_stay_eager) against the pure-Python
reference (tests/reference_swap.py): transitions, termination of any move
sequence within the proven bound, the static oracles rebuilding gold trees
(random non-projective trees and every sentence of the Gothic, Hungarian and
Latin training sets), the nonstatic oracle for any coin outcome, the paper's
Table 3 example."""
import random

import pytest

import reference_swap as ref
from conftest import scaled, ud_dir
from spacy_nonmono.systems import get_system

N_LABELS = 3
LABELS = ["a", "b", "c"]


def random_tree(rng, n):
    """A random tree over words 1..n (mostly non-projective for n > 4): heads,
    with label ids and the root's label -1 (any)."""
    order = rng.sample(range(1, n + 1), n)
    heads = [0] * n
    for pos in range(1, n):
        heads[order[pos] - 1] = order[rng.randrange(pos)]
    labels = [-1 if h == 0 else rng.randrange(N_LABELS) for h in heads]
    return heads, labels


def make(name, oracle=None, **options):
    return get_system(name)(labels=LABELS, oracle=oracle, **options)


def ref_config(state):
    """The Cython configuration in the reference's terms."""
    return ref.Config(list(state.stack), list(state.buffer), [-1] + list(state.heads),
                      [-1] + list(state.labels), set(state.unshifted))


def move_tuple(system, m):
    label = system.move_label(m)
    return system.move_kind(m), None if label is None else LABELS.index(label)


def valid_set(system, state):
    return {move_tuple(system, m) for m in state.valid_moves()}


def ref_valid_set(name, c):
    kinds, valid_kinds, _ = ref.SYSTEMS[name]
    ok = valid_kinds(c)
    return {(k, l) for k, l in ref.moves(kinds, N_LABELS) if k in ok}


def single_rooted_tree(heads):
    n = len(heads)
    if [h for h in heads].count(0) != 1 or any(not 0 <= h <= n for h in heads):
        return False
    for k in range(1, n + 1):
        seen, v = set(), k
        while v != 0:
            if v in seen:
                return False
            seen.add(v)
            v = heads[v - 1]
    return True


def run_oracle(system, heads, labels, check_ref=None):
    """Follow system's oracle from the initial state; return (heads, labels,
    moves made). check_ref(config) -> allowed move set, checked per move."""
    state = system.new_state(gold_heads=heads, gold_labels=labels)
    made = []
    while not state.is_final():
        m = state.static_move()
        assert m >= 0, (heads, state.stack, state.buffer)
        if check_ref is not None:
            assert move_tuple(system, m) in check_ref(ref_config(state)), (heads, made)
        state.apply(m)
        made.append(system.move_name(m))
        assert len(made) <= system.max_moves(len(heads))
    return state.heads, state.labels, made


def same_tree(gold_heads, gold_labels, heads, labels):
    """Equal heads and labels (the root's label is free)."""
    return heads == list(gold_heads) and all(
        g < 0 or g == l for g, l in zip(gold_labels, labels))


# ------------------------------------------------------------ transitions

@pytest.mark.parametrize("name", ["swap_lazy", "swap_stay_eager"])
def test_transitions_equal_the_reference(name):
    """On random walks over random trees of up to 10 words, the valid moves
    and the configuration after every move equal the reference's."""
    system = make(name)
    _, _, apply = ref.SYSTEMS[name]
    rng = random.Random(7)
    for _ in range(scaled(150)):
        n = rng.randint(1, 10)
        state = system.new_state(n=n)
        c = ref.initial(n)
        while not state.is_final():
            assert ref_config(state) == c
            valid = valid_set(system, state)
            assert valid == ref_valid_set(name, c), (c, valid)
            m = rng.choice(state.valid_moves())
            state.apply(m)
            c = apply(c, *move_tuple(system, m))
        assert ref.is_final(c) and ref_config(state) == c


@pytest.mark.parametrize("name,options", [("swap_lazy", {}), ("swap_stay_eager", {}),
                                          ("swap_stay_eager", {"context": "wide"})])
def test_context_equals_the_reference(name, options):
    """At every step of random walks, the context slots hold the reference's
    nodes (node k is token row k in a lone state; node 0 is the root row)."""
    system = make(name, **options)
    assert system.context_names == ref.CONTEXT_NAMES[name + ("-wide" if options else "")]
    assert system.n_context == len(system.context_names)
    _, _, apply = ref.SYSTEMS[name]
    rng = random.Random(11)
    for _ in range(scaled(100)):
        n = rng.randint(1, 10)
        state = system.new_state(n=n)
        root_row = system.new_state(n=n).context()[0]     # S0 = node 0 at the start
        c = ref.initial(n)
        while True:
            expected = ref.context(c)
            rows = [root_row if expected[slot] == 0 else expected[slot]
                    for slot in system.context_names]
            assert state.context() == rows, (c, dict(zip(system.context_names, state.context())))
            if state.is_final():
                break
            m = rng.choice(state.valid_moves())
            state.apply(m)
            c = apply(c, *move_tuple(system, m))


def policies(rng, system):
    prefer = {"swap": ("W", "U", "S"), "shift": ("S", "U", "W")}

    def uniform(valid):
        return rng.choice(valid)

    def adversarial(order):
        def choose(valid):
            for kind in order:
                mine = [m for m in valid if system.move_kind(m) == kind]
                if mine:
                    return rng.choice(mine)
            return rng.choice(valid)
        return choose

    return [uniform] + [adversarial(order) for order in prefer.values()]


@pytest.mark.parametrize("name", ["swap_lazy", "swap_stay_eager"])
def test_any_move_sequence_terminates_with_a_tree(name):
    """A model predicting garbage (random moves, or always Swap/Unshift/Shift
    when it can) never gets stuck, ends within max_moves(n), and finish()
    gives a single-rooted tree (stay-eager swap may attach several words to
    node 0; finish keeps the first)."""
    system = make(name)
    rng = random.Random(11)
    for trial in range(scaled(300)):
        n = rng.randint(1, 10) if trial % 10 else rng.randint(11, 30)
        for choose in policies(rng, system):
            state = system.new_state(n=n)
            steps = 0
            while not state.is_final():
                valid = state.valid_moves()
                assert valid, (state.stack, state.buffer)
                state.apply(choose(valid))
                steps += 1
                assert steps <= system.max_moves(n)
            assert not state.valid_moves()
            heads, _ = state.finish()
            assert single_rooted_tree(heads), heads


def test_unshift_and_right_root_only_where_the_table_allows():
    """Unshift is valid only where no other move is; Right-Root only in
    ([0, i], []) with i headless."""
    system = make("swap_stay_eager")
    rng = random.Random(5)
    for _ in range(scaled(200)):
        n = rng.randint(1, 8)
        state = system.new_state(n=n)
        while not state.is_final():
            kinds = {system.move_kind(m) for m in state.valid_moves()}
            if "U" in kinds:
                assert kinds == {"U"}
            if "RR" in kinds:
                assert len(state.stack) == 2 and not state.buffer
                assert state.heads[state.stack[-1] - 1] == -1
            state.apply(rng.choice(state.valid_moves()))


# ------------------------------------------------------------ the oracles

def lazy_check(heads, labels):
    return lambda c: {ref.lazy_oracle(c, heads, labels)}


def ses_check(heads, labels, nonstatic):
    return lambda c: ref.ses_oracle(c, heads, labels, nonstatic)


def test_static_oracles_rebuild_random_trees_as_the_reference_does():
    """On random (mostly non-projective) trees of up to 10 words each static
    oracle rebuilds the tree, labels included, within the move bound, making
    the reference oracle's move at every step."""
    lazy, ses = make("swap_lazy", "static"), make("swap_stay_eager", "static")
    rng = random.Random(3)
    for _ in range(scaled(400)):
        heads, labels = random_tree(rng, rng.randint(1, 10))
        for system, check in ((lazy, lazy_check(heads, labels)),
                              (ses, ses_check(heads, labels, False))):
            h, l, _ = run_oracle(system, heads, labels, check)
            assert same_tree(heads, labels, h, l), (system.name, heads, h)


def ud_training_trees():
    from spacy_nonmono.evaluation import read_gold
    from spacy_nonmono.conllu_io import gold_tree

    out = {}
    for tb in ("got_proiel", "hu_szeged", "la_perseus"):
        files = sorted((ud_dir() / tb).glob("*-train.conllu"))
        if files:
            out[tb] = [gold_tree(s) for s in read_gold(files[0], skip_invalid=True)[0]]
    if not out:
        pytest.skip(f"No UD training data under {ud_dir()}.")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name,oracle,options", [
    ("swap_lazy", "static", {}),
    ("swap_stay_eager", "static", {}),
    ("swap_stay_eager", "nonstatic", {}),
    ("swap_stay_eager", "nonstatic", {"shift_probability": 1.0, "root_shift_probability": 1.0}),
])
def test_oracles_rebuild_every_training_tree(name, oracle, options):
    """Every sentence of the Gothic, Hungarian and Latin training sets is
    rebuilt exactly (labels included) within the move bound."""
    for tb, trees in ud_training_trees().items():
        names = sorted({d for heads, deps in trees for h, d in zip(heads, deps) if h != 0})
        system = get_system(name)(labels=names, oracle=oracle, **options)
        system.reseed_oracle(1)
        for heads, deps in trees:
            labels = [-1 if h == 0 else names.index(d) for h, d in zip(heads, deps)]
            state = system.new_state(gold_heads=heads, gold_labels=labels)
            steps = 0
            while not state.is_final():
                state.apply(state.static_move())
                steps += 1
            assert steps <= system.max_moves(len(heads))
            assert same_tree(heads, labels, state.heads, state.labels), (tb, heads)


def test_nonstatic_oracle_rebuilds_the_tree_for_any_coin_outcome():
    """Every branch of the reference's nonstatic oracle (each coin either way)
    rebuilds the gold tree, on random trees of up to 7 words."""
    rng = random.Random(13)
    for _ in range(scaled(60)):
        heads, labels = random_tree(rng, rng.randint(1, 7))
        frontier, finals = [ref.initial(len(heads))], 0
        while frontier:
            c = frontier.pop()
            if ref.is_final(c):
                assert same_tree(heads, labels, c.heads[1:], c.labels[1:]), heads
                finals += 1
                continue
            chosen = ref.ses_oracle(c, heads, labels, nonstatic=True)
            assert chosen
            frontier.extend(ref.ses_apply(c, *move) for move in chosen)
            assert finals < 10000
        assert finals >= 1


@pytest.mark.parametrize("p", [(0.0, 0.0), (1.0, 1.0), (0.5, 0.5)])
def test_nonstatic_oracle_moves_are_the_references(p):
    """With any coin probabilities and seeds, the Cython nonstatic oracle's
    every move is one the reference allows, and the tree is rebuilt; with
    (0, 0) it is the static oracle."""
    rng = random.Random(17)
    system = make("swap_stay_eager", "nonstatic", shift_probability=p[0],
                  root_shift_probability=p[1])
    static = make("swap_stay_eager", "static")
    right_roots = 0
    for seed in range(scaled(100)):
        system.reseed_oracle(seed)
        heads, labels = random_tree(rng, rng.randint(1, 10))
        h, l, made = run_oracle(system, heads, labels, ses_check(heads, labels, True))
        assert same_tree(heads, labels, h, l)
        if p == (0.0, 0.0):
            assert made == run_oracle(static, heads, labels)[2]
        right_roots += made.count("RR")
    # Right-Root is learned only where the coin shifts the root.
    assert (right_roots > 0) == (p[1] > 0)


def test_nonstatic_coins_follow_the_seed():
    system = make("swap_stay_eager", "nonstatic", shift_probability=0.5,
                  root_shift_probability=0.5)
    rng = random.Random(19)
    trees = [random_tree(rng, 9) for _ in range(30)]

    def runs(seed):
        system.reseed_oracle(seed)
        return [run_oracle(system, h, l)[2] for h, l in trees]

    assert runs(4) == runs(4)
    assert runs(4) != runs(5)


def test_table_3_of_the_paper():
    """Kohita et al. (2017), Table 3: the static oracle's moves, stacks and
    buffers on the Finnish sentence of Figure 3."""
    labels = ["obj", "xcomp", "nmod", "punct"]
    system = get_system("swap_stay_eager")(labels=labels, oracle="static")
    heads = [3, 0, 2, 2, 4]
    gold_labels = [0, -1, 1, 2, 3]
    expected = [
        ("S", [0, 1], [2, 3, 4, 5]), ("W", [0], [2, 1, 3, 4, 5]),
        ("SR", [0], [2, 1, 3, 4, 5]), ("S", [0, 2], [1, 3, 4, 5]),
        ("S", [0, 2, 1], [3, 4, 5]), ("SL-obj", [0, 2, 1], [3, 4, 5]),
        ("D", [0, 2], [3, 4, 5]), ("SR-xcomp", [0, 2], [3, 4, 5]),
        ("S", [0, 2, 3], [4, 5]), ("D", [0, 2], [4, 5]), ("SR-nmod", [0, 2], [4, 5]),
        ("S", [0, 2, 4], [5]), ("SR-punct", [0, 2, 4], [5]), ("D", [0, 2], [5]),
        ("S", [0, 2, 5], []), ("D", [0, 2], []), ("D", [0], []),
    ]
    state = system.new_state(gold_heads=heads, gold_labels=gold_labels)
    for t, (move, stack, buffer) in enumerate(expected, start=1):
        m = state.static_move()
        name = system.move_name(m)
        assert name == move or (move == "SR" and name.startswith("SR-")), (t, name)
        state.apply(m)
        assert (state.stack, state.buffer) == (stack, buffer), t
    assert state.is_final() and state.heads == heads


def test_swaps_counted_by_hand():
    """Arcs 0->2, 2->3, 3->1, 1->4 (0->2 crosses 1->4): by hand, the lazy
    oracle swaps (1, 2) and (3, 4); stay-eager swap swaps (1, 2) and (1, 3)."""
    heads, labels = [3, 0, 2, 1], [0, -1, 1, 2]
    for name, swaps in (("swap_lazy", [(1, 2), (3, 4)]), ("swap_stay_eager", [(1, 2), (1, 3)])):
        system = make(name, "static")
        state = system.new_state(gold_heads=heads, gold_labels=labels)
        done = []
        while not state.is_final():
            m = state.static_move()
            if system.move_kind(m) == "W":
                pair = (state.stack[-2], state.stack[-1]) if name == "swap_lazy" else \
                    (state.stack[-1], state.buffer[0])
                done.append(pair)
            state.apply(m)
        assert done == swaps, name
        assert same_tree(heads, labels, state.heads, state.labels)


# ------------------------------------------- swap_stay_eager's dynamic oracle

def dynamic_system():
    # No coins: the nonstatic oracle's move is the static one, as the
    # reference computes it.
    return make("swap_stay_eager", "dynamic", shift_probability=0.0, root_shift_probability=0.0)


def reference_costs(system, c, heads, labels):
    chosen = ref.ses_oracle(c, heads, labels, nonstatic=False)
    chosen = next(iter(chosen)) if chosen else None
    return ref.ses_dynamic_costs(c, heads, labels, N_LABELS, chosen)


def test_dynamic_costs_equal_the_reference():
    """At every step of random walks (a model's errors included) on random
    trees of up to 12 words, the loss and every valid move's cost equal the
    reference's, and invalid moves cost INVALID_COST."""
    system = dynamic_system()
    rng = random.Random(23)
    for _ in range(scaled(150)):
        heads, labels = random_tree(rng, rng.randint(1, 12))
        state = system.new_state(gold_heads=heads, gold_labels=labels)
        c = ref.initial(len(heads))
        while not state.is_final():
            assert state.loss() == ref.ses_loss(c, heads, labels)
            expected = reference_costs(system, c, heads, labels)
            costs = state.costs()
            for m, cost in enumerate(costs):
                assert cost == expected.get(move_tuple(system, m), 9000), (c, system.move_name(m))
            # Mostly the oracle's least-cost moves, sometimes a random one.
            least = min(costs)
            pool = ([m for m in state.valid_moves() if costs[m] == least]
                    if rng.random() < 0.7 else state.valid_moves())
            m = rng.choice(pool)
            state.apply(m)
            c = ref.ses_apply(c, *move_tuple(system, m))
        assert state.loss() == ref.final_loss(c, heads, labels)


@pytest.mark.parametrize("max_words", [3, pytest.param(4, marks=pytest.mark.slow)])
def test_dynamic_loss_is_a_lower_bound_of_exhaustive_search(max_words):
    """Over every configuration reachable on random trees of 2 to max_words
    words: the approximate loss never exceeds the least loss exhaustive
    search reaches (it ignores word order), and equals it on most
    configurations; following least-cost moves from a configuration usually
    ends at that least loss. The measured shares are printed (pytest -s)."""
    rng = random.Random(29)
    configs = exact = optimal = 0
    for _ in range(scaled(25)):
        heads, labels = random_tree(rng, rng.randint(2, max_words))
        for key, least in ref.ses_exact_losses(heads, labels).items():
            c = ref.Config(*map(list, key[:4]), set(key[4]))
            approx = ref.ses_loss(c, heads, labels)
            assert approx <= least, (heads, key)
            configs += 1
            exact += approx == least
            if configs % 7:
                continue            # follow the oracle from every 7th only (time)
            while not ref.is_final(c):
                costs = reference_costs(None, c, heads, labels)
                c = ref.ses_apply(c, *min(costs, key=lambda m: (costs[m], ref.SES_KINDS.index(m[0]))))
            regret = ref.final_loss(c, heads, labels) - least
            assert regret >= 0, (heads, key, regret)
            optimal += regret == 0
    print(f"\nSES dynamic oracle: loss exact on {exact}/{configs} configurations "
          f"({exact / configs:.1%}); least-cost moves reach the least loss from "
          f"{optimal}/{configs // 7} ({optimal / (configs // 7):.1%})")
    assert exact >= 0.9 * configs and optimal >= 0.9 * (configs // 7), (configs, exact, optimal)


def test_dynamic_oracle_on_the_gold_path_is_the_static_oracle():
    """From the initial configuration, the least-cost moves include the static
    oracle's (coins off), every least-cost move costs 0, and following the
    static oracle through them rebuilds random trees and UD sentences."""
    system = dynamic_system()
    static = make("swap_stay_eager", "static")
    rng = random.Random(31)
    for _ in range(scaled(200)):
        heads, labels = random_tree(rng, rng.randint(1, 10))
        state = system.new_state(gold_heads=heads, gold_labels=labels)
        twin = static.new_state(gold_heads=heads, gold_labels=labels)
        while not state.is_final():
            costs = state.costs()
            m = twin.static_move()
            assert costs[m] == 0 == min(costs) == state.loss()
            state.apply(m)
            twin.apply(m)
        assert same_tree(heads, labels, state.heads, state.labels)


def test_dynamic_oracle_explores_and_is_the_default():
    """The dynamic oracle (the default) explores: `uses_static_oracle` is
    off, so training follows the model's moves; swap_lazy has none."""
    assert not dynamic_system().uses_static_oracle
    assert get_system("swap_stay_eager")(labels=LABELS).oracle == "dynamic"
    assert make("swap_stay_eager", "nonstatic").uses_static_oracle
    with pytest.raises(ValueError, match="Unknown oracle"):
        make("swap_lazy", "dynamic")
