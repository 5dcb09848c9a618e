"""Beam search (decoders/beam_search.pyx, decoders/beam.py) against the
greedy decoder and exhaustive search, for every system of the registry.

- width 1 takes exactly the greedy decoder's moves (random models, ties
  included, and a trained pipeline);
- with a width at least the number of complete move sequences, nothing is
  pruned: the beam returns the highest-scoring sequence, found by brute force
  over every sequence of short sentences (sequence scores summed in Python);
- outputs are single-rooted trees; the gold beam keeps exactly the zero-loss
  moves; beam training learns and the component's settings behave as spaCy
  users expect.
"""
import json
import pickle
import random
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from benchmarks import main as lab_main
from benchmarks.beam_widths import beam_component
from conftest import make_global_nlp, make_nlp, random_heads, sample_docs, train, tree_ok
from spacy_nonmono.decoders.beam_search import BeamBatch
from spacy_nonmono.decoders.state_batch import StateBatch
from spacy_nonmono.cli.common import InputError
from spacy_nonmono.evaluation import evaluate_pipeline
from spacy_nonmono.models.scoring import HostWeights, score_states
from spacy_nonmono.systems import get_system

ROOT = Path(__file__).resolve().parents[1]

SYSTEMS = ["covington", "covington_nm", "arc_eager", "arc_eager_nm2013", "arc_eager_tree",
           "arc_eager_unshift", "arc_standard", "swap_lazy", "swap_stay_eager", "mh3", "mh4"]

# Sentence lengths whose complete move sequences (one label) number at most
# about 10,000, so brute force stays quick.
EXACT_LENGTHS = {"covington": 4, "covington_nm": 3, "arc_eager": 5, "arc_eager_nm2013": 5,
                 "arc_eager_tree": 5, "arc_eager_unshift": 4, "arc_standard": 5,
                 "swap_lazy": 4, "swap_stay_eager": 3, "mh3": 5, "mh4": 5}

NH, NP = 6, 2


def random_model(system, n, rng, scale=1.0):
    """A token table for one sentence of n words (rows 0..n-1 the words, row
    n the root) and step weights, random normal times `scale` (0: every
    score ties)."""
    nF, nO = system.n_context, system.n_moves
    table = (rng.standard_normal((n + 2, nF, NH, NP)) * scale).astype(numpy.float32)
    weights = HostWeights(rng.standard_normal((NH, NP)) * scale,
                          rng.standard_normal((nO, NH)) * scale,
                          rng.standard_normal(nO) * scale, nF)
    return table, weights


def random_gold(system, pyrng, shortest, longest):
    """A random gold tree the system can learn from (projective for a
    projective system): heads, and labels of two (-1 on the root's word)."""
    n = pyrng.randint(shortest, longest)
    heads = random_heads(pyrng, n, projective=system.projective)
    return heads, [-1 if h == 0 else pyrng.randrange(2) for h in heads]


def random_cases(system, seed, count, shortest, longest):
    """`count` random gold trees, each with a random model for its length:
    (heads, labels, table, weights)."""
    rng, pyrng = numpy.random.default_rng(seed), random.Random(seed)
    for _ in range(count):
        heads, labels = random_gold(system, pyrng, shortest, longest)
        yield (heads, labels) + random_model(system, len(heads), rng)


def beam_parse(system, lengths, table, weights, width, density=0.0):
    offsets = list(numpy.cumsum([0] + list(lengths[:-1])))
    batch = BeamBatch(system, lengths, offsets, sum(lengths), width, density)
    batch.parse(table, weights)
    return batch.finish()


def greedy_parse(system, lengths, table, weights):
    offsets = list(numpy.cumsum([0] + list(lengths[:-1])))
    batch = StateBatch(system, lengths, offsets, sum(lengths))
    batch.parse(table, weights)
    return batch.finish()


@pytest.mark.parametrize("name", SYSTEMS)
def test_width_one_is_greedy(name):
    system = get_system(name)(labels=["a", "b", "c"])
    rng = numpy.random.default_rng(7)
    for scale in (1.0, 0.0, 0.01):
        lengths = [int(k) for k in rng.integers(1, 14, size=6)]
        table, weights = random_model(system, sum(lengths), rng, scale)
        beam = beam_parse(system, lengths, table, weights, width=1)
        greedy = greedy_parse(system, lengths, table, weights)
        for part in (0, 1):
            assert [a.tolist() for a in beam[part]] == [a.tolist() for a in greedy[part]]


def best_sequences(system, n, table, weights):
    """(best score, trees of the best-scoring complete sequences) by brute
    force, a sequence's score the sum of its moves' scores."""
    best = [-numpy.inf, set()]

    def visit(state, score):
        if state.is_final():
            tree = tuple(map(tuple, state.finish()))
            if score > best[0] + 1e-9:
                best[0], best[1] = score, {tree}
            elif score >= best[0] - 1e-9:
                best[1].add(tree)
            return
        ids = numpy.asarray([state.context()], dtype=numpy.int32)
        scores = score_states(weights, table, ids)[0][0]
        for move in state.valid_moves():
            child = state.copy()
            child.apply(move, scores)
            visit(child, score + float(scores[move]))

    # A ParseState reads token row k for word k and row 0 for the root.
    visit(system.new_state(n=n), 0.0)
    return best


def count_sequences(state):
    if state.is_final():
        return 1
    total = 0
    for move in state.valid_moves():
        child = state.copy()
        child.apply(move)
        total += count_sequences(child)
    return total


@pytest.mark.parametrize("name", SYSTEMS)
def test_wide_beam_finds_the_best_sequence(name):
    system = get_system(name)(labels=["a"])
    rng = numpy.random.default_rng(11)
    for n in range(1, EXACT_LENGTHS[name] + 1):
        width = count_sequences(system.new_state(n=n))
        for _ in range(2):
            table, weights = random_model(system, n, rng)
            best_score, best_trees = best_sequences(system, n, table, weights)
            batch = BeamBatch(system, [n], [1], 0, width)     # ParseState's rows
            batch.parse(table, weights)
            score = batch.snapshot()["score"][0]
            heads, labels = batch.finish()
            assert score == pytest.approx(best_score, abs=1e-6)
            assert (tuple(heads[0].tolist()), tuple(labels[0].tolist())) in best_trees


@pytest.mark.parametrize("name", SYSTEMS)
def test_beam_outputs_are_single_rooted_trees(name):
    system = get_system(name)(labels=["a", "b"])
    rng = numpy.random.default_rng(3)
    lengths = [int(k) for k in rng.integers(1, 20, size=8)]
    table, weights = random_model(system, sum(lengths), rng)
    for width, density in ((4, 0.0), (8, 0.001)):
        heads, _ = beam_parse(system, lengths, table, weights, width, density)
        for h in heads:
            h = h.tolist()
            assert h.count(0) == 1
            for k in range(1, len(h) + 1):
                seen, v = set(), k
                while v != 0:
                    assert v not in seen and 1 <= v <= len(h)
                    seen.add(v)
                    v = h[v - 1]


@pytest.mark.parametrize("name", ["covington_nm", "arc_eager_unshift", "swap_lazy",
                                  "arc_standard", "mh3"])
def test_gold_beam_keeps_zero_loss_moves_and_builds_the_gold_tree(name):
    """With an exact oracle (or a static one: its moves cost 0), the gold
    beam's histories are made of zero-loss moves only (summed loss 0) and end
    in the gold tree (tests/test_losses.py: any zero-loss history does)."""
    system = get_system(name)(labels=["a", "b"])
    for heads, labels, table, weights in random_cases(system, 5, 10, 2, 9):
        n = len(heads)
        batch = BeamBatch(system, [n], [0], n, 4, gold_heads=[heads], gold_labels=[labels],
                          gold_only=True)
        while not batch.is_done:
            sentences, entries = batch.live()
            scores = score_states(weights, table, batch.get_context(sentences, entries))[0]
            batch.advance(sentences, entries, scores)
            assert (batch.snapshot()["loss"] == 0).all()
        out_heads, out_labels = batch.finish()
        assert out_heads[0].tolist() == heads
        assert [l for l, h in zip(out_labels[0].tolist(), heads) if h != 0] == \
            [l for l, h in zip(labels, heads) if h != 0]


def test_bad_beam_settings_are_clear_errors():
    for options, message in (({"width": 0}, "width must be an integer"),
                             ({"width": 2.5}, "width must be an integer"),
                             ({"density": 1.0}, "density must be in"),
                             ({"update_prob": 1.5}, "update_prob must be in"),
                             ({"update": "late"}, "update must be one of"),
                             ({"widht": 4}, "has no option 'widht'; its options: 'width'")):
        with pytest.raises(ValueError, match=message):
            make_nlp(decoding="beam", decoding_options=options)
    with pytest.raises(ValueError, match="decoding = 'greedy' has no option 'widht'; its "
                       "options: none"):
        make_nlp(decoding_options={"widht": 4})
    # The beam's options are left aside by the greedy decoder (a switch at load time).
    assert make_nlp(decoding_options={"width": 4}).get_pipe("nonmono_parser").decoder.options == {}


def test_beam_widths_components():
    """The parsers `beam-widths` sets a width on, and those it refuses."""
    assert beam_component(make_nlp(), "p") == ("nonmono_parser", "nonmono_parser")
    spacy_beam = spacy.blank("en")
    spacy_beam.add_pipe("beam_parser", name="parser")
    assert beam_component(spacy_beam, "p") == ("parser", "beam_parser")
    spacy_greedy = spacy.blank("en")
    spacy_greedy.add_pipe("parser")
    with pytest.raises(InputError, match="greedy parser has no beam"):
        beam_component(spacy_greedy, "p")
    with pytest.raises(InputError, match="decodes globally"):
        beam_component(make_global_nlp("mh4"), "p")


@pytest.fixture(scope="module")
def train_examples():
    docs = sample_docs("train", n_sents_per_doc=1, limit=40)
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d) for d in docs]


def heads_of(docs):
    return [[t.head.i for t in doc] for doc in docs]


def test_beam_training_learns_round_trips_and_switches_decoders(train_examples, tmp_path):
    """Beam updates alone fit a small training set (greedy updates are off),
    and the pipeline behaves as a greedy one does."""
    spacy.util.fix_random_seed(0)
    examples = train_examples[:15]
    nlp = make_nlp(system="arc_eager_unshift", decoding="beam",
                   decoding_options={"width": 4, "update_prob": 1.0})
    history = train(nlp, examples, epochs=30)
    assert sum(history[-4:]) < 0.8 * sum(history[:4]), history
    words = [[t.text for t in eg.reference] for eg in examples]
    parsed = list(nlp.pipe([Doc(nlp.vocab, words=w) for w in words]))
    assert all(tree_ok(doc) for doc in parsed)
    correct = sum(p.head.i == g.head.i for doc, eg in zip(parsed, examples)
                  for p, g in zip(doc, eg.reference))
    assert correct / sum(len(doc) for doc in parsed) > 0.8
    nlp.to_disk(tmp_path / "beam")
    loaded = spacy.load(tmp_path / "beam")
    assert loaded.get_pipe("nonmono_parser").decoder.width == 4
    docs = lambda model: [Doc(model.vocab, words=w) for w in words]  # noqa: E731
    assert heads_of(loaded.pipe(docs(loaded))) == heads_of(parsed)
    unpickled = pickle.loads(pickle.dumps(loaded))
    assert heads_of(unpickled.pipe(docs(unpickled))) == heads_of(parsed)
    # The model is the greedy decoder's: load it greedily, or with width 1,
    # and the parses are the same.
    greedy = spacy.load(tmp_path / "beam",
                        config={"components": {"nonmono_parser": {"decoding": "greedy"}}})
    width_one = spacy.load(tmp_path / "beam",
                           config={"components": {"nonmono_parser": {
                               "decoding_options": {"width": 1}}}})
    assert heads_of(width_one.pipe(docs(width_one))) == heads_of(greedy.pipe(docs(greedy)))
    # Preset sentences, awkward and over-long docs (windows), as greedy.
    words = "The dog barked . A cat slept . Birds sing".split()
    starts = [True, False, False, False, True, False, False, False, True, False]
    doc = loaded(Doc(loaded.vocab, words=words, sent_starts=starts))
    assert [s.start for s in doc.sents] == [0, 4, 8] and tree_ok(doc)
    limit = loaded.get_pipe("nonmono_parser").max_sentence_length
    for words in ([], ["Hello"], ["a", " ", "b", "\n"], ["word"] * (limit + 7)):
        doc = loaded(Doc(loaded.vocab, words=words))
        assert len(doc) == len(words) and (not words or tree_ok(doc))
    # `beam-widths` parses with each width set at load time: width 1 scores
    # as the greedy decoder does.
    gold = ROOT / "assets" / "sample" / "en_ewt-sample-dev.conllu"
    assert lab_main(["beam-widths", str(tmp_path / "beam"), "--gold", str(gold), "--widths", "1,3",
                 "--json", str(tmp_path / "widths.json")]) == 0
    by_width = json.loads((tmp_path / "widths.json").read_text())["results"][str(tmp_path / "beam")]
    assert by_width["1"]["las"] == pytest.approx(evaluate_pipeline(greedy, gold).to_dict()["las"])
    assert by_width["3"]["las"] == pytest.approx(evaluate_pipeline(spacy.load(
        tmp_path / "beam", config={"components": {"nonmono_parser": {
            "decoding_options": {"width": 3}}}}),
        gold).to_dict()["las"])


def beam_histories(system, heads, labels, table, weights, width, early=False):
    """One sentence's predicted and gold beams run to the end, recorded."""
    from spacy_nonmono.decoders.beam import BeamHistories

    n = len(heads)
    gold = dict(gold_heads=[heads], gold_labels=[labels])
    system.reseed_oracle(3)
    beams = (BeamBatch(system, [n], [1], 0, width, 0.0, **gold),
             BeamBatch(system, [n], [1], 0, width, 0.0, gold_only=True, **gold))
    history = BeamHistories(1, width, system.n_moves, early=early)
    while not all(beam.is_done for beam in beams):
        live = [beam.live() for beam in beams]
        scores = score_states(weights, table, numpy.concatenate(
            [beam.get_context(*rows) for beam, rows in zip(beams, live)]))[0]
        n_pred = len(live[0][0])
        beams[0].advance(*live[0], numpy.ascontiguousarray(scores[:n_pred]))
        beams[1].advance(*live[1], numpy.ascontiguousarray(scores[n_pred:]))
        history.record(beams, live, (0, n_pred), len(scores))
    return history


def beam_loss(system, heads, labels, table, weights, width, early=False):
    """The beam update's loss of one sentence (max-violation or early), its
    d_scores summed over rows (the gradient with respect to the output bias),
    and what the loss's shape depends on (violation step, histories at it)."""
    history = beam_histories(system, heads, labels, table, weights, width, early)
    d_scores, loss = history.gradient()
    step = int(history.violation_step[0])
    shape = (step, tuple(tuple(s["key"].tolist()) for s, _ in history.steps[step][1])
             if step >= 0 else None)
    return loss, sum(d.sum(axis=0) for d in d_scores), shape


@pytest.mark.parametrize("early", [False, True], ids=["max_violation", "early"])
@pytest.mark.parametrize("name", ["arc_eager_unshift", "covington_nm", "swap_stay_eager",
                                  "arc_standard"])
def test_beam_update_gradient_matches_finite_differences(name, early):
    """d loss / d (output bias) from the backtracked histories equals central
    differences, wherever a small change leaves the violation step and the
    beams' histories as they were (the loss is piecewise smooth)."""
    system = get_system(name)(labels=["a", "b"])
    rng = numpy.random.default_rng(2)
    pyrng = random.Random(2)
    checked = 0
    for _ in range(6):
        heads, labels = random_gold(system, pyrng, 4, 8)
        table, _ = random_model(system, len(heads), rng)
        hidden_b = rng.standard_normal((NH, NP))
        W, b = rng.standard_normal((system.n_moves, NH)), rng.standard_normal(system.n_moves)
        weights = HostWeights(hidden_b, W, b, system.n_context)
        loss, grad, shape = beam_loss(system, heads, labels, table, weights, 3, early)
        if shape is None:
            continue
        eps = 1e-3
        for m in numpy.argsort(-abs(grad))[:5]:
            values = []
            for sign in (1, -1):
                bias = b.copy()
                bias[m] += sign * eps
                moved = HostWeights(hidden_b, W, bias, system.n_context)
                values.append(beam_loss(system, heads, labels, table, moved, 3, early))
            if values[0][2] != shape or values[1][2] != shape:
                continue
            assert (values[0][0] - values[1][0]) / (2 * eps) == pytest.approx(grad[m], abs=1e-2)
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name", ["arc_eager_unshift", "covington_nm", "swap_stay_eager"])
def test_early_update_is_the_first_step_without_a_gold_history(name):
    """The early update's step is the first at which no predicted history is
    as good as the best gold one (and none when a gold history survives to
    the end). That step is a violation too, so the max-violation update is
    made whenever the early one is."""
    system = get_system(name)(labels=["a", "b"])
    updates = 0
    for heads, labels, table, weights in random_cases(system, 5, 12, 3, 8):
        early = beam_histories(system, heads, labels, table, weights, 2, early=True)
        lost = [snapshots[0][0]["loss"].min() > snapshots[1][0]["loss"].min()
                for _, snapshots in early.steps]
        expected = lost.index(True) if any(lost) else -1
        assert int(early.violation_step[0]) == expected
        latest = beam_histories(system, heads, labels, table, weights, 2)
        assert (int(latest.violation_step[0]) >= 0) == (expected >= 0)
        updates += expected >= 0
    assert updates >= 6
