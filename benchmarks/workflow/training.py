"""The workflow's training steps: convert the treebanks, train every run
(spaCy's `spacy train` on one thread, UDPipe, ensembles of trained runs,
`spacy pretrain` where a system starts from pretrained weights)."""
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Sequence

from spacy_nonmono.cli.common import InputError, load_parser_pipeline

from ..system_names import PRETRAIN, UDPIPE, VECTORS, SystemSpec, member_run, parse_system, \
    training_config
from .layout import SPLITS, RunLayout, config_lang, has_xpos, log, one_thread_env, run_logged


class TrainingSteps(RunLayout):
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
