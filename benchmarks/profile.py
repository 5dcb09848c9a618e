"""`profile`: where a pipeline's parse time goes, measured with cProfile.

Runs nlp.pipe over a gold-tokenized CoNLL-U file under cProfile and splits
the time of a nonmono_parser pipeline into tok2vec, the token table (the
precomputed hidden layer), the transition loop (the greedy decoder's C loop,
finishing states included) and writing the Doc annotations; for spaCy's own
parser, into its model (tok2vec + precomputed layer) and the rest (its C loop
and annotations). The top functions by cumulative time follow.
"""
from pathlib import Path

from spacy_nonmono.cli.common import HelpFormatter, load_parser_pipeline

# (bucket, file suffix, function) of the cumulative times the summary reads.
NONMONO = {
    "model": ("spacy_nonmono/models/parser_model.py", "forward"),
    "token table": ("spacy_nonmono/models/token_table.py", "forward"),
    "decoder": ("spacy_nonmono/decoders/greedy.py", "predict"),
    "annotations": ("spacy_nonmono/pipeline/parser.py", "set_annotations"),
}
SPACY = {
    "model": ("spacy/ml/tb_framework.py", "forward"),
    "precomputed layer": ("spacy/ml/_precomputable_affine.py", "forward"),
}


def add_parser(commands) -> None:
    p = commands.add_parser("profile", help="Where a pipeline's parse time goes (cProfile).",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("pipeline", help="Pipeline folder or package name (spacy.load)")
    p.add_argument("--gold", type=Path, required=True, help="Gold-tokenized CoNLL-U to parse")
    p.add_argument("--batch-size", type=int, default=1000, help="nlp.pipe batch size")
    p.add_argument("--top", type=int, default=15, help="Functions listed by cumulative time")
    p.set_defaults(run=run)


def cumulative(stats, where) -> float:
    suffix, name = where
    return sum(row[3] for (path, _, function), row in stats.stats.items()
               if path.endswith(suffix) and function == name)


def run(args) -> int:
    import cProfile
    import gc
    import pstats

    from spacy_nonmono.evaluation import read_conllu
    from spacy_nonmono.conllu_io import sentence_doc

    sentences = read_conllu(args.gold)
    nlp = load_parser_pipeline(args.pipeline)
    for _ in nlp.pipe([sentence_doc(nlp.vocab, s) for s in sentences[:50]]):
        pass   # warm-up
    docs = [sentence_doc(nlp.vocab, s) for s in sentences]
    # The cyclic garbage collector off while profiling (as timeit does): its
    # passes cost what the whole process holds, not what the parse does.
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for _ in nlp.pipe(docs, batch_size=args.batch_size):
            pass
    finally:
        profiler.disable()
        if collecting:
            gc.enable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    times = {name: cumulative(stats, where) for name, where in NONMONO.items()}
    if times["model"] > 0:
        parts = {
            "tok2vec": times["model"] - times["token table"],
            "token table": times["token table"],
            "transition loop": times["decoder"] - times["model"],
            "annotations": times["annotations"],
        }
    else:
        times = {name: cumulative(stats, where) for name, where in SPACY.items()}
        parts = {
            "tok2vec": times["model"] - times["precomputed layer"],
            "precomputed layer": times["precomputed layer"],
            "transition loop and annotations": total - times["model"],
        }
    words = sum(len(doc) for doc in docs)
    print(f"{args.pipeline}: {words} words in {total:.3f} s under cProfile "
          f"({words / total:,.0f} words/s), batch size {args.batch_size}")
    for name, seconds in parts.items():
        print(f"  {name:<32} {seconds:7.3f} s  {100 * seconds / total:5.1f}%")
    print(f"  {'other':<32} {total - sum(parts.values()):7.3f} s")
    print()
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0
