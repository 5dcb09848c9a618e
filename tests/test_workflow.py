"""The command line tools on a tiny pipeline: evaluate, speed, compare."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_nonmono.evaluation import read_conllu
from spacy_nonmono.evaluation.compare import comparison_table, write_plots
from spacy_nonmono.evaluation.conllu_eval import gold_tree

ROOT = Path(__file__).resolve().parents[1]
TEST_CONLLU = ROOT / "assets" / "sample" / "en_ewt-sample-test.conllu"


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "spacy_nonmono", *map(str, args)],
                          check=True, capture_output=True, text=True, cwd=cwd).stdout


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    """A nonmono_parser trained for a few steps on a few sample sentences."""
    from test_pipeline import SMALL_MODEL, sample_docs

    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL})
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=20)]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("pipeline") / "tiny"
    nlp.to_disk(path)
    return path


def test_evaluate_command(tiny_pipeline, tmp_path):
    out, scores = tmp_path / "pred.conllu", tmp_path / "scores.json"
    table = cli("evaluate", tiny_pipeline, TEST_CONLLU, "--output", out, "--json", scores,
                cwd=tmp_path)
    assert "UAS" in table and "non-projective sents" in table
    result = json.loads(scores.read_text())
    assert result["words"] == sum(len(gold_tree(s)[0]) for s in read_conllu(TEST_CONLLU))
    predicted = read_conllu(out)
    assert len(predicted) == 120
    for sentence in predicted:
        heads, _ = gold_tree(sentence)
        assert heads.count(0) == 1


def test_speed_command(tiny_pipeline, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_pipeline, copy)
    output = cli("speed", tiny_pipeline, copy, "--gold", TEST_CONLLU, "--runs", "1", cwd=tmp_path)
    lines = output.strip().splitlines()
    assert "words/s" in lines[-3] and "transitions/word" in lines[-3]
    for line, ratio in ((lines[-2], "1.00x"), (lines[-1], "x")):
        *_, median_ratio, _, best_ratio, per_word = line.split()
        assert median_ratio.endswith(ratio) and best_ratio.endswith(ratio)
        # Covington shifts every word once, and both copies parse alike.
        assert float(per_word) >= 1.0
    assert lines[-2].split()[-1] == lines[-1].split()[-1]


def test_parse_counts(tiny_pipeline):
    nlp = spacy.load(tiny_pipeline)
    parser = nlp.get_pipe("nonmono_parser")
    docs = list(nlp.pipe(["One two three four five .", "Six seven ."]))
    assert parser.parse_counts["words"] == sum(len(doc) for doc in docs)
    assert parser.parse_counts["transitions"] >= parser.parse_counts["words"]


def fake_scores(las):
    counts = {"uas": las + 5, "las": las, "words": 10}
    return {
        "uas": las + 5, "las": las, "clas": las - 5, "words": 100, "sentences": 10,
        "nonprojective_sentences": 2, "projective": counts, "nonprojective": counts,
        "by_length": {name: counts for name in ("root", "1", "2", "3-6", "7+")}, "labels": {},
    }


def test_comparison_table_and_plots(tmp_path):
    results = {
        ("tb", "spacy_parser"): {"dev": fake_scores(70), "test": fake_scores(68),
                                 "words_per_second": 1000.0, "best_words_per_second": 1200.0},
        ("tb", "covington-dynamic"): {"dev": fake_scores(71), "test": fake_scores(69),
                                      "words_per_second": 900.0, "best_words_per_second": 1200.0,
                                      "transitions_per_word": 3.125},
    }
    table = comparison_table(results, ["tb"], ["spacy_parser", "covington-dynamic"])
    assert ("| tb | spacy_parser | 75.00 | 70.00 | 73.00 | 68.00 | 63.00 | 68.00 (2) "
            "| 1,000 | 1.00x | 1.00x | n/a |") in table
    assert table.splitlines()[-1].endswith("| 900 | 0.90x | 1.00x | 3.12 |")
    pytest.importorskip("matplotlib")
    written = write_plots(results, ["tb"], ["spacy_parser", "covington-dynamic"], tmp_path)
    assert [p.name for p in written] == ["las_by_length.png", "las_by_projectivity.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)


def test_project_commands_parse():
    """Every project.yml command is a valid `python -m spacy_nonmono` call."""
    import shlex

    from weasel.util import load_project_config

    from spacy_nonmono.cli import build_parser

    config = load_project_config(ROOT)
    assert config["workflows"]["all"] == ["convert", "train", "evaluate", "speed", "compare"]
    parser = build_parser()
    for command in config["commands"]:
        for line in command["script"]:
            words = shlex.split(line)
            assert words[:3] == ["python", "-m", "spacy_nonmono"], line
            args = parser.parse_args(words[3:])
            assert args.ud_dir == Path(config["vars"]["ud_dir"])
            assert (args.ud_dir if args.ud_dir.is_absolute() else ROOT / args.ud_dir).exists()
