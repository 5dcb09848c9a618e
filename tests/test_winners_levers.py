"""The CoNLL 2017-2018 winners' levers as settings of the full pipeline
(docs/results/winners_recipe/): characters for every word (WordEmbed's
`combine`), the taggers' predictions as parser input (TagInput,
`configs.add_tag_input`), and the workflow names that select them. Each
builds, trains a few steps through spaCy's loop, saves, loads and pickles;
tags reach the parser's scores."""
import io
from collections import Counter

import numpy
import pytest
from spacy.tokens import Doc
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import load_config
from spacy.vocab import Vocab
from thinc.api import fix_random_seed

from benchmarks.system_names import parse_system, training_config
from test_full_pipeline import SMALL, assert_round_trips, full_corpora  # noqa: F401
from spacy_nonmono.configs import add_tag_input, config_path, fill, spacy_parser_pipeline
from spacy_nonmono.models.tags import TagInput, annotation_keys
from spacy_nonmono.models.words import CharEncoder, WordEmbed, bounded, set_word_counts

WORDS = "the cat sat on the mat and the dog ran".split()


def word_embed(combine, width=6):
    chars = CharEncoder(width, char_width=4, lstm_width=4, depth=1, rows=50)
    model = WordEmbed(width, chars=chars, min_freq=2, word_dropout=0.0, combine=combine)
    set_word_counts(model, Counter({"the": 3, "cat": 2, "sat": 1}))
    model.initialize()
    return model


def docs_of(*sentences):
    vocab = Vocab()
    return [Doc(vocab, words=s.split()) for s in sentences]


# -- characters for every word --------------------------------------------------------


def test_the_character_encoder_reads_a_bounded_part_of_a_long_form():
    """A form of 100,000 characters is read as its first and last
    max_chars / 2: the same vector as that part alone, and a short form is
    read whole."""
    assert bounded("abcdefgh", 4) == "abgh" and bounded("abcdefgh", 5) == "abfgh"
    assert bounded("abc", 4) == "abc"
    chars = CharEncoder(6, char_width=4, lstm_width=4, depth=1, rows=50, max_chars=10)
    chars.initialize()
    long_form = "x" * 50_000 + "abcdefghij" + "y" * 50_000
    Y = chars.predict([long_form, "x" * 5 + "y" * 5, "short"])
    numpy.testing.assert_allclose(Y[0], Y[1])
    assert not numpy.allclose(Y[1], Y[2])
    with pytest.raises(ValueError, match="max_chars must be a positive integer"):
        CharEncoder(6, max_chars=0)



@pytest.mark.parametrize("combine", ["sum", "concat"])
def test_every_word_reads_its_characters_with_its_row(combine):
    model = word_embed(combine)
    docs = docs_of("the cat sat", "the dog")
    (Y1, Y2), _ = model(docs, is_train=False)
    Y = numpy.vstack([Y1, Y2])
    chars = model.get_ref("chars")
    forms = ["the", "cat", "sat", "the", "dog"]
    C = chars.predict(forms)
    E = model.get_param("E")
    rows = model.attrs["rows"]
    assert set(rows) == {"the", "cat"}
    assert E.shape == (3, 6)                     # two words and the unknown row
    R = numpy.vstack([E[rows[f]] if f in rows else E[-1] for f in forms])
    expected = R + C if combine == "sum" else numpy.hstack([R, C])
    assert model.get_dim("nO") == expected.shape[1] == (6 if combine == "sum" else 12)
    numpy.testing.assert_allclose(Y, expected, rtol=1e-5, atol=1e-6)


def test_replace_keeps_the_characters_for_words_without_a_row():
    model = word_embed("replace")
    docs = docs_of("the sat dog")
    (Y,), _ = model(docs, is_train=False)
    E, rows = model.get_param("E"), model.attrs["rows"]
    assert E.shape == (2, 6)                     # no unknown row: characters stand in
    C = model.get_ref("chars").predict(["sat", "dog"])
    numpy.testing.assert_allclose(Y, numpy.vstack([E[rows["the"]], C]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("combine", ["replace", "sum", "concat"])
def test_word_embed_gradients_match_finite_differences(combine):
    """The gradient of sum(Y * G) for the row table and the character
    encoder's output layer, against central differences."""
    fix_random_seed(1)
    model = word_embed(combine)
    docs = docs_of("the cat sat the", "dog sat")
    chars = model.get_ref("chars")
    Ys, backprop = model(docs, is_train=False)
    G = [numpy.random.RandomState(k).uniform(-1, 1, Y.shape).astype("f")
         for k, Y in enumerate(Ys)]
    for node in (model, chars):
        for name in node.param_names:
            node.set_grad(name, numpy.zeros_like(node.get_param(name)))
    backprop(G)

    def loss():
        Ys, _ = model(docs, is_train=False)
        return float(sum((Y.astype("float64") * g).sum() for Y, g in zip(Ys, G)))

    for node, name in ((model, "E"), (chars, "W"), (chars, "b")):
        param = node.get_param(name)
        grad = node.get_grad(name).copy()
        eps = 1e-2
        for index in list(numpy.ndindex(param.shape))[:12]:
            old = param[index]
            param[index] = old + eps
            up = loss()
            param[index] = old - eps
            down = loss()
            param[index] = old
            assert abs((up - down) / (2 * eps) - grad[index]) < 2e-2, (combine, name, index)


def test_bad_combine_settings_say_what_is_expected():
    chars = CharEncoder(6, char_width=4, lstm_width=4, depth=1, rows=50)
    with pytest.raises(ValueError, match="combine must be one of"):
        WordEmbed(6, chars=chars, combine="mean")
    with pytest.raises(ValueError, match="give `chars`"):
        WordEmbed(6, combine="sum")
    with pytest.raises(ValueError, match="keep `vocabulary`"):
        WordEmbed(6, chars=chars, vocabulary=False, combine="concat")


# -- tags as parser input --------------------------------------------------------------


class Fixed:
    """A stand-in tok2vec: ones, width 3."""

    @staticmethod
    def layer():
        from thinc.api import Model

        def forward(model, docs, is_train):
            Ys = [model.ops.alloc2f(len(doc), 3) + 1 for doc in docs]

            def backprop(dYs):
                model.attrs["grads"].extend(dYs)
                return []

            return Ys, backprop

        return Model("fixed", forward, dims={"nO": 3}, attrs={"grads": []})


def tagged(pos, tag, morph):
    doc = Doc(Vocab(), words=["a", "b"])
    for token, p, t, m in zip(doc, pos, tag, morph):
        token.pos_, token.tag_ = p, t
        token.set_morph(m)
    return doc


def test_tag_input_embeds_each_annotation_beside_the_vectors():
    inner = Fixed.layer()
    model = TagInput(inner, attrs=["POS", "TAG", "MORPH"], width=4, rows=100, dropout=0.0)
    assert model.get_dim("nO") == 3 + 3 * 4
    model.initialize()
    doc = tagged(["NOUN", "VERB"], ["NN", "VB"], ["Number=Sing", "Tense=Past"])
    (Y,), backprop = model([doc], is_train=False)
    assert Y.shape == (2, 15)
    assert numpy.array_equal(Y[:, :3], numpy.ones((2, 3), dtype="f"))
    # Each annotation moves only its own block.
    other = tagged(["NOUN", "NOUN"], ["NN", "VB"], ["Number=Sing", "Tense=Past"])
    (Y2,), _ = model([other], is_train=False)
    assert numpy.array_equal(Y[0], Y2[0])
    assert not numpy.array_equal(Y[1, 3:7], Y2[1, 3:7])
    assert numpy.array_equal(Y[1, 7:], Y2[1, 7:])
    # The vectors' gradient goes to the tok2vec, the rest to the tables.
    dY = numpy.arange(30, dtype="f").reshape(2, 15)
    backprop([dY])
    numpy.testing.assert_array_equal(inner.attrs["grads"][0], dY[:, :3])
    assert any(numpy.abs(table.get_grad("E")).sum() > 0 for table in model.layers[1:])


def test_tag_dropout_drops_annotations_in_training_only():
    model = TagInput(Fixed.layer(), attrs=["POS"], width=4, rows=100, dropout=0.5)
    model.initialize()
    docs = [tagged(["NOUN", "VERB"], ["NN", "VB"], ["", ""]) for _ in range(200)]
    dropped = Doc(Vocab(), words=["a"])   # no annotation: the dropped key
    (unset,), _ = model([dropped], is_train=False)
    Ys, _ = model(docs, is_train=True)
    Y = numpy.vstack(Ys)
    is_dropped = (Y[:, 3:] == unset[0, 3:]).all(axis=1)
    assert 0.35 < is_dropped.mean() < 0.65
    assert not numpy.vstack(model(docs, is_train=False)[0])[:, 3:].__eq__(unset[0, 3:]).all(
        axis=1).any()


def test_tag_input_rejects_bad_settings():
    with pytest.raises(ValueError, match="unknown token attributes"):
        TagInput(Fixed.layer(), attrs=["POS", "NOPE"])
    with pytest.raises(ValueError, match="each attribute once"):
        TagInput(Fixed.layer(), attrs=["POS", "pos"])
    with pytest.raises(ValueError, match="dropout"):
        TagInput(Fixed.layer(), dropout=1.5)


def test_annotation_keys_read_one_column_per_attribute():
    doc = Doc(Vocab(), words=["a", "b"])
    doc[0].pos_, doc[0].tag_ = "NOUN", "NN"
    doc[0].set_morph("Number=Sing")
    keys = annotation_keys([doc, Doc(Vocab(), words=[])], ["POS", "TAG", "MORPH"])
    assert keys.shape == (2, 3)
    assert (keys[0] != 0).all()
    assert (keys[1] == 0).all()        # unset: the key a dropped annotation reads


def test_add_tag_input_wraps_the_parsers_encoder_and_annotates_in_training():
    config = load_config(config_path("full_pipeline.cfg"), interpolate=False)
    add_tag_input(config)
    tok2vec = config["components"]["nonmono_parser"]["model"]["tok2vec"]
    assert tok2vec["@architectures"] == "spacy_nonmono.TagInput.v1"
    assert tok2vec["attrs"] == ["POS", "MORPH", "TAG"]
    assert tok2vec["tok2vec"]["@architectures"] == "spacy.Tok2VecListener.v1"
    assert config["training"]["annotating_components"] == ["tok2vec", "morphologizer", "tagger"]
    assert add_tag_input(config) == config          # once
    fill(config)                                    # spaCy takes it
    # spaCy's parser in the same pipeline gets the same input.
    spacy_config = spacy_parser_pipeline(load_config(config_path("full_pipeline.cfg"),
                                                     interpolate=False))
    add_tag_input(spacy_config)
    assert spacy_config["components"]["parser"]["model"]["tok2vec"]["@architectures"] == \
        "spacy_nonmono.TagInput.v1"
    no_taggers = load_config(config_path("nonmono_parser.cfg"), interpolate=False)
    with pytest.raises(ValueError, match="no morphologizer or tagger"):
        add_tag_input(no_taggers)


# -- trained through spaCy's loop --------------------------------------------------------


def train_small(paths, tmp_path, tag_input, **overrides):
    config = load_config(config_path("full_pipeline.cfg"), interpolate=False,
                         overrides={**paths, **SMALL, "training.max_steps": 8,
                                    "training.eval_frequency": 4, **overrides})
    if tag_input:
        add_tag_input(config)
    fix_random_seed(0)
    nlp = init_nlp(config)
    log = io.StringIO()
    tmp_path.mkdir(parents=True, exist_ok=True)
    nlp, final = train_loop(nlp, tmp_path, stdout=log, stderr=log)
    assert (tmp_path / "model-best").is_dir(), log.getvalue()
    return nlp, final


@pytest.mark.parametrize("combine,tag_input", [
    ("sum", True), pytest.param("concat", False, marks=pytest.mark.slow)])
def test_levers_train_save_load_and_pickle(full_corpora, tmp_path,  # noqa: F811
                                           combine, tag_input):
    nlp, final = train_small(full_corpora, tmp_path / "train", tag_input,
                             **{"components.tok2vec.model.tok2vec.combine": combine,
                                "components.tok2vec.model.tok2vec.min_freq": 2,
                                "components.morphologizer.label_smoothing": 0.03,
                                "components.tagger.model.tok2vec.scale": 1.0})
    assert_round_trips(nlp, final, full_corpora["paths.dev"], tmp_path)


def test_predicted_tags_change_the_parsers_scores(full_corpora, tmp_path):  # noqa: F811
    nlp, _ = train_small(full_corpora, tmp_path, True)
    doc = nlp("The cat sat on the mat .")
    parser = nlp.get_pipe("nonmono_parser")
    before = numpy.array(parser.model.predict([doc]), copy=True)
    predicted = doc[2].pos_
    doc[2].pos_ = "NOUN" if predicted != "NOUN" else "VERB"
    after = numpy.array(parser.model.predict([doc]), copy=True)
    assert before.shape == after.shape
    assert not numpy.allclose(before, after)
    # The tag put back, the scores are back.
    doc[2].pos_ = predicted
    numpy.testing.assert_array_equal(numpy.array(parser.model.predict([doc])), before)


@pytest.mark.parametrize("name,expected", [
    ("mh4+global+full+charsum", {"components.tok2vec.model.tok2vec.combine": "sum"}),
    ("mh4+global+full+charcat", {"components.tok2vec.model.tok2vec.combine": "concat"}),
    ("mh4+global+full+tagloss", {"components.morphologizer.model.tok2vec.scale": 1.0}),
    ("mh4+global+full+smooth", {"components.tagger.label_smoothing": 0.03}),
    ("mh4+global+full+minfreq2", {"components.tok2vec.model.tok2vec.min_freq": 2}),
    ("mh4+global+full+deep", {"components.tok2vec.model.depth": 3}),
    ("mh4+global+full+width384", {"components.tok2vec.model.width": 384}),
    ("mh4+global+full+tagsin",
     {"components.nonmono_parser.model.tok2vec.@architectures": "spacy_nonmono.TagInput.v1"}),
    ("mh4+global+full+xpospos", {"components.tagger.factory": "nonmono_positional_tagger"}),
    ("spacy_parser+full+tagsin",
     {"components.parser.model.tok2vec.@architectures": "spacy_nonmono.TagInput.v1"}),
    ("mh4+global+full+xpospos+taglayer",
     {"components.tagger.model.tok2vec.@architectures": "spacy_nonmono.BiLSTMEncoder.v1",
      "components.morphologizer.model.tok2vec.depth": 1}),
    ("mh4+global+full+taglayer0", {"components.tagger.model.tok2vec.layer_dropout": 0.0,
                                   "components.morphologizer.model.tok2vec.dropout": 0.0}),
    ("spacy_parser+full+taglayer",
     {"components.morphologizer.model.tok2vec.@architectures":
      "spacy_nonmono.BiLSTMEncoder.v1"}),
])
def test_workflow_names_select_the_levers(tmp_path, name, expected):
    path, _ = training_config(name, tmp_path)
    config = load_config(path, interpolate=False)
    for setting, value in expected.items():
        *sections, key = setting.split(".@") if ".@" in setting else setting.split(".")
        if ".@" in setting:
            sections, key = sections[0].split("."), "@" + key
        section = config
        for part in sections:
            section = section[part]
        assert section[key] == value, setting
    fill(config)


def test_workflow_tags_in_needs_the_full_pipeline():
    from spacy_nonmono.cli.common import InputError

    with pytest.raises(InputError, match="add \\+full first"):
        parse_system("mh4+global+tagsin")


# -- XPOS: whole tags or their positions; no XPOS at all ----------------------------------


def test_tag_positions_pad_shorter_tags():
    from spacy_nonmono.pipeline.positional_tagger import tag_positions

    assert tag_positions(["v3s", "n-p", "c"]) == [["c", "n", "v"], ["", "-", "3"], ["", "p", "s"]]
    assert tag_positions([]) == []


def positional_tagger(labels):
    import spacy

    nlp = spacy.blank("xx")
    tagger = nlp.add_pipe("nonmono_positional_tagger")
    return nlp, tagger


def test_positional_loss_is_each_positions_softmax_log_loss():
    """Loss and gradient against a direct computation and central differences."""
    from spacy.training import Example

    nlp, tagger = positional_tagger(None)
    for label in ("v3s", "n-p", "n-s"):
        tagger.add_label(label)
    doc = Doc(nlp.vocab, words=["a", "b", "c"])
    gold = Doc(nlp.vocab, words=["a", "b", "c"], tags=["v3s", "n-p", ""])
    example = Example(doc, gold)
    rng = numpy.random.RandomState(0)
    n = sum(len(chars) for chars in tagger.positions)
    assert tagger.positions == [["n", "v"], ["-", "3"], ["p", "s"]] and n == 6
    S = rng.uniform(-2, 2, (3, n)).astype("f")
    loss, (d,) = tagger.get_loss([example], [S])

    def direct(S):
        total = 0.0
        for row, tag in ((0, "v3s"), (1, "n-p")):
            start = 0
            for chars, char in zip(tagger.positions, tag):
                block = S[row, start:start + len(chars)].astype("float64")
                total -= block[chars.index(char)] - numpy.log(numpy.exp(block).sum())
                start += len(chars)
        return total

    assert loss == pytest.approx(direct(S), rel=1e-5)
    assert not d[2].any()                  # no gold tag: no gradient
    eps = 1e-3
    for index in numpy.ndindex(S.shape):
        up, down = S.astype("float64").copy(), S.astype("float64").copy()
        up[index] += eps
        down[index] -= eps
        assert (direct(up) - direct(down)) / (2 * eps) == pytest.approx(d[index], abs=1e-3)


def test_positional_tagger_spells_tags_from_positions():
    nlp, tagger = positional_tagger(None)
    for label in ("v3s", "n-p"):
        tagger.add_label(label)
    doc = Doc(nlp.vocab, words=["a", "b"])
    # v, -, s: a tag not among the labels, spelled by its positions.
    tagger.set_annotations([doc], [numpy.asarray([[1, 0, 1], [0, 0, 0]])])
    assert [t.tag_ for t in doc] == ["v-s", "n-p"]


@pytest.mark.parametrize("tag_input", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_positional_xpos_trains_saves_loads_and_pickles(full_corpora, tmp_path,  # noqa: F811
                                                        tag_input):
    from spacy_nonmono.configs import positional_xpos

    config = load_config(config_path("full_pipeline.cfg"), interpolate=False,
                         overrides={**full_corpora, **SMALL, "training.max_steps": 8,
                                    "training.eval_frequency": 4})
    positional_xpos(config)
    if tag_input:
        add_tag_input(config)
    fix_random_seed(0)
    nlp = init_nlp(config)
    tagger = nlp.get_pipe("tagger")
    assert type(tagger).__name__ == "PositionalTagger"
    assert len(tagger.labels) > 10
    assert tagger.model.get_ref("output").get_dim("nO") == \
        sum(len(chars) for chars in tagger.positions)
    log = io.StringIO()
    (tmp_path / "train").mkdir()
    nlp, final = train_loop(nlp, tmp_path / "train", stdout=log, stderr=log)
    assert all(t.tag_ for t in nlp("The cat sat on the mat ."))
    assert_round_trips(nlp, final, full_corpora["paths.dev"], tmp_path)


def test_without_tagger_takes_the_xpos_tagger_out_everywhere():
    from spacy_nonmono.configs import filled_config

    config = filled_config(pipeline="full", tag_input=True, xpos="none")
    assert "tagger" not in config["components"]
    assert "tagger" not in config["nlp"]["pipeline"]
    assert config["training"]["annotating_components"] == ["tok2vec", "morphologizer"]
    assert "tag_acc" not in config["training"]["score_weights"]
    assert config["components"]["nonmono_parser"]["model"]["tok2vec"]["attrs"] == ["POS", "MORPH"]
    positional = filled_config(pipeline="full", xpos="positional")
    assert positional["components"]["tagger"]["factory"] == "nonmono_positional_tagger"
    with pytest.raises(ValueError, match="Unknown xpos"):
        filled_config(pipeline="full", xpos="half")


def test_workflow_trains_treebanks_without_xpos_without_a_tagger(tmp_path):
    from benchmarks.workflow.layout import has_xpos

    with_xpos = tmp_path / "a.conllu"
    with_xpos.write_text("# sent_id = 1\n1\tx\tx\tNOUN\tNN\t_\t0\troot\t_\t_\n\n")
    without = tmp_path / "b.conllu"
    without.write_text("# sent_id = 1\n1-2\txy\t_\t_\tZZ\t_\t_\t_\t_\t_\n"
                       "1\tx\tx\tNOUN\t_\t_\t0\troot\t_\t_\n2\ty\ty\tNOUN\t_\t_\t1\tnmod\t_\t_\n\n")
    assert has_xpos(with_xpos) and not has_xpos(without)


def test_tagging_table_marks_what_was_not_measured():
    from benchmarks.compare import tagging_table

    def run(seed, xpos):
        scores = {"upos": 90.0 + seed, "xpos": xpos, "ufeats": 80.0}
        return {"seed": seed, "dev": scores, "test": scores}

    assert tagging_table({("hu", "a"): [{"seed": 0, "dev": {"upos": 1.0},
                                         "test": {"upos": 1.0}}]}, ["hu"], ["a"]) is None
    table = tagging_table({("hu", "a"): [run(0, None), run(1, None)],
                           ("la", "a"): [run(0, 70.0)]}, ["hu", "la"], ["a"])
    rows = table.splitlines()
    assert rows[2] == ("| hu | a | 2 | 90.50 ± 0.71 | n/a | 80.00 ± 0.00 "
                       "| 90.50 ± 0.71 | n/a | 80.00 ± 0.00 |")
    assert rows[3] == "| la | a | 1 | 90.00 | 70.00 | 80.00 | 90.00 | 70.00 | 80.00 |"


def test_a_pipeline_without_xpos_writes_it_as_underscore(full_corpora, tmp_path):  # noqa: F811
    from spacy_nonmono.configs import without_tagger
    from spacy_nonmono.conllu_io import doc_to_conllu

    config = load_config(config_path("full_pipeline.cfg"), interpolate=False,
                         overrides={**full_corpora, **SMALL, "training.max_steps": 4,
                                    "training.eval_frequency": 2})
    without_tagger(add_tag_input(config))
    fix_random_seed(0)
    nlp = init_nlp(config)
    assert "tagger" not in nlp.pipe_names
    log = io.StringIO()
    nlp, _ = train_loop(nlp, tmp_path, stdout=log, stderr=log)
    lines = [line.split("\t") for line in doc_to_conllu(nlp("The cat sat on the mat .")).splitlines()
             if line and not line.startswith("#")]
    assert len(lines) == 7
    assert all(columns[4] == "_" and columns[3] != "_" for columns in lines)


def test_dev_curve_reads_spacys_training_table():
    from benchmarks.workflow.training import dev_curve

    ours = ("E    #       LOSS TOK2VEC  LOSS NONMO...  POS_ACC  DEP_LAS_PUNCT  DEP_UAS_PUNCT  SCORE \n"
            "---  ------  ------------  -------------  -------  -------------  -------------  ------\n"
            "  0       0       1338.96         960.34    26.20           2.33          10.90    0.07\n"
            " 10     200     138701.59      231120.49    61.30          20.90          32.03    0.26\n"
            "\x1b[38;5;2m✔ Saved pipeline to output directory\x1b[0m\n")
    assert dev_curve(ours) == [[0, 2.33, 10.9], [200, 20.9, 32.03]]
    spacys = ("E    #       LOSS PARSER  DEP_UAS  DEP_LAS  SENTS_F  SCORE \n"
              "  3     400       100.00    70.10    60.20   100.00    0.65\n")
    assert dev_curve(spacys) == [[400, 60.2, 70.1]]
    assert dev_curve("no table\n") == []


@pytest.mark.slow
def test_run_logged_shows_and_keeps_the_output(tmp_path, capsys):
    import subprocess
    import sys

    from benchmarks.workflow.layout import run_logged

    run_logged([sys.executable, "-c", "print('a'); import sys; print('b', file=sys.stderr)"],
               tmp_path / "deep" / "train.log")
    assert (tmp_path / "deep" / "train.log").read_text().split() == ["a", "b"]
    assert capsys.readouterr().out.split() == ["a", "b"]
    with pytest.raises(subprocess.CalledProcessError):
        run_logged([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "x.log")


def test_dev_curve_table_reads_the_recorded_checks():
    from benchmarks.compare import dev_curve_table

    curve = [[0, 1.0, 2.0], [1000, 10.0, 20.0], [2000, 30.0, 40.0], [3000, 25.0, 35.0]]
    results = {("la", "a"): [{"seed": 0, "dev_curve": curve},
                             {"seed": 1, "dev_curve": [[0, 1.0, 1.0], [1000, 12.0, 22.0]]}],
               ("la", "b"): [{"seed": 0}]}
    assert dev_curve_table({("la", "b"): [{"seed": 0}]}, ["la"], ["b"]) is None
    rows = dev_curve_table(results, ["la"], ["a", "b"], updates=(1000, 2500)).splitlines()
    assert len(rows) == 3
    assert rows[2] == "| la | a | 2 | 11.00 ± 1.41 | 30.00 | 1,500 ± 707 | 2,000 ± 1,414 |"


def test_init_config_writes_the_tag_and_xpos_settings(tmp_path, capsys):
    from spacy_nonmono.cli import main as nonmono_main

    path = tmp_path / "la.cfg"
    assert nonmono_main(["init-config", str(path), "--pipeline", "full", "--tag-input",
                         "--xpos", "positional"]) == 0
    config = load_config(path, interpolate=False)
    assert config["components"]["tagger"]["factory"] == "nonmono_positional_tagger"
    assert config["components"]["nonmono_parser"]["model"]["tok2vec"]["attrs"] == \
        ["POS", "MORPH", "TAG"]
    assert nonmono_main(["init-config", str(path), "--tag-input"]) == 2
    assert "init-config --pipeline full" in capsys.readouterr().err


# -- a BiLSTM layer of each tagger's own ----------------------------------------------------


def test_tagger_layers_train_save_load_and_pickle(full_corpora, tmp_path):  # noqa: F811
    from spacy_nonmono.configs import positional_xpos, tagger_layers

    config = load_config(config_path("full_pipeline.cfg"), interpolate=False,
                         overrides={**full_corpora, **SMALL, "training.max_steps": 8,
                                    "training.eval_frequency": 4})
    positional_xpos(config)
    tagger_layers(config)
    tagger_layers(config)       # once is enough: a second call changes nothing
    assert config["components"]["tagger"]["model"]["tok2vec"]["tok2vec"]["@architectures"] \
        == "spacy_nonmono.ScaleGradient.v1"
    fix_random_seed(0)
    nlp = init_nlp(config)
    # Each tagger has a layer of its own, as wide as the shared encoder.
    layers = [nlp.get_pipe(name).model.get_ref("tok2vec").get_ref("bilstm")
              for name in ("morphologizer", "tagger")]
    assert layers[0] is not layers[1]
    shared = nlp.get_pipe("tok2vec").model.get_dim("nO")
    assert all(layer.get_dim("nO") == shared for layer in layers)
    log = io.StringIO()
    (tmp_path / "train").mkdir()
    nlp, final = train_loop(nlp, tmp_path / "train", stdout=log, stderr=log)
    doc = nlp("The cat sat on the mat .")
    assert all(t.tag_ and t.pos_ for t in doc)
    assert_round_trips(nlp, final, full_corpora["paths.dev"], tmp_path)


def test_tagger_layers_read_what_the_shared_encoder_reads(tmp_path):
    from spacy_nonmono.cli import main as nonmono_main

    path = tmp_path / "layers.cfg"
    assert nonmono_main(["init-config", str(path), "--pipeline", "full", "--tagger-layer",
                         "bilstm", "--senter", "shared"]) == 0
    config = load_config(path, interpolate=True)
    shared = config["components"]["tok2vec"]["model"]
    for name in ("morphologizer", "tagger"):
        layer = config["components"][name]["model"]["tok2vec"]
        assert (layer["sentences"], layer["window"], layer["overlap"]) == \
            (shared["sentences"], shared["window"], shared["overlap"]) == (False, 64, 32)
        assert layer["tok2vec"]["layer"]["upstream"] == "tok2vec"
    with pytest.raises(ValueError, match="tagger_layers"):
        from spacy_nonmono.configs import tagger_layers
        tagger_layers(load_config(config_path("nonmono_parser.cfg"), interpolate=False))
