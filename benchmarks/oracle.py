"""`oracle-bounds`, `oracle-timing` and `arc-moves`: analyses of the non-monotonic Covington
oracle (paper Table 1) and parser (paper section 6.3); `oracle-moves`: what the static
oracles of any systems do on gold trees (transitions per word, swaps per sentence)."""
import json
from pathlib import Path

from spacy_nonmono.cli.common import (HelpFormatter, InputError, check_output_paths,
                                      check_spacy_corpus, load_parser_pipeline)
from spacy_nonmono.configs import config_path

# The paper's Table 1 averages (relative difference of each bound to the loss).
PAPER_RELATIVE_DIFFERENCE = {"lower": 0.00355, "pc_upper": 0.00176, "upper": 0.01513}
# The loss expressions covington_nm trains with.
LOSSES = ("lower", "pc_upper", "upper")


def add_parser(commands) -> None:
    p = commands.add_parser(
        "oracle-bounds",
        help="Tightness of the covington_nm loss bounds along training (paper Table 1)",
        description="Trains covington_nm from CONFIG on TRAIN as `spacy train` does and, for "
        "each of the first N training transitions, computes the lower, pc_upper and upper "
        "bounds and the exact loss (branch and bound). Prints the averages and the mean "
        "relative difference |bound - exact| / exact over configurations with a loss.",
        formatter_class=HelpFormatter,
    )
    add_training_arguments(p)
    p.add_argument("--loss", default="upper", choices=LOSSES,
                   help="Loss the oracle trains with (decides which states are visited)")
    p.add_argument("--transitions", type=int, default=100000,
                   help="Training transitions to analyse")
    p.add_argument("--max-nodes", type=int, default=100000,
                   help="Branch-and-bound budget per configuration")
    p.add_argument("--seed", type=int, default=0, help="Training seed (system.seed)")
    p.set_defaults(run=run_bounds)

    p = commands.add_parser(
        "oracle-timing",
        help="Training time per update of covington_nm with each loss expression",
        description="Trains covington_nm from CONFIG on TRAIN with each loss for the same "
        "number of updates (same seed, same batches) and prints seconds per update and "
        "microseconds per transition, with the ratio to the first loss.",
        formatter_class=HelpFormatter,
    )
    add_training_arguments(p)
    p.add_argument("--losses", default="lower,pc_upper,upper",
                   help="Comma-separated losses to time; the first is the ratio's reference")
    p.add_argument("--steps", type=int, default=100, help="Training updates timed per loss")
    p.set_defaults(run=run_timing)

    p = commands.add_parser(
        "arc-moves",
        help="What a trained covington_nm parser's arc moves do (paper section 6.3)",
        description="Runs the trained parser greedily over gold sentences and reports the "
        "share of arc moves that replaced an existing arc, and of those, how many created "
        "a gold arc and how many were harmful (removed a gold arc, created a wrong one). "
        "Only covington_nm replaces arcs: other pipelines are an error (exit status 2).",
        formatter_class=HelpFormatter,
    )
    p.add_argument("pipeline", type=Path, help="Trained covington_nm pipeline folder")
    p.add_argument("gold", type=Path, help="Gold data (.spacy corpus, e.g. from workflow convert)")
    p.add_argument("--output", type=Path, help="Write the numbers as JSON here")
    p.set_defaults(run=run_arc_moves)

    p = commands.add_parser(
        "oracle-moves",
        help="Transitions per word and swaps per sentence of static oracles on gold trees",
        description="Follows the static oracle of each system on every gold tree of each "
        "CoNLL-U file (sentences that are not trees are left out and counted) and prints "
        "transitions per word and swaps per sentence, on all and on non-projective "
        "sentences.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("gold", type=Path, nargs="*",
                   help="Gold CoNLL-U files, or treebank folders (their *-train.conllu)")
    p.add_argument("--ud-dir", type=Path, help="Folder of treebank folders (with --treebanks)")
    p.add_argument("--treebanks", help="Comma-separated treebank folders of --ud-dir")
    p.add_argument("--systems", default="swap_lazy,swap_stay_eager",
                   help="Comma-separated transition systems")
    p.add_argument("--output", type=Path, help="Write the numbers as JSON here")
    p.set_defaults(run=run_oracle_moves)


def add_training_arguments(p) -> None:
    """What the commands that train covington_nm read and write."""
    p.add_argument("train", type=Path, help="Training data (.spacy)")
    p.add_argument("--config", type=Path, default=config_path("nonmono_parser.cfg"),
                   help="Training config")
    p.add_argument("--output", type=Path, help="Write the numbers as JSON here")


def bounds_table(results) -> str:
    """Markdown table: one row per treebank plus the paper's averages."""
    lines = ["| data | transitions | unsettled | mean lower | mean exact | mean pc_upper "
             "| mean upper | rel. diff. lower | rel. diff. pc_upper | rel. diff. upper |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        m, d = r["mean_per_word"], r["mean_relative_difference"]
        lines.append(
            f"| {name} | {r['configurations']} | {r['unsettled']} | {m['lower']:.5f} "
            f"| {m['exact']:.5f} | {m['pc_upper']:.5f} | {m['upper']:.5f} "
            f"| {d['lower']:.5f} | {d['pc_upper']:.5f} | {d['upper']:.5f} |")
    p = PAPER_RELATIVE_DIFFERENCE
    lines.append(f"| paper, average of 19 CoNLL sets | 100000 | - | 0.59009 | 0.59656 | 0.59954 "
                 f"| 0.62416 | {p['lower']:.5f} | {p['pc_upper']:.5f} | {p['upper']:.5f} |")
    return "\n".join(lines)


def training_overrides(train: Path, loss: str, seed: int = 0):
    return {
        "paths.train": str(train), "paths.dev": str(train),
        "components.nonmono_parser.system": "covington_nm",
        "components.nonmono_parser.system_options.loss": loss,
        "system.seed": seed,
    }


def _write_json(path, data) -> None:
    """--output, when given; its path was checked before the work
    (check_output_paths). Commands write it before printing what it holds,
    so that a reader who stops early (`| head`) costs no results."""
    if path:
        path.write_text(json.dumps(data, indent=2))


def run_timing(args) -> int:
    from benchmarks.oracle_analysis import training_time

    losses = [name.strip() for name in args.losses.split(",") if name.strip()]
    if not losses or not set(losses) <= set(LOSSES):
        # Before training: a typo must not surface after the first losses are timed.
        raise InputError(f"--losses takes comma-separated losses from {', '.join(LOSSES)}, "
                         f"not {args.losses!r}")
    check_training_inputs(args)
    results = {}
    print("| loss | s / update | transitions | us / transition | ratio (per update) |")
    print("|---|---:|---:|---:|---:|")
    for loss in losses:
        r = training_time(args.config, training_overrides(args.train, loss), args.steps)
        results[loss] = r
        _write_json(args.output, results)   # every loss timed so far, before its row
        ratio = r["seconds_per_step"] / results[losses[0]]["seconds_per_step"]
        print(f"| {loss} | {r['seconds_per_step']:.3f} | {r['transitions']} "
              f"| {r['microseconds_per_transition']:.1f} | {ratio:.2f} |", flush=True)
    return 0


def arc_moves_table(results) -> str:
    """Markdown table of arc_move_effects per (treebank, system), with the
    paper's averages."""
    lines = ["| data | system | arc moves | replaced an arc | of those: created gold "
             "| of those: harmful | transitions / word | arc moves / word "
             "| replacing arc moves / word |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (tb, system), c in results.items():
        # Older results lack the per-word counts.
        per_word = " | ".join(f"{c[key]:.2f}" if key in c else "-" for key in (
            "moves_per_word", "arc_moves_per_word", "replacing_per_word"))
        lines.append(f"| {tb} | {system} | {c['arc_moves']} | {100 * c['replacing_share']:.2f}% "
                     f"| {100 * c['created_gold_share']:.2f}% | {100 * c['harmful_share']:.2f}% "
                     f"| {per_word} |")
    lines.append("| paper, average of 19 CoNLL sets | upper | - | 36.86% | 60.31% | 5.99% "
                 "| - | - | - |")
    return "\n".join(lines)


def run_bounds(args) -> int:
    from benchmarks.oracle_analysis import bound_tightness

    check_training_inputs(args)
    overrides = training_overrides(args.train, args.loss, args.seed)
    print(f"Following training of covington_nm ({args.loss}) on {args.train} "
          f"for {args.transitions} transitions", flush=True)
    result = bound_tightness(args.config, overrides, args.transitions,
                             max_nodes=args.max_nodes,
                             log=lambda line: print(line, flush=True))
    result["train"] = str(args.train)
    _write_json(args.output, result)
    print(bounds_table({args.train.parent.name or str(args.train): result}))
    print(f"{result['lower_below_pc_upper']} configurations with lower < pc_upper; "
          f"mean search nodes {result['mean_search_nodes']:.1f}; {result['seconds']:.0f}s")
    return 0


def check_training_inputs(args) -> None:
    check_output_paths({"--output": args.output}, inputs=[args.train, args.config])
    check_spacy_corpus(args.train)
    if not args.config.is_file():
        raise InputError(f"{args.config}: no such config file")


# Systems whose arc moves can replace an existing arc; arc-moves reports on those.
NON_MONOTONIC_SYSTEMS = ("covington_nm",)


def check_arc_moves_pipeline(nlp, name) -> None:
    """arc-moves measures arc replacements: a pipeline without a
    non-monotonic nonmono_parser has none to report, which is an InputError
    rather than a table of zeros."""
    from spacy_nonmono.pipeline.parser import NonMonoParser

    parsers = [pipe for _, pipe in nlp.pipeline if isinstance(pipe, NonMonoParser)]
    if not parsers:
        raise InputError(f"{name} has no nonmono_parser: arc-moves has nothing to report")
    system = parsers[0].cfg["system"]
    if system not in NON_MONOTONIC_SYSTEMS:
        raise InputError(f"{name} uses system {system!r}, which never replaces an arc: "
                         f"arc-moves has nothing to report (it needs {', '.join(NON_MONOTONIC_SYSTEMS)})")


def arc_move_examples(nlp, corpus: Path):
    """Examples of the gold docs of a .spacy corpus, each with a predicted
    doc of the same words, spaces and sentence starts (no re-tokenization,
    so no sentence is lost to misalignment)."""
    from spacy.tokens import Doc, DocBin
    from spacy.training import Example

    examples = []
    for gold in DocBin().from_disk(corpus).get_docs(nlp.vocab):
        predicted = Doc(nlp.vocab, words=[t.text for t in gold],
                        spaces=[bool(t.whitespace_) for t in gold],
                        sent_starts=[t.is_sent_start for t in gold])
        examples.append(Example(predicted, gold))
    return examples


def run_arc_moves(args) -> int:
    from benchmarks.oracle_analysis import arc_move_effects

    check_output_paths({"--output": args.output}, inputs=[args.gold])
    check_spacy_corpus(args.gold)
    nlp = load_parser_pipeline(args.pipeline)
    check_arc_moves_pipeline(nlp, args.pipeline)
    counts = arc_move_effects(nlp, arc_move_examples(nlp, args.gold))
    _write_json(args.output, counts)
    print(arc_moves_table({(args.gold.name, args.pipeline.name): counts}))
    return 0


def oracle_moves_table(results) -> str:
    """Markdown table of static_oracle_counts per (data, system)."""
    lines = ["| data | system | sentences | non-projective | transitions / word "
             "| swaps / sentence | swaps / non-projective sentence | most swaps |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (data, system), c in results.items():
        nonproj = c["nonprojective_sentences"]
        per_nonproj = f"{c['nonprojective_swaps'] / nonproj:.2f}" if nonproj else "-"
        lines.append(f"| {data} | {system} | {c['sentences']} | {nonproj} "
                     f"| {c['transitions'] / max(1, c['words']):.2f} "
                     f"| {c['swaps'] / max(1, c['sentences']):.3f} | {per_nonproj} "
                     f"| {c['max_swaps']} |")
    return "\n".join(lines)


def gold_files(paths, ud_dir=None, treebanks=None):
    """CoNLL-U files from files and treebank folders (their training file),
    and the named treebank folders of ud_dir."""
    if (ud_dir is None) != (treebanks is None):
        raise InputError("--ud-dir and --treebanks go together")
    if treebanks:
        paths = list(paths) + [ud_dir / name.strip() for name in treebanks.split(",")
                               if name.strip()]
    if not paths:
        raise InputError("no gold data: give CoNLL-U files or --ud-dir with --treebanks")
    files = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*-train.conllu"))
            if not found:
                raise InputError(f"{path}: no *-train.conllu in this folder")
            files.append(found[0])
        else:
            files.append(path)
    return files


def run_oracle_moves(args) -> int:
    from spacy_nonmono.evaluation import read_gold
    from spacy_nonmono.conllu_io import gold_tree
    from benchmarks.oracle_analysis import static_oracle_counts
    from spacy_nonmono.systems import get_system

    names = [name.strip() for name in args.systems.split(",") if name.strip()]
    for name in names:
        try:
            get_system(name)
        except Exception as e:
            raise InputError(str(e)) from None
    files = gold_files(args.gold, args.ud_dir, args.treebanks)
    check_output_paths({"--output": args.output}, inputs=files)
    results = {}
    for path in files:
        sentences, skipped = read_gold(path, skip_invalid=True)
        if skipped:
            print(f"{path}: {len(skipped)} sentences that are not trees left out", flush=True)
        trees = [gold_tree(s) for s in sentences]
        data = path.parent.name if path.parent.name else path.stem
        for name in names:
            results[(data, name)] = static_oracle_counts(name, trees)
    _write_json(args.output, {f"{d}/{s}": c for (d, s), c in results.items()})
    print(oracle_moves_table(results))
    return 0
