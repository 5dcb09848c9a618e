"""`speed`: words/s of several pipelines side by side on one treebank."""
from pathlib import Path

from ..evaluation.speed import BATCH_SIZES
from .common import HelpFormatter, InputError, load_parser_pipeline, parse_batch_sizes


def add_parser(commands) -> None:
    p = commands.add_parser(
        "speed",
        help="Words/s of nlp.pipe for pipelines side by side (one thread, median of runs).",
        description=__doc__ + "\nThe first pipeline is the reference of the speed ratio "
        "(put spaCy's own parser first). A path ending in .udpipe is timed as UDPipe 1.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("pipelines", nargs="+", help="Pipeline folders (spacy.load) or .udpipe models")
    p.add_argument("--gold", type=Path, required=True, help="Gold-tokenized CoNLL-U to parse")
    p.add_argument("--batch-sizes", default=",".join(map(str, BATCH_SIZES)),
                   help="Comma-separated nlp.pipe batch sizes, each timed and reported")
    p.add_argument("--runs", type=int, default=5,
                   help="Timed runs per pipeline, interleaved; the table shows the median "
                   "and the best")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..evaluation import read_conllu
    from ..evaluation.speed import SpacyTimer, blas_note, count_words, measure_speed_by_batch_size

    if len(set(args.pipelines)) != len(args.pipelines):
        raise InputError("give each pipeline once")
    if args.runs < 1:
        raise InputError(f"--runs must be at least 1, got {args.runs}")
    batch_sizes = parse_batch_sizes(args.batch_sizes)
    sentences = read_conllu(args.gold)   # before loading pipelines: fail fast on bad input
    timers = {}
    for name in args.pipelines:
        if name.endswith(".udpipe"):
            from ..evaluation.udpipe import UDPipeParser

            if not Path(name).is_file():
                raise InputError(f"{name}: no such UDPipe model")
            timers[name] = UDPipeParser(name)
        else:
            timers[name] = SpacyTimer(load_parser_pipeline(name))
    print(f"{len(sentences)} sentences, {count_words(sentences)} words; {args.runs} runs "
          f"per batch size", flush=True)
    print(blas_note(), flush=True)
    speed = measure_speed_by_batch_size(timers, sentences, batch_sizes, n_runs=args.runs,
                                        progress=lambda line: print(line, flush=True))
    for size in batch_sizes:
        print(f"\nnlp.pipe batch_size={size}")
        print(speed_table(speed["by_batch_size"][str(size)], list(timers)))
    return 0


def speed_table(speed, names) -> str:
    """Median and best words/s of each pipeline with ratios to the first,
    and transitions per word of nonmono_parser pipelines."""
    median, best = speed["words_per_second"], speed["best_words_per_second"]
    first = names[0]
    width = max(len(name) for name in names)
    lines = [f"{'pipeline':<{width}}  {'words/s':>10}  ratio  {'best run':>10}  ratio  "
             "transitions/word"]
    for name in names:
        per_word = speed["transitions_per_word"][name]
        lines.append(f"{name:<{width}}  {median[name]:>10,.0f}  {median[name] / median[first]:.2f}x  "
                     f"{best[name]:>10,.0f}  {best[name] / best[first]:.2f}x  "
                     f"{'' if per_word is None else f'{per_word:.2f}'}")
    return "\n".join(lines)
