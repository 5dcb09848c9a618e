"""BLAS threads: pinned to one while timing speed, one per nlp.pipe worker."""
import os

import pytest
import spacy
from spacy.language import Language

from spacy_nonmono.evaluation import read_conllu
from spacy_nonmono.evaluation.speed import (TIMING_BLAS_THREADS, blas_note,
                                            measure_speed_by_batch_size)
from spacy_nonmono.threads import (THREAD_ENV_VARS, blas_libraries, blas_threads,
                                   one_blas_thread, one_blas_thread_in_worker)
from test_cli_errors import VALID, parser_pipeline, run_cli  # noqa: F401 (a fixture)
from test_evaluation import GOLD, gold_path  # noqa: F401 (a fixture)


def thread_counts():
    return [lib["num_threads"] for lib in blas_libraries()]


@pytest.fixture
def blas():
    """The BLAS libraries' thread counts now; skips without any."""
    if not blas_libraries():
        pytest.skip("threadpoolctl finds no BLAS library")
    return thread_counts()


def test_one_blas_thread_limits_and_restores(blas):
    with blas_threads(2):
        before = thread_counts()
        with one_blas_thread():
            assert thread_counts() == [1] * len(before)
        assert thread_counts() == before
    assert thread_counts() == blas


class RecordingTimer:
    """A speed timer whose run records the BLAS thread counts it runs under."""

    def __init__(self, batch_size=None):
        self.seen = []
        if batch_size is not None:
            self.batch_size = batch_size

    def prepare(self, sentences):
        return sentences

    def run(self, prepared):
        self.seen.append(thread_counts())


def test_speed_is_timed_on_one_blas_thread(blas, gold_path):
    timers = {"nlp": RecordingTimer(batch_size=1000), "udpipe": RecordingTimer()}
    speed = measure_speed_by_batch_size(timers, read_conllu(gold_path), (1000, 64), n_runs=2)
    assert set(speed["by_batch_size"]) == {"1000", "64"}
    for timer in timers.values():
        # One warm-up and two timed runs per batch size, all pinned.
        assert timer.seen == [[TIMING_BLAS_THREADS] * len(blas)] * 6
    assert thread_counts() == blas


def test_speed_reports_say_blas_is_pinned(blas, parser_pipeline, tmp_path):
    note = blas_note()
    assert note.startswith(f"BLAS threads pinned to {TIMING_BLAS_THREADS} while timing")
    assert blas_libraries()[0]["library"] in note
    (tmp_path / "gold.conllu").write_text(VALID, encoding="utf8")
    result = run_cli("speed", parser_pipeline, "--gold", "gold.conllu", "--runs", "1",
                     "--batch-sizes", "64", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("BLAS threads")]
    assert line.startswith("BLAS threads pinned to 1 while timing (otherwise ")


@Language.component("test_threads_recorder")
def record_blas_threads(doc):
    one_blas_thread_in_worker()   # what nonmono_parser's predict does
    doc.user_data["blas"] = thread_counts()
    doc.user_data["pid"] = os.getpid()
    return doc


def test_nlp_pipe_workers_use_one_blas_thread(blas, monkeypatch):
    for name in THREAD_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    nlp = spacy.blank("en")
    nlp.add_pipe("test_threads_recorder")
    # The main process is left alone ...
    assert [doc.user_data["blas"] for doc in nlp.pipe(["a b"])] == [blas]
    assert thread_counts() == blas
    # ... and each worker limits itself.
    docs = list(nlp.pipe([f"text {i}" for i in range(8)], n_process=2, batch_size=2))
    assert {doc.user_data["pid"] for doc in docs}.isdisjoint({os.getpid()})
    assert [doc.user_data["blas"] for doc in docs] == [[1] * len(blas)] * 8
    assert thread_counts() == blas
