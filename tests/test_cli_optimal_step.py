"""The `projectivization` and `optimal-step-timing` commands (Nederhof 2019,
sections 8.1-8.2) on the shipped sample: JSON written and consistent, tables
on stdout, bad input one `error:` line and exit status 2."""
import json

from benchmarks import main
from conftest import SAMPLE, run_command
from spacy_nonmono.evaluation import read_gold
from spacy_nonmono.conllu_io import gold_tree
from spacy_nonmono.graph import is_projective

TRAIN = SAMPLE / "en_ewt-sample-train.conllu"
DEV = SAMPLE / "en_ewt-sample-dev.conllu"


def test_projectivization_command(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["projectivization", str(TRAIN), str(DEV), "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| file |") and len(table.strip().splitlines()) == 4
    data = json.loads(out.read_text())
    assert data["max_length"] == 0 and len(data["files"]) == 2
    for entry, path in zip(data["files"], (TRAIN, DEV)):
        trees = [gold_tree(s)[0] for s in read_gold(path)[0]]
        assert entry["sentences"] == len(trees)
        assert entry["words"] == sum(map(len, trees))
        assert entry["nonprojective_sentences"] == sum(not is_projective(t) for t in trees) > 0
        assert 0.0 < entry["nonprojective_percent"] < 100.0
        kept = entry["arcs_kept"]
        # The lifted tree is projective and single-rooted: the optimum keeps at least as much.
        assert entry["words"] > kept["optimal"] >= kept["pseudo"] > 0.9 * entry["words"]
        assert kept["pseudo_deprojectivized"] <= entry["words"]
        for value in entry["arcs_kept_percent"].values():
            assert 90.0 < value <= 100.0
        assert entry["optimal_trees_geometric_mean"]["nonprojective"] >= 1.0
        assert entry["optimal_trees_geometric_mean"]["all"] >= 1.0
        assert sum(b["sentences"] for b in entry["optimal_trees_by_length"]) == len(trees)
        assert entry["optimal_ms_per_tree"] > 0
        assert entry["failed_checks"] == 0
        assert entry["skipped_long"] == entry["skipped_invalid"] == 0

    assert main(["projectivization", str(DEV), "--json", str(out), "--max-length", "20"]) == 0
    entry = json.loads(out.read_text())["files"][0]
    assert entry["skipped_long"] > 0 and entry["sentences"] + entry["skipped_long"] == len(
        read_gold(DEV)[0])


def test_optimal_step_timing_command(tmp_path, capsys):
    out, png = tmp_path / "t.json", tmp_path / "t.png"
    args = ["optimal-step-timing", str(TRAIN), "--sentences", "6", "--seed", "3",
            "--repeats", "1", "--runs", "1", "--random-moves", "0.3",
            "--json", str(out), "--plot", str(png)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("| k + m |") and "6/6 sentences" in captured.err
    assert png.stat().st_size > 1000
    data = json.loads(out.read_text())
    assert data["sentences"] == 6 and data["seed"] == 3
    # Every configuration before the final one of arc-standard's 2n moves.
    assert data["configurations"] == 2 * data["words"]
    assert data["score_mismatches"] == 0
    assert data["algorithms"][:3] == ["cubic_original", "cubic_original_nonprojective",
                                      "cubic_projectivized"]
    for name in ("quadratic", "linear"):
        assert (name in data["algorithms"]) != (name in data["unavailable"])
    for name in data["algorithms"]:
        counted = sum(row[name]["configurations"] for row in data["buckets"])
        by_k_m = data["by_k_plus_m"][name]
        assert counted == sum(e["configurations"] for e in by_k_m.values())
        if name == "cubic_original_nonprojective":
            assert counted == data["nonprojective_configurations"]
        else:
            assert counted == data["configurations"]
        for k, e in by_k_m.items():
            assert 1 <= int(k) <= 120 and 0.0 < e["mean_ms"] < 1000.0
    # Seeded: the same sentences and moves again.
    assert main(args) == 0
    again = json.loads(out.read_text())
    assert again["words"] == data["words"]
    assert {name: {k: e["configurations"] for k, e in v.items()}
            for name, v in again["by_k_plus_m"].items()} == {
        name: {k: e["configurations"] for k, e in v.items()}
        for name, v in data["by_k_plus_m"].items()}


def test_optimal_step_timing_algorithms_option(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["optimal-step-timing", str(DEV), "--sentences", "2", "--repeats", "1",
                 "--runs", "1", "--algorithms", "cubic_projectivized", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["algorithms"] == ["cubic_projectivized"]
    assert "cubic (projectivized) (ms)" in capsys.readouterr().out


def test_errors(tmp_path, capsys):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tw\t_\t_\t_\t_\t2\tdep\t_\t_\n2\tw\t_\t_\t_\t_\t1\tdep\t_\t_\n\n")
    cases = [
        (["projectivization", str(tmp_path / "missing.conllu")], "missing.conllu"),
        (["projectivization", str(DEV), "--json", str(tmp_path / "no" / "x.json")], "--json"),
        (["projectivization", str(DEV), "--json", str(DEV)], "input"),
        (["projectivization", str(DEV), "--max-length", "-1"], "--max-length"),
        (["projectivization", str(bad)], "not a tree"),
        (["optimal-step-timing", str(tmp_path / "missing.conllu")], "missing.conllu"),
        (["optimal-step-timing", str(DEV), "--sentences", "0"], "--sentences"),
        (["optimal-step-timing", str(DEV), "--random-moves", "1.5"], "--random-moves"),
        (["optimal-step-timing", str(DEV), "--repeats", "-1"], "--repeats"),
        (["optimal-step-timing", str(DEV), "--runs", "0"], "--runs"),
        (["optimal-step-timing", str(DEV), "--bucket", "0"], "--bucket"),
        (["optimal-step-timing", str(DEV), "--algorithms", "cubic,fast"], "--algorithms"),
        (["optimal-step-timing", str(DEV), "--plot", str(tmp_path / "no" / "x.png")], "--plot"),
        (["optimal-step-timing", str(DEV), "--json", str(tmp_path / "a"),
          "--plot", str(tmp_path / "a")], "same file"),
        (["optimal-step-timing", str(bad)], "not a tree"),
    ]
    for args, fragment in cases:
        assert main(args) == 2, args
        errors = [line for line in capsys.readouterr().err.splitlines() if line]
        assert len(errors) == 1 and errors[0].startswith("error: "), (args, errors)
        assert fragment in errors[0], (args, errors)
    assert not list(tmp_path.glob("a"))


def test_argparse_errors():
    """A value argparse cannot read: exit status 2, usage and one error line."""
    for args in (["optimal-step-timing", str(DEV), "--sentences", "many"],
                 ["projectivization"]):
        result = run_command(*args, cwd=SAMPLE, lab=True)
        assert result.returncode == 2
        errors = [line for line in result.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and "Traceback" not in result.stderr
