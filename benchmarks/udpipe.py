"""Training the UDPipe 1 (Parsito) baseline of the benchmark workflow on the
same CoNLL-U training file as our parsers (parsing it:
`spacy_nonmono.evaluation.udpipe.UDPipeParser`, which the product's `speed`
command uses too). Needs `pip install ufal.udpipe`.
"""
from pathlib import Path

from spacy_nonmono.evaluation.udpipe import load_udpipe, read_sentences

# Parser options: forms (and the deprels it builds) only, no tags.
FORMS_ONLY = "embedding_upostag=0;embedding_xpostag=0;embedding_feats=0;embedding_lemma=0"
# Non-projective parsing: Parsito's swap system; the dynamic oracle is for
# the projective system only.
SWAP = "transition_system=swap;transition_oracle=static_lazy"
# How comparison tables name the system.
LABEL = "udpipe (Parsito swap, forms only)"


def _read_file(udpipe, path: Path):
    """A CoNLL-U file as the vector of sentences UDPipe's trainer takes."""
    sentences = udpipe.Sentences()
    for sentence in read_sentences(udpipe, Path(path).read_text(encoding="utf8"), str(path)):
        sentences.push_back(sentence)
    return sentences


def train_udpipe(train: Path, dev: Path, output: Path, iterations: int = 10) -> Path:
    """Train a UDPipe 1 parser (no tokenizer, no tagger; swap system, forms
    only); write output/model.udpipe."""
    udpipe = load_udpipe()
    error = udpipe.ProcessingError()
    model = udpipe.Trainer.train(
        "morphodita_parsito", _read_file(udpipe, train), _read_file(udpipe, dev),
        "none", "none", f"iterations={iterations};{FORMS_ONLY};{SWAP}", error,
    )
    if error.occurred():
        raise RuntimeError(f"UDPipe training failed: {error.message}")
    output.mkdir(parents=True, exist_ok=True)
    path = output / "model.udpipe"
    path.write_bytes(model if isinstance(model, bytes) else model.encode("latin-1"))
    return path
