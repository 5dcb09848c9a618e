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

A system name says what it trains: spacy_parser (spaCy's own parser), udpipe
(UDPipe 1), or <system>[-<oracle>][+<variant>]... for the nonmono_parser: any
registered transition system, one of its oracles other than its default (left
out: the default) and variants (VARIANTS) merged onto the component's
defaults, left to right. The plain system name trains the component's
defaults: covington_nm is the default component, covington_nm+replace_none+none
its full scan, covington-static the static oracle, swap_stay_eager-nonstatic
the paper's oracle. "A&B&..." is the ensemble of the runs A, B, ... of the
same seed (`nonmono_ensemble`), which the train step builds from their
models. docs/results/README.md lists the results and translates the names of
earlier notes.

A treebank is a folder of --ud-dir holding *-train/dev/test.conllu. Steps skip
work whose output exists (use --force to redo it). The scores of earlier runs
(docs/results/*/runs.json.gz; `python -m benchmarks records unpack FILE
ROOT/metrics` writes them back in the metrics/ layout) can be put in
metrics/: compare then reports them with the new runs, and `train
--skip-scored` trains only the runs that have no scores yet.
"""
import argparse
from pathlib import Path

from spacy_nonmono.configs import CONFIG_DIR
from spacy_nonmono.cli.common import RawHelpFormatter
from spacy_nonmono.pipeline.senter import DEFAULT_MAX_LENGTH

from ..system_names import MODEL_VARIANTS, VARIANTS
from ..text_cost import senter_bound
from .oracle_steps import OracleSteps
from .scoring import ScoringSteps
from .training import TrainingSteps

STEPS = ("convert", "train", "evaluate", "evaluate-raw", "speed", "compare", "all",
         "oracle-bounds", "arc-moves")
PIPELINE_STEPS = ("convert", "train", "evaluate", "speed", "compare")   # what "all" runs


def add_arguments(p: argparse.ArgumentParser, treebank_selection: bool = True) -> None:
    if treebank_selection:
        p.add_argument("--ud-dir", type=Path, default=Path("assets"),
                       help="Folder with one folder per treebank")
        p.add_argument("--treebanks", default="sample",
                       help="Comma-separated treebank folders of --ud-dir")
    p.add_argument("--systems", default="spacy_parser,covington-static,covington,covington_nm",
                   help="Comma-separated: spacy_parser, udpipe, or "
                   "<system>[-<oracle>][+<variant>]...: a transition system (covington_nm, "
                   "covington, swap_stay_eager, arc_eager, ...), one of its oracles other than "
                   "its default, and variants merged onto the component's defaults, left to "
                   f"right ({', '.join(list(VARIANTS) + list(MODEL_VARIANTS))}); the plain "
                   "system name trains the "
                   "component's defaults. The first system is the speed reference")
    p.add_argument("--root", type=Path, default=Path("." if treebank_selection else "bench"),
                   help="Where outputs go")
    p.add_argument("--configs", type=Path, default=CONFIG_DIR,
                   help="Folder with nonmono_parser.cfg and spacy_parser.cfg")
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
    p.add_argument("--vectors-dir", type=Path, default=None,
                   help="Folder with one static-vectors pipeline per treebank (made by `spacy "
                   "init vectors`, docs/vectors.md), read by the +vectors systems")
    p.add_argument("--raw-text-dir", type=Path, default=None,
                   help="Folder with one raw-text file per treebank, <treebank>.txt (one "
                   "tokenized sentence a line: the lab's raw-text output, docs/vectors.md), "
                   "which the +pretrain systems pretrain on")
    p.add_argument("--pretrain-words", type=int, default=3_000_000,
                   help="+pretrain: words of raw text (a seeded sample of sentences) in the "
                   "one pass of `spacy pretrain`")
    p.add_argument("--raw-tokenizer", choices=("treebank", "language", "pipeline"),
                   default="treebank",
                   help="evaluate-raw: a tokenizer learned from the treebank's training file "
                   "over spaCy's rules of its language (xx where spaCy has none; what the "
                   "train step saves in each pipeline, so that `parse` gives what was scored), "
                   "the rules of the treebank's language alone where spaCy has it (the "
                   "workflow's pipelines are multi-language, xx), or the pipeline's own")
    p.add_argument("--senter-max-length", type=senter_bound, default=DEFAULT_MAX_LENGTH,
                   help="evaluate-raw: no sentence longer than this many words, cut at the "
                   "senter's likeliest boundaries (bound_sentences; \"none\": the senter as "
                   "trained). Pipelines trained before nonmono_senter get it here")
    p.add_argument("--force", action="store_true", help="Redo steps whose outputs exist")
    p.add_argument("--skip-scored", action="store_true",
                   help="train: leave out runs that already have scores in metrics/ (for "
                   "example unpacked from docs/results/*/runs.json.gz with `records unpack`), so that "
                   "only new runs are trained; their models are then missing for the speed step")


def add_parser(commands) -> None:
    p = commands.add_parser("workflow", help="Run a step of the benchmark workflow "
                            "(convert, train, evaluate, evaluate-raw, speed, compare, all; and the "
                            "covington_nm analyses oracle-bounds, arc-moves)",
                            description=__doc__,
                            formatter_class=RawHelpFormatter)
    p.add_argument("step", choices=STEPS, help="Step to run; \"all\" runs " +
                   ", ".join(PIPELINE_STEPS))
    add_arguments(p)
    p.set_defaults(run=run)


class Workflow(TrainingSteps, ScoringSteps, OracleSteps):
    """Every step, each a method named as the step (evaluate-raw: evaluate_raw)."""


def run(args) -> int:
    workflow = Workflow(args)
    steps = PIPELINE_STEPS if args.step == "all" else (args.step,)
    for step in steps:
        getattr(workflow, step.replace("-", "_"))()
    return 0
