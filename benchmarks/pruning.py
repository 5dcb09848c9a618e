"""`pruning`: what pruned exact decoding keeps, costs and saves, for a trained
pipeline whose parser decodes globally (`decoding_options.prune_heads`).

1. Gold arcs kept on --dev (gold tokens): for each --heads x --margins
   setting, the share of gold arcs the mask keeps (`graph.structures.keep_heads`
   on the parser's first-order arc scores: its structure's arc table or its
   pruner), the share of sentences whose whole gold tree is kept, and the
   heads kept per word.
2. Decoding time by sentence length on --test (gold tokens): per sentence,
   the score tables' fill time and the structure's decode, without pruning
   and with the --chosen setting, plus sentences of exactly --lengths words
   cut from the running test text (one sentence each, `length-cost`'s
   cutting; the 100-word case).
   Best of --repeat; one BLAS thread.
3. --test scores (UAS, LAS) and the pipeline's words/s (nlp.pipe, batch
   1000, median of --runs, runs interleaved) without pruning and with the
   --chosen setting: the same trained model, decoded both ways.

A table per part is printed; --json writes them all.
"""
import json
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from spacy_nonmono.cli.common import HelpFormatter, InputError, number_list

BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, 60), (61, 150))


def add_parser(commands) -> None:
    p = commands.add_parser("pruning", help="Gold arcs kept, decoding time and accuracy of "
                            "pruned exact decoding.", description=__doc__,
                            formatter_class=HelpFormatter)
    p.add_argument("pipeline", help="Trained pipeline folder (nonmono_parser, decoding global)")
    p.add_argument("--dev", type=Path, required=True, help="Gold CoNLL-U for the arcs kept")
    p.add_argument("--test", type=Path, required=True, help="Gold CoNLL-U for time and scores")
    p.add_argument("--heads", default="1,2,3,4,6", help="prune_heads values for part 1")
    p.add_argument("--margins", default="2,3,5,8", help="prune_margin values for part 1")
    p.add_argument("--chosen", default="4,5", help="prune_heads,prune_margin of parts 2 and 3")
    p.add_argument("--lengths", default="20,40,60,80,100",
                   help="Lengths of the cut sentences timed in part 2")
    p.add_argument("--repeat", type=int, default=3, help="Decodes per sentence (best kept)")
    p.add_argument("--runs", type=int, default=3, help="Speed runs per setting (median)")
    p.add_argument("--json", type=Path, default=None, help="Write the results here")
    p.set_defaults(run=run)


class ParserScores:
    """The parser's view of gold-tokenized sentences, the pipeline's
    components before the parser having run (they set the token vectors its
    model reads)."""

    def __init__(self, nlp):
        self.nlp = nlp
        self.parser = nlp.get_pipe("nonmono_parser")
        if self.parser.decoder.name != "global":
            raise InputError("pruning prunes exact decoding: the pipeline's nonmono_parser "
                             f"decodes {self.parser.decoder.name!r}, not 'global'")

    def sentences(self, words: Sequence[Sequence[str]], batch_size: int = 256):
        """(n, the model's view, the sentence's rows) of each sentence, in order."""
        from spacy.tokens import Doc

        from spacy_nonmono.models.layout import span_rows
        from spacy_nonmono.models.scores import part_scores

        for start in range(0, len(words), batch_size):
            docs = [Doc(self.nlp.vocab, words=list(w)) for w in words[start:start + batch_size]]
            for name, component in self.nlp.pipeline:
                if name == "nonmono_parser":
                    break
                docs = list(component.pipe(docs))
            view = part_scores(self.parser.model, docs)
            for doc, rows in zip(docs, span_rows(docs, [(k, 0, len(d))
                                                        for k, d in enumerate(docs)])):
                yield len(doc), view, rows

def gold_arcs_kept(scores: ParserScores, sentences, heads_values, margins) -> List[dict]:
    import numpy

    from spacy_nonmono.graph.structures import keep_heads

    words = [[t["form"] for t in s] for s in sentences]
    golds = [numpy.array([t["head"] for t in s]) for s in sentences]
    counts = {(k, m): [0, 0, 0] for k in heads_values for m in margins}
    for (n, view, rows), gold in zip(scores.sentences(words), golds):
        arcs = scores.parser.moves.pruning_scores(view, rows)
        for (k, m), c in counts.items():
            keep = keep_heads(arcs, k, m)
            hit = keep[gold, numpy.arange(1, n + 1)]
            c[0] += int(hit.sum())
            c[1] += int(hit.all())
            c[2] += int(keep.sum())
    n_arcs = sum(len(g) for g in golds)
    return [{"prune_heads": k, "prune_margin": m, "gold_arcs_kept": 100.0 * c[0] / n_arcs,
             "gold_trees_kept": 100.0 * c[1] / len(golds), "heads_per_word": c[2] / n_arcs}
            for (k, m), c in counts.items()]


def decode_times(scores: ParserScores, words: Sequence[Sequence[str]], heads: int,
                 margin: float, repeat: int) -> List[dict]:
    """Per sentence: n, table fill time, decode time unpruned and pruned,
    and whether the pruned decode fell back."""
    from benchmarks.charts_timing import best_time

    system = scores.parser.moves
    structure = system.structure
    out = []
    for n, view, rows in scores.sentences(words):
        fill = best_time(lambda: system.tables(view, rows), repeat)
        pruned_fill = best_time(lambda: system.pruned_tables(view, rows, heads, margin), repeat)
        tables = system.tables(view, rows)
        pruned_tables, keep = system.pruned_tables(view, rows, heads, margin)
        unpruned = best_time(lambda: structure.decode(tables), repeat)
        before = structure.fallbacks
        pruned = best_time(lambda: structure.decode(pruned_tables, keep=keep), repeat)
        out.append({"n": n, "fill": fill, "pruned_fill": pruned_fill, "unpruned": unpruned,
                    "pruned": pruned, "fell_back": structure.fallbacks > before})
    return out


def by_bucket(times: List[dict]) -> List[dict]:
    out = []
    for lo, hi in BUCKETS:
        rows = [t for t in times if lo <= t["n"] <= hi]
        if not rows:
            continue
        words = sum(t["n"] for t in rows)
        out.append({"lengths": f"{lo}-{hi}", "sentences": len(rows),
                    **{f"{k}_ms": 1000.0 * sum(t[k] for t in rows) / len(rows)
                       for k in ("fill", "pruned_fill", "unpruned", "pruned")},
                    **{f"{k}_us_per_word": 1e6 * sum(t[k] for t in rows) / words
                       for k in ("unpruned", "pruned")},
                    "fallbacks": sum(t["fell_back"] for t in rows)})
    return out


def scores_and_speed(path: str, sentences, settings: Dict[str, Tuple[int, float]],
                     runs: int) -> Dict[str, dict]:
    import spacy

    from spacy_nonmono.evaluation.gold_tokens import evaluate_sentences
    from spacy_nonmono.evaluation.speed import SpacyTimer, measure_runs

    pipelines = {}
    for name, (heads, margin) in settings.items():
        pipelines[name] = spacy.load(path, config={"components": {"nonmono_parser": {
            "decoding_options": {"prune_heads": heads, "prune_margin": margin}}}})
    out = {}
    for name, nlp in pipelines.items():
        evaluation = evaluate_sentences(nlp, sentences).to_dict()
        out[name] = {"UAS": evaluation["uas"], "LAS": evaluation["las"],
                     "fallbacks": nlp.get_pipe("nonmono_parser").moves.structure.fallbacks}
    rates = measure_runs({name: SpacyTimer(nlp) for name, nlp in pipelines.items()},
                         sentences, runs)
    for name, r in rates.items():
        out[name]["words_per_second"] = sorted(r)[len(r) // 2]
    return out


def run(args) -> int:
    from benchmarks.length_cost import sentences_of_length
    from spacy_nonmono.cli.common import load_parser_pipeline
    from spacy_nonmono.conllu_io import is_word
    from spacy_nonmono.evaluation.gold_tokens import read_gold
    from spacy_nonmono.threads import blas_threads

    heads_values = number_list(args.heads, "--heads")
    margins = number_list(args.margins, "--margins", float)
    chosen = args.chosen.split(",")
    if len(chosen) != 2:
        raise InputError(f"--chosen is prune_heads,prune_margin, not {args.chosen!r}")
    heads = number_list(chosen[0], "--chosen (heads)")[0]
    margin = number_list(chosen[1], "--chosen (margin)", float)[0]
    lengths = number_list(args.lengths, "--lengths")
    nlp = load_parser_pipeline(args.pipeline)
    scores = ParserScores(nlp)
    dev, _ = read_gold(args.dev, skip_invalid=True)
    test, _ = read_gold(args.test, skip_invalid=True)
    dev = [[t for t in s if is_word(t)] for s in dev]
    results = {"pipeline": str(args.pipeline), "chosen": [heads, margin]}

    print(f"{args.pipeline}: gold arcs kept on {args.dev.name} ({len(dev)} sentences)")
    print(f"{'heads':>5} {'margin':>6} {'arcs kept %':>11} {'trees kept %':>12} {'heads/word':>10}")
    results["kept"] = gold_arcs_kept(scores, dev, heads_values, margins)
    for r in results["kept"]:
        print(f"{r['prune_heads']:>5} {r['prune_margin']:>6g} {r['gold_arcs_kept']:>11.2f} "
              f"{r['gold_trees_kept']:>12.2f} {r['heads_per_word']:>10.2f}")

    with blas_threads(1):
        words = [[t["form"] for t in s if is_word(t)] for s in test]
        times = decode_times(scores, words, heads, margin, args.repeat)
        text = [w for sentence in words for w in sentence]
        cut = decode_times(scores, [sentences_of_length(text, n, 1)[0] for n in lengths],
                           heads, margin, args.repeat)
    results["by_length"] = by_bucket(times)
    results["cut"] = cut
    print(f"\ndecoding time per sentence on {args.test.name}, pruned with heads {heads}, "
          f"margin {margin:g} (best of {args.repeat})")
    print(f"{'lengths':>8} {'sents':>5} {'fill ms':>8} {'pruned fill':>11} {'decode ms':>9} "
          f"{'pruned':>8} {'us/word':>8} {'pruned':>8} {'fallbacks':>9}")
    for r in results["by_length"]:
        print(f"{r['lengths']:>8} {r['sentences']:>5} {r['fill_ms']:>8.2f} "
              f"{r['pruned_fill_ms']:>11.2f} {r['unpruned_ms']:>9.2f} {r['pruned_ms']:>8.2f} "
              f"{r['unpruned_us_per_word']:>8.1f} {r['pruned_us_per_word']:>8.1f} "
              f"{r['fallbacks']:>9}")
    print("\ncut sentences (words of the test text in order)")
    for r in cut:
        print(f"{r['n']:>8} words: fill {1000 * r['fill']:.1f} ms (pruned "
              f"{1000 * r['pruned_fill']:.1f} ms), decode unpruned "
              f"{1000 * r['unpruned']:.1f} ms ({1e6 * r['unpruned'] / r['n']:.0f} us/word), "
              f"pruned {1000 * r['pruned']:.2f} ms ({1e6 * r['pruned'] / r['n']:.0f} us/word)"
              f"{', fell back' if r['fell_back'] else ''}")

    results["test"] = scores_and_speed(args.pipeline, test, {
        "unpruned": (0, margin), "pruned": (heads, margin)}, args.runs)
    print(f"\n{args.test.name}, gold tokens: the same model decoded both ways")
    print(f"{'decoding':>9} {'UAS':>6} {'LAS':>6} {'words/s':>8} {'fallbacks':>9}")
    for name, r in results["test"].items():
        print(f"{name:>9} {r['UAS']:>6.2f} {r['LAS']:>6.2f} {r['words_per_second']:>8,.0f} "
              f"{r['fallbacks']:>9}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0
