"""Parse speed: words per second on gold-tokenized sentences, several
parsers side by side."""
import statistics
import time
from typing import Dict, List, Optional

import conllu
from spacy.language import Language

from ..threads import blas_threads, describe_blas
from ..conllu_io import sentence_doc


# nlp.pipe batch sizes timed by default: the configs' nlp.batch_size first
# (the figure the comparison reports), then a small one.
BATCH_SIZES = (1000, 64)

# BLAS threads while timing (measure_runs): more oversubscribe a loaded machine.
TIMING_BLAS_THREADS = 1


class SpacyTimer:
    """Times `nlp.pipe` on one fresh, unannotated doc per sentence."""

    def __init__(self, nlp: Language, batch_size: int = BATCH_SIZES[0]):
        self.nlp = nlp
        self.batch_size = batch_size

    def prepare(self, sentences: List[conllu.TokenList]):
        return [sentence_doc(self.nlp.vocab, s) for s in sentences]

    def run(self, docs) -> None:
        for _ in self.nlp.pipe(docs, batch_size=self.batch_size):
            pass


def transitions_per_word(timer) -> Optional[float]:
    """Transitions per word of a timed pipeline's nonmono_parser over its
    runs so far, or None for other parsers and global decoding."""
    nlp = getattr(timer, "nlp", None)
    counts = [pipe.parse_counts for _, pipe in getattr(nlp, "pipeline", [])
              if hasattr(pipe, "parse_counts") and pipe.decoder.model_kind == "transitions"]
    if not counts or not counts[0]["words"]:
        return None
    return counts[0]["transitions"] / counts[0]["words"]


def blas_note() -> str:
    """The line for speed reports that says how BLAS was limited."""
    blas = describe_blas()
    return (f"BLAS threads pinned to {TIMING_BLAS_THREADS} while timing "
            + (f"(otherwise {blas})" if blas else "(no BLAS library loaded)"))


def count_words(sentences: List[conllu.TokenList]) -> int:
    return sum(1 for s in sentences for t in s if isinstance(t["id"], int))


def measure_speed(timers: Dict[str, object], sentences: List[conllu.TokenList],
                  n_runs: int = 5, progress=None) -> Dict[str, dict]:
    """Speed of each timer over n_runs runs (see measure_runs):
    "words_per_second" (median run), "best_words_per_second",
    "transitions_per_word" (None but for nonmono_parser pipelines) and the
    "runs" themselves, each a dict by timer name."""
    runs = measure_runs(timers, sentences, n_runs, progress)
    return {
        "words_per_second": {name: statistics.median(r) for name, r in runs.items()},
        "best_words_per_second": {name: max(r) for name, r in runs.items()},
        "transitions_per_word": {name: transitions_per_word(t) for name, t in timers.items()},
        "runs": runs,
    }


def measure_speed_by_batch_size(timers: Dict[str, object], sentences: List[conllu.TokenList],
                                batch_sizes=BATCH_SIZES, n_runs: int = 5,
                                progress=None) -> Dict[str, object]:
    """measure_speed at each nlp.pipe batch size (timers without a
    `batch_size`, e.g. UDPipe, run the same way each time): the first batch
    size's results at the top level, all of them under "by_batch_size"."""
    by_size = {}
    for size in batch_sizes:
        for timer in timers.values():
            if hasattr(timer, "batch_size"):
                timer.batch_size = size
        if progress is not None:
            progress(f"batch size {size}")
        by_size[str(size)] = measure_speed(timers, sentences, n_runs, progress)
    return dict(by_size[str(batch_sizes[0])], batch_size=batch_sizes[0], by_batch_size=by_size)


def measure_runs(timers: Dict[str, object], sentences: List[conllu.TokenList],
                 n_runs: int = 5, progress=None) -> Dict[str, List[float]]:
    """Words/s of each run of each timer (an object with `prepare(sentences)`
    and `run(prepared)`; only `run` is timed), n_runs runs on the same
    sentences. Runs are interleaved across timers, so that load changes on
    the machine affect all alike; each is warmed up first. BLAS runs on
    TIMING_BLAS_THREADS threads throughout (the one place timing is pinned)."""
    n_words = count_words(sentences)
    rates = {name: [] for name in timers}
    with blas_threads(TIMING_BLAS_THREADS):
        for timer in timers.values():
            timer.run(timer.prepare(sentences[:20]))
        for run in range(n_runs):
            for name, timer in timers.items():
                prepared = timer.prepare(sentences)
                start = time.perf_counter()
                timer.run(prepared)
                rates[name].append(n_words / (time.perf_counter() - start))
            if progress is not None:
                progress(f"speed run {run + 1}/{n_runs}: " + ", ".join(
                    f"{name} {r[-1]:,.0f} w/s" for name, r in rates.items()))
    return rates
