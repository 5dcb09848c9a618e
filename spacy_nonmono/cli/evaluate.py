"""`evaluate`: parse a gold-tokenized CoNLL-U file and score the parses."""
import json
from pathlib import Path


def add_parser(commands) -> None:
    p = commands.add_parser(
        "evaluate",
        help="Parse gold-tokenized CoNLL-U with a pipeline; print UAS/LAS/CLAS tables.",
        description=__doc__ + "\nScores follow the CoNLL 2018 evaluation: all syntactic words, "
        "punctuation included, universal labels; gold tokens and sentences.",
    )
    p.add_argument("pipeline", help="Pipeline folder or package name (spacy.load)")
    p.add_argument("gold", type=Path, help="Gold CoNLL-U file")
    p.add_argument("--output", type=Path, default=None, help="Write predictions as CoNLL-U here")
    p.add_argument("--json", type=Path, default=None, help="Write the scores as JSON here")
    p.set_defaults(run=run)


def run(args) -> int:
    import spacy

    from ..evaluation import evaluate_pipeline

    nlp = spacy.load(args.pipeline)
    evaluation = evaluate_pipeline(nlp, args.gold, args.output)
    print(evaluation.to_table())
    if args.json:
        args.json.write_text(json.dumps(evaluation.to_dict(), indent=2))
    return 0
