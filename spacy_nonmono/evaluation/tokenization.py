"""Scoring a tokenizer alone: its tokens and words against a treebank's, CoNLL
2018 style, on the treebank's raw text (`conllu_io.gold_documents`)."""
from typing import Callable, Iterable, List, Sequence, Tuple, Union

import conllu
from spacy.tokens import Doc

from ..conllu_io import MULTIWORD_TOKENS, gold_documents
from .raw_text import RawTextEvaluation, evaluate_raw_text


def score_segmentation(documents: Iterable[Iterable[Union[str, Sequence[str]]]],
                       gold: Sequence[conllu.TokenList]) -> RawTextEvaluation:
    """Score tokens (each document's, in order) against the gold sentences
    whose raw text they cut (`gold_documents`), CoNLL 2018 style: each token
    is a word, or a multiword token where it is given as its words (a tuple:
    its FORM is theirs joined); Tokens and Words are meaningful, the rest is
    not (a document is one sentence, its words attached to its first)."""
    system = []
    for tokens in documents:
        sentence, k = [], 1
        for token in tokens:
            words = [token] if isinstance(token, str) else list(token)
            if len(words) > 1:
                sentence.append({"id": (k, "-", k + len(words) - 1), "form": "".join(words),
                                 "lemma": "_", "upos": "_", "xpos": "_", "feats": None,
                                 "head": None, "deprel": "_", "deps": None, "misc": None})
            for word in words:
                sentence.append({"id": k, "form": word, "lemma": "_", "upos": "_", "xpos": "_",
                                 "feats": None, "head": 0 if k == 1 else 1, "deprel": "dep",
                                 "deps": None, "misc": None})
                k += 1
        system.append(conllu.TokenList(sentence))
    return evaluate_raw_text(gold, system)


def doc_tokens(doc: Doc, multiword: bool = True) -> List[Union[str, Tuple[str, ...]]]:
    """The doc's tokens but whitespace, as `score_segmentation` takes them:
    the multiword tokens it records (MULTIWORD_TOKENS) as their words (with
    `multiword`), each other token as its text."""
    ends = {}
    if multiword:
        for start, end in doc.user_data.get(MULTIWORD_TOKENS, ()):
            ends[start] = end
    tokens: List[Union[str, Tuple[str, ...]]] = []
    i = 0
    while i < len(doc):
        end = ends.get(i, i + 1)
        if end > i + 1:
            tokens.append(tuple(token.text for token in doc[i:end]))
        elif not doc[i].is_space:
            tokens.append(doc[i].text)
        i = max(end, i + 1)
    return tokens


def score_tokenizer(tokenizer: Callable, gold: Sequence[conllu.TokenList],
                    multiword: bool = True) -> RawTextEvaluation:
    """Tokens and words F1 (`score_segmentation`) of a tokenizer (text ->
    Doc) on the raw text of the gold sentences; with `multiword`, the
    multiword tokens it records on the Docs count as such."""
    return score_segmentation((doc_tokens(tokenizer(text), multiword)
                               for text in gold_documents(gold)), gold)
