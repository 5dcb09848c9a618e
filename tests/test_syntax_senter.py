"""`nonmono_syntax_senter`: the head scores' gradient, training on docs of
several sentences, boundaries set before it, saving, loading and pickling."""
import pickle

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model, NumpyOps

from spacy_nonmono.graph.segmentation import best_segmentation
from spacy_nonmono.models.sentence_heads import SentenceHeads, band_blocks, masked_log_softmax
from spacy_nonmono.pipeline.senter import bound_sentences

from conftest import SMALL_MODEL, sample_docs

# The sample's docs hold a few sentences the parser cannot train on (it says so).
pytestmark = pytest.mark.filterwarnings("ignore:.*Training will skip some gold sentences")

SMALL = {"@architectures": "spacy_nonmono.SentenceHeads.v1", "width": 16, "dropout": 0.0,
         "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None,
                     "width": 16, "depth": 1, "embed_size": 300, "window_size": 1,
                     "maxout_pieces": 2, "subword_features": False}}


class FixedVectors(Model):
    """Token vectors given by a table (a stand-in tok2vec for the gradient check)."""

    def __init__(self, X):
        def forward(model, docs, is_train):
            def backprop(dXs):
                model.attrs["dX"] = dXs
                return []
            return [model.attrs["X"]], backprop

        super().__init__("fixed", forward, dims={"nO": X.shape[1]}, attrs={"X": X})


def test_band_blocks_fill_every_reachable_cell_once():
    for n, L in ((1, 3), (5, 2), (70, 4), (150, 60)):
        seen = numpy.zeros((n, 2 * L - 1), dtype=int)
        for s, e, cs, ce, (rows, cols), (brows, bcols) in band_blocks(n, L):  # noqa: B007
            seen[rows, cols] += 1
            assert numpy.all(cs + bcols == rows + cols - (L - 1))
            assert numpy.all(s + brows == rows)
        h = numpy.arange(n)[:, None] + numpy.arange(2 * L - 1) - (L - 1)
        expected = (h >= 0) & (h < n) & (numpy.arange(2 * L - 1) != L - 1)
        assert numpy.array_equal(seen, expected.astype(int))


def test_the_gradient_matches_finite_differences():
    ops = NumpyOps()
    rng = numpy.random.default_rng(0)
    n, L, nI = 7, 3, 5
    X = rng.normal(size=(n, nI))
    model = SentenceHeads(FixedVectors(X), width=4, dropout=0.0)
    model.attrs["max_length"] = L
    model.initialize()
    names = ("Wh", "Wd", "U", "v", "r", "r0", "bh", "bd", "w", "w0")
    for name in names:
        model.set_param(name, rng.normal(size=model.get_param(name).shape))
    # The cells the model fills: heads within the doc, the root and start columns.
    h = numpy.arange(n)[:, None] + numpy.arange(2 * L) - (L - 1)
    filled = ((h >= 0) & (h < n)) | (numpy.arange(2 * L) == 2 * L - 1)
    weights = numpy.where(filled, rng.normal(size=(n, 2 * L)), 0.0)

    def objective():
        return float((weights * model.predict([None])[0]).sum())

    outputs, backprop = model.begin_update([None])
    assert outputs[0].shape == (n, 2 * L)
    backprop([ops.asarray(weights)])
    checked = [(name, model.get_param(name), model.get_grad(name)) for name in names]
    for name, values, grad in checked + [("X", X, model.layers[0].attrs["dX"][0])]:
        for index in list(numpy.ndindex(values.shape))[:6]:
            saved = values[index]
            values[index] = saved + 1e-6
            up = objective()
            values[index] = saved - 1e-6
            down = objective()
            values[index] = saved
            assert grad[index] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-6), name


def test_masked_log_softmax_is_a_distribution_over_the_heads_in_the_doc():
    log_p = masked_log_softmax(numpy.zeros((4, 6)), 3)
    assert log_p.shape == (4, 5)
    assert numpy.allclose(numpy.exp(log_p).sum(axis=1), 1.0)
    assert log_p[0, 0] == -numpy.inf and log_p[3, 4] == -numpy.inf
    assert log_p[0, 2] == pytest.approx(numpy.log(1 / 3))


def test_the_loss_reads_each_words_gold_head_or_root():
    nlp = spacy.blank("en")
    senter = nlp.add_pipe("nonmono_syntax_senter", config={"model": SMALL, "max_length": 3})
    words = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
    # Sentences: a b c (b the root), d e (d), f g h i (4 words: longer than 3).
    reference = Doc(nlp.vocab, words=words, heads=[1, 1, 1, 3, 3, 5, 5, 5, 5],
                    deps=["det", "ROOT", "obj", "ROOT", "obj", "ROOT", "x", "x", "x"],
                    sent_starts=[1, 0, 0, 1, 0, 1, 0, 0, 0])
    eg = Example(Doc(nlp.vocab, words=words), reference)
    # Columns: L - 1 + head - word, L - 1 (= 2) for a root; -1: no head loss.
    assert list(senter.head_targets([eg])[0]) == [3, 2, 1, 2, 1, -1, -1, -1, -1]
    senter.initialize(lambda: [eg])
    output = numpy.zeros((len(words), 6), dtype="float32")
    loss, (d,) = senter.get_loss([eg], [output])
    # Uniform head scores over the words within 2 and the root slot (across
    # sentences: the model learns where trees end): the gold column gets p - 1.
    assert d[0, 3] == pytest.approx(1 / 3 - 1) and d[1, 2] == pytest.approx(1 / 4 - 1)
    assert d[4, 1] == pytest.approx(1 / 5 - 1) and not d[5:, :5].any()
    # Start logits at 0: p = 1/2, minus 1 at the starts.
    assert list(d[:, 5]) == pytest.approx([-0.5, 0.5, 0.5, -0.5, 0.5, -0.5, 0.5, 0.5, 0.5])
    expected = numpy.log(3) + numpy.log(4) + 3 * numpy.log(5) + 9 * numpy.log(2)
    assert loss == pytest.approx(expected)


@pytest.fixture(scope="module")
def trained():
    """A blank pipeline whose syntax senter (and a parser after it) learned
    on docs of 10 sample sentences."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_syntax_senter", name="senter",
                 config={"model": SMALL, "max_length": 30})
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL})
    docs = sample_docs("train", n_sents_per_doc=10, limit=8)
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    optimizer = nlp.initialize(lambda: examples)
    losses = []
    for _ in range(6):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["senter"])
    return nlp, examples, losses


def test_it_learns_and_bounds_its_sentences(trained):
    nlp, examples, losses = trained
    assert losses[-1] < losses[0]
    for eg in examples:
        doc = nlp(eg.reference.text)
        starts = [sent.start for sent in doc.sents]
        assert starts[0] == 0
        assert all(len(sent) <= 30 for sent in doc.sents)
    assert 0.0 <= nlp.evaluate(examples)["sents_f"] <= 1.0


def test_boundaries_set_before_it_are_kept(trained):
    nlp, examples, _ = trained
    words = [t.text for t in examples[0].reference]
    starts = [None] * len(words)
    starts[0], starts[5], starts[6] = True, True, False
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    assert doc[5].is_sent_start and not doc[6].is_sent_start
    assert all(len(sent) <= 30 for sent in doc.sents)


def test_saved_loaded_and_pickled(trained, tmp_path):
    nlp, examples, _ = trained
    text = examples[1].reference.text
    expected = [sent.start for sent in nlp(text).sents]
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert [sent.start for sent in loaded(text).sents] == expected
    assert [sent.start for sent in pickle.loads(pickle.dumps(nlp))(text).sents] == expected
    # start_weight is the config's: a pipeline loaded with another decides with it.
    weighted = spacy.load(tmp_path / "model", config={"components": {"senter": {
        "start_weight": 0.0}}})
    assert weighted.get_pipe("senter").start_weight == 0.0
    bound_sentences(loaded, 12)
    assert all(len(sent) <= 12 for sent in loaded(text).sents)
    loaded.to_disk(tmp_path / "bounded")
    assert spacy.load(tmp_path / "bounded").get_pipe("senter").max_length == 12
    with pytest.raises(ValueError, match="always bounded"):
        bound_sentences(loaded, None)


def test_the_start_scores_weigh_start_weight(trained):
    nlp, examples, _ = trained
    senter = nlp.get_pipe("senter")
    doc = nlp.make_doc(examples[2].reference.text)
    output = senter.model.predict([doc])[0]
    L = senter.max_length
    log_p = masked_log_softmax(output, L)
    for weight in (0.0, 1.0, 3.0):
        senter.start_weight = weight
        expected = best_segmentation(log_p, L, start_scores=weight * output[:, 2 * L - 1])[0]
        assert list(senter.predict([doc])[0]) == list(expected)
    senter.start_weight = 1.0
    with pytest.raises(ValueError, match="start_weight"):
        spacy.blank("en").add_pipe("nonmono_syntax_senter", config={"start_weight": -1})


def test_the_start_weight_benchmark_scores_each_weight(trained, tmp_path, capsys):
    import json

    from benchmarks import main
    from conftest import SAMPLE

    nlp, _, _ = trained
    nlp.to_disk(tmp_path / "model")
    dev = SAMPLE / "en_ewt-sample-dev.conllu"
    assert main(["senter-weights", str(tmp_path / "model"), "--dev", str(dev), "--test",
                 str(dev), "--weights", "0,2", "--json", str(tmp_path / "w.json")]) == 0
    record = json.loads((tmp_path / "w.json").read_text())
    assert [row["start_weight"] for row in record["rows"]] == [0.0, 2.0]
    assert record["chosen"] in (0.0, 2.0)
    assert "(chosen on dev)" in capsys.readouterr().out
    assert main(["senter-weights", str(tmp_path / "model"), "--dev", str(dev), "--test",
                 str(dev), "--weights", "-1"]) == 2
