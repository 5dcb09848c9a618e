"""The global decoder (`decoding = "global"`): exact decoding of a whole
sentence, for the structures `mh3` and `mh4` (the MH3 and MH4 charts over
the arc-hybrid / MH4 transitions, Gómez-Rodríguez, Shi & Lee 2018) and
`mst` (edge-factored maximum spanning tree with one root).

Per batch, the model gives every token's parts once (`GlobalParserModel`);
per sentence, the structure fills its score tables from them (batched
matrix products) and a tree algorithm of `spacy_nonmono.graph` finds the
best tree. Labels come from a label scorer over the decoded arcs' (head,
dependent) vectors.

Training (section 4.3): the cost-augmented structured hinge loss
    max_t (S(t) + cost(t)) - S(t*),
cost(t) the words t attaches to a wrong head, decomposed into the reduce
steps (arcs for MST). t* is the best-scoring derivation of the gold tree
(for a tree the structure cannot build: of a tree with the most gold arcs,
whose own wrong arcs count in its cost). The gradient reaches the score
tables only at the events of the two derivations, so tables are filled
without gradient and only those entries are scored again for the backward
pass. Labels: softmax log-loss on the gold arcs.
"""
from typing import Dict, List, Sequence

import numpy

from ..models.global_model import ScorerView, batch_rows, size_global_model
from .base import Decoder, Parses, token_layout

STRUCTURES = ("mh3", "mh4", "mst")
# Cost weight that makes the tree algorithm prefer a gold arc to any score
# difference a model's tables hold (entries are far below 1e4): the
# best-scoring derivation among those with the most gold arcs.
GOLD_WEIGHT = -1.0e4


class GlobalStructure:
    """What the global decoder decodes, in the component's `system` slot: its
    name, labels, and the tree algorithm. mh3 builds projective trees (the
    component pseudo-projectivizes for it by default), mh4 and mst any."""

    oracle = "global"
    context_names = ()
    n_context = 0
    follow_oracle_prob = 0.0     # no exploration: the loss reads whole derivations

    def __init__(self, name: str, labels: Sequence[str]):
        self.name = name
        self.labels = list(labels)
        self.label_ids = {label: i for i, label in enumerate(self.labels)}
        self.n_labels = len(self.labels)
        self.projective = name == "mh3"
        self.options = {}
        self.n_reduce = {"mh3": 2, "mh4": 6, "mst": 0}[name]
        self._algorithm = None

    def __getstate__(self):
        return {**self.__dict__, "_algorithm": None}   # its buffers are rebuilt on use

    @property
    def scorers(self) -> Dict[str, int]:
        if self.name == "mst":
            return {"arc": 1, "label": self.n_labels}
        return {"shift": 1, "reduce": self.n_reduce, "label": self.n_labels}

    @property
    def algorithm(self):
        if self._algorithm is None:
            if self.name == "mst":
                from ..graph.mst import mst

                self._algorithm = mst
            else:
                from ..graph.charts import Chart

                self._algorithm = Chart(3 if self.name == "mh3" else 4, single_root=True)
        return self._algorithm

    def tables(self, view: ScorerView, rows: numpy.ndarray) -> tuple:
        """The score tables of one sentence (positions 0..n+1 at `rows`):
        (arcs,) for mst, (shift, reduce) for the charts."""
        if self.name == "mst":
            return (numpy.ascontiguousarray(view.pair_table("arc", rows[:-1])[:, :, 0]),)
        shift = numpy.ascontiguousarray(view.pair_table("shift", rows)[:, :, 0])
        if view.layout["reduce"][1] == 3:
            reduce = view.triple_table("reduce", rows)
        else:
            reduce = numpy.ascontiguousarray(numpy.moveaxis(view.pair_table("reduce", rows), -1, 0))
        return shift, reduce

    def decode(self, tables: tuple, gold_heads=None, cost_weight: float = 0.0):
        """(score, cost, heads, events) of the best tree under the tables;
        events as `add_grads` reads them (None for mst: its arcs are the
        heads)."""
        if self.name == "mst":
            heads, score, cost = self.algorithm(tables[0], gold_heads, cost_weight)
            return score, cost, heads, None
        return self.algorithm.decode(*tables, gold_heads, cost_weight)

    def scored_tuples(self, view: ScorerView, rows: numpy.ndarray, heads, events):
        """The table entries a derivation's score sums, as (scorer, position
        rows (E, slots), output index (E,)) groups."""
        if self.name == "mst":
            deps = numpy.arange(1, len(heads) + 1)
            pairs = numpy.stack([rows[numpy.asarray(heads)], rows[deps]], axis=1)
            return [("arc", pairs, numpy.zeros(len(deps), dtype="int64"))]
        events = numpy.asarray(events)
        shifts, reduces = events[events[:, 0] < 0], events[events[:, 0] >= 0]
        slots = reduces[:, 1:4] if view.layout["reduce"][1] == 3 else reduces[:, 2:4]
        return [("shift", rows[shifts[:, 2:4]], numpy.zeros(len(shifts), dtype="int64")),
                ("reduce", rows[slots], reduces[:, 0])]

    def derivation_score(self, view: ScorerView, rows: numpy.ndarray, heads, events) -> float:
        """A derivation's score, entry by entry (what the tree algorithm's
        score must equal)."""
        total = 0.0
        for scorer, tuples, outputs in self.scored_tuples(view, rows, heads, events):
            if len(tuples):
                scores, _ = view.scores(scorer, tuples)
                total += float(scores[numpy.arange(len(tuples)), outputs].sum())
        return total

    def add_grads(self, view: ScorerView, rows: numpy.ndarray, heads, events,
                  coefficient: float) -> None:
        """Add coefficient x the gradient of the derivation's score."""
        for scorer, tuples, outputs in self.scored_tuples(view, rows, heads, events):
            view.add_event_grads(scorer, tuples, outputs, numpy.full(len(tuples), coefficient))


class GlobalDecoder(Decoder):
    name = "global"
    model_kind = "global"

    def build_system(self, name, labels, oracle, options):
        if name not in STRUCTURES:
            raise ValueError(f"decoding = \"global\" decodes the systems "
                             f"{', '.join(repr(s) for s in STRUCTURES)}, not {name!r}.")
        if oracle not in (None, "global"):
            raise ValueError(f"decoding = \"global\" trains with its structured loss: oracle "
                             f"must be null, not {oracle!r}.")
        if options:
            raise ValueError(f"System {name!r} decoded globally takes no system_options, "
                             f"got {dict(options)!r}.")
        return GlobalStructure(name, labels)

    def size_model(self, model, system) -> None:
        if model.name != "global_parser_model":
            raise ValueError("decoding = \"global\" needs the model "
                             "spacy_nonmono.GlobalParserModel.v1, not "
                             f"{model.name!r} (`spacy-nonmono init-config --decoding global` "
                             "writes a config with it).")
        size_global_model(model, system.scorers)

    def is_initialized(self, model) -> bool:
        return model.has_param("W")

    def predict(self, model, system, docs, spans) -> Parses:
        parts = model.predict(docs)
        view = ScorerView(model, parts)
        heads, labels = [], []
        for rows in self._rows(docs, spans):
            _, _, tree, _ = system.decode(system.tables(view, rows))
            heads.append(numpy.asarray(tree, dtype="int64"))
            labels.append(self._labels(view, rows, tree))
        return Parses(heads, labels, 0)

    def update(self, model, system, docs, spans, golds, *, follow_oracle_prob, rng,
               step_observer=None) -> float:
        parts, backprop_parts = model.begin_update(docs)
        view = ScorerView(model, parts, train=True)
        loss = 0.0
        for rows, gold in zip(self._rows(docs, spans), golds):
            loss += sentence_loss(system, view, rows, numpy.asarray(gold.heads, dtype="int32"),
                                  numpy.asarray(gold.labels, dtype="int64"))
        view.finish(backprop_parts)
        return loss

    # -- labels -------------------------------------------------------------------

    @staticmethod
    def _rows(docs, spans) -> List[numpy.ndarray]:
        lengths, offsets, root_row = token_layout(docs, spans)
        return batch_rows(offsets, lengths, root_row)

    @staticmethod
    def _labels(view: ScorerView, rows, heads) -> numpy.ndarray:
        """The best label of each arc (-1 for the root's: it is written ROOT)."""
        heads = numpy.asarray(heads)
        pairs = numpy.stack([rows[heads], rows[1:-1]], axis=1)
        scores, _ = view.scores("label", pairs)
        labels = scores.argmax(axis=1).astype("int64")
        labels[heads == 0] = -1
        return labels


def sentence_loss(system: GlobalStructure, view: ScorerView, rows: numpy.ndarray,
                  gold_heads: numpy.ndarray, gold_labels: numpy.ndarray) -> float:
    """One sentence's loss (the structured hinge on its tree plus the label
    loss), its gradient added to the view."""
    tables = system.tables(view, rows)
    score, cost, heads, events = system.decode(tables, gold_heads, 1.0)
    g_score, _, g_heads, g_events = system.decode(tables, gold_heads, GOLD_WEIGHT)
    g_cost = float(numpy.sum(numpy.asarray(g_heads) != gold_heads))
    margin = (score + cost) - (g_score + g_cost)
    loss = 0.0
    if margin > 0:
        loss += margin
        system.add_grads(view, rows, heads, events, 1.0)
        system.add_grads(view, rows, g_heads, g_events, -1.0)
    return loss + label_loss(view, rows, gold_heads, gold_labels)


def label_loss(view: ScorerView, rows, gold_heads, gold_labels) -> float:
    """Softmax log-loss of the gold labels on the gold arcs (the root's
    label, -1, is not learned)."""
    keep = gold_labels >= 0
    if not keep.any():
        return 0.0
    pairs = numpy.stack([rows[gold_heads[keep]], rows[1:-1][keep]], axis=1)
    scores, cache = view.scores("label", pairs)
    scores = scores - scores.max(axis=1, keepdims=True)
    probs = numpy.exp(scores)
    probs /= probs.sum(axis=1, keepdims=True)
    target = gold_labels[keep]
    loss = -float(numpy.log(probs[numpy.arange(len(target)), target] + 1e-12).sum())
    probs[numpy.arange(len(target)), target] -= 1.0
    view.backprop(cache, probs)
    return loss
