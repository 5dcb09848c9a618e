"""Static vectors in the shared encoder: WordEmbed's `vectors` layer
(spacy_nonmono.StaticVectors.v1) adds each token's vector from the pipeline's
table (`nlp.vocab.vectors`), projected to the width by a learned matrix, the
table itself frozen and stored once, in the vocab; the vectors are spaCy's
StaticVectors', the gradient leaves out the words the table lacks; floret
vectors give every word one. A small full pipeline with vectors made in the test (`spacy init
vectors` on a few hundred words) trains, saves, loads and pickles; a word's
vector reaches the parser's scores; `init-config --vectors` writes it all."""
import io

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.ml.staticvectors import StaticVectors as SpacyStaticVectors
from spacy.tokens import Doc
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import load_config, load_config_from_str
from spacy.vectors import Vectors
from spacy.vocab import Vocab
from thinc.api import Adam, fix_random_seed

from conftest import ROOT, run_command, run_spacy, sample_docs, tree_ok
from spacy_nonmono.configs import filled_config, spacy_parser_pipeline
from spacy_nonmono.models.words import (StaticVectors, WordEmbed, set_word_counts, sublayer,
                                        word_embed_layers)
from test_full_pipeline import (SMALL, assert_round_trips, dev_docs,  # noqa: F401
                                full_corpora)                       # (a fixture)

WIDTH = 6           # of the vectors in the table
NO_VECTOR = "qqxz"  # a word the table does not have


def sample_words():
    """The distinct forms of part of the sample: a few hundred words."""
    return sorted({t.text for doc in sample_docs("train", limit=60) for t in doc})


@pytest.fixture(scope="module")
def vectors_path(tmp_path_factory):
    """A pipeline folder with static vectors, made as users make one: a
    word2vec text file through `spacy init vectors`."""
    folder = tmp_path_factory.mktemp("vectors")
    words = sample_words()
    assert 300 <= len(words) <= 1000 and NO_VECTOR not in words
    rng = numpy.random.default_rng(0)
    lines = [f"{len(words)} {WIDTH}"] + [
        " ".join([word, *(f"{x:.5f}" for x in rng.normal(size=WIDTH))]) for word in words]
    (folder / "vectors.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    result = run_spacy("init", "vectors", "en", "vectors.txt", "en_vectors", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder / "en_vectors"


def embed_layers(docs, width=4):
    """A WordEmbed layer with static vectors and the same layer without,
    sharing their embedding table, initialized on docs."""
    with_vectors = WordEmbed(width, min_freq=1, word_dropout=0.0, vectors=StaticVectors())
    plain = WordEmbed(width, min_freq=1, word_dropout=0.0)
    counts = {t.text: 1 for doc in docs for t in doc if t.text != NO_VECTOR}
    for layer in (with_vectors, plain):
        set_word_counts(layer, counts)
        layer.initialize(X=docs)
    plain.set_param("E", with_vectors.get_param("E").copy())
    return with_vectors, plain


def test_each_token_adds_its_projected_vector(vectors_path):
    vocab = spacy.load(vectors_path).vocab
    docs = [Doc(vocab, words=["The", "people", NO_VECTOR, "."]), Doc(vocab, words=["He", "said"])]
    with_vectors, plain = embed_layers(docs)
    W = sublayer(with_vectors, "vectors").get_param("W")
    assert W.shape == (4, WIDTH)
    for doc, Y, base in zip(docs, with_vectors.predict(docs), plain.predict(docs)):
        for token, y, b in zip(doc, Y, base):
            added = W @ vocab.vectors[token.orth] if token.has_vector else numpy.zeros(4)
            assert token.has_vector == (token.text != NO_VECTOR)
            numpy.testing.assert_allclose(y, b + added, rtol=1e-5, atol=1e-6)


def test_training_moves_the_projection_not_the_table(vectors_path):
    vocab = spacy.load(vectors_path).vocab
    table = vocab.vectors.data.copy()
    docs = [Doc(vocab, words=["The", "people", NO_VECTOR, "said", "."])]
    layer, _ = embed_layers(docs)
    projection = sublayer(layer, "vectors")
    W = projection.get_param("W").copy()
    Y, backprop = layer.begin_update(docs)
    dY = [numpy.ones_like(y) for y in Y]
    backprop(dY)
    # dW = dY^T V over the tokens, a word without a vector reading zeros.
    V = numpy.array([vocab.vectors[t.orth] if t.has_vector else numpy.zeros(WIDTH)
                     for t in docs[0]], dtype="f")
    numpy.testing.assert_allclose(projection.get_grad("W"), dY[0].T @ V, rtol=1e-5)
    layer.finish_update(Adam(0.1))
    assert not numpy.array_equal(projection.get_param("W"), W)
    assert numpy.array_equal(vocab.vectors.data, table)


def test_vectors_are_spacys_and_the_gradient_leaves_out_missing_words(vectors_path):
    """The layer computes what spaCy's StaticVectors computes, with the same
    projection; its gradient is dY^T V over the words the table has, where
    spaCy's (3.8) adds the table's last row for each word it lacks."""
    vocab = spacy.load(vectors_path).vocab
    docs = [Doc(vocab, words=["The", NO_VECTOR, "said"]), Doc(vocab, words=[NO_VECTOR, "."])]
    ours, spacys = StaticVectors(nO=3), SpacyStaticVectors(nO=3)
    ours.initialize(X=docs)
    spacys.initialize(X=docs)
    spacys.set_param("W", ours.get_param("W").copy())
    Y, backprop = ours.begin_update(docs)
    theirs, their_backprop = spacys.begin_update(docs)
    numpy.testing.assert_allclose(Y, theirs.data, rtol=1e-6)
    dY = numpy.random.default_rng(2).normal(size=Y.shape).astype("f")
    backprop(dY)
    their_backprop(type(theirs)(dY.copy(), theirs.lengths))
    tokens = [t for doc in docs for t in doc]
    V = numpy.array([vocab.vectors[t.orth] if t.has_vector else numpy.zeros(WIDTH)
                     for t in tokens], dtype="f")
    numpy.testing.assert_allclose(ours.get_grad("W"), dY.T @ V, rtol=1e-5, atol=1e-6)
    missing = numpy.array([not t.has_vector for t in tokens])
    last_row = numpy.outer(dY[missing].sum(axis=0), vocab.vectors.data[-1])
    numpy.testing.assert_allclose(spacys.get_grad("W"), dY.T @ V + last_row, rtol=1e-4,
                                  atol=1e-5)


def test_floret_vectors_give_every_word_a_vector():
    """Floret vectors are sums of hashed subword rows: a word no training
    text had still gets a vector, and words differ by their characters."""
    vocab = Vocab()
    rows = numpy.random.default_rng(1).normal(size=(64, WIDTH)).astype("f")
    vocab.vectors = Vectors(strings=vocab.strings, mode="floret", data=rows, minn=2, maxn=3,
                            hash_count=2)
    docs = [Doc(vocab, words=["The", NO_VECTOR, "qqxy"])]
    with_vectors, plain = embed_layers(docs)
    added = with_vectors.predict(docs)[0] - plain.predict(docs)[0]
    assert numpy.all(numpy.abs(added).sum(axis=1) > 1e-4)
    assert not numpy.allclose(added[1], added[2])


@settings(max_examples=60, deadline=None)
@given(forms=st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=12),
       minn=st.integers(1, 4), extra=st.integers(0, 3), hash_count=st.integers(1, 4),
       seed=st.integers(0, 2**32 - 1), n_rows=st.sampled_from([1, 7, 64]))
def test_floret_rows_in_c_are_spacys(forms, minn, extra, hash_count, seed, n_rows):
    """models/floret.pyx gives what spaCy's Vectors.get_batch gives in
    floret mode: any text (several bytes a character in UTF-8, the empty
    form), any n-gram sizes, hash counts and seeds, repeated forms."""
    from spacy_nonmono.models.floret import floret_vectors

    vocab = Vocab()
    rows = numpy.random.default_rng(seed % 97).normal(size=(n_rows, 5)).astype("f")
    table = Vectors(strings=vocab.strings, mode="floret", data=rows, minn=minn,
                    maxn=minn + extra, hash_count=hash_count, hash_seed=seed)
    keys = numpy.array([vocab.strings.add(form) for form in forms + forms[:1]], dtype="uint64")
    ours = floret_vectors(table, keys)
    assert ours.shape == (len(keys), 5) and ours.dtype == numpy.float32
    if sum(len(form) for form in forms):    # spaCy's get_batch of empty forms only: float64
        numpy.testing.assert_allclose(ours, table.get_batch(keys), rtol=1e-5, atol=1e-6)
    assert not ours[[not form for form in forms + forms[:1]]].any()


def test_vectors_need_a_table_of_their_width(vectors_path):
    docs = [Doc(Vocab(), words=["no", "vectors"])]
    layer = WordEmbed(4, min_freq=1, vectors=StaticVectors())
    with pytest.raises(ValueError, match=r"the pipeline has no static vectors: give them in"):
        layer.initialize(X=docs)
    with pytest.raises(ValueError, match=r"static vectors' projection's width \(8\) must be"):
        WordEmbed(4, vectors=StaticVectors(nO=8))
    vocab = spacy.load(vectors_path).vocab
    trained = StaticVectors(nO=2)
    trained.initialize(X=[Doc(vocab, words=["The"])])
    other = Vocab()
    other.vectors = Vectors(strings=other.strings, shape=(3, WIDTH + 1))
    with pytest.raises(ValueError, match=r"vectors have width 7, the projection reads 6"):
        trained.predict([Doc(other, words=["The"])])


# -- the full pipeline with vectors -------------------------------------------------


@pytest.fixture(scope="module")
def trained(vectors_path, full_corpora, tmp_path_factory):
    """The small full pipeline, reading the vectors, after a few steps of
    spaCy's training loop; the folder of its model-last."""
    config = filled_config(pipeline="full", lang="en", vectors=str(vectors_path))
    config = load_config_from_str(config.to_str(), overrides={
        **full_corpora, **SMALL, "training.max_steps": 6, "training.eval_frequency": 3})
    fix_random_seed(0)
    nlp = init_nlp(config)
    out = tmp_path_factory.mktemp("vectors_training")
    log = io.StringIO()
    nlp, final = train_loop(nlp, out, stdout=log, stderr=log)
    assert final.is_dir(), log.getvalue()
    return nlp, final


def test_the_pipeline_trains_with_frozen_vectors_stored_once(trained, vectors_path):
    nlp, final = trained
    table = spacy.load(vectors_path).vocab.vectors
    assert numpy.array_equal(nlp.vocab.vectors.data, table.data)   # frozen by training
    [layer] = word_embed_layers(nlp)
    projection = sublayer(layer, "vectors")
    assert projection.get_param("W").shape == (16, WIDTH)
    # No model holds the table: the pipeline stores it once, in its vocab.
    for _, pipe in nlp.components:
        model = getattr(pipe, "model", None)
        for node in model.walk() if model is not None else ():
            assert all(node.get_param(p).shape != table.shape for p in node.param_names
                       if node.has_param(p)), node.name
    assert (final / "vocab" / "vectors").is_file()
    assert spacy.load(final).vocab.vectors.shape == table.shape


def test_the_pipeline_parses_saves_loads_and_pickles(trained, full_corpora, tmp_path):
    nlp, final = trained
    docs = list(nlp.pipe(dev_docs(nlp, full_corpora["paths.dev"])))
    assert all(tree_ok(doc) for doc in docs)
    assert_round_trips(nlp, final, full_corpora["paths.dev"], tmp_path)


def test_a_words_vector_reaches_the_parser(trained):
    """The parser's scores of a sentence change when the vector of one of
    its words does, and those of a sentence without that word do not (the
    encoder reads sentence by sentence)."""
    _, final = trained
    nlp = spacy.load(final)
    parser = nlp.get_pipe("nonmono_parser")

    def scores(words):
        doc = nlp.get_pipe("tok2vec")(Doc(nlp.vocab, words=words))
        return numpy.asarray(parser.model.predict([doc])[0])

    with_word, without = ["The", "people", "was", "."], ["He", "said", "so", "!"]
    assert nlp.vocab.has_vector("people") and not set(with_word) & set(without)
    before = scores(with_word), scores(without)
    nlp.vocab.set_vector("people", 3 * nlp.vocab.get_vector("people") + 1)
    after = scores(with_word), scores(without)
    assert not numpy.allclose(before[0], after[0])
    assert numpy.array_equal(before[1], after[1])


# -- init-config --vectors ------------------------------------------------------------


def test_init_config_reads_the_vectors_in_every_encoder(vectors_path, full_corpora, tmp_path):
    result = run_command("init-config", "full.cfg", "--pipeline", "full", "--lang", "en",
                         "--vectors", vectors_path, cwd=tmp_path, check=True)
    config = load_config(tmp_path / "full.cfg", interpolate=False)
    assert config["paths"]["vectors"] == str(vectors_path)
    assert config["initialize"]["vectors"] == "${paths.vectors}"
    words = config["components"]["tok2vec"]["model"]["tok2vec"]
    assert words["vectors"] == {"@architectures": "spacy_nonmono.StaticVectors.v1",
                                "nO": None, "nM": None}
    assert config["components"]["senter"]["model"]["tok2vec"]["pretrained_vectors"] is True
    assert "static vectors" in (tmp_path / "full.cfg").read_text().splitlines()[0] + \
        (tmp_path / "full.cfg").read_text().splitlines()[1]
    checked = run_spacy("debug", "config", "full.cfg", *[x for k, v in full_corpora.items()
                                                        for x in ("--" + k, v)], cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # spaCy's parser in its place reads the same shared encoder, vectors included.
    spacy_config = spacy_parser_pipeline(load_config(tmp_path / "full.cfg", interpolate=False))
    assert spacy_config["components"]["tok2vec"] == config["components"]["tok2vec"]
    assert spacy_config["components"]["parser"]["model"]["tok2vec"]["upstream"] == "tok2vec"
    # The parser pipeline: spaCy's HashEmbedCNN reads them.
    run_command("init-config", "parser.cfg", "--lang", "en", "--vectors", vectors_path,
                cwd=tmp_path, check=True)
    parser = load_config(tmp_path / "parser.cfg", interpolate=False)
    assert parser["components"]["nonmono_parser"]["model"]["tok2vec"]["pretrained_vectors"]
    assert result.returncode == 0


def test_every_encoder_kind_reads_the_vectors():
    """read_static_vectors: our WordEmbed gets a StaticVectors layer, spaCy's
    HashEmbedCNN `pretrained_vectors`, spaCy's MultiHashEmbed
    `include_static_vectors`, wherever they are in a component's model."""
    from spacy_nonmono.configs import read_static_vectors

    embed = {"@architectures": "spacy.MultiHashEmbed.v2", "width": 8, "attrs": ["NORM"],
             "rows": [100], "include_static_vectors": False}
    config = {"components": {
        "a": {"model": {"@architectures": "spacy.Tok2Vec.v2", "embed": embed, "encode": {}}},
        "b": {"model": {"tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2",
                                    "pretrained_vectors": False}}},
        "c": {"model": {"tok2vec": {"@architectures": "spacy_nonmono.WordEmbed.v1",
                                    "vectors": None}}},
        "d": {"factory": "sentencizer"}}}
    read_static_vectors(config)
    assert embed["include_static_vectors"] is True
    assert config["components"]["b"]["model"]["tok2vec"]["pretrained_vectors"] is True
    assert config["components"]["c"]["model"]["tok2vec"]["vectors"]["@architectures"] == \
        "spacy_nonmono.StaticVectors.v1"


def test_init_config_refuses_vectors_it_cannot_load(vectors_path, tmp_path):
    """A folder without vectors, or vectors of another language than the
    pipeline's (spaCy loads vectors only into a pipeline of their language)."""
    result = run_command("init-config", "x.cfg", "--pipeline", "full", "--vectors", "nowhere",
                         cwd=tmp_path)
    assert result.returncode == 2 and "--vectors nowhere: not a pipeline folder" in result.stderr
    result = run_command("init-config", "x.cfg", "--pipeline", "full", "--lang", "la",
                         "--vectors", vectors_path, cwd=tmp_path)
    assert result.returncode == 2 and "vectors of language 'en', for a pipeline of language " \
        "'la'" in result.stderr
    assert not (tmp_path / "x.cfg").exists()


# -- the benchmark workflow's +vectors ---------------------------------------------------


def test_workflow_vectors_names(tmp_path):
    """+vectors, after +full, gives every encoder of the full pipeline the
    static vectors (ours and spaCy's parser alike); the train step reads them
    from --vectors-dir/<treebank> and says what is missing before training."""
    from benchmarks.system_names import parse_system, training_config
    from spacy_nonmono.cli.common import InputError

    assert parse_system("mh4+global+full+lstmdrop+vectors").model == ("full", "lstmdrop",
                                                                       "vectors")
    assert parse_system("spacy_parser+full+lstmdrop+vectors").model == ("full", "lstmdrop",
                                                                        "vectors")
    with pytest.raises(InputError, match=r"\+vectors gives the full pipeline's encoders"):
        parse_system("covington_nm+vectors")
    for name in ("mh4+global+full+vectors", "spacy_parser+full+vectors"):
        path, overrides = training_config(name, tmp_path)
        config = load_config(path, interpolate=False)
        assert overrides == {} and config["paths"]["vectors"] is None   # given at training
        assert config["components"]["tok2vec"]["model"]["tok2vec"]["vectors"]["@architectures"] \
            == "spacy_nonmono.StaticVectors.v1"
        assert config["components"]["senter"]["model"]["tok2vec"]["pretrained_vectors"] is True
    without = load_config(training_config("mh4+global+full", tmp_path)[0], interpolate=False)
    assert without["components"]["tok2vec"]["model"]["tok2vec"]["vectors"] is None
    root = tmp_path / "bench"
    args = ["workflow", "train", "--root", root, "--systems", "mh4+global+full+vectors"]
    result = run_command(*args, cwd=ROOT, lab=True)
    assert result.returncode == 2 and "give --vectors-dir" in result.stderr
    result = run_command(*args, "--vectors-dir", tmp_path / "none", cwd=ROOT, lab=True)
    assert result.returncode == 2 and f"static vectors for sample: {tmp_path / 'none' / 'sample'}" \
        ": not a pipeline folder with vectors" in result.stderr
    assert not root.exists()
    # The other steps read trained pipelines, which hold their vectors.
    result = run_command("workflow", "compare", "--root", root, "--systems",
                         "mh4+global+full+vectors", cwd=ROOT, lab=True)
    assert result.returncode == 0, result.stderr


# -- the recipe: raw-text and vectors ----------------------------------------------------

GOLD = ("# sent_id = t1\n"
        "1\tGallia\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\test\t_\t_\t_\t_\t0\troot\t_\t_\n"
        "3\tomnis\t_\t_\t_\t_\t1\tamod\t_\t_\n4\tdivisa\t_\t_\t_\t_\t2\txcomp\t_\t_\n"
        "5\tin\t_\t_\t_\t_\t6\tcase\t_\t_\n6\tpartes\t_\t_\t_\t_\t4\tobl\t_\t_\n"
        "7\ttres\t_\t_\t_\t_\t6\tnummod\t_\t_\n8\t.\t_\t_\t_\t_\t2\tpunct\t_\t_\n\n")


def test_raw_text_cleans_and_leaves_out_the_excluded_sentences(tmp_path):
    (tmp_path / "corpus" / "caesar").mkdir(parents=True)
    (tmp_path / "corpus" / "caesar" / "gall1.txt").write_text(
        "CAESAR\n\n[ 1 ] Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae. "
        "Hi omnes lingua differunt; Belgae fortissimi sunt!\n", encoding="utf8")
    (tmp_path / "corpus" / "other.txt").write_text(
        "Dixit (2) GALLIA EST OMNIS DIVISA in quattuor partes? Non dixit.\n", encoding="utf8")
    (tmp_path / "corpus" / "notes.md").write_text("Gallia est bona terra .\n")   # not *.txt
    (tmp_path / "test.conllu").write_text(GOLD, encoding="utf8")
    result = run_command("raw-text", "corpus", "--output", "out.txt", "--exclude", "test.conllu",
                         "--ngram", "4", cwd=tmp_path, lab=True, check=True)
    assert (tmp_path / "out.txt").read_text(encoding="utf8").splitlines() == [
        "Hi omnes lingua differunt ;", "Belgae fortissimi sunt !"]
    # Left out: the heading (one word), "Non dixit." (two), and both sentences
    # sharing "gallia est omnis divisa" with the test sentence, whatever their case.
    assert "| 2 | 2 | 7 | 2 | 1 of 1 |" in result.stdout
    result = run_command("raw-text", "corpus", "--output", "test.conllu", "--exclude",
                         "test.conllu", cwd=tmp_path, lab=True)
    assert result.returncode == 2
    assert result.stderr.startswith("error: --output test.conllu: is an input of this command")
    assert (tmp_path / "test.conllu").read_text(encoding="utf8") == GOLD


def test_vectors_command_makes_a_floret_vectors_folder(tmp_path):
    pytest.importorskip("floret")
    words = sample_words()
    rng = numpy.random.default_rng(3)
    lines = [" ".join(rng.choice(words, size=12)) for _ in range(400)]
    (tmp_path / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    result = run_command("vectors", "corpus.txt", "la_vectors", "--lang", "la", "--dim", "8",
                         "--epochs", "1", "--rows", "500", "--threads", "1", cwd=tmp_path,
                         lab=True, check=True)
    assert "500 rows of width 8" in result.stdout
    nlp = spacy.load(tmp_path / "la_vectors")
    assert nlp.lang == "la" and nlp.vocab.vectors.mode == "floret"
    assert nlp.vocab.vectors.shape == (500, 8)
    assert sorted(p.name for p in (tmp_path / "la_vectors").iterdir()) == ["config.cfg",
                                                                           "meta.json", "tokenizer",
                                                                           "vocab"]
    assert numpy.abs(nlp.vocab.get_vector(NO_VECTOR)).sum() > 0     # subwords: every word
    again = run_command("vectors", "corpus.txt", "la_vectors", "--lang", "la", cwd=tmp_path,
                        lab=True)
    assert again.returncode == 2 and "la_vectors: is not empty" in again.stderr
