"""Command line: `spacy-nonmono COMMAND ...` (or `python -m spacy_nonmono`).

Exit status: 0 on success; 2, with one `error: ...` line on stderr, for bad
arguments (argparse) and bad input: a gold file that is not valid CoNLL-U or
not a tree, a missing pipeline, a .spacy corpus where CoNLL-U is needed and
the other way round.
"""
import argparse
import os
import sys
from typing import Optional

from .common import HelpFormatter, InputError

PROG = "spacy-nonmono"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    from .. import __version__
    from . import benchmark, evaluate, oracle, profile, speed, workflow

    parser = argparse.ArgumentParser(
        prog=prog,
        description="Tools of spacy-nonmono: evaluation, speed, oracle analyses and the "
        "benchmark workflow.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"spacy-nonmono {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for module in (benchmark, evaluate, oracle, profile, speed, workflow):
        module.add_parser(commands)
    return parser


def main(argv=None, prog: Optional[str] = None) -> int:
    """Run a command. prog names the program in usage lines: by default the
    name it was started as (the `spacy-nonmono` console script)."""
    from ..evaluation import ConlluError

    prog = prog or os.path.basename(sys.argv[0] or "") or PROG
    args = build_parser(prog).parse_args(argv)
    try:
        return args.run(args) or 0
    except (InputError, ConlluError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
