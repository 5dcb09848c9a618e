"""Outputs written atomically (`spacy_nonmono.files`), and commands that
fail leaving an existing output as it was."""
import os
import stat

import pytest
import spacy

from conftest import run_command
from spacy_nonmono.conllu_io import read_conllu
from spacy_nonmono.evaluation import evaluate_sentences
from spacy_nonmono.files import atomic_output, write_text_atomic

GOLD = ("# sent_id = 1\n# text = a b\n"
        "1\ta\ta\tNOUN\tNn\tCase=Nom\t0\troot\t_\t_\n"
        "2\tb\tb\tVERB\tVb\t_\t1\tdep\t_\t_\n\n")


def test_atomic_output_replaces_only_on_success(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    with pytest.raises(RuntimeError):
        with atomic_output(path) as out:
            out.write("half of the new")
            raise RuntimeError("the command failed")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]   # no temporary left
    write_text_atomic(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640            # its permissions kept
    fresh = tmp_path / "fresh.bin"
    with atomic_output(fresh, "wb") as out:
        out.write(b"\x00\x01")
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~mask   # as open() would make it


class ChainPipeline:
    """A stand-in pipeline: every word attached to the first; with
    `fail_at`, nlp.pipe fails at that doc."""

    def __init__(self, fail_at=None):
        self.vocab = spacy.blank("xx").vocab
        self.fail_at = fail_at

    def pipe(self, docs, batch_size=None):
        from spacy.tokens import Doc

        for k, doc in enumerate(docs):
            if k == self.fail_at:
                raise RuntimeError("the parser failed")
            yield Doc(doc.vocab, words=[t.text for t in doc], heads=[0] * len(doc),
                      deps=["ROOT"] + ["dep"] * (len(doc) - 1))


def test_a_failing_evaluation_leaves_the_output_as_it_was(tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text(GOLD * 2, encoding="utf8")
    out = tmp_path / "pred.conllu"
    out.write_text("earlier predictions\n")
    with pytest.raises(RuntimeError):
        evaluate_sentences(ChainPipeline(fail_at=1), read_conllu(gold), output=out)
    assert out.read_text() == "earlier predictions\n"


def test_prediction_files_hold_predictions_only(tmp_path):
    """A pipeline with a parser only: the file's UPOS, XPOS, FEATS and LEMMA
    are "_", not the gold's (which an official scorer would count as right)."""
    gold = tmp_path / "gold.conllu"
    gold.write_text(GOLD, encoding="utf8")
    evaluation = evaluate_sentences(ChainPipeline(), read_conllu(gold), output=tmp_path / "pred.conllu")
    assert evaluation.words.las == 100.0
    [sentence] = read_conllu(tmp_path / "pred.conllu")
    assert [(t["lemma"], t["upos"], t["xpos"], t["feats"], t["head"], t["deprel"])
            for t in sentence] == [("_", "_", None, None, 0, "root"), ("_", "_", None, None, 1, "dep")]


def test_a_failing_init_config_leaves_the_output_as_it_was(tmp_path):
    (tmp_path / "a.cfg").write_text("mine\n")
    result = run_command("init-config", "a.cfg", "--system", "no_such_system", cwd=tmp_path)
    assert result.returncode == 2
    assert (tmp_path / "a.cfg").read_text() == "mine\n"
