"""The lab's `records` command: folders of JSON run records packed into one
.json.gz file (docs/results/*/runs.json.gz) and unpacked byte for byte."""
import json
from pathlib import Path

import pytest

from conftest import run_command

ROOT = Path(__file__).resolve().parents[1]


def records(*args, cwd, check=True):
    return run_command("records", *args, cwd=cwd, lab=True, check=check)


def make_folder(root: Path) -> Path:
    """A metrics/-like folder: nested folders, several layouts of JSON."""
    folder = root / "runs"
    (folder / "en_ewt" / "deeper").mkdir(parents=True)
    (folder / "la_perseus").mkdir()
    (folder / "en_ewt" / "a.json").write_text(
        json.dumps({"test": {"uas": 85.0, "las": 80.5}, "dev": {}}, indent=2))   # key order
    (folder / "en_ewt" / "a.seed1.json").write_text(
        json.dumps({"dev": {"las": 81.25}, "name": "é"}, indent=2) + "\n")
    (folder / "en_ewt" / "deeper" / "b.json").write_text(json.dumps([1, 2.5, None], indent=1))
    (folder / "la_perseus" / "speed.json").write_text('{"words/s":  12}\n')   # no layout
    (folder / "top.json").write_text("[]")
    return folder


def files_of(folder: Path):
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in folder.rglob("*") if path.is_file()}


def test_pack_unpack_round_trip(tmp_path):
    folder = make_folder(tmp_path)
    out = records("pack", folder, cwd=tmp_path).stdout
    packed = tmp_path / "runs.json.gz"
    assert out.startswith(f"Packed 5 files of {folder} into {packed}") and out.count("\n") == 1
    assert folder.is_dir()
    listed = records("list", packed, cwd=tmp_path).stdout.splitlines()
    assert listed == ["en_ewt/a.json", "en_ewt/a.seed1.json", "en_ewt/deeper/b.json",
                      "la_perseus/speed.json", "top.json"]
    out = records("unpack", packed, tmp_path / "metrics", cwd=tmp_path).stdout
    assert out.strip() == f"Wrote 5 files under {tmp_path / 'metrics'}, kept 0 that exist"
    original, restored = files_of(folder), files_of(tmp_path / "metrics")
    assert restored == original      # the same bytes, hence the same parsed values
    # Packing the same folder again gives the same bytes.
    first = packed.read_bytes()
    records("pack", folder, "--output", tmp_path / "again.json.gz", cwd=tmp_path)
    assert (tmp_path / "again.json.gz").read_bytes() == first
    records("pack", "runs", cwd=tmp_path)
    assert packed.read_bytes() == first


def test_unpack_keeps_existing_files_unless_forced(tmp_path):
    folder = make_folder(tmp_path)
    records("pack", folder, cwd=tmp_path)
    target = tmp_path / "metrics"
    (target / "en_ewt").mkdir(parents=True)
    (target / "en_ewt" / "a.json").write_text("mine")
    out = records("unpack", "runs.json.gz", target, cwd=tmp_path).stdout
    assert "Wrote 4 files" in out and "kept 1 that exist" in out
    assert (target / "en_ewt" / "a.json").read_text() == "mine"
    out = records("unpack", "runs.json.gz", target, "--force", cwd=tmp_path).stdout
    assert "Wrote 5 files" in out and "kept 0" in out
    assert files_of(target) == files_of(folder)


def test_bad_inputs_are_clear_errors(tmp_path):
    folder = make_folder(tmp_path)
    (folder / "en_ewt" / "notes.txt").write_text("not JSON")
    result = records("pack", folder, cwd=tmp_path, check=False)
    assert result.returncode == 2 and "notes.txt: not a JSON file" in result.stderr
    (folder / "en_ewt" / "notes.txt").unlink()
    (folder / "en_ewt" / "broken.json").write_text('{"las": ')
    result = records("pack", folder, cwd=tmp_path, check=False)
    assert result.returncode == 2 and "broken.json: not a JSON file" in result.stderr
    assert not (tmp_path / "runs.json.gz").exists()

    import gzip

    for key in ("../escape.json", "/tmp/escape.json", "a/../../escape.json"):
        bad = tmp_path / "bad.json.gz"
        bad.write_bytes(gzip.compress(json.dumps({"files": {"ok.json": 1, key: {}}}).encode()))
        result = records("unpack", bad, tmp_path / "target", cwd=tmp_path, check=False)
        assert result.returncode == 2 and repr(key) in result.stderr, result.stderr
        assert "would leave the target folder" in result.stderr
        assert not (tmp_path / "target").exists() and not (tmp_path / "escape.json").exists()
    (tmp_path / "plain.json").write_text("{}")
    result = records("list", tmp_path / "plain.json", cwd=tmp_path, check=False)
    assert result.returncode == 2 and "plain.json: not a packed records file" in result.stderr


def test_a_packed_page_of_docs_results():
    packed = ROOT / "docs" / "results" / "vectors" / "runs.json.gz"
    if not packed.is_file():
        pytest.skip("docs/results/vectors/runs.json.gz is absent")
    listed = records("list", packed, cwd=ROOT).stdout.splitlines()
    assert "la_perseus/speed.json" in listed
    from benchmarks.records import read_packed, render

    files, layouts = read_packed(packed)
    speed = json.loads(render(files["la_perseus/speed.json"], layouts.get("la_perseus/speed.json")))
    assert isinstance(speed, dict) and speed
