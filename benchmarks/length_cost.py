"""`length-cost`: what a sentence of each length costs a pipeline to parse.

For every length, the pipelines parse the same sentences of that many words
(real words of a gold CoNLL-U file, concatenated in file order and cut into
sentences of that length: lengths beyond the file's sentences are measured
too, as a user's long sentences would be), one thread, nlp.pipe with one doc
per sentence. Reports milliseconds per sentence (the best of --runs runs,
interleaved across pipelines) and the peak memory Python and numpy allocate
while parsing one sentence of --memory-length words (tracemalloc), and plots
time against length on log axes, where an O(n^k) decoder is a line of slope
k.

--text-words N also times one text of N words in a single doc without
sentence boundaries (real words, in file order), as a user's long input
arrives: each pipeline segments it as it does (a senter, the global
decoder's split at sentence-final punctuation, or one span cut into
windows).
"""
import json
import time
import tracemalloc
from pathlib import Path

from spacy_nonmono.cli.common import (HelpFormatter, InputError, check_output_paths,
                                      load_parser_pipeline)


def add_parser(commands) -> None:
    p = commands.add_parser("length-cost", help="Parse time per sentence by length, and peak "
                            "memory of a long sentence, for pipelines side by side.",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("pipelines", nargs="+", help="Pipeline folders (spacy.load)")
    p.add_argument("--gold", type=Path, required=True,
                   help="Gold-tokenized CoNLL-U whose words make the sentences")
    p.add_argument("--lengths", default="5,10,20,40,60,80,100,150,200",
                   help="Comma-separated sentence lengths (words)")
    p.add_argument("--sentences", type=int, default=10, help="Sentences parsed per length")
    p.add_argument("--runs", type=int, default=3, help="Timed runs; the best is reported")
    p.add_argument("--memory-length", type=int, default=100,
                   help="Length of the sentence whose peak memory is measured")
    p.add_argument("--text-words", type=int, default=0,
                   help="Also time one unsegmented text of this many words (0: no)")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.add_argument("--plot", type=Path, default=None, help="Write the plot (PNG) here")
    p.set_defaults(run=run)


def sentences_of_length(words, length: int, count: int):
    """`count` word lists of `length` words, consecutive runs of `words`
    (cycled when the file is short)."""
    needed = length * count
    stream = (words * (needed // len(words) + 1))[:needed]
    return [stream[k * length:(k + 1) * length] for k in range(count)]


def time_per_sentence(nlp, sentences, runs: int) -> float:
    from spacy.tokens import Doc

    best = float("inf")
    for _ in range(runs):
        docs = [Doc(nlp.vocab, words=words) for words in sentences]
        start = time.perf_counter()
        for _ in nlp.pipe(docs, batch_size=len(docs)):
            pass
        best = min(best, (time.perf_counter() - start) / len(sentences))
    return best


def peak_memory(nlp, words) -> int:
    """Bytes allocated at the peak of parsing one sentence (after a warm-up
    parse of the same length, so buffers kept across sentences count once)."""
    from spacy.tokens import Doc

    nlp(Doc(nlp.vocab, words=words))
    tracemalloc.start()
    nlp(Doc(nlp.vocab, words=words))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def run(args) -> int:
    from spacy_nonmono.evaluation import read_conllu

    try:
        lengths = [int(k) for k in args.lengths.split(",") if k.strip()]
    except ValueError:
        lengths = []
    if not lengths or min(lengths) < 1:
        raise InputError(f"--lengths takes comma-separated positive integers, not {args.lengths!r}")
    for option in ("sentences", "runs", "memory_length"):
        if getattr(args, option) < 1:
            raise InputError(f"--{option.replace('_', '-')} must be at least 1")
    if args.text_words < 0:
        raise InputError("--text-words must be at least 0")
    check_output_paths({"--json": args.json, "--plot": args.plot})
    words = [t["form"] for s in read_conllu(args.gold) for t in s if isinstance(t["id"], int)]
    pipelines = {name: load_parser_pipeline(name) for name in args.pipelines}
    seconds = {name: {} for name in pipelines}
    for length in lengths:
        sentences = sentences_of_length(words, length, args.sentences)
        for name, nlp in pipelines.items():
            nlp(" ".join(sentences[0]))      # warm-up
            seconds[name][length] = time_per_sentence(nlp, sentences, args.runs)
        print(f"{length} words: " + ", ".join(f"{name} {seconds[name][length] * 1000:.2f} ms"
                                             for name in pipelines), flush=True)
    memory_words = sentences_of_length(words, args.memory_length, 1)[0]
    memory = {name: peak_memory(nlp, memory_words) for name, nlp in pipelines.items()}
    result = {"lengths": lengths, "seconds_per_sentence": seconds,
              "memory_length": args.memory_length, "peak_bytes": memory}
    if args.text_words:
        text = sentences_of_length(words, args.text_words, 1)
        result["text_words"] = args.text_words
        result["text_seconds"] = {name: time_per_sentence(nlp, text, args.runs)
                                  for name, nlp in pipelines.items()}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    if args.plot:
        plot(result, args.plot)
    print(table(result))
    return 0


def table(result) -> str:
    names = list(result["seconds_per_sentence"])
    lines = ["| words | " + " | ".join(f"{name} (ms)" for name in names) + " |",
             "|---:|" + "---:|" * len(names)]
    for length in result["lengths"]:
        lines.append(f"| {length} | " + " | ".join(
            f"{result['seconds_per_sentence'][name][length] * 1000:.2f}" for name in names) + " |")
    lines.append(f"| peak memory, {result['memory_length']} words | " + " | ".join(
        f"{result['peak_bytes'][name] / 1e6:.1f} MB" for name in names) + " |")
    if "text_seconds" in result:
        first = result["text_seconds"][names[0]]
        lines.append(f"| one unsegmented text of {result['text_words']} words | " + " | ".join(
            f"{result['text_seconds'][name]:.2f} s ({result['text_seconds'][name] / first:.1f}x)"
            for name in names) + " |")
    return "\n".join(lines)


def plot(result, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, by_length in result["seconds_per_sentence"].items():
        lengths = sorted(by_length)
        ax.plot(lengths, [by_length[n] * 1000 for n in lengths], marker="o",
                label=Path(name).parent.name if Path(name).name == "model-best" else name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel("parse time per sentence (ms)")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
