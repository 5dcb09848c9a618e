"""A training corpus on gold tokens that keeps several sentences per doc, so
that a `senter` (or spaCy's parser) learns where sentences end.

spaCy's own `spacy.Corpus.v1` gives either gold tokens one sentence per
example (`gold_preproc = true`: nothing to learn for a senter) or whole docs
retokenized by the pipeline's tokenizer (`gold_preproc = false`). This
reader gives whole docs on their gold tokens. With `gold_sentences = true`
the docs to annotate also carry the gold sentence starts, which a senter
leaves as they are: for a dev corpus, so that the parser is scored (and
model-best chosen) on gold sentences, like the evaluation.
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.util import registry


class GoldTokenCorpus(Corpus):
    def __init__(self, path: Union[str, Path], *, gold_sentences: bool = False,
                 max_length: int = 0, limit: int = 0,
                 augmenter: Optional[Callable] = None, shuffle: bool = False):
        super().__init__(path, gold_preproc=False, max_length=max_length, limit=limit,
                         augmenter=augmenter, shuffle=shuffle)
        self.gold_sentences = gold_sentences

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            raise ValueError("spacy_nonmono.GoldTokenCorpus.v1 needs a path (set paths.train "
                             "and paths.dev).")
        return super().__call__(nlp)

    def _make_example(self, nlp: Language, reference: Doc, gold_preproc: bool) -> Example:
        sent_starts = None
        if self.gold_sentences and reference.has_annotation("SENT_START"):
            sent_starts = [token.is_sent_start for token in reference]   # None: unknown
        words = [token.text for token in reference]
        spaces = [bool(token.whitespace_) for token in reference]
        return Example(Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=sent_starts),
                       reference)


@registry.readers("spacy_nonmono.GoldTokenCorpus.v1")
def gold_token_corpus(path: Optional[Path], gold_sentences: bool = False, max_length: int = 0,
                      limit: int = 0, augmenter: Optional[Callable] = None,
                      shuffle: bool = False) -> Callable[[Language], Iterable[Example]]:
    """Whole docs of a .spacy corpus on their gold tokens (see the module)."""
    return GoldTokenCorpus(path, gold_sentences=gold_sentences, max_length=max_length,
                           limit=limit, augmenter=augmenter, shuffle=shuffle)
