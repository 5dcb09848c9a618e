"""The command line tools on a tiny pipeline: evaluate, speed, compare."""
import json
import shutil
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from benchmarks.compare import (comparison_table, sentence_length_table, summarize, verdict,
                                write_plots)
from conftest import run_command
from spacy_nonmono.evaluation import read_conllu
from spacy_nonmono.conllu_io import gold_tree

ROOT = Path(__file__).resolve().parents[1]
TEST_CONLLU = ROOT / "assets" / "sample" / "en_ewt-sample-test.conllu"


def cli(*args, cwd, check=True, lab=False):
    """stdout of a successful command (run in this process); with
    check=False, the CompletedProcess."""
    result = run_command(*args, cwd=cwd, lab=lab, check=check)
    return result.stdout if check else result


def lab(*args, cwd, check=True):
    """cli for a command of the lab, `python -m benchmarks`."""
    return cli(*args, cwd=cwd, check=check, lab=True)


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    """A covington nonmono_parser (the workflow's "covington": the system's
    defaults) trained for a few steps on a few sample sentences."""
    from conftest import SMALL_MODEL, sample_docs

    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL, "system": "covington"})
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=20)]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("pipeline") / "tiny"
    nlp.to_disk(path)
    return path


def test_length_cost_command(tiny_pipeline, tmp_path):
    result = lab("length-cost", tiny_pipeline, "--gold", TEST_CONLLU, "--lengths", "5,30",
                 "--sentences", "2", "--runs", "1", "--memory-length", "30", "--text-words", "200",
                 "--json", tmp_path / "cost.json", "--plot", tmp_path / "cost.png", cwd=tmp_path)
    assert "| 30 |" in result and "peak memory, 30 words" in result
    assert "| one unsegmented text of 200 words | " in result and "(1.0x)" in result
    numbers = json.loads((tmp_path / "cost.json").read_text())
    assert numbers["lengths"] == [5, 30]
    times = numbers["seconds_per_sentence"][str(tiny_pipeline)]
    assert 0 < times["5"] and 0 < times["30"]
    assert numbers["peak_bytes"][str(tiny_pipeline)] > 0
    assert numbers["text_words"] == 200 and numbers["text_seconds"][str(tiny_pipeline)] > 0
    assert (tmp_path / "cost.png").stat().st_size > 1000
    bad = lab("length-cost", tiny_pipeline, "--gold", TEST_CONLLU, "--lengths", "0",
              cwd=tmp_path, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --lengths")


def test_text_cost_command(tiny_pipeline, tmp_path):
    """text-cost: the same words punctuated, without punctuation and without
    capitals, each one doc through the pipeline; a bound needs a senter."""
    from benchmarks.text_cost import texts

    sentences = read_conllu(TEST_CONLLU)
    sample = texts(sentences, 100)
    assert "." in sample["punctuated"]
    # The file's first words in order, the punctuation tokens left out.
    kept = [t["form"] for s in sentences for t in s
            if isinstance(t["id"], int) and t["upos"] != "PUNCT"]
    unpunctuated = sample["unpunctuated"].split()
    assert unpunctuated == kept[:len(unpunctuated)] and len(unpunctuated) >= 80
    assert sample["no cues"] == sample["unpunctuated"].lower() != sample["unpunctuated"]
    result = lab("text-cost", tiny_pipeline, "--gold", TEST_CONLLU, "--words", "100", "--runs", "1",
                 "--json", tmp_path / "cost.json", cwd=tmp_path)
    [row] = json.loads((tmp_path / "cost.json").read_text())["runs"]
    assert row["max_length"] is None and row["unpunctuated"]["words_per_second"] > 0
    assert f"| {tiny_pipeline} | none | " in result
    bad = lab("text-cost", tiny_pipeline, "--gold", TEST_CONLLU, "--max-lengths", "60",
              cwd=tmp_path, check=False)
    assert bad.returncode == 2 and "has no senter to bound" in bad.stderr


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


def test_evaluate_skip_invalid(tiny_pipeline, tmp_path):
    """Invalid gold stops evaluate; with --skip-invalid the sentence is left
    out, with a warning, and counted in the report and the JSON."""
    two_roots = ("# sent_id = bad\n1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n"
                 "2\tb\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    text = TEST_CONLLU.read_text(encoding="utf8")
    gold = tmp_path / "gold.conllu"
    gold.write_text(text + two_roots, encoding="utf8")
    bad_line = len(text.split("\n"))   # the line after the sample's last line
    result = cli("evaluate", tiny_pipeline, gold, cwd=tmp_path, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {gold}:{bad_line}: sentence (sent_id = bad) is not a tree: "
        "Gold tree must have exactly one root, found 2: words [1, 2].")
    result = cli("evaluate", tiny_pipeline, gold, "--skip-invalid", "--json", "scores.json",
                 cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"warning: skipped {gold}:{bad_line}: sentence (sent_id = bad)")
    assert "sentences: 120 " in result.stdout and "skipped (invalid gold): 1" in result.stdout
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["sentences"] == 120 and scores["skipped_sentences"] == 1


def test_speed_command(tiny_pipeline, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_pipeline, copy)
    output = cli("speed", tiny_pipeline, copy, "--gold", TEST_CONLLU, "--runs", "1", cwd=tmp_path)
    lines = output.strip().splitlines()
    assert "words/s" in lines[-3] and "transitions/word" in lines[-3]
    rows = {}
    for line in lines[-2:]:
        name, median, median_ratio, best, best_ratio, per_word = line.split()
        assert median_ratio.endswith("x") and best_ratio.endswith("x")
        rows[name] = [float(median.replace(",", "")), float(median_ratio[:-1]),
                      float(best.replace(",", "")), float(best_ratio[:-1]), float(per_word)]
        assert all(value > 0 for value in rows[name]), line
    first, second = rows[str(tiny_pipeline)], rows[str(copy)]
    # The first pipeline is the reference: its ratios are 1; the other's ratio
    # is its words/s over the reference's (to the printed precision).
    assert first[1] == first[3] == 1.0
    assert second[1] == pytest.approx(second[0] / first[0], abs=0.01)
    assert second[3] == pytest.approx(second[2] / first[2], abs=0.01)
    # Covington shifts every word once, and both copies parse alike.
    assert first[4] >= 1.0 and first[4] == second[4]
    # Both batch sizes are timed, the configs' 1000 first.
    assert [line for line in lines if line.startswith("nlp.pipe batch_size=")] == \
        ["nlp.pipe batch_size=1000", "nlp.pipe batch_size=64"]


def test_profile_command(tiny_pipeline, tmp_path):
    output = lab("profile", tiny_pipeline, "--gold", TEST_CONLLU, "--top", "3", cwd=tmp_path)
    shares = {}
    for line in output.splitlines()[1:5]:
        name, seconds, share = line.rsplit(None, 3)[0].strip(), line.split()[-3], line.split()[-1]
        shares[name] = float(share.rstrip("%"))
        assert float(seconds) >= 0
    assert list(shares) == ["tok2vec", "token table", "transition loop", "annotations"]
    assert shares["tok2vec"] > 0 and shares["token table"] > 0 and shares["transition loop"] > 0
    assert 50 <= sum(shares.values()) <= 100.5     # the rest: spaCy's pipe loop


def write_corpus(path, docs):
    from spacy.tokens import DocBin

    DocBin(docs=docs).to_disk(path)
    return path


def test_arc_moves_refuses_a_monotonic_pipeline(tiny_pipeline, tmp_path):
    from conftest import sample_docs

    corpus = write_corpus(tmp_path / "dev.spacy", sample_docs("dev", limit=5))
    result = lab("arc-moves", tiny_pipeline, corpus, cwd=tmp_path, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"error: {tiny_pipeline} uses system 'covington', which never replaces an arc: "
        "arc-moves has nothing to report (it needs covington_nm)")


def test_arc_moves_parse_the_gold_words(tmp_path):
    """arc-moves runs the parser on the gold words: a doc whose text the
    tokenizer would split differently ("NewYork") is analysed, not dropped
    as misaligned, and the command runs on a covington_nm pipeline."""
    from conftest import SMALL_MODEL, sample_docs

    from benchmarks.oracle import arc_move_examples
    from benchmarks.oracle_analysis import arc_move_effects

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL, "system": "covington_nm"})
    golds = sample_docs("dev", limit=10)
    glued = Doc(nlp.vocab, words=["I", "love", "New", "York"], spaces=[True, True, False, False],
                heads=[1, 1, 3, 1], deps=["nsubj", "ROOT", "compound", "obj"])
    assert len(nlp.make_doc(glued.text)) == 3   # "NewYork": re-tokenizing would misalign
    corpus = write_corpus(tmp_path / "dev.spacy", golds + [glued])
    train = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d)
             for d in sample_docs("train", limit=20) + golds + [glued]]   # all labels known
    optimizer = nlp.initialize(lambda: train)
    for _ in range(5):
        nlp.update(train, sgd=optimizer)
    examples = arc_move_examples(nlp, corpus)
    assert [[t.text for t in eg.predicted] for eg in examples] == \
        [[t.text for t in d] for d in golds + [glued]]
    assert all(eg.predicted.text == eg.reference.text for eg in examples)
    parser.gold_problems.clear()
    counts = arc_move_effects(nlp, examples)
    assert not parser.gold_problems, parser.gold_problems
    assert counts["words"] == sum(len(d) for d in golds) + 4 and counts["arc_moves"] > 0
    # Every word is shifted once, besides the arc moves.
    assert counts["moves"] >= counts["arc_moves"] + counts["words"]
    assert counts["moves_per_word"] == counts["moves"] / counts["words"]
    nlp.to_disk(tmp_path / "nm")
    output = lab("arc-moves", tmp_path / "nm", corpus, "--output", "moves.json", cwd=tmp_path)
    assert "| dev.spacy | nm |" in output
    assert json.loads((tmp_path / "moves.json").read_text())["arc_moves"] == counts["arc_moves"]


def test_workflow_evaluate_and_compare(tiny_pipeline, tmp_path):
    """evaluate records the test parse's transitions per word; compare reports
    it as a multiple of the static oracle's on the gold test trees."""
    from benchmarks.oracle_analysis import static_oracle_transitions_per_word

    root = tmp_path / "bench"
    for seed, run in ((0, "covington"), (1, "covington.seed1")):
        shutil.copytree(tiny_pipeline, root / "training" / "sample" / run / "model-best")
        # The training time the train step records; evaluate keeps it with the scores.
        (root / "training" / "sample" / run / "train_seconds.json").write_text(
            json.dumps({"seconds": 60.0 + 120 * seed}))
    args = ["--root", root, "--systems", "covington", "--seeds", "0,1"]
    lab("workflow", "evaluate", *args, cwd=ROOT)
    scores = json.loads((root / "metrics" / "sample" / "covington.json").read_text())
    per_word = scores["test"]["transitions_per_word"]
    assert per_word >= 1.0
    # The speed step times the runs that have a model and says which it left out.
    out = lab("workflow", "speed", "--root", root, "--systems", "covington",
              "--seeds", "0,1,2", "--speed-runs", "1", "--batch-sizes", "64", cwd=ROOT)
    assert "covington.seed2: no trained model" in out
    speed = json.loads((root / "metrics" / "sample" / "speed.json").read_text())
    assert set(speed["words_per_second"]) == {"covington", "covington.seed1"}
    out = lab("workflow", "compare", *args, cwd=ROOT)
    static = static_oracle_transitions_per_word(
        "covington", [gold_tree(s) for s in read_conllu(TEST_CONLLU)])
    assert json.loads((root / "metrics" / "sample" / "static_oracle.json").read_text()) == {
        "covington": pytest.approx(static)}
    table = (root / "results" / "comparison.md").read_text()
    [row] = [line for line in table.splitlines() if line.startswith("| sample |")]
    assert row in out
    # Scores of this evaluator have sentence lengths: their table is written too.
    [length_row] = [line for line in (root / "results" / "by_sentence_length.md").read_text().splitlines()
                    if line.startswith("| sample |")]
    assert length_row.startswith("| sample | covington | 2 |")
    # Both seeds are the same pipeline: no spread.
    assert scores["train_seconds"] == 60.0
    # No tagger in the pipeline: no UPOS accuracy.
    assert scores["test"]["upos"] is None and row.split(" | ")[8] == "n/a"
    assert row.endswith(f"| {per_word:.2f} ± 0.00 | {per_word / static:.2f}x ± 0.00x | 2 ± 1 |")
    # evaluate-raw: the test file's raw text through the pipeline, CoNLL 2018 scores.
    lab("workflow", "evaluate-raw", "--root", root, "--systems", "covington", cwd=ROOT)
    raw = json.loads((root / "metrics" / "sample" / "covington.raw.json").read_text())
    assert raw["words_per_second"] > 0 and 0 < raw["test"]["LAS"]["f1"] <= 100
    assert (root / "metrics" / "sample" / "covington.raw.test.conllu").is_file()
    out = lab("workflow", "compare", *args, cwd=ROOT)   # a raw-text table, seed 0 only
    [raw_row] = [line for line in (root / "results" / "raw_text.md").read_text().splitlines()
                 if line.startswith("| sample |")]
    # No senter in this pipeline: no sentence bound.
    assert raw["tokenizer"] == "en + sample train"      # learned from the training file
    assert raw_row.startswith("| sample | covington | 1 | en + sample train, any | ")
    assert raw_row in out
    assert f"| {raw['test']['LAS']['f1']:.2f} |" in raw_row
    # The scored pipeline is the saved one: `parse` on the test file's raw
    # text writes the words, tags and trees evaluate-raw scored.
    from spacy_nonmono.conllu_io import gold_documents

    model = root / "training" / "sample" / "covington" / "model-best"
    assert spacy.load(model).config["nlp"]["tokenizer"]["@tokenizers"] == \
        "spacy_nonmono.TreebankTokenizer.v1"
    (tmp_path / "test.txt").write_text("\n\n".join(gold_documents(read_conllu(TEST_CONLLU))),
                                       encoding="utf8")
    run_command("parse", model, tmp_path / "test.txt", "--output", tmp_path / "parsed.conllu",
                cwd=tmp_path, check=True)

    def words(path):
        return [line for line in path.read_text(encoding="utf8").splitlines()
                if line and not line.startswith("#")]

    assert words(tmp_path / "parsed.conllu") == \
        words(root / "metrics" / "sample" / "covington.raw.test.conllu")


@pytest.mark.slow
def test_workflow_builds_and_evaluates_an_ensemble(tiny_pipeline, tmp_path):
    """"A&B" is the ensemble of the runs A and B: train builds it from their
    models (and says which are missing), evaluate scores it; "A&B@mh4_arcs"
    reparses in the MH4 chart."""
    root = tmp_path / "bench"
    saved_global = ROOT / "tests" / "data" / "saved_pipelines" / "global"
    args = ["--root", root, "--systems", "covington&mh4+global,covington&mh4+global@mh4_arcs"]
    result = lab("workflow", "train", *args, cwd=ROOT, check=False)
    assert result.returncode == 2 and "the ensemble's members are not trained" in result.stderr
    shutil.copytree(tiny_pipeline, root / "training" / "sample" / "covington" / "model-best")
    shutil.copytree(saved_global, root / "training" / "sample" / "mh4+global" / "model-best")
    lab("workflow", "train", *args, cwd=ROOT)
    for name, structure in (("covington&mh4+global", "mst"),
                            ("covington&mh4+global@mh4_arcs", "mh4_arcs")):
        nlp = spacy.load(root / "training" / "sample" / name / "model-best")
        assert nlp.pipe_names == ["nonmono_ensemble"]
        assert nlp.get_pipe("nonmono_ensemble").cfg["structure"] == structure
    lab("workflow", "evaluate", *args, cwd=ROOT)
    for name in ("covington&mh4+global", "covington&mh4+global@mh4_arcs"):
        scores = json.loads((root / "metrics" / "sample" / f"{name}.json").read_text())
        assert 0 < scores["test"]["uas"] <= 100
    # From raw text too, with the learned tokenizer.
    lab("workflow", "evaluate-raw", *args, cwd=ROOT)
    for name in ("covington&mh4+global", "covington&mh4+global@mh4_arcs"):
        raw = json.loads((root / "metrics" / "sample" / f"{name}.raw.json").read_text())
        assert 0 < raw["test"]["LAS"]["f1"] <= 100 and raw["words_per_second"] > 0


def test_train_skip_scored(tmp_path):
    """train --skip-scored leaves out runs with scores (imported from an
    earlier session) and trains the others."""
    root = tmp_path / "bench"
    (root / "metrics" / "sample").mkdir(parents=True)
    (root / "metrics" / "sample" / "covington.json").write_text("{}")
    args = ["workflow", "train", "--root", root, "--systems", "covington"]
    out = lab(*args, "--skip-scored", cwd=ROOT)
    assert "covington: scored already" in out
    assert not (root / "training").exists()
    # Without the flag, or for a run without scores, it trains (here: fails
    # early, as no corpus was converted).
    for extra in ([], ["--skip-scored", "--seeds", "1"]):
        result = lab(*args, *extra, cwd=ROOT, check=False)
        assert result.returncode == 2 and "no converted corpus" in result.stderr


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
    """One seed: plain values, paired differences without a spread (a tie)."""
    results = {
        ("tb", "spacy_parser"): [{"seed": 0, "dev": fake_scores(70), "test": fake_scores(68),
                                  "words_per_second": 1000.0, "best_words_per_second": 1200.0}],
        ("tb", "covington"): [{"seed": 0, "dev": fake_scores(71),
                               "test": dict(fake_scores(69), upos=91.5),
                               "words_per_second": 900.0, "best_words_per_second": 1200.0,
                               "transitions_per_word": 3.125, "train_seconds": 1500.0}],
        ("tb", "udpipe"): [{"seed": 0, "dev": fake_scores(60), "test": fake_scores(58)}],
    }
    systems = ["spacy_parser", "covington", "udpipe"]
    # The static oracle makes 2.5 transitions per word on this treebank's test trees.
    table = comparison_table(results, ["tb"], systems, {"tb": {"covington": 2.5}})
    header, _, *rows = table.splitlines()
    # Dev chose the checkpoints: its columns say so.
    assert "| seeds | dev UAS (selection) | dev LAS (selection) | test UAS |" in header
    # UPOS accuracy and training minutes where the runs recorded them.
    assert rows[0] == ("| tb | spacy_parser | 1 | 75.00 | 70.00 | 73.00 | 68.00 | 63.00 | n/a "
                       "| 68.00 (2) | ref. | ref. | ref. | 1,000 | 1.00x | 1.00x | n/a | n/a | n/a |")
    assert rows[1] == ("| tb | covington | 1 | 76.00 | 71.00 | 74.00 | 69.00 | 64.00 | 91.50 "
                       "| 69.00 (2) | +1.00 (tie (1 seed)) | +1.00 (tie (1 seed)) | +1.00 (tie (1 seed)) "
                       "| 900 | 0.90x | 1.00x | 3.12 | 1.25x | 25 |")
    # UDPipe is named for what it runs; without speed numbers its cells say n/a.
    assert rows[2].startswith("| tb | udpipe (Parsito swap, forms only) | 1 | 65.00 |")
    assert rows[2].endswith("| n/a | n/a | n/a | n/a | n/a | n/a |")
    pytest.importorskip("matplotlib")
    written = write_plots(results, ["tb"], systems, tmp_path)
    assert [p.name for p in written] == ["las_by_length.png", "las_by_projectivity.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)
    # Scores evaluated with sentence lengths add that plot (for those systems).
    counts = {"uas": 80.0, "las": 70.0, "words": 10}
    results[("tb", "covington")][0]["test"]["by_sentence_length"] = {
        name: counts for name in ("1-10", "11-20", "21-30", "31+")}
    written = write_plots(results, ["tb"], systems, tmp_path)
    assert [p.name for p in written][-1] == "las_by_sentence_length.png"


def test_sentence_length_table():
    """Per sentence length: mean ± sd over seeds, paired differences to the
    first system that has sentence lengths; runs scored without them are
    left out."""
    def runs(las_by_seed, with_lengths=True):
        out = []
        for seed, las in enumerate(las_by_seed):
            test = fake_scores(las)
            if with_lengths:
                test["by_sentence_length"] = {
                    name: {"uas": las + 1, "las": las - k, "words": 10 * (k + 1)}
                    for k, name in enumerate(("1-10", "11-20", "21-30", "31+"))}
            out.append({"seed": seed, "dev": fake_scores(las), "test": test})
        return out

    results = {("tb", "old"): runs([50, 50], with_lengths=False),
               ("tb", "greedy"): runs([60, 62]), ("tb", "beam"): runs([61, 63])}
    assert sentence_length_table(results, ["tb"], ["old"]) is None
    header, _, greedy, beam = sentence_length_table(results, ["tb"], ["old", "greedy", "beam"]).splitlines()
    assert header.startswith("| treebank | system | seeds | LAS 1-10 words (Δ paired) |")
    assert greedy.startswith("| tb | greedy | 2 | 61.00 ± 1.41 (10 words) | 60.00 ± 1.41 (20 words) |")
    assert beam.startswith("| tb | beam | 2 | 62.00 ± 1.41; Δ +1.00 ± 0.00, better |")


def test_comparison_over_seeds():
    """Mean ± sd over seeds, and paired differences seed by seed: a
    difference is "better" only beyond twice its spread."""
    def runs(las_by_seed, speeds):
        return [{"seed": seed, "dev": fake_scores(las), "test": fake_scores(las),
                 "words_per_second": speed, "best_words_per_second": speed}
                for seed, (las, speed) in enumerate(zip(las_by_seed, speeds))]

    results = {
        ("tb", "ref"): runs([60, 62, 64], [1000, 1000, 2000]),
        ("tb", "steady"): runs([61, 63, 65], [1000, 500, 1000]),   # +1 at every seed
        ("tb", "noisy"): runs([66, 60, 64], [1000, 1000, 2000]),   # +6, -2, 0
    }
    summary = summarize(results, ["tb"], ["ref", "steady", "noisy"])
    assert summary[("tb", "ref")]["test LAS"] == (62.0, 2.0)
    steady = summary[("tb", "steady")]["paired test LAS"]
    assert steady["per_seed"] == [1.0, 1.0, 1.0] and steady["sd"] == 0.0
    assert steady["verdict"] == "better"
    noisy = summary[("tb", "noisy")]["paired test LAS"]
    assert noisy["mean"] == pytest.approx(4 / 3) and noisy["verdict"] == "tie"
    # Speed ratios are taken seed by seed: 1.0, 0.5, 0.5.
    mean, sd = summary[("tb", "steady")]["speed ratio"]
    assert mean == pytest.approx(2 / 3) and sd == pytest.approx(0.288675, abs=1e-5)
    row = comparison_table(results, ["tb"], ["ref", "steady", "noisy"]).splitlines()[3]
    assert row.startswith("| tb | steady | 3 | 68.00 ± 2.00 | 63.00 ± 2.00 |")
    assert "| +1.00 ± 0.00 (better) |" in row
    assert verdict(-3.0, 1.0, 3) == "worse" and verdict(2.0, 1.0, 3) == "tie"


def test_project_commands_parse():
    """Every project.yml command is a valid `python -m benchmarks` call (the
    lab, run from the project's root)."""
    import shlex

    from weasel.util import load_project_config

    from benchmarks import build_parser

    config = load_project_config(ROOT)
    assert config["workflows"]["all"] == ["convert", "train", "evaluate", "speed", "compare"]
    parser = build_parser()
    for command in config["commands"]:
        for line in command["script"]:
            words = shlex.split(line)
            assert words[:3] == ["python", "-m", "benchmarks"], line
            args = parser.parse_args(words[3:])
            assert args.ud_dir == Path(config["vars"]["ud_dir"])
            assert (args.ud_dir if args.ud_dir.is_absolute() else ROOT / args.ud_dir).exists()


def test_udpipe_parses_without_conllu_io(tmp_path):
    """UDPipe (swap system) trains on a few sentences; its timed `run` is the
    parse alone and gives the trees UDPipe's own CoNLL-U pipeline gives."""
    udpipe = pytest.importorskip("ufal.udpipe")
    import conllu

    from benchmarks.udpipe import train_udpipe
    from spacy_nonmono.evaluation.udpipe import UDPipeParser, blank_parse

    train = ROOT / "assets" / "sample" / "en_ewt-sample-train.conllu"
    blocks = train.read_text(encoding="utf8").split("\n\n")
    small = tmp_path / "small.conllu"
    small.write_text("\n\n".join(blocks[:40]) + "\n\n", encoding="utf8")
    parser = UDPipeParser(train_udpipe(small, small, tmp_path / "udpipe", iterations=1))
    sentences = read_conllu(TEST_CONLLU)[:30]
    trees = parser.parse(sentences)
    assert [len(heads) for heads, _ in trees] == [len(gold_tree(s)[0]) for s in sentences]
    pipeline = udpipe.Pipeline(parser.model, "conllu", udpipe.Pipeline.NONE,
                               udpipe.Pipeline.DEFAULT, "conllu")
    output = pipeline.process(blank_parse(sentences), udpipe.ProcessingError())
    assert trees == [gold_tree(s) for s in conllu.parse(output)]
    prepared = parser.prepare(sentences)   # UDPipe sentences, no CoNLL-U left to read
    assert isinstance(prepared, list) and isinstance(prepared[0], udpipe.Sentence)
    parser.run(prepared)
    assert [[w.head for w in s.words][1:] for s in prepared] == [heads for heads, _ in trees]


def test_oracle_moves_on_the_sample(tmp_path):
    """oracle-moves follows each static oracle on every gold tree of a
    treebank folder: the table and JSON count every sentence, and the swap
    systems swap only on non-projective sentences."""
    out = lab("oracle-moves", "--ud-dir", ROOT / "assets", "--treebanks", "sample",
              "--systems", "swap_lazy,swap_stay_eager,covington",
              "--output", tmp_path / "moves.json", cwd=ROOT)
    assert "| sample | swap_stay_eager |" in out
    counts = json.loads((tmp_path / "moves.json").read_text())
    n_sentences = len(read_conllu(next((ROOT / "assets" / "sample").glob("*-train.conllu"))))
    for system in ("swap_lazy", "swap_stay_eager", "covington"):
        c = counts[f"sample/{system}"]
        assert c["sentences"] == n_sentences
        assert c["transitions"] == sum(c["kinds"].values())
        assert c["swaps"] == c["nonprojective_swaps"] == c["kinds"].get("W", 0)
    assert counts["sample/swap_lazy"]["swaps"] > 0
    assert counts["sample/covington"]["swaps"] == 0


def test_workflow_system_names():
    """A name says what it trains: the plain system name the component's
    defaults, "-<oracle>" another oracle, "+<variant>" settings merged onto
    the defaults, left to right."""
    from benchmarks.system_names import VARIANTS, parse_system, system_name, training_config
    from spacy_nonmono.systems import get_system, systems

    key = "components.nonmono_parser."
    assert training_config("spacy_parser") == ("spacy_parser.cfg", {})
    for system in systems.get_all():
        assert training_config(system) == ("nonmono_parser.cfg", {key + "system": system})
        assert system_name(system) == system
    assert system_name("spacy_parser") is None and system_name("udpipe") is None

    def options(name):
        return json.loads(training_config(name)[1][key + "system_options"])

    assert training_config("swap_stay_eager-nonstatic")[1] == {
        key + "system": "swap_stay_eager", key + "oracle": "nonstatic"}
    assert training_config("swap_stay_eager+follow50")[1] == {
        key + "system": "swap_stay_eager", key + "follow_oracle_prob": "0.5"}
    assert options("covington+scan0+weighted95") == {
        "scan_explore_prob": 0.0, "tie_break": "weighted", "no_arc_weight": 0.95}
    assert options("covington_nm+replace_none+none") == {"replace_tie_break": "none",
                                                         "tie_break": "none"}
    assert options("covington_nm+lower+replace_none") == {"loss": "lower",
                                                          "replace_tie_break": "none"}
    assert options("covington+scan75+scan0") == {"scan_explore_prob": 0.0}   # left to right
    assert parse_system("covington-static+none").oracle == "static"
    assert training_config("arc_standard+proj_none")[1] == {
        key + "system": "arc_standard", key + "projectivize": '"none"'}
    assert training_config("arc_eager_unshift+proj_optimal")[1] == {
        key + "system": "arc_eager_unshift", key + "projectivize": '"optimal"'}
    assert parse_system("arc_standard-static").oracle == "static"
    # Beam search: ours on any system, spaCy's beam_parser for spacy_parser.
    assert training_config("swap_stay_eager+beam")[1] == {
        key + "system": "swap_stay_eager", key + "decoding": '"beam"'}
    assert training_config("spacy_parser+beam") == ("spacy_parser.cfg",
                                                    {"components.parser.factory": "beam_parser"})
    assert training_config("swap_stay_eager+beam+beam_every")[1] == {
        key + "system": "swap_stay_eager", key + "decoding": '"beam"',
        key + "decoding_options.update_prob": "1.0"}
    assert training_config("covington_nm+beam+early")[1] == {
        key + "system": "covington_nm", key + "decoding": '"beam"',
        key + "decoding_options.update": '"early"'}
    # A variant that repeats a default trains the default: "covington+scan75"
    # is "covington", "covington_nm+replace75" is "covington_nm".
    for name, system in (("covington+scan75", "covington"),
                         ("covington_nm+replace75", "covington_nm")):
        default = get_system(system)(labels=["a"]).options
        assert all(default[k] == v for k, v in options(name).items())
    # Every variant is taken by some system (+beam_every after +beam).
    for variant in VARIANTS:
        assert any(_parses(f"{system}+{variant}") or _parses(f"{system}+beam+{variant}")
                   or _parses(f"{system}+global+{variant}")
                   for system in systems.get_all()), variant


def _parses(name):
    from spacy_nonmono.cli.common import InputError
    from benchmarks.system_names import parse_system

    try:
        parse_system(name)
    except InputError:
        return False
    return True


@pytest.mark.parametrize("name,message", [
    ("covington_foo", "Unknown transition system 'covington_foo'. Known transition systems: "),
    ("covington_foo", "A name is spacy_parser, udpipe or <system>[-<oracle>][+<variant>]... "
                      "with a system of arc_eager, "),
    ("swap_lazy-dynamic", "Unknown oracle 'dynamic' for system 'swap_lazy': expected one of "
                          "'static'"),
    ("covington_nm-upper", "Unknown oracle 'upper' for system 'covington_nm'"),
    # the names before 0.1 that would silently train something else
    ("covington-dynamic", "'dynamic' is covington's default oracle: leave it out ('covington')"),
    ("swap_stay_eager-dynamic+wide", "leave it out ('swap_stay_eager+wide')"),
    ("covington+bogus", "no variant 'bogus'; the variants: scan0, scan75, "),
    ("covington+", "no variant ''"),
    ("covington+wide", "covington+wide: System 'covington' takes no option 'context'"),
    # global decoding: its structures, its model variants
    ("mst", "'mst' is a structure of global decoding, not a transition system"),
    ("covington+global", "Unknown structure 'covington'. Known structures: 1ec, 1ec_arcs, "
                         "mh3_arcs, mh3_chart, mh4_arcs, mh4_chart, mst"),
    # ensembles join trained runs
    ("mh4+global&udpipe", "joins trained pipelines, not 'udpipe'"),
    ("mh4+global&", "joins trained pipelines, not an empty name"),
    ("mh4+global@mh4_arcs", "@ names the structure of an ensemble: A&B@<structure>"),
    ("mh4+global&mst+global@mh4_chart", "one arc table"),
    ("mh4+global&mst+global@nope", "Unknown structure 'nope'"),
    ("mh4+global&covington_foo", "unknown system name 'covington_foo': Unknown transition"),
    ("mh4-static+global", "oracle must be null, not 'static'"),
    ("mh4+two", "+two is a feature set of the global model: add +global first"),
    ("mh4+global+bilstm", "+global's and +full's models have their BiLSTM already"),
    ("covington_nm+full+bilstm", "+global's and +full's models have their BiLSTM already"),
    ("covington_nm+biaffine", "+biaffine sets the global model: add +global first"),
    ("covington_nm+full+nomlpdrop", "+nomlpdrop sets the global model: add +global first"),
    ("spacy_parser+full+nomlpdrop", "spacy_parser takes no variant but"),
    ("udpipe+bilstm", "udpipe takes no variant but spacy_parser+bilstm"),
    ("spacy_parser+bilstm+beam", "spacy_parser takes no variant but spacy_parser+bilstm, "
                                 "spacy_parser+full and spacy_parser[+full]+beam"),
    ("spacy_parser+biaffine", "spacy_parser takes no variant but"),
    ("mh4+global+notags", "+notags takes an ingredient out of the full pipeline: add +full first"),
    ("spacy_parser+full+two", "spacy_parser takes no variant but"),
    ("mst+beam", "'mst' is a structure of global decoding, not a transition system"),
    ("swap_stay_eager+beam_every", "+beam_every sets how the beam trains: add +beam first"),
    ("covington_nm+early", "+early sets how the beam trains: add +beam first"),
    ("mh4+prune", "+prune prunes exact decoding: add +global first"),
    ("arc_eager+scan0", "System 'arc_eager' takes no option 'scan_explore_prob'"),
    ("covington+proj_optimal", "builds non-projective trees: projectivize must be 'none'"),
    ("arc_standard-optimal_step", "'optimal_step' is arc_standard's default oracle"),
])
def test_workflow_system_name_errors(name, message):
    from spacy_nonmono.cli.common import InputError
    from benchmarks.system_names import parse_system

    with pytest.raises(InputError) as error:
        parse_system(name)
    assert str(error.value).startswith(f"unknown system name {name!r}: ")
    assert message in str(error.value)


def test_workflow_global_and_encoder_names_train_what_they_say():
    """+global trains the global model's config, +two its other feature
    set, +bilstm puts the same BiLSTM on a greedy parser's tok2vec."""
    from thinc.api import Config

    from benchmarks.system_names import training_config
    from spacy_nonmono.models.global_model import BILSTM_CONFIG, DEFAULT_CONFIG

    key = "components.nonmono_parser."
    config, overrides = training_config("mh4+global+two")
    assert config == "nonmono_parser.cfg"
    assert json.loads(overrides[key + "decoding"]) == "global"
    assert json.loads(overrides[key + "model"]) == Config().from_str(DEFAULT_CONFIG)["model"]
    assert json.loads(overrides[key + "model.features"]) == "two"
    bilstm = Config().from_str(BILSTM_CONFIG)["tok2vec"]
    assert json.loads(training_config("covington_nm+bilstm")[1][key + "model.tok2vec"]) == bilstm
    config, overrides = training_config("spacy_parser+bilstm")
    assert config == "spacy_parser.cfg"
    assert json.loads(overrides["components.parser.model.tok2vec"]) == bilstm
    # The encoder inside the global model is the same one.
    assert Config().from_str(DEFAULT_CONFIG)["model"]["tok2vec"] == bilstm


def test_full_pipeline_ablations_take_one_ingredient_out(tmp_path):
    """+full's ablation variants change just their settings of full_pipeline.cfg."""
    from thinc.api import Config

    from benchmarks.system_names import FULL_VARIANTS, GREEDY_MODEL_VARIANTS, training_config

    def flat(config, prefix=""):
        out = {}
        for key, value in config.items():
            if isinstance(value, dict):
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[prefix + key] = value
        return out

    def read(name):
        path, overrides = training_config(name, tmp_path)
        assert overrides == {} and path == str((tmp_path / f"{name}.cfg").resolve())
        return flat(Config().from_disk(path, interpolate=False))

    fulls = {parser: read(f"{parser}+full") for parser in ("covington_nm", "mh4+global")}
    for variant, settings in FULL_VARIANTS.items():
        parser = "covington_nm" if variant in GREEDY_MODEL_VARIANTS else "mh4+global"
        full = fulls[parser]
        ablated = read(f"{parser}+full+{variant}")
        changed = {k for k in set(full) | set(ablated)
                   if full.get(k, "absent") != ablated.get(k, "absent")}
        # A section's settings (marks20's augmenter, null in the full
        # config) compare key by key.
        expected, sections = {}, {k for k, v in settings.items() if isinstance(v, dict)}
        for key, value in settings.items():
            expected.update(flat(value, f"{key}.") if key in sections else {key: value})
        # chars = null drops the character encoder's settings with it.
        first = f"{next(iter(settings))}."
        assert {k for k in changed if not k.startswith(first)} - sections == \
            {k for k in expected if not k.startswith(first)}
        assert changed >= set(expected)
        assert all(ablated[k] == v for k, v in expected.items())
    assert read("spacy_parser+full+notags")["components.morphologizer.model.tok2vec.scale"] == 0.0


def test_workflow_refuses_a_wrong_name_before_running(tmp_path):
    result = lab("workflow", "train", "--root", tmp_path,
                 "--systems", "spacy_parser,covington-dynamic", cwd=ROOT, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown system name 'covington-dynamic'" in result.stderr
    assert not (tmp_path / "training").exists()


def test_stored_results_use_valid_names():
    """Every stored run and every name of the names table of
    docs/results/README.md is a valid workflow system name."""
    import re

    results = ROOT / "docs" / "results"
    from benchmarks.records import read_packed

    # The run records, packed per page (`records pack`): <treebank>/<run>.json.
    runs = {key.split("/")[-1].split(".")[0] for packed in results.glob("*/runs*.json.gz")
            for key in read_packed(packed)[0] if key.count("/") == 1}
    runs -= {"speed", "static_oracle"}
    assert {"covington", "covington_nm", "covington+scan0", "swap_stay_eager-nonstatic"} <= runs
    index = (results / "README.md").read_text(encoding="utf8")
    table = index[index.index("### Names before 0.1"):index.index("## Pages and tables")]
    now = {name for row in table.splitlines()[4:] if row.startswith("|")
           for name in re.findall(r"`([^`]+)`", row.split("|")[2])}
    assert "covington_nm+replace_none+none" in now
    names = [name for name in runs | now if "<" not in name and not name.startswith("+")]
    assert [name for name in sorted(names) if not _parses(name)] == []


@pytest.mark.slow
def test_train_speed_command(tmp_path):
    """train-speed times workflow systems side by side on the same batches
    and writes its table as JSON; a name the workflow refuses is refused."""
    from spacy.tokens import DocBin

    from conftest import sample_docs

    corpus = tmp_path / "train.spacy"
    DocBin(docs=sample_docs("train", limit=40)).to_disk(corpus)
    # A +full system counts its vocabulary from the corpus.
    out = lab("train-speed", corpus, "--lang", "en", "--systems",
              "arc_standard-static,arc_standard+proj_none,mst+global+full", "--steps", "2",
              "--batch-size", "4", "--json", tmp_path / "speed.json", cwd=tmp_path)
    assert "| arc_standard-static |" in out and "| arc_standard+proj_none |" in out
    data = json.loads((tmp_path / "speed.json").read_text())
    assert [row["system"] for row in data["systems"]] == ["arc_standard-static",
                                                         "arc_standard+proj_none",
                                                         "mst+global+full"]
    assert data["systems"][0]["ratio"] == 1.0 and data["systems"][1]["seconds"] > 0
    bad = lab("train-speed", corpus, "--systems", "covington+proj_optimal", cwd=tmp_path,
              check=False)
    assert bad.returncode == 2 and "projectivize must be 'none'" in bad.stderr


@pytest.mark.slow   # trains a full pipeline twice
def test_gpu_check_command(tmp_path):
    """gpu-check trains and parses a full pipeline twice from one seed (here
    both on the CPU, --gpu-id -1) and reports both; without a GPU, --gpu-id 0
    stops before training with one error line."""
    from spacy.tokens import DocBin

    from conftest import sample_docs

    corpus = tmp_path / "train.spacy"
    DocBin(docs=sample_docs("train", limit=20)).to_disk(corpus)
    out = lab("gpu-check", corpus, "--lang", "en", "--gpu-id", "-1", "--systems",
              "mh4+global+full", "--steps", "2", "--batch-size", "2", "--parse-docs", "4",
              "--json", tmp_path / "gpu.json", cwd=tmp_path)
    assert "device: CPU (second run)" in out and "| mh4+global+full |" in out
    [row] = json.loads((tmp_path / "gpu.json").read_text())["systems"]
    assert row["cpu"]["sentences_not_trees"] == row["device"]["sentences_not_trees"] == 0
    assert row["cpu"]["ms_per_update"] > 0 and row["device"]["words_per_second"] > 0
    try:
        import cupy  # noqa: F401
    except ImportError:
        bad = lab("gpu-check", corpus, "--gpu-id", "0", cwd=tmp_path, check=False)
        assert bad.returncode == 2 and "--gpu-id 0: no GPU" in bad.stderr


@pytest.mark.slow
def test_beam_systems_train(tmp_path):
    """The beam names build pipelines that train: spaCy's beam_parser from
    spacy_parser.cfg, ours with decoding = "beam" and its training settings
    (a few steps each)."""
    from spacy.tokens import DocBin

    from conftest import sample_docs

    corpus = tmp_path / "train.spacy"
    DocBin(docs=sample_docs("train", limit=40)).to_disk(corpus)
    out = lab("train-speed", corpus, "--lang", "en", "--systems",
              "spacy_parser+beam,covington_nm+beam,swap_stay_eager+beam+early+beam_every",
              "--steps", "2", "--batch-size", "4", cwd=tmp_path)
    for name in ("spacy_parser+beam", "covington_nm+beam", "swap_stay_eager+beam+early+beam_every"):
        assert f"| {name} |" in out


def test_raw_text_table_shows_the_published_scores_beside_ours():
    """Each treebank's raw-text rows end with the others' published F1 on the
    same test set, each in its metric's column."""
    from benchmarks.compare import RAW_METRICS, raw_text_table

    scores = {m: {"f1": 90.0} for m in RAW_METRICS}
    runs = [{"seed": 0, "test": scores, "tokenizer": "la", "senter_max_length": 60,
             "words_per_second": 1000}]
    table = raw_text_table({("la_perseus", "mh4"): runs}, ["la_perseus"], ["mh4"])
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in table.splitlines()[2:]]
    assert rows[0][1:4] == ["mh4", "1", "la, ≤ 60"]
    baseline = next(row for row in rows if row[1] == "CoNLL 2017 baseline (UDPipe 1.1)")
    column = {m: 4 + k for k, m in enumerate(RAW_METRICS)}
    assert all(len(row) == len(rows[0]) for row in rows)
    assert (baseline[column["Sentences"]], baseline[column["LAS"]]) == ("98.09", "43.77")
    assert baseline[column["Tokens"]] == ""
    assert [row[1] for row in rows[1:]] == ["CoNLL 2017 baseline (UDPipe 1.1)", "UDPipe 1.2",
                                            "CoNLL 2017 best", "C2L2 (Shi et al. 2017)"]
    assert baseline[column["XPOS"]] == "67.70"
    # A column the gold file lacks is marked, not scored.
    runs[0]["not_applicable"] = ["XPOS"]
    table = raw_text_table({("la_perseus", "mh4"): runs}, ["la_perseus"], ["mh4"])
    ours = [cell.strip() for cell in table.splitlines()[2].split("|")[1:-1]]
    assert ours[column["XPOS"]] == "n/a" and ours[column["UPOS"]] == "90.00"


def test_an_ensemble_member_may_name_its_seed():
    """"A&A.seed1&A.seed2" joins three seeds of one system, whatever the
    ensemble's own seed; a plain member is the ensemble's seed's run."""
    from benchmarks.system_names import member_run, parse_system
    from spacy_nonmono.cli.common import InputError

    spec = parse_system("covington&covington.seed1&covington.seed2@mh4_arcs")
    assert spec.members == ("covington", "covington.seed1", "covington.seed2")
    assert [member_run(m, 2) for m in spec.members] == \
        ["covington.seed2", "covington.seed1", "covington.seed2"]
    assert member_run("covington.seed1", 0) == "covington.seed1"
    with pytest.raises(InputError, match="unknown system name"):
        parse_system("covington&nosuch.seed1")
