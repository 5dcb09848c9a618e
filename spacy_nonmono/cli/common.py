"""What the commands share: the help formatter, input errors and the checks
of the files they are given.

Bad arguments and bad input files end a command with one line on stderr,
`error: ...`, and exit status 2 (as argparse does for bad arguments): see
`main` in this package. Anything else that fails is a bug and keeps its
traceback.
"""
import argparse
import os
import sys
from pathlib import Path
from typing import Dict, Iterable, Optional


class InputError(Exception):
    """A command was given something it cannot use (file, pipeline, option)."""


def number_list(text: str, option: str, kind=int) -> list:
    """The comma-separated values of an option: integers >= 1 (kind int) or
    numbers > 0 (kind float); an InputError naming the option otherwise."""
    what, bound = ("integers", ">= 1") if kind is int else ("numbers", "> 0")
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{option} must be comma-separated {what}, got {text!r}") from None
    if not values or not all(v >= 1 if kind is int else v > 0 for v in values):
        raise InputError(f"{option} must be {what} {bound}, got {text!r}")
    return values


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


def load_parser_pipeline(name):
    """load_pipeline for commands that parse: a pipeline without a dependency
    parser is an InputError here, right after loading, rather than nonsense
    later (unparsed docs, where every word is its own root)."""
    from ..pipeline import assigns_dependencies

    nlp = load_pipeline(name)
    if not any(assigns_dependencies(nlp, component) for component in nlp.pipe_names):
        disabled = f"; disabled: {', '.join(nlp.disabled)}" if nlp.disabled else ""
        raise InputError(
            f"{name} has no dependency parser (components: "
            f"{', '.join(nlp.pipe_names) or 'none'}{disabled}); this needs a trained "
            "pipeline with nonmono_parser or spaCy's parser")
    return nlp


def check_output_paths(outputs: Dict[str, Optional[Path]], inputs: Iterable[Path] = ()) -> None:
    """The files a command will write, by option (None: not asked for), checked
    before any work, so that a bad path costs no parse or training and loses
    no results: each must be a writable file path in an existing folder (none
    is created: a mistyped folder is more likely than a wanted new one), no
    two options may name the same file, and none may be one of the inputs,
    which writing it would destroy."""
    given = {option: path for option, path in outputs.items() if path is not None}
    for option, path in given.items():
        check_output_path(path, option)
    seen = {}
    for option, path in given.items():
        same = seen.setdefault(path.resolve(), option)
        if same != option:
            raise InputError(f"{same} and {option} name the same file {path}")
    inputs = {Path(source).resolve() for source in inputs}
    for option, path in given.items():
        if path.resolve() in inputs:
            raise InputError(f"{option} {path}: is an input of this command; writing it "
                             "would overwrite it")


def check_output_path(path: Path, option: str) -> None:
    """One output file (see check_output_paths)."""
    folder = path.parent
    if path.is_dir():
        raise InputError(f"{option} {path}: is a folder; give a file path")
    if not folder.is_dir():
        raise InputError(f"{option} {path}: folder {folder} does not exist"
                         if not folder.exists() else f"{option} {path}: {folder} is not a folder")
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise InputError(f"{option} {path}: not writable" if path.exists() else
                         f"{option} {path}: folder {folder} is not writable")


def check_spacy_corpus(path: Path) -> Path:
    """A .spacy corpus (DocBin) that exists and reads; CoNLL-U must be
    converted first (`spacy convert`, or the lab's `workflow convert`)."""
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


def read_gold_files(paths: Iterable[Path], skip_invalid: bool):
    """(path, sentences, number skipped) for every gold file, all read
    before any work, so that a bad file late in the list costs nothing; with
    skip_invalid, each skipped sentence is one warning."""
    from ..evaluation import read_gold

    out = []
    for path in paths:
        sentences, skipped = read_gold(path, skip_invalid=skip_invalid)
        for error in skipped:
            warn(f"skipped {error}")
        out.append((path, sentences, len(skipped)))
    return out


def gold_treebanks_by_length(args):
    """The gold files of a command with --max-length, --json and
    --skip-invalid (coverage, projectivization): the length checked, the
    outputs checked, the files read as `read_gold_files` reads them."""
    if args.max_length < 0:
        raise InputError(f"--max-length must be 0 (no limit) or positive, not {args.max_length}")
    check_output_paths({"--json": args.json}, inputs=args.gold)
    return read_gold_files(args.gold, args.skip_invalid)
