"""Bad input to the command line: one `error: FILE:LINE: problem` line on
stderr, exit status 2, no traceback; and the command line's own promises
(help and defaults of every option, --version, packaged configs).

Gold problems are found before any pipeline is loaded: the evaluate cases
give a pipeline that does not exist, so an error about the gold file shows
that it was checked first.
"""
import argparse
import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NO_PIPELINE = "no-such-pipeline"


def run_cli(*args, cwd, prog=(sys.executable, "-m", "spacy_nonmono")):
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


@pytest.mark.parametrize("kind", ["missing", "folder", "spacy_suffix", "binary"])
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
    else:
        (tmp_path / "dev.conllu").write_bytes(docbin)
        name, fragments = "dev.conllu", ["dev.conllu:1: not a UTF-8 text file"]
    assert_error(run_cli("evaluate", NO_PIPELINE, name, cwd=tmp_path), *fragments)


def test_evaluate_missing_pipeline(tmp_path):
    """Valid gold, missing pipeline: the error names the pipeline."""
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    assert_error(run_cli("evaluate", NO_PIPELINE, "gold.conllu", cwd=tmp_path),
                 f"cannot load pipeline {NO_PIPELINE}")


def test_spacy_corpus_commands_reject_conllu(tmp_path):
    """arc-moves, oracle-bounds and oracle-timing read .spacy corpora."""
    (tmp_path / "train.conllu").write_text(VALID, encoding="utf8")
    hint = "expected a .spacy corpus (DocBin)"
    assert_error(run_cli("arc-moves", NO_PIPELINE, "train.conllu", cwd=tmp_path),
                 "train.conllu:", hint)
    assert_error(run_cli("oracle-bounds", "train.conllu", cwd=tmp_path), "train.conllu:", hint)
    (tmp_path / "fake.spacy").write_text(VALID, encoding="utf8")
    assert_error(run_cli("oracle-timing", "fake.spacy", cwd=tmp_path),
                 "fake.spacy: not a readable .spacy corpus")


def test_speed_rejects_spacy_gold(tmp_path):
    (tmp_path / "test.spacy").write_bytes(b"\x00")
    assert_error(run_cli("speed", NO_PIPELINE, "--gold", "test.spacy", cwd=tmp_path),
                 "test.spacy: is a .spacy corpus")


def test_version_and_program_names(tmp_path):
    from spacy_nonmono import __version__

    result = run_cli("--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == f"spacy-nonmono {__version__}"
    assert __version__ == "0.1.0"
    usage = run_cli("evaluate", "--help", cwd=tmp_path).stdout
    assert usage.startswith("usage: python -m spacy_nonmono evaluate")
    script = Path(sys.executable).parent / "spacy-nonmono"
    if not script.exists():
        pytest.skip("the spacy-nonmono console script is not installed next to python")
    result = run_cli("evaluate", "--help", cwd=tmp_path, prog=(str(script),))
    assert result.returncode == 0 and result.stdout.startswith("usage: spacy-nonmono evaluate")


def subcommands():
    from spacy_nonmono.cli import build_parser

    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return parser, commands.choices


def test_every_option_has_help_and_shows_its_default():
    parser, commands = subcommands()
    assert set(commands) == {"benchmark", "evaluate", "oracle-bounds", "oracle-timing",
                             "arc-moves", "oracle-moves", "speed", "profile", "workflow"}
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

    _, commands = subcommands()
    for command in ("oracle-bounds", "oracle-timing"):
        config = commands[command].parse_args(["train.spacy"]).config
        assert config.is_absolute() and config == CONFIG_DIR / "covington.cfg"
    configs = commands["workflow"].parse_args(["train"]).configs
    assert configs == CONFIG_DIR
    packaged = sorted(p.name for p in CONFIG_DIR.glob("*.cfg"))
    assert packaged == ["covington.cfg", "spacy_parser.cfg"]
    assert sorted(p.name for p in (ROOT / "configs").glob("*.cfg")) == packaged
    for name in packaged:
        top = ROOT / "configs" / name
        assert top.resolve() == (CONFIG_DIR / name).resolve() or \
            filecmp.cmp(top, CONFIG_DIR / name, shallow=False), name
