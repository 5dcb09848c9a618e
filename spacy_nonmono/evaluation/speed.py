"""Parse speed: words per second of `nlp.pipe` on gold-tokenized sentences."""
import statistics
import time
from typing import Dict, List

import conllu
from spacy.language import Language

from .conllu_eval import sentence_doc


def _time_pipe(nlp: Language, sentences: List[conllu.TokenList], batch_size: int) -> float:
    docs = [sentence_doc(nlp.vocab, s) for s in sentences]
    n_words = sum(len(doc) for doc in docs)
    start = time.perf_counter()
    for _ in nlp.pipe(docs, batch_size=batch_size):
        pass
    return n_words / (time.perf_counter() - start)


def words_per_second(pipelines: Dict[str, Language], sentences: List[conllu.TokenList],
                     n_runs: int = 5, batch_size: int = 256, progress=None) -> Dict[str, float]:
    """Median words/s of nlp.pipe for each pipeline over the same sentences
    (one doc each, fresh unannotated docs every run). Runs are interleaved
    across pipelines, so that load changes on the machine affect all alike;
    each pipeline is warmed up first."""
    for nlp in pipelines.values():
        _time_pipe(nlp, sentences[:20], batch_size)
    rates = {name: [] for name in pipelines}
    for run in range(n_runs):
        for name, nlp in pipelines.items():
            rates[name].append(_time_pipe(nlp, sentences, batch_size))
        if progress is not None:
            progress(f"speed run {run + 1}/{n_runs}: " + ", ".join(
                f"{name} {r[-1]:,.0f} w/s" for name, r in rates.items()))
    return {name: statistics.median(r) for name, r in rates.items()}
