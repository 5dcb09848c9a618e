"""A decoder and a structure written outside spacy_nonmono, each one class
plus a registry entry (what docs/contributing.md describes). Importing this
module registers them; `spacy train --code tests/toy_plugins/toy_plugins.py`
trains with them.

- decoder `toy_chunked`: the greedy decoder with one setting of its own,
  `chunk_tokens` (the tokens per model call when parsing);
- structure `toy_eisner`: projective first-order decoding (Eisner 1996) in
  pure Python, one root, cost-augmented, on the structure interface of
  `spacy_nonmono.graph.structures`.
"""
import numpy

from spacy_nonmono.decoders.base import Parses, chunks, token_layout
from spacy_nonmono.decoders.greedy import GreedyDecoder
from spacy_nonmono.graph.structures import MSTStructure
from spacy_nonmono.registry import decoders, structures


class ChunkedGreedyDecoder(GreedyDecoder):
    name = "toy_chunked"
    settings = {"chunk_tokens": 2000}

    def check(self, options):
        if not isinstance(options["chunk_tokens"], int) or options["chunk_tokens"] < 1:
            raise ValueError(f"chunk_tokens must be a positive integer, got "
                             f"{options['chunk_tokens']!r}.")

    def predict(self, model, system, docs, spans) -> Parses:
        self.calls = 0
        heads, labels, transitions = [], [], 0
        for chunk_docs, chunk_spans, _ in chunks(docs, spans, self.options["chunk_tokens"]):
            lengths, offsets, root_row = token_layout(chunk_docs, chunk_spans)
            parsed = GreedyDecoder.predict(self, model, system, chunk_docs, chunk_spans)
            heads.extend(parsed.heads)
            labels.extend(parsed.labels)
            transitions += parsed.transitions
            self.calls += 1
        return Parses(heads, labels, transitions)


class EisnerStructure(MSTStructure):
    """Projective trees with one root: the best under arc scores (plus
    cost_weight per word whose head differs from gold). The root takes
    exactly one dependent: position 0's right complete span is built by one
    arc 0 -> r over the complete spans [1, r] and [r, n]."""

    name = "toy_eisner"
    projective = True

    def decode(self, tables, gold_heads=None, cost_weight=0.0):
        arcs = numpy.asarray(tables["arc"][:-1, :-1, 0], dtype="float64").copy()
        N = arcs.shape[0]
        n = N - 1
        if gold_heads is not None:
            gold = numpy.asarray(gold_heads)
            for d in range(1, N):
                arcs[:, d] += cost_weight * (numpy.arange(N) != gold[d - 1])
        if n == 0:
            return 0.0, 0.0, numpy.zeros(0, dtype="int32"), None
        # complete[s][t][direction], incomplete[s][t][direction] over words 1..n;
        # direction 1: head at s (right), 0: head at t (left).
        neg = -numpy.inf
        C = numpy.full((N, N, 2), neg)
        I = numpy.full((N, N, 2), neg)
        Cb = numpy.zeros((N, N, 2), dtype=int)
        Ib = numpy.zeros((N, N, 2), dtype=int)
        for s in range(1, N):
            C[s, s] = 0.0
        for width in range(1, n):
            for s in range(1, N - width):
                t = s + width
                splits = [C[s, r, 1] + C[r + 1, t, 0] for r in range(s, t)]
                r = int(numpy.argmax(splits))
                I[s, t, 0] = splits[r] + arcs[t, s]
                I[s, t, 1] = splits[r] + arcs[s, t]
                Ib[s, t, :] = s + r
                left = [C[s, r, 0] + I[r, t, 0] for r in range(s, t)]
                r = int(numpy.argmax(left))
                C[s, t, 0], Cb[s, t, 0] = left[r], s + r
                right = [I[s, r, 1] + C[r, t, 1] for r in range(s + 1, t + 1)]
                r = int(numpy.argmax(right))
                C[s, t, 1], Cb[s, t, 1] = right[r], s + 1 + r
        roots = [C[1, r, 0] + C[r, n, 1] + arcs[0, r] for r in range(1, N)]
        root = 1 + int(numpy.argmax(roots))
        heads = numpy.zeros(n, dtype="int32")

        def complete(s, t, d):
            if s == t:
                return
            r = Cb[s, t, d]
            if d == 0:
                complete(s, r, 0)
                incomplete(r, t, 0)
            else:
                incomplete(s, r, 1)
                complete(r, t, 1)

        def incomplete(s, t, d):
            if d == 0:
                heads[s - 1] = t
            else:
                heads[t - 1] = s
            r = Ib[s, t, d]
            complete(s, r, 1)
            complete(r + 1, t, 0)

        complete(1, root, 0)
        complete(root, n, 1)
        heads[root - 1] = 0
        cost = 0.0 if gold_heads is None else float(numpy.sum(heads != gold))
        score = float(sum(tables["arc"][h, d + 1, 0] for d, h in enumerate(heads)))
        return score, cost, heads, None


decoders.register("toy_chunked", func=ChunkedGreedyDecoder)
structures.register("toy_eisner", func=EisnerStructure)
