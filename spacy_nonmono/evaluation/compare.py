"""The comparison over treebanks x systems: a Markdown table and PNG plots."""
from pathlib import Path
from typing import Dict, List, Tuple

from . import udpipe
from .conllu_eval import LENGTH_BUCKETS

Results = Dict[Tuple[str, str], dict]   # (treebank, system) -> {"dev", "test", speed keys}

# Names in tables and plots where the workflow's system name says too little.
LABELS = {"udpipe": udpipe.LABEL}


def label(system: str) -> str:
    return LABELS.get(system, system)


def comparison_table(results: Results, treebanks: List[str], systems: List[str]) -> str:
    """Dev UAS/LAS, test UAS/LAS/CLAS, LAS on non-projective test sentences,
    words/s (median run) with the ratio to the first system of each
    treebank, the same ratio for the best runs, and the transitions per word
    of our parsers. The dev columns are headed "(selection)": dev chose each
    spaCy pipeline's checkpoint, so they are not unbiased estimates."""
    lines = [
        "| treebank | system | dev UAS (selection) | dev LAS (selection) | test UAS | test LAS "
        "| test CLAS "
        "| test LAS non-proj. (sentences) | words/s | speed ratio | best-run ratio "
        "| transitions/word |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for tb in treebanks:
        reference = best_reference = None
        for system in systems:
            r = results.get((tb, system))
            if r is None:
                continue
            test, speed, best = r["test"], r.get("words_per_second"), r.get("best_words_per_second")
            if reference is None and speed:
                reference, best_reference = speed, best
            speed_cells = (f"{speed:,.0f} | {speed / reference:.2f}x" if speed and reference
                           else "n/a | n/a")
            speed_cells += (f" | {best / best_reference:.2f}x" if best and best_reference
                            else " | n/a")
            per_word = r.get("transitions_per_word")
            speed_cells += f" | {per_word:.2f}" if per_word else " | n/a"
            lines.append(
                f"| {tb} | {label(system)} | {r['dev']['uas']:.2f} | {r['dev']['las']:.2f} "
                f"| {test['uas']:.2f} | {test['las']:.2f} "
                f"| {test['clas']:.2f} | {test['nonprojective']['las']:.2f} "
                f"({test['nonprojective_sentences']}) | {speed_cells} |"
            )
    return "\n".join(lines)


def write_plots(results: Results, treebanks: List[str], systems: List[str],
                output: Path) -> List[Path]:
    """results/las_by_length.png and results/las_by_projectivity.png: test
    LAS per gold arc length bucket and per sentence projectivity, one panel
    per treebank, one bar per system. Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots (pip install matplotlib).", flush=True)
        return []
    treebanks = [tb for tb in treebanks if any((tb, s) in results for s in systems)]
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
    }
    written = []
    for filename, (title, groups, values) in panels.items():
        fig, axes = plt.subplots(1, len(treebanks), figsize=(max(6.0, 4.2 * len(treebanks)), 3.8),
                                 squeeze=False, sharey=True)
        for ax, tb in zip(axes[0], treebanks):
            present = [s for s in systems if (tb, s) in results]
            width = 0.8 / max(1, len(present))
            for k, system in enumerate(present):
                xs = [g + (k - (len(present) - 1) / 2) * width for g in range(len(groups))]
                ax.bar(xs, values(results[(tb, system)]["test"]), width, label=label(system))
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
