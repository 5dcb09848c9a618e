"""CoNLL 2018 scoring of raw-text output (spacy_nonmono.evaluation.raw_text).

Each case is a hand-made CoNLL-U pair; the comments work out the expected
counts. Scores are percentages rounded to 2 decimals. In the `conll` strings,
a row is ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL separated by spaces (DEPS
and MISC are filled in as "_"), and a blank line ends a sentence; FORMs with
spaces are written with tabs instead.
"""
import textwrap

import conllu
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import scaled
from spacy_nonmono.evaluation.raw_text import (
    METRICS,
    TextMismatchError,
    evaluate_raw_text,
    evaluate_raw_text_files,
)


def conll(text: str):
    lines = []
    for line in textwrap.dedent(text).strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "\t" not in line:
            columns = line.split()
            columns += ["_"] * (10 - len(columns))
            assert len(columns) == 10, line
            line = "\t".join(columns)
        lines.append(line)
    return conllu.parse("\n".join(lines) + "\n\n")


def evaluate(gold: str, system: str):
    return evaluate_raw_text(conll(gold), conll(system))


def prf(score):
    return score.precision, score.recall, score.f1


def counts(score):
    return score.gold, score.system, score.correct


GERMAN = """
    # text = Wir gehen zum Markt.
    1   Wir    wir    PRON  PPER  Case=Nom|Number=Plur|Person=1  2  nsubj
    2   gehen  gehen  VERB  VVFIN Mood=Ind|Tense=Pres|Foo=Bar    0  root
    3-4 zum    _      _     _     _                              _  _
    3   zu     zu     ADP   APPR  _                              5  case
    4   dem    der    DET   ART   Case=Dat|Definite=Def          5  det
    5   Markt  Markt  NOUN  NN    Case=Dat|Gender=Masc           2  obl
    6   .      .      PUNCT $.    _                              2  punct

    1   Es     es     PRON  PPER  _                              2  expl
    2   regnet regnen VERB  VVFIN _                              0  root
    3   .      .      PUNCT $.    _                              2  punct
"""


def test_identical_files_score_100_everywhere():
    # 2 sentences, 8 tokens (zum is one), 9 words; content words (CLAS, MLAS,
    # BLEX): Wir, gehen, Markt, Es, regnet = 5.
    result = evaluate(GERMAN, GERMAN)
    for metric in METRICS:
        assert prf(result[metric]) == (100.0, 100.0, 100.0), metric
    assert counts(result["Sentences"]) == (2, 2, 2)
    assert counts(result["Tokens"]) == (8, 8, 8)
    assert counts(result["Words"]) == (9, 9, 9)
    assert counts(result["CLAS"]) == (5, 5, 5)
    assert result["LAS"].aligned == 9 and result["LAS"].aligned_accuracy == 100.0
    assert result["Words"].aligned is None   # as in the official report
    assert set(result.to_dict()["UAS"]) == {"precision", "recall", "f1", "gold", "system",
                                            "correct", "aligned"}
    assert "MLAS" in result.table()


SHE_GOLD = """
    1 She      she      PRON  PRP _ 2 nsubj
    2 lives    live     VERB  VBZ _ 0 root
    3 upstairs upstairs ADV   RB  _ 2 advmod
    4 .        .        PUNCT .   _ 2 punct
"""
SHE_SPLIT = """
    1 She    she    PRON  PRP _ 2 obj
    2 lives  live   VERB  VBZ _ 0 root
    3 up     up     ADV   RB  _ 2 advmod
    4 stairs stairs NOUN  NN  _ 3 obl
    5 .      .      PUNCT .   _ 4 punct
"""


def test_system_splits_a_gold_token():
    # Gold 4 tokens, system 5 (upstairs -> up + stairs); She, lives, . match:
    # P 3/5 = 60.00, R 3/4 = 75.00, F1 6/9 = 66.67. No multi-word tokens, so
    # Words is the same, and UPOS too (the 3 aligned words agree).
    result = evaluate(SHE_GOLD, SHE_SPLIT)
    for metric in ("Tokens", "Words", "UPOS"):
        assert counts(result[metric]) == (4, 5, 3), metric
        assert prf(result[metric]) == (60.0, 75.0, 66.67), metric
    # UAS: She -> lives and the root are right; "." hangs from "stairs", which
    # is not aligned to any gold word, so it loses: 2 correct.
    # P 2/5 = 40.00, R 2/4 = 50.00, F1 4/9 = 44.44.
    assert counts(result["UAS"]) == (4, 5, 2)
    assert prf(result["UAS"]) == (40.0, 50.0, 44.44)
    # LAS: She is "obj" (gold nsubj); only the root is right:
    # P 1/5 = 20.00, R 1/4 = 25.00, F1 2/9 = 22.22.
    assert prf(result["LAS"]) == (20.0, 25.0, 22.22)


ICE_GOLD = """
    1 the   the   DET  DT  _ 3 det
    2 ice   ice   NOUN NN  _ 3 compound
    3 cream cream NOUN NN  _ 4 nsubj
    4 melts melt  VERB VBZ _ 0 root
"""
ICE_MERGED = """
    1 the      the      DET  DT  _ 2 det
    2 icecream icecream NOUN NN  _ 3 nsubj
    3 melts    melt     VERB VBZ _ 0 root
"""


def test_system_merges_two_gold_tokens():
    # Gold 4 tokens, system 3 (ice + cream -> icecream); the, melts match:
    # P 2/3 = 66.67, R 2/4 = 50.00, F1 4/7 = 57.14.
    result = evaluate(ICE_GOLD, ICE_MERGED)
    for metric in ("Tokens", "Words"):
        assert counts(result[metric]) == (4, 3, 2)
        assert prf(result[metric]) == (66.67, 50.0, 57.14)
    # "the" hangs from "icecream", which is unaligned: it loses; the root
    # wins: 1 correct. P 1/3 = 33.33, R 1/4 = 25.00, F1 2/7 = 28.57.
    for metric in ("UAS", "LAS"):
        assert prf(result[metric]) == (33.33, 25.0, 28.57), metric
    # Swapping the sides swaps precision and recall.
    swapped = evaluate(ICE_MERGED, ICE_GOLD)
    assert prf(swapped["Tokens"]) == (50.0, 66.67, 57.14)


THREE_SENTENCES = """
    1 It    it   PRON  _ _ 2 expl
    2 rains rain VERB  _ _ 0 root
    3 .     .    PUNCT _ _ 2 punct

    1 We    we   PRON  _ _ 2 nsubj
    2 stay  stay VERB  _ _ 0 root
    3 .     .    PUNCT _ _ 2 punct

    1 Fine  fine ADJ   _ _ 0 root
    2 .     .    PUNCT _ _ 1 punct
"""
LAST_TWO_MERGED = """
    1 It    it   PRON  _ _ 2 expl
    2 rains rain VERB  _ _ 0 root
    3 .     .    PUNCT _ _ 2 punct

    1 We    we   PRON  _ _ 2 nsubj
    2 stay  stay VERB  _ _ 0 root
    3 .     .    PUNCT _ _ 2 punct
    4 Fine  fine ADJ   _ _ 2 parataxis
    5 .     .    PUNCT _ _ 4 punct
"""
BOUNDARY_SHIFTED = """
    1 It    it   PRON  _ _ 2 expl
    2 rains rain VERB  _ _ 0 root

    1 .     .    PUNCT _ _ 3 punct
    2 We    we   PRON  _ _ 3 nsubj
    3 stay  stay VERB  _ _ 0 root
    4 .     .    PUNCT _ _ 3 punct

    1 Fine  fine ADJ   _ _ 0 root
    2 .     .    PUNCT _ _ 1 punct
"""


def test_sentence_boundaries():
    # Sentence spans (whitespace-free text "Itrains.Westay.Fine."): gold
    # [0,8) [8,15) [15,20); the system joins the last two: [0,8) [8,20).
    # 1 of 3 gold, 1 of 2 system: P 50.00, R 33.33, F1 2/5 = 40.00.
    result = evaluate(THREE_SENTENCES, LAST_TWO_MERGED)
    assert counts(result["Sentences"]) == (3, 2, 1)
    assert prf(result["Sentences"]) == (50.0, 33.33, 40.0)
    # Tokens and words are untouched.
    assert prf(result["Tokens"]) == prf(result["Words"]) == (100.0, 100.0, 100.0)
    # "Fine" is no longer a root (gold) but hangs from "stay": 7 of 8 heads.
    assert prf(result["UAS"]) == (87.5, 87.5, 87.5)

    # The first "." moves into the second sentence: system spans [0,7)
    # [7,15) [15,20): only the last matches, 1 of 3 each side: 33.33.
    result = evaluate(THREE_SENTENCES, BOUNDARY_SHIFTED)
    assert counts(result["Sentences"]) == (3, 3, 1)
    assert prf(result["Sentences"]) == (33.33, 33.33, 33.33)
    assert prf(result["Tokens"]) == (100.0, 100.0, 100.0)
    # The moved "." now hangs from "stay" (gold: "rains"): 7 of 8.
    assert prf(result["UAS"]) == (87.5, 87.5, 87.5)


ZUM_GOLD = """
    1   Wir   wir   PRON  _ _ 2 nsubj
    2   gehen gehen VERB  _ _ 0 root
    3-4 zum   _     _     _ _ _ _
    3   zu    zu    ADP   _ _ 5 case
    4   dem   der   DET   _ _ 5 det
    5   Markt Markt NOUN  _ _ 2 obl
    6   .     .     PUNCT _ _ 2 punct
"""
ZUM_UNSPLIT = """
    1   Wir   wir   PRON  _ _ 2 nsubj
    2   gehen gehen VERB  _ _ 0 root
    3   zum   zu    ADP   _ _ 4 case
    4   Markt Markt NOUN  _ _ 2 obl
    5   .     .     PUNCT _ _ 2 punct
"""
ZUM_OTHER_FORMS = """
    1   Wir   wir   PRON  _ _ 2 nsubj
    2   gehen gehen VERB  _ _ 0 root
    3-4 zum   _     _     _ _ _ _
    3   Zu    zu    ADP   _ _ 5 case
    4   m     der   DET   _ _ 5 det
    5   Markt Markt PROPN _ _ 2 obl
    6   .     .     PUNCT _ _ 2 punct
"""
ZUM_SWAPPED = """
    1   Wir   wir   PRON  _ _ 2 nsubj
    2   gehen gehen VERB  _ _ 0 root
    3-4 zum   _     _     _ _ _ _
    3   dem   der   DET   _ _ 5 det
    4   zu    zu    X     _ _ 5 case
    5   Markt Markt NOUN  _ _ 2 obl
    6   .     .     PUNCT _ _ 2 punct
"""


def test_multiword_token_not_split_by_the_system():
    # Tokens: Wir, gehen, zum, Markt, . on both sides: 5/5.
    result = evaluate(ZUM_GOLD, ZUM_UNSPLIT)
    assert counts(result["Tokens"]) == (5, 5, 5)
    # Words: gold zu, dem (in "zum") against system zum: the LCS of the
    # lowercased forms [zu, dem] and [zum] is empty, so 4 words align
    # (Wir, gehen, Markt, .): P 4/5 = 80.00, R 4/6 = 66.67, F1 8/11 = 72.73.
    # The 4 agree on UPOS and on head and label.
    for metric in ("Words", "UPOS", "UAS", "LAS"):
        assert counts(result[metric]) == (6, 5, 4), metric
        assert prf(result[metric]) == (80.0, 66.67, 72.73), metric
    # CLAS: content words Wir, gehen, Markt on both sides (zum is "case"): 3/3.
    assert prf(result["CLAS"]) == (100.0, 100.0, 100.0)
    # MLAS: Markt's functional children are [zu, dem] in gold but [zum,
    # unaligned] in the system: 2 of 3 (66.67).
    assert counts(result["MLAS"]) == (3, 3, 2)
    # The other way round (gold unsplit, system split), P and R swap.
    assert prf(evaluate(ZUM_UNSPLIT, ZUM_GOLD)["Words"]) == (66.67, 80.0, 72.73)


def test_multiword_token_split_into_other_forms():
    # Gold zum = zu + dem, system zum = Zu + m: LCS of [zu, dem] and [zu, m]
    # (lowercased) is [zu]: 5 of 6 words align on each side (83.33).
    result = evaluate(ZUM_GOLD, ZUM_OTHER_FORMS)
    assert counts(result["Tokens"]) == (5, 5, 5)
    assert counts(result["Words"]) == (6, 6, 5)
    assert prf(result["Words"]) == (83.33, 83.33, 83.33)
    # UPOS: Markt is PROPN (gold NOUN): 4 of 6 (66.67).
    assert prf(result["UPOS"]) == (66.67, 66.67, 66.67)
    # LAS: Zu -> Markt case, like gold zu; the unaligned m cannot count: 5/6.
    assert prf(result["LAS"]) == (83.33, 83.33, 83.33)


def test_multiword_lcs_ties_leave_the_earlier_gold_word_out():
    # Gold [zu, dem] against system [dem, zu]: both [zu] and [dem] are
    # longest. The official walk leaves gold zu out first, so dem aligns with
    # dem (system zu stays unaligned). The system tags dem right (DET) and zu
    # wrong (X): UPOS is right on 5 words (with zu-zu it would be 4).
    result = evaluate(ZUM_GOLD, ZUM_SWAPPED)
    assert counts(result["Words"]) == (6, 6, 5)
    assert counts(result["UPOS"]) == (6, 6, 5)


# Written with tabs: FORMs with a space ("New York") and a no-break space.
SPACES_GOLD = (
    "# text = New York is big.\n"
    "1\tNew York\tNew York\tPROPN\t_\t_\t3\tnsubj\t_\t_\n"
    "2\tis\tbe\tAUX\t_\t_\t3\tcop\t_\t_\n"
    "3\tbig\tbig\tADJ\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n"
    "\n"
    "# text = It costs 10\u00a0000.\n"
    "1\tIt\tit\tPRON\t_\t_\t2\tnsubj\t_\t_\n"
    "2\tcosts\tcost\tVERB\t_\t_\t0\troot\t_\t_\n"
    "3\t10\u00a0000\t10000\tNUM\t_\t_\t2\tobj\t_\tSpaceAfter=No\n"
    "4\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n"
    "\n"
)
SPACES_SYSTEM = """
    # text = New York is big .
    1 New   new   PROPN _ _ 2 flat
    2 York  york  PROPN _ _ 4 nsubj
    3 is    be    AUX   _ _ 4 cop
    4 big   big   ADJ   _ _ 0 root
    5 .     .     PUNCT _ _ 4 punct

    1 It    it    PRON  _ _ 2 nsubj
    2 costs cost  VERB  _ _ 0 root
    3 10000 10000 NUM   _ _ 2 obj
    4 .     .     PUNCT _ _ 2 punct
"""


def test_whitespace_inside_forms_is_ignored():
    # Both texts are "NewYorkisbig.Itcosts10000." once whitespace is gone.
    # Tokens: gold 8, system 9 ("New York" is two); all but New, York match,
    # "10 000" (no-break space) matching "10000": 7.
    # P 7/9 = 77.78, R 7/8 = 87.50, F1 14/17 = 82.35. Sentences still match.
    result = evaluate_raw_text(conllu.parse(SPACES_GOLD), conll(SPACES_SYSTEM))
    assert counts(result["Tokens"]) == (8, 9, 7)
    assert prf(result["Tokens"]) == (77.78, 87.5, 82.35)
    assert prf(result["Sentences"]) == (100.0, 100.0, 100.0)


def test_files_with_other_layout(tmp_path):
    # The same through files; the system file has Windows line ends and no
    # comments, which change nothing.
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(SPACES_GOLD, encoding="utf8")
    system_text = "".join(s.serialize() for s in conll(SPACES_SYSTEM))
    system_lines = [line for line in system_text.split("\n") if not line.startswith("#")]
    system.write_bytes("\r\n".join(system_lines).encode("utf8"))
    from_files = evaluate_raw_text_files(gold, system)
    assert from_files.to_dict() == evaluate_raw_text(conllu.parse(SPACES_GOLD),
                                                     conll(SPACES_SYSTEM)).to_dict()


def test_different_characters_raise_with_the_position(tmp_path):
    # "NewYorkisbig...": the system's "bog" differs at character 10 (0-based).
    wrong = conll(SPACES_SYSTEM.replace("big   big", "bog   big"))
    with pytest.raises(TextMismatchError) as error:
        evaluate_raw_text(conllu.parse(SPACES_GOLD), wrong)
    assert error.value.position == 10
    message = str(error.value)
    assert "character 10" in message and "'big'" in message and "'bog'" in message
    assert "'NewYorkisb' + 'ig.Itcosts10000'" in message   # context, gold side
    assert isinstance(error.value, ValueError)
    # A system that stops after the first sentence: the texts part at 13.
    with pytest.raises(ValueError, match="character 13.*system text ends"):
        evaluate_raw_text(conllu.parse(SPACES_GOLD), conll(SPACES_SYSTEM)[:1])
    # Files: the message names them and where the sentences start. "costs"
    # -> "casts": "NewYorkisbig.Itc" is 16 characters.
    wrong = conll(SPACES_SYSTEM.replace("costs cost", "casts cost"))
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(SPACES_GOLD, encoding="utf8")
    system.write_text("".join(s.serialize() for s in wrong), encoding="utf8")
    with pytest.raises(ValueError, match=(
            r"character 16: gold \S*gold.conllu has 'o' in token 'costs' of sentence 2 "
            r"\(from line 7\).*; system \S*system.conllu has 'a' in token 'casts' of "
            r"sentence 2 \(from line 8\)")):
        evaluate_raw_text_files(gold, system)


PASSIVE_GOLD = """
    1 The     the   DET   DT  _           2 det
    2 book    book  NOUN  NN  Number=Sing 4 nsubj:pass
    3 was     be    AUX   VBD _           4 aux:pass
    4 written write VERB  VBN _           0 root
    5 by      by    ADP   IN  _           6 case
    6 her     she   PRON  PRP Case=Acc    4 obl:agent
    7 .       .     PUNCT .   _           4 punct
"""
# Errors only on functional words and punctuation, subtypes dropped.
PASSIVE_FUNCTION_ERRORS = """
    1 The     the   DET   DT  _           4 det
    2 book    book  NOUN  NN  Number=Sing 4 nsubj
    3 was     be    AUX   VBD _           4 aux:pass
    4 written write VERB  VBN _           0 root
    5 by      by    ADP   IN  _           6 mark
    6 her     she   PRON  PRP Case=Acc    4 obl
    7 .       .     PUNCT .   _           2 punct
"""
# "her" labelled as a functional word.
PASSIVE_HER_CASE = PASSIVE_GOLD.replace("4 obl:agent", "4 case")


def test_clas_counts_content_words_only():
    result = evaluate(PASSIVE_GOLD, PASSIVE_FUNCTION_ERRORS)
    # UAS: The and . have wrong heads: 5/7 = 71.43. LAS: by is also "mark"
    # (gold case): 4/7 = 57.14. nsubj = nsubj:pass and obl = obl:agent.
    assert prf(result["UAS"]) == (71.43, 71.43, 71.43)
    assert prf(result["LAS"]) == (57.14, 57.14, 57.14)
    # CLAS: content words book (nsubj), written (root), her (obl) on both
    # sides; det, aux, case, mark and punct do not count: 3/3.
    assert counts(result["CLAS"]) == (3, 3, 3)
    assert prf(result["CLAS"]) == (100.0, 100.0, 100.0)
    # BLEX (CLAS + lemma): 3/3. MLAS also compares functional children:
    # book loses The, written gains it, her's "by" is mark: 0/3.
    assert counts(result["BLEX"]) == (3, 3, 3)
    assert counts(result["MLAS"]) == (3, 3, 0)

    # "her" as "case": system content words book, written (2); gold 3.
    # CLAS P 2/2 = 100, R 2/3 = 66.67, F1 4/5 = 80.
    result = evaluate(PASSIVE_GOLD, PASSIVE_HER_CASE)
    assert counts(result["CLAS"]) == (3, 2, 2)
    assert prf(result["CLAS"]) == (100.0, 66.67, 80.0)
    # MLAS: "her" is now a functional child of written, which loses too: 1
    # (book). P 1/2 = 50, R 1/3 = 33.33, F1 2/5 = 40.
    assert prf(result["MLAS"]) == (50.0, 33.33, 40.0)


def test_features_and_lemmas():
    gold = """
        1 Häuser Haus NOUN NNS   Case=Nom|Gender=Neut|Number=Plur|Foo=Bar 0 root
        2 stehen _    VERB VVFIN Number=Plur|Person=3                     1 acl
    """
    system = """
        1 Häuser haus   NOUN NN    Number=Plur|Gender=Neut|Case=Nom         0 root
        2 stehen stehen VERB VVFIN Number=Plur|Person=3|Number[psor]=Sing   1 acl
    """
    result = evaluate(gold, system)
    # UFeats: universal features only (Foo, Number[psor] dropped), in any
    # order: 2/2. XPOS: NNS vs NN: 1/2, and so AllTags.
    assert prf(result["UFeats"]) == (100.0, 100.0, 100.0)
    assert prf(result["XPOS"]) == prf(result["AllTags"]) == (50.0, 50.0, 50.0)
    # Lemmas: Haus vs haus is wrong; gold "_" takes any lemma: 1/2; BLEX
    # the same (both words are content words, heads right).
    assert prf(result["Lemmas"]) == prf(result["BLEX"]) == (50.0, 50.0, 50.0)
    assert prf(result["MLAS"]) == (100.0, 100.0, 100.0)


@pytest.mark.parametrize("system, problem", [
    (SHE_GOLD.replace("2 nsubj", "0 nsubj"), "2 roots"),
    (SHE_GOLD.replace("2 nsubj", "9 nsubj"), "HEAD 9"),
    # She is the root; lives and upstairs head each other.
    (SHE_GOLD.replace("2 nsubj", "0 nsubj").replace("0 root", "3 root"), "cycle"),
])
def test_invalid_trees_are_errors(system, problem):
    with pytest.raises(ValueError, match=problem):
        evaluate(SHE_GOLD, system)


# ---------------------------------------------------------------------------
# Random re-segmentation


@st.composite
def resegmented(draw):
    """Gold sentences of random tokens (some multi-word) over the letters a, b,
    and a system over the same characters with some token boundaries removed
    (merged tokens) or added (split tokens) and sentence breaks changed."""
    sentences = draw(st.lists(st.lists(st.text("ab", min_size=1, max_size=3), min_size=1,
                                       max_size=5), min_size=1, max_size=4))
    tokens = [form for sentence in sentences for form in sentence]
    text = "".join(tokens)
    ends = [sum(map(len, tokens[:i + 1])) for i in range(len(tokens))]
    gold_breaks = set(ends[:-1])
    sentence_ends = [sum(map(len, s)) for s in sentences]
    gold_sentence_breaks = {sum(sentence_ends[:i + 1]) for i in range(len(sentences) - 1)}
    inner = st.sets(st.integers(1, len(text) - 1)) if len(text) > 1 else st.just(set())
    system_breaks = gold_breaks ^ draw(inner)
    system_sentence_breaks = (gold_sentence_breaks ^ draw(inner)) & system_breaks
    gold = build(draw, text, gold_breaks, gold_sentence_breaks)
    system = build(draw, text, system_breaks, system_sentence_breaks)
    return (gold, system, len(text), (gold_breaks, gold_sentence_breaks),
            (system_breaks, system_sentence_breaks))


DEPRELS = ["nsubj", "obj:x", "det", "case", "punct", "amod", "aux:pass"]


def build(draw, text, breaks, sentence_breaks):
    """conllu sentences of text cut at breaks, sentences at sentence_breaks;
    a token of 2+ characters may be a multi-word token of two words (its
    halves or other letters); random trees and labels."""
    cuts = [0] + sorted(breaks) + [len(text)]
    result, rows, words = [], [], []
    for start, end in zip(cuts, cuts[1:]):
        form = text[start:end]
        if len(form) > 1 and draw(st.booleans()):
            rows.append({"id": (len(words) + 1, "-", len(words) + 2), "form": form})
            halves = [form[:1], form[1:]] if draw(st.booleans()) else ["a", "b"]
            for half in halves:
                words.append(len(rows))
                rows.append({"id": len(words), "form": half})
        else:
            words.append(len(rows))
            rows.append({"id": len(words), "form": form})
        if end in sentence_breaks or end == len(text):
            for i, row_index in enumerate(words):
                head = draw(st.integers(1, i)) if i else 0
                rows[row_index].update(
                    head=head, deprel=draw(st.sampled_from(DEPRELS)) if head else "root",
                    upos=draw(st.sampled_from(["NOUN", "VERB"])), lemma="_", xpos=None,
                    feats=None)
            result.append(conllu.TokenList([conllu.models.Token(row) for row in rows]))
            rows, words = [], []
    return result


def spans(text_length, breaks):
    cuts = [0] + sorted(breaks) + [text_length]
    return set(zip(cuts, cuts[1:]))


@settings(max_examples=scaled(150))
@given(resegmented())
def test_resegmentation_properties(case):
    gold, system, length, (gold_breaks, gold_sb), (system_breaks, system_sb) = case
    result = evaluate_raw_text(gold, system)
    tokens = result["Tokens"]
    # Tokens F1 is 100 exactly when the segmentation is the same; the counts
    # are those of the spans between breaks.
    assert (tokens.f1 == 100.0) == (gold_breaks == system_breaks)
    assert counts(tokens) == (len(gold_breaks) + 1, len(system_breaks) + 1,
                              len(spans(length, gold_breaks) & spans(length, system_breaks)))
    assert result["Sentences"].correct == len(spans(length, gold_sb) & spans(length, system_sb))
    assert (result["Sentences"].f1 == 100.0) == (gold_sb == system_sb)
    for metric in METRICS:
        score = result[metric]
        assert 0.0 <= score.f1 <= 100.0 and 0 <= score.correct <= min(score.gold, score.system)
        assert score.precision == (round(100 * (score.correct / score.system), 2)
                                   if score.system else 0.0)
        assert score.recall == (round(100 * (score.correct / score.gold), 2)
                                if score.gold else 0.0)
        if score.aligned is not None:
            assert score.correct <= score.aligned <= result["Words"].correct
