"""Parse speed: words per second on gold-tokenized sentences, several
parsers side by side."""
import statistics
import time
from typing import Dict, List

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


def count_words(sentences: List[conllu.TokenList]) -> int:
    return sum(1 for s in sentences for t in s if isinstance(t["id"], int))


def words_per_second(timers: Dict[str, object], sentences: List[conllu.TokenList],
                     n_runs: int = 5, progress=None) -> Dict[str, float]:
    """Median words/s of each timer (an object with `prepare(sentences)` and
    `run(prepared)`; only `run` is timed) over n_runs runs on the same
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
    return {name: statistics.median(r) for name, r in rates.items()}
