"""UDPipe 1 (Parsito) as an optional baseline: a trained UDPipe model run on
the same gold-tokenized input as our parsers (the `speed` command times it
beside them; benchmarks/udpipe.py, in the repository, trains it).

Like our parsers and spaCy's, it reads word forms only: the training uses no
tagger and the parser's tag/lemma/feature embeddings are switched off, so all
systems see the same input. Its parser (Parsito) is trained with the `swap`
transition system (static lazy oracle), which builds non-projective trees, as
ours do; Parsito's default, `projective`, cannot. Needs `pip install
ufal.udpipe`.
"""
from pathlib import Path
from typing import List, Tuple, Union

import conllu


def load_udpipe():
    try:
        import ufal.udpipe as udpipe
    except ImportError:
        raise SystemExit(
            "UDPipe is an optional baseline: install it with `pip install ufal.udpipe` "
            "(or `pip install -e \".[workflow]\"`), or leave 'udpipe' out of the systems."
        ) from None
    return udpipe


def read_sentences(udpipe, text: str, source: str) -> list:
    """UDPipe sentences of CoNLL-U text (source names it in errors), as a
    Python list: iterating UDPipe's own vector yields copies, so parses
    written into them would be lost."""
    fmt = udpipe.InputFormat.newConlluInputFormat()
    fmt.setText(text)
    error = udpipe.ProcessingError()
    sentences = []
    sentence = udpipe.Sentence()
    while fmt.nextSentence(sentence, error):
        sentences.append(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        raise ValueError(f"{source}: {error.message}")
    return sentences


def blank_parse(sentences: List[conllu.TokenList]) -> str:
    """The sentences as CoNLL-U with only ids, forms and MISC: the same input
    (words) the other parsers get."""
    out = []
    for sentence in sentences:
        tokens = []
        for t in sentence:
            if isinstance(t["id"], tuple) and t["id"][1] == ".":
                continue  # empty nodes are not input to a basic-tree parser
            tokens.append({"id": t["id"], "form": t["form"], "lemma": None, "upos": None,
                           "xpos": None, "feats": None, "head": None, "deprel": None,
                           "deps": None, "misc": t["misc"]})
        out.append(conllu.TokenList(tokens, metadata=sentence.metadata).serialize())
    return "".join(out)


class UDPipeParser:
    """Parses gold-tokenized sentences with a trained UDPipe model.

    Also a speed timer (spacy_nonmono.evaluation.speed): `prepare` builds
    UDPipe's sentences from the words, untimed, as spaCy's Docs are built
    untimed; `run` is the parse alone, without reading or writing CoNLL-U."""

    def __init__(self, model_path: Union[str, Path]):
        self._udpipe = load_udpipe()
        self.model = self._udpipe.Model.load(str(model_path))
        if self.model is None:
            raise ValueError(f"Cannot load UDPipe model {model_path}")
        self._error = self._udpipe.ProcessingError()

    def prepare(self, sentences: List[conllu.TokenList]):
        return read_sentences(self._udpipe, blank_parse(sentences), "UDPipe input")

    def run(self, prepared) -> None:
        for sentence in prepared:
            if not self.model.parse(sentence, self.model.DEFAULT, self._error):
                raise RuntimeError(f"UDPipe failed: {self._error.message}")

    def parse(self, sentences: List[conllu.TokenList]) -> List[Tuple[List[int], List[str]]]:
        prepared = self.prepare(sentences)
        self.run(prepared)
        trees = []
        for sentence in prepared:
            words = [sentence.words[i] for i in range(1, len(sentence.words))]  # 0: the root
            trees.append(([word.head for word in words], [word.deprel for word in words]))
        return trees
