"""The beam decoder: beam search over any transition system (the search in
C: decoders/beam_search.pyx), trained globally.

Training (`update`), with probability `beam_update_prob` per batch (spaCy's
beam_parser mixes greedy and beam updates the same way; otherwise the greedy
decoder's update): a predicted beam (width, density) and a gold beam (width;
each entry keeps its training targets of least cost, zero-loss moves the
system's policy prefers) advance side by side, their entries scored by the
same step model in one call per step. The update is made at the step of
maximum violation (Huang et al. 2012), where the best predicted history's
score most exceeds the best gold history's, among steps where the best
predicted history has lost more (summed true losses) than the best gold one;
or, with `beam_update = "early"` (Collins and Roark 2004), at the first step
where every predicted history has lost more than the best gold one (the gold
histories have fallen out of the predicted beam). Its loss is the
beam-normalised log-loss there (as spaCy's beam parser, Zhou et al. 2015):
-log of the probability mass of the gold histories under a softmax over the
gold beam and the predicted beam's histories (a predicted history no lossier
than the best gold one counts as gold). A history's score
is the sum of its moves' scores, so each history's gradient, p(h) less its
share of the gold mass, goes to every move it made. A sentence whose best
predicted history never loses more than the gold one gives no gradient.
"""
import numpy

from ..models.step_model import StepUpdate
from .base import token_layout
from .beam_search import BeamBatch
from .greedy import GreedyDecoder

UPDATES = ("max_violation", "early")    # the step a beam update is made at


class BeamDecoder(GreedyDecoder):
    """Beam search; its models are the greedy decoder's (same `model_kind`),
    so a pipeline trained greedily can parse with a beam and back.

    Options (`decoding_options`):
    - width: the histories kept per sentence (1 parses exactly as greedy
      decoding does);
    - density: drop candidates whose probability under a softmax over a
      step's candidates is below density times the best's (spaCy's
      beam_density); 0 keeps all;
    - update_prob: the probability that a training batch makes a beam update
      rather than a greedy one, as spaCy's beam_parser;
    - update: the step a beam update is made at: "max_violation" (where the
      best predicted history most outscores the best gold one, as spaCy's
      beam_parser) or "early" (the first step the gold histories have fallen
      out of the predicted beam)."""

    name = "beam"
    settings = {"width": 8, "density": 0.0001, "update_prob": 0.5, "update": "max_violation"}

    def check(self, options):
        width, density = options["width"], options["density"]
        update_prob, update = options["update_prob"], options["update"]
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"The beam's width must be an integer of at least 1, got {width!r}.")
        if not isinstance(density, (int, float)) or not 0.0 <= density < 1.0:
            raise ValueError(f"The beam's density must be in [0, 1), got {density!r}.")
        if not isinstance(update_prob, (int, float)) or not 0.0 <= update_prob <= 1.0:
            raise ValueError(f"The beam's update_prob must be in [0, 1], got {update_prob!r}.")
        if update not in UPDATES:
            raise ValueError(f"The beam's update must be one of "
                             f"{', '.join(map(repr, UPDATES))}, got {update!r}.")

    @property
    def width(self) -> int:
        return int(self.options["width"])

    def parse_steps(self, batch, scores) -> int:
        """Beam search driven from Python, every live entry scored at once,
        for scores that are no single step model's."""
        transitions = 0
        while not batch.is_done:
            sentences, entries = batch.live()
            batch.advance(sentences, entries, numpy.ascontiguousarray(
                scores(batch.get_context(sentences, entries)), dtype="f"))
            transitions += len(sentences)
        return transitions

    def parse_batch(self, system, lengths, offsets, root_row):
        return BeamBatch(system, lengths, offsets, root_row, self.width, self.options["density"])

    def update(self, model, system, docs, spans, golds, *, follow_oracle_prob, rng) -> float:
        if self.width == 1 or rng.random() >= self.options["update_prob"]:
            return GreedyDecoder.update(self, model, system, docs, spans, golds,
                                        follow_oracle_prob=follow_oracle_prob, rng=rng)
        lengths, offsets, root_row = token_layout(docs, spans)
        gold = dict(gold_heads=[g.heads for g in golds], gold_labels=[g.labels for g in golds])
        if system.random_oracle:
            system.reseed_oracle(int(rng.integers(2**62)))
        pred = BeamBatch(system, lengths, offsets, root_row, self.width, self.options["density"],
                         **gold)
        gbeam = BeamBatch(system, lengths, offsets, root_row, self.width, 0.0, gold_only=True,
                          **gold)
        table, backprop_table = model.begin_update(docs)
        step = StepUpdate(model.get_ref("step"), table)
        history = BeamHistories(len(spans), self.width, system.n_moves,
                                early=self.options["update"] == "early")
        beams = (pred, gbeam)
        while not (pred.is_done and gbeam.is_done):
            live = [beam.live() for beam in beams]
            scores = step(numpy.concatenate([beam.get_context(*rows)
                                             for beam, rows in zip(beams, live)]))
            n_pred = len(live[0][0])
            pred.advance(*live[0], numpy.ascontiguousarray(scores[:n_pred]))
            gbeam.advance(*live[1], numpy.ascontiguousarray(scores[n_pred:]))
            history.record(beams, live, (0, n_pred), len(scores))
        d_scores, loss = history.gradient()
        if any(d.any() for d in d_scores):
            backprop_table(step.backprop(d_scores))
        return loss


def log_sum_exp(x):
    top = x.max()
    return top + numpy.log(numpy.exp(x - top).sum())


class BeamHistories:
    """What the max-violation update needs of the two beams' steps (the
    predicted beam is beam 0, the gold beam beam 1): per step, each beam's
    snapshot (BeamBatch.snapshot: every entry's parent and move) and the row
    of the step's scores each scored entry had; per sentence, the step of
    maximum violation so far (early: the first step without a gold history in
    the predicted beam)."""

    def __init__(self, n_sentences: int, width: int, n_moves: int, early: bool = False):
        self.n_sentences = n_sentences
        self.early = early
        self.width = width
        self.n_moves = n_moves
        self.steps = []          # per step: (rows scored, [(snapshot, rowmap) per beam])
        self.best_delta = numpy.full(n_sentences, -numpy.inf)
        self.violation_step = numpy.full(n_sentences, -1)

    def record(self, beams, live, first_rows, n_rows: int) -> None:
        snapshots = []
        for beam, (sentences, entries), first in zip(beams, live, first_rows):
            rowmap = numpy.full((self.n_sentences, self.width), -1, dtype=numpy.int64)
            rowmap[sentences, entries] = first + numpy.arange(len(sentences))
            snapshots.append((beam.snapshot(), rowmap))
        step = len(self.steps)
        self.steps.append((n_rows, snapshots))
        pred, gold = snapshots[0][0], snapshots[1][0]
        p_best, g_best = pred["first"][:-1], gold["first"][:-1]
        if self.early:
            # Every beam holds at least one entry, so each segment is non-empty.
            least_pred = numpy.minimum.reduceat(pred["loss"], p_best)
            least_gold = numpy.minimum.reduceat(gold["loss"], g_best)
            violated = (least_pred > least_gold) & (self.violation_step < 0)
        else:
            delta = pred["score"][p_best] - gold["score"][g_best]
            violated = (pred["loss"][p_best] > gold["loss"][g_best]) & (delta > self.best_delta)
            self.best_delta[violated] = delta[violated]
        self.violation_step[violated] = step

    def gradient(self):
        """d_scores per step, and the summed loss."""
        d_scores = [numpy.zeros((n_rows, self.n_moves), dtype=numpy.float32)
                    for n_rows, _ in self.steps]
        total = 0.0
        parts = []      # (sentence, beam, entry, step, d) of every history with a gradient
        for b in numpy.flatnonzero(self.violation_step >= 0):
            step = int(self.violation_step[b])
            pred, gold = (snapshot for snapshot, _ in self.steps[step][1])
            p_entries = numpy.arange(pred["first"][b], pred["first"][b + 1])
            g_entries = numpy.arange(gold["first"][b], gold["first"][b + 1])
            # The gold beam's histories, and the predicted beam's but those
            # the gold beam also holds; a predicted history no lossier than
            # the best gold one counts as gold.
            p_entries = p_entries[~numpy.isin(pred["key"][p_entries], gold["key"][g_entries])]
            scores = numpy.concatenate([gold["score"][g_entries], pred["score"][p_entries]])
            is_gold = numpy.concatenate([
                numpy.ones(len(g_entries), dtype=bool),
                pred["loss"][p_entries] <= gold["loss"][g_entries].min()])
            log_z, log_gold_z = log_sum_exp(scores), log_sum_exp(scores[is_gold])
            total += float(log_z - log_gold_z)
            d = numpy.exp(scores - log_z)
            d[is_gold] -= numpy.exp(scores[is_gold] - log_gold_z)
            local = numpy.concatenate([g_entries - gold["first"][b], p_entries - pred["first"][b]])
            beam = numpy.concatenate([numpy.ones(len(g_entries), dtype=int),
                                      numpy.zeros(len(p_entries), dtype=int)])
            parts.append((numpy.full(len(d), b), beam, local, numpy.full(len(d), step), d))
        if parts:
            self.backtrack(d_scores, *(numpy.concatenate(column) for column in zip(*parts)))
        return d_scores, total

    def backtrack(self, d_scores, sentence, beam, entry, last_step, d) -> None:
        """Add each history's d to the score of every move it made: walk all
        histories back one step at a time, from their own last step."""
        entry = entry.copy()
        for step in range(int(last_step.max()), -1, -1):
            for beam_id in (0, 1):
                sel = numpy.flatnonzero((last_step >= step) & (beam == beam_id))
                if not len(sel):
                    continue
                snapshot, rowmap = self.steps[step][1][beam_id]
                index = snapshot["first"][sentence[sel]] + entry[sel]
                parent, move = snapshot["parent"][index], snapshot["move"][index]
                moved = move >= 0
                rows = rowmap[sentence[sel][moved], parent[moved]]
                numpy.add.at(d_scores[step], (rows, move[moved]), d[sel][moved])
                entry[sel] = parent
