"""Parse speed: words per second of `nlp.pipe` on gold-tokenized sentences."""
import statistics
import time
from typing import List

import conllu
from spacy.language import Language

from .conllu_eval import sentence_doc


def words_per_second(nlp: Language, sentences: List[conllu.TokenList], n_runs: int = 3,
                     batch_size: int = 256) -> float:
    """Median words/s of nlp.pipe over the sentences (one doc each, fresh
    unannotated docs every run), over n_runs runs after a short warm-up."""
    n_words = sum(len(sentence_doc(nlp.vocab, s)) for s in sentences)
    for _ in nlp.pipe([sentence_doc(nlp.vocab, s) for s in sentences[:20]]):
        pass
    rates = []
    for _ in range(n_runs):
        docs = [sentence_doc(nlp.vocab, s) for s in sentences]
        start = time.perf_counter()
        for _ in nlp.pipe(docs, batch_size=batch_size):
            pass
        rates.append(n_words / (time.perf_counter() - start))
    return statistics.median(rates)
