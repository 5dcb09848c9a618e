"""`evaluate`: parse a gold-tokenized CoNLL-U file and score the parses."""
import json
from pathlib import Path

from ..files import write_text_atomic
from .common import (HelpFormatter, InputError, check_output_paths, load_parser_pipeline,
                     load_pipeline, warn)


def add_parser(commands) -> None:
    p = commands.add_parser(
        "evaluate",
        help="Parse gold-tokenized CoNLL-U with a pipeline; print UAS/LAS/CLAS tables.",
        description=__doc__ + "\nScores follow the CoNLL 2018 evaluation: all syntactic words, "
        "punctuation included, universal labels; gold tokens and sentences.\n"
        "The gold file is checked first: malformed CoNLL-U, and gold heads that are not a "
        "single-rooted tree, are an error (exit status 2) naming the file and line.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("pipeline", help="Pipeline folder or package name (spacy.load)")
    p.add_argument("gold", type=Path, help="Gold CoNLL-U file")
    p.add_argument("--output", type=Path, default=None,
                   help="Write predictions as CoNLL-U here (the scored sentences)")
    p.add_argument("--json", type=Path, default=None, help="Write the scores as JSON here")
    p.add_argument("--raw-text", action="store_true",
                   help="Parse the gold file's raw text instead (its documents and paragraphs: "
                   "# newdoc, # newpar) with the whole pipeline, tokenizer and sentences "
                   "included, and score it as the CoNLL 2018 shared task does: F1 of tokens, "
                   "sentences, words, UPOS, XPOS, UFeats, AllTags, Lemmas, UAS, LAS, CLAS, "
                   "MLAS, BLEX after aligning system and gold by their characters")
    p.add_argument("--skip-invalid", action="store_true",
                   help="Skip gold sentences whose heads are not a tree (one warning each, "
                   "the count in the report and the JSON) instead of stopping")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..evaluation import evaluate_sentences, read_gold

    # Output paths and the gold file first: their errors are no reason to
    # wait for a pipeline to load, let alone for a parse.
    check_output_paths({"--output": args.output, "--json": args.json}, inputs=[args.gold])
    if args.raw_text:
        return run_raw_text(args)
    sentences, skipped = read_gold(args.gold, skip_invalid=args.skip_invalid)
    for error in skipped:
        warn(f"skipped {error}")
    nlp = load_parser_pipeline(args.pipeline)
    evaluation = evaluate_sentences(nlp, sentences, args.output, skipped=len(skipped))
    # The files before the table: a reader that stops early (`| head`) must
    # not cost the scores.
    if args.json:
        write_text_atomic(args.json, json.dumps(evaluation.to_dict(), indent=2))
    print(evaluation.to_table())
    return 0


def run_raw_text(args) -> int:
    from ..evaluation import evaluate_pipeline_raw_text, read_gold

    if args.skip_invalid:
        raise InputError("--skip-invalid: the raw-text evaluation scores whole documents; "
                         "it cannot leave a gold sentence out")
    read_gold(args.gold)     # bad gold stops here, naming the file and line
    nlp = load_pipeline(args.pipeline)
    try:
        evaluation, words_per_second = evaluate_pipeline_raw_text(nlp, args.gold,
                                                                  output=args.output)
    except ValueError as e:   # the system's text is not the gold's: a tokenizer that
        raise InputError(f"cannot score {args.gold}: {' '.join(str(e).split())}") from None
    if args.json:
        write_text_atomic(args.json, json.dumps({**evaluation.to_dict(),
                                         "words_per_second": round(words_per_second)},
                                        indent=2))
    print(f"{args.gold}: raw text through the whole pipeline, CoNLL 2018 scores "
          f"({words_per_second:,.0f} words/s)")
    print(evaluation.table())
    return 0
