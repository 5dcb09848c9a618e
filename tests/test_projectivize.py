"""The `projectivize` setting: how projective systems learn from
non-projective gold trees ("pseudo": spaCy's pseudo-projective lifting,
undone at output; "optimal": optimal projectivization; "none": the original
trees)."""
from collections import Counter

import pytest
import spacy
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example

from conftest import ud_dir
from spacy_nonmono.evaluation import read_gold
from spacy_nonmono.conllu_io import gold_tree
from spacy_nonmono.graph import is_projective
from spacy_nonmono.pipeline.sentences import pseudo_projectivize
from conftest import SMALL_MODEL, tree_ok

# Alpha -> gamma and beta -> delta cross (Alpha the root).
NONPROJ_WORDS = ["Alpha", "beta", "gamma", "delta", "."]
NONPROJ_HEADS = [0, 0, 0, 1, 0]       # absolute; the root (0) is its own head
NONPROJ_DEPS = ["ROOT", "obj", "nmod", "amod", "punct"]


def make_nlp(system, projectivize=None, oracle=None):
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL, "system": system,
                                           "projectivize": projectivize, "oracle": oracle})
    return nlp


def nonprojective_example(vocab):
    gold = Doc(vocab, words=NONPROJ_WORDS, heads=NONPROJ_HEADS, deps=NONPROJ_DEPS)
    assert not is_projective([0 if h == k else h + 1 for k, h in enumerate(NONPROJ_HEADS)])
    return Example(Doc(vocab, words=NONPROJ_WORDS), gold)


def test_settings_are_validated():
    assert make_nlp("covington").get_pipe("nonmono_parser").cfg["projectivize"] == "none"
    assert make_nlp("covington", "none").get_pipe("nonmono_parser").cfg["projectivize"] == "none"
    assert make_nlp("arc_eager_unshift").get_pipe("nonmono_parser").cfg["projectivize"] == "pseudo"
    # The optimal-step oracle learns from the original trees; the static one needs them lifted.
    assert make_nlp("arc_standard").get_pipe("nonmono_parser").cfg["projectivize"] == "none"
    assert make_nlp("arc_standard", oracle="static").get_pipe(
        "nonmono_parser").cfg["projectivize"] == "pseudo"
    assert make_nlp("arc_eager", "none").get_pipe("nonmono_parser").cfg["projectivize"] == "none"
    with pytest.raises(ValueError, match="builds non-projective trees: projectivize must be "
                                         "'none' \\(or null\\), not 'pseudo'"):
        make_nlp("covington_nm", "pseudo")
    assert make_nlp("arc_standard", "optimal").get_pipe("nonmono_parser").cfg["projectivize"] == \
        "optimal"
    with pytest.raises(ValueError, match="Unknown projectivize 'lift': expected one of "
                                         "'pseudo', 'optimal', 'none'"):
        make_nlp("arc_eager", "lift")
    with pytest.raises(ValueError, match="not 'optimal'"):
        make_nlp("covington", "optimal")


def test_pseudo_projective_training_and_output(tmp_path):
    nlp = make_nlp("arc_eager_unshift")
    vocab = nlp.vocab
    nonproj_eg = nonprojective_example(vocab)
    projective = [Example(Doc(vocab, words=["The", "cat", "sat", "."]),
                          Doc(vocab, words=["The", "cat", "sat", "."], heads=[1, 2, 2, 2],
                              deps=["det", "nsubj", "ROOT", "punct"]))]
    examples = [nonproj_eg] + projective
    optimizer = nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("nonmono_parser")
    # The labels are those of the lifted trees: spaCy's decoration included.
    _, decorated = nonproj.projectivize(NONPROJ_HEADS, NONPROJ_DEPS)
    lifted = {d for d in decorated if nonproj.is_decorated(d)}
    assert lifted and lifted <= set(parser.labels)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    docs = list(nlp.pipe([Doc(vocab, words=NONPROJ_WORDS * 3), Doc(vocab, words=["a", "b"])]))
    for doc in docs:
        assert tree_ok(doc)
        assert not any("||" in t.dep_ for t in doc)
        for sent in doc.sents:
            assert [t.dep_ for t in sent if t.head.i == t.i] == ["ROOT"]
            assert sum(t.dep_ == "ROOT" for t in sent) == 1
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("nonmono_parser").cfg["projectivize"] == "pseudo"
    again = loaded(Doc(loaded.vocab, words=NONPROJ_WORDS * 3))
    assert [(t.head.i, t.dep_) for t in again] == [(t.head.i, t.dep_) for t in docs[0]]


@pytest.mark.parametrize("system", ["arc_standard", "arc_eager_unshift"])
def test_optimal_projectivization_training(system):
    """"optimal" trains on the projective tree with the most gold arcs, with
    the gold labels (no decorated label), and outputs projective trees."""
    from spacy_nonmono.graph.split_grammars import optimal_projectivization

    nlp = make_nlp(system, "optimal")
    vocab = nlp.vocab
    examples = [nonprojective_example(vocab)]
    optimizer = nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("nonmono_parser")
    assert set(parser.labels) == set(NONPROJ_DEPS) - {"ROOT"}
    [(_, _, _, heads, deps)] = list(parser._gold_trees(examples, Counter()))
    one_based = [0 if h == k else h + 1 for k, h in enumerate(NONPROJ_HEADS)]
    assert heads == optimal_projectivization(one_based)[0] and is_projective(heads)
    assert deps == NONPROJ_DEPS
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    doc = nlp(Doc(vocab, words=NONPROJ_WORDS))
    assert tree_ok(doc)
    assert is_projective([0 if t.head.i == t.i else t.head.i + 1 for t in doc])


def test_set_annotations_deprojectivizes():
    """A decorated label in the parse is resolved as spaCy resolves it."""
    nlp = make_nlp("arc_eager")
    parser = nlp.get_pipe("nonmono_parser")
    doc = Doc(nlp.vocab, words=NONPROJ_WORDS)
    lifted, decorated = nonproj.projectivize(NONPROJ_HEADS, NONPROJ_DEPS)
    parser.set_annotations([doc], [(lifted, decorated)])
    assert [t.head.i for t in doc] == NONPROJ_HEADS
    assert [t.dep_ for t in doc] == NONPROJ_DEPS


@pytest.mark.parametrize("treebank", ["got_proiel", "hu_szeged", "la_perseus"])
def test_round_trip_on_training_sets(treebank):
    """Lifting each gold sentence as training does and undoing it as output
    does returns the gold tree exactly as often as spaCy's own functions
    (applied to the whole sentence Doc)."""
    root = ud_dir()
    if root is None or not list((root / treebank).glob("*-train.conllu")):
        pytest.skip("UD data not available")
    [path] = list((root / treebank).glob("*-train.conllu"))
    sentences, _ = read_gold(path)
    vocab = spacy.blank("xx").vocab
    ours = spacys = nonprojective = 0
    for sentence in sentences:
        heads, deps = gold_tree(sentence)
        deps = ["ROOT" if h == 0 else d for h, d in zip(heads, deps)]
        words = [t["form"] for t in sentence if isinstance(t["id"], int)]
        if is_projective(heads):
            continue
        nonprojective += 1
        # Ours: per sentence, 1-based heads, as the component trains.
        lifted, decorated = pseudo_projectivize(heads, deps)
        assert is_projective(lifted)
        absolute = [k if h == 0 else h - 1 for k, h in enumerate(lifted)]
        doc = Doc(vocab, words=words, heads=absolute, deps=decorated)
        nonproj.deprojectivize(doc)
        ours += [t.head.i for t in doc] == [k if h == 0 else h - 1 for k, h in enumerate(heads)]
        # spaCy's: projectivize the gold Doc's parse, deprojectivize.
        gold = Doc(vocab, words=words, heads=[k if h == 0 else h - 1 for k, h in enumerate(heads)],
                   deps=deps)
        proj_heads, proj_deps = nonproj.projectivize([t.head.i for t in gold],
                                                     [t.dep_ for t in gold])
        doc = Doc(vocab, words=words, heads=proj_heads, deps=proj_deps)
        nonproj.deprojectivize(doc)
        spacys += [t.head.i for t in doc] == [t.head.i for t in gold]
    print(f"\n{treebank}: {nonprojective} non-projective training sentences, "
          f"round trip exact: ours {ours}, spaCy's {spacys}")
    assert nonprojective > 0 and ours == spacys
