"""Training text with and without punctuation, so that a pipeline reads
sentence-final punctuation where a text has it and does without where it has
none.

A pipeline learns where sentences end from its treebank's text. Trained on a
treebank without punctuation (the PROIEL family: Gothic, Old Church Slavonic,
Latin-PROIEL), a full stop in a modern edition's text means nothing to it;
trained on punctuated text, it leans on punctuation that a transcript, an OCR
page or a manuscript lacks. `spacy_nonmono.punctuation_augmenter.v1` rewrites
a share of the training docs, each with all its annotation:

  add     a mark (".") after the last word of every sentence that does not end
          in punctuation, attached to the sentence's root as `punct`, UPOS
          PUNCT (no XPOS, features or lemma of its own: the taggers learn no
          tag for it, and the lemma is the mark);
  remove  the punctuation tokens (UPOS PUNCT) that head no word and are not
          a sentence's root, the sentences kept as they were.

Each doc is rewritten with probability `add` (marks added) or `remove`
(punctuation taken out), otherwise kept as it is.
"""
import random
from typing import Callable, Iterator, List, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

PUNCT = "PUNCT"


def _rebuilt(vocab, reference: Doc, order: List[Optional[int]], spaces: List[bool],
             sent_starts: List[bool], mark: str = "") -> Doc:
    """A doc of the reference's tokens in `order` (an index, or None for an
    added mark closing the sentence of the token before it) with these
    spaces and sentence starts and their annotation; heads mapped to the
    new positions (a mark's: its sentence's root)."""
    position = {old: new for new, old in enumerate(order) if old is not None}
    words, heads, deps, pos, tags, morphs, lemmas = ([] for _ in range(7))
    for new, old in enumerate(order):
        if old is None:
            words.append(mark)
            heads.append(position[reference[order[new - 1]].sent.root.i])
            deps.append("punct")
            pos.append(PUNCT)
            tags.append("")
            morphs.append("")
            lemmas.append(mark)
            continue
        token = reference[old]
        words.append(token.text)
        heads.append(position[token.head.i])
        deps.append(token.dep_)
        pos.append(token.pos_)
        tags.append(token.tag_)
        morphs.append(str(token.morph))
        lemmas.append(token.lemma_)
    return Doc(vocab, words=words, spaces=spaces, heads=heads, deps=deps, pos=pos,
               tags=tags, morphs=morphs, lemmas=lemmas, sent_starts=sent_starts)


def with_marks(reference: Doc, mark: str) -> Doc:
    """The reference doc with `mark` closing every sentence that does not
    end in punctuation, written against the word before it."""
    order, spaces, starts = [], [], []
    for sent in reference.sents:
        for token in sent:
            order.append(token.i)
            spaces.append(bool(token.whitespace_))
            starts.append(token.i == sent.start)
        if sent[-1].pos_ != PUNCT:
            order.append(None)
            starts.append(False)
            spaces.append(spaces[-1])
            spaces[-2] = False
    return _rebuilt(reference.vocab, reference, order, spaces, starts, mark)


def _removable(token) -> bool:
    """Punctuation that heads no word, is not a root and is not written
    inside a word (the hyphen of "15-year")."""
    if token.pos_ != PUNCT or token.head.i == token.i or token.n_lefts or token.n_rights:
        return False
    sent = token.sent
    if token.i == sent.start or token.i == sent.end - 1:
        return True
    before, after = token.nbor(-1), token.nbor(1)
    return bool(before.whitespace_ or token.whitespace_) or PUNCT in (before.pos_, after.pos_)


def without_punctuation(reference: Doc) -> Doc:
    """The reference doc without its removable punctuation (`_removable`);
    the word before a removed token takes its space."""
    order, spaces, starts = [], [], []
    for sent in reference.sents:
        first = True
        for token in sent:
            if _removable(token):
                if spaces and token.whitespace_:
                    spaces[-1] = True
                continue
            order.append(token.i)
            spaces.append(bool(token.whitespace_))
            starts.append(first)
            first = False
    return _rebuilt(reference.vocab, reference, order, spaces, starts)


def punctuation_augmenter(add: float = 0.0, remove: float = 0.0, mark: str = ".",
                          ) -> Callable[[Language, Example], Iterator[Example]]:
    if not (0.0 <= add <= 1.0 and 0.0 <= remove <= 1.0 and add + remove <= 1.0):
        raise ValueError(f"punctuation_augmenter: add and remove are probabilities whose sum "
                         f"is at most 1, not add={add}, remove={remove}")
    if not mark or any(c.isspace() for c in mark):
        raise ValueError(f"punctuation_augmenter: the mark is a token without spaces, "
                         f"not {mark!r}")

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        reference = example.reference
        draw = random.random()
        if not len(reference) or not reference.has_annotation("SENT_START") \
                or draw >= add + remove:
            yield example
            return
        rewritten = with_marks(reference, mark) if draw < add else \
            without_punctuation(reference)
        # The doc to annotate keeps the gold sentence starts where it had them.
        keep_starts = example.predicted.has_annotation("SENT_START")
        predicted = Doc(nlp.vocab, words=[t.text for t in rewritten],
                        spaces=[bool(t.whitespace_) for t in rewritten],
                        sent_starts=[t.is_sent_start for t in rewritten] if keep_starts
                        else None)
        yield Example(predicted, rewritten)

    return augment


@registry.augmenters("spacy_nonmono.punctuation_augmenter.v1")
def make_punctuation_augmenter(add: float = 0.0, remove: float = 0.0, mark: str = "."
                               ) -> Callable[[Language, Example], Iterator[Example]]:
    """Training docs rewritten with sentence-final marks added (probability
    `add`) or punctuation taken out (`remove`); see the module."""
    return punctuation_augmenter(add, remove, mark)
