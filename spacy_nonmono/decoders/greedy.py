"""The greedy decoder: each state advances by its best-scoring valid move.
Parsing runs the whole batch in C (`StateBatch.parse`); training follows
spaCy's parser: states advance by the predicted move (or, with probability
follow_oracle_prob, by the best-scoring zero-cost move; a system's
weak_target_prob may send it to a weaker target instead), the loss at each step
is the softmax log-loss against the zero-cost moves, and the token table's
gradient flows back once per batch."""
import numpy

from ..models.scores import StepScores, step_scores
from ..models.step_model import StepUpdate
from .base import Decoder, Parses, chunks, token_layout
from .state_batch import StateBatch, choose_moves, softmax_log_loss


# Tokens per model call when parsing (see `chunks`): the token table of a
# chunk (slots x hidden x pieces floats a token) must stay small enough for
# the parse loop's random reads to hit the cache; larger chunks parse slower.
CHUNK_TOKENS = 2000


class GreedyDecoder(Decoder):
    name = "greedy"

    def parse_batch(self, system, lengths, offsets, root_row):
        """What parses a chunk: its `parse(table, weights)` and `finish()`."""
        return StateBatch(system, lengths, offsets, root_row)

    def predict(self, model, system, docs, spans) -> Parses:
        heads, labels, transitions = [], [], 0
        for chunk_docs, chunk_spans, _ in chunks(docs, spans, CHUNK_TOKENS):
            lengths, offsets, root_row = token_layout(chunk_docs, chunk_spans)
            scores = step_scores(model, chunk_docs)
            batch = self.parse_batch(system, lengths, offsets, root_row)
            transitions += batch.parse(*scores.single) if scores.single \
                else self.parse_steps(batch, scores)
            chunk_heads, chunk_labels = batch.finish()
            heads.extend(chunk_heads)
            labels.extend(chunk_labels)
        return Parses(heads, labels, transitions)

    def train_batch(self, system, lengths, offsets, root_row, golds):
        """What training advances: the states of a batch with their gold
        trees (`active`, `get_context`, `get_costs`, `apply`)."""
        return StateBatch(system, lengths, offsets, root_row,
                          gold_heads=[g.heads for g in golds],
                          gold_labels=[g.labels for g in golds])

    def parse_steps(self, batch, scores: StepScores) -> int:
        """Parse a batch step by step from Python, all states at once (the
        C loop's choices: the best-scoring valid move, ties to the lower
        id), reading scores that are no single step model's."""
        transitions = 0
        active = batch.active()
        while active.size:
            step = numpy.ascontiguousarray(scores(batch.get_context(active)), dtype="f")
            valid = batch.get_valid(active) > 0
            if not valid.any(axis=1).all():
                raise RuntimeError(f"Transition system {batch.system.name!r} offered no valid "
                                   "move in a non-final configuration.")
            moves = numpy.where(valid, step, -numpy.inf).argmax(axis=1).astype("int32")
            batch.apply(active, moves, step)
            transitions += len(active)
            active = batch.active()
        return transitions

    def update(self, model, system, docs, spans, golds, *, follow_oracle_prob, rng) -> float:
        lengths, offsets, root_row = token_layout(docs, spans)
        batch = self.train_batch(system, lengths, offsets, root_row, golds)
        follow = 1.0 if system.uses_static_oracle else follow_oracle_prob
        weak_prob = system.weak_target_prob
        replaceable = system.weak_target_replaces
        if system.random_oracle:
            system.reseed_oracle(int(rng.integers(2**62)))
        table, backprop_table = model.begin_update(docs)
        step = StepUpdate(model.get_ref("step"), table)
        d_scores_per_step = []
        no_draws = numpy.empty(0)
        loss = 0.0
        active = batch.active()
        while active.size:
            scores = step(batch.get_context(active))
            costs, valid = batch.get_costs(active)
            d_scores, step_loss = softmax_log_loss(scores, costs, valid)
            loss += step_loss
            d_scores_per_step.append(d_scores)
            draws = rng.random(len(active)) if follow < 1.0 else no_draws
            weak_draws = rng.random(len(active)) if weak_prob > 0.0 else no_draws
            moves = choose_moves(scores, costs, valid, draws, follow, weak_draws, weak_prob,
                                 replaceable)
            batch.apply(active, moves, scores)
            active = batch.active()
        if d_scores_per_step:
            backprop_table(step.backprop(d_scores_per_step))
        return loss
