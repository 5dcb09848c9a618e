"""The ensemble (`nonmono_ensemble`, spacy_nonmono/pipeline/ensemble.py):
reparsing votes gives a tree, the majority tree where one exists, and the
member's own parse for an ensemble of one; the component parses with members
trained on the sample (tests/data/saved_pipelines), saves, loads and pickles;
the `ensemble` command builds a pipeline that `evaluate` scores."""
import pickle
import random
from pathlib import Path

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from conftest import SAMPLE, WORDS, random_heads, run_command, scaled, tree_ok
from spacy_nonmono.graph import check_gold_tree
from spacy_nonmono.pipeline.ensemble import arc_structure, build_ensemble, reparse, vote

SAVED = Path(__file__).resolve().parent / "data" / "saved_pipelines"
GREEDY, GLOBAL = str(SAVED / "greedy"), str(SAVED / "global")
TEXTS = ["The dog saw a cat . It ran away quickly .", "Where is the station ?",
         "I said that he would come , but he did not and we left early today ."]


def parses(nlp, docs):
    return [[(t.head.i, t.dep_, t.pos_, t.tag_) for t in doc] for doc in nlp.pipe(docs)]


def word_docs(vocab, seed=0, n_docs=30):
    rng = random.Random(seed)
    return [Doc(vocab, words=[rng.choice(WORDS) for _ in range(rng.randint(1, 40))])
            for _ in range(n_docs)]


@pytest.fixture(scope="module")
def members():
    return {"greedy": spacy.load(GREEDY), "global": spacy.load(GLOBAL)}


# -- reparsing ----------------------------------------------------------------------

def random_votes(seed, n, n_members):
    """Random member trees of n words and their weights."""
    rng = random.Random(seed)
    trees = [random_heads(rng, n) for _ in range(n_members)]
    return trees, [rng.choice([0.5, 1.0, 2.0]) for _ in trees]


@settings(max_examples=scaled(60))
@given(seed=st.integers(0, 10**6), n=st.integers(1, 9), n_members=st.integers(1, 5))
def test_reparse_gives_a_tree_and_the_majority_tree(seed, n, n_members):
    trees, weights = random_votes(seed, n, n_members)
    structure = arc_structure("mst")
    heads = reparse(trees, weights, structure)
    check_gold_tree(heads)
    assert reparse(trees[:1], weights[:1], structure) == list(trees[0])
    # A tree with more than half the weight is the best: each of its arcs has
    # more votes than any other head of the same word.
    majority = [sum(weights[1:]) + 0.5] + weights[1:]
    assert reparse(trees, majority, structure) == list(trees[0])


@settings(max_examples=scaled(40))
@given(seed=st.integers(0, 10**6), n=st.integers(1, 9), n_members=st.integers(1, 4))
def test_reparse_in_the_mh4_chart_gives_the_mh4_tree_with_the_most_votes(seed, n, n_members):
    """structure = "mh4_arcs": a tree MH4 derives, one root arc; a member's
    tree that MH4 derives and that has more than half the weight wins."""
    from spacy_nonmono.graph.charts import coverage

    trees, weights = random_votes(seed, n, n_members)
    structure = arc_structure("mh4_arcs")
    heads = reparse(trees, weights, structure)
    check_gold_tree(heads)
    assert heads.count(0) == 1 and coverage(heads, 4, single_root=True) == n
    if coverage(trees[0], 4, single_root=True) == n:
        majority = [sum(weights[1:]) + 0.5] + weights[1:]
        assert reparse(trees, majority, structure) == list(trees[0])


@settings(max_examples=scaled(40))
@given(seed=st.integers(0, 10**6), n=st.integers(1, 9), n_members=st.integers(1, 4))
def test_reparse_in_the_1ec_chart_gives_the_1ec_tree_with_the_most_votes(seed, n, n_members):
    """structure = "1ec_arcs": a 1-Endpoint-Crossing tree, one root arc; a
    member's 1EC tree with more than half the weight wins."""
    from spacy_nonmono.graph import is_one_endpoint_crossing

    trees, weights = random_votes(seed, n, n_members)
    structure = arc_structure("1ec_arcs")
    heads = reparse(trees, weights, structure)
    check_gold_tree(heads)
    assert heads.count(0) == 1 and is_one_endpoint_crossing(heads)
    if is_one_endpoint_crossing(list(trees[0])) and list(trees[0]).count(0) == 1:
        majority = [sum(weights[1:]) + 0.5] + weights[1:]
        assert reparse(trees, majority, structure) == list(trees[0])


def test_reparse_ignores_words_a_member_gives_no_vote():
    structure = arc_structure("mst")
    assert reparse([[2, 0, 2], [-1, -1, -1]], [1.0, 5.0], structure) == [2, 0, 2]


def test_vote_is_weighted_and_ties_go_to_the_earlier_member():
    assert vote(["a", "b", "b"], [1, 1, 1]) == "b"
    assert vote(["a", "b", "b"], [3, 1, 1]) == "a"
    assert vote(["b", "a"], [1, 1]) == "b"


def test_the_structure_must_read_arcs():
    assert arc_structure("mh4_arcs").name == "mh4_arcs"
    with pytest.raises(ValueError, match="one arc table.*'mh4_chart' reads"):
        arc_structure("mh4_chart")
    with pytest.raises(ValueError, match="Unknown structure 'nope'"):
        arc_structure("nope")


# -- the component ------------------------------------------------------------------

@pytest.mark.parametrize("name,structure", [("greedy", "mst"), ("global", "mst"),
                                            ("global", "mh4_arcs")])
def test_an_ensemble_of_one_parses_as_its_member(name, structure, members):
    """mh4_arcs too for the MH4 member, whose trees MH4 derives."""
    nlp = build_ensemble([str(SAVED / name)], structure=structure)
    member = members[name]
    docs = [member.make_doc(text) for text in TEXTS] + word_docs(member.vocab)
    expected = parses(member, docs)
    assert parses(nlp, [nlp.make_doc(d.text) for d in docs]) == expected


def test_two_votes_against_one_follow_the_two(members):
    nlp = build_ensemble([GREEDY, GLOBAL, GREEDY])
    greedy = members["greedy"]
    docs = [greedy.make_doc(text) for text in TEXTS] + word_docs(greedy.vocab, seed=1)
    got = parses(nlp, [nlp.make_doc(d.text) for d in docs])
    # Heads and labels of the two greedy votes; tags have no voters (unset).
    assert [[t[:2] for t in doc] for doc in got] == \
        [[t[:2] for t in doc] for doc in parses(greedy, docs)]


def test_the_output_is_a_tree_per_sentence_and_keeps_preset_sentences():
    nlp = build_ensemble([GREEDY, GLOBAL], weights=[1.0, 1.5])
    for doc in nlp.pipe(word_docs(nlp.vocab, seed=2)):
        assert tree_ok(doc)
    words = "The dog barked . A cat slept . Birds sing".split()
    starts = [True, False, False, False, True, False, False, False, True, False]
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    assert [s.start for s in doc.sents] == [0, 4, 8] and tree_ok(doc)
    for words in ([], ["Hello"]):
        doc = nlp(Doc(nlp.vocab, words=words))
        assert len(doc) == len(words)


def test_saved_loaded_and_pickled_ensembles_parse_the_same(tmp_path):
    nlp = build_ensemble([GREEDY, GLOBAL], weights=[2.0, 1.0])
    docs = word_docs(nlp.vocab, seed=3, n_docs=10)
    expected = parses(nlp, [nlp.make_doc(d.text) for d in docs])
    nlp.to_disk(tmp_path / "ensemble")
    loaded = spacy.load(tmp_path / "ensemble")
    assert loaded.get_pipe("nonmono_ensemble").cfg["weights"] == [2.0, 1.0]
    assert parses(loaded, [loaded.make_doc(d.text) for d in docs]) == expected
    from_bytes = spacy.blank(nlp.lang)
    from_bytes.add_pipe("nonmono_ensemble", config={"members": [GREEDY, GLOBAL]})
    from_bytes.from_bytes(nlp.to_bytes())
    assert parses(from_bytes, [from_bytes.make_doc(d.text) for d in docs]) == expected
    unpickled = pickle.loads(pickle.dumps(loaded))
    assert parses(unpickled, [unpickled.make_doc(d.text) for d in docs]) == expected


def test_bad_settings_are_clear_errors(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_ensemble")
    with pytest.raises(ValueError, match="an ensemble needs members"):
        nlp.initialize()
    with pytest.raises(ValueError, match="no members loaded"):
        nlp("a text")
    with pytest.raises(ValueError, match="2 weights for 1 members"):
        spacy.blank("en").add_pipe("nonmono_ensemble",
                                   config={"members": [GREEDY], "weights": [1, 2]})
    with pytest.raises(ValueError, match="weights must be positive"):
        spacy.blank("en").add_pipe("nonmono_ensemble",
                                   config={"members": [GREEDY], "weights": [0]})
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ValueError, match="has no dependency parser"):
        build_ensemble([str(tmp_path / "blank")])


def test_the_command_builds_an_ensemble_that_evaluate_scores(tmp_path):
    out = tmp_path / "ensemble"
    made = run_command("ensemble", out, GREEDY, GLOBAL, GREEDY, cwd=tmp_path, check=True)
    assert "saved the ensemble" in made.stdout
    gold = SAMPLE / "en_ewt-sample-dev.conllu"
    ensemble = run_command("evaluate", out, gold, cwd=tmp_path, check=True)
    member = run_command("evaluate", GREEDY, gold, cwd=tmp_path, check=True)
    # Two greedy votes of three: the greedy member's scores.
    assert ensemble.stdout == member.stdout
    again = run_command("ensemble", out, GREEDY, cwd=tmp_path)
    assert again.returncode == 2 and "not empty" in again.stderr
