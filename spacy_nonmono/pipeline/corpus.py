"""A training corpus on gold tokens that keeps several sentences per doc, so
that a `senter` (or spaCy's parser) learns where sentences end.

spaCy's own `spacy.Corpus.v1` gives either gold tokens one sentence per
example (`gold_preproc = true`: nothing to learn for a senter) or whole docs
retokenized by the pipeline's tokenizer (`gold_preproc = false`). This
reader gives whole docs on their gold tokens. With `gold_sentences = true`
the docs to annotate also carry the gold sentence starts, which a senter
leaves as they are: for a dev corpus, so that the parser is scored (and
model-best chosen) on gold sentences, like the evaluation.

`spacy_nonmono.RawTextCorpus.v1` reads raw text for `spacy pretrain`: one
sentence a line, its tokens split by spaces (the lab's `raw-text` output,
docs/vectors.md), so that pretraining sees the tokens the corpus was cleaned
into rather than the tokenizer's. Unlike spaCy's readers it takes a null path
until it is read, so a training config can carry `[corpora.pretrain]` with
`paths.raw_text` unset.
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.util import ensure_path, registry


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


class RawTextCorpus:
    def __init__(self, path: Optional[Union[str, Path]], *, min_length: int = 0,
                 max_length: int = 0, limit: int = 0):
        self.path = ensure_path(path)
        self.min_length, self.max_length, self.limit = min_length, max_length, limit

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            raise ValueError("spacy_nonmono.RawTextCorpus.v1 needs a path (set "
                             "paths.raw_text to a text file, one tokenized sentence a line).")
        if not self.path.is_file():
            raise ValueError(f"spacy_nonmono.RawTextCorpus.v1: no such file: {self.path}")
        n = 0
        with self.path.open(encoding="utf8") as lines:
            for line in lines:
                words = line.split()
                if not words or len(words) < self.min_length or \
                        (self.max_length and len(words) > self.max_length):
                    continue
                doc = Doc(nlp.vocab, words=words)
                yield Example(doc, doc)
                n += 1
                if n == self.limit:
                    return


@registry.readers("spacy_nonmono.RawTextCorpus.v1")
def raw_text_corpus(path: Optional[Path], min_length: int = 0, max_length: int = 0,
                    limit: int = 0) -> Callable[[Language], Iterable[Example]]:
    """Sentences of a tokenized text file, one a line (see the module);
    min_length/max_length: sentences of fewer/more tokens are left out (0: no
    bound); limit: at most this many sentences (0: all)."""
    return RawTextCorpus(path, min_length=min_length, max_length=max_length, limit=limit)
