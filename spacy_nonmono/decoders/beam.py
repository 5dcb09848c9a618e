"""The beam decoder: beam search over any transition system (the search in
C: decoders/beam_search.pyx), trained globally.

Training (`update`), with probability `beam_update_prob` per batch (spaCy's
beam_parser mixes greedy and beam updates the same way; otherwise the greedy
decoder's update): a predicted beam (width, density) and a gold beam (width,
zero-loss moves only) advance side by side, their entries scored by the same
step model in one call per step. The update is made at the step of maximum
violation (Huang et al. 2012), where the best predicted history's score most
exceeds the best gold history's, among steps where the best predicted history
has lost something. Its loss is the beam-normalised log-loss there (as spaCy's
beam parser, Zhou et al. 2015): -log of the probability mass of the gold
histories under a softmax over the gold beam and the predicted beam's
histories (a zero-loss predicted history counts as gold). A history's score
is the sum of its moves' scores, so each history's gradient, p(h) less its
share of the gold mass, goes to every move it made. A sentence whose best
predicted history never loses anything gives no gradient.
"""
from typing import Callable, Optional

import numpy

from ..models.step_model import StepUpdate
from .base import token_layout
from .beam_search import BeamBatch
from .greedy import GreedyDecoder

DEFAULT_WIDTH = 8
DEFAULT_DENSITY = 0.0001
DEFAULT_UPDATE_PROB = 0.5


def check_beam_settings(width, density, update_prob) -> None:
    """ValueError for a setting out of range (the component checks them for
    every decoder, so a bad config fails at once)."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"beam_width must be an integer of at least 1, got {width!r}.")
    if not isinstance(density, (int, float)) or not 0.0 <= density < 1.0:
        raise ValueError(f"beam_density must be in [0, 1), got {density!r}.")
    if not isinstance(update_prob, (int, float)) or not 0.0 <= update_prob <= 1.0:
        raise ValueError(f"beam_update_prob must be in [0, 1], got {update_prob!r}.")


class BeamDecoder(GreedyDecoder):
    """Beam search; its models are the greedy decoder's (same `model_kind`),
    so a pipeline trained greedily can parse with a beam and back."""

    name = "beam"

    def __init__(self):
        self.width = DEFAULT_WIDTH
        self.density = DEFAULT_DENSITY
        self.update_prob = DEFAULT_UPDATE_PROB

    def configure(self, *, beam_width: int, beam_density: float, beam_update_prob: float):
        check_beam_settings(beam_width, beam_density, beam_update_prob)
        self.width = int(beam_width)
        self.density = float(beam_density)
        self.update_prob = float(beam_update_prob)

    def parse_batch(self, system, lengths, offsets, root_row):
        return BeamBatch(system, lengths, offsets, root_row, self.width, self.density)

    def update(self, model, system, docs, spans, golds, *, follow_oracle_prob, rng,
               step_observer: Optional[Callable] = None) -> float:
        if self.width == 1 or rng.random() >= self.update_prob:
            return GreedyDecoder.update(self, model, system, docs, spans, golds,
                                        follow_oracle_prob=follow_oracle_prob, rng=rng,
                                        step_observer=step_observer)
        lengths, offsets, root_row = token_layout(docs, spans)
        gold = dict(gold_heads=[g.heads for g in golds], gold_labels=[g.labels for g in golds])
        if system.random_oracle:
            system.reseed_oracle(int(rng.integers(2**62)))
        pred = BeamBatch(system, lengths, offsets, root_row, self.width, self.density, **gold)
        gbeam = BeamBatch(system, lengths, offsets, root_row, self.width, 0.0, gold_only=True,
                          **gold)
        table, backprop_table = model.begin_update(docs)
        step = StepUpdate(model.get_ref("step"), table)
        history = BeamHistories(len(spans))
        while not (pred.is_done and gbeam.is_done):
            live = [beam.live() for beam in (pred, gbeam)]
            ids = numpy.concatenate([beam.get_context(*rows) for beam, rows in zip((pred, gbeam), live)])
            scores = step(ids)
            n_pred = len(live[0][0])
            pred.advance(*live[0], numpy.ascontiguousarray(scores[:n_pred]))
            gbeam.advance(*live[1], numpy.ascontiguousarray(scores[n_pred:]))
            history.record(pred, gbeam, live, n_pred, scores.shape)
        d_scores, loss = history.gradient()
        if any(d.any() for d in d_scores):
            backprop_table(step.backprop(d_scores))
        return loss


class BeamHistories:
    """What the max-violation update needs of the two beams' steps: per step
    and beam, each entry's parent, move and the score row its parent was
    scored in; per sentence, the step of maximum violation so far."""

    def __init__(self, n_sentences: int):
        self.steps = []          # per step: (shape of its scores, {beam: per-sentence entries})
        self.violation = [None] * n_sentences   # (delta, step) of each sentence

    def record(self, pred, gbeam, live, n_pred, shape):
        step = len(self.steps)
        rows = {}
        for beam_id, (beam, (sentences, entries)) in enumerate(zip((pred, gbeam), live)):
            first = 0 if beam_id == 0 else n_pred
            row_of = {(int(b), int(i)): first + r for r, (b, i) in enumerate(zip(sentences, entries))}
            rows[beam_id] = {b: (beam.entries(b), row_of) for b in set(sentences.tolist())}
        self.steps.append((shape, rows))
        for b in rows[0].keys() | rows[1].keys():
            p = pred.entries(b)
            g = gbeam.entries(b)
            if p["loss"][0] > g["loss"][0]:
                delta = p["score"][0] - g["score"][0]
                if self.violation[b] is None or delta > self.violation[b][0]:
                    self.violation[b] = (delta, step, p, g)

    def gradient(self):
        """d_scores per step, and the summed loss."""
        d_scores = [numpy.zeros(shape, dtype=numpy.float32) for shape, _ in self.steps]
        total = 0.0
        for b, found in enumerate(self.violation):
            if found is None:
                continue
            _, step, p, g = found
            gold_keys = set(g["key"])
            # The histories: every gold-beam entry, and the predicted beam's
            # entries but those the gold beam also holds.
            hists = [(1, i, True) for i in range(len(g["score"]))]
            hists += [(0, i, p["loss"][i] == 0) for i in range(len(p["score"]))
                      if p["key"][i] not in gold_keys]
            scores = numpy.asarray([(g if beam else p)["score"][i] for beam, i, _ in hists])
            is_gold = numpy.asarray([gold for _, _, gold in hists])
            probs = numpy.exp(scores - scores.max())
            gold_probs = probs * is_gold
            total += float(numpy.log(probs.sum()) - numpy.log(gold_probs.sum()))
            probs /= probs.sum()
            gold_probs /= gold_probs.sum()
            for (beam, entry, _), d in zip(hists, probs - gold_probs):
                if d != 0.0:
                    self.backtrack(d_scores, b, beam, step, entry, float(d))
        return d_scores, total

    def backtrack(self, d_scores, b, beam, step, entry, d):
        """Add d to the score of every move of the history ending at `entry`
        of sentence b's beam after `step`."""
        while step >= 0:
            if b not in self.steps[step][1][beam]:
                step -= 1       # that beam was done: its entries stayed as they were
                continue
            entries, row_of = self.steps[step][1][beam][b]
            parent, move = int(entries["parent"][entry]), int(entries["move"][entry])
            if move >= 0:
                d_scores[step][row_of[(b, parent)], move] += d
            entry = parent
            step -= 1
