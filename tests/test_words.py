"""The word representations of the full-strength recipe (models/words.py),
the BiLSTM's layer dropout, ScaleGradient and the plateau schedule: values
against what they should be, gradients against finite differences."""
import pickle
from collections import Counter

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from thinc.api import Config, fix_random_seed

from spacy_nonmono.models.encoders import BiLSTM, ScaleGradient, _Steps, lstm_backward, lstm_forward
from spacy_nonmono.models.words import (CharEncoder, WordEmbed, count_words, normalize_form,
                                        set_word_counts, word_embed_layers)
from spacy_nonmono.schedules import PlateauDecay, plateau_logger

VOCAB = spacy.blank("xx").vocab


def docs_of(*texts):
    return [Doc(VOCAB, words=t.split()) if t else Doc(VOCAB, words=[]) for t in texts]


def chars(width=6, **settings):
    return CharEncoder(width, **{"char_width": 4, "lstm_width": 6, "depth": 2, "rows": 50,
                                 **settings})


def word_embed(width=6, counts=None, **settings):
    model = WordEmbed(width, chars=chars(width), min_freq=2, **settings)
    set_word_counts(model, Counter(counts or {"the": 3, "The": 1, "cat": 2, "1999": 1,
                                              "2000": 1, "dog": 1}))
    return model


def check_gradients(model, X, loss_of, d_output, params, n_checks=25, eps=1e-2, tol=2e-3):
    """Central differences of loss_of(model.predict(X)) against the gradients
    that backprop(d_output) accumulated, on n_checks entries of each param."""
    rng = numpy.random.default_rng(0)
    for node, name in params:
        value, grad = node.get_param(name), node.get_grad(name)
        for k in rng.choice(value.size, min(n_checks, value.size), replace=False):
            idx = numpy.unravel_index(k, value.shape)
            saved = value[idx]
            value[idx] = saved + eps
            up = loss_of(model.predict(X))
            value[idx] = saved - eps
            down = loss_of(model.predict(X))
            value[idx] = saved
            assert abs((up - down) / (2 * eps) - grad[idx]) < tol, (node.name, name, idx)


def all_params(model):
    """Every trained parameter (the LSTM's initial states get no gradient)."""
    return [(node, name) for node in model.walk() for name in node.param_names
            if node.has_param(name) and node.has_grad(name)]


# -- characters -------------------------------------------------------------------


def test_normalize_form():
    assert normalize_form("Anno1999") == "anno0000"
    assert normalize_form("ÉTÉ") == "été"


def test_char_encoder_values():
    model = chars()
    model.initialize()
    Y = model.predict(["cat", "dog", "cat", "", "ＡＢ"])
    assert Y.shape == (5, 6)
    numpy.testing.assert_array_equal(Y[0], Y[2])
    assert not numpy.allclose(Y[0], Y[1])
    assert numpy.all(numpy.abs(Y) < 1)   # tanh
    assert model.predict([]).shape == (0, 6)


def test_char_encoder_reads_the_characters_in_order():
    model = chars()
    model.initialize()
    Y = model.predict(["ab", "ba"])
    assert not numpy.allclose(Y[0], Y[1])


def test_char_encoder_gradients():
    model = chars()
    model.initialize()
    forms = ["cat", "ox", "cat", "gnu"]
    rng = numpy.random.default_rng(1)
    d_output = rng.normal(size=(4, 6)).astype("f")
    _, backprop = model.begin_update(forms)
    backprop(d_output)
    check_gradients(model, forms, lambda Y: float((Y.astype("d") * d_output).sum()),
                    d_output, all_params(model))


# -- words ------------------------------------------------------------------------


def test_vocabulary_from_counts():
    model = word_embed()
    # normalised counts: the 4, 0000 2, cat 2, dog 1 (below min_freq 2)
    assert model.attrs["rows"] == {"the": 0, "0000": 1, "cat": 2}
    assert model.attrs["counts"] == [4, 2, 2]


def test_known_words_read_their_row_unknown_words_their_characters():
    model = word_embed()
    model.initialize()
    docs = docs_of("The cat saw 1985 dogs", "", "the")
    Y = model.predict(docs)
    assert [y.shape for y in Y] == [(5, 6), (0, 6), (1, 6)]
    E = model.get_param("E")
    rows = model.attrs["rows"]
    numpy.testing.assert_array_equal(Y[0][0], E[rows["the"]])
    numpy.testing.assert_array_equal(Y[2][0], E[rows["the"]])
    numpy.testing.assert_array_equal(Y[0][3], E[rows["0000"]])
    char_vectors = model.layers[0].predict(["saw", "dogs"])
    numpy.testing.assert_allclose(Y[0][2], char_vectors[0], rtol=1e-6)
    numpy.testing.assert_allclose(Y[0][4], char_vectors[1], rtol=1e-6)


def test_without_characters_unknown_words_share_one_vector():
    model = WordEmbed(6, chars=None, min_freq=1)
    set_word_counts(model, Counter({"a": 1}))
    model.initialize()
    Y = model.predict(docs_of("a b c"))[0]
    numpy.testing.assert_array_equal(Y[1], Y[2])
    assert not numpy.allclose(Y[0], Y[1])


def test_word_dropout_keeps_a_word_with_probability_c_over_c_plus_alpha():
    fix_random_seed(0)
    model = WordEmbed(4, chars=None, min_freq=1, word_dropout=2.5)
    set_word_counts(model, Counter({"rare": 1, "common": 10}))
    model.initialize()
    E = model.get_param("E")
    n = 4000
    Y = model.begin_update(docs_of(" ".join(["rare", "common"] * n)))[0][0]
    kept_rare = numpy.mean(numpy.all(Y[0::2] == E[0], axis=1))
    kept_common = numpy.mean(numpy.all(Y[1::2] == E[model.attrs["rows"]["common"]], axis=1))
    # common is row 0 (most frequent first): rows["common"] == 0
    assert model.attrs["rows"] == {"common": 0, "rare": 1}
    kept_rare = numpy.mean(numpy.all(Y[0::2] == E[1], axis=1))
    assert abs(kept_rare - 1 / 3.5) < 0.03
    assert abs(kept_common - 10 / 12.5) < 0.03
    # never in prediction
    P = model.predict(docs_of("rare common"))[0]
    numpy.testing.assert_array_equal(P, E[[1, 0]])


def test_token_dropout_zeroes_whole_vectors_and_scales_the_rest():
    fix_random_seed(0)
    model = word_embed(token_dropout=0.25, word_dropout=0.0)
    model.initialize()
    doc = docs_of(" ".join(["the"] * 2000))
    Y = model.begin_update(doc)[0][0]
    row = model.get_param("E")[0]
    zero = numpy.all(Y == 0, axis=1)
    assert abs(zero.mean() - 0.25) < 0.03
    numpy.testing.assert_allclose(Y[~zero], numpy.tile(row / 0.75, (int((~zero).sum()), 1)),
                                  rtol=1e-6)


def test_word_embed_gradients():
    model = word_embed(word_dropout=0.0)
    model.initialize()
    docs = docs_of("The cat saw the gnu", "", "cat 2000 ox ox")
    rng = numpy.random.default_rng(2)
    d_output = [rng.normal(size=(len(d), 6)).astype("f") for d in docs]
    _, backprop = model.begin_update(docs)
    assert backprop(d_output) == []

    def loss(Ys):
        return sum(float((Y.astype("d") * d).sum()) for Y, d in zip(Ys, d_output))

    check_gradients(model, docs, loss, d_output, all_params(model))


def test_bad_settings():
    with pytest.raises(ValueError, match="word_dropout must be"):
        WordEmbed(4, word_dropout=-1)
    with pytest.raises(ValueError, match="token_dropout must be"):
        WordEmbed(4, token_dropout=1.0)
    with pytest.raises(ValueError, match="character encoder's width"):
        WordEmbed(8, chars=chars(6))
    with pytest.raises(ValueError, match="give `chars`"):
        WordEmbed(4, vocabulary=False)
    with pytest.raises(ValueError, match="width must be a positive integer"):
        CharEncoder(0)


def test_without_counts_the_vocabulary_comes_from_the_init_docs_with_a_warning():
    model = WordEmbed(4, chars=None, min_freq=1)
    with pytest.warns(UserWarning, match="count_words"):
        model.initialize(X=docs_of("a b a"))
    assert set(model.attrs["rows"]) == {"a", "b"}


def test_characters_alone():
    model = WordEmbed(6, chars=chars(6), vocabulary=False)
    model.initialize()
    Y = model.predict(docs_of("the cat the"))[0]
    numpy.testing.assert_allclose(Y, model.layers[0].predict(["the", "cat", "the"]), rtol=1e-6)


# -- the vocabulary in a pipeline: callback, serialization, pickling ----------------


@pytest.fixture
def pipeline_with_counts(tmp_path):
    nlp = spacy.blank("xx")
    nlp.add_pipe("tok2vec", config={"model": {
        "@architectures": "spacy_nonmono.WordEmbed.v1", "width": 6, "min_freq": 2,
        "chars": {"@architectures": "spacy_nonmono.CharEncoder.v1", "width": 6,
                  "char_width": 4, "lstm_width": 6, "depth": 1, "rows": 50}}})
    train = docs_of("the cat sat", "the dog sat", "a cat ran")
    DocBin(docs=train).to_disk(tmp_path / "train.spacy")
    count_words(tmp_path / "train.spacy")(nlp)
    nlp.initialize()
    return nlp


def test_count_words_callback_gives_every_word_embed_its_vocabulary(pipeline_with_counts):
    layers = list(word_embed_layers(pipeline_with_counts))
    assert len(layers) == 1
    assert layers[0].attrs["rows"] == {"cat": 0, "sat": 1, "the": 2}


def test_count_words_needs_the_corpus(tmp_path):
    with pytest.raises(ValueError, match="no training corpus"):
        count_words(tmp_path / "missing.spacy")(spacy.blank("xx"))


def test_vocabulary_survives_to_disk_and_pickling(pipeline_with_counts, tmp_path):
    nlp = pipeline_with_counts
    doc = docs_of("the cat ran home")[0]
    expected = nlp(doc.copy()).tensor
    nlp.to_disk(tmp_path / "nlp")
    for loaded in (spacy.load(tmp_path / "nlp"), pickle.loads(pickle.dumps(nlp))):
        layer = next(iter(word_embed_layers(loaded)))
        assert layer.attrs["rows"] == {"cat": 0, "sat": 1, "the": 2}
        numpy.testing.assert_array_equal(loaded(doc.copy()).tensor, expected)


# -- BiLSTM layer dropout, ScaleGradient -------------------------------------------


def test_lstm_layer_dropout_masks_each_layers_input_and_backpropagates():
    rng = numpy.random.default_rng(3)
    layer = BiLSTM(4, depth=2, nI=3)
    layer.initialize()
    params = layer.get_param("LSTM").astype("d")
    H0, C0 = (a.astype("d") for a in layer.get_param("HC0"))
    steps = _Steps.from_lengths([3, 2], layer.ops)
    X = rng.normal(size=(5, 3))
    masks = [rng.choice([0.0, 2.0], size=(5, 3)), rng.choice([0.0, 2.0], size=(5, 4))]
    dH = rng.normal(size=(5, 4))

    def loss(X, P):
        return float((lstm_forward(P, H0, C0, X, steps, masks)[0] * dH).sum())

    _, state = lstm_forward(params, H0, C0, X, steps, masks)
    dX, dP = lstm_backward(dH, params, H0, C0, state, steps, masks)
    eps = 1e-6
    for idx in numpy.ndindex(X.shape):
        up, down = X.copy(), X.copy()
        up[idx] += eps
        down[idx] -= eps
        assert abs((loss(up, params) - loss(down, params)) / (2 * eps) - dX[idx]) < 1e-6
    for k in rng.choice(params.size, 30, replace=False):
        up, down = params.copy(), params.copy()
        up[k] += eps
        down[k] -= eps
        assert abs((loss(X, up) - loss(X, down)) / (2 * eps) - dP[k]) < 1e-6
    # Masked inputs change the output; a zero mask on the first layer's input
    # removes the input's effect.
    zero = [numpy.zeros((5, 3)), numpy.ones((5, 4))]
    out_a = lstm_forward(params, H0, C0, X, steps, zero)[0]
    out_b = lstm_forward(params, H0, C0, X + 1.0, steps, zero)[0]
    numpy.testing.assert_allclose(out_a, out_b)


def test_lstm_weight_dropout_gradient_is_the_masked_weights_gradient(monkeypatch):
    """Weight dropout (the shipped full pipeline's 0.2): the forward pass runs
    on the masked weights, and the weights' gradient is the mask times the
    gradient at the masked weights (checked against finite differences)."""
    layer = BiLSTM(4, depth=2, nI=3, dropout=0.5)
    Xs = [numpy.random.default_rng(0).normal(size=(n, 3)).astype("f") for n in (3, 2)]
    layer.initialize(X=Xs)
    rng = numpy.random.default_rng(4)
    params = layer.get_param("LSTM")
    mask = rng.choice([0.0, 2.0], size=params.shape).astype("f")
    monkeypatch.setattr(layer.ops, "get_dropout_mask", lambda shape, rate: mask)
    Ys, backprop = layer.begin_update(Xs)
    dYs = [rng.normal(size=Y.shape).astype("f") for Y in Ys]
    backprop(dYs)
    grad = layer.get_grad("LSTM").astype("d")

    H0, C0 = (a.astype("d") for a in layer.get_param("HC0"))
    steps = _Steps.from_lengths([3, 2], layer.ops)
    X = numpy.concatenate(Xs).astype("d")[steps.rows]
    dH = numpy.concatenate(dYs).astype("d")[steps.rows]

    def loss(P):
        return float((lstm_forward(P * mask, H0, C0, X, steps, None)[0] * dH).sum())

    numpy.testing.assert_allclose(
        Ys[0], lstm_forward(params * mask, H0, C0, X, steps, None)[0][
            numpy.argsort(steps.rows)][:3], atol=1e-5)
    eps = 1e-6
    P = params.astype("d")
    for k in list(rng.choice(numpy.flatnonzero(mask), 20, replace=False)) + \
            list(rng.choice(numpy.flatnonzero(mask == 0), 5, replace=False)):
        up, down = P.copy(), P.copy()
        up[k] += eps
        down[k] -= eps
        assert abs((loss(up) - loss(down)) / (2 * eps) - grad[k]) < 1e-4
    # Predicting uses the weights as they are.
    numpy.testing.assert_allclose(
        layer.predict(Xs)[0], lstm_forward(P, H0, C0, X, steps, None)[0][
            numpy.argsort(steps.rows)][:3], atol=1e-5)


def test_layer_dropout_only_in_training():
    fix_random_seed(0)
    layer = BiLSTM(4, depth=2, nI=3, layer_dropout=0.5)
    Xs = [numpy.ones((4, 3), dtype="f")]
    layer.initialize(X=Xs)
    predicted = layer.predict(Xs)[0]
    numpy.testing.assert_array_equal(predicted, layer.predict(Xs)[0])
    trained = layer.begin_update(Xs)[0][0]
    assert not numpy.allclose(trained, predicted)
    with pytest.raises(ValueError, match="layer_dropout must be in"):
        BiLSTM(4, layer_dropout=1.0)


def test_scale_gradient_scales_only_the_gradient():
    inner = chars()
    model = ScaleGradient(inner, 0.2)
    model.initialize()
    assert model.get_dim("nO") == 6
    forms = ["cat", "dog"]
    numpy.testing.assert_array_equal(model.predict(forms), inner.predict(forms))
    d = numpy.ones((2, 6), dtype="f")
    _, backprop = inner.begin_update(forms)
    backprop(d)
    full = inner.get_grad("W").copy()
    inner.finish_update(_zero_optimizer())
    _, backprop = model.begin_update(forms)
    backprop(d)
    numpy.testing.assert_allclose(inner.get_grad("W"), 0.2 * full, rtol=1e-5)
    with pytest.raises(ValueError, match="scale must be"):
        ScaleGradient(inner, -1)


def _zero_optimizer():
    """An optimizer that clears gradients without changing the weights."""
    from thinc.api import SGD

    return SGD(0.0)


# -- the plateau schedule --------------------------------------------------------


def test_plateau_decay_divides_the_rate_after_patience_checks_without_gain():
    schedule = PlateauDecay(0.002, 0.25, patience=2, max_decays=2)
    rates = []
    for score in (1, 2, 2, 2, 3, 3, 3, 3, 3, 3):
        schedule.report(score)
        rates.append(next(schedule))
    assert rates == [0.002, 0.002, 0.002, 0.0005, 0.0005, 0.0005, 0.000125, 0.000125,
                     0.000125, 0.000125]


def test_plateau_schedule_is_an_optimizer_schedule_fed_by_the_logger():
    config = Config().from_str("""
    [optimizer]
    @optimizers = "Adam.v1"

    [optimizer.learn_rate]
    @schedules = "spacy_nonmono.plateau_decay.v1"
    rate = 0.01
    patience = 1
    max_decays = 1

    [logger]
    @loggers = "spacy_nonmono.plateau_logger.v1"

    [logger.logger]
    @loggers = "spacy.ConsoleLogger.v1"
    progress_bar = false
    """)
    resolved = spacy.registry.resolve(config)
    optimizer = resolved["optimizer"]
    assert optimizer.learn_rate == 0.01
    logged = []

    def inner(nlp, stdout=None, stderr=None):
        return logged.append, lambda: None

    log_step, _ = plateau_logger(inner)(None)
    for score in (0.5, 0.4):
        log_step({"score": score})
        optimizer.step_schedules()
    assert optimizer.learn_rate == pytest.approx(0.0025)
    assert len(logged) == 2
    with pytest.raises(ValueError, match="factor in"):
        PlateauDecay(0.1, 1.5, 1, 1)


# -- the BiLSTM over sentences ------------------------------------------------------


def sentence_encoder(sentences=True, window=0, overlap=0):
    return spacy.registry.resolve({"m": {
        "@architectures": "spacy_nonmono.BiLSTMEncoder.v1", "width": 6, "depth": 2,
        "sentences": sentences, "window": window, "overlap": overlap,
        "tok2vec": {"@architectures": "spacy_nonmono.WordEmbed.v1", "width": 4, "min_freq": 1,
                    "word_dropout": 0.0, "chars": None}}})["m"]


def test_bilstm_reads_each_sentence_alone_when_boundaries_are_set():
    model = sentence_encoder()
    set_word_counts(model.layers[0], Counter("a b c d e".split()))
    two = Doc(VOCAB, words="a b c d e".split(), sent_starts=[True, False, True, False, False])
    plain = Doc(VOCAB, words="a b c d e".split())
    first, second, empty = docs_of("a b", "c d e", "")
    model.initialize(X=[two])
    Y = model.predict([two, plain, first, second, empty])
    numpy.testing.assert_allclose(Y[0], numpy.concatenate([Y[2], Y[3]]), rtol=1e-6)
    assert not numpy.allclose(Y[0], Y[1])   # no boundaries: one sequence
    assert Y[4].shape == (0, 6)
    # Each doc is one sequence with sentences = false.
    whole = sentence_encoder(sentences=False)
    set_word_counts(whole.layers[0], Counter("a b c d e".split()))
    whole.initialize(X=[two])
    Y = whole.predict([two, plain])
    numpy.testing.assert_allclose(Y[0], Y[1], rtol=1e-6)


def check_encoder_gradients(model, docs, seed):
    """The encoder's gradients of a random linear loss, by finite differences."""
    rng = numpy.random.default_rng(seed)
    d_output = [rng.normal(size=(len(d), 6)).astype("f") for d in docs]
    _, backprop = model.begin_update(docs)
    backprop(d_output)

    def loss(Ys):
        return sum(float((Y.astype("d") * d).sum()) for Y, d in zip(Ys, d_output))

    check_gradients(model, docs, loss, d_output, all_params(model))


def test_bilstm_by_sentence_gradients():
    model = sentence_encoder()
    set_word_counts(model.layers[0], Counter("a b c d e".split()))
    docs = [Doc(VOCAB, words="a b c d e".split(), sent_starts=[True, False, True, False, False]),
            Doc(VOCAB, words=[]), Doc(VOCAB, words="e d".split())]
    model.initialize(X=docs)
    check_encoder_gradients(model, docs, 4)


# -- the BiLSTM over windows of a whole doc ------------------------------------------


WINDOW_WORDS = "a b c d e f g h i j k".split()


def windowed(window, overlap):
    model = sentence_encoder(sentences=False, window=window, overlap=overlap)
    set_word_counts(model.layers[0], Counter(WINDOW_WORDS))
    model.initialize(X=docs_of(" ".join(WINDOW_WORDS)))
    return model


def test_windows_read_each_piece_with_its_context():
    """Each token's output is the LSTM's over its piece and the piece's
    context, read as one sequence (brute force: that span alone); with
    context covering the doc, the whole doc's; sentence starts change
    nothing."""
    from spacy_nonmono.models.encoders import doc_pieces

    model = windowed(3, 2)
    doc = Doc(VOCAB, words=WINDOW_WORDS, sent_starts=[True] + [False] * 10)
    tok2vec, lstm = model.layers
    Y = model.predict([doc, Doc(VOCAB, words=[])])
    assert Y[1].shape == (0, 6)
    X = tok2vec.predict([doc])[0]
    pieces = doc_pieces(doc, 3, 2)
    assert pieces[0] == (0, 5, 0, 3) and pieces[1] == (1, 8, 3, 6) and pieces[-1] == (7, 11, 9, 11)
    for start, end, a, b in pieces:
        alone = lstm.predict([X[start:end]])[0]
        numpy.testing.assert_allclose(Y[0][a:b], alone[a - start:b - start], rtol=1e-5)
    # Context over the whole doc: the whole doc's outputs.
    model.attrs["overlap"] = 20
    whole = lstm.predict([X])[0]
    numpy.testing.assert_allclose(model.predict([doc])[0], whole, rtol=1e-5, atol=1e-6)


def test_window_gradients():
    model = windowed(2, 1)
    docs = [Doc(VOCAB, words="a b c d e".split()), Doc(VOCAB, words=[]),
            Doc(VOCAB, words="e d".split())]
    check_encoder_gradients(model, docs, 5)


def test_window_settings_are_checked():
    for bad, match in (({"window": -1}, "token counts"), ({"overlap": 2}, "token counts"),
                       ({"window": 4, "sentences": True}, "sentences = true")):
        settings = {"sentences": False, **bad}
        with pytest.raises(ValueError, match=match):
            sentence_encoder(**settings)
