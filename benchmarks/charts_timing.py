"""Time and memory of the MH3/MH4 charts (`spacy_nonmono.graph.charts.Chart`)
and of the 1EC charts (`spacy_nonmono.graph.ec_chart.EcChart`, first-order;
`spacy_nonmono.graph.ec3_chart.Ec3Chart`, third-order) per sentence length, on
random scores. docs/results/mh4/charts.md and docs/results/one_ec/README.md
have the numbers and the commands that make them (`python -c` with
`benchmark`, `benchmark_1ec` or `benchmark_1ec(third_order=True)` below, run
from the repository root).
"""
import time
import tracemalloc

import numpy

from spacy_nonmono.graph.charts import Chart
from spacy_nonmono.graph.ec3_chart import Ec3Chart
from spacy_nonmono.graph.ec_chart import EcChart


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
        best, peak = time_and_peak(lambda: chart.decode(sh, red), repeat)
        rows.append({"n": n, "seconds": best, "buffer_bytes": chart.buffer_bytes,
                     "peak_bytes": peak, "table_bytes": sh.nbytes + red.nbytes})
    return rows


def benchmark_1ec(lengths=(10, 20, 40, 60, 80, 100), repeat=1, seed=0, third_order=False):
    """As `benchmark`, for the first-order 1EC chart on random arc scores
    (table_bytes: the (n+1)^2 float64 arc table), or the third-order one on
    random (n+2, n+2, 4) float64 tables; over_p: whether the memory limit
    had the chart compute some blocks where it reads them."""
    rng = numpy.random.default_rng(seed)
    rows = []
    for n in lengths:
        if third_order:
            scores = rng.standard_normal((n + 2, n + 2, 4))
            chart = Ec3Chart()
        else:
            scores = rng.standard_normal((n + 1, n + 1))
            chart = EcChart()
        best, peak = time_and_peak(lambda: chart.decode(scores), repeat)
        rows.append({"n": n, "seconds": best, "buffer_bytes": chart.buffer_bytes,
                     "peak_bytes": peak, "table_bytes": scores.nbytes,
                     "over_p": chart.over_p})
    return rows


def time_and_peak(decode, repeat):
    """(the best of `repeat` calls' seconds, the peak bytes tracemalloc saw
    during a first call)."""
    tracemalloc.start()
    try:
        decode()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best_time(decode, repeat), peak


def best_time(function, repeat: int) -> float:
    """The best of `repeat` calls' seconds."""
    best = None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        function()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best
