"""Parsing at scale as users do it: the Dask recipe (spacy_nonmono.distributed:
the pipeline loaded once per worker of a 2-worker local cluster) parses
10,000 sentences exactly as nlp.pipe does (slow tier; its partitions and
their order are checked in the fast tier with a client that runs each task
at once); the component parses when its weights arrive read-only (as Ray's
object store hands them out)."""
import pickle

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from conftest import make_global_nlp, make_nlp, sample_docs, train


def arcs(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


@pytest.fixture(scope="module")
def examples():
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d)
            for d in sample_docs("train", limit=20)]


def read_only(nlp):
    """The pipeline's parameters replaced by read-only arrays."""
    for node in nlp.get_pipe("nonmono_parser").model.walk():
        for name in node.param_names:
            if node.has_param(name):
                value = node.get_param(name).copy()
                value.setflags(write=False)
                node.set_param(name, value)
    return nlp


@pytest.mark.parametrize("decoding", ["greedy", "beam", "global"])
def test_parses_with_read_only_weights(decoding, examples):
    nlp = make_global_nlp("mh4") if decoding == "global" else make_nlp(decoding=decoding)
    train(nlp, examples, epochs=2)
    words = [[t.text for t in eg.reference] for eg in examples]
    expected = arcs(nlp.pipe([Doc(nlp.vocab, words=w) for w in words]))
    shipped = read_only(pickle.loads(pickle.dumps(nlp)))
    assert arcs(shipped.pipe([Doc(shipped.vocab, words=w) for w in words])) == expected


class InlineClient:
    """The part of a dask.distributed.Client the recipe uses, running each
    task at once in this process: its submissions are recorded."""

    def __init__(self):
        self.submitted = []

    def submit(self, function, *args, pure=True):
        assert pure is False      # each partition is parsed, never taken from a cache
        self.submitted.append(args)
        return function(*args)

    def gather(self, futures):
        return list(futures)


def test_dask_recipe_partitions_in_order(examples, tmp_path):
    """Partitions of partition_size texts (raw strings or word lists), the
    pipeline loaded once per process, the docs back in input order on the
    given vocab, parsed as nlp.pipe parses them."""
    from spacy_nonmono.distributed import parse_on_dask, worker_pipeline

    nlp = make_nlp()
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "pipeline")
    words = [[t.text for t in eg.reference] for eg in examples[:9]]
    texts = words + ["A raw text . It has two sentences ."]
    loaded = spacy.load(tmp_path / "pipeline")
    expected = arcs(loaded.pipe([Doc(loaded.vocab, words=w) for w in words] + texts[-1:]))
    client = InlineClient()
    worker_pipeline.cache_clear()
    docs = parse_on_dask(client, tmp_path / "pipeline", texts, partition_size=4, batch_size=3,
                         vocab=loaded.vocab)
    path = str((tmp_path / "pipeline").resolve())
    assert [(args[0], len(args[1]), args[2]) for args in client.submitted] == \
        [(path, 4, 3), (path, 4, 3), (path, 2, 3)]
    assert worker_pipeline.cache_info().misses == 1
    assert [[t.text for t in doc] for doc in docs[:-1]] == words
    assert docs[-1].text == texts[-1] and all(doc.vocab is loaded.vocab for doc in docs)
    assert arcs(docs) == expected
    with pytest.raises(ValueError, match="partition_size must be at least 1"):
        parse_on_dask(client, tmp_path / "pipeline", texts, partition_size=0)


@pytest.mark.slow
def test_dask_recipe_parses_as_nlp_pipe(examples, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    from spacy_nonmono.distributed import parse_on_dask

    nlp = make_nlp()
    train(nlp, examples, epochs=2)
    nlp.to_disk(tmp_path / "pipeline")
    sentences = [[t.text for t in doc] for doc in sample_docs("dev")]
    texts = [sentences[k % len(sentences)] for k in range(10_000)]
    loaded = spacy.load(tmp_path / "pipeline")
    expected = arcs(loaded.pipe(Doc(loaded.vocab, words=w) for w in texts))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        docs = parse_on_dask(client, tmp_path / "pipeline", texts, partition_size=2500)
        assert len(client.scheduler_info()["workers"]) == 2
    assert [[t.text for t in doc] for doc in docs] == texts
    assert arcs(docs) == expected
    with pytest.raises(ValueError, match="partition_size must be at least 1"):
        parse_on_dask(None, tmp_path / "pipeline", texts, partition_size=0)
