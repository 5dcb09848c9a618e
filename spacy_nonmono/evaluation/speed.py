"""Parse speed: words per second of `nlp.pipe` on pre-tokenized docs."""
import statistics
import time
from typing import List

from spacy.language import Language
from spacy.tokens import Doc


def blank_copies(nlp: Language, docs: List[Doc]) -> List[Doc]:
    """Unannotated copies of docs (same words and spaces) in nlp's vocab."""
    return [
        Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
        for doc in docs
    ]


def words_per_second(nlp: Language, docs: List[Doc], n_runs: int = 3, batch_size: int = 256) -> float:
    """Median words/s of nlp.pipe over copies of docs, over n_runs runs
    (after one warm-up run on a few docs)."""
    n_words = sum(len(doc) for doc in docs)
    for _ in nlp.pipe(blank_copies(nlp, docs[:20]), batch_size=batch_size):
        pass
    rates = []
    for _ in range(n_runs):
        inputs = blank_copies(nlp, docs)
        start = time.perf_counter()
        for _ in nlp.pipe(inputs, batch_size=batch_size):
            pass
        rates.append(n_words / (time.perf_counter() - start))
    return statistics.median(rates)
