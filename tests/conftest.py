"""Shared test settings and helpers.

- hypothesis profiles: "default" (used unless HYPOTHESIS_PROFILE says
  otherwise) is deterministic; "random" draws new examples on each run. Tests
  give their example counts as ``scaled(n)``: n times SPACY_NONMONO_EXAMPLE_SCALE
  (default 1), so a deeper run is e.g.
  ``HYPOTHESIS_PROFILE=random SPACY_NONMONO_EXAMPLE_SCALE=20 pytest tests``.
- ``ud_sentences``: real UD sentences of at most 10 words from the shared
  treebanks (``../shared/data/ud`` next to the repository, or the directory in
  the SPACY_NONMONO_UD_DIR environment variable). Tests that use it skip when
  the data is absent.
- Tiers: tests marked ``slow`` (exhaustive searches on real sentences or
  large cases, clusters, whole commands that train) are left out of the
  default run (``addopts`` in pyproject.toml); ``-m slow`` runs them alone.
  docs/contributing.md says which tier a test belongs in.
- ``run_command``: a command of the command line, run in this process.
- Seeds: every test, and every pipeline `train` trains, starts from the same
  random state (spaCy's `fix_random_seed(0)`), so that a result does not
  depend on which tests ran before in the process: the README's command runs
  the tests in two processes (pytest-xdist), each file in one of them.
"""
import contextlib
import functools
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from hypothesis import HealthCheck, settings
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.converters import conllu_to_docs

# Make the pure-Python references in tests/ importable as plain modules.
TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

settings.register_profile(
    "default",
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "random",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def same_random_state():
    """Each test starts from the same random state (see the module)."""
    spacy.util.fix_random_seed(0)

EXAMPLE_SCALE = max(1, int(os.environ.get("SPACY_NONMONO_EXAMPLE_SCALE", "1")))


def scaled(n: int) -> int:
    """Example count for a hypothesis test: n times SPACY_NONMONO_EXAMPLE_SCALE."""
    return n * EXAMPLE_SCALE


def ud_dir() -> Path:
    override = os.environ.get("SPACY_NONMONO_UD_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "ud"


def ud_train_files():
    root = ud_dir()
    if not root.is_dir():
        return []
    return sorted(root.glob("*/*-ud-train.conllu"))


@functools.lru_cache(maxsize=None)
def load_ud_sentences(max_words: int = 10, limit: int = 150):
    """Up to `limit` sentences of 1..max_words syntactic words, taken in turn
    from each training file (round robin, in file order), as a tuple of
    (treebank, words, heads, deprels). Multiword-token lines and empty nodes
    are skipped; heads are ints (0 = root). Empty when there is no data."""
    try:
        import conllu
    except ImportError:  # pragma: no cover - conllu is a test dependency
        return ()
    files = ud_train_files()
    if not files:
        return ()
    per_file = -(-limit // len(files))   # ceil

    def sentences_of(path):
        found = []
        with path.open(encoding="utf8") as f:
            for tokenlist in conllu.parse_incr(f):
                words = [t for t in tokenlist if isinstance(t["id"], int)]
                if not 1 <= len(words) <= max_words:
                    continue
                if [t["id"] for t in words] != list(range(1, len(words) + 1)):
                    continue
                heads = [t["head"] for t in words]
                if any(not isinstance(h, int) for h in heads):
                    continue
                found.append((
                    path.parent.name,
                    tuple(t["form"] for t in words),
                    tuple(int(h) for h in heads),
                    tuple(str(t["deprel"]) for t in words),
                ))
                if len(found) >= per_file:
                    break
        return found

    per_treebank = [sentences_of(p) for p in files]
    out = []
    for k in range(per_file):
        for sents in per_treebank:
            if k < len(sents):
                out.append(sents[k])
    return tuple(out[:limit])


@pytest.fixture(scope="session")
def ud_sentences():
    sents = load_ud_sentences()
    if not sents:
        pytest.skip(f"No UD training data under {ud_dir()} (set SPACY_NONMONO_UD_DIR).")
    return sents


# -- pipelines on the shipped sample ---------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "assets" / "sample"

# The lab (benchmarks/, not installed) is imported from the repository root,
# after whatever the path holds already.
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
LAB = (sys.executable, "-m", "benchmarks")


def lab_env():
    """The environment in which `python -m benchmarks` runs from any folder:
    the repository root on PYTHONPATH."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + ([path] if path else [])))


@contextlib.contextmanager
def working_directory(path):
    """Run the block from the folder path, as a subprocess with cwd=path."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_command(*args, cwd, lab=False, check=False):
    """Run a command of `python -m spacy_nonmono` (lab=True: of the lab's
    `python -m benchmarks`) in this process, from the folder cwd: what a
    subprocess would give (returncode, stdout, stderr as a CompletedProcess;
    with check=True a non-zero status fails the test, showing stderr) without
    paying Python's and spaCy's start-up for each call. The entry points
    themselves (console script, `python -m`, a closed stdout) keep their own
    subprocess tests in test_cli_errors.py."""
    if lab:
        from benchmarks import main

        prog = "python -m benchmarks"
    else:
        from spacy_nonmono.cli import main

        prog = "python -m spacy_nonmono"
    argv = [str(arg) for arg in args]
    stdout, stderr = io.StringIO(), io.StringIO()
    with working_directory(cwd), contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        try:
            status = main(argv, prog=prog)
        except SystemExit as stop:   # argparse: --help, --version, usage errors
            status = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    result = subprocess.CompletedProcess([prog, *argv], status, stdout.getvalue(),
                                         stderr.getvalue())
    assert not check or status == 0, (status, result.stderr)
    return result


def run_spacy(*args, cwd):
    """`python -m spacy ARGS` from the folder cwd, run in this process
    through spaCy's own command line app (typer's test runner): the
    CompletedProcess, its stdout holding what the command printed."""
    from spacy.cli import app
    from typer.testing import CliRunner

    argv = [str(arg) for arg in args]
    with working_directory(cwd):
        result = CliRunner().invoke(app, argv)
    stderr = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr = "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["python -m spacy", *argv], result.exit_code,
                                       result.output, stderr)


SMALL_MODEL = {
    "@architectures": "spacy_nonmono.NonMonoParserModel.v1",
    "hidden_width": 32,
    "maxout_pieces": 2,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 32,
        "depth": 2,
        "embed_size": 500,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": True,
    },
}


def sample_examples(limit):
    """Training examples of the shipped sample: gold docs and their words."""
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d)
            for d in sample_docs("train", limit=limit)]


def sample_docs(split, n_sents_per_doc=1, limit=None):
    """Gold docs of the shipped sample, in an English vocab (the lexical
    features the model reads come from the vocab, so training and parsing
    must use the same kind of vocab)."""
    text = (SAMPLE / f"en_ewt-sample-{split}.conllu").read_text(encoding="utf8")
    docs = list(conllu_to_docs(text, n_sents=n_sents_per_doc, no_print=True))[:limit]
    return list(DocBin(docs=docs).get_docs(spacy.blank("en").vocab))


# Words of random docs (tests of roots and ensembles on arbitrary input).
WORDS = "the a dog cat saw with in , . and runs quickly big Rome ; of".split()


def tree_ok(doc):
    """Every sentence has one root, heads stay in the sentence, no cycles."""
    for sent in doc.sents:
        roots = [t for t in sent if t.head.i == t.i]
        assert len(roots) == 1
        for t in sent:
            assert sent.start <= t.head.i < sent.end
            seen, v = set(), t
            while v.head.i != v.i:
                assert v.i not in seen
                seen.add(v.i)
                v = v.head
    return True


def make_nlp(**config):
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL, **config})
    return nlp


def global_model(features="hybrid"):
    return {"@architectures": "spacy_nonmono.GlobalParserModel.v1", "hidden_width": 16,
            "features": features, "label_hidden_width": 16, "tok2vec": SMALL_MODEL["tok2vec"]}


def make_global_nlp(system, features="hybrid", **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"system": system, "decoding": "global",
                                           "model": global_model(features), **config})
    return nlp


def train(nlp, examples, epochs):
    spacy.util.fix_random_seed(0)   # the same pipeline whatever ran before (module fixtures)
    optimizer = nlp.initialize(lambda: examples)
    history = []
    for _ in range(epochs):
        losses = {}
        for start in range(0, len(examples), 8):
            nlp.update(examples[start : start + 8], sgd=optimizer, losses=losses)
        history.append(losses["nonmono_parser"])
    return history


def random_heads(rng, n: int, projective: bool = False):
    """A random tree of n words as 1-based heads (0 = root), from a
    random.Random: any tree, or a projective one built span by span."""
    heads = [0] * n
    if projective:
        def build(lo, hi, head):
            r = rng.randint(lo, hi)
            heads[r - 1] = head
            for a, b in ((lo, r - 1), (r + 1, hi)):
                k = a
                while k <= b:
                    end = rng.randint(k, b)
                    build(k, end, r)
                    k = end + 1
        build(1, n, 0)
    else:
        order = rng.sample(range(1, n + 1), n)
        for pos in range(1, n):
            heads[order[pos] - 1] = order[rng.randrange(pos)]
    return heads


def check_fast_search(ref, names, gold_heads, gold_labels, n_labels: int, seed: int) -> None:
    """A stack/buffer reference module's fast exact-loss search equals its
    plain search over full configurations, at every configuration of a
    random walk and one move off it, for each system of `names` (the
    references share System, initial_config, exact_loss)."""
    import random

    gold_labels = [min(label, n_labels - 1) for label in gold_labels]
    rng = random.Random(seed)
    for name in names:
        system = ref.System(name, n_labels)
        fast, full = {}, {}
        cfg = ref.initial_config(len(gold_heads))
        while True:
            for c in [cfg] + [system.apply(cfg, m) for m in system.valid_moves(cfg)]:
                assert (ref.exact_loss(system, c, gold_heads, gold_labels, fast)
                        == ref.exact_loss(system, c, gold_heads, gold_labels, full,
                                          canonical=False)), (name, c)
            if system.is_final(cfg):
                break
            cfg = system.apply(cfg, rng.choice(system.valid_moves(cfg)))
