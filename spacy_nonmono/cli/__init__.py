"""Command line: `spacy-nonmono COMMAND ...` (or `python -m spacy_nonmono`).

Exit status: 0 on success; 2, with one `error: ...` line on stderr, for bad
arguments (argparse) and bad input: a gold file that is not valid CoNLL-U or
not a tree, a missing pipeline, a .spacy corpus where CoNLL-U is needed and
the other way round, an output path whose folder does not exist, a pipeline
without a parser. A reader that closes stdout early (`... | head`) ends a
command quietly with exit status 1, as Python's own SIGPIPE recipe does; the
commands write their files before their final report, so those are complete.

The lab's commands (the benchmark workflow, paper reproductions, timing) are
not installed: they live in benchmarks/ of the repository, `python -m
benchmarks COMMAND ...`, and build their command line with `main` here.
"""
import argparse
import os
import sys
from typing import Optional, Sequence

from .common import HelpFormatter, InputError

PROG = "spacy-nonmono"
DESCRIPTION = ("Tools of spacy-nonmono: training configs, parsing text to CoNLL-U, evaluation, "
               "speed, ensembles of "
               "trained parsers and the MH3/MH4 charts' coverage of gold trees.")


def commands():
    """The command modules of the product: each has `add_parser(commands)`."""
    from . import coverage, ensemble, evaluate, init_config, parse, speed

    return (coverage, ensemble, evaluate, init_config, parse, speed)


def build_parser(prog: str = PROG, modules: Optional[Sequence] = None,
                 description: str = DESCRIPTION) -> argparse.ArgumentParser:
    """The argument parser of the command modules (default: the product's,
    `commands()`); the lab (benchmarks/ in the repository) builds its own
    from its modules."""
    from .. import __version__

    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"spacy-nonmono {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in commands() if modules is None else modules:
        module.add_parser(subparsers)
    return parser


def main(argv=None, prog: Optional[str] = None, modules: Optional[Sequence] = None,
         description: str = DESCRIPTION) -> int:
    """Run a command of the modules (default: the product's). prog names the
    program in usage lines: by default the name it was started as (the
    `spacy-nonmono` console script)."""
    from ..evaluation import ConlluError

    prog = prog or os.path.basename(sys.argv[0] or "") or PROG
    args = build_parser(prog, modules, description).parse_args(argv)
    try:
        status = args.run(args) or 0
        # A closed stdout is met here rather than in the interpreter's flush
        # at exit, which would print an "Exception ignored" traceback.
        sys.stdout.flush()
        return status
    except (InputError, ConlluError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        silence_stdout()
        return 1


def silence_stdout() -> None:
    """After a BrokenPipeError on stdout: send what is still buffered, and
    anything written later, to os.devnull, so that the interpreter's flush at
    exit does not fail again (docs.python.org/3/library/signal.html, "Note on
    SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
