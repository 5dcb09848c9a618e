"""The lab of spacy-nonmono: the benchmark workflow and its variants, paper
reproductions (oracle bounds, arc moves, projectivization, optimal-step
timing...) and timing tools. Not installed with the package: run it from the
repository root,

    python -m benchmarks COMMAND ...

(`project.yml` does so). The command line is the product's
(`spacy_nonmono.cli.main`: the same help, exit statuses and error lines) over
the lab's command modules. docs/benchmarks.md describes the commands.
"""
from typing import Optional

PROG = "python -m benchmarks"
DESCRIPTION = ("The lab of spacy-nonmono: the benchmark workflow, oracle analyses, paper "
               "reproductions and timing (run from the repository root).")


def commands():
    """The lab's command modules: each has `add_parser(commands)`."""
    from . import (beam_widths, benchmark, gpu_check, length_cost, optimal_step, oracle,
                   profile, pruning, records, segmenters, senter_weights, text_cost,
                   tokenization, train_speed, vectors, workflow)

    return (beam_widths, benchmark, length_cost, text_cost, optimal_step, oracle, profile,
            train_speed, gpu_check, vectors, workflow, tokenization, records, segmenters,
            senter_weights, pruning)


def build_parser(prog: str = PROG):
    from spacy_nonmono.cli import build_parser as build

    return build(prog, commands(), DESCRIPTION)


def main(argv=None, prog: Optional[str] = None) -> int:
    """Run a lab command (see `spacy_nonmono.cli.main`)."""
    from spacy_nonmono.cli import main as run

    return run(argv, prog or PROG, commands(), DESCRIPTION)
