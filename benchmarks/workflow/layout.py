"""Where the workflow's runs live under --root (the layout the package's
docstring lists), the systems x seeds it runs, and what the steps share:
logging, one-thread training runs, reading a treebank's columns."""
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence

from spacy_nonmono.cli.common import InputError, load_parser_pipeline

from ..system_names import PRETRAIN, VECTORS, is_udpipe, parse_system, run_name

SPLITS = ("train", "dev", "test")


def log(message: str) -> None:
    print(message, flush=True)


class RunLayout:
    """The treebanks, systems and seeds of a workflow command, and the paths
    of their inputs and outputs."""

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

    def write_result(self, name: str, table: str) -> None:
        out = self.args.root / "results"
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(table + "\n")
        log("\n" + table)
        log(f"Wrote {out / name}")


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


def one_thread_env() -> Dict[str, str]:
    """The environment for a training run on one core: BLAS and OpenMP on
    one thread (two runs side by side would otherwise fight over the cores),
    unless the user set the thread counts."""
    from spacy_nonmono.threads import THREAD_ENV_VARS

    if any(os.environ.get(name) for name in THREAD_ENV_VARS):
        return dict(os.environ)
    return dict(os.environ, **{name: "1" for name in THREAD_ENV_VARS})
