"""CoNLL-U evaluation on hand-made cases, numbers computed by hand."""
import numpy
import pytest
import spacy

from spacy_nonmono.conllu_io import filled_sentence, gold_tree, sentence_doc, write_conllu
from spacy_nonmono.evaluation import ConlluError, evaluate_trees, read_conllu, read_gold
from spacy_nonmono.graph import is_projective

from conftest import SAMPLE

GOLD = """# sent_id = 1
# text = Del perro.
1-2	Del	_	_	_	_	_	_	_	_
1	De	de	ADP	_	_	3	case	_	_
2	el	el	DET	_	_	3	det	_	_
3	perro	perro	NOUN	_	_	0	root	_	SpaceAfter=No
4	.	.	PUNCT	_	_	3	punct	_	_

# sent_id = 2
# text = a b c d
1	a	a	NOUN	_	_	3	nsubj:pass	_	_
2	b	b	NOUN	_	_	4	obj	_	_
3	c	c	VERB	_	_	0	root	_	_
3.1	x	x	VERB	_	_	_	_	3:conj	_
4	d	d	VERB	_	_	1	acl	_	_

"""
# Sentence 1: word 2 gets a wrong head. Sentence 2 (non-projective): word 1's
# label differs only in its subtype (correct), word 2's label is wrong, word
# 4's head is wrong.
PREDICTED = [
    ([3, 1, 0, 3], ["case", "det", "root", "punct"]),
    ([3, 4, 0, 3], ["nsubj", "iobj", "root", "acl"]),
]


@pytest.fixture
def gold_path(tmp_path):
    path = tmp_path / "gold.conllu"
    path.write_text(GOLD, encoding="utf8")
    return path


def test_scores_by_hand(gold_path):
    sentences = read_conllu(gold_path)
    scores = evaluate_trees([gold_tree(s) for s in sentences], PREDICTED).to_dict()
    assert scores["words"] == 8  # syntactic words only: no multiword token, no empty node
    assert scores["uas"] == pytest.approx(75.0)
    assert scores["las"] == pytest.approx(62.5)
    assert scores["projective"] == {"uas": 75.0, "las": 75.0, "words": 4}
    assert scores["nonprojective"] == {"uas": 75.0, "las": 50.0, "words": 4}
    assert scores["nonprojective_sentences"] == 1
    # Content words: gold 5, predicted 5, correct 3 -> F1 60.
    assert scores["clas"] == pytest.approx(60.0)
    by_length = scores["by_length"]
    assert by_length["root"] == {"uas": 100.0, "las": 100.0, "words": 2}
    assert by_length["1"] == {"uas": 50.0, "las": 50.0, "words": 2}
    assert by_length["2"]["uas"] == pytest.approx(100.0)
    assert by_length["2"]["las"] == pytest.approx(200 / 3)
    assert by_length["3-6"] == {"uas": 0.0, "las": 0.0, "words": 1}
    assert by_length["7+"] == {"uas": 0.0, "las": 0.0, "words": 0}
    assert scores["by_sentence_length"] == {
        "1-10": {"uas": 75.0, "las": 62.5, "words": 8},
        **{name: {"uas": 0.0, "las": 0.0, "words": 0} for name in ("11-20", "21-30", "31+")}}
    labels = scores["labels"]
    assert labels["nsubj"]["f1"] == pytest.approx(100.0)
    assert labels["det"]["f1"] == 0.0 and labels["det"]["gold"] == 1
    assert labels["obj"]["recall"] == 0.0
    assert labels["iobj"]["gold"] == 0 and labels["iobj"]["precision"] == 0.0


def test_scores_by_sentence_length():
    """Each word counts in the bucket of its sentence's length (10 | 11, 30 | 31)."""
    def chain(n, wrong=0):
        heads = [0] + list(range(1, n))          # word k hangs on word k - 1
        predicted = [0] * wrong + heads[wrong:]  # the first `wrong` words on the root
        return (heads, ["dep"] * n), (predicted, ["dep"] * n)

    pairs = [chain(10, 2), chain(11), chain(30, 3), chain(31, 31)]
    scores = evaluate_trees([g for g, _ in pairs], [p for _, p in pairs]).to_dict()["by_sentence_length"]
    assert scores["1-10"] == {"uas": 90.0, "las": 90.0, "words": 10}
    assert scores["11-20"] == {"uas": 100.0, "las": 100.0, "words": 11}
    assert scores["21-30"]["uas"] == pytest.approx(100 * 28 / 30)
    assert scores["31+"] == {"uas": 100 / 31, "las": 100 / 31, "words": 31}


def test_write_and_read_back(gold_path, tmp_path):
    sentences = read_conllu(gold_path)
    out = tmp_path / "pred.conllu"
    write_conllu(out, (filled_sentence(s, [{"head": h, "deprel": d} for h, d in zip(*tree)],
                                       keep_input=False)
                       for s, tree in zip(sentences, PREDICTED)))
    again = read_conllu(out)
    assert [gold_tree(s) for s in again] == PREDICTED
    # Multiword tokens and empty nodes are kept; a prediction file holds
    # predictions only: the columns not predicted are "_", not the gold's.
    assert [t["id"] for t in again[0]][0] == (1, "-", 2)
    assert any(t["id"] == (3, ".", 1) for t in again[1])
    words = [t for s in again for t in s if isinstance(t["id"], int)]
    assert any(t["lemma"] != "_" for s in sentences for t in s if isinstance(t["id"], int))
    assert {(t["lemma"], t["upos"], t["xpos"], t["feats"]) for t in words} == {("_", "_", None, None)}
    # The predictions read back score against gold exactly as written.
    gold = [gold_tree(s) for s in sentences]
    read_back = evaluate_trees(gold, [gold_tree(s) for s in again]).to_dict()
    assert read_back == evaluate_trees(gold, PREDICTED).to_dict()
    assert read_back["las"] == pytest.approx(62.5)
    # Gold evaluated against itself is perfect.
    perfect = evaluate_trees(gold, gold).to_dict()
    assert perfect["uas"] == perfect["las"] == perfect["clas"] == 100.0


def test_sentence_doc_spacing(gold_path):
    sentences = read_conllu(gold_path)
    doc = sentence_doc(spacy.blank("xx").vocab, sentences[0])
    assert [t.text for t in doc] == ["De", "el", "perro", "."]
    assert doc.text == "De el perro."


def test_projectivity():
    assert is_projective([2, 0, 2])
    assert not is_projective([3, 4, 0, 1])
    # An arc crossing the root arc counts as non-projective.
    assert not is_projective([3, 0, 2])
    # spaCy's test (through the head conversion) against the definition,
    # no two arcs cross with the root arc from node 0, on random trees.
    rng = numpy.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 9))
        order = rng.permutation(n) + 1
        heads = [0] * n
        for k, word in enumerate(order[1:], start=1):
            heads[word - 1] = int(order[rng.integers(0, k)])
        arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, start=1)]
        crossing = any(a < c < b < d for a, b in arcs for c, d in arcs)
        assert is_projective(heads) == (not crossing), heads


def test_read_gold_names_and_skips_invalid_trees(gold_path, tmp_path):
    """Sentences keep their first line; an invalid tree is an error naming
    file, line and sent_id, or with skip_invalid is left out and returned."""
    cycle = ("# sent_id = 3\n1\ta\t_\t_\t_\t_\t2\tdep\t_\t_\n"
             "2\tb\t_\t_\t_\t_\t1\tdep\t_\t_\n\n")
    path = tmp_path / "cycle.conllu"
    path.write_text(GOLD + cycle, encoding="utf8")
    assert [s.first_line for s in read_conllu(gold_path)] == [1, 9]
    with pytest.raises(ConlluError) as error:
        read_gold(path)
    assert (error.value.path, error.value.line) == (path, 17)
    assert error.value.problem.startswith("sentence (sent_id = 3) is not a tree: ")
    assert str(error.value).startswith(f"{path}:17: sentence (sent_id = 3)")
    sentences, skipped = read_gold(path, skip_invalid=True)
    assert [s.metadata["sent_id"] for s in sentences] == ["1", "2"]
    assert [e.line for e in skipped] == [17]


def test_multiword_tokens_and_empty_nodes_need_no_head(gold_path):
    """Only syntactic words must have an integer HEAD and a DEPREL."""
    sentences, skipped = read_gold(gold_path)
    assert len(sentences) == 2 and skipped == []


def test_byte_order_mark_and_crlf_are_read(gold_path, tmp_path):
    """Windows-style files (BOM, CRLF line ends) read like plain ones."""
    path = tmp_path / "bom.conllu"
    path.write_bytes(b"\xef\xbb\xbf" + GOLD.replace("\n", "\r\n").encode("utf8"))
    assert [gold_tree(s) for s in read_conllu(path)] == \
        [gold_tree(s) for s in read_conllu(gold_path)]


@pytest.mark.parametrize("data,problem,line", [
    # Latin-1 text: an encoding to convert, located to the byte.
    ("# sent_id = 1\n1\tni\u00f1o\t_\t_\t_\t_\t0\troot\t_\t_\n\n".encode("latin-1"),
     "not UTF-8 text (byte 0xf1 at column 5); CoNLL-U must be UTF-8: convert it", 2),
    # Binary data: NUL bytes; control bytes that no text has; a zlib header
    # (a .spacy corpus) even without either.
    (b"# sent_id = 1\n\x00\x01", "not a UTF-8 text file (binary data; a .spacy corpus?)", 2),
    (b"\xff\x01\x02abc", "not a UTF-8 text file (binary data; a .spacy corpus?)", 1),
    (b"\x78\x9c\xeb\xe5abc", "not a UTF-8 text file (binary data; a .spacy corpus?)", 1),
    ("# sent_id = 1\n".encode("utf-16"), "is UTF-16 text; CoNLL-U must be UTF-8", None),
])
def test_text_that_is_not_utf8_and_binary_data(data, problem, line, tmp_path):
    path = tmp_path / "gold.conllu"
    path.write_bytes(data)
    with pytest.raises(ConlluError) as error:
        read_conllu(path)
    assert error.value.problem.startswith(problem) and error.value.line == line


def test_upos_accuracy_counts_only_predicted_tags():
    from spacy_nonmono.evaluation.gold_tokens import Evaluation

    evaluation = Evaluation()
    assert evaluation.to_dict()["upos"] is None
    evaluation.add_upos(["NOUN", "VERB", "DET"], ["NOUN", "NOUN", "DET"])
    evaluation.add_upos(["ADJ"], [""])          # no tag predicted: not counted
    assert evaluation.upos.total == 3
    assert evaluation.to_dict()["upos"] == pytest.approx(200 / 3)
    assert "UPOS accuracy: 66.67" in evaluation.to_table()
    with pytest.raises(ValueError, match="gold tokenization"):
        evaluation.add_upos(["NOUN"], ["NOUN", "VERB"])


def test_xpos_and_ufeats_accuracy_from_a_parsed_doc():
    """XPOS counts where the gold file has the column (a treebank without
    it: not applicable, None); UFeats compares the universal features only;
    a pipeline without a tagger or morphologizer is not counted."""
    import conllu
    from spacy.tokens import Doc

    from spacy_nonmono.evaluation.gold_tokens import Evaluation, predicted_tags

    text = ("1\ta\ta\tNOUN\tNN\tCase=Nom|Number[psor]=Sing\t0\troot\t_\t_\n"
            "2\tb\tb\tVERB\t_\t_\t1\tdep\t_\t_\n\n")
    [sentence] = conllu.parse(text)
    doc = Doc(spacy.blank("xx").vocab, words=["a", "b"])
    evaluation = Evaluation()
    evaluation.add_tags(sentence, predicted_tags(doc))     # nothing predicted
    assert (evaluation.to_dict()["xpos"], evaluation.to_dict()["ufeats"]) == (None, None)
    doc[0].tag_, doc[1].tag_ = "NN", "VB"
    doc[0].pos_, doc[1].pos_ = "NOUN", "NOUN"
    doc[0].set_morph("Case=Nom")      # Number[psor] is not universal: right
    doc[1].set_morph("Case=Acc")      # gold has none: wrong
    evaluation.add_tags(sentence, predicted_tags(doc))
    d = evaluation.to_dict()
    assert evaluation.xpos.total == 1 and d["xpos"] == 100.0    # word 2: gold XPOS `_`
    assert d["ufeats"] == 50.0 and d["upos"] == 50.0
    assert "XPOS accuracy: 100.00" in evaluation.to_table()


def test_both_scorers_count_the_same_on_gold_tokens():
    """On gold tokens and sentences the raw-text scorer aligns every word to
    itself, and both scorers read the same metric definitions
    (`evaluation.metrics`): UAS, LAS, CLAS and UPOS agree, count for count,
    on the sample's sentences with heads, labels and tags changed."""
    import copy
    import random

    from spacy_nonmono.conllu_io import gold_tree
    from spacy_nonmono.evaluation import evaluate_raw_text
    from spacy_nonmono.evaluation.gold_tokens import Evaluation

    gold, _ = read_gold(SAMPLE / "en_ewt-sample-test.conllu")
    rng = random.Random(0)
    system = copy.deepcopy(gold)
    for sentence in system:
        words = [t for t in sentence if isinstance(t["id"], int)]
        root = next(t for t in words if t["head"] == 0)
        for token in words:
            if token is not root and rng.random() < 0.2:
                token["head"] = root["id"]          # still a tree
            if rng.random() < 0.2:
                token["deprel"] = rng.choice(["nsubj", "obj", "det", "case", "punct"])
            if rng.random() < 0.2:
                token["upos"] = "X"
    raw = evaluate_raw_text(gold, system)
    evaluation = Evaluation()
    for g, s in zip(gold, system):
        evaluation.add(gold_tree(g), gold_tree(s))
        evaluation.add_upos([t["upos"] for t in g if isinstance(t["id"], int)],
                            [t["upos"] for t in s if isinstance(t["id"], int)])
    words = raw["Words"].gold
    assert evaluation.words.total == words == raw["UAS"].aligned
    assert evaluation.words.heads == raw["UAS"].correct < words
    assert evaluation.words.labelled == raw["LAS"].correct < evaluation.words.heads
    assert (evaluation.clas_correct, evaluation.clas_gold, evaluation.clas_predicted) == \
        (raw["CLAS"].correct, raw["CLAS"].gold, raw["CLAS"].system)
    assert evaluation.upos.heads == raw["UPOS"].correct < words
