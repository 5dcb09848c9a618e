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
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from spacy_nonmono.cli.common import (InputError, RawHelpFormatter, load_parser_pipeline,
                                      parse_batch_sizes)
from spacy_nonmono.configs import CONFIG_DIR
from spacy_nonmono.pipeline.senter import DEFAULT_MAX_LENGTH

from .system_names import (MODEL_VARIANTS, PRETRAIN, UDPIPE, VARIANTS, VECTORS, SystemSpec,
                           is_udpipe, member_run, parse_system, run_name, system_name,
                           training_config)
from .text_cost import senter_bound

SPLITS = ("train", "dev", "test")
STEPS = ("convert", "train", "evaluate", "evaluate-raw", "speed", "compare", "all",
         "oracle-bounds", "arc-moves")
PIPELINE_STEPS = ("convert", "train", "evaluate", "speed", "compare")   # what "all" runs


def log(message: str) -> None:
    print(message, flush=True)


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


class Workflow:
    def __init__(self, args):
        self.args = args
        self.treebanks = [t.strip() for t in args.treebanks.split(",") if t.strip()]
        self.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
        for system in self.systems:
            parse_system(system)   # fail early on a wrong name
        try:
            self.seeds = [int(k) for k in str(args.seeds).split(",") if k.strip()]
        except ValueError:
            raise InputError(f"--seeds takes comma-separated integers, not {args.seeds!r}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise InputError(f"--seeds needs distinct seeds, got {args.seeds!r}")
        for tb in self.treebanks:
            self.conllu(tb, "train")  # fail early on a missing treebank
            if getattr(args, "step", None) in ("train", "all") and \
                    any(VECTORS in parse_system(s).model for s in self.systems):
                self.vectors(tb)      # and on missing vectors, where they are read
            if getattr(args, "step", None) in ("train", "all") and \
                    any(PRETRAIN in parse_system(s).model for s in self.systems):
                self.raw_text(tb)     # and on missing raw text

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

    def vectors(self, treebank: str, lang: str = "xx") -> Path:
        """The static vectors the +vectors systems of the treebank read, in
        pipelines of language `lang` (the workflow's: "xx", any language)."""
        if self.args.vectors_dir is None:
            raise InputError("the +vectors systems read static vectors: give --vectors-dir")
        from spacy_nonmono.configs import vectors_problem

        path = self.args.vectors_dir / treebank
        problem = vectors_problem(path, lang)
        if problem:
            raise InputError(f"static vectors for {treebank}: {problem} (docs/vectors.md)")
        return path

    def raw_text(self, treebank: str) -> Path:
        """The raw text the +pretrain systems of the treebank pretrain on."""
        if self.args.raw_text_dir is None:
            raise InputError("the +pretrain systems pretrain on raw text: give --raw-text-dir")
        path = self.args.raw_text_dir / f"{treebank}.txt"
        if not path.is_file():
            raise InputError(f"no raw text for {treebank}: {path} (one tokenized sentence a "
                             "line, the lab's raw-text output; docs/vectors.md)")
        return path

    def pretrain(self, treebank: str, config: Path, spec: "SystemSpec") -> Path:
        """The `spacy pretrain` weights of the config's encoder on the
        treebank's raw text: trained here unless they exist."""
        from spacy.util import load_config

        settings = load_config(config, interpolate=False)
        encoder = json.dumps([settings["components"]["tok2vec"], settings["pretraining"],
                              self.args.pretrain_words], sort_keys=True)
        folder = self.args.root / "pretraining" / treebank / \
            f"encoder-{hashlib.sha1(encoder.encode()).hexdigest()[:8]}"
        weights = folder / "model-last.bin"
        if not self.todo(weights):
            return weights
        sample = folder / "raw_text.txt"
        folder.mkdir(parents=True, exist_ok=True)
        n_words = sample_sentences(self.raw_text(treebank), sample, self.args.pretrain_words)
        log(f"[{treebank}] pretraining the encoder of {config.name} on {n_words:,} words "
            f"of {self.raw_text(treebank)}")
        cmd = [sys.executable, "-m", "spacy", "pretrain", str(config), str(folder),
               "--paths.raw_text", str(sample), "--paths.train", str(self.corpus(treebank, "train"))]
        if VECTORS in spec.model:
            cmd += ["--paths.vectors", str(self.vectors(treebank, settings["nlp"]["lang"]))]
        log(" ".join(cmd))
        start = time.perf_counter()
        subprocess.run(cmd, check=True, env=one_thread_env())
        (folder / "pretrain_seconds.json").write_text(
            json.dumps({"seconds": round(time.perf_counter() - start, 1), "words": n_words}) + "\n")
        return weights

    def language(self, treebank: str) -> Optional[str]:
        """The treebank's language where spaCy has it (the code its CoNLL-U
        files start with: hu-ud-test.conllu, en_ewt-ud-test.conllu), else None."""
        from spacy_nonmono.pipeline.tokenizers import file_language

        lang = file_language(self.conllu(treebank, "test"))
        return None if lang == "xx" else lang

    def metrics(self, treebank: str, name: str) -> Path:
        return self.args.root / "metrics" / treebank / name

    def todo(self, output: Path) -> bool:
        return self.args.force or not output.exists()

    def load(self, treebank: str, run: str):
        from spacy_nonmono.evaluation.udpipe import UDPipeParser

        path = self.model(treebank, run)
        if not path.exists():
            raise InputError(f"no trained model at {path}: run the train step first")
        return UDPipeParser(path) if is_udpipe(run) else load_parser_pipeline(path)

    # -- steps ------------------------------------------------------------------

    def convert(self) -> None:
        from spacy.tokens import DocBin
        from spacy.training.converters import conllu_to_docs

        from spacy_nonmono.conllu_io import document_blocks

        for tb in self.treebanks:
            for split in SPLITS:
                target = self.corpus(tb, split)
                if not self.todo(target):
                    continue
                source = self.conllu(tb, split)
                # Training docs: 10 consecutive sentences of a document (# newdoc),
                # so that a senter learns boundaries in context; dev and test:
                # one sentence a doc.
                docs = [doc for text in document_blocks(source.read_text(encoding="utf8"))
                        for doc in conllu_to_docs(text, n_sents=10 if split == "train" else 1,
                                                  no_print=True)]
                target.parent.mkdir(parents=True, exist_ok=True)
                DocBin(docs=list(docs), store_user_data=False).to_disk(target)
                log(f"Converted {source} -> {target}")

    def train(self) -> None:
        from benchmarks.udpipe import train_udpipe

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
                spec = parse_system(system)
                if spec.members:
                    self.save_ensemble(tb, spec.members, seed, model, spec.structure)
                    continue
                if system == UDPIPE:
                    train_udpipe(self.conllu(tb, "train"), self.conllu(tb, "dev"),
                                 model.parent, iterations=self.args.udpipe_iterations)
                    continue
                if not self.corpus(tb, "train").exists():
                    raise InputError(f"no converted corpus for {tb}: run the convert step first")
                config, overrides = training_config(system, self.args.root / "configs")
                if "full" in spec.model and not has_xpos(self.conllu(tb, "train")):
                    config = str(self.without_tagger(tb, Path(config)))
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
                if VECTORS in spec.model:
                    lang = config_lang(a.configs / config)
                    cmd += ["--paths.vectors", str(self.vectors(tb, lang))]
                if PRETRAIN in spec.model:
                    cmd += ["--paths.init_tok2vec", str(self.pretrain(tb, Path(config), spec))]
                log(" ".join(cmd))
                start = time.perf_counter()
                run_logged(cmd, model.parent / "train.log")
                # Wall-clock training time (recorded with the scores by
                # `evaluate`; only comparable between runs trained side by side).
                (model.parent / "train_seconds.json").write_text(
                    json.dumps({"seconds": round(time.perf_counter() - start, 1)}) + "\n")
                self.add_treebank_tokenizer(tb, model)

    def add_treebank_tokenizer(self, treebank: str, model: Path) -> None:
        """Save the trained pipeline with the tokenizer learned from the
        treebank's training file (use_treebank_tokenizer), the one it reads
        raw text with: `parse` then gives what `evaluate-raw` scores."""
        from spacy_nonmono.pipeline.tokenizers import use_treebank_tokenizer

        nlp = load_parser_pipeline(model)
        use_treebank_tokenizer(nlp, self.conllu(treebank, "train"),
                               self.language(treebank) or "xx")
        nlp.to_disk(model)
        log(f"[{treebank}] {model}: saved with the tokenizer learned from "
            f"{self.conllu(treebank, 'train')}")

    def without_tagger(self, treebank: str, config: Path) -> Path:
        """The full pipeline's config without its XPOS tagger, for a
        treebank without XPOS (configs.without_tagger), in configs/<treebank>/."""
        from spacy.util import load_config

        from spacy_nonmono.configs import config_text, without_tagger

        path = self.args.root / "configs" / treebank / config.name
        path.parent.mkdir(parents=True, exist_ok=True)
        settings = without_tagger(load_config(config, interpolate=False))
        path.write_text(config_text(settings, f"{config.stem} for {treebank} (no XPOS): "
                                    "made by the workflow"), encoding="utf8")
        return path.resolve()

    def save_ensemble(self, treebank: str, members: Sequence[str], seed: int,
                      model: Path, structure: str = "mst") -> None:
        """Save the ensemble of the members' trained runs of this seed as
        `model`, reparsing with `structure`."""
        from spacy_nonmono.pipeline.ensemble import build_ensemble

        paths = [self.model(treebank, member_run(member, seed)) for member in members]
        missing = [str(path) for path in paths if not path.exists()]
        if missing:
            raise InputError(f"the ensemble's members are not trained: {', '.join(missing)}; "
                             "train them first (with the same seeds)")
        model.parent.mkdir(parents=True, exist_ok=True)
        build_ensemble([str(path) for path in paths], structure=structure).to_disk(model)
        log(f"[{treebank}] saved the ensemble of {', '.join(map(str, paths))} to {model}")
        self.add_treebank_tokenizer(treebank, model)

    def evaluate(self) -> None:
        from spacy_nonmono.conllu_io import filled_sentence, gold_tree, write_conllu
        from spacy_nonmono.evaluation import evaluate_sentences, evaluate_trees, read_gold

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
                    # The prediction files hold predictions only ("_" elsewhere).
                    predictions = self.metrics(tb, f"{run}.{split}.conllu")
                    if system == UDPIPE:
                        trees = parser.parse(sentences)
                        evaluation = evaluate_trees([gold_tree(s) for s in sentences], trees)
                        write_conllu(predictions, (
                            filled_sentence(s, [{"head": h, "deprel": d} for h, d in zip(*tree)],
                                            keep_input=False)
                            for s, tree in zip(sentences, trees)))
                    else:
                        evaluation = evaluate_sentences(parser, sentences, output=predictions)
                    scores[split] = evaluation.to_dict()
                    after = parse_counts(parser)
                    if after is not None and after["words"] > before["words"]:
                        scores[split]["transitions_per_word"] = (
                            (after["transitions"] - before["transitions"])
                            / (after["words"] - before["words"]))
                    upos_note = "".join(f" {name} {counts.uas:.2f}" for name, counts in (
                        ("UPOS", evaluation.upos), ("XPOS", evaluation.xpos),
                        ("UFeats", evaluation.ufeats)) if counts.total)
                    log(f"  {split}: UAS {evaluation.words.uas:.2f} LAS {evaluation.words.las:.2f}{upos_note}")
                # The training's wall-clock time, kept with the scores (the
                # compact record of a run; the model folder is not kept).
                timing = self.model(tb, run).parent / "train_seconds.json"
                if timing.exists():
                    scores["train_seconds"] = json.loads(timing.read_text())["seconds"]
                # And the dev scores of each check: whether dev still rose at the end.
                training_log = self.model(tb, run).parent / "train.log"
                if training_log.exists():
                    scores["dev_curve"] = dev_curve(training_log.read_text(encoding="utf8"))
                target.write_text(json.dumps(scores, indent=2))

    def evaluate_raw(self) -> None:
        """The test file's raw text through each trained pipeline (tokenizer,
        senter, tags, parser; the tokenizer --raw-tokenizer says, by default
        learned from the treebank's training file), scored as CoNLL 2018 does:
        metrics/<treebank>/<run>.raw.json (F1 of tokens, sentences, words,
        tags, UAS, LAS, ... and words/s)."""
        from spacy_nonmono.evaluation import evaluate_pipeline_raw_text
        from spacy_nonmono.pipeline.senter import bound_sentences
        from spacy_nonmono.pipeline.tokenizers import (TreebankTokenizer, use_language_tokenizer,
                                                       use_treebank_tokenizer)

        for tb in self.treebanks:
            for system, seed, run in self.runs():
                target = self.metrics(tb, f"{run}.raw.json")
                if not self.todo(target) or system == UDPIPE:
                    continue
                if not self.model(tb, run).exists():
                    log(f"[{tb}] {run}: no trained model, left out")
                    continue
                nlp = self.load(tb, run)
                tokenizer = nlp.lang
                lang = self.language(tb)
                # Runs trained before the train step saved the treebank's
                # tokenizer get it here, and are saved with it (below).
                learned = isinstance(nlp.tokenizer, TreebankTokenizer)
                if self.args.raw_tokenizer == "treebank":
                    if not learned:
                        use_treebank_tokenizer(nlp, self.conllu(tb, "train"), lang or "xx")
                    tokenizer = f"{lang or 'xx'} + {tb} train"
                elif self.args.raw_tokenizer == "language" and lang not in (None, nlp.lang):
                    use_language_tokenizer(nlp, lang)
                    tokenizer = lang
                bound = None
                # An ensemble's sentences are its first member's (its senter's).
                members = [pipe.members for name, pipe in nlp.pipeline
                           if name == "nonmono_ensemble"]
                for pipeline in [nlp] + [m for group in members for m in group]:
                    if "senter" in pipeline.pipe_names:
                        bound = self.args.senter_max_length
                        bound_sentences(pipeline, bound)
                log(f"[{tb}] {run}: raw text ({tokenizer} tokenizer, sentences at most "
                    f"{bound or 'any number of'} words)")
                target.parent.mkdir(parents=True, exist_ok=True)
                evaluation, words_per_second = evaluate_pipeline_raw_text(
                    nlp, self.conllu(tb, "test"),
                    output=self.metrics(tb, f"{run}.raw.test.conllu"))
                scores = evaluation.to_dict()
                if self.args.raw_tokenizer == "treebank" and not learned \
                        and self.args.senter_max_length == DEFAULT_MAX_LENGTH:
                    # What was scored is what `parse` will run.
                    nlp.to_disk(self.model(tb, run))
                    log(f"  saved {self.model(tb, run)} with the tokenizer it was scored with")
                # Scored all the same (a `_` matches a `_`), but no measurement.
                missing = [] if has_xpos(self.conllu(tb, "test")) else ["XPOS"]
                target.write_text(json.dumps({"test": scores, "tokenizer": tokenizer,
                                              "not_applicable": missing,
                                              "senter_max_length": bound,
                                              "words_per_second": round(words_per_second)},
                                             indent=2) + "\n")
                log("  test: " + ", ".join(f"{name} {scores[name]['f1']:.2f}" for name in
                                           ("Tokens", "Sentences", "UPOS", "UAS", "LAS")))

    def speed(self) -> None:
        from spacy_nonmono.evaluation import read_conllu
        from spacy_nonmono.evaluation.speed import SpacyTimer, blas_note, measure_speed_by_batch_size

        for tb in self.treebanks:
            target = self.metrics(tb, "speed.json")
            if not self.todo(target):
                continue
            log(f"[{tb}] measuring speed on the test set; {blas_note()}")
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
        from benchmarks.compare import (comparison_table, raw_text_table, sentence_length_table,
                                        summary_json, tagging_table, dev_curve_table,
                                        write_plots)

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
                          if system_name(s) in by_system
                          and parse_system(s).settings.get("decoding") != "global"}
        out = self.args.root / "results"
        out.mkdir(parents=True, exist_ok=True)
        table = comparison_table(results, self.treebanks, self.systems, static)
        (out / "comparison.md").write_text(table + "\n")
        (out / "comparison.json").write_text(json.dumps(
            summary_json(results, self.treebanks, self.systems, static), indent=2))
        log("\n" + table)
        write_table(out / "by_sentence_length.md",
                    sentence_length_table(results, self.treebanks, self.systems))
        write_table(out / "tagging.md", tagging_table(results, self.treebanks, self.systems))
        write_table(out / "dev_curves.md", dev_curve_table(results, self.treebanks, self.systems))
        raw = {}
        for tb in self.treebanks:
            for system, seed, run in self.runs():
                path = self.metrics(tb, f"{run}.raw.json")
                if path.exists():
                    raw.setdefault((tb, system), []).append(
                        dict(json.loads(path.read_text()), seed=seed))
        write_table(out / "raw_text.md", raw_text_table(raw, self.treebanks, self.systems))
        for path in write_plots(results, self.treebanks, self.systems, out):
            log(f"Wrote {path}")
        log(f"Wrote {out / 'comparison.md'}")


    def static_oracle(self, treebank: str) -> Dict[str, float]:
        """Transitions per word of the static oracle of each of our transition
        systems on the treebank's gold test trees: the reference for how much
        decoding work a trained model does (cached in
        metrics/<treebank>/static_oracle.json)."""
        from spacy_nonmono.evaluation import read_gold
        from spacy_nonmono.conllu_io import gold_tree
        from benchmarks.oracle_analysis import static_oracle_transitions_per_word

        target = self.metrics(treebank, "static_oracle.json")
        cached = json.loads(target.read_text()) if target.exists() and not self.args.force else {}
        greedy = [s for s in self.systems if parse_system(s).settings.get("decoding") != "global"]
        missing = sorted({system_name(s) for s in greedy} - {None} - set(cached))
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
        from benchmarks.oracle_analysis import bound_tightness
        from benchmarks.oracle import bounds_table, training_overrides

        results = {}
        for tb in self.treebanks:
            target = self.metrics(tb, "oracle_bounds.json")
            if self.todo(target):
                log(f"[{tb}] loss bounds along {self.args.bound_transitions} training transitions")
                result = bound_tightness(
                    self.args.configs / "nonmono_parser.cfg",
                    training_overrides(self.corpus(tb, "train"), "upper", self.seeds[0]),
                    self.args.bound_transitions, max_nodes=self.args.max_nodes, log=log)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(result, indent=2))
            results[tb] = json.loads(target.read_text())
        self._write_result("oracle_bounds.md", bounds_table(results))

    def arc_moves(self) -> None:
        """Paper section 6.3: what the covington_nm parsers' arc moves do on dev."""
        from benchmarks.oracle_analysis import arc_move_effects
        from benchmarks.oracle import arc_move_examples, arc_moves_table

        results = {}
        for tb in self.treebanks:
            for system, seed, run in self.runs():
                if system_name(system) != "covington_nm":
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


def parse_counts(parser) -> Optional[Dict[str, int]]:
    """A copy of the nonmono_parser's running transition and word counts
    (None for other parsers and for decoders that make no transitions)."""
    for _, pipe in getattr(parser, "pipeline", []):
        if hasattr(pipe, "parse_counts") and pipe.decoder.model_kind == "transitions":
            return dict(pipe.parse_counts)
    return None


def write_table(path: Path, table: Optional[str]) -> None:
    """Write and print a comparison's table; None (nothing to show) removes
    an earlier comparison's table there, so none is left beside this one."""
    if table is None:
        path.unlink(missing_ok=True)
        return
    path.write_text(table + "\n")
    log("\n" + table)
    log(f"Wrote {path}")


def has_xpos(path: Path) -> bool:
    """Whether a CoNLL-U file has an XPOS column (a word whose XPOS is not `_`)."""
    with open(path, encoding="utf8") as lines:
        for line in lines:
            columns = line.split("\t")
            if len(columns) == 10 and columns[0].isdigit() and columns[4] != "_":
                return True
    return False


def config_lang(path: Path) -> str:
    """The language (nlp.lang) of a config file."""
    from spacy.util import load_config

    return load_config(path, interpolate=False)["nlp"]["lang"]


def sample_sentences(source: Path, target: Path, n_words: int) -> int:
    """Write a random sample (seeded) of the source's lines, about n_words
    words in all, to target; the words written."""
    import random

    lines = source.read_text(encoding="utf8").splitlines()
    random.Random(0).shuffle(lines)
    written = 0
    with target.open("w", encoding="utf8") as out:
        for line in lines:
            if written >= n_words:
                break
            out.write(line + "\n")
            written += len(line.split())
    return written


def run_logged(cmd: Sequence[str], path: Path) -> None:
    """Run a training command on one thread, its output shown and kept in `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf8") as kept, subprocess.Popen(
            cmd, env=one_thread_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True) as process:
        for line in process.stdout:
            sys.stdout.write(line)
            kept.write(line)
            kept.flush()
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, cmd)


def dev_curve(training_log: str) -> List[List[float]]:
    """[update, dev LAS, dev UAS] of each dev check in `spacy train`'s
    console table (the columns DEP_LAS_PUNCT and DEP_UAS_PUNCT, or spaCy's
    parser's DEP_LAS and DEP_UAS); [] where the table has neither."""
    curve, columns = [], None
    for line in training_log.splitlines():
        cells = line.split()
        if cells[:2] == ["E", "#"]:
            for las, uas in (("DEP_LAS_PUNCT", "DEP_UAS_PUNCT"), ("DEP_LAS", "DEP_UAS")):
                if las in cells and uas in cells:
                    # The scores are a row's last columns, as in the header.
                    columns = (cells.index(las) - len(cells), cells.index(uas) - len(cells))
                    break
        elif columns and len(cells) > 2 and cells[0].isdigit() and cells[1].isdigit():
            curve.append([int(cells[1]), float(cells[columns[0]]), float(cells[columns[1]])])
    return curve


def one_thread_env() -> Dict[str, str]:
    """The environment for a training run on one core: BLAS and OpenMP on
    one thread (two runs side by side would otherwise fight over the cores),
    unless the user set the thread counts."""
    from spacy_nonmono.threads import THREAD_ENV_VARS

    if any(os.environ.get(name) for name in THREAD_ENV_VARS):
        return dict(os.environ)
    return dict(os.environ, **{name: "1" for name in THREAD_ENV_VARS})


def run(args) -> int:
    workflow = Workflow(args)
    steps = PIPELINE_STEPS if args.step == "all" else (args.step,)
    for step in steps:
        getattr(workflow, step.replace("-", "_"))()
    return 0
