"""Command line: `python -m spacy_nonmono COMMAND ...` (or `spacy-nonmono`)."""
import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from . import benchmark, evaluate, oracle, speed, workflow

    parser = argparse.ArgumentParser(
        prog="python -m spacy_nonmono",
        description="Tools of spacy-nonmono: evaluation, speed, oracle analyses and the "
        "benchmark workflow.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for module in (benchmark, evaluate, oracle, speed, workflow):
        module.add_parser(commands)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
