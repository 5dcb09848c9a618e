"""The global decoder (`decoding = "global"`): exact decoding of a whole
sentence, for any structure of `graph/structures.py` (registered by name:
`mst`, `mh3_chart`, `mh4_chart`, `mh3_arcs`, `mh4_arcs`, `1ec_arcs`, or one from another
package). The component's `system` names the structure, or a transition system whose
derivations a structure holds exactly (its `exact_structure`: `mh4` decodes
`mh4_chart`).

Per batch, the model gives every token's parts once (`GlobalParserModel`);
per sentence, the structure's score tables are filled from them (batched
matrix products, one scorer of the model per table) and the structure finds
the best tree. Labels come from a label scorer over the decoded arcs' (head,
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
from typing import Dict, Optional, Sequence

import numpy

from ..graph.structures import GOLD_WEIGHT, Structure, gold_cost, keep_heads
from ..models.global_model import ScorerView, size_global_model
from ..models.layout import span_rows
from ..models.scores import part_scores
from ..graph import get_structure
from .base import Decoder, Parses


# A pruned decode's triple table is filled for its reads alone when they are
# at most this share of the ordered triples: scoring a few scattered triples
# costs more per triple than the whole table's rectangles. A setting, not
# tuned by a benchmark.
SPARSE_FILL = 0.3
# Where no tree uses only the kept arcs, a chart structure tries once more
# with twice the heads and this much more margin (long sentences).
WIDER_MARGIN = 3.0


def n_ordered_triples(m: int) -> int:
    return m * (m - 1) * (m - 2) // 6


class LabelledStructure:
    """What the global decoder decodes (the component holds it where a
    transition decoder holds its transition system): a structure of
    `graph/structures.py` and the labels, under the name the component's
    `system` gave. It reads every structure through the structure interface:
    tables filled from the model's scorers, derivations mapped back to the
    model's rows for the gradient. It has no oracle, context or exploration:
    the loss reads whole derivations."""

    def __init__(self, structure: Structure, labels: Sequence[str],
                 name: Optional[str] = None, pruner: bool = False):
        self.structure = structure
        # A "prune" scorer in the model: pruning asked for, and no arc table
        # in the structure to prune with.
        self.pruner = pruner and structure.arc_table is None
        self.name = name or structure.name
        self.projective = structure.projective
        self.labels = list(labels)
        self.label_ids = {label: i for i, label in enumerate(self.labels)}
        self.n_labels = len(self.labels)
        self.options = {}

    @property
    def scorers(self) -> Dict[str, int]:
        """The model's scorers: the structure's tables, the pruner's, then the
        labels'."""
        return {**self.structure.tables, **({"prune": 1} if self.pruner else {}),
                "label": self.n_labels}

    def tables(self, view: ScorerView, rows: numpy.ndarray, keep=None) -> Dict[str, numpy.ndarray]:
        """The structure's score tables of one sentence (positions 0..n+1 at
        `rows`); with a pruning mask, a triple table holds only the triples
        the pruned decode reads, where they are few (SPARSE_FILL)."""
        return self._tables(view, rows, None if keep is None
                            else self.structure.read_triples(keep))

    def _tables(self, view, rows, triples) -> Dict[str, numpy.ndarray]:
        if triples is not None and len(triples) > SPARSE_FILL * n_ordered_triples(len(rows)):
            triples = None      # the whole table costs less per triple
        return {name: (view.triple_table(name, rows, triples) if view.layout[name][1] == 3
                       else view.pair_table(name, rows))
                for name in self.structure.tables}

    def decode(self, tables, gold_heads=None, cost_weight: float = 0.0, keep=None):
        if keep is None:        # (a structure from another package may not prune)
            return self.structure.decode(tables, gold_heads, cost_weight)
        return self.structure.decode(tables, gold_heads, cost_weight, keep=keep)

    def pruning_scores(self, view: ScorerView, rows: numpy.ndarray, tables=None) -> numpy.ndarray:
        """The first-order arc scores (n+2, n+2) [head, dep] that pruning
        reads: the structure's arc table (from `tables` when given), or the
        model's pruner."""
        name = self.structure.arc_table
        if name is not None:
            return (tables[name] if tables is not None else view.pair_table(name, rows))[..., 0]
        if "prune" not in view.layout:
            raise ValueError(
                f"prune_heads: the model of system {self.name!r} has no pruner (its "
                f"structure has no arc table to prune with): train it with prune_heads "
                f"set in decoding_options, or set prune_heads = 0.")
        return view.pair_table("prune", rows)[..., 0]

    def pruned_tables(self, view: ScorerView, rows: numpy.ndarray, max_heads: int,
                      margin: float):
        """(tables, keep): the pruning mask of one sentence (`keep_heads`)
        and the tables a decode with it reads."""
        if self.structure.arc_table is not None:
            tables = self.tables(view, rows)
            return tables, keep_heads(self.pruning_scores(view, rows, tables), max_heads, margin)
        scores = self.pruning_scores(view, rows)
        keep = keep_heads(scores, max_heads, margin)
        triples = self.structure.read_triples(keep)
        if triples is None and self.structure.reads_triples:
            # No tree of kept arcs: once more with twice the heads and a wider
            # margin before the decode falls back to every arc.
            keep = keep_heads(scores, 2 * max_heads, margin + WIDER_MARGIN)
            triples = self.structure.read_triples(keep)
        return self._tables(view, rows, triples), keep

    def scored_tuples(self, view: ScorerView, rows: numpy.ndarray, heads, derivation):
        """The entries a derivation's score sums, as (scorer, rows (E, slots),
        output index (E,)) groups."""
        arities = {name: view.layout[name][1] for name in self.structure.tables}
        return [(name, rows[positions], outputs) for name, positions, outputs
                in self.structure.entries(heads, derivation, arities)]

    def derivation_score(self, view: ScorerView, rows: numpy.ndarray, heads, derivation) -> float:
        """A derivation's score, entry by entry (what the structure's score
        must equal)."""
        total = 0.0
        for scorer, tuples, outputs in self.scored_tuples(view, rows, heads, derivation):
            if len(tuples):
                scores, _ = view.scores(scorer, tuples)
                total += float(scores[numpy.arange(len(tuples)), outputs].sum())
        return total

    def add_grads(self, view: ScorerView, rows: numpy.ndarray, heads, derivation,
                  coefficient: float) -> None:
        """Add coefficient x the gradient of the derivation's score."""
        for scorer, tuples, outputs in self.scored_tuples(view, rows, heads, derivation):
            view.add_event_grads(scorer, tuples, outputs, numpy.full(len(tuples), coefficient))


class GlobalDecoder(Decoder):
    name = "global"
    model_kind = "global"
    model_name = "global_parser_model"
    # The MH4 chart's length guard (docs/results/mh4/charts.md): longer
    # sentences are parsed in windows and skipped in training.
    max_sentence_length = 150
    default_system = "mh4"
    splits_unsegmented_docs = True      # MH4: O(n^4) time, O(n^3) memory per sentence
    # prune_heads: the most heads each word keeps (0: no pruning);
    # prune_margin: and only those whose score is within this much of the
    # word's best head's (a log-probability ratio under the softmax).
    settings = {"prune_heads": 0, "prune_margin": 5.0}

    def check(self, options) -> None:
        heads, margin = options["prune_heads"], options["prune_margin"]
        if not isinstance(heads, int) or isinstance(heads, bool) or heads < 0:
            raise ValueError(f"decoding = \"global\": prune_heads must be an integer >= 0 "
                             f"(0: no pruning), not {heads!r}.")
        if not isinstance(margin, (int, float)) or isinstance(margin, bool) \
                or not margin > 0 or margin == float("inf"):
            raise ValueError(f"decoding = \"global\": prune_margin must be a finite number "
                             f"> 0, not {margin!r}.")

    @property
    def default_model(self) -> str:
        from ..models.global_model import DEFAULT_CONFIG

        return DEFAULT_CONFIG

    def build_system(self, name, labels, oracle, options):
        structure = find_structure(name)
        if oracle not in (None, "global"):
            raise ValueError(f"decoding = \"global\" trains with its structured loss: oracle "
                             f"must be null, not {oracle!r}.")
        if options:
            raise ValueError(f"System {name!r} decoded globally takes no system_options, "
                             f"got {dict(options)!r}.")
        return LabelledStructure(structure(), labels, name,
                                 pruner=self.options["prune_heads"] > 0)

    def size_model(self, model, system) -> None:
        size_global_model(model, system.scorers)

    def length_guard(self, system) -> int:
        """The MH4 chart's guard, lowered to the structure's own where it
        has one (the 1EC charts)."""
        return min(self.max_sentence_length,
                   getattr(system.structure, "max_length", None) or self.max_sentence_length)

    def model_inputs(self, system) -> tuple:
        """The model reads every token's parts, whatever the structure."""
        return ()

    def default_follow_oracle_prob(self, system) -> float:
        return 0.0     # no oracle: the structured loss reads whole derivations

    def default_oracle(self, system) -> None:
        return None    # likewise

    def is_initialized(self, model) -> bool:
        return model.has_param("W")

    def predict(self, model, system, docs, spans) -> Parses:
        view = part_scores(model, docs)
        heads, labels = [], []
        heads_kept, margin = self.options["prune_heads"], self.options["prune_margin"]
        for rows in span_rows(docs, spans):
            if heads_kept:
                tables, keep = system.pruned_tables(view, rows, heads_kept, margin)
            else:
                tables, keep = system.tables(view, rows), None
            _, _, tree, _ = system.decode(tables, keep=keep)
            heads.append(numpy.asarray(tree, dtype="int64"))
            labels.append(self._labels(view, rows, tree))
        return Parses(heads, labels, 0)

    def update(self, model, system, docs, spans, golds, *, follow_oracle_prob, rng) -> float:
        parts, backprop_parts = model.begin_update(docs)
        view = ScorerView(model, parts, train=True)
        loss = 0.0
        for rows, gold in zip(span_rows(docs, spans), golds):
            gold_heads = numpy.asarray(gold.heads, dtype="int32")
            loss += sentence_loss(system, view, rows, gold_heads,
                                  numpy.asarray(gold.labels, dtype="int64"))
            if "prune" in view.layout:
                loss += pruner_loss(view, rows, gold_heads)
        view.finish(backprop_parts)
        return loss

    # -- labels -------------------------------------------------------------------

    @staticmethod
    def _labels(view: ScorerView, rows, heads) -> numpy.ndarray:
        """The best label of each arc (-1 for the root's: it is written ROOT)."""
        heads = numpy.asarray(heads)
        pairs = numpy.stack([rows[heads], rows[1:-1]], axis=1)
        scores, _ = view.scores("label", pairs)
        labels = scores.argmax(axis=1).astype("int64")
        labels[heads == 0] = -1
        return labels


def find_structure(name: str):
    """The structure `system = name` decodes globally: the structure of that
    name, or the `exact_structure` of the transition system of that name."""
    from ..registry import structures
    from ..systems import get_system, systems

    if name in structures:
        return get_structure(name)
    exact = getattr(get_system(name), "exact_structure", None) if name in systems else None
    if exact is not None:
        return get_structure(exact)
    with_charts = sorted(n for n, system in systems.get_all().items()
                         if getattr(system, "exact_structure", None))
    known = ", ".join(sorted(structures.get_all()))
    raise ValueError(f"decoding = \"global\" decodes a structure, or a transition system with "
                     f"an exact chart ({', '.join(with_charts)}), named in `system`: "
                     f"Unknown structure {name!r}. Known structures: {known}.")


def sentence_loss(system: LabelledStructure, view: ScorerView, rows: numpy.ndarray,
                  gold_heads: numpy.ndarray, gold_labels: numpy.ndarray) -> float:
    """One sentence's loss (the structured hinge on its tree plus the label
    loss), its gradient added to the view."""
    tables = system.tables(view, rows)
    score, cost, heads, events = system.decode(tables, gold_heads, 1.0)
    g_score, _, g_heads, g_events = system.decode(tables, gold_heads, GOLD_WEIGHT)
    g_cost = gold_cost(g_heads, gold_heads)
    margin = (score + cost) - (g_score + g_cost)
    loss = 0.0
    if margin > 0:
        loss += margin
        system.add_grads(view, rows, heads, events, 1.0)
        system.add_grads(view, rows, g_heads, g_events, -1.0)
    return loss + label_loss(view, rows, gold_heads, gold_labels)


def pruner_loss(view: ScorerView, rows, gold_heads) -> float:
    """Softmax log-loss of the pruner's scores over each word's heads (the
    root and the other words), its gradient added to the view."""
    n = len(gold_heads)
    if n == 0:
        return 0.0
    heads = numpy.repeat(numpy.arange(n + 1), n)            # [head, dep - 1], row-major
    deps = numpy.tile(numpy.arange(1, n + 1), n + 1)
    scores, cache = view.scores("prune", numpy.stack([rows[heads], rows[deps]], axis=1))
    table = scores[:, 0].astype("float64").reshape(n + 1, n)
    words = numpy.arange(n)
    table[words + 1, words] = -numpy.inf                     # no word heads itself
    table -= table.max(axis=0, keepdims=True)
    probs = numpy.exp(table)
    probs /= probs.sum(axis=0, keepdims=True)
    loss = -float(numpy.log(probs[gold_heads, words] + 1e-12).sum())
    probs[gold_heads, words] -= 1.0
    view.backprop(cache, probs.reshape(-1, 1).astype(scores.dtype))
    return loss


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
