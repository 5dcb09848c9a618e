"""`benchmark`: train several parsers on one UD treebank and compare them.

Each system is a config in `configs/` plus overrides; every system is trained
with the same data and training settings, then evaluated on dev and test
(gold tokens and sentences, punctuation included) and timed side by side in
one process. spaCy's own parser is the reference for the speed ratio.
"""
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

# name -> (config file, config overrides)
SYSTEMS: Dict[str, Tuple[str, Dict[str, str]]] = {
    "spacy_parser": ("spacy_parser.cfg", {}),
    "covington-static": ("covington.cfg", {"components.nonmono_parser.oracle": "static"}),
    "covington-dynamic": ("covington.cfg", {"components.nonmono_parser.oracle": "dynamic"}),
}
DEFAULT_SYSTEMS = "spacy_parser,covington-static,covington-dynamic"


def add_parser(commands) -> None:
    p = commands.add_parser(
        "benchmark",
        help="Train systems on a UD treebank; print dev/test UAS/LAS and words/s.",
        description=__doc__,
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    p.add_argument("treebank_dir", type=Path, help="Folder with *-{train,dev,test}.conllu (a UD treebank)")
    p.add_argument("--output", type=Path, default=None,
                   help="Working folder (default: bench/<treebank folder name>)")
    p.add_argument("--systems", default=DEFAULT_SYSTEMS,
                   help=f"Comma-separated, from: {', '.join(SYSTEMS)} (first = speed reference)")
    p.add_argument("--configs", type=Path, default=Path("configs"), help="Folder of the configs")
    p.add_argument("--max-steps", type=int, default=3000)
    p.add_argument("--eval-frequency", type=int, default=300)
    p.add_argument("--patience", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0, help="Training seed (system.seed)")
    p.add_argument("--speed-runs", type=int, default=5, help="Runs per speed measurement (median)")
    p.add_argument("--skip-train", action="store_true",
                   help="Reuse models already trained in the output folder")
    p.set_defaults(run=run)


def find_split(treebank_dir: Path, split: str) -> Path:
    found = sorted(treebank_dir.glob(f"*-{split}.conllu"))
    if len(found) != 1:
        raise SystemExit(f"Expected one *-{split}.conllu in {treebank_dir}, found {len(found)}.")
    return found[0]


def convert(conllu: Path, output: Path, n_sents: int) -> Path:
    """CoNLL-U -> .spacy with gold sentences (n_sents sentences per doc)."""
    import spacy
    from spacy.tokens import DocBin
    from spacy.training.converters import conllu_to_docs

    target = output / (conllu.stem + ".spacy")
    if not target.exists():
        docs = conllu_to_docs(conllu.read_text(encoding="utf8"), n_sents=n_sents, no_print=True)
        DocBin(docs=list(docs), store_user_data=False).to_disk(target)
        print(f"Converted {conllu} -> {target}", flush=True)
    return target


def train(system: str, args, corpus: Dict[str, Path], output: Path) -> Path:
    config, overrides = SYSTEMS[system]
    out = output / "training" / system
    model = out / "model-best"
    if args.skip_train and model.exists():
        return model
    cmd = [
        sys.executable, "-m", "spacy", "train", str(args.configs / config),
        "--output", str(out),
        "--paths.train", str(corpus["train"]), "--paths.dev", str(corpus["dev"]),
        "--training.max_steps", str(args.max_steps),
        "--training.eval_frequency", str(args.eval_frequency),
        "--training.patience", str(args.patience),
        "--system.seed", str(args.seed),
    ]
    for key, value in overrides.items():
        cmd += [f"--{key}", value]
    print(f"\n=== Training {system}: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True)
    return model


def format_table(rows: List[dict], reference: str) -> str:
    header = ("| system | dev UAS | dev LAS | test UAS | test LAS | test LAS non-proj. "
              f"| words/s | speed vs {reference} |")
    lines = [header, "|" + "---|" * 8]
    ref_speed = next(r["words_per_second"] for r in rows if r["system"] == reference)
    for r in rows:
        lines.append(
            f"| {r['system']} | {r['dev']['uas']:.2f} | {r['dev']['las']:.2f} "
            f"| {r['test']['uas']:.2f} | {r['test']['las']:.2f} | {r['test']['nonprojective']['las']:.2f} "
            f"| {r['words_per_second']:,.0f} | {r['words_per_second'] / ref_speed:.2f}x |"
        )
    return "\n".join(lines)


def run(args) -> int:
    import spacy

    from ..evaluation import evaluate_pipeline, read_conllu, words_per_second
    from ..evaluation.speed import SpacyTimer

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise SystemExit(f"Unknown system(s) {unknown}; known: {', '.join(SYSTEMS)}.")
    output = args.output or Path("bench") / args.treebank_dir.name
    (output / "corpus").mkdir(parents=True, exist_ok=True)
    conllu_files = {split: find_split(args.treebank_dir, split) for split in ("train", "dev", "test")}
    corpus = {
        split: convert(path, output / "corpus", n_sents=10 if split == "train" else 1)
        for split, path in conllu_files.items()
    }
    models = {system: train(system, args, corpus, output) for system in systems}

    rows = []
    for system in systems:
        print(f"\n=== Evaluating {system}", flush=True)
        nlp = spacy.load(models[system])
        row = {"system": system}
        for split in ("dev", "test"):
            predictions = output / f"{system}.{split}.conllu"
            row[split] = evaluate_pipeline(nlp, conllu_files[split], predictions).to_dict()
        rows.append(row)
    # Speed last and side by side, every pipeline on the same test sentences.
    print("\n=== Measuring speed (nlp.pipe, one thread)", flush=True)
    speeds = words_per_second(
        {system: SpacyTimer(spacy.load(models[system])) for system in systems},
        read_conllu(conllu_files["test"]),
        n_runs=args.speed_runs,
        progress=lambda line: print(line, flush=True),
    )
    for row in rows:
        row["words_per_second"] = speeds[row["system"]]

    table = format_table(rows, systems[0])
    print(f"\nTreebank: {args.treebank_dir} (UAS/LAS in %, punctuation included, "
          "gold tokens and sentences)\n")
    print(table)
    (output / "results.json").write_text(json.dumps(rows, indent=2))
    (output / "results.md").write_text(table + "\n")
    print(f"\nWrote {output / 'results.md'} and {output / 'results.json'}")
    return 0
