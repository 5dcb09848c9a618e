"""`projectivization` and `optimal-step-timing`: the experiments of section 8
of Nederhof (2019), "Calculating the optimal step in shift-reduce dependency
parsing" (TACL 7), on our treebanks.

- `projectivization` (section 8.1, Table 6, Figure 8): how many gold arcs
  pseudo-projectivization and optimal projectivization keep.
- `optimal-step-timing` (section 8.2, Figure 9): how long the optimal-step
  algorithms of the `arc_standard` oracle take per configuration, against
  k + m.
"""
import json
import math
import random
import sys
import time
from pathlib import Path

from spacy_nonmono.cli.common import (InputError, RawHelpFormatter, check_output_paths,
                                      gold_treebanks_by_length, read_gold_files, warn)

PROGRESS_EVERY = 1000
TIMING_PROGRESS_EVERY = 50

PROJECTIVIZATION_DOC = """\
For each gold CoNLL-U file: the share of non-projective sentences and the
share of gold arcs (one per word, the root arc included) that a projective
tree keeps, with three projectivizations of every sentence:

- pseudo: spaCy's pseudo-projective lifting (Nivre & Nilsson 2005, the HEAD
  scheme: `spacy_nonmono.pipeline.sentences.pseudo_projectivize`), the lifted
  tree itself, before any deprojectivization (the paper's Table 6 "pseudo",
  there done with MaltParser);
- optimal: a single-rooted projective tree with the most arcs in common with
  the gold tree (the tabular algorithm at the end of section 3,
  `spacy_nonmono.graph.split_grammars.optimal_projectivization`; Table 6
  "optimal");
- pseudo + deproj.: the lifted tree with its decorated labels put back by
  spaCy's `nonproj.deprojectivize`, i.e. what a pseudo-projective parser that
  predicted every lifted arc and label right would output.

Also: the geometric mean, over non-projective sentences, of the number of
optimal single-rooted projective trees (Figure 8 gives it by length; the JSON
has it by length too, over all sentences and over non-projective ones), and
the mean milliseconds per sentence of optimal projectivization (CPU time of
this thread in the call from Python, `time.thread_time`, so other processes
on the machine do not count; table set-up and backtrace included; the paper:
0.342 ms per tree over all of UD 2.2).

Every optimal tree is checked (projective, single-rooted, keeping at least as
many arcs as the lifted tree; projective sentences kept whole); a failed
check is a warning and is counted in the JSON. Gold files are read first:
malformed CoNLL-U and heads that are not a single-rooted tree are an error
(exit status 2) unless --skip-invalid. Progress goes to stderr every
{every} sentences.""".format(every=PROGRESS_EVERY)

TIMING_DOC = """\
Figure 9 of the paper on a sample of gold trees: the time one computation of
the optimal-step scores takes (sigma for Shift, Left-Arc and Right-Arc: one
call of the algorithm per valid step, `ArcStandard.step_scores`),
against k + m, the words on the stack (node 0 not counted) plus the words
left in the input.

Configurations: for each of --sentences sentences drawn at random (--seed)
from the gold file's sentences of at most --max-length words, the
`arc_standard` system (strategy nonstrict, the paper's non-strict
left-before-right) walks from the initial configuration to the final one.
At each step it takes, with probability --random-moves, a random valid move,
else an optimal move for the gold tree (zero cost; a random one of them when
there are several), so that configurations off the gold path are timed too
(the paper times the configurations a trained parser visits). At every
configuration before the final one, the scores are timed with:

  cubic (original)      section 4 on the gold tree as it is (projective or
                        not); also reported over the configurations of
                        non-projective sentences alone ("non-proj.")
  cubic (projectivized) section 4 on the optimally projectivized gold tree
  quadratic             section 5 on the projectivized tree
  linear                section 6 on the projectivized tree

The projectivized algorithms run on a second configuration built from the
projectivized tree and driven by the same moves. On projective sentences the
two trees are the same and cubic (original) is cubic (projectivized), timed
once. An algorithm that raises NotImplementedError, or that the system does
not know, is left out with a note. At every configuration the scores of the
algorithms on the projectivized tree are compared; a difference is a warning
and is counted in the JSON.

How time is measured: `ArcStandard.step_scores(state, algorithm, R)` checks
its arguments from Python, then computes the scores R times in a loop in C,
without the GIL or Python in between; the time of one computation is the
time of that call divided by R. With --clock cpu (the default) it is the CPU
time of this thread (`time.thread_time`, i.e. CLOCK_THREAD_CPUTIME_ID, 1 ns
resolution): time the scheduler gives to other processes does not count, so
the numbers hold on a busy machine. With --clock wall it is the wall time
(`time.perf_counter`), which other processes inflate. R is --repeats, or,
with --repeats 0, the number of computations that fill about 1 ms (estimated
from the wall time of one computation on that configuration), so that
microsecond-scale computations are measured well above the clocks'
resolution and the call's own Python overhead (a few microseconds).
The best of --runs such measurements is the configuration's time. The table
gives, per bucket of k + m, the number of configurations and the mean over
them of milliseconds per computation. Times depend on the machine: compare
algorithms within one run."""

ALGORITHMS = ("cubic_original", "cubic_projectivized", "quadratic", "linear")
# Algorithm of the oracle, and whether it runs on the projectivized tree.
ORACLE_ALGORITHM = {"cubic_original": ("cubic", False), "cubic_projectivized": ("cubic", True),
                    "quadratic": ("quadratic", True), "linear": ("linear", True)}
COLUMN_NAMES = {"cubic_original": "cubic (original)",
                "cubic_original_nonprojective": "cubic (original), non-proj.",
                "cubic_projectivized": "cubic (projectivized)",
                "quadratic": "quadratic", "linear": "linear"}
TARGET_SECONDS = 1e-3
MAX_AUTO_REPEATS = 1_000_000


def add_parser(commands) -> None:
    p = commands.add_parser(
        "projectivization",
        help="Gold arcs kept by pseudo- and optimal projectivization, and the number of "
        "optimal trees (Table 6 of Nederhof 2019)",
        description=PROJECTIVIZATION_DOC,
        formatter_class=RawHelpFormatter,
    )
    p.add_argument("gold", type=Path, nargs="+", help="Gold CoNLL-U files (e.g. UD *-train.conllu)")
    p.add_argument("--max-length", type=int, default=0,
                   help="Leave out (and count) sentences of more words; 0: no limit")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.add_argument("--skip-invalid", action="store_true",
                   help="Skip gold sentences whose heads are not a tree (one warning each, "
                   "counted) instead of stopping")
    p.set_defaults(run=run_projectivization)

    p = commands.add_parser(
        "optimal-step-timing",
        help="Time per computation of the arc_standard optimal step (cubic, quadratic, "
        "linear) against stack + input length (Figure 9 of Nederhof 2019)",
        description=TIMING_DOC,
        formatter_class=RawHelpFormatter,
    )
    p.add_argument("gold", type=Path, help="Gold CoNLL-U file (e.g. a UD *-train.conllu)")
    p.add_argument("--sentences", type=int, default=300,
                   help="Sentences drawn (all, when the file has fewer)")
    p.add_argument("--seed", type=int, default=0, help="Seed of the draw and of the random moves")
    p.add_argument("--max-length", type=int, default=120,
                   help="Draw only sentences of at most this many words; 0: no limit")
    p.add_argument("--random-moves", type=float, default=0.1,
                   help="Probability of a random valid move instead of an optimal one")
    p.add_argument("--repeats", type=int, default=0,
                   help="Computations per measurement; 0: as many as fill about "
                   f"{TARGET_SECONDS * 1000:g} ms")
    p.add_argument("--runs", type=int, default=3,
                   help="Measurements per configuration and algorithm; the best is kept")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="Thread CPU time, or wall time (see above)")
    p.add_argument("--bucket", type=int, default=10, help="Width of the k + m buckets")
    p.add_argument("--algorithms", default=",".join(ALGORITHMS),
                   help="Comma-separated algorithms to time, from " + ", ".join(ALGORITHMS))
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.add_argument("--plot", type=Path, default=None,
                   help="Write the plot (PNG) here: mean ms against k + m, log scale")
    p.add_argument("--skip-invalid", action="store_true",
                   help="Skip gold sentences whose heads are not a tree (one warning each, "
                   "counted) instead of stopping")
    p.set_defaults(run=run_timing)


# -- projectivization ------------------------------------------------------------------

def run_projectivization(args) -> int:
    treebanks = gold_treebanks_by_length(args)
    results = [measure_projectivization(path, sentences, invalid, args.max_length)
               for path, sentences, invalid in treebanks]
    if args.json:
        args.json.write_text(json.dumps({"max_length": args.max_length, "files": results},
                                        indent=2) + "\n")
    print(projectivization_table(results))
    return 0


def deprojectivized_heads(vocab, heads, labels):
    """spaCy's deprojectivization of a lifted tree (1-based heads, decorated
    labels): the heads it puts back, 1-based."""
    from spacy.pipeline._parser_internals import nonproj
    from spacy.tokens import Doc

    doc = Doc(vocab, words=["w"] * len(heads),
              heads=[k if h == 0 else h - 1 for k, h in enumerate(heads)], deps=labels)
    doc = nonproj.deprojectivize(doc)
    return [0 if t.head.i == t.i else t.head.i + 1 for t in doc]


def optimal_tree_problem(heads, proj_heads, kept, pseudo_kept):
    """Why an optimal projectivization fails its checks, or None."""
    from spacy_nonmono.graph import is_projective

    n = len(heads)
    if len(proj_heads) != n:
        return f"{len(proj_heads)} heads for {n} words"
    if sum(h == 0 for h in proj_heads) != 1:
        return "not single-rooted"
    if not is_projective(proj_heads):
        return "not projective"
    if sum(a == b for a, b in zip(heads, proj_heads)) != kept:
        return f"keeps {sum(a == b for a, b in zip(heads, proj_heads))} arcs, says {kept}"
    if kept < pseudo_kept:
        return f"keeps {kept} arcs, fewer than pseudo-projectivization ({pseudo_kept})"
    if is_projective(heads) and kept != n:
        return "changes a projective tree"
    return None


def measure_projectivization(path: Path, sentences, invalid: int, max_length: int) -> dict:
    from spacy.vocab import Vocab

    from spacy_nonmono.conllu_io import gold_tree
    from spacy_nonmono.graph import is_projective
    from spacy_nonmono.graph.split_grammars import optimal_projectivization
    from spacy_nonmono.pipeline.sentences import pseudo_projectivize

    vocab = Vocab()
    n_sentences = n_words = n_nonprojective = long_sentences = long_words = 0
    kept = {"pseudo": 0, "optimal": 0, "pseudo_deprojectivized": 0}
    log_counts = {"all": 0.0, "nonprojective": 0.0}
    by_length = {}          # bucket start -> [sentences, sum log count, non-proj., sum log]
    seconds = 0.0
    problems = 0
    start = time.perf_counter()
    for number, sentence in enumerate(sentences, start=1):
        heads, labels = gold_tree(sentence)
        n = len(heads)
        if max_length and n > max_length:
            long_sentences += 1
            long_words += n
        else:
            n_sentences += 1
            n_words += n
            projective = is_projective(heads)
            lifted, decorated = pseudo_projectivize(heads, labels)
            pseudo = sum(a == b for a, b in zip(heads, lifted))
            restored = deprojectivized_heads(vocab, lifted, decorated)
            began = time.thread_time()
            proj_heads, best, count = optimal_projectivization(heads)
            seconds += time.thread_time() - began
            problem = optimal_tree_problem(heads, proj_heads, best, pseudo)
            if problem:
                problems += 1
                warn(f"{path}: sentence {number}: optimal projectivization {problem}")
            kept["pseudo"] += pseudo
            kept["optimal"] += best
            kept["pseudo_deprojectivized"] += sum(a == b for a, b in zip(heads, restored))
            log_count = math.log(count) if count > 0 else float("nan")
            log_counts["all"] += log_count
            bucket = by_length.setdefault(10 * ((n - 1) // 10) + 1, [0, 0.0, 0, 0.0])
            bucket[0] += 1
            bucket[1] += log_count
            if not projective:
                n_nonprojective += 1
                log_counts["nonprojective"] += log_count
                bucket[2] += 1
                bucket[3] += log_count
        if number % PROGRESS_EVERY == 0:
            print(f"{path}: {number}/{len(sentences)} sentences "
                  f"({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)
    print(f"{path}: {len(sentences)} sentences in {time.perf_counter() - start:.1f} s",
          file=sys.stderr, flush=True)
    return {
        "path": str(path), "sentences": n_sentences, "words": n_words,
        "nonprojective_sentences": n_nonprojective,
        "nonprojective_percent": percent(n_nonprojective, n_sentences),
        "arcs_kept": kept,
        "arcs_kept_percent": {name: percent(k, n_words) for name, k in kept.items()},
        "optimal_trees_geometric_mean": {
            "nonprojective": geometric_mean(log_counts["nonprojective"], n_nonprojective),
            "all": geometric_mean(log_counts["all"], n_sentences)},
        "optimal_trees_by_length": [
            {"words": f"{first}-{first + 9}", "sentences": b[0],
             "geometric_mean": geometric_mean(b[1], b[0]),
             "nonprojective_sentences": b[2],
             "nonprojective_geometric_mean": geometric_mean(b[3], b[2])}
            for first, b in sorted(by_length.items())],
        "optimal_ms_per_tree": round(1000 * seconds / n_sentences, 4) if n_sentences else None,
        "failed_checks": problems,
        "skipped_long": long_sentences, "skipped_long_words": long_words,
        "skipped_invalid": invalid,
    }


def geometric_mean(sum_of_logs: float, count: int):
    return round(math.exp(sum_of_logs / count), 3) if count else None


def percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def projectivization_table(results) -> str:
    lines = [
        "| file | sentences | words | non-proj. sentences (%) | arcs kept (%): pseudo "
        "| optimal | pseudo + deproj. | optimal trees (geo. mean, non-proj.) | ms per tree "
        "| left out (long) | left out (invalid) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        k = r["arcs_kept_percent"]
        geo = r["optimal_trees_geometric_mean"]["nonprojective"]
        ms = r["optimal_ms_per_tree"]
        lines.append(
            f"| {r['path']} | {r['sentences']:,} | {r['words']:,} "
            f"| {r['nonprojective_percent']:.2f} | {k['pseudo']:.2f} | {k['optimal']:.2f} "
            f"| {k['pseudo_deprojectivized']:.2f} | {'-' if geo is None else f'{geo:.2f}'} "
            f"| {'-' if ms is None else f'{ms:.3f}'} "
            f"| {r['skipped_long']} | {r['skipped_invalid']} |")
    return "\n".join(lines)


# -- optimal-step timing ------------------------------------------------------------------

def parse_algorithms(text: str):
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names or not set(names) <= set(ALGORITHMS):
        raise InputError(f"--algorithms takes comma-separated names from {', '.join(ALGORITHMS)}, "
                         f"not {text!r}")
    return [name for name in ALGORITHMS if name in names]


def unavailable_reason(system, algorithm: str):
    """Why the system cannot time `algorithm` on a projective tree, or None
    (tried on a three-word tree)."""
    state = system.new_state([2, 0, 2])
    try:
        system.step_scores(state, algorithm)
    except NotImplementedError as e:
        return f"NotImplementedError: {e}" if str(e) else "NotImplementedError"
    except AttributeError as e:
        return f"AttributeError: {e}"
    except ValueError as e:
        if "nknown algorithm" in str(e):
            return f"ValueError: {e}"
        raise
    return None


def check_timing_options(args) -> None:
    if args.sentences < 1:
        raise InputError(f"--sentences must be at least 1, not {args.sentences}")
    if args.max_length < 0:
        raise InputError(f"--max-length must be 0 (no limit) or positive, not {args.max_length}")
    if not 0.0 <= args.random_moves <= 1.0:
        raise InputError(f"--random-moves is a probability (0 to 1), not {args.random_moves}")
    if args.repeats < 0:
        raise InputError(f"--repeats must be 0 (automatic) or positive, not {args.repeats}")
    if args.runs < 1:
        raise InputError(f"--runs must be at least 1, not {args.runs}")
    if args.bucket < 1:
        raise InputError(f"--bucket must be at least 1, not {args.bucket}")


def run_timing(args) -> int:
    from spacy_nonmono.conllu_io import gold_tree
    from spacy_nonmono.systems import get_system

    check_timing_options(args)
    requested = parse_algorithms(args.algorithms)
    check_output_paths({"--json": args.json, "--plot": args.plot}, inputs=[args.gold])
    [(_, sentences, _)] = read_gold_files([args.gold], args.skip_invalid)
    trees = [heads for heads, _ in map(gold_tree, sentences)
             if not args.max_length or len(heads) <= args.max_length]
    if not trees:
        raise InputError(f"{args.gold}: no sentence of at most {args.max_length} words")
    rng = random.Random(args.seed)
    sample = [trees[k] for k in sorted(rng.sample(range(len(trees)),
                                                  min(args.sentences, len(trees))))]

    system = get_system("arc_standard")(labels=["dep"], strategy="nonstrict")
    unavailable = {}
    for name in requested:
        reason = unavailable_reason(system, ORACLE_ALGORITHM[name][0])
        if reason:
            unavailable[name] = reason
            warn(f"{COLUMN_NAMES[name]}: not available ({reason}); left out")
    algorithms = [name for name in requested if name not in unavailable]
    if not algorithms:
        raise InputError("none of --algorithms can be timed: "
                         + "; ".join(f"{n}: {r}" for n, r in unavailable.items()))
    walk = TimingWalk(system, algorithms, args, rng)
    start = time.perf_counter()
    for number, heads in enumerate(sample, start=1):
        walk.sentence(heads)
        if number % TIMING_PROGRESS_EVERY == 0 or number == len(sample):
            print(f"{args.gold}: {number}/{len(sample)} sentences, {walk.configurations:,} "
                  f"configurations ({time.perf_counter() - start:.1f} s)",
                  file=sys.stderr, flush=True)
    unavailable.update(walk.failed)
    if walk.mismatches:
        warn(f"{walk.mismatches} configurations where the algorithms on the projectivized "
             "tree disagree")
    result = timing_result(args, walk, sample, unavailable)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.plot:
        timing_plot(result, args.plot, title=args.gold.name)
    print(timing_table(result))
    return 0


class TimingWalk:
    """Walks the sentences' configurations and collects, per algorithm and
    k + m, the count and the sum of seconds per computation."""

    def __init__(self, system, algorithms, args, rng):
        self.system = system
        self.algorithms = list(algorithms)
        self.repeats = args.repeats
        self.runs = args.runs
        self.clock = time.thread_time if args.clock == "cpu" else time.perf_counter
        self.random_moves = args.random_moves
        self.rng = rng
        self.configurations = 0
        self.nonprojective_configurations = 0
        self.nonprojective_sentences = 0
        self.mismatches = 0
        self.failed = {}
        # series -> {k + m: [configurations, sum of seconds]}
        self.sums = {name: {} for name in self.series()}

    def series(self):
        names = list(self.algorithms)
        if "cubic_original" in names:
            names.insert(1, "cubic_original_nonprojective")
        return names

    def sentence(self, heads) -> None:
        from spacy_nonmono.graph import is_projective
        from spacy_nonmono.graph.split_grammars import optimal_projectivization

        projective = is_projective(heads)
        proj_heads = list(heads) if projective else optimal_projectivization(heads)[0]
        self.nonprojective_sentences += not projective
        state = self.system.new_state(list(heads))
        proj_state = state if projective else self.system.new_state(proj_heads)
        while not state.is_final():
            k_m = len(state.stack) - 1 + len(state.buffer)
            self.configurations += 1
            self.nonprojective_configurations += not projective
            timed = {}
            for name in list(self.algorithms):
                algorithm, on_projectivized = ORACLE_ALGORITHM[name]
                if name == "cubic_original" and projective and "cubic_projectivized" in timed:
                    seconds = timed["cubic_projectivized"]
                elif name == "cubic_projectivized" and projective and "cubic_original" in timed:
                    seconds = timed["cubic_original"]
                else:
                    seconds = self.time(proj_state if on_projectivized else state, algorithm, name)
                    if seconds is None:
                        continue
                timed[name] = seconds
                self.add(name, k_m, seconds)
                if name == "cubic_original" and not projective:
                    self.add("cubic_original_nonprojective", k_m, seconds)
            self.compare(proj_state)
            move = self.choose(state)
            state.apply(move)
            if proj_state is not state:
                proj_state.apply(move)

    def time(self, state, algorithm: str, name: str):
        """Seconds per computation (best of runs); None once the algorithm
        turns out not to work (its column is then left out)."""
        try:
            repeats = self.repeats
            if not repeats:
                # The loop's own wall time: never below the computation's.
                once = max(self.seconds(state, algorithm, 1, time.perf_counter), 1e-7)
                repeats = int(min(MAX_AUTO_REPEATS, max(1, math.ceil(TARGET_SECONDS / once))))
            return max(0.0, min(self.seconds(state, algorithm, repeats, self.clock)
                                for _ in range(self.runs)))
        except NotImplementedError as e:
            self.drop(name, f"NotImplementedError: {e}" if str(e) else "NotImplementedError")
            return None

    def seconds(self, state, algorithm: str, repeats: int, clock) -> float:
        """Seconds per computation by `clock` over one call that computes the
        scores `repeats` times in C (`step_scores`)."""
        start = clock()
        self.system.step_scores(state, algorithm, repeats)
        return (clock() - start) / repeats

    def drop(self, name: str, reason: str) -> None:
        warn(f"{COLUMN_NAMES[name]}: {reason}; left out")
        self.failed[name] = reason
        self.algorithms.remove(name)
        self.sums.pop(name, None)
        if name == "cubic_original":
            self.sums.pop("cubic_original_nonprojective", None)

    def add(self, series: str, k_m: int, seconds: float) -> None:
        entry = self.sums[series].setdefault(k_m, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds

    def compare(self, proj_state) -> None:
        """The projectivized tree's algorithms must agree (as the paper
        verified for each configuration)."""
        names = [ORACLE_ALGORITHM[name][0] for name in self.algorithms
                 if ORACLE_ALGORITHM[name][1]]
        scores = [self.system.step_scores(proj_state, algorithm) for algorithm in names]
        if any(s != scores[0] for s in scores[1:]):
            self.mismatches += 1
            if self.mismatches <= 5:
                warn("step scores differ on the projectivized tree: "
                     + ", ".join(f"{a} {s}" for a, s in zip(names, scores))
                     + f" (stack {list(proj_state.stack)}, buffer {list(proj_state.buffer)}, "
                     f"gold {list(proj_state.gold_heads)})")

    def choose(self, state) -> int:
        valid = list(state.valid_moves())
        if self.rng.random() < self.random_moves:
            return self.rng.choice(valid)
        costs = state.costs()
        best = min(costs[m] for m in valid)
        return self.rng.choice([m for m in valid if costs[m] == best])


def timing_result(args, walk: TimingWalk, sample, unavailable) -> dict:
    width = args.bucket
    by_k_m = {name: {str(k): {"configurations": c, "mean_ms": round(1000 * s / c, 6)}
                     for k, (c, s) in sorted(sums.items())}
              for name, sums in walk.sums.items()}
    buckets = {}
    for name, sums in walk.sums.items():
        for k, (c, s) in sums.items():
            first = width * ((k - 1) // width) + 1
            entry = buckets.setdefault(first, {}).setdefault(name, [0, 0.0])
            entry[0] += c
            entry[1] += s
    rows = []
    for first in sorted(buckets):
        row = {"k_plus_m": f"{first}-{first + width - 1}" if width > 1 else str(first),
               "first": first, "last": first + width - 1}
        for name in walk.sums:
            c, s = buckets[first].get(name, [0, 0.0])
            row[name] = {"configurations": c, "mean_ms": round(1000 * s / c, 6) if c else None}
        rows.append(row)
    return {
        "gold": str(args.gold), "sentences": len(sample),
        "nonprojective_sentences": walk.nonprojective_sentences,
        "words": sum(len(h) for h in sample), "seed": args.seed,
        "max_length": args.max_length, "random_moves": args.random_moves,
        "repeats": args.repeats or "auto", "target_ms_per_measurement":
            TARGET_SECONDS * 1000 if not args.repeats else None,
        "runs": args.runs, "clock": args.clock, "strategy": "nonstrict",
        "configurations": walk.configurations,
        "nonprojective_configurations": walk.nonprojective_configurations,
        "score_mismatches": walk.mismatches,
        "algorithms": list(walk.sums), "unavailable": unavailable,
        "bucket": width, "buckets": rows, "by_k_plus_m": by_k_m,
    }


def timing_table(result) -> str:
    names = result["algorithms"]
    nonproj = "cubic_original_nonprojective" in names
    header = "| k + m | configurations |" + (" of non-proj. sentences |" if nonproj else "")
    header += "".join(f" {COLUMN_NAMES[name]} (ms) |" for name in names)
    lines = [header, "|---:|---:|" + ("---:|" if nonproj else "") + "---:|" * len(names)]
    some = names[0]
    for row in result["buckets"]:
        line = f"| {row['k_plus_m']} | {row[some]['configurations']:,} |"
        if nonproj:
            line += f" {row['cubic_original_nonprojective']['configurations']:,} |"
        for name in names:
            ms = row[name]["mean_ms"]
            line += " - |" if ms is None else f" {ms:.4f} |"
        lines.append(line)
    lines.append(f"| all | {result['configurations']:,} |"
                 + (f" {result['nonprojective_configurations']:,} |" if nonproj else "")
                 + "".join(f" {overall_mean(result, name)} |" for name in names))
    notes = [f"{COLUMN_NAMES.get(name, name)}: not available ({reason})"
             for name, reason in result["unavailable"].items()]
    if result["score_mismatches"]:
        notes.append(f"{result['score_mismatches']} configurations where the algorithms on "
                     "the projectivized tree disagree")
    return "\n".join(lines + ([""] + notes if notes else []))


def overall_mean(result, name: str) -> str:
    entries = result["by_k_plus_m"][name].values()
    count = sum(e["configurations"] for e in entries)
    total = sum(e["configurations"] * e["mean_ms"] for e in entries)
    return f"{total / count:.4f}" if count else "-"


def timing_plot(result, path: Path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in result["algorithms"]:
        points = [((row["first"] + row["last"]) / 2, row[name]["mean_ms"])
                  for row in result["buckets"] if row[name]["mean_ms"] is not None]
        if points:
            ax.plot(*zip(*points), marker="o", markersize=3, label=COLUMN_NAMES[name],
                    linestyle="--" if name == "cubic_original_nonprojective" else "-")
    ax.set_yscale("log")
    ax.set_xlabel(f"k + m (stack + remaining input, buckets of {result['bucket']})")
    ax.set_ylabel("ms per optimal-step computation")
    ax.set_title(f"{title}: {result['sentences']} sentences, "
                 f"{result['configurations']:,} configurations", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
