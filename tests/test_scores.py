"""The scorer interface between models and decoders (models/scores.py): a
model that combines others registers a score reader by its name, and the
greedy, beam and global decoders parse with it unchanged. Two copies of one
trained model (every score doubled) parse exactly as the model alone, through
the step-by-step path the combined transition scores take and through the
summed score tables of global decoding; the step path with the model alone
equals the C loop."""
import numpy
import pytest
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model

from conftest import make_global_nlp, make_nlp, sample_docs, train
from spacy_nonmono.decoders.base import token_layout
from spacy_nonmono.models.scores import StepScores, SumView, part_scores, step_scores
from spacy_nonmono.registry import score_readers


def _pair_step(model, docs):
    members = [step_scores(member, docs).single for member in model.layers]
    return StepScores(members)


def _pair_parts(model, docs):
    return SumView([part_scores(member, docs) for member in model.layers])


score_readers.register("toy_pair", func={"step": _pair_step, "parts": _pair_parts})


def pair(model):
    """A model that reads as the sum of two copies of `model`."""
    return Model("toy_pair", lambda m, X, is_train: (X, lambda d: d), layers=[model, model])


@pytest.fixture(scope="module")
def examples():
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d)
            for d in sample_docs("train", limit=20)]


def batch_of(nlp, examples):
    docs = [nlp.make_doc(" ".join(t.text for t in eg.reference)) for eg in examples]
    return docs, [(d, 0, len(doc)) for d, doc in enumerate(docs)]


def same_parses(a, b):
    return all((x == y).all() for x, y in zip(a.heads, b.heads)) and \
        all((x == y).all() for x, y in zip(a.labels, b.labels))


@pytest.mark.parametrize("decoding", ["greedy", "beam", "global"])
def test_a_combined_model_plugs_into_the_decoders(decoding, examples):
    nlp = make_global_nlp("mh4") if decoding == "global" else make_nlp(
        system="arc_eager_unshift", decoding=decoding)
    train(nlp, examples, epochs=3)
    parser = nlp.get_pipe("nonmono_parser")
    docs, spans = batch_of(nlp, examples)
    alone = parser.decoder.predict(parser.model, parser.moves, docs, spans)
    doubled = parser.decoder.predict(pair(parser.model), parser.moves, docs, spans)
    assert same_parses(alone, doubled)


def test_the_step_path_equals_the_c_loop(examples):
    nlp = make_nlp()
    train(nlp, examples, epochs=3)
    parser = nlp.get_pipe("nonmono_parser")
    docs, spans = batch_of(nlp, examples)
    scores = step_scores(parser.model, docs)
    parses = []
    for path in ("c", "steps"):
        batch = parser.decoder.parse_batch(parser.moves, *token_layout(docs, spans))
        n = batch.parse(*scores.single) if path == "c" else parser.decoder.parse_steps(batch, scores)
        parses.append((n, batch.finish()))
    (n_c, (heads_c, labels_c)), (n_py, (heads_py, labels_py)) = parses
    assert n_c == n_py > 0
    assert all((a == b).all() for a, b in zip(heads_c, heads_py))
    assert all((a == b).all() for a, b in zip(labels_c, labels_py))
    ids = numpy.zeros((3, parser.moves.n_context), dtype="int32")
    assert numpy.allclose(StepScores([scores.single] * 2)(ids), 2 * scores(ids))


def test_a_model_without_a_reader_is_a_clear_error():
    with pytest.raises(ValueError, match="No scorer reads step scores from a 'linear' model"):
        step_scores(Model("linear", lambda m, X, t: (X, None)), [])
