"""`spacy-nonmono parse`: raw text (or CoNLL-U) in, CoNLL-U out; and
`doc_to_conllu`, which writes one parsed Doc."""
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from conftest import SMALL_MODEL, run_command, sample_docs, train
from spacy_nonmono.evaluation import read_conllu
from spacy_nonmono.conllu_io import doc_to_conllu, text_documents


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """A small sentencizer + nonmono_parser pipeline, trained a little, saved."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("nonmono_parser", config={"model": SMALL_MODEL})
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in doc],
                            spaces=[bool(t.whitespace_) for t in doc]), doc)
                for doc in sample_docs("train", limit=60)]
    train(nlp, examples, epochs=2)
    path = tmp_path_factory.mktemp("parse") / "model"
    nlp.to_disk(path)
    return path


def reconstructed_text(sentence) -> str:
    """A sentence's text from its FORMs and SpaceAfter=No."""
    return "".join(t["form"] + ("" if (t["misc"] or {}).get("SpaceAfter") == "No" else " ")
                   for t in sentence).rstrip()


def test_doc_to_conllu_writes_every_column():
    vocab = spacy.blank("en").vocab
    words = ["Hi", "there", "!", "\n", "Go", "now", "."]
    spaces = [True, False, False, False, True, False, False]
    doc = Doc(vocab, words=words, spaces=spaces,
              heads=[0, 0, 0, 2, 4, 4, 4],   # the line break hangs on "!"
              deps=["ROOT", "advmod", "punct", "dep", "ROOT", "advmod", "punct"],
              pos=["INTJ", "ADV", "PUNCT", "SPACE", "VERB", "ADV", "PUNCT"],
              morphs=["", "", "", "", "Mood=Imp|VerbForm=Fin", "", ""],
              sent_starts=[True, False, False, False, True, False, False])
    assert doc_to_conllu(doc, first_sent_id=7, sent_id_prefix="t-",
                         comments=("newdoc id = x",)).split("\n") == [
        "# newdoc id = x",
        "# sent_id = t-7",
        "# text = Hi there!",
        "1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_",
        "2\tthere\t_\tADV\t_\t_\t1\tadvmod\t_\tSpaceAfter=No",
        "3\t!\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_",       # the line break is a space
        "",
        "# sent_id = t-8",
        "# text = Go now.",
        "1\tGo\t_\tVERB\t_\tMood=Imp|VerbForm=Fin\t0\troot\t_\t_",
        "2\tnow\t_\tADV\t_\t_\t1\tadvmod\t_\tSpaceAfter=No",
        "3\t.\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_",
        "", ""]
    # Two sentences with no space between them: the first ends in SpaceAfter=No;
    # a doc without a parse has "_" heads.
    glued = Doc(vocab, words=["Yes", ".", "No", "."], spaces=[False, False, False, False],
                sent_starts=[True, False, True, False])
    lines = doc_to_conllu(glued).split("\n")
    assert lines[2:4] == ["1\tYes\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No",
                          "2\t.\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No"]
    assert lines[-3] == "2\t.\t_\t_\t_\t_\t_\t_\t_\t_"


def test_text_documents_are_paragraphs(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\ufeffOne  line\nand more.\n\n\n  Second\tparagraph.  \n", encoding="utf8")
    assert list(text_documents(path)) == ["One line and more.", "Second paragraph."]


def test_parse_writes_conllu_from_raw_text(pipeline, tmp_path):
    text = ("The cat sat on the mat. It was happy!\nThen it left.\n\n"
            "A second paragraph, with a comma. And another sentence.\n")
    (tmp_path / "a.txt").write_text(text, encoding="utf8")
    (tmp_path / "b.txt").write_text("Short one.\n", encoding="utf8")
    result = run_command("parse", pipeline, "a.txt", "b.txt", "--output", "out.conllu",
                         cwd=tmp_path, check=True)
    assert "Parsed" in result.stderr and "wrote out.conllu" in result.stderr
    out = (tmp_path / "out.conllu").read_text(encoding="utf8")
    sentences = read_conllu(tmp_path / "out.conllu")   # well-formed, every word parsed
    assert [s.metadata["sent_id"] for s in sentences] == [str(k) for k in
                                                           range(1, len(sentences) + 1)]
    assert len(sentences) >= 5
    for sentence in sentences:
        assert reconstructed_text(sentence) == sentence.metadata["text"]
        assert sum(t["head"] == 0 for t in sentence) == 1
    # The sentences' texts, in order, are the paragraphs' text.
    paragraphs = " ".join(s.metadata["text"] for s in sentences)
    assert paragraphs == " ".join(text.split()) + " Short one."
    assert out.count("# newdoc id = a.txt") == 1 and out.count("# newdoc id = b.txt") == 1
    assert out.count("# newpar") == 3


def test_parse_keeps_the_tokens_of_conllu_input(pipeline, tmp_path):
    (tmp_path / "in.conllu").write_text(
        "# sent_id = s1\n# text = I don't know\n"
        "1\tI\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tdo\t_\t_\t_\t_\t_\t_\t_\t_\n3\tn't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "4\tknow\t_\t_\t_\t_\t_\t_\t_\t_\n\n", encoding="utf8")
    run_command("parse", pipeline, "in.conllu", "--output", "out.conllu", cwd=tmp_path,
                check=True)
    [sentence] = read_conllu(tmp_path / "out.conllu")
    assert sentence.metadata == {"sent_id": "s1", "text": "I don't know"}
    assert [t["form"] for t in sentence] == ["I", "don't", "do", "n't", "know"]
    assert sentence[1]["id"] == (2, "-", 3)
    words = [t for t in sentence if isinstance(t["id"], int)]
    assert sum(t["head"] == 0 for t in words) == 1 and all(t["deprel"] for t in words)


def test_parse_errors(pipeline, tmp_path):
    (tmp_path / "in.txt").write_text("Some text.\n", encoding="utf8")
    result = run_command("parse", pipeline, "none.txt", "--output", "out.conllu", cwd=tmp_path)
    assert result.returncode == 2 and "none.txt: no such file" in result.stderr
    result = run_command("parse", pipeline, "in.txt", "--output", "in.txt", cwd=tmp_path)
    assert result.returncode == 2 and "is an input of this command" in result.stderr
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01binary")
    result = run_command("parse", pipeline, "bin.txt", "--output", "out.conllu", cwd=tmp_path)
    assert result.returncode == 2 and "not a text file" in result.stderr
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    result = run_command("parse", pipeline, "latin1.txt", "--output", "o.conllu", cwd=tmp_path)
    assert result.returncode == 2 and "not UTF-8" in result.stderr
    (tmp_path / "bad.conllu").write_text("1\tonly three\tcolumns\n\n", encoding="utf8")
    result = run_command("parse", pipeline, "bad.conllu", "--output", "o.conllu", cwd=tmp_path)
    assert result.returncode == 2 and "bad.conllu" in result.stderr


@pytest.mark.slow
def test_parse_in_two_processes(pipeline, tmp_path):
    text = "\n\n".join(f"Paragraph {k} is here. It has two sentences." for k in range(40))
    (tmp_path / "in.txt").write_text(text, encoding="utf8")
    run_command("parse", pipeline, "in.txt", "--output", "one.conllu", cwd=tmp_path, check=True)
    run_command("parse", pipeline, "in.txt", "--output", "two.conllu", "--n-process", "2",
                "--batch-size", "8", cwd=tmp_path, check=True)
    assert (tmp_path / "one.conllu").read_text() == (tmp_path / "two.conllu").read_text()


# -- evaluate --raw-text ---------------------------------------------------------------

RAW_GOLD = """# newdoc id = d1
# newpar
# sent_id = 1
# text = I don't know.
1\tI\tI\tPRON\t_\t_\t3\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_
4\tknow\tknow\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_

# sent_id = 2
# text = Yes.
1\tYes\tyes\tINTJ\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\tSpaceAfter=No

# newpar
# sent_id = 3
# text = Go!
1\tGo\tgo\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


def test_gold_documents_rebuild_the_raw_text(tmp_path):
    from spacy_nonmono.conllu_io import gold_documents, read_conllu

    (tmp_path / "gold.conllu").write_text(RAW_GOLD, encoding="utf8")
    # A multi-word token's form once; SpaceAfter=No inside and between sentences.
    assert gold_documents(read_conllu(tmp_path / "gold.conllu")) == ["I don't know. Yes.", "Go!"]


def test_evaluate_raw_text(pipeline, tmp_path):
    """The whole pipeline on the gold file's raw text, scored CoNLL 2018
    style; the parse written as CoNLL-U scores the same as a file."""
    import json
    import shutil

    from conftest import ROOT
    from spacy_nonmono.evaluation import evaluate_raw_text_files

    gold = tmp_path / "gold.conllu"
    shutil.copy(ROOT / "assets" / "sample" / "en_ewt-sample-dev.conllu", gold)
    result = run_command("evaluate", "--raw-text", pipeline, gold, "--output", "out.conllu",
                         "--json", "scores.json", cwd=tmp_path, check=True)
    assert "raw text through the whole pipeline" in result.stdout
    for metric in ("Tokens", "Sentences", "Words", "UPOS", "UAS", "LAS", "CLAS", "MLAS"):
        assert f"\n{metric:<11}|" in result.stdout
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["words_per_second"] > 0
    assert 90 <= scores["Tokens"]["f1"] <= 100 and 0 < scores["LAS"]["f1"] < 100
    again = evaluate_raw_text_files(gold, tmp_path / "out.conllu")
    assert again.to_dict() == {k: v for k, v in scores.items() if k != "words_per_second"}
    result = run_command("evaluate", "--raw-text", "--skip-invalid", pipeline, gold,
                         cwd=tmp_path)
    assert result.returncode == 2 and "--skip-invalid" in result.stderr


def test_multiword_tokens_of_a_treebank_tokenizer(pipeline, tmp_path):
    """A pipeline given the tokenizer learned from a treebank and saved:
    `parse` writes the spelled multiword tokens it cuts ("don't" = "do" +
    "n't") as range lines, and `evaluate --raw-text` finds every gold token
    and word."""
    import json

    from spacy_nonmono.pipeline.tokenizers import use_treebank_tokenizer

    (tmp_path / "gold.conllu").write_text(RAW_GOLD, encoding="utf8")
    nlp = use_treebank_tokenizer(spacy.load(pipeline), tmp_path / "gold.conllu")
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "in.txt").write_text("I don't know. Yes.\n\nGo!\n", encoding="utf8")
    run_command("parse", "model", "in.txt", "--output", "out.conllu", cwd=tmp_path, check=True)
    sentences = read_conllu(tmp_path / "out.conllu")
    assert [(t["id"], t["form"]) for s in sentences for t in s if isinstance(t["id"], tuple)] \
        == [((2, "-", 3), "don't")]
    surface = [t for t in sentences[0] if t["id"] not in (2, 3)]   # the range line, not its words
    assert reconstructed_text(surface) == sentences[0].metadata["text"] == "I don't know."
    run_command("evaluate", "--raw-text", "model", "gold.conllu", "--json", "scores.json",
                cwd=tmp_path, check=True)
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["Tokens"]["f1"] == 100 and scores["Words"]["f1"] == 100


# -- another language's tokenizer ---------------------------------------------------------

TEXT = "I don't know, e.g. Kovács stb. jött."


def test_language_tokenizer_in_a_multi_language_pipeline(tmp_path):
    """spaCy's rules of a language over an `xx` pipeline's vocab: in code
    and in a config, saved and loaded with the pipeline."""
    from spacy_nonmono.pipeline.tokenizers import language_tokenizer, use_language_tokenizer

    nlp = spacy.blank("xx")
    words = {lang: [t.text for t in language_tokenizer(lang, nlp.vocab)(TEXT)]
             for lang in ("xx", "en", "hu")}
    assert words["xx"] == [t.text for t in nlp(TEXT)]
    assert "n't" in words["en"] and "e.g." in words["en"] and "don't" in words["xx"]
    assert "stb." in words["hu"] and "stb." not in words["xx"]
    use_language_tokenizer(nlp, "hu")
    assert [t.text for t in nlp(TEXT)] == words["hu"] and nlp.lang == "xx"
    configured = spacy.blank("xx", config={"nlp": {"tokenizer": {
        "@tokenizers": "spacy_nonmono.LanguageTokenizer.v1", "lang": "en"}}})
    assert [t.text for t in configured(TEXT)] == words["en"]
    configured.to_disk(tmp_path / "en_rules")
    assert [t.text for t in spacy.load(tmp_path / "en_rules")(TEXT)] == words["en"]
    with pytest.raises(ValueError, match="spaCy has no language 'got'"):
        language_tokenizer("got", nlp.vocab)


def test_workflow_treebank_language(tmp_path):
    from argparse import Namespace

    from benchmarks.workflow import Workflow

    ud = tmp_path / "ud"
    for tb, code in (("hu_szeged", "hu"), ("en_ewt", "en_ewt"), ("got_proiel", "got")):
        (ud / tb).mkdir(parents=True)
        for split in ("train", "dev", "test"):
            (ud / tb / f"{code}-ud-{split}.conllu").write_text("")
    workflow = Workflow(Namespace(ud_dir=ud, treebanks="hu_szeged,en_ewt,got_proiel",
                                  systems="covington", seeds="0"))
    assert [workflow.language(tb) for tb in workflow.treebanks] == ["hu", "en", None]


def test_a_failing_parse_leaves_the_output_as_it_was(pipeline, tmp_path):
    """A good and a bad input: the error, and out.conllu keeps its content
    (the parse is written beside it and renamed only on success)."""
    (tmp_path / "good.txt").write_text("Some text here.\n", encoding="utf8")
    (tmp_path / "bad.bin").write_bytes(b"\x00\x01binary")
    out = tmp_path / "out.conllu"
    out.write_text("earlier results\n", encoding="utf8")
    result = run_command("parse", pipeline, "good.txt", "bad.bin", "--output", "out.conllu",
                         cwd=tmp_path)
    assert result.returncode == 2 and "bad.bin" in result.stderr
    assert out.read_text(encoding="utf8") == "earlier results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.bin", "good.txt", "out.conllu"]
    run_command("parse", pipeline, "good.txt", "--output", "out.conllu", cwd=tmp_path,
                check=True)
    assert read_conllu(out)[0].metadata["text"] == "Some text here."
