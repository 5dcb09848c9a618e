"""Parsing a large corpus on a Dask cluster (`pip install "spacy-nonmono[dask]"`).

Each worker process loads the pipeline once (kept per process by path) and
parses whole partitions with `nlp.pipe`; a partition travels back as DocBin
bytes, so the client receives Docs on its own vocab. Usage, as in
docs/scaling.md:

    from dask.distributed import Client, LocalCluster
    from spacy_nonmono.distributed import parse_on_dask

    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
        docs = parse_on_dask(client, "training/model-best", texts)
"""
from functools import lru_cache
from pathlib import Path
from typing import List, Sequence, Union

Text = Union[str, Sequence[str]]      # raw text, or the words of a pre-tokenized text


@lru_cache(maxsize=4)
def worker_pipeline(path: str):
    """The pipeline at `path`, loaded once per process."""
    import spacy

    return spacy.load(path)


def parse_partition(path: str, texts: Sequence[Text], batch_size: int) -> bytes:
    """Parse texts (raw strings, or word lists kept as tokens) with the
    pipeline at `path`; the Docs as DocBin bytes."""
    from spacy.tokens import Doc, DocBin

    nlp = worker_pipeline(path)
    inputs = [text if isinstance(text, str) else Doc(nlp.vocab, words=list(text))
              for text in texts]
    return DocBin(docs=nlp.pipe(inputs, batch_size=batch_size)).to_bytes()


def parse_on_dask(client, pipeline: Union[str, Path], texts: Sequence[Text],
                  partition_size: int = 1000, batch_size: int = 256, vocab=None) -> List:
    """Docs of `texts` parsed on the cluster of a `dask.distributed.Client`,
    in input order: partitions of `partition_size` texts go to the workers,
    each of which loads the pipeline (a path every worker can read) once.
    vocab: the Vocab the Docs are made on (default: a new one; pass
    `nlp.vocab` to use them with a pipeline of the client)."""
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    if partition_size < 1:
        raise ValueError(f"partition_size must be at least 1, got {partition_size}.")
    path = str(Path(pipeline).resolve())
    texts = list(texts)
    futures = [client.submit(parse_partition, path, texts[start:start + partition_size],
                             batch_size, pure=False)
               for start in range(0, len(texts), partition_size)]
    vocab = vocab if vocab is not None else Vocab()
    docs = []
    for data in client.gather(futures):
        docs.extend(DocBin().from_bytes(data).get_docs(vocab))
    return docs
