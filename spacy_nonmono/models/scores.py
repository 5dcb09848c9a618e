"""The scorer interface: what decoders read of a model's output, per batch.

- Transition decoders (greedy, beam) read `StepScores`: the move scores of
  states from their context ids. Its members are (token table, step
  weights) pairs, a state's scores the sum of the members'. A single member
  is scored inside the C parse loops; several (a combination of trained
  models) through `__call__`.
- The global decoder reads a `ScorerView` (models/global_model.py): score
  tables of a sentence's positions and scores of position tuples; `SumView`
  sums several.

`step_scores(model, docs)` and `part_scores(model, docs)` build them for a
model: a reader registered by the model's name in
`spacy_nonmono.registry.score_readers` (entry points allowed), so a model
that combines others (an ensemble) plugs in with its own reader and no
decoder changes. Training reads the single models directly (the step model
and the ScorerView with gradients).
"""
from typing import List, Optional, Sequence, Tuple

import numpy

from ..registry import score_readers
from .scoring import HostWeights, score_states


class StepScores:
    """Move scores of a batch's states: the sum over members (token table
    (rows + 1, nF, nH, nP), step weights)."""

    def __init__(self, members: Sequence[Tuple[numpy.ndarray, HostWeights]]):
        if not members:
            raise ValueError("StepScores needs at least one member.")
        self.members = list(members)

    @property
    def single(self) -> Optional[Tuple[numpy.ndarray, HostWeights]]:
        """The one member's (table, weights), which the C loops read; None
        for several."""
        return self.members[0] if len(self.members) == 1 else None

    def __call__(self, ids: numpy.ndarray) -> numpy.ndarray:
        """Scores (n, moves) of states with these context ids (n, slots)."""
        total = None
        for table, weights in self.members:
            scores = score_states(weights, table, ids)[0]
            total = scores if total is None else total + scores
        return total


class SumView:
    """Several ScorerViews of one batch (the same positions, the same
    scorers' layout) read as one: tables and scores are the members' sums."""

    def __init__(self, views: Sequence):
        if not views:
            raise ValueError("SumView needs at least one view.")
        self.views = list(views)
        self.layout = self.views[0].layout

    def pair_table(self, scorer: str, rows: numpy.ndarray) -> numpy.ndarray:
        return sum(view.pair_table(scorer, rows) for view in self.views)

    def triple_table(self, scorer: str, rows: numpy.ndarray, triples=None) -> numpy.ndarray:
        return sum(view.triple_table(scorer, rows, triples) for view in self.views)

    def scores(self, scorer: str, rows: numpy.ndarray):
        return sum(view.scores(scorer, rows)[0] for view in self.views), None


def _reader(model, kind: str):
    try:
        readers = score_readers.get(model.name)
    except Exception:
        readers = {}
    if kind not in readers:
        raise ValueError(f"No scorer reads {kind} scores from a {model.name!r} model "
                         "(spacy_nonmono.registry.score_readers).")
    return readers[kind]


def step_scores(model, docs: List) -> StepScores:
    """The transition scores of a batch of docs under `model`."""
    return _reader(model, "step")(model, docs)


def part_scores(model, docs: List):
    """The global decoder's scores (a ScorerView) of a batch of docs."""
    return _reader(model, "parts")(model, docs)


def _parser_model_step_scores(model, docs):
    from .step_model import host_weights

    table = model.predict(docs)
    return StepScores([(table, host_weights(model.get_ref("step"), table.shape[1]))])


def _global_model_parts(model, docs):
    from .global_model import ScorerView

    return ScorerView(model, model.predict(docs))


score_readers.register("nonmono_parser_model", func={"step": _parser_model_step_scores})
score_readers.register("global_parser_model", func={"parts": _global_model_parts})
