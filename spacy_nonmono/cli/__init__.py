"""Command line: `python -m spacy_nonmono COMMAND ...` (or `spacy-nonmono`)."""
import argparse
import sys


def main(argv=None) -> int:
    from . import benchmark, evaluate, speed, workflow

    parser = argparse.ArgumentParser(
        prog="python -m spacy_nonmono",
        description="Tools of spacy-nonmono: benchmarks and evaluation.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    benchmark.add_parser(commands)
    evaluate.add_parser(commands)
    speed.add_parser(commands)
    workflow.add_parser(commands)
    args = parser.parse_args(argv)
    return args.run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
