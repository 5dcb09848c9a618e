"""`ensemble`: combine trained parsing pipelines into one pipeline that parses
with their votes (the `nonmono_ensemble` component: each member parses, the
spanning tree with the most weighted votes wins, labels and tags by vote).
The members are copied into the output, which loads with spacy.load and
evaluates like any pipeline."""
from pathlib import Path

from .common import HelpFormatter, InputError


def add_parser(commands) -> None:
    p = commands.add_parser(
        "ensemble",
        help="Combine trained parsing pipelines into one that parses with their votes",
        description=__doc__, formatter_class=HelpFormatter,
    )
    p.add_argument("output", type=Path, help="Folder to write the ensemble pipeline to")
    p.add_argument("members", nargs="+",
                   help="Trained pipelines (folders or package names) with a dependency parser")
    p.add_argument("--weights", type=float, nargs="+", default=None,
                   help="One vote weight per member (default: 1 each)")
    p.add_argument("--structure", default="mst",
                   help="Arc-factored structure that finds the tree with the most votes: "
                        "mst (any tree), mh4_arcs (an MH4 tree), mh3_arcs (projective), 1ec_arcs "
                        "(1-Endpoint-Crossing)")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..pipeline.ensemble import build_ensemble

    if args.output.exists() and any(args.output.iterdir()):
        raise InputError(f"{args.output} exists and is not empty: choose a new folder")
    if args.weights is not None and len(args.weights) != len(args.members):
        raise InputError(f"{len(args.weights)} weights for {len(args.members)} members: "
                         "give one per member")
    print(f"loading {len(args.members)} members ...", flush=True)
    try:
        nlp = build_ensemble(args.members, args.weights, args.structure)
    except ValueError as error:
        raise InputError(str(error)) from None
    args.output.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    print(f"saved the ensemble of {', '.join(args.members)} to {args.output}")
    return 0
