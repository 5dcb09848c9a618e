"""`benchmark TREEBANK_DIR`: the whole workflow (convert, train, evaluate,
speed, compare) for one UD treebank, outputs under --root (default bench/).

Every system is trained with the same data and training settings, evaluated
on dev and test (gold tokens and sentences, punctuation included) and timed
side by side in one process; the first system (spaCy's own parser by
default) is the reference of the speed ratio.
"""
from pathlib import Path

from benchmarks import workflow
from spacy_nonmono.cli.common import RawHelpFormatter


def add_parser(commands) -> None:
    p = commands.add_parser(
        "benchmark",
        help="Train systems on a UD treebank; print dev/test UAS/LAS and words/s.",
        description=__doc__,
        formatter_class=RawHelpFormatter,
    )
    p.add_argument("treebank_dir", type=Path,
                   help="Folder with *-{train,dev,test}.conllu (a UD treebank)")
    workflow.add_arguments(p, treebank_selection=False)
    p.set_defaults(run=run)


def run(args) -> int:
    args.ud_dir = args.treebank_dir.resolve().parent
    args.treebanks = args.treebank_dir.resolve().name
    args.step = "all"
    return workflow.run(args)
