"""BLAS threads: one thread while timing, one thread per `nlp.pipe` worker.

numpy's BLAS (OpenBLAS, MKL) starts a thread per core; on a loaded machine,
or with several processes each doing so, the threads fight over the cores and
throughput collapses (measured: 7x slower on 2 busy cores)."""
import multiprocessing
import os
from contextlib import contextmanager
from typing import Dict, List

from threadpoolctl import threadpool_info, threadpool_limits

# Set by a user who chose the thread count: left alone in workers.
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def blas_threads(n: int):
    """At most n threads in every loaded BLAS library inside the block; the
    previous counts restored after it."""
    with threadpool_limits(limits=n, user_api="blas"):
        yield


def one_blas_thread():
    return blas_threads(1)


def blas_libraries() -> List[Dict[str, object]]:
    """Each loaded BLAS library: "library" (e.g. openblas), "version" and
    "num_threads" now in force (threadpoolctl's threadpool_info)."""
    return [{"library": info["internal_api"], "version": info.get("version"),
             "num_threads": info["num_threads"]}
            for info in threadpool_info() if info["user_api"] == "blas"]


def describe_blas() -> str:
    """e.g. "openblas 0.3.27: 4 threads", for reports ("" without BLAS)."""
    return "; ".join(" ".join(filter(None, (lib["library"], lib["version"])))
                     + f": {lib['num_threads']} threads" for lib in blas_libraries())


_checked_pid = None


def one_blas_thread_in_worker() -> None:
    """In a multiprocessing child (e.g. a worker of nlp.pipe(n_process=k)),
    limit BLAS to one thread for the rest of the process, so that k workers
    do not start k x cores threads; in the main process, or where the user
    set OMP/OPENBLAS/MKL_NUM_THREADS, do nothing. Cheap after the first call
    in a process (fork copies the check, hence the pid)."""
    global _checked_pid
    pid = os.getpid()
    if _checked_pid == pid:
        return
    _checked_pid = pid
    if multiprocessing.parent_process() is not None and \
            not any(os.environ.get(name) for name in THREAD_ENV_VARS):
        threadpool_limits(limits=1, user_api="blas")
