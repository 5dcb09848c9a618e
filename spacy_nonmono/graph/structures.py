"""The structures of exact global decoding, behind one interface: dense
score tables in, the best tree and its derivation out, cost-augmented.
They know nothing of models; the global decoder (decoders/global_decoder.py)
fills their tables from a model's scores and trains on their derivations.

A structure is registered by name in `spacy_nonmono.registry.structures`
(entry points allowed) as a callable `() -> Structure`:

- `mst`: edge-factored maximum spanning tree with exactly one root (Chu-Liu/
  Edmonds with Tarjan's merging, `graph/mst.pyx`); one table "arc".
- `mh3_chart`, `mh4_chart`: the charts of the MH3 / MH4 deduction systems
  (Gómez-Rodríguez, Shi & Lee 2018; `graph/charts.pyx`), which tabulate the
  derivations of the transition systems `mh3` and `mh4` (those systems
  name them as their `exact_structure`); tables "shift" and "reduce" (2 / 6
  transitions).
- `mh3_arcs`, `mh4_arcs`: the same charts scored by arcs alone, one table
  "arc" as for `mst`: the best tree MH3 (projective) or MH4 derives under
  edge-factored scores, e.g. an arc scorer's or an ensemble's votes.
- `1ec_arcs`: the best 1-Endpoint-Crossing tree (Pitler, Kannan & Marcus
  2013) under the same table (`graph/ec_chart.pyx`, first-order; O(n^4)
  with a larger constant, hence its own length guard `max_length`).
- `1ec`: the best 1EC tree under a crossing-sensitive third-order
  factorization (`graph/ec3_chart.pyx`): grandparent, head and sibling
  scores for arcs outside crossing regions, one score for arcs inside them;
  one table "arc" with those 4 outputs.

Positions are 0..n+1: 0 the root node, 1..n the words, n+1 the end of the
buffer (the charts' sentinel; MST ignores it).

Pruned decoding: `decode(..., keep=mask)` with a bool (n+2, n+2) [head, dep]
mask (`keep_heads` makes one from first-order arc scores) finds the best tree
that uses only kept arcs, exactly; where no tree of the structure does, the
structure decodes again without the mask (counted in `fallbacks`), so a tree
always comes out. The MH3/MH4 charts then enumerate only live items (their
work follows the kept arcs); MST and 1EC read pruned arcs as forbidden.

A table holds its scores with the outputs last: (N, N, outputs) for a pair table, (outputs, N, N, N)
for a triple table (a chart's reduce table with "hybrid" features: s1, s0,
b0).
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

# Cost weight that makes a structure prefer a gold arc to any score
# difference a model's tables hold (entries are far below 1e4): decoding with
# it gives the best-scoring derivation among those with the most gold arcs.
GOLD_WEIGHT = -1.0e4

# The score a pruned arc gets in MST, which needs finite scores: a tree
# with one is worse than any tree of kept arcs.
PRUNED_SCORE = -1.0e9

# (table name, positions (E, arity), outputs (E,)): the table entries a
# derivation's score sums.
Entries = List[Tuple[str, numpy.ndarray, numpy.ndarray]]


class Structure:
    """Base class. `tables` names the score tables the structure reads and
    their number of outputs; `arities` the position tuples each table may be
    filled over (2: pairs; 3: triples, where the structure accepts them)."""

    name = "base"
    projective = False              # only projective trees (the component projectivizes)
    tables: Dict[str, int] = {}
    arities: Dict[str, Tuple[int, ...]] = {}

    # Pruned decodes that found no tree of kept arcs (and decoded unpruned).
    fallbacks = 0
    # The table whose first output holds first-order arc scores (what
    # `keep_heads` reads to prune), or None: a model adds a pruner.
    arc_table = None

    # Whether read_triples tells the triples a pruned decode reads (None:
    # no tree of kept arcs); else it always answers None (all of them).
    reads_triples = False

    def read_triples(self, keep) -> Optional[numpy.ndarray]:
        """The (E, 3) position triples of its triple tables that a decode
        pruned with keep reads (the others need not be scored), or None:
        all of them (with reads_triples: no tree uses only kept arcs)."""
        return None

    def decode(self, tables: Dict[str, numpy.ndarray], gold_heads=None,
               cost_weight: float = 0.0, keep=None):
        """(score, cost, heads, derivation): the best tree under the tables
        plus cost_weight x (words attached to a head other than gold_heads');
        heads 1-based (0 = root), one per word; cost the number of such
        words; derivation what `entries` reads. keep: None, or a bool
        (n+2, n+2) [head, dep] mask: the best tree of kept arcs (see the
        module)."""
        raise NotImplementedError

    def entries(self, heads, derivation, arities: Dict[str, int]) -> Entries:
        """The table entries whose sum is the derivation's score, for tables
        filled over these arities."""
        raise NotImplementedError

    def __getstate__(self):
        # Decoding buffers are rebuilt on use.
        return {k: None if k.startswith("_") else v for k, v in self.__dict__.items()}


class MSTStructure(Structure):
    """Maximum spanning tree with one root: a tree's score is the sum of its
    arcs' scores, arc[head, dependent]."""

    name = "mst"
    tables = {"arc": 1}
    arities = {"arc": (2,)}
    arc_table = "arc"

    def decode(self, tables, gold_heads=None, cost_weight=0.0, keep=None):
        from .mst import mst

        arcs = numpy.ascontiguousarray(tables["arc"][:-1, :-1, 0])
        if keep is not None:
            kept = numpy.asarray(keep, dtype=bool)[:-1, :-1]
            heads, score, cost = mst(numpy.where(kept, arcs, PRUNED_SCORE), gold_heads,
                                     cost_weight)
            if kept[heads, numpy.arange(1, len(heads) + 1)].all():
                return score, cost, heads, None
            self.fallbacks += 1
        heads, score, cost = mst(arcs, gold_heads, cost_weight)
        return score, cost, heads, None

    def entries(self, heads, derivation, arities):
        deps = numpy.arange(1, len(heads) + 1)
        pairs = numpy.stack([numpy.asarray(heads), deps], axis=1)
        return [("arc", pairs, numpy.zeros(len(deps), dtype="int64"))]


class ChartStructure(Structure):
    """The MH_k chart (k = 3 or 4) with one root. Its derivation is the
    chart's events: one row (t, s1, s0, b0) per reduce transition t, and
    (-1, -1, s0, b0) per scored shift."""

    def __init__(self, k: int):
        if k not in (3, 4):
            raise ValueError(f"An MH_k chart has k = 3 or 4, not {k!r}.")
        self.k = k
        self.name = f"mh{k}_chart"
        self.projective = k == 3
        self.tables = {"shift": 1, "reduce": 2 if k == 3 else 6}
        self.arities = {"shift": (2,), "reduce": (2, 3)}
        self._chart = None

    def chart(self):
        """The chart (single root), built on first use."""
        if self._chart is None:
            from .charts import Chart

            self._chart = Chart(self.k, single_root=True)
        return self._chart

    def decode(self, tables, gold_heads=None, cost_weight=0.0, keep=None):
        shift = numpy.ascontiguousarray(tables["shift"][..., 0])
        reduce = tables["reduce"]
        if reduce.ndim == 3:        # a pair table (N, N, T): the chart reads (T, N, N)
            reduce = numpy.ascontiguousarray(numpy.moveaxis(reduce, -1, 0))
        return self._decode(shift, reduce, gold_heads, cost_weight, keep=keep)

    reads_triples = True

    def read_triples(self, keep):
        return self.chart().read_triples(keep)

    def _decode(self, *args, **kwargs):
        chart = self.chart()
        before = chart.fallbacks
        result = chart.decode(*args, **kwargs)
        self.fallbacks += chart.fallbacks - before
        return result

    def entries(self, heads, derivation, arities):
        events = numpy.asarray(derivation).reshape(-1, 4)
        shifts, reduces = events[events[:, 0] < 0], events[events[:, 0] >= 0]
        slots = reduces[:, 1:4] if arities["reduce"] == 3 else reduces[:, 2:4]
        return [("shift", shifts[:, 2:4], numpy.zeros(len(shifts), dtype="int64")),
                ("reduce", slots, reduces[:, 0])]


class ArcChartStructure(ChartStructure):
    """The MH_k chart with one root under arc scores alone: a tree's score
    is the sum of its arcs' scores, arc[head, dependent], over the trees the
    chart derives (all projective trees for k = 3; MH4's mildly
    non-projective ones for k = 4)."""

    def __init__(self, k: int):
        super().__init__(k)
        self.name = f"mh{k}_arcs"
        self.tables = {"arc": 1}
        self.arities = {"arc": (2,)}
        self.arc_table = "arc"
        # The charts read transition tables; under arc scores alone they are
        # zero. One flat zero buffer, grown to the longest sentence, serves
        # every length (its prefix reshaped is C-contiguous).
        self._zeros = numpy.zeros(0, dtype=numpy.float32)

    def decode(self, tables, gold_heads=None, cost_weight=0.0, keep=None):
        chart = self.chart()
        arcs = tables["arc"][..., 0]
        N = arcs.shape[0]
        size = chart.n_transitions * N * N
        if self._zeros is None or self._zeros.size < size:
            self._zeros = numpy.zeros(size, dtype=numpy.float32)
        transitions = self._zeros[:size].reshape(chart.n_transitions, N, N)
        score, cost, heads, _ = self._decode(transitions[0], transitions, gold_heads,
                                             cost_weight, arc_scores=arcs, keep=keep)
        return score, cost, heads, None

    entries = MSTStructure.entries


class _OneEndpointCrossingBase(Structure):
    """What the two 1EC structures share: the chart, built on first use;
    gold itself where it is the closest tree to gold; the arc-factored cost
    added to the scores (`_with_cost`) for cost-augmented decoding."""

    def __init__(self):
        self._chart = None

    @staticmethod
    def contains(heads) -> bool:
        """Whether a tree (1-based heads, 0 the root) is one the chart finds:
        1-Endpoint-Crossing with one root arc."""
        from . import is_one_endpoint_crossing

        return int(numpy.sum(numpy.asarray(heads) == 0)) == 1 and is_one_endpoint_crossing(heads)

    def decode(self, tables, gold_heads=None, cost_weight=0.0, keep=None):
        if keep is not None:
            keep = numpy.asarray(keep, dtype=bool)
            try:
                result = self._decode(self._pruned(tables, keep), gold_heads, cost_weight)
                heads = result[2]
                # (the chart's one root is a penalty: with arcs forbidden,
                # a tree with several may be all that is left)
                if keep[heads, numpy.arange(1, len(heads) + 1)].all() \
                        and numpy.count_nonzero(heads == 0) == 1:
                    return result
            except ValueError:          # the chart's: no 1EC tree of finite score
                pass
            self.fallbacks += 1
        return self._decode(tables, gold_heads, cost_weight)

    def _pruned(self, tables, keep):
        """The tables with the pruned arcs' scores at -inf (forbidden)."""
        table = numpy.array(tables["arc"], dtype=numpy.float64)
        for channel in self.arc_channels:
            table[..., channel][~keep] = -numpy.inf
        return {**tables, "arc": table}

    def _decode(self, tables, gold_heads, cost_weight):
        if self._chart is None:
            self._chart = self._new_chart()
        scores = self._scores(tables)
        if gold_heads is not None and cost_weight <= GOLD_WEIGHT and self.contains(gold_heads):
            # The tree with the most gold arcs is gold itself: no chart (half
            # of training's decoding).
            heads = numpy.asarray(gold_heads, dtype=numpy.int32)
            return self.tree_score(scores, heads), 0.0, heads, None
        if gold_heads is None or not cost_weight:
            score, heads = self._chart.decode(scores)
            return score, (0.0 if gold_heads is None else gold_cost(heads, gold_heads)), heads, None
        _, heads = self._chart.decode(self._with_cost(scores, arc_cost(gold_heads, cost_weight)))
        return self.tree_score(scores, heads), gold_cost(heads, gold_heads), heads, None


class OneEndpointCrossingStructure(_OneEndpointCrossingBase):
    """The 1EC chart with one root under arc scores: the best tree among
    the 1-Endpoint-Crossing ones, a tree's score the sum of its arcs'."""

    name = "1ec_arcs"
    tables = {"arc": 1}
    arities = {"arc": (2,)}
    arc_table = "arc"
    arc_channels = (0,)
    # Sentences longer than this are parsed in windows and skipped in
    # training (docs/results/one_ec/README.md: time and memory by length).
    max_length = 100

    @staticmethod
    def _new_chart():
        from .ec_chart import EcChart

        return EcChart()

    @staticmethod
    def _scores(tables):
        return numpy.asarray(tables["arc"][:-1, :-1, 0], dtype=numpy.float64)

    @staticmethod
    def _with_cost(arcs, cost):
        return arcs + cost

    @staticmethod
    def tree_score(arcs, heads) -> float:
        return float(arcs[heads, numpy.arange(1, len(heads) + 1)].sum())

    entries = MSTStructure.entries


class ThirdOrderOneEndpointCrossingStructure(_OneEndpointCrossingBase):
    """The third-order 1EC chart with one root: the best tree among the
    1-Endpoint-Crossing ones under the crossing-sensitive grand-sibling
    factorization of `graph/ec3_chart.pyx`, read from one pair table "arc"
    whose outputs are the channels grandparent -> m, head -> m, sibling ->
    m and crossing-region head -> m (row n + 1, the sentinel, stands for a
    missing grandparent or sibling)."""

    name = "1ec"
    tables = {"arc": 4}
    arities = {"arc": (2,)}
    # Pruning reads no channel of this table (a model adds a pruner); an arc
    # reads the head or the crossing-region channel, both forbidden when pruned.
    arc_channels = (1, 3)
    # Longer sentences are parsed in windows and skipped in training
    # (docs/results/one_ec/README.md: time and memory by length).
    max_length = 80

    @staticmethod
    def _new_chart():
        from .ec3_chart import Ec3Chart

        return Ec3Chart()

    @staticmethod
    def _scores(tables):
        return numpy.asarray(tables["arc"], dtype=numpy.float64)

    @staticmethod
    def _with_cost(scores, cost):
        # Every arc reads exactly one of the head and crossing-region
        # channels: the cost on both.
        from .ec3_chart import CHANNELS

        n = scores.shape[0] - 2
        costed = scores.copy()
        for channel in (CHANNELS["head"], CHANNELS["crossing"]):
            costed[:n + 1, :n + 1, channel] += cost
        return costed

    @staticmethod
    def tree_score(scores, heads) -> float:
        from .ec3_chart import one_ec_o3_terms

        pairs, channels = one_ec_o3_terms(heads)
        return float(scores[pairs[:, 0], pairs[:, 1], channels].sum())

    def entries(self, heads, derivation, arities):
        from .ec3_chart import one_ec_o3_terms

        pairs, channels = one_ec_o3_terms(heads)
        return [("arc", pairs, channels)]


def keep_heads(arc_scores, max_heads: int, margin: float) -> numpy.ndarray:
    """The pruning mask (n+2, n+2) [head, dep] of first-order arc scores
    (n+2, n+2) [head, dep]: for each word, its max_heads best heads (among
    the root and the other words) whose probability under a softmax over
    that word's heads is at least exp(-margin) times the best one's. The
    best head is always kept."""
    scores = numpy.asarray(arc_scores, dtype=numpy.float64)
    N = scores.shape[0]
    n = N - 2
    keep = numpy.zeros((N, N), dtype=bool)
    if n <= 0:
        return keep
    heads = scores[: n + 1, 1 : n + 1].copy()         # heads 0..n of words 1..n
    words = numpy.arange(n)
    heads[words + 1, words] = -numpy.inf              # no word heads itself
    k = min(max_heads, n)
    order = numpy.argsort(-heads, axis=0, kind="stable")[:k]
    best = heads[order[0], words]
    ranked = heads[order, words[None, :]]
    chosen = ranked >= best[None, :] - margin        # softmax ratio: score difference
    keep[order[chosen], (words[None, :] + 1).repeat(k, axis=0)[chosen]] = True
    return keep


def arc_cost(gold_heads: Sequence[int], cost_weight: float) -> numpy.ndarray:
    """The arc-factored cost as an (n+1, n+1) [head, dep] table: cost_weight
    on every arc to a word from another head than its gold one."""
    n = len(gold_heads)
    cost = numpy.full((n + 1, n + 1), float(cost_weight))
    cost[numpy.asarray(gold_heads), numpy.arange(1, n + 1)] = 0.0
    return cost


def gold_cost(heads: Sequence[int], gold_heads: Optional[Sequence[int]]) -> float:
    """Words attached to another head than in gold (a structure's cost)."""
    return float(numpy.sum(numpy.asarray(heads) != numpy.asarray(gold_heads)))


def mh3_chart() -> ChartStructure:
    return ChartStructure(3)


def mh4_chart() -> ChartStructure:
    return ChartStructure(4)


def mh3_arcs() -> ArcChartStructure:
    return ArcChartStructure(3)


def mh4_arcs() -> ArcChartStructure:
    return ArcChartStructure(4)


def one_ec_arcs() -> OneEndpointCrossingStructure:
    return OneEndpointCrossingStructure()


def one_ec() -> ThirdOrderOneEndpointCrossingStructure:
    return ThirdOrderOneEndpointCrossingStructure()
