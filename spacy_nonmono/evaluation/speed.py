"""Parse speed: words per second on gold-tokenized sentences, several
parsers side by side."""
import statistics
import time
from typing import Dict, List, Optional

import conllu
from spacy.language import Language

from .conllu_eval import sentence_doc


class SpacyTimer:
    """Times `nlp.pipe` on one fresh, unannotated doc per sentence."""

    def __init__(self, nlp: Language, batch_size: int = 256):
        self.nlp = nlp
        self.batch_size = batch_size

    def prepare(self, sentences: List[conllu.TokenList]):
        return [sentence_doc(self.nlp.vocab, s) for s in sentences]

    def run(self, docs) -> None:
        for _ in self.nlp.pipe(docs, batch_size=self.batch_size):
            pass


def transitions_per_word(timer) -> Optional[float]:
    """Transitions per word of a timed pipeline's nonmono_parser over its
    runs so far, or None for other parsers."""
    nlp = getattr(timer, "nlp", None)
    counts = [pipe.parse_counts for _, pipe in getattr(nlp, "pipeline", [])
              if hasattr(pipe, "parse_counts")]
    if not counts or not counts[0]["words"]:
        return None
    return counts[0]["transitions"] / counts[0]["words"]


def count_words(sentences: List[conllu.TokenList]) -> int:
    return sum(1 for s in sentences for t in s if isinstance(t["id"], int))


def words_per_second(timers: Dict[str, object], sentences: List[conllu.TokenList],
                     n_runs: int = 5, progress=None) -> Dict[str, float]:
    """Median words/s of each timer over n_runs runs (see measure_runs)."""
    runs = measure_runs(timers, sentences, n_runs, progress)
    return {name: statistics.median(rates) for name, rates in runs.items()}


def measure_runs(timers: Dict[str, object], sentences: List[conllu.TokenList],
                 n_runs: int = 5, progress=None) -> Dict[str, List[float]]:
    """Words/s of each run of each timer (an object with `prepare(sentences)`
    and `run(prepared)`; only `run` is timed), n_runs runs on the same
    sentences. Runs are interleaved across timers, so that load changes on
    the machine affect all alike; each is warmed up first."""
    n_words = count_words(sentences)
    for timer in timers.values():
        timer.run(timer.prepare(sentences[:20]))
    rates = {name: [] for name in timers}
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
