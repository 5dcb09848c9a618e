"""Bad input to the command line: one `error: FILE:LINE: problem` line on
stderr, exit status 2, no traceback; and the command line's own promises
(help and defaults of every option, --version, packaged configs).

Gold problems and bad output paths are found before any pipeline is
loaded: the evaluate cases give a pipeline that does not exist, so an error
about the gold file or an output path shows that it was checked first.

The commands run in this process (`run_command`); the entry points
themselves (`python -m`, the console script, a closed stdout) run in
subprocesses at the end.
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAB, lab_env, run_command

ROOT = Path(__file__).resolve().parents[1]
NO_PIPELINE = "no-such-pipeline"
PRODUCT = (sys.executable, "-m", "spacy_nonmono")


def run_cli(*args, cwd):
    return run_command(*args, cwd=cwd)


def run_lab(*args, cwd):
    """run_cli for a command of the lab, `python -m benchmarks` (the same
    error handling: `spacy_nonmono.cli.main`)."""
    return run_command(*args, cwd=cwd, lab=True)


def run_process(*args, cwd, prog=PRODUCT):
    """A command in a subprocess: for what only a real process shows."""
    return subprocess.run([*prog, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def assert_error(result, *fragments):
    """Exit status 2 and one `error:` line on stderr holding every fragment."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def word(i, head, deprel="dep", columns=10):
    fields = [str(i), f"w{i}", "_", "_", "_", "_", str(head), deprel, "_", "_"]
    return "\t".join(fields[:columns] + ["_"] * (columns - len(fields)))


def sentence(sent_id, *lines):
    return "\n".join([f"# sent_id = {sent_id}", *lines]) + "\n\n"


VALID = sentence("ok", word(1, 2), word(2, 0, "root"))   # lines 1-3, blank line 4

# name -> (file content, fragments of the message). The first sentence is
# valid; the bad one starts at line 5 (its sent_id comment), its first word
# is line 6.
FORMAT_ERRORS = {
    "three_columns": (VALID + sentence("s2", word(1, 0, columns=3)),
                      ["three_columns.conllu:6:", "expected 10 tab-separated columns, found 3"]),
    "eight_columns": (VALID + sentence("s2", word(1, 0, columns=8)),
                      ["eight_columns.conllu:6:", "expected 10 tab-separated columns, found 8"]),
    "eleven_columns": (VALID + sentence("s2", word(1, 0, "root"), word(2, 1, columns=11)),
                       ["eleven_columns.conllu:7:", "expected 10 tab-separated columns, found 11"]),
    "head_underscore": (VALID + sentence("s2", word(1, 0, "root"), word(2, "_")),
                        ["head_underscore.conllu:7:", "HEAD '_' of word 2 is not an integer"]),
    "head_x": (VALID + sentence("s2", word(1, "x"), word(2, 0, "root")),
               ["head_x.conllu:6:", "HEAD 'x' of word 1 is not an integer"]),
    "only_comments": (VALID + "# sent_id = s2\n# text = nothing\n\n",
                      ["only_comments.conllu:5:", "sentence has no words"]),
    "ids_out_of_order": (VALID + sentence("s2", word(1, 0, "root"), word(3, 1)),
                         ["ids_out_of_order.conllu:7:", "word ID 3 out of order (expected 2)"]),
    "no_deprel": (VALID + sentence("s2", word(1, 0, "_")),
                  ["no_deprel.conllu:6:", "word 1 has no DEPREL"]),
    "empty": ("", ["empty.conllu: no sentences (empty file)"]),
}
TREE_ERRORS = {
    "head_99": (sentence("s2", word(1, 99), word(2, 0, "root")),
                "Head of word 1 is 99, outside the sentence (0..2)"),
    "head_minus_1": (sentence("s2", word(1, -1), word(2, 0, "root")),
                     "Head of word 1 is -1, outside the sentence (0..2)"),
    "cycle_no_root": (sentence("s2", word(1, 2), word(2, 1)),
                      "exactly one root, found 0"),
    "two_roots": (sentence("s2", word(1, 0, "root"), word(2, 0, "root")),
                  "exactly one root, found 2: words [1, 2]"),
    "cycle_beside_root": (sentence("s2", word(1, 0, "root"), word(2, 3), word(3, 2)),
                          "cycle through word"),
}


@pytest.mark.parametrize("name", sorted(FORMAT_ERRORS))
def test_evaluate_malformed_gold(name, tmp_path):
    content, fragments = FORMAT_ERRORS[name]
    (tmp_path / f"{name}.conllu").write_text(content, encoding="utf8")
    assert_error(run_cli("evaluate", NO_PIPELINE, f"{name}.conllu", cwd=tmp_path), *fragments)


@pytest.mark.parametrize("name", sorted(TREE_ERRORS))
def test_evaluate_invalid_gold_tree(name, tmp_path):
    """The bad sentence is named by its first line (5) and its sent_id."""
    content, problem = TREE_ERRORS[name]
    (tmp_path / f"{name}.conllu").write_text(VALID + content, encoding="utf8")
    result = run_cli("evaluate", NO_PIPELINE, f"{name}.conllu", cwd=tmp_path)
    assert_error(result, f"{name}.conllu:5: sentence (sent_id = s2) is not a tree", problem)


def test_evaluate_only_invalid_gold_with_skip_is_an_error(tmp_path):
    """--skip-invalid with nothing valid left: nothing to score."""
    (tmp_path / "bad.conllu").write_text(TREE_ERRORS["two_roots"][0], encoding="utf8")
    result = run_cli("evaluate", NO_PIPELINE, "bad.conllu", "--skip-invalid", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: bad.conllu: no valid sentence to score (1 skipped)"]


@pytest.mark.parametrize("kind", ["missing", "folder", "spacy_suffix", "binary", "latin1",
                                  "utf16"])
def test_evaluate_not_a_conllu_file(kind, tmp_path):
    from spacy.tokens import Doc, DocBin
    from spacy.vocab import Vocab

    docbin = DocBin(docs=[Doc(Vocab(), words=["a", "b"])]).to_bytes()
    if kind == "missing":
        name, fragments = "gone.conllu", ["gone.conllu: no such file"]
    elif kind == "folder":
        (tmp_path / "folder").mkdir()
        name, fragments = "folder", ["folder: is a folder, not a CoNLL-U file"]
    elif kind == "spacy_suffix":
        (tmp_path / "dev.spacy").write_bytes(docbin)
        name, fragments = "dev.spacy", ["dev.spacy: is a .spacy corpus", "CoNLL-U"]
    elif kind == "binary":
        (tmp_path / "dev.conllu").write_bytes(docbin)
        name, fragments = "dev.conllu", ["dev.conllu:1: not a UTF-8 text file",
                                         "a .spacy corpus?"]
    elif kind == "latin1":
        # Text in another encoding is no binary data: say how to convert it.
        latin1 = VALID + sentence("s2", word(1, 0, "root").replace("w1", "caf\u00e9"))
        (tmp_path / "dev.conllu").write_bytes(latin1.encode("latin-1"))
        name, fragments = "dev.conllu", [
            "dev.conllu:6: not UTF-8 text (byte 0xe9 at column 6); CoNLL-U must be UTF-8",
            "iconv -f latin1 -t utf-8"]
    else:
        (tmp_path / "dev.conllu").write_bytes(VALID.encode("utf-16"))
        name, fragments = "dev.conllu", ["dev.conllu: is UTF-16 text", "iconv -f utf-16"]
    result = run_cli("evaluate", NO_PIPELINE, name, cwd=tmp_path)
    assert_error(result, *fragments)
    if kind in ("latin1", "utf16"):   # text: its encoding is the problem, not binary data
        assert "binary" not in result.stderr and ".spacy" not in result.stderr


def test_evaluate_missing_pipeline(tmp_path):
    """Valid gold, missing pipeline: the error names the pipeline."""
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    assert_error(run_cli("evaluate", NO_PIPELINE, "gold.conllu", cwd=tmp_path),
                 f"cannot load pipeline {NO_PIPELINE}")


def test_ensemble_errors(tmp_path):
    """A member that does not load, a weight count that differs, a non-empty
    output: one error line each, nothing written."""
    assert_error(run_cli("ensemble", "out", NO_PIPELINE, cwd=tmp_path),
                 f"cannot load the member '{NO_PIPELINE}'")
    assert_error(run_cli("ensemble", "out", "a", "b", "--weights", "1", cwd=tmp_path),
                 "1 weights for 2 members")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert_error(run_cli("ensemble", "full", NO_PIPELINE, cwd=tmp_path), "is not empty")
    assert not (tmp_path / "out").exists()


def test_spacy_corpus_commands_reject_conllu(tmp_path):
    """arc-moves, oracle-bounds and oracle-timing read .spacy corpora."""
    (tmp_path / "train.conllu").write_text(VALID, encoding="utf8")
    hint = "expected a .spacy corpus (DocBin)"
    assert_error(run_lab("arc-moves", NO_PIPELINE, "train.conllu", cwd=tmp_path),
                 "train.conllu:", hint)
    assert_error(run_lab("oracle-bounds", "train.conllu", cwd=tmp_path), "train.conllu:", hint)
    (tmp_path / "fake.spacy").write_text(VALID, encoding="utf8")
    assert_error(run_lab("oracle-timing", "fake.spacy", cwd=tmp_path),
                 "fake.spacy: not a readable .spacy corpus")


def test_speed_rejects_spacy_gold(tmp_path):
    (tmp_path / "test.spacy").write_bytes(b"\x00")
    assert_error(run_cli("speed", NO_PIPELINE, "--gold", "test.spacy", cwd=tmp_path),
                 "test.spacy: is a .spacy corpus")


def test_version_and_program_names(tmp_path):
    """The two entry points, as processes: `python -m spacy_nonmono` and the
    console script, each naming itself in its usage line."""
    from spacy_nonmono import __version__

    result = run_process("--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == f"spacy-nonmono {__version__}"
    assert __version__ == "0.1.0"
    assert run_cli("--version", cwd=tmp_path).stdout == result.stdout
    usage = run_cli("evaluate", "--help", cwd=tmp_path).stdout
    assert usage.startswith("usage: python -m spacy_nonmono evaluate")
    script = Path(sys.executable).parent / "spacy-nonmono"
    if not script.exists():
        pytest.skip("the spacy-nonmono console script is not installed next to python")
    result = run_process("evaluate", "--help", cwd=tmp_path, prog=(str(script),))
    assert result.returncode == 0 and result.stdout.startswith("usage: spacy-nonmono evaluate")


PRODUCT_COMMANDS = {"init-config", "evaluate", "speed", "coverage", "ensemble", "parse"}
LAB_COMMANDS = {"benchmark", "workflow", "oracle-bounds", "oracle-timing", "arc-moves",
                "oracle-moves", "profile", "pruning", "length-cost", "projectivization",
                "optimal-step-timing", "train-speed", "beam-widths", "raw-text", "vectors",
                "gpu-check", "tokenization", "text-cost", "records", "segmenters",
                "senter-weights"}


def subcommands(lab=False):
    """The parser of the product's command line (lab: of `python -m
    benchmarks`) and its commands by name."""
    if lab:
        from benchmarks import build_parser
    else:
        from spacy_nonmono.cli import build_parser

    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return parser, commands.choices


def test_product_and_lab_commands():
    """The installed command line has the commands a user needs; the lab's
    (benchmarks/, not installed) has the rest."""
    assert set(subcommands()[1]) == PRODUCT_COMMANDS
    assert set(subcommands(lab=True)[1]) == LAB_COMMANDS
    listed = run_cli("--help", cwd=ROOT).stdout
    assert all(name in listed for name in PRODUCT_COMMANDS)
    assert not any(name in listed for name in LAB_COMMANDS)
    assert run_cli("workflow", "--help", cwd=ROOT).returncode == 2
    usage = run_process("workflow", "--help", cwd=ROOT, prog=LAB)
    assert usage.stdout.startswith("usage: python -m benchmarks workflow"), usage.stderr


def test_the_lab_is_not_packaged():
    """setup.cfg's package list (what `pip install .` installs) holds the
    product's packages and not benchmarks/; nor does the installed copy."""
    import configparser
    from importlib.metadata import distribution

    from setuptools import find_packages

    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    include = setup["options.packages.find"]["include"].split()
    packages = find_packages(str(ROOT), include=include)
    assert {"spacy_nonmono", "spacy_nonmono.cli", "spacy_nonmono.evaluation"} <= set(packages)
    assert (ROOT / "benchmarks" / "__init__.py").is_file()
    assert not [name for name in packages if name.split(".")[0] != "spacy_nonmono"]
    files = distribution("spacy-nonmono").files or []
    assert not [f for f in files if f.parts[0] == "benchmarks"]


@pytest.mark.parametrize("lab", [False, True])
def test_every_option_has_help_and_shows_its_default(lab):
    parser, commands = subcommands(lab)
    for name, command in [("", parser), *commands.items()]:
        assert issubclass(command.formatter_class, argparse.ArgumentDefaultsHelpFormatter), name
        for action in command._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, (name, action.dest)
            if action.option_strings and not isinstance(action, argparse._VersionAction):
                shown = command._get_formatter()._get_help_string(action)
                assert "%(default)" in shown or "(default:" in shown, (name, action.dest)


def test_config_defaults_are_packaged_and_match_the_repository(tmp_path):
    """Defaults resolve inside the package (so commands work from any folder),
    and the top-level configs/ users copy are the same files."""
    from spacy_nonmono.configs import CONFIG_DIR

    _, commands = subcommands(lab=True)
    for command in ("oracle-bounds", "oracle-timing"):
        config = commands[command].parse_args(["train.spacy"]).config
        assert config.is_absolute() and config == CONFIG_DIR / "nonmono_parser.cfg"
    configs = commands["workflow"].parse_args(["train"]).configs
    assert configs == CONFIG_DIR
    packaged = sorted(p.name for p in CONFIG_DIR.glob("*.cfg"))
    assert packaged == ["full_pipeline.cfg", "nonmono_parser.cfg", "spacy_parser.cfg"]
    assert sorted(p.name for p in (ROOT / "configs").glob("*.cfg")) == packaged
    for name in packaged:
        top = ROOT / "configs" / name
        assert top.resolve() == (CONFIG_DIR / name).resolve() or \
            filecmp.cmp(top, CONFIG_DIR / name, shallow=False), name


# -- output paths -----------------------------------------------------------

# name -> (evaluate's output options, fragments of the message); run in a
# folder with gold.conllu and a folder out/.
OUTPUT_ERRORS = {
    "output_folder_missing": (["--output", "nowhere/pred.conllu"],
                              ["--output nowhere/pred.conllu: folder nowhere does not exist"]),
    "json_folder_missing": (["--json", "nowhere/scores.json"],
                            ["--json nowhere/scores.json: folder nowhere does not exist"]),
    "json_is_a_folder": (["--json", "out"], ["--json out: is a folder; give a file path"]),
    "parent_is_a_file": (["--json", "gold.conllu/scores.json"],
                         ["--json gold.conllu/scores.json: gold.conllu is not a folder"]),
    "output_is_the_gold": (["--output", "gold.conllu"],
                           ["--output gold.conllu: is an input of this command"]),
    "same_file_twice": (["--output", "out/x", "--json", "out/../out/x"],
                        ["--output and --json name the same file"]),
}


@pytest.mark.parametrize("name", sorted(OUTPUT_ERRORS))
def test_evaluate_checks_output_paths_first(name, tmp_path):
    """Before the pipeline loads (it does not exist here), so before any parse."""
    options, fragments = OUTPUT_ERRORS[name]
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    (tmp_path / "out").mkdir()
    assert_error(run_cli("evaluate", NO_PIPELINE, "gold.conllu", *options, cwd=tmp_path),
                 *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.conllu", "out"]
    assert (tmp_path / "gold.conllu").read_text(encoding="utf8") == VALID


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_evaluate_output_folder_not_writable(tmp_path):
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    (tmp_path / "locked").mkdir(mode=0o500)
    assert_error(run_cli("evaluate", NO_PIPELINE, "gold.conllu", "--json", "locked/s.json",
                         cwd=tmp_path), "--json locked/s.json: folder locked is not writable")


def test_other_commands_check_output_paths_first(tmp_path):
    """The oracle commands share the check: nothing is computed (no training
    corpus even exists for the training commands) and no folder is created."""
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    missing = "--output nowhere/x.json: folder nowhere does not exist"
    for command in (["oracle-moves", "gold.conllu"], ["oracle-timing", "train.spacy"],
                    ["arc-moves", NO_PIPELINE, "dev.spacy"]):
        assert_error(run_lab(*command, "--output", "nowhere/x.json", cwd=tmp_path), missing)
    assert_error(run_lab("oracle-moves", "gold.conllu", "--output", "gold.conllu", cwd=tmp_path),
                 "--output gold.conllu: is an input of this command")
    assert_error(run_lab("beam-widths", NO_PIPELINE, "--gold", "gold.conllu", "--json",
                         "nowhere/x.json", cwd=tmp_path),
                 "--json nowhere/x.json: folder nowhere does not exist")
    assert_error(run_lab("beam-widths", NO_PIPELINE, "--gold", "gold.conllu", "--widths", "0,8",
                         cwd=tmp_path), "--widths must be integers >= 1, got '0,8'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.conllu"]


def test_oracle_timing_checks_losses_before_training(tmp_path):
    assert_error(run_lab("oracle-timing", "train.spacy", "--losses", "lower,uper", cwd=tmp_path),
                 "--losses takes comma-separated losses from lower, pc_upper, upper",
                 "'lower,uper'")


# -- pipelines ----------------------------------------------------------------

@pytest.fixture(scope="module")
def parser_pipeline(tmp_path_factory):
    """A nonmono_parser pipeline, initialized but not trained: it parses
    every sentence into a tree, which is all these tests need, in a second."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser")
    gold = Doc(nlp.vocab, words=["w1", "w2"], heads=[1, 1], deps=["dep", "root"])
    nlp.initialize(lambda: [Example(Doc(nlp.vocab, words=["w1", "w2"]), gold)])
    path = tmp_path_factory.mktemp("pipeline") / "parser"
    nlp.to_disk(path)
    return path


@pytest.mark.parametrize("command,components", [("evaluate", []), ("speed", ["sentencizer"])])
def test_pipeline_without_parser(command, components, tmp_path):
    """Said right after loading, not as "N roots" after the parse."""
    import spacy

    nlp = spacy.blank("en")
    for name in components:
        nlp.add_pipe(name)
    nlp.to_disk(tmp_path / "blank")
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    args = (["evaluate", "blank", "gold.conllu", "--json", "s.json"] if command == "evaluate"
            else ["speed", "blank", "--gold", "gold.conllu", "--runs", "1"])
    assert_error(run_cli(*args, cwd=tmp_path),
                 f"blank has no dependency parser (components: {', '.join(components) or 'none'})",
                 "this needs a trained pipeline with nonmono_parser or spaCy's parser")
    assert not (tmp_path / "s.json").exists()


def run_with_stdout_closed(args, cwd, prog=PRODUCT, env=None):
    """Run a command whose stdout reader is gone before it writes (as when
    `| head` has read its lines): its exit status and stderr."""
    with open(cwd / "stderr", "w+") as stderr:
        process = subprocess.Popen([*prog, *map(str, args)],
                                   stdout=subprocess.PIPE, stderr=stderr, cwd=cwd, env=env)
        process.stdout.close()
        status = process.wait(timeout=120)
        stderr.seek(0)
        return status, stderr.read()


def test_evaluate_into_a_closed_pipe_writes_its_files(parser_pipeline, tmp_path):
    """The files come before the table, and the broken pipe ends the command
    quietly (exit status 1, no traceback, no "Exception ignored")."""
    (tmp_path / "gold.conllu").write_text(VALID * 3, encoding="utf8")
    for attempt in range(2):
        for name in ("scores.json", "pred.conllu"):
            (tmp_path / name).unlink(missing_ok=True)
        status, stderr = run_with_stdout_closed(
            ["evaluate", parser_pipeline, "gold.conllu", "--json", "scores.json",
             "--output", "pred.conllu"], tmp_path)
        assert (status, stderr) == (1, ""), attempt
        assert json.loads((tmp_path / "scores.json").read_text())["words"] == 6
        assert len((tmp_path / "pred.conllu").read_text().strip().split("\n\n")) == 3


@pytest.mark.slow
def test_evaluate_into_head(parser_pipeline, tmp_path):
    """`| head -1` as users type it: the first line of the table, the JSON
    complete, nothing on stderr, whether or not the table was sent before
    head left."""
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    for attempt in range(3):
        (tmp_path / "scores.json").unlink(missing_ok=True)
        result = subprocess.run(
            ["bash", "-c", f'"{sys.executable}" -m spacy_nonmono evaluate "{parser_pipeline}" '
             'gold.conllu --json scores.json | head -1; exit "${PIPESTATUS[0]}"'],
            capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode in (0, 1) and result.stderr == "", (attempt, result)
        assert result.stdout.split() == ["UAS", "LAS", "words"]
        assert json.loads((tmp_path / "scores.json").read_text())["words"] == 2


@pytest.mark.slow
def test_oracle_moves_into_a_closed_pipe_writes_its_json(tmp_path):
    """The other commands end the same way and write their files first too."""
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    status, stderr = run_with_stdout_closed(
        ["oracle-moves", "gold.conllu", "--output", "moves.json"], tmp_path, LAB, lab_env())
    assert (status, stderr) == (1, "")
    assert set(json.loads((tmp_path / "moves.json").read_text())) == {
        "gold/swap_lazy", "gold/swap_stay_eager"}


@pytest.mark.slow     # subprocesses
def test_an_unbuilt_source_folder_reads_the_built_modules(tmp_path):
    """A source folder without compiled extensions (a regular install, run
    from the repository root) finds its modules in the built copy further on
    sys.path, and says what to do when there is none."""
    import spacy_nonmono
    from spacy_nonmono.systems import base

    built = Path(spacy_nonmono.__path__[0])
    source = tmp_path / "spacy_nonmono"
    source.mkdir()
    for name in ("__init__.py", "_source_checkout.py", "__main__.py"):
        (source / name).write_text((built / name).read_text(encoding="utf8"), encoding="utf8")
    probe = ("import spacy_nonmono, spacy_nonmono.systems.base as b; "
             "print(spacy_nonmono.__file__); print(b.__file__)")
    env = dict(os.environ, PYTHONPATH=str(built.parent))
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    package_file, module_file = result.stdout.split()
    assert Path(package_file).resolve() == (source / "__init__.py").resolve()
    assert Path(module_file).resolve() == Path(base.__file__).resolve()
    result = subprocess.run([sys.executable, "-m", "spacy_nonmono", "--version"], cwd=tmp_path,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("spacy-nonmono "), result.stderr
    # Nothing built anywhere: a clear error.
    from spacy_nonmono._source_checkout import module_path

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "path", [str(tmp_path)])
        with pytest.raises(ImportError, match="build_ext --inplace"):
            module_path([str(source)], str(source / "__init__.py"))
