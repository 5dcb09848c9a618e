"""Analyses of the non-monotonic Covington oracle and parser (Fernandez-Gonzalez
& Gomez-Rodriguez 2017): how tight the loss bounds are along the states that
training visits (section 5, Table 1), and what the parser's non-monotonic arc
moves do (section 6.3).

Both drive the pipeline's own `update`, with its greedy decoder swapped for
one that shows each training step to an observer (`observing`), so the
states analysed are exactly those training (or greedy parsing) reaches.
`arc_move_effects` thereby also computes gradients it throws away (no
optimizer step): wasted time in an offline analysis, in exchange for not
keeping a second copy of the step loop.
"""
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, Iterable, Optional

from spacy_nonmono.decoders.greedy import GreedyDecoder

BOUNDS = ("lower", "exact", "pc_upper", "upper")
# observer(batch, active, moves): called at every training step before the
# moves (one per active state of the StateBatch) are applied.
Observer = Callable[[object, object, object], None]


class ObservedBatch:
    """A training StateBatch whose `apply` first shows the step to the
    observer (the batch itself, the active states and their moves)."""

    def __init__(self, batch, observer: Observer):
        self.batch = batch
        self.observer = observer

    def __getattr__(self, name):
        return getattr(self.batch, name)

    def apply(self, active, moves, scores):
        self.observer(self.batch, active, moves)
        self.batch.apply(active, moves, scores)


class ObservedGreedyDecoder(GreedyDecoder):
    """The greedy decoder whose training steps call an observer before their
    moves are applied; otherwise the same update (and predict)."""

    def __init__(self, observer: Observer):
        super().__init__()
        self.observer = observer

    def train_batch(self, system, lengths, offsets, root_row, golds):
        batch = GreedyDecoder.train_batch(self, system, lengths, offsets, root_row, golds)
        return ObservedBatch(batch, self.observer)


@contextmanager
def observing(parser, observer: Observer):
    """Inside the block, the nonmono_parser trains with the greedy decoder
    and shows every training step to `observer`; its own decoder is put back
    after. A beam decoder's model is the greedy decoder's (the analyses then
    follow the parser's greedy steps); a global decoder has no steps (a
    ValueError)."""
    decoder = parser.decoder
    if decoder.model_kind != GreedyDecoder.model_kind:
        raise ValueError(f"decoding = {decoder.name!r} takes no transition steps to observe; "
                         "the analyses need a transition-based nonmono_parser.")
    parser.decoder = ObservedGreedyDecoder(observer)
    try:
        yield parser
    finally:
        parser.decoder = decoder


class _Enough(Exception):
    """Raised by an observer to stop a training loop early."""


class BoundTally:
    """Sums over configurations of each bound and of its relative difference
    to the exact loss."""

    def __init__(self):
        self.configs = 0          # configurations analysed
        self.unsettled = 0        # exact loss not found within the node budget
        self.settled = 0
        self.nontight = 0         # lower != pc_upper
        self.per_word = {name: 0.0 for name in BOUNDS}   # sum of value / sentence length
        self.values = {name: 0 for name in BOUNDS}       # sum of raw values
        self.rel_diff = {name: 0.0 for name in BOUNDS}   # sum of |bound - exact| / exact
        self.with_loss = 0        # settled configurations with exact > 0
        self.differs_at_zero = {name: 0 for name in BOUNDS}  # exact == 0, bound != 0
        self.search_nodes = 0

    def add(self, n_words: int, lower: int, exact: Optional[int], pc_upper: int, upper: int,
            nodes: int) -> None:
        self.configs += 1
        self.search_nodes += nodes
        self.nontight += lower != pc_upper
        if exact is None:
            self.unsettled += 1
            return
        self.settled += 1
        values = {"lower": lower, "exact": exact, "pc_upper": pc_upper, "upper": upper}
        for name, value in values.items():
            self.per_word[name] += value / max(1, n_words)
            self.values[name] += value
            if exact > 0:
                self.rel_diff[name] += abs(value - exact) / exact
            elif value != 0:
                self.differs_at_zero[name] += 1
        self.with_loss += exact > 0

    def summary(self) -> Dict[str, object]:
        s = max(1, self.settled)
        w = max(1, self.with_loss)
        return {
            "configurations": self.configs,
            "settled": self.settled,
            "unsettled": self.unsettled,
            "lower_below_pc_upper": self.nontight,
            "mean_search_nodes": self.search_nodes / max(1, self.configs),
            "mean_per_word": {k: v / s for k, v in self.per_word.items()},
            "mean": {k: v / s for k, v in self.values.items()},
            "mean_relative_difference": {k: v / w for k, v in self.rel_diff.items()},
            "configurations_with_loss": self.with_loss,
            "bound_nonzero_at_zero_loss": dict(self.differs_at_zero),
        }


def training_updates(config_path: Path, overrides: Dict[str, object]):
    """The pipeline `spacy train` would build from the config, and an endless
    iterator that makes one training update per step on the batches `spacy
    train` makes (shuffled each epoch). Yields the batch just learned from."""
    from spacy import util
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import create_train_batches
    from spacy.util import registry, resolve_dot_names

    config = util.load_config(config_path, overrides=overrides, interpolate=False)
    nlp = init_nlp(config)
    config = nlp.config.interpolate()
    T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
    (train_corpus,) = resolve_dot_names(config, [T["train_corpus"]])
    optimizer = T["optimizer"]

    def updates():
        for _, batch in create_train_batches(nlp, train_corpus, T["batcher"], 0):
            nlp.update(batch, sgd=optimizer, drop=T["dropout"])
            yield batch

    return nlp, updates()


def bound_tightness(config_path: Path, overrides: Dict[str, object], n_transitions: int,
                    max_nodes: int = 20000, log: Callable[[str], None] = print,
                    log_every: int = 10000) -> Dict[str, object]:
    """Train a `covington_nm` pipeline from `config_path` (with `overrides`,
    e.g. paths.train) exactly as `spacy train` would, and at each of the first
    `n_transitions` training transitions compute the lower, pc_upper and
    upper bounds and the exact loss (branch and bound, at most `max_nodes`
    configurations each) of the configuration the move is taken from."""
    nlp, updates = training_updates(config_path, overrides)
    parser = _nonmono_parser(nlp)
    system = parser.moves
    if system.name != "covington_nm":
        raise ValueError(f"bound_tightness needs system 'covington_nm', not {system.name!r}.")
    tally = BoundTally()
    started = time.time()

    def observe(batch, active, moves):
        for b in active:
            state = batch.parse_state(int(b))
            lower, pc_upper, upper = system.bounds(state)
            exact, nodes = system.exact_loss(state, max_nodes=max_nodes)
            tally.add(state.n, lower, exact, pc_upper, upper, nodes)
            if tally.configs % log_every == 0:
                log(f"  {tally.configs} transitions, {tally.unsettled} unsettled, "
                    f"{time.time() - started:.0f}s")
            if tally.configs >= n_transitions:
                raise _Enough()

    try:
        with observing(parser, observe):
            for _ in updates:
                pass
    except _Enough:
        pass
    result = tally.summary()
    result["seconds"] = time.time() - started
    result["loss"] = system.loss_name
    return result


def training_time(config_path: Path, overrides: Dict[str, object], n_steps: int) -> Dict[str, float]:
    """Seconds per training update over `n_steps` updates (after one warm-up
    update), and the transitions they made."""
    nlp, updates = training_updates(config_path, overrides)
    parser = _nonmono_parser(nlp)
    counted = {"transitions": 0}

    def observe(batch, active, moves):
        counted["transitions"] += len(active)

    next(updates)
    with observing(parser, observe):
        started = time.perf_counter()
        for _ in range(n_steps):
            next(updates)
        seconds = time.perf_counter() - started
    return {"seconds_per_step": seconds / n_steps, "transitions": counted["transitions"],
            "microseconds_per_transition": 1e6 * seconds / max(1, counted["transitions"])}


def arc_move_effects(nlp, examples: Iterable) -> Dict[str, object]:
    """Section 6.3: run the trained parser greedily over gold sentences and
    classify its arc moves: how many replaced (removed) an existing arc, and
    of those how many created a gold arc, and how many were harmful (removed
    a gold arc and created a non-gold one). Arcs compare heads only. Also
    counts all moves, so that the transitions per word split into the words'
    first arcs and the repairs."""
    parser = _nonmono_parser(nlp)
    counts = {"moves": 0, "arc_moves": 0, "replacing": 0, "replacing_created_gold": 0,
              "replacing_harmful": 0, "words": 0}
    system = parser.moves
    kinds = [system.move_kind(m) for m in range(system.n_moves)]

    def observe(batch, active, moves):
        for b, move in zip(active, moves):
            kind = kinds[int(move)]
            counts["moves"] += 1
            if kind not in ("L", "R"):
                continue
            state = batch.parse_state(int(b))
            gold = state.gold_heads
            before = state.heads
            i, j = state.focus
            state.apply(int(move))
            after = state.heads
            head, dep = (j, i) if kind == "L" else (i, j)
            removed = [k for k in range(len(before)) if before[k] != -1 and before[k] != after[k]]
            counts["arc_moves"] += 1
            if removed:
                counts["replacing"] += 1
                created_gold = gold[dep - 1] == head
                counts["replacing_created_gold"] += created_gold
                broke_gold = any(gold[k] == before[k] for k in removed)
                counts["replacing_harmful"] += broke_gold and not created_gold

    follow = parser.cfg["follow_oracle_prob"]
    parser.cfg["follow_oracle_prob"] = 0.0   # the model's own moves only
    try:
        with observing(parser, observe):
            batch = []
            for eg in examples:
                counts["words"] += len(eg.reference)
                batch.append(eg)
                if len(batch) == 64:
                    parser.update(batch, sgd=None, drop=0.0)   # no optimizer: weights stay
                    batch = []
            if batch:
                parser.update(batch, sgd=None, drop=0.0)
    finally:
        parser.cfg["follow_oracle_prob"] = follow
    arcs = max(1, counts["arc_moves"])
    replacing = max(1, counts["replacing"])
    counts["replacing_share"] = counts["replacing"] / arcs
    counts["created_gold_share"] = counts["replacing_created_gold"] / replacing
    counts["harmful_share"] = counts["replacing_harmful"] / replacing
    words = max(1, counts["words"])
    for key in ("moves", "arc_moves", "replacing"):
        counts[f"{key}_per_word"] = counts[key] / words
    return counts


def _nonmono_parser(nlp):
    from spacy_nonmono.pipeline.parser import NonMonoParser

    for name, pipe in nlp.pipeline:
        if isinstance(pipe, NonMonoParser):
            return pipe
    raise ValueError("The pipeline has no nonmono_parser component.")


def static_oracle_counts(system_name: str, trees: Iterable, oracle: str = "static",
                         seed: int = 0, **options) -> Dict[str, object]:
    """Follow the system's static (or other one-move) oracle on each gold tree
    from the initial configuration to a final one and count: sentences,
    non-projective sentences, words, transitions, moves of each kind, and the
    swaps ("W" moves) on all and on non-projective sentences. `trees` yields
    (heads, labels)."""
    from spacy_nonmono.systems import get_system
    from spacy_nonmono.graph import is_projective

    # Labels do not change the moves: one dummy label, gold labels "any".
    system = get_system(system_name)(labels=["dep"], oracle=oracle, **options)
    system.reseed_oracle(seed)
    counts = dict(sentences=0, nonprojective_sentences=0, words=0, transitions=0,
                  swaps=0, nonprojective_swaps=0, max_swaps=0, kinds={})
    kinds = counts["kinds"]
    for heads, _ in trees:
        state = system.new_state(gold_heads=heads)
        swaps = 0
        while not state.is_final():
            move = state.static_move()
            kind = system.move_kind(move)
            kinds[kind] = kinds.get(kind, 0) + 1
            swaps += kind == "W"
            state.apply(move)
            counts["transitions"] += 1
        counts["sentences"] += 1
        counts["words"] += len(heads)
        counts["swaps"] += swaps
        counts["max_swaps"] = max(counts["max_swaps"], swaps)
        if not is_projective(heads):
            counts["nonprojective_sentences"] += 1
            counts["nonprojective_swaps"] += swaps
    return counts


def static_oracle_transitions_per_word(system_name: str, trees: Iterable) -> float:
    """Transitions per word of the system's static oracle following each gold
    tree from the initial configuration to a final one: the decoding work of
    a parser that never takes an unnecessary step (the reference the
    Covington scan is measured against). `trees` yields (heads, labels)."""
    counts = static_oracle_counts(system_name, trees)
    return counts["transitions"] / max(1, counts["words"])
