"""`speed`: words/s of several pipelines side by side on one treebank."""
from pathlib import Path


def add_parser(commands) -> None:
    p = commands.add_parser(
        "speed",
        help="Words/s of nlp.pipe for pipelines side by side (one thread, median of runs).",
        description=__doc__ + "\nThe first pipeline is the reference of the speed ratio "
        "(put spaCy's own parser first). A path ending in .udpipe is timed as UDPipe 1.",
    )
    p.add_argument("pipelines", nargs="+", help="Pipeline folders (spacy.load) or .udpipe models")
    p.add_argument("--gold", type=Path, required=True, help="Gold-tokenized CoNLL-U to parse")
    p.add_argument("--runs", type=int, default=5)
    p.set_defaults(run=run)


def run(args) -> int:
    import spacy

    from ..evaluation import read_conllu, words_per_second
    from ..evaluation.speed import SpacyTimer, count_words

    if len(set(args.pipelines)) != len(args.pipelines):
        raise SystemExit("Give each pipeline once.")
    timers = {}
    for name in args.pipelines:
        if name.endswith(".udpipe"):
            from ..evaluation.udpipe import UDPipeParser

            timers[name] = UDPipeParser(name)
        else:
            timers[name] = SpacyTimer(spacy.load(name))
    sentences = read_conllu(args.gold)
    print(f"{len(sentences)} sentences, {count_words(sentences)} words; {args.runs} runs", flush=True)
    speeds = words_per_second(timers, sentences, n_runs=args.runs,
                              progress=lambda line: print(line, flush=True))
    reference = speeds[args.pipelines[0]]
    width = max(len(name) for name in speeds)
    print(f"\n{'pipeline':<{width}}  {'words/s':>10}  ratio  transitions/word")
    for name, wps in speeds.items():
        per_word = transitions_per_word(timers[name])
        print(f"{name:<{width}}  {wps:>10,.0f}  {wps / reference:.2f}x  "
              f"{'' if per_word is None else f'{per_word:.2f}'}")
    return 0


def transitions_per_word(timer):
    """Transitions per word of a pipeline's nonmono_parser over the timed
    runs, or None for other parsers."""
    nlp = getattr(timer, "nlp", None)
    if nlp is None:
        return None
    counts = [pipe.parse_counts for _, pipe in nlp.pipeline if hasattr(pipe, "parse_counts")]
    if not counts or not counts[0]["words"]:
        return None
    return counts[0]["transitions"] / counts[0]["words"]
