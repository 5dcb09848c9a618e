"""`workflow STEP`: the steps `project.yml` runs, over treebanks x systems.

Layout under --root, where <run> is the system's name for seed 0 and
<system>.seed<k> for seed k (so a single-seed run looks as it always did):
  corpus/<treebank>/{train,dev,test}.spacy     converted training data
  training/<treebank>/<run>/model-best         trained pipelines (UDPipe: model.udpipe)
  metrics/<treebank>/<run>.json                dev and test scores (CoNLL 2018 style)
  metrics/<treebank>/<run>.<split>.conllu      predictions
  metrics/<treebank>/speed.json                words/s of every run side by side
  results/comparison.md, results/*.png         the comparison over everything: mean ± sd
                                               over seeds, paired differences to the
                                               first system

A treebank is a folder of --ud-dir holding *-train/dev/test.conllu. Steps skip
work whose output exists (use --force to redo it). The scores of earlier runs
(docs/results/*/runs/, in the metrics/ layout) can be copied into metrics/:
compare then reports them with the new runs, and `train --skip-scored` trains
only the runs that have no scores yet.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

from ..configs import CONFIG_DIR
from .common import InputError, RawHelpFormatter, load_pipeline, parse_batch_sizes

# System name -> (config in --configs, config overrides). "udpipe" is special.
SYSTEMS: Dict[str, Tuple[str, Dict[str, str]]] = {
    "spacy_parser": ("spacy_parser.cfg", {}),
    "covington-static": ("covington.cfg", {"components.nonmono_parser.oracle": "static"}),
    # The default training target before scan_explore_prob (0.75 since the
    # measurements of docs/results/over_seeds/targets.md): what this name
    # meant in every table; the component's default is "+scan75".
    "covington-dynamic": ("covington.cfg", {
        "components.nonmono_parser.oracle": "dynamic",
        "components.nonmono_parser.system_options": json.dumps({"scan_explore_prob": 0.0})}),
    # The full training target (replace_tie_break "none", the default until
    # the measurements of docs/results/over_seeds/nm_replace*.md): what these
    # names meant in every table; the component's default is "+replace75".
    **{
        f"covington_nm-{loss}": ("covington.cfg", {
            "components.nonmono_parser.system": "covington_nm",
            "components.nonmono_parser.loss": loss,
            "components.nonmono_parser.system_options": json.dumps({"replace_tie_break": "none"}),
        })
        for loss in ("lower", "pc_upper", "upper")
    },
}
# The arc-eager family (projective; pseudo-projective training by default).
SYSTEMS.update({
    name: ("covington.cfg", {"components.nonmono_parser.system": name})
    for name in ("arc_eager", "arc_eager_nm2013", "arc_eager_tree", "arc_eager_unshift")
})
# arc_eager on its gold sequence, without exploration: what the dynamic
# oracle is worth in this family (the swap systems have only static oracles).
SYSTEMS["arc_eager-static"] = ("covington.cfg", {"components.nonmono_parser.system": "arc_eager",
                                                 "components.nonmono_parser.oracle": "static"})
# The swap systems (non-projective, monotonic) with their oracles.
SYSTEMS.update({
    "swap_lazy": ("covington.cfg", {"components.nonmono_parser.system": "swap_lazy",
                                    "components.nonmono_parser.oracle": "static"}),
    "swap_stay_eager": ("covington.cfg", {"components.nonmono_parser.system": "swap_stay_eager",
                                          "components.nonmono_parser.oracle": "nonstatic"}),
    "swap_stay_eager-static": ("covington.cfg", {
        "components.nonmono_parser.system": "swap_stay_eager",
        "components.nonmono_parser.oracle": "static"}),
    # Ours: error exploration on approximate costs (not in the paper).
    "swap_stay_eager-dynamic": ("covington.cfg", {
        "components.nonmono_parser.system": "swap_stay_eager",
        "components.nonmono_parser.oracle": "dynamic"}),
    # Exploration halved: half the training states follow the oracle (its
    # costs ignore word order, so they are least reliable far off the gold path).
    "swap_stay_eager-dynamic+follow50": ("covington.cfg", {
        "components.nonmono_parser.system": "swap_stay_eager",
        "components.nonmono_parser.oracle": "dynamic",
        "components.nonmono_parser.follow_oracle_prob": "0.5"}),
    # The 13-slot context (system option context="wide").
    "swap_stay_eager-dynamic+wide": ("covington.cfg", {
        "components.nonmono_parser.system": "swap_stay_eager",
        "components.nonmono_parser.oracle": "dynamic",
        "components.nonmono_parser.system_options": json.dumps({"context": "wide"})}),
})
# The other Covington training targets of the scan (the defaults are
# tie_break "weighted" with no_arc_weight 0.9 for covington, 0.75 for
# covington_nm): "<system>+<variant>", where "+weighted25" is tie_break
# "weighted" with no_arc_weight 0.25.
TIE_BREAK_VARIANTS = {
    "none": {"tie_break": "none"},
    "shift": {"tie_break": "shift"},
    "shift_if_headed": {"tie_break": "shift_if_headed"},
    "weighted25": {"tie_break": "weighted", "no_arc_weight": 0.25},
    "weighted75": {"tie_break": "weighted", "no_arc_weight": 0.75},
    "weighted90": {"tie_break": "weighted", "no_arc_weight": 0.9},
    "weighted95": {"tie_break": "weighted", "no_arc_weight": 0.95},
    # Training follows No-Arc at the tie 3 times in 4 (covington's default).
    "scan75": {"tie_break": "weighted", "scan_explore_prob": 0.75},
    # ... replacing only Shift (covington_nm's default rule; covington's is "any").
    "scan75shift": {"tie_break": "weighted", "scan_explore_prob": 0.75,
                    "scan_explore_replaces": "shift"},
    # ... at every tie: training visits every state of the full scan.
    "scan100": {"tie_break": "weighted", "scan_explore_prob": 1.0},
}
# covington_nm only: "+monotonic" is replace_tie_break "monotonic", "+replace50"
# ("+replace75") replace_tie_break "weighted" with replace_weight 0.5 (0.75).
REPLACE_VARIANTS = {"monotonic": {"replace_tie_break": "monotonic"},
                    "replace50": {"replace_tie_break": "weighted", "replace_weight": 0.5},
                    "replace75": {"replace_tie_break": "weighted", "replace_weight": 0.75},
                    # the component's default replace target with scan exploration
                    "replace75+scan75": {"replace_tie_break": "weighted", "replace_weight": 0.75,
                                         "scan_explore_prob": 0.75}}
SYSTEMS.update({
    f"{name}+{variant}": (config, {**overrides, "components.nonmono_parser.system_options": json.dumps(
        {**json.loads(overrides.get("components.nonmono_parser.system_options", "{}")), **options})})
    for name, (config, overrides) in list(SYSTEMS.items())
    if name.startswith("covington") and name != "covington-static"
    for variant, options in {**TIE_BREAK_VARIANTS,
                             **(REPLACE_VARIANTS if name.startswith("covington_nm") else {})
                             }.items()
})
UDPIPE = "udpipe"
SPLITS = ("train", "dev", "test")
STEPS = ("convert", "train", "evaluate", "speed", "compare", "all", "oracle-bounds", "arc-moves")
PIPELINE_STEPS = ("convert", "train", "evaluate", "speed", "compare")   # what "all" runs


def log(message: str) -> None:
    print(message, flush=True)


def add_arguments(p: argparse.ArgumentParser, treebank_selection: bool = True) -> None:
    if treebank_selection:
        p.add_argument("--ud-dir", type=Path, default=Path("assets"),
                       help="Folder with one folder per treebank")
        p.add_argument("--treebanks", default="sample",
                       help="Comma-separated treebank folders of --ud-dir")
    p.add_argument("--systems", default="spacy_parser,covington-static,covington-dynamic",
                   help=f"Comma-separated, from: {', '.join(list(SYSTEMS) + [UDPIPE])}; "
                   "the first is the speed reference")
    p.add_argument("--root", type=Path, default=Path("." if treebank_selection else "bench"),
                   help="Where outputs go")
    p.add_argument("--configs", type=Path, default=CONFIG_DIR,
                   help="Folder with covington.cfg and spacy_parser.cfg")
    p.add_argument("--max-steps", type=int, default=3000, help="spacy train: training.max_steps")
    p.add_argument("--eval-frequency", type=int, default=300,
                   help="spacy train: training.eval_frequency (dev evaluations that choose "
                   "model-best)")
    p.add_argument("--patience", type=int, default=1500, help="spacy train: training.patience")
    p.add_argument("--seeds", default="0",
                   help="Comma-separated seeds (spacy train: system.seed); every system is "
                   "trained, evaluated and timed once per seed")
    p.add_argument("--gpu-id", type=int, default=-1, help="GPU for training (-1: CPU)")
    p.add_argument("--udpipe-iterations", type=int, default=10,
                   help="Training iterations of the udpipe system")
    p.add_argument("--speed-runs", type=int, default=5,
                   help="Timed runs per system in the speed step (median and best reported)")
    p.add_argument("--batch-sizes", default="1000,64",
                   help="speed: nlp.pipe batch sizes timed; the comparison reports the first")
    p.add_argument("--bound-transitions", type=int, default=100000,
                   help="oracle-bounds: training transitions to analyse per treebank")
    p.add_argument("--max-nodes", type=int, default=100000,
                   help="oracle-bounds: branch-and-bound budget per configuration")
    p.add_argument("--force", action="store_true", help="Redo steps whose outputs exist")
    p.add_argument("--skip-scored", action="store_true",
                   help="train: leave out runs that already have scores in metrics/ (for "
                   "example copied from docs/results/*/runs/ of an earlier session), so that "
                   "only new runs are trained; their models are then missing for the speed step")


def add_parser(commands) -> None:
    p = commands.add_parser("workflow", help="Run a step of the benchmark workflow "
                            "(convert, train, evaluate, speed, compare, all; and the "
                            "covington_nm analyses oracle-bounds, arc-moves)",
                            description=__doc__,
                            formatter_class=RawHelpFormatter)
    p.add_argument("step", choices=STEPS, help="Step to run; \"all\" runs " +
                   ", ".join(PIPELINE_STEPS))
    add_arguments(p)
    p.set_defaults(run=run)


class Workflow:
    def __init__(self, args):
        self.args = args
        self.treebanks = [t.strip() for t in args.treebanks.split(",") if t.strip()]
        self.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
        unknown = [s for s in self.systems if s not in SYSTEMS and s != UDPIPE]
        if unknown:
            raise InputError(f"unknown system(s) {unknown}; known: "
                             f"{', '.join(list(SYSTEMS) + [UDPIPE])}")
        try:
            self.seeds = [int(k) for k in str(args.seeds).split(",") if k.strip()]
        except ValueError:
            raise InputError(f"--seeds takes comma-separated integers, not {args.seeds!r}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise InputError(f"--seeds needs distinct seeds, got {args.seeds!r}")
        for tb in self.treebanks:
            self.conllu(tb, "train")  # fail early on a missing treebank

    def runs(self):
        """(system, seed, run name) of every run, system by system."""
        return [(system, seed, run_name(system, seed))
                for system in self.systems for seed in self.seeds]

    # -- paths ------------------------------------------------------------------

    def conllu(self, treebank: str, split: str) -> Path:
        folder = self.args.ud_dir / treebank
        found = sorted(folder.glob(f"*-{split}.conllu"))
        if len(found) != 1:
            raise InputError(f"expected one *-{split}.conllu in {folder}, found {len(found)}")
        return found[0]

    def corpus(self, treebank: str, split: str) -> Path:
        return self.args.root / "corpus" / treebank / f"{split}.spacy"

    def model(self, treebank: str, run: str) -> Path:
        folder = self.args.root / "training" / treebank / run
        return folder / ("model.udpipe" if is_udpipe(run) else "model-best")

    def metrics(self, treebank: str, name: str) -> Path:
        return self.args.root / "metrics" / treebank / name

    def todo(self, output: Path) -> bool:
        return self.args.force or not output.exists()

    def load(self, treebank: str, run: str):
        from ..evaluation.udpipe import UDPipeParser

        path = self.model(treebank, run)
        if not path.exists():
            raise InputError(f"no trained model at {path}: run the train step first")
        return UDPipeParser(path) if is_udpipe(run) else load_pipeline(path)

    # -- steps ------------------------------------------------------------------

    def convert(self) -> None:
        from spacy.tokens import DocBin
        from spacy.training.converters import conllu_to_docs

        for tb in self.treebanks:
            for split in SPLITS:
                target = self.corpus(tb, split)
                if not self.todo(target):
                    continue
                source = self.conllu(tb, split)
                # Training docs group 10 sentences; dev and test: one per doc.
                docs = conllu_to_docs(source.read_text(encoding="utf8"),
                                      n_sents=10 if split == "train" else 1, no_print=True)
                target.parent.mkdir(parents=True, exist_ok=True)
                DocBin(docs=list(docs), store_user_data=False).to_disk(target)
                log(f"Converted {source} -> {target}")

    def train(self) -> None:
        from ..evaluation.udpipe import train_udpipe

        for tb in self.treebanks:
            for system, seed, run in self.runs():
                model = self.model(tb, run)
                if not self.todo(model):
                    log(f"[{tb}] {run}: trained model exists ({model})")
                    continue
                scores = self.metrics(tb, f"{run}.json")
                if self.args.skip_scored and scores.exists():
                    log(f"[{tb}] {run}: scored already ({scores}); not trained (--skip-scored)")
                    continue
                log(f"\n=== [{tb}] training {system}, seed {seed}")
                if system == UDPIPE:
                    train_udpipe(self.conllu(tb, "train"), self.conllu(tb, "dev"),
                                 model.parent, iterations=self.args.udpipe_iterations)
                    continue
                if not self.corpus(tb, "train").exists():
                    raise InputError(f"no converted corpus for {tb}: run the convert step first")
                config, overrides = SYSTEMS[system]
                a = self.args
                cmd = [sys.executable, "-m", "spacy", "train", str(a.configs / config),
                       "--output", str(model.parent),
                       "--paths.train", str(self.corpus(tb, "train")),
                       "--paths.dev", str(self.corpus(tb, "dev")),
                       "--training.max_steps", str(a.max_steps),
                       "--training.eval_frequency", str(a.eval_frequency),
                       "--training.patience", str(a.patience),
                       "--system.seed", str(seed), "--gpu-id", str(a.gpu_id)]
                for key, value in overrides.items():
                    cmd += [f"--{key}", value]
                log(" ".join(cmd))
                subprocess.run(cmd, check=True)

    def evaluate(self) -> None:
        from ..evaluation import evaluate_trees, read_gold, write_conllu
        from ..evaluation.conllu_eval import gold_tree, parse_sentences

        for tb in self.treebanks:
            for system, seed, run in self.runs():
                target = self.metrics(tb, f"{run}.json")
                if not self.todo(target):
                    continue
                log(f"[{tb}] evaluating {run}")
                target.parent.mkdir(parents=True, exist_ok=True)
                parser = self.load(tb, run)
                scores = {}
                for split in ("dev", "test"):
                    sentences, _ = read_gold(self.conllu(tb, split))
                    before = parse_counts(parser)
                    if system == UDPIPE:
                        trees = parser.parse(sentences)
                    else:
                        trees = parse_sentences(parser, sentences)
                    write_conllu(sentences, trees, self.metrics(tb, f"{run}.{split}.conllu"))
                    evaluation = evaluate_trees([gold_tree(s) for s in sentences], trees)
                    scores[split] = evaluation.to_dict()
                    after = parse_counts(parser)
                    if after is not None and after["words"] > before["words"]:
                        scores[split]["transitions_per_word"] = (
                            (after["transitions"] - before["transitions"])
                            / (after["words"] - before["words"]))
                    log(f"  {split}: UAS {evaluation.words.uas:.2f} LAS {evaluation.words.las:.2f}")
                target.write_text(json.dumps(scores, indent=2))

    def speed(self) -> None:
        from ..evaluation import read_conllu
        from ..evaluation.speed import SpacyTimer, measure_speed_by_batch_size

        for tb in self.treebanks:
            target = self.metrics(tb, "speed.json")
            if not self.todo(target):
                continue
            log(f"[{tb}] measuring speed on the test set, one thread")
            timers = {}
            for system, seed, run in self.runs():
                if not self.model(tb, run).exists():
                    log(f"[{tb}] {run}: no trained model ({self.model(tb, run)}); left out")
                    continue
                parser = self.load(tb, run)
                timers[run] = parser if system == UDPIPE else SpacyTimer(parser)
            if not timers:
                continue
            speed = measure_speed_by_batch_size(
                timers, read_conllu(self.conllu(tb, "test")),
                parse_batch_sizes(self.args.batch_sizes), n_runs=self.args.speed_runs,
                progress=log)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(speed, indent=2))

    def compare(self) -> None:
        from ..evaluation.compare import comparison_table, summary_json, write_plots

        results, static = {}, {}
        for tb in self.treebanks:
            speed_path = self.metrics(tb, "speed.json")
            speed = json.loads(speed_path.read_text()) if speed_path.exists() else {}
            for system, seed, run in self.runs():
                path = self.metrics(tb, f"{run}.json")
                if not path.exists():
                    log(f"[{tb}] {run}: no scores yet ({path}); left out")
                    continue
                scores = json.loads(path.read_text())
                results.setdefault((tb, system), []).append(dict(
                    scores, seed=seed, **{
                        key: speed.get(key, {}).get(run) for key in
                        ("words_per_second", "best_words_per_second", "transitions_per_word")}))
                # Transitions per word of the test parse (the evaluate step
                # records it; older scores only have the speed step's).
                if scores["test"].get("transitions_per_word") is not None:
                    results[(tb, system)][-1]["transitions_per_word"] = \
                        scores["test"]["transitions_per_word"]
            by_system = self.static_oracle(tb)
            static[tb] = {s: by_system[system_name(s)] for s in self.systems
                          if system_name(s) in by_system}
        out = self.args.root / "results"
        out.mkdir(parents=True, exist_ok=True)
        table = comparison_table(results, self.treebanks, self.systems, static)
        (out / "comparison.md").write_text(table + "\n")
        (out / "comparison.json").write_text(json.dumps(
            summary_json(results, self.treebanks, self.systems, static), indent=2))
        log("\n" + table)
        for path in write_plots(results, self.treebanks, self.systems, out):
            log(f"Wrote {path}")
        log(f"Wrote {out / 'comparison.md'}")


    def static_oracle(self, treebank: str) -> Dict[str, float]:
        """Transitions per word of the static oracle of each of our transition
        systems on the treebank's gold test trees: the reference for how much
        decoding work a trained model does (cached in
        metrics/<treebank>/static_oracle.json)."""
        from ..evaluation import read_gold
        from ..evaluation.conllu_eval import gold_tree
        from ..evaluation.oracle_analysis import static_oracle_transitions_per_word

        target = self.metrics(treebank, "static_oracle.json")
        cached = json.loads(target.read_text()) if target.exists() and not self.args.force else {}
        missing = sorted({system_name(s) for s in self.systems} - {None} - set(cached))
        if missing:
            sentences, _ = read_gold(self.conllu(treebank, "test"))
            trees = [gold_tree(s) for s in sentences]
            cached.update({name: static_oracle_transitions_per_word(name, trees)
                           for name in missing})
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(cached, indent=2))
        return cached

    def oracle_bounds(self) -> None:
        """Paper Table 1: bound tightness along covington_nm (upper) training."""
        from ..evaluation.oracle_analysis import bound_tightness
        from .oracle import bounds_table, training_overrides

        results = {}
        for tb in self.treebanks:
            target = self.metrics(tb, "oracle_bounds.json")
            if self.todo(target):
                log(f"[{tb}] loss bounds along {self.args.bound_transitions} training transitions")
                result = bound_tightness(
                    self.args.configs / "covington.cfg",
                    training_overrides(self.corpus(tb, "train"), "upper", self.seeds[0]),
                    self.args.bound_transitions, max_nodes=self.args.max_nodes, log=log)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(result, indent=2))
            results[tb] = json.loads(target.read_text())
        self._write_result("oracle_bounds.md", bounds_table(results))

    def arc_moves(self) -> None:
        """Paper section 6.3: what the covington_nm parsers' arc moves do on dev."""
        from ..evaluation.oracle_analysis import arc_move_effects
        from .oracle import arc_move_examples, arc_moves_table

        results = {}
        for tb in self.treebanks:
            for system, seed, run in self.runs():
                if not system.startswith("covington_nm"):
                    continue
                target = self.metrics(tb, f"{run}.arc_moves.json")
                if self.todo(target):
                    nlp = self.load(tb, run)
                    examples = arc_move_examples(nlp, self.corpus(tb, "dev"))
                    target.write_text(json.dumps(arc_move_effects(nlp, examples), indent=2))
                results[(tb, run)] = json.loads(target.read_text())
        self._write_result("arc_moves.md", arc_moves_table(results))

    def _write_result(self, name: str, table: str) -> None:
        out = self.args.root / "results"
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(table + "\n")
        log("\n" + table)
        log(f"Wrote {out / name}")


def run_name(system: str, seed: int) -> str:
    """The name of one training run: the system's for seed 0 (the layout of
    single-seed runs), "<system>.seed<k>" for seed k."""
    return system if seed == 0 else f"{system}.seed{seed}"


def system_name(system: str) -> Optional[str]:
    """The transition system a workflow system trains (None: not ours)."""
    if system not in SYSTEMS or system == "spacy_parser":
        return None
    return SYSTEMS[system][1].get("components.nonmono_parser.system", "covington")


def parse_counts(parser) -> Optional[Dict[str, int]]:
    """A copy of the nonmono_parser's running transition and word counts
    (None for other parsers)."""
    for _, pipe in getattr(parser, "pipeline", []):
        if hasattr(pipe, "parse_counts"):
            return dict(pipe.parse_counts)
    return None


def is_udpipe(run: str) -> bool:
    return run.partition(".seed")[0] == UDPIPE


def run(args) -> int:
    workflow = Workflow(args)
    steps = PIPELINE_STEPS if args.step == "all" else (args.step,)
    for step in steps:
        getattr(workflow, step.replace("-", "_"))()
    return 0
