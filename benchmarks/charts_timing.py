"""Time and memory of the MH3/MH4 charts (`spacy_nonmono.graph.charts.Chart`)
per sentence length, on random scores. docs/results/mh4/charts.md has the
numbers and the command that makes them (`python -c` with `benchmark` below,
run from the repository root).
"""
import time
import tracemalloc

import numpy

from spacy_nonmono.graph.charts import Chart


def benchmark(lengths=(10, 20, 40, 60, 80, 100, 150, 200), k=4, features="hybrid",
              repeat=1, seed=0):
    """Decoding time and memory per sentence length on random scores (not a
    test: docs/results/mh4/charts.md has the numbers and the command). For
    each n a dict: seconds (the best of `repeat` decodes), buffer_bytes (of
    the chart), peak_bytes (the most memory allocated during the first
    decode, by tracemalloc, which sees numpy's allocations: the chart's
    buffers, grown from nothing, and the outputs), table_bytes (the caller's
    score tables, not counted in peak_bytes). features: "hybrid" or "two"."""
    if features not in ("hybrid", "two"):
        raise ValueError(f"features must be 'hybrid' or 'two', not {features!r}")
    rng = numpy.random.default_rng(seed)
    rows = []
    for n in lengths:
        N = n + 2
        chart = Chart(k)
        T = chart.n_transitions
        sh = rng.standard_normal((N, N), dtype=numpy.float32)
        red = rng.standard_normal((T, N, N, N) if features == "hybrid" else (T, N, N),
                                  dtype=numpy.float32)
        tracemalloc.start()
        try:
            chart.decode(sh, red)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        best = None
        for _ in range(max(1, repeat)):
            start = time.perf_counter()
            chart.decode(sh, red)
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        rows.append({"n": n, "seconds": best, "buffer_bytes": chart.buffer_bytes,
                     "peak_bytes": peak, "table_bytes": sh.nbytes + red.nbytes})
    return rows
