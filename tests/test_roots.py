"""One root per sentence, labelled ROOT, and no other word labelled ROOT, by
construction: for models that predict garbage (random weights) on random docs
of 1 to 600 words, with and without preset sentences, cut into windows or
not, for every system; and CoNLL-U written by `evaluate --output` is valid."""
import conllu
import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from spacy.training import Example

from conftest import ROOT, SAMPLE, WORDS, make_nlp, run_command, sample_docs, scaled


def random_model_pipeline(system, seed, **config):
    """A pipeline initialized on the sample whose step model has random
    weights: it predicts arbitrary (valid) moves."""
    nlp = make_nlp(system=system, **config)
    examples = [Example(Doc(d.vocab, words=[t.text for t in d]), d)
                for d in sample_docs("train", limit=40)]
    nlp.initialize(lambda: examples)
    step = nlp.get_pipe("nonmono_parser").model.get_ref("step")
    rng = numpy.random.default_rng(seed)
    for name in ("W", "b", "hidden_b"):
        shape = step.get_param(name).shape
        step.set_param(name, (3 * rng.normal(size=shape)).astype("f"))
    return nlp


def check_roots(doc):
    for sent in doc.sents:
        roots = [t for t in sent if t.head.i == t.i]
        assert len(roots) == 1, [(t.i, t.head.i, t.dep_) for t in sent]
        assert roots[0].dep_ == "ROOT"
        assert all(t.dep_ != "ROOT" for t in sent if t.head.i != t.i)
        for t in sent:
            assert sent.start <= t.head.i < sent.end
            seen, v = set(), t
            while v.head.i != v.i:
                assert v.i not in seen, "cycle"
                seen.add(v.i)
                v = v.head


PIPELINES = {}


def pipeline(system, max_len):
    key = (system, max_len)
    if key not in PIPELINES:
        PIPELINES[key] = random_model_pipeline(system, seed=len(PIPELINES),
                                               max_sentence_length=max_len)
    return PIPELINES[key]


@pytest.mark.parametrize("system", ["covington", "covington_nm", "arc_eager", "arc_eager_tree",
                                    "arc_eager_unshift", "arc_standard", "swap_lazy",
                                    "swap_stay_eager", "mh3", "mh4"])
@settings(max_examples=scaled(25))
@given(data=st.data())
def test_one_root_labelled_root_per_sentence(system, data):
    n = data.draw(st.integers(1, 600), label="words")
    max_len = data.draw(st.sampled_from([7, 64, 256]), label="max_sentence_length")
    nlp = pipeline(system, max_len)
    rng = numpy.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    words = [WORDS[k] for k in rng.integers(0, len(WORDS), size=n)]
    doc = Doc(nlp.vocab, words=words)
    if data.draw(st.booleans(), label="preset sentences"):
        starts = rng.random(n) < data.draw(st.sampled_from([0.01, 0.1, 0.5]))
        for k, token in enumerate(doc):
            token.is_sent_start = bool(k == 0 or starts[k])
    check_roots(nlp(doc))


def conllu_problems(path):
    """What makes a CoNLL-U file's trees invalid: heads out of range, not
    exactly one root per sentence, a root not labelled root (or another word
    labelled root), cycles."""
    problems = []
    for s, sentence in enumerate(conllu.parse(path.read_text(encoding="utf8"))):
        words = [t for t in sentence if isinstance(t["id"], int)]
        heads = {t["id"]: t["head"] for t in words}
        n = len(words)
        if any(not isinstance(h, int) or not 0 <= h <= n for h in heads.values()):
            problems.append((s, "head out of range"))
            continue
        roots = [t for t in words if t["head"] == 0]
        if len(roots) != 1:
            problems.append((s, f"{len(roots)} roots"))
        if any((t["head"] == 0) != (t["deprel"] == "root") for t in words):
            problems.append((s, "root label"))
        for k in heads:
            seen, v = set(), k
            while v != 0 and v not in seen:
                seen.add(v)
                v = heads[v]
            if v != 0:
                problems.append((s, "cycle"))
                break
    return problems


def test_evaluate_output_is_valid_conllu(tmp_path):
    nlp = random_model_pipeline("covington_nm", seed=7)
    nlp.to_disk(tmp_path / "pipeline")
    output = tmp_path / "pred.conllu"
    gold = SAMPLE / "en_ewt-sample-test.conllu"
    run_command("evaluate", tmp_path / "pipeline", gold, "--output", output, cwd=ROOT,
                check=True)
    assert conllu_problems(output) == []
    assert len(conllu.parse(output.read_text(encoding="utf8"))) == \
        len(conllu.parse(gold.read_text(encoding="utf8")))
    # The checker does catch a broken file.
    broken = tmp_path / "broken.conllu"
    broken.write_text(output.read_text(encoding="utf8").replace("\troot\t", "\tnsubj\t", 1))
    assert conllu_problems(broken) != []


def reference_root_rule(heads, labels):
    """The root rule in plain Python: the first word attached to 0 is the
    root (else the first headless word); every other headless or
    root-attached word hangs from it, label -1."""
    heads, labels = list(heads), list(labels)
    zeros = [k for k, h in enumerate(heads) if h == 0]
    headless = [k for k, h in enumerate(heads) if h == -1]
    if not heads:
        return heads, labels
    root = zeros[0] if zeros else headless[0] if headless else None
    if root is not None and heads[root] == -1:
        heads[root] = 0
    for k in zeros + headless:
        if k != root:
            heads[k], labels[k] = root + 1, -1
    return heads, labels


@settings(max_examples=scaled(200))
@given(st.lists(st.tuples(st.integers(-1, 12), st.integers(-1, 5)), max_size=12))
def test_root_rule_equals_reference(arcs):
    from spacy_nonmono.graph import attach_to_single_root

    n = len(arcs)
    heads = [min(h, n) for h, _ in arcs]
    labels = [label for _, label in arcs]
    got_heads, got_labels = attach_to_single_root(heads, labels)
    assert (list(got_heads), list(got_labels)) == reference_root_rule(heads, labels)
