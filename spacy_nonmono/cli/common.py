"""What the commands share: the help formatter, input errors and the checks
of the files they are given.

Bad arguments and bad input files end a command with one line on stderr,
`error: ...`, and exit status 2 (as argparse does for bad arguments): see
`main` in this package. Anything else that fails is a bug and keeps its
traceback.
"""
import argparse
import sys
from pathlib import Path


class InputError(Exception):
    """A command was given something it cannot use (file, pipeline, option)."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default in its help."""


class RawHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """HelpFormatter for descriptions laid out by hand (module docstrings)."""


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def load_pipeline(name):
    """spacy.load, with a missing or broken pipeline as an InputError."""
    import spacy

    try:
        return spacy.load(name)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot load pipeline {name}: {str(e).strip()}") from None


def check_spacy_corpus(path: Path) -> Path:
    """A .spacy corpus (DocBin) that exists and reads; CoNLL-U must be
    converted first (`spacy convert` or `workflow convert`)."""
    from spacy.tokens import DocBin

    if not path.is_file():
        raise InputError(f"{path}: no such file" if not path.exists() else
                         f"{path}: is a folder, not a .spacy corpus")
    if path.suffix != ".spacy":
        raise InputError(f"{path}: expected a .spacy corpus (DocBin); convert CoNLL-U "
                         "with `spacy convert FILE.conllu DIR --converter conllu`")
    try:
        DocBin().from_disk(path)
    except Exception as e:   # msgpack/zlib errors of all kinds
        raise InputError(f"{path}: not a readable .spacy corpus (DocBin): "
                         f"{type(e).__name__}") from None
    return path


def parse_batch_sizes(text: str):
    """--batch-sizes: comma-separated positive integers."""
    try:
        sizes = [int(k) for k in text.split(",") if k.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise InputError(f"--batch-sizes takes comma-separated positive integers, not {text!r}")
    return sizes
