"""`coverage`: how much of each treebank's gold trees the MH3 (projective) and
MH4 charts can build, as in Table 3 of Gómez-Rodríguez, Shi & Lee (2018),
and the share of 1-Endpoint-Crossing gold trees (Pitler, Kannan & Marcus
2013), which the paper's section 6 compares with MH4's.

Each gold tree is decided exactly by the charts of `spacy_nonmono.graph.charts`:
the best tree of the chart with zero scores and one point per gold arc
(`charts.coverage`). A sentence is covered when that tree is the gold tree;
edge coverage is the share of gold arcs (one per word, the root's included)
that the best tree of each sentence keeps. MH3 covers exactly the projective
trees, so its sentence coverage is the share of projective sentences. A
sentence is 1EC when every arc's crossing arcs share an endpoint
(`graph.is_one_endpoint_crossing`, exact). 1EC edge coverage is that of
the best 1EC tree with one root under one point per gold arc
(`graph/ec_chart.pyx`); the 1EC chart is slower than MH4's (about 0.5 s at
100 words), so a sentence that is not 1EC and longer than its length guard
(`max_length` of `1ec_arcs`, 100 words) is left out of 1EC edge coverage
and counted.
Sentences longer than --max-length are left out and counted (MH4 is O(n^4):
about 0.25 s a sentence at 200 words, 1.4 s at 300; see
docs/results/mh4/charts.md)."""
import json
import sys
import time
from pathlib import Path

from ..files import write_text_atomic
from .common import RawHelpFormatter, gold_treebanks_by_length

DEFAULT_MAX_LENGTH = 200
PROGRESS_EVERY = 500
SYSTEMS = (("projective", 3), ("mh4", 4))


def add_parser(commands) -> None:
    p = commands.add_parser(
        "coverage",
        help="Sentence and edge coverage of gold trees by MH3 (projective) and MH4 "
        "(Table 3 of the MH4 paper), and the share of 1-Endpoint-Crossing trees",
        description=__doc__ + "\n\nThe gold files are read first: malformed CoNLL-U and gold "
        "heads that are not a\nsingle-rooted tree are an error (exit status 2) naming the "
        "file and line,\nunless --skip-invalid. Progress goes to stderr every "
        f"{PROGRESS_EVERY} sentences.",
        formatter_class=RawHelpFormatter,
    )
    p.add_argument("gold", type=Path, nargs="+", help="Gold CoNLL-U files (e.g. UD *-train.conllu)")
    p.add_argument("--max-length", type=int, default=DEFAULT_MAX_LENGTH,
                   help="Leave out (and count) sentences of more words; 0: no limit")
    p.add_argument("--single-root", action="store_true",
                   help="Edge coverage over trees with one word attached to the root node "
                   "(sentence coverage is the same: gold trees have one root)")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.add_argument("--skip-invalid", action="store_true",
                   help="Skip gold sentences whose heads are not a tree (one warning each, "
                   "counted) instead of stopping")
    p.set_defaults(run=run)


def run(args) -> int:
    treebanks = gold_treebanks_by_length(args)
    results = [measure(path, sentences, invalid, args.max_length, args.single_root)
               for path, sentences, invalid in treebanks]
    if args.json:
        write_text_atomic(args.json, json.dumps({"max_length": args.max_length,
                                         "single_root": args.single_root,
                                         "files": results}, indent=2) + "\n")
    print(table(results))
    return 0


def measure(path: Path, sentences, invalid: int, max_length: int, single_root: bool) -> dict:
    """The coverage numbers of one file's gold sentences."""
    from ..conllu_io import gold_tree
    from ..graph import is_one_endpoint_crossing
    from ..graph.charts import Chart, coverage

    from ..graph.ec_chart import EcChart
    from ..graph.structures import OneEndpointCrossingStructure

    charts = {k: Chart(k, single_root) for _, k in SYSTEMS}
    ec_chart, ec_limit = EcChart(), OneEndpointCrossingStructure.max_length
    counts = {name: {"sentences": 0, "arcs": 0} for name, _ in SYSTEMS}
    n_sentences = n_words = long_sentences = long_words = 0
    one_ec = {"sentences": 0, "only_1ec": 0, "only_mh4": 0, "arcs": 0, "words": 0,
              "undecided": 0}
    start = time.perf_counter()
    for number, sentence in enumerate(sentences, start=1):
        heads = gold_tree(sentence)[0]
        if max_length and len(heads) > max_length:
            long_sentences += 1
            long_words += len(heads)
        else:
            n_sentences += 1
            n_words += len(heads)
            covered = {}
            for name, k in SYSTEMS:
                shared = coverage(heads, k, single_root, chart=charts[k])
                covered[name] = shared == len(heads)
                counts[name]["sentences"] += covered[name]
                counts[name]["arcs"] += shared
            in_1ec, in_mh4 = is_one_endpoint_crossing(heads), covered["mh4"]
            one_ec["sentences"] += in_1ec
            one_ec["only_1ec"] += in_1ec and not in_mh4
            one_ec["only_mh4"] += in_mh4 and not in_1ec
            if in_1ec or len(heads) <= ec_limit:
                one_ec["arcs"] += len(heads) if in_1ec else shared_arcs_1ec(heads, ec_chart)
                one_ec["words"] += len(heads)
            else:
                one_ec["undecided"] += 1
        if number % PROGRESS_EVERY == 0:
            print(f"{path}: {number}/{len(sentences)} sentences "
                  f"({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)
    print(f"{path}: {len(sentences)} sentences in {time.perf_counter() - start:.1f} s",
          file=sys.stderr, flush=True)
    result = {"path": str(path), "sentences": n_sentences, "words": n_words,
              "skipped_long": long_sentences, "skipped_long_words": long_words,
              "skipped_invalid": invalid}
    for name, _ in SYSTEMS:
        covered, arcs = counts[name]["sentences"], counts[name]["arcs"]
        result[name] = {
            "covered_sentences": covered, "covered_arcs": arcs,
            "sentence_coverage": percent(covered, n_sentences),
            "edge_coverage": percent(arcs, n_words),
        }
    # The 1EC trees, and the sentences of only one of 1EC and MH4.
    result["1ec"] = {"covered_sentences": one_ec["sentences"],
                     "sentence_coverage": percent(one_ec["sentences"], n_sentences),
                     "only_1ec": one_ec["only_1ec"], "only_mh4": one_ec["only_mh4"],
                     "covered_arcs": one_ec["arcs"],
                     "edge_coverage": percent(one_ec["arcs"], one_ec["words"]),
                     "edge_coverage_left_out": one_ec["undecided"]}
    return result


def shared_arcs_1ec(heads, chart) -> int:
    """Gold arcs kept by the best 1EC tree with one root under one point per
    gold arc."""
    import numpy

    n = len(heads)
    scores = numpy.zeros((n + 1, n + 1))
    scores[numpy.asarray(heads), numpy.arange(1, n + 1)] = 1.0
    _, best = chart.decode(scores)
    return int(numpy.sum(best == numpy.asarray(heads)))


def percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def table(results) -> str:
    lines = [
        "| file | sentences | words | sentence coverage: proj. | MH4 | 1EC | edge coverage: proj. "
        "| MH4 | 1EC | left out (long) | left out (invalid) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['path']} | {r['sentences']:,} | {r['words']:,} "
            f"| {r['projective']['sentence_coverage']:.2f} | {r['mh4']['sentence_coverage']:.2f} "
            f"| {r['1ec']['sentence_coverage']:.2f} | {r['projective']['edge_coverage']:.2f} "
            f"| {r['mh4']['edge_coverage']:.2f} | {r['1ec']['edge_coverage']:.2f}{ec_note(r)} "
            f"| {r['skipped_long']} | {r['skipped_invalid']} |")
    return "\n".join(lines)


def ec_note(result) -> str:
    left_out = result["1ec"]["edge_coverage_left_out"]
    return f" ({left_out} long non-1EC left out)" if left_out else ""
