"""UDPipe 1 (Parsito) as an optional baseline: trained on the same CoNLL-U
training file and run on the same gold-tokenized input as our parsers.

Like our parsers and spaCy's, it reads word forms only: the training uses no
tagger and the parser's tag/lemma/feature embeddings are switched off, so all
systems see the same input. Needs `pip install ufal.udpipe`.
"""
from pathlib import Path
from typing import List, Tuple, Union

import conllu

# Parser options: forms (and the deprels it builds) only, no tags.
FORMS_ONLY = "embedding_upostag=0;embedding_xpostag=0;embedding_feats=0;embedding_lemma=0"


def _udpipe():
    try:
        import ufal.udpipe as udpipe
    except ImportError:
        raise SystemExit(
            "UDPipe is an optional baseline: install it with `pip install ufal.udpipe` "
            "(or `pip install -e \".[workflow]\"`), or leave 'udpipe' out of the systems."
        ) from None
    return udpipe


def _read_sentences(udpipe, path: Path):
    fmt = udpipe.InputFormat.newConlluInputFormat()
    fmt.setText(Path(path).read_text(encoding="utf8"))
    error = udpipe.ProcessingError()
    sentences = udpipe.Sentences()
    sentence = udpipe.Sentence()
    while fmt.nextSentence(sentence, error):
        sentences.push_back(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        raise ValueError(f"{path}: {error.message}")
    return sentences


def train_udpipe(train: Path, dev: Path, output: Path, iterations: int = 10) -> Path:
    """Train a UDPipe 1 parser (no tokenizer, no tagger); write output/model.udpipe."""
    udpipe = _udpipe()
    error = udpipe.ProcessingError()
    model = udpipe.Trainer.train(
        "morphodita_parsito", _read_sentences(udpipe, train), _read_sentences(udpipe, dev),
        "none", "none", f"iterations={iterations};{FORMS_ONLY}", error,
    )
    if error.occurred():
        raise RuntimeError(f"UDPipe training failed: {error.message}")
    output.mkdir(parents=True, exist_ok=True)
    path = output / "model.udpipe"
    path.write_bytes(model if isinstance(model, bytes) else model.encode("latin-1"))
    return path


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
    """Parses gold-tokenized CoNLL-U with a trained UDPipe model."""

    def __init__(self, model_path: Union[str, Path]):
        udpipe = _udpipe()
        self.model = udpipe.Model.load(str(model_path))
        if self.model is None:
            raise ValueError(f"Cannot load UDPipe model {model_path}")
        self.pipeline = udpipe.Pipeline(self.model, "conllu", udpipe.Pipeline.NONE,
                                        udpipe.Pipeline.DEFAULT, "conllu")
        self._error = udpipe.ProcessingError()

    def parse(self, sentences: List[conllu.TokenList]) -> List[Tuple[List[int], List[str]]]:
        output = self.pipeline.process(blank_parse(sentences), self._error)
        if self._error.occurred():
            raise RuntimeError(f"UDPipe failed: {self._error.message}")
        trees = []
        for parsed in conllu.parse(output):
            words = [t for t in parsed if isinstance(t["id"], int)]
            trees.append(([int(t["head"]) for t in words], [t["deprel"] for t in words]))
        return trees

    # The speed-timer interface of spacy_nonmono.evaluation.speed.
    def prepare(self, sentences: List[conllu.TokenList]) -> str:
        return blank_parse(sentences)

    def run(self, text: str) -> None:
        self.pipeline.process(text, self._error)
