"""`senter-weights`: the syntax senter's start_weight, chosen on dev.

`nonmono_syntax_senter` decides sentences as the best analysis of the text
into trees under its head scores, plus `start_weight` times each sentence's
first word's log odds of starting one (0: syntax alone). The weight is a
load-time setting of a trained pipeline: this loads the pipeline once per
weight, parses the raw text of the dev and test files with the whole
pipeline (as `spacy-nonmono evaluate --raw-text`), and prints sentences F1
and LAS for each, marking the weight with the best dev sentences F1.
"""
import json
from pathlib import Path

from spacy_nonmono.cli.common import HelpFormatter, InputError, check_output_paths


def add_parser(commands) -> None:
    p = commands.add_parser(
        "senter-weights",
        help="Sentences F1 and LAS from raw text under several start_weight of a syntax senter.",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    p.add_argument("pipeline", help="A pipeline folder whose `senter` is nonmono_syntax_senter")
    p.add_argument("--dev", type=Path, required=True, help="Gold dev CoNLL-U (its raw text is parsed)")
    p.add_argument("--test", type=Path, required=True, help="Gold test CoNLL-U")
    p.add_argument("--weights", default="0,0.5,1,2", help="Comma-separated start weights (>= 0)")
    p.add_argument("--json", type=Path, default=None, help="Write the scores as JSON here")
    p.set_defaults(run=run)


def parse_weights(text: str):
    try:
        weights = [float(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise InputError(f"--weights: comma-separated numbers, not {text!r}") from None
    if not weights or any(w < 0 for w in weights):
        raise InputError(f"--weights: one or more numbers >= 0, not {text!r}")
    return weights


def run(args) -> int:
    import spacy

    from spacy_nonmono.evaluation import evaluate_pipeline_raw_text

    weights = parse_weights(args.weights)
    check_output_paths({"--json": args.json}, [args.dev, args.test])
    for path in (args.dev, args.test):
        if not path.is_file():
            raise InputError(f"no gold file {path}")
    rows = []
    for weight in weights:
        try:
            nlp = spacy.load(args.pipeline, config={"components": {"senter": {
                "start_weight": weight}}})
        except (OSError, ValueError) as e:
            raise InputError(f"cannot load {args.pipeline} with start_weight {weight}: "
                             f"{str(e).strip()}") from None
        if nlp.get_pipe_meta("senter").factory != "nonmono_syntax_senter":
            raise InputError(f"{args.pipeline}: its senter is not nonmono_syntax_senter")
        row = {"start_weight": weight}
        for split, path in (("dev", args.dev), ("test", args.test)):
            evaluation, words_per_second = evaluate_pipeline_raw_text(nlp, path)
            scores = evaluation.to_dict()
            row[split] = {name: scores[name] for name in ("Sentences", "UAS", "LAS")}
            row[split]["words_per_second"] = round(words_per_second)
        rows.append(row)
        print(f"start_weight {weight}: dev sentences {row['dev']['Sentences']['f1']:.2f}, "
              f"test sentences {row['test']['Sentences']['f1']:.2f}", flush=True)
    best = max(rows, key=lambda row: row["dev"]["Sentences"]["f1"])
    print("\n| start_weight | dev Sentences | dev LAS | test Sentences P/R | test Sentences "
          "| test UAS | test LAS |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        dev, test = row["dev"], row["test"]
        mark = " (chosen on dev)" if row is best else ""
        print(f"| {row['start_weight']:g}{mark} | {dev['Sentences']['f1']:.2f} | "
              f"{dev['LAS']['f1']:.2f} | {test['Sentences']['precision']:.2f} / "
              f"{test['Sentences']['recall']:.2f} | {test['Sentences']['f1']:.2f} | "
              f"{test['UAS']['f1']:.2f} | {test['LAS']['f1']:.2f} |")
    if args.json is not None:
        args.json.write_text(json.dumps({"pipeline": str(args.pipeline), "rows": rows,
                                         "chosen": best["start_weight"]}, indent=2) + "\n")
    return 0
