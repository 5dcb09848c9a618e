"""`profile`: where a pipeline's parse time goes, measured with cProfile.

Runs nlp.pipe over a gold-tokenized CoNLL-U file under cProfile and splits
the time of a nonmono_parser pipeline into tok2vec, the token table (the
precomputed hidden layer), the transition loop (the greedy decoder's C loop,
finishing states included) and writing the Doc annotations; of a global
decoder's pipeline, into the shared encoder (its characters apart), the
taggers, the senter, the parser's parts, score tables, structure and labels;
for spaCy's own parser, into its model (tok2vec + precomputed layer) and the
rest (its C loop and annotations). The top functions by cumulative time
follow. --decoding-options sets the parser's (e.g. '{"prune_heads": 4}').
"""
import json
from pathlib import Path

from spacy_nonmono.cli.common import HelpFormatter, load_parser_pipeline

# (bucket, file suffix, function) of the cumulative times the summary reads.
NONMONO = {
    "model": ("spacy_nonmono/models/parser_model.py", "forward"),
    "token table": ("spacy_nonmono/models/token_table.py", "forward"),
    "decoder": ("spacy_nonmono/decoders/greedy.py", "predict"),
    "annotations": ("spacy_nonmono/pipeline/parser.py", "set_annotations"),
}
GLOBAL = {
    "shared encoder": ("spacy/pipeline/tok2vec.py", "predict"),
    "characters": ("spacy_nonmono/models/words.py", "_char_forward"),
    "tagger": ("spacy/pipeline/tagger.pyx", "predict"),
    "senter": ("spacy_nonmono/pipeline/senter.py", "predict"),
    "syntax senter": ("spacy_nonmono/pipeline/syntax_senter.py", "predict"),
    "parser": ("spacy_nonmono/decoders/global_decoder.py", "predict"),
    "parts": ("spacy_nonmono/models/scores.py", "part_scores"),
    "score tables": ("spacy_nonmono/decoders/global_decoder.py", "tables"),
    # (pruned: the mask and the tables it reads, tables' time included)
    "pruned tables": ("spacy_nonmono/decoders/global_decoder.py", "pruned_tables"),
    "structure": ("spacy_nonmono/decoders/global_decoder.py", "decode"),
    "labels": ("spacy_nonmono/decoders/global_decoder.py", "_labels"),
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
    p.add_argument("--decoding-options", default=None,
                   help="JSON: the nonmono_parser's decoding_options over the pipeline's")
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
    if args.decoding_options is not None:
        import spacy

        nlp = spacy.load(args.pipeline, config={"components": {"nonmono_parser": {
            "decoding_options": json.loads(args.decoding_options)}}})
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
    global_times = {name: cumulative(stats, where) for name, where in GLOBAL.items()}
    if global_times["parser"] > 0:
        global_times["score tables"] = max(global_times["score tables"],
                                           global_times["pruned tables"])
        parts = {
            "encoder: characters": global_times["characters"],
            "encoder: the rest": global_times["shared encoder"] - global_times["characters"],
            "taggers": global_times["tagger"],
            "senter": global_times["senter"] + global_times["syntax senter"],
            "parser: parts": global_times["parts"],
            "parser: score tables (and mask)": global_times["score tables"],
            "parser: structure": global_times["structure"],
            "parser: labels": global_times["labels"],
            "parser: the rest": global_times["parser"] - global_times["parts"]
            - global_times["score tables"] - global_times["structure"] - global_times["labels"],
        }
    elif times["model"] > 0:
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
