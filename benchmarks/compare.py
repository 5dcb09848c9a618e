"""The comparison over treebanks x systems: a Markdown table and PNG plots."""
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from benchmarks import udpipe
from spacy_nonmono.evaluation.gold_tokens import LENGTH_BUCKETS, SENTENCE_LENGTH_BUCKETS

Results = Dict[Tuple[str, str], List[dict]]   # (treebank, system) -> one dict per seed
# treebank -> system -> transitions per word of its static oracle on gold test trees
Static = Optional[Dict[str, Dict[str, float]]]
# Each run dict: {"seed", "dev", "test", and the speed keys "words_per_second",
# "best_words_per_second", "transitions_per_word" when measured}.

# Names in tables and plots where the workflow's system name says too little.
LABELS = {"udpipe": udpipe.LABEL}

# The accuracy columns: (name, how to read it from a run's scores).
ACCURACY = (
    ("dev UAS", lambda r: r["dev"]["uas"]),
    ("dev LAS", lambda r: r["dev"]["las"]),
    ("test UAS", lambda r: r["test"]["uas"]),
    ("test LAS", lambda r: r["test"]["las"]),
    ("test CLAS", lambda r: r["test"]["clas"]),
    ("test LAS non-proj.", lambda r: r["test"]["nonprojective"]["las"]),
)
# Paired differences to the reference system, seed by seed.
PAIRED = (("test UAS", ACCURACY[2][1]), ("test LAS", ACCURACY[3][1]),
          ("test LAS non-proj.", ACCURACY[5][1]))


def label(system: str) -> str:
    return LABELS.get(system, system)


def mean_sd(values: Sequence[float]) -> Tuple[float, Optional[float]]:
    """Mean and sample standard deviation (None for a single value)."""
    values = list(values)
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def verdict(mean: float, sd: Optional[float], n: int) -> str:
    """"better" / "worse" only when the mean paired difference exceeds twice
    its standard deviation over seeds; otherwise "tie"."""
    if sd is None or n < 2:
        return "tie (1 seed)"
    if abs(mean) > 2 * sd:
        return "better" if mean > 0 else "worse"
    return "tie"


def summarize(results: Results, treebanks: List[str], systems: List[str],
              static: Static = None) -> Dict:
    """Per (treebank, system): the seeds, mean and sd of every accuracy column
    and of the speed columns, and the paired differences to the treebank's
    reference system (the first of `systems` with results) with a verdict.
    The speed ratio is taken seed by seed within the same speed run; the
    transitions per word also as a multiple of the system's static oracle's
    (`static`)."""
    summary = {}
    for tb in treebanks:
        present = [s for s in systems if results.get((tb, s))]
        if not present:
            continue
        reference = {run["seed"]: run for run in results[(tb, present[0])]}
        for system in present:
            runs = results[(tb, system)]
            entry = {"seeds": [run["seed"] for run in runs], "reference": present[0]}
            entry.update({name: mean_sd([get(run) for run in runs]) for name, get in ACCURACY})
            entry["non-proj. sentences"] = runs[0]["test"]["nonprojective_sentences"]
            for name, values in (
                    ("test UPOS", [run["test"].get("upos") for run in runs]),
                    ("train minutes", [run["train_seconds"] / 60 if run.get("train_seconds")
                                       else None for run in runs])):
                values = [v for v in values if v is not None]
                entry[name] = mean_sd(values) if values else None
            for key in ("words_per_second", "transitions_per_word"):
                values = [run[key] for run in runs if run.get(key)]
                entry[key] = mean_sd(values) if values else None
            reference_work = (static or {}).get(tb, {}).get(system)
            entry["static oracle transitions_per_word"] = reference_work
            entry["x static oracle"] = (
                mean_sd([v / reference_work for v in values])
                if values and reference_work else None)
            for key, ratio_key in (("words_per_second", "speed ratio"),
                                   ("best_words_per_second", "best-run ratio")):
                ratios = [run[key] / reference[run["seed"]][key] for run in runs
                          if run.get(key) and reference.get(run["seed"], {}).get(key)]
                entry[ratio_key] = mean_sd(ratios) if ratios else None
            for name, get in PAIRED:
                paired = _paired(runs, reference, get)
                if paired and system != present[0]:
                    entry[f"paired {name}"] = paired
            summary[(tb, system)] = entry
    return summary


def _paired(runs: List[dict], reference: Dict[int, dict], get) -> Optional[dict]:
    """The difference get(run) - get(reference run of the same seed), seed by
    seed: per seed, mean, sd and verdict; None without a common seed."""
    diffs = [get(run) - get(reference[run["seed"]]) for run in runs if run["seed"] in reference]
    if not diffs:
        return None
    mean, sd = mean_sd(diffs)
    return {"per_seed": diffs, "mean": mean, "sd": sd, "verdict": verdict(mean, sd, len(diffs))}


def _scored(results: Results, tb: str, system: str, get) -> bool:
    """Whether every run of (tb, system) has the test scores get reads (not None)."""
    runs = results.get((tb, system))
    return bool(runs) and all(get(run["test"]) is not None for run in runs)


def _cell(stat, fmt="{:.2f}", suffix="") -> str:
    if stat is None:
        return "n/a"
    mean, sd = stat
    return fmt.format(mean) + suffix + ("" if sd is None else " ± " + fmt.format(sd) + suffix)


def _difference(paired) -> str:
    """A paired difference's mean ± sd (the mean alone for one seed)."""
    sd = "" if paired["sd"] is None else f" ± {paired['sd']:.2f}"
    return f"{paired['mean']:+.2f}{sd}"


def _paired_cell(paired) -> str:
    return "ref." if paired is None else f"{_difference(paired)} ({paired['verdict']})"


def comparison_table(results: Results, treebanks: List[str], systems: List[str],
                     static: Static = None) -> str:
    """Dev UAS/LAS, test UAS/LAS/CLAS/UPOS, LAS on non-projective test sentences,
    each as mean ± sd over seeds (a plain value for one seed); the paired
    difference of test UAS, test LAS and non-projective LAS to the first system,
    seed by seed, with its verdict; words/s (median run), its ratio to the
    first system and the same ratio for the best runs; transitions per word of
    our parsers, and that as a multiple of the static oracle's on the gold
    test trees; training minutes (wall clock, where recorded). The dev columns are headed "(selection)": dev chose each
    pipeline's checkpoint, so they are not unbiased estimates."""
    summary = summarize(results, treebanks, systems, static)
    lines = [
        "| treebank | system | seeds | dev UAS (selection) | dev LAS (selection) | test UAS "
        "| test LAS | test CLAS | test UPOS | test LAS non-proj. (sentences) "
        "| Δ test UAS (paired) | Δ test LAS (paired) "
        "| Δ LAS non-proj. (paired) | words/s | speed ratio | best-run ratio | transitions/word "
        "| × static oracle | train min |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for tb in treebanks:
        for system in systems:
            e = summary.get((tb, system))
            if e is None:
                continue
            speed = e["words_per_second"]
            lines.append(
                f"| {tb} | {label(system)} | {len(e['seeds'])} "
                f"| {_cell(e['dev UAS'])} | {_cell(e['dev LAS'])} | {_cell(e['test UAS'])} "
                f"| {_cell(e['test LAS'])} | {_cell(e['test CLAS'])} | {_cell(e['test UPOS'])} "
                f"| {_cell(e['test LAS non-proj.'])} ({e['non-proj. sentences']}) "
                f"| {_paired_cell(e.get('paired test UAS'))} "
                f"| {_paired_cell(e.get('paired test LAS'))} "
                f"| {_paired_cell(e.get('paired test LAS non-proj.'))} "
                f"| {_cell(speed, '{:,.0f}')} | {_cell(e['speed ratio'], '{:.2f}', 'x')} "
                f"| {_cell(e['best-run ratio'], '{:.2f}', 'x')} "
                f"| {_cell(e['transitions_per_word'])} "
                f"| {_cell(e['x static oracle'], '{:.2f}', 'x')} "
                f"| {_cell(e['train minutes'], '{:.0f}')} |"
            )
    return "\n".join(lines)


TAGS = (("UPOS", "upos"), ("XPOS", "xpos"), ("UFeats", "ufeats"))


def tagging_table(results: Results, treebanks: List[str], systems: List[str]) -> Optional[str]:
    """Dev and test UPOS, XPOS and UFeats accuracy on gold tokens (mean ± sd
    over seeds), "n/a" where not measured: no tagger, or a treebank without
    the column (Hungarian XPOS). None when no run has XPOS or UFeats scores
    (records from before they were kept)."""
    if not any(run[split].get(key) is not None for runs in results.values() for run in runs
               for split in ("dev", "test") for key in ("xpos", "ufeats")):
        return None
    columns = [(f"{split} {name}", split, key) for split in ("dev", "test") for name, key in TAGS]
    lines = ["| treebank | system | seeds | " + " | ".join(c[0] for c in columns) + " |",
             "|---|---|---|" + "---:|" * len(columns)]
    for tb in treebanks:
        for system in systems:
            runs = results.get((tb, system))
            if not runs:
                continue
            cells = []
            for _, split, key in columns:
                values = [run[split].get(key) for run in runs]
                values = [v for v in values if v is not None]
                cells.append(_cell(mean_sd(values) if values else None))
            lines.append(f"| {tb} | {label(system)} | {len(runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


CURVE_UPDATES = (1000, 2000, 4000, 6000, 8000)


def dev_curve_table(results: Results, treebanks: List[str], systems: List[str],
                    updates: Sequence[int] = CURVE_UPDATES) -> Optional[str]:
    """Dev LAS at some numbers of updates (the check at or before each; mean
    ± sd over seeds) and the update of the best dev UAS + LAS, from the
    training logs' dev checks (`dev_curve` in the scores): whether dev still
    rose when training stopped. None when no run has a curve."""
    if not any(run.get("dev_curve") for runs in results.values() for run in runs):
        return None
    lines = ["| treebank | system | seeds | " +
             " | ".join(f"dev LAS at {n:,}" for n in updates) + " | best update | last update |",
             "|---|---|---|" + "---:|" * (len(updates) + 2)]

    def at(curve, n):
        before = [las for update, las, _ in curve if update <= n]
        return before[-1] if before and curve[-1][0] >= n else None

    for tb in treebanks:
        for system in systems:
            runs = [run for run in results.get((tb, system), []) if run.get("dev_curve")]
            if not runs:
                continue
            cells = []
            for n in updates:
                values = [v for v in (at(run["dev_curve"], n) for run in runs) if v is not None]
                cells.append(_cell(mean_sd(values) if values else None))
            best = [max(run["dev_curve"], key=lambda c: c[1] + c[2])[0] for run in runs]
            last = [run["dev_curve"][-1][0] for run in runs]
            lines.append(f"| {tb} | {label(system)} | {len(runs)} | " + " | ".join(cells) +
                         f" | {_cell(mean_sd(best), '{:,.0f}')} | {_cell(mean_sd(last), '{:,.0f}')} |")
    return "\n".join(lines)


def summary_json(results: Results, treebanks: List[str], systems: List[str],
                 static: Static = None) -> List[dict]:
    """comparison.json: per (treebank, system), every seed's scores and the summary."""
    summary = summarize(results, treebanks, systems, static)
    return [{"treebank": tb, "system": s, "runs": results[(tb, s)], "summary": summary[(tb, s)]}
            for (tb, s) in summary]


def sentence_length_table(results: Results, treebanks: List[str], systems: List[str]) -> Optional[str]:
    """Test LAS per sentence length bucket (mean ± sd over seeds) and its
    paired difference to the first system, for the systems whose scores have
    sentence lengths (evaluated since the evaluator records them); None when
    none has."""
    def las(bucket: str):
        return lambda run: run["test"]["by_sentence_length"][bucket]["las"]

    def scored(tb: str, system: str) -> bool:
        return _scored(results, tb, system, lambda test: test.get("by_sentence_length"))

    buckets = [name for name, _, _ in SENTENCE_LENGTH_BUCKETS]
    lines = ["| treebank | system | seeds | " + " | ".join(
        f"LAS {b} words (Δ paired)" for b in buckets) + " |",
        "|---|---|---|" + "---|" * len(buckets)]
    for tb in treebanks:
        present = [s for s in systems if scored(tb, s)]
        if not present:
            continue
        reference = {run["seed"]: run for run in results[(tb, present[0])]}
        words = results[(tb, present[0])][0]["test"]["by_sentence_length"]
        for system in present:
            runs = results[(tb, system)]
            cells = []
            for bucket in buckets:
                get = las(bucket)
                cell = _cell(mean_sd([get(run) for run in runs]))
                paired = _paired(runs, reference, get)
                if system != present[0] and paired:
                    cell += f"; Δ {_difference(paired)}, {paired['verdict']}"
                elif system == present[0]:
                    cell += f" ({words[bucket]['words']:,} words)"
                cells.append(cell)
            lines.append(f"| {tb} | {label(system)} | {len(runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) if len(lines) > 2 else None


RAW_METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "UAS", "LAS", "CLAS")
# Raw-text F1 of others on the same test sets (UD 2.0 test data of the CoNLL
# 2017 shared task, Zeman et al. 2017: its baseline UDPipe 1.1, UDPipe 1.2 and
# the task's best LAS), and the MH4 paper's Table 5 (Gomez-Rodriguez, Shi & Lee
# 2018: MH4 on UDPipe's segmentation). Only the figures these sources give.
RAW_TEXT_REFERENCES = {
    "got_proiel": {"CoNLL 2017 baseline (UDPipe 1.1)": {"Sentences": 27.85, "LAS": 59.81},
                   "UDPipe 1.2": {"LAS": 62.80}, "CoNLL 2017 best": {"LAS": 71.36},
                   "C2L2 (Shi et al. 2017)": {"LAS": 68.34},
                   "MH4 paper, Table 5": {"LAS": 67.92}},
    "hu_szeged": {"CoNLL 2017 baseline (UDPipe 1.1)": {"Sentences": 93.85, "UPOS": 90.80,
                                                       "LAS": 64.30},
                  "UDPipe 1.2": {"LAS": 66.54},
                  "CoNLL 2017 best": {"UPOS": 95.34, "LAS": 77.56},
                  "C2L2 (Shi et al. 2017)": {"LAS": 76.55},
                  "MH4 paper, Table 5": {"LAS": 76.90}},
    "la_perseus": {"CoNLL 2017 baseline (UDPipe 1.1)": {"Sentences": 98.09, "UPOS": 83.39,
                                                        "XPOS": 67.70, "UFeats": 72.27,
                                                        "LAS": 43.77},
                   "UDPipe 1.2": {"LAS": 47.02},
                   "CoNLL 2017 best": {"UPOS": 90.67, "XPOS": 76.69, "LAS": 63.37},
                   "C2L2 (Shi et al. 2017)": {"LAS": 59.48}},
}


def raw_text_table(raw: Results, treebanks: List[str], systems: List[str]) -> Optional[str]:
    """F1 from raw text (the evaluate-raw step's scores, CoNLL 2018 style):
    mean ± sd over seeds, the paired LAS difference to the first system with
    such scores, the tokenizer and senter bound used and words/s, then the
    published scores of others (RAW_TEXT_REFERENCES); None when no run has
    them."""
    lines = ["| treebank | system | seeds | tokenizer, sentence bound | " + " | ".join(RAW_METRICS)
             + " | Δ LAS (paired) | words/s |", "|---|---|---|---|" + "---:|" *
             len(RAW_METRICS) + "---|---:|"]
    for tb in treebanks:
        present = [s for s in systems if raw.get((tb, s))]
        if not present:
            continue
        reference = {run["seed"]: run for run in raw[(tb, present[0])]}
        for system in present:
            runs = raw[(tb, system)]
            # A column the gold file lacks (Hungarian XPOS) is not a score.
            cells = ["n/a" if all(m in run.get("not_applicable", ()) for run in runs) else
                     _cell(mean_sd([run["test"][m]["f1"] for run in runs])) for m in RAW_METRICS]
            paired = _paired(runs, reference, lambda run: run["test"]["LAS"]["f1"])
            delta = "ref." if system == present[0] else (
                f"{_difference(paired)} ({paired['verdict']})" if paired else "n/a")
            tokenizers = "/".join(sorted({run.get("tokenizer", "?") for run in runs}))
            speed = _cell(mean_sd([run["words_per_second"] for run in runs]), "{:,.0f}")
            bounds = {run.get("senter_max_length") for run in runs}
            sentences = "/".join(sorted(f"≤ {b}" if b else "any" for b in bounds))
            lines.append(f"| {tb} | {label(system)} | {len(runs)} | {tokenizers}, {sentences} | "
                         + " | ".join(cells) + f" | {delta} | {speed} |")
        for name, scores in RAW_TEXT_REFERENCES.get(tb, {}).items():
            cells = [f"{scores[m]:.2f}" if m in scores else "" for m in RAW_METRICS]
            lines.append("| " + " | ".join([tb, name, "", "", *cells, "", ""]) + " |")
    return "\n".join(lines) if len(lines) > 2 else None


def write_plots(results: Results, treebanks: List[str], systems: List[str],
                output: Path) -> List[Path]:
    """results/las_by_length.png and results/las_by_projectivity.png: test
    LAS per gold arc length bucket and per sentence projectivity, one panel
    per treebank, one bar per system (mean over seeds, error bars one
    standard deviation); las_by_sentence_length.png per sentence length,
    for the systems whose scores have it (evaluated since it exists).
    Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots (pip install matplotlib).", flush=True)
        return []
    treebanks = [tb for tb in treebanks if any(results.get((tb, s)) for s in systems)]
    if not treebanks:
        return []
    panels = {
        "las_by_length.png": (
            "test LAS by gold arc length",
            [name for name, _, _ in LENGTH_BUCKETS],
            lambda test: [test["by_length"][name]["las"] for name, _, _ in LENGTH_BUCKETS],
        ),
        "las_by_projectivity.png": (
            "test LAS by sentence projectivity",
            ["projective", "non-projective"],
            lambda test: [test["projective"]["las"], test["nonprojective"]["las"]],
        ),
        "las_by_sentence_length.png": (
            "test LAS by sentence length (words)",
            [name for name, _, _ in SENTENCE_LENGTH_BUCKETS],
            lambda test: ([test["by_sentence_length"][name]["las"] for name, _, _ in SENTENCE_LENGTH_BUCKETS]
                          if "by_sentence_length" in test else None),
        ),
    }
    written = []
    for filename, (title, groups, values) in panels.items():
        def scored(tb: str, system: str) -> bool:
            return _scored(results, tb, system, values)

        if not any(scored(tb, s) for tb in treebanks for s in systems):
            continue
        fig, axes = plt.subplots(1, len(treebanks), figsize=(max(6.0, 4.2 * len(treebanks)), 3.8),
                                 squeeze=False, sharey=True)
        for ax, tb in zip(axes[0], treebanks):
            present = [s for s in systems if scored(tb, s)]
            width = 0.8 / max(1, len(present))
            for k, system in enumerate(present):
                xs = [g + (k - (len(present) - 1) / 2) * width for g in range(len(groups))]
                per_seed = [values(run["test"]) for run in results[(tb, system)]]
                stats = [mean_sd(column) for column in zip(*per_seed)]
                errors = [sd or 0.0 for _, sd in stats] if len(per_seed) > 1 else None
                ax.bar(xs, [mean for mean, _ in stats], width, yerr=errors, capsize=2,
                       label=label(system))
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels(groups)
            ax.set_title(tb)
            ax.set_ylim(0, 100)
            ax.grid(axis="y", alpha=0.3)
        axes[0][0].set_ylabel("LAS (%)")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
        fig.suptitle(title)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
        path = output / filename
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
