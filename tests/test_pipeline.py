"""End-to-end tests of the nonmono_parser component: factory, training,
prediction on awkward inputs, serialization, configs."""
import json
import pickle
import subprocess
import sys

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from conftest import ROOT, SMALL_MODEL, make_nlp, sample_docs, train, tree_ok


@pytest.fixture(scope="module")
def train_examples():
    docs = sample_docs("train", n_sents_per_doc=1, limit=40)
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d) for d in docs]


@pytest.fixture(scope="module")
def trained(train_examples):
    nlp = make_nlp()
    history = train(nlp, train_examples, epochs=20)
    return nlp, history


def test_factory_needs_no_import(tmp_path):
    code = (
        "import spacy; nlp = spacy.blank('xx'); p = nlp.add_pipe('nonmono_parser'); "
        "assert type(p).__name__ == 'NonMonoParser'"
    )
    # Run outside the repository so the installed package (entry points) is used.
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def uas(nlp, examples):
    words = heads = 0
    for eg in examples:
        ref = eg.reference
        doc = nlp(Doc(nlp.vocab, words=[t.text for t in ref], sent_starts=[t.is_sent_start for t in ref]))
        words += len(doc)
        heads += sum(p.head.i == g.head.i for p, g in zip(doc, eg.reference))
    return heads / words


def test_dynamic_oracle_training_learns(trained, train_examples):
    # With exploration the summed loss is not comparable across epochs (the
    # explored paths change), so check what was learned instead.
    nlp, _ = trained
    assert uas(nlp, train_examples) > 0.6


def test_static_oracle_training_lowers_loss(train_examples):
    nlp = make_nlp(oracle="static")
    history = train(nlp, train_examples, epochs=15)
    assert history[-1] < 0.5 * history[0], history
    assert uas(nlp, train_examples) > 0.5


def test_labels_learned_from_data(trained, train_examples):
    nlp, _ = trained
    # The labels of arcs between words; the root is always written ROOT.
    gold = {t.dep_ for eg in train_examples for t in eg.reference if t.head.i != t.i}
    assert set(nlp.get_pipe("nonmono_parser").labels) == gold
    assert "ROOT" not in gold


def test_outputs_are_trees(trained):
    nlp, _ = trained
    for gold in sample_docs("dev", limit=30):
        doc = nlp(Doc(nlp.vocab, words=[t.text for t in gold]))
        assert tree_ok(doc)
        labels = set(nlp.get_pipe("nonmono_parser").labels) | {"dep", "ROOT"}
        assert all(t.dep_ in labels for t in doc)


@pytest.mark.parametrize("words", [[], ["Hello"], ["a", " ", "b", "\n"], ["w"] * 1000])
def test_awkward_docs(trained, words):
    nlp, _ = trained
    doc = nlp(Doc(nlp.vocab, words=words))
    assert len(doc) == len(words)
    if words:
        assert tree_ok(doc)
        assert len(list(doc.sents)) == 1  # no sentence boundaries set: one tree


def test_preset_sentences_give_one_root_each(trained):
    nlp, _ = trained
    words = "The dog barked . A cat slept . Birds sing".split()
    starts = [True, False, False, False, True, False, False, False, True, False]
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    sents = list(doc.sents)
    assert [s.start for s in sents] == [0, 4, 8]
    assert tree_ok(doc)


def test_long_sentence_windows(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("nonmono_parser")
    limit = parser.max_sentence_length
    doc = nlp(Doc(nlp.vocab, words=["word"] * (2 * limit + 7)))
    assert tree_ok(doc) and len(list(doc.sents)) == 1


def arcs(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


def test_serialization_round_trip(trained, tmp_path):
    nlp, _ = trained
    docs = [Doc(nlp.vocab, words=[t.text for t in g]) for g in sample_docs("dev", limit=20)]
    expected = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe(docs)]

    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    again = [Doc(loaded.vocab, words=[t.text for t in d]) for d in docs]
    assert [[(t.head.i, t.dep_) for t in d] for d in loaded.pipe(again)] == expected

    fresh = make_nlp()
    fresh.get_pipe("nonmono_parser").from_bytes(nlp.get_pipe("nonmono_parser").to_bytes())
    again = [Doc(fresh.vocab, words=[t.text for t in d]) for d in docs]
    assert [[(t.head.i, t.dep_) for t in d] for d in fresh.pipe(again)] == expected


def test_scores_include_punctuation():
    """parser_score reports spaCy's UAS/LAS without punctuation (dep labels
    "p"/"punct", any case) and dep_uas_punct/dep_las_punct over every token.
    Hand-made parses where punctuation changes the scores; the predicted
    punctuation keeps its gold label, so every score is plain accuracy."""
    from spacy_nonmono.pipeline.parser import parser_score

    vocab = spacy.blank("en").vocab

    def example(words, gold, pred):
        """gold/pred: one (head index, dep label) per word."""
        def doc(arcs):
            return Doc(vocab, words=words, heads=[h for h, _ in arcs], deps=[d for _, d in arcs])
        return Example(doc(pred), doc(gold))

    # A punctuation token with the wrong head, every other arc right.
    wrong_punct = example(["The", "cat", "sat", "."],
                          gold=[(1, "det"), (2, "nsubj"), (2, "ROOT"), (2, "punct")],
                          pred=[(1, "det"), (2, "nsubj"), (2, "ROOT"), (1, "punct")])
    # Punctuation (label "P") right, a word with the right head and a wrong label.
    right_punct = example(["Birds", "sing", "!"],
                          gold=[(1, "nsubj"), (1, "ROOT"), (1, "P")],
                          pred=[(1, "obj"), (1, "ROOT"), (1, "P")])
    cases = [
        # examples: (uas, las) without punctuation, (uas, las) with it
        ([wrong_punct], (3 / 3, 3 / 3), (3 / 4, 3 / 4)),
        ([right_punct], (2 / 2, 1 / 2), (3 / 3, 2 / 3)),
        ([wrong_punct, right_punct], (5 / 5, 4 / 5), (6 / 7, 5 / 7)),
    ]
    for examples, (uas, las), (uas_punct, las_punct) in cases:
        scores = parser_score(examples)
        assert scores["dep_uas"] == pytest.approx(uas)
        assert scores["dep_las"] == pytest.approx(las)
        assert scores["dep_uas_punct"] - scores["dep_uas"] == pytest.approx(uas_punct - uas)
        assert scores["dep_las_punct"] - scores["dep_las"] == pytest.approx(las_punct - las)
    # The component scores with parser_score (no training needed to score).
    parser = make_nlp().get_pipe("nonmono_parser")
    both = cases[-1][0]
    assert parser.score(both) == parser_score(both)


def test_untrainable_gold_is_counted_not_fatal(train_examples):
    nlp = make_nlp(max_sentence_length=12)
    with pytest.warns(UserWarning, match="longer than max_sentence_length"):
        optimizer = nlp.initialize(lambda: train_examples)
    parser = nlp.get_pipe("nonmono_parser")
    nlp.update(train_examples[:4], sgd=optimizer)
    assert parser.gold_problems["sentences longer than max_sentence_length=12"] > 0


def test_unknown_names_are_clear_errors():
    with pytest.raises(ValueError, match="Unknown transition system 'nope'.*covington"):
        make_nlp(system="nope")
    with pytest.raises(ValueError, match="Unknown oracle"):
        make_nlp(oracle="psychic")
    with pytest.raises(ValueError, match=r"Unknown loss 'exactish' \(system option 'loss' of "
                                         r"'covington_nm'\): expected one of .*'pc_upper'"):
        make_nlp(system="covington_nm", system_options={"loss": "exactish"})
    with pytest.raises(ValueError, match=r"Unknown loss 'upper' \(system option 'loss' of "
                                         r"'covington'\)"):
        make_nlp(system="covington", system_options={"loss": "upper"})
    with pytest.raises(ValueError, match=r"System 'arc_eager' takes no option 'loss' \(in "
                                         r"system_options\); it takes no options"):
        make_nlp(system="arc_eager", system_options={"loss": "upper"})
    # `loss` is a system option only, not a component setting.
    with pytest.raises(Exception, match="loss"):
        make_nlp(system="covington_nm", loss="upper")


@pytest.mark.parametrize("system,options", [
    ("covington", {}), ("covington_nm", {"loss": "lower"}), ("covington_nm", {"loss": "pc_upper"}),
    ("covington_nm", {"loss": "upper"}),
    ("arc_eager", {}), ("arc_eager_nm2013", {}), ("arc_eager_tree", {}), ("arc_eager_unshift", {}),
    ("swap_lazy", {}), ("swap_stay_eager", {}), ("swap_stay_eager", {"context": "wide"}),
    ("arc_standard", {}), ("arc_standard", {"strategy": "right_first"}),
])
def test_system_trains_parses_and_round_trips(system, options, train_examples, tmp_path):
    nlp = make_nlp(system=system, system_options=options)
    train(nlp, train_examples, epochs=20)
    assert uas(nlp, train_examples) > 0.6
    docs = [Doc(nlp.vocab, words=[t.text for t in g]) for g in sample_docs("dev", limit=20)]
    parsed = list(nlp.pipe(docs))
    assert all(tree_ok(d) for d in parsed)
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    parser = loaded.get_pipe("nonmono_parser")
    assert parser.moves.name == system
    assert parser.moves.options == nlp.get_pipe("nonmono_parser").moves.options
    if "loss" in options:
        assert parser.moves.loss_name == options["loss"]
    expected = arcs(parsed)
    assert arcs(loaded.pipe([Doc(loaded.vocab, words=[t.text for t in d]) for d in docs])) == expected
    # Pickling (what nlp.pipe(n_process=...) does under spawn) keeps the parses.
    unpickled = pickle.loads(pickle.dumps(loaded))
    assert unpickled.get_pipe("nonmono_parser").moves.options == parser.moves.options
    assert arcs(unpickled.pipe([Doc(unpickled.vocab, words=[t.text for t in d]) for d in docs])) \
        == expected
    # Preset sentences, awkward and over-long docs, as for the default system.
    words = "The dog barked . A cat slept . Birds sing".split()
    starts = [True, False, False, False, True, False, False, False, True, False]
    doc = loaded(Doc(loaded.vocab, words=words, sent_starts=starts))
    assert [s.start for s in doc.sents] == [0, 4, 8] and tree_ok(doc)
    limit = parser.max_sentence_length
    for words in ([], ["Hello"], ["a", " ", "b", "\n"], ["word"] * (limit + 7)):
        doc = loaded(Doc(loaded.vocab, words=words))
        assert len(doc) == len(words) and (not words or tree_ok(doc))


def test_oracle_analyses_run_on_the_sample(tmp_path):
    """The Table 1 and section 6.3 analyses, tiny: numbers in range, bounds
    ordered, every arc move classified."""
    from benchmarks.oracle import training_overrides
    from benchmarks.oracle_analysis import arc_move_effects, bound_tightness

    docs = sample_docs("train", limit=60)
    DocBin(docs=docs).to_disk(tmp_path / "train.spacy")
    config = ROOT / "configs" / "nonmono_parser.cfg"
    overrides = {**training_overrides(tmp_path / "train.spacy", "upper"), "training.max_steps": 10}
    result = bound_tightness(config, overrides, 2000, log=lambda line: None)
    assert result["configurations"] == 2000
    m = result["mean"]
    assert m["lower"] <= m["exact"] <= m["pc_upper"] <= m["upper"]
    assert result["settled"] + result["unsettled"] == 2000

    nlp = make_nlp(system="covington_nm", system_options={"loss": "upper"})
    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d) for d in docs[:30]]
    train(nlp, examples, epochs=3)
    weights = nlp.get_pipe("nonmono_parser").model.get_ref("step").get_param("W").copy()
    counts = arc_move_effects(nlp, examples)
    assert counts["arc_moves"] > 0
    assert 0 <= counts["replacing_harmful"] + counts["replacing_created_gold"] <= counts["replacing"]
    assert (nlp.get_pipe("nonmono_parser").model.get_ref("step").get_param("W") == weights).all()


def test_exploration_policy():
    """follow_oracle_prob null takes the system's policy: the arc-eager family
    always follows the prediction (Honnibal & Johnson 2015, section 2.2),
    the others follow the oracle with probability 0.1; a value overrides it
    and is checked."""
    def follow(**config):
        return make_nlp(**config).get_pipe("nonmono_parser").follow_oracle_prob

    assert follow() == follow(system="covington_nm") == follow(system="swap_stay_eager") == 0.1
    for system in ("arc_eager", "arc_eager_nm2013", "arc_eager_tree", "arc_eager_unshift"):
        assert follow(system=system) == 0.0
    assert follow(system="arc_eager_unshift", follow_oracle_prob=0.25) == 0.25
    with pytest.raises(ValueError, match="follow_oracle_prob must be in"):
        make_nlp(follow_oracle_prob=1.5)


def test_predict_before_training_is_a_clear_error():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="no labels"):
        nlp(Doc(nlp.vocab, words=["a", "b"]))


def test_shared_tok2vec_listener(train_examples):
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", config={"model": SMALL_MODEL["tok2vec"]})
    model = dict(SMALL_MODEL)
    model["tok2vec"] = {"@architectures": "spacy.Tok2VecListener.v1", "width": 32}
    nlp.add_pipe("nonmono_parser", config={"model": model, "oracle": "static"})
    history = train(nlp, train_examples, epochs=6)
    assert history[-1] < 0.5 * history[0], history
    assert tree_ok(nlp(Doc(nlp.vocab, words=["The", "cat", "sat", "."])))


@pytest.fixture(scope="module")
def saved_pipeline(trained, tmp_path_factory):
    nlp, _ = trained
    path = tmp_path_factory.mktemp("pipeline") / "model"
    nlp.to_disk(path)
    return path


def test_load_time_settings_take_effect(trained, saved_pipeline):
    nlp, _ = trained
    overrides = {"components": {"nonmono_parser": {"max_sentence_length": 5}}}
    loaded = spacy.load(saved_pipeline, config=overrides)
    parser = loaded.get_pipe("nonmono_parser")
    assert loaded.config["components"]["nonmono_parser"]["max_sentence_length"] == 5
    assert parser.cfg["max_sentence_length"] == 5
    words = "The dog that the cat saw barked at the man in the park .".split()
    assert len(parser._windows(Doc(loaded.vocab, words=words))) == 3
    # The same parses as the trained component given the same limit.
    original = nlp.get_pipe("nonmono_parser")
    saved_limit = original.max_sentence_length
    original.cfg["max_sentence_length"] = 5
    try:
        expected = arcs([nlp(Doc(nlp.vocab, words=words))])
    finally:
        original.cfg["max_sentence_length"] = saved_limit
    assert arcs([loaded(Doc(loaded.vocab, words=words))]) == expected


@pytest.mark.parametrize("overrides,message", [
    ({"system": "covington"}, "trained with system = 'covington_nm'"),
    ({"system": "swap_stay_eager", "system_options": {"context": "wide"}}, "trained with system"),
])
def test_load_time_model_settings_are_refused(saved_pipeline, overrides, message):
    with pytest.raises(ValueError, match=message):
        spacy.load(saved_pipeline, config={"components": {"nonmono_parser": overrides}})


def test_load_time_context_change_is_refused(train_examples, tmp_path):
    nlp = make_nlp(system="swap_stay_eager")
    nlp.initialize(lambda: train_examples)
    nlp.to_disk(tmp_path / "model")
    wide = {"components": {"nonmono_parser": {"system_options": {"context": "wide"}}}}
    with pytest.raises(ValueError, match="change the context the model reads"):
        spacy.load(tmp_path / "model", config=wide)
    # A training-only option may change: it takes effect and nlp.config says so.
    coins = {"components": {"nonmono_parser": {"system_options": {"shift_probability": 0.5}}}}
    loaded = spacy.load(tmp_path / "model", config=coins)
    assert loaded.get_pipe("nonmono_parser").moves.options["shift_probability"] == 0.5
    assert loaded.config["components"]["nonmono_parser"]["system_options"] == {"shift_probability": 0.5}


@pytest.mark.slow
def test_multiprocessing_under_spawn(trained, saved_pipeline, tmp_path):
    """nlp.pipe(n_process=2) with the spawn start method (the default on
    macOS and Windows) pickles the pipeline: same parses as one process."""
    nlp, _ = trained
    texts = [" ".join(t.text for t in g) for g in sample_docs("dev", limit=12)]
    expected = arcs(nlp.pipe(texts))
    script = (
        "import json, multiprocessing, sys, spacy\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.set_start_method('spawn')\n"
        f"    nlp = spacy.load({str(saved_pipeline)!r})\n"
        "    texts = json.loads(sys.stdin.read())\n"
        "    docs = nlp.pipe(texts, n_process=2, batch_size=4)\n"
        "    print(json.dumps([[(t.head.i, t.dep_) for t in d] for d in docs]))\n"
    )
    (tmp_path / "spawn_pipe.py").write_text(script)
    out = subprocess.run([sys.executable, "spawn_pipe.py"], input=json.dumps(texts), cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert [[tuple(a) for a in doc] for doc in json.loads(out.stdout)] == expected
