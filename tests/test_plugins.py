"""A decoder and a structure added from outside the package
(tests/toy_plugins: one class plus a registry entry each) work through the
component, in `spacy train` and after loading, with no change inside
spacy_nonmono; the toy structure (projective Eisner) equals brute force."""
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

import reference_mst as ref
from conftest import global_model, make_nlp, sample_docs, train, tree_ok
from spacy_nonmono.graph import is_projective

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).resolve().parent / "toy_plugins" / "toy_plugins.py"


@pytest.fixture(scope="module")
def toy_plugins():
    """The toy module, imported (which registers toy_chunked and toy_eisner)
    for this module's tests only: other tests list the registered decoders
    and structures in their messages."""
    import importlib

    import catalogue

    sys.path.insert(0, str(PLUGINS.parent))
    try:
        module = importlib.import_module("toy_plugins")
    finally:
        sys.path.remove(str(PLUGINS.parent))
    for registry, name, func in (("decoders", "toy_chunked", module.ChunkedGreedyDecoder),
                                 ("structures", "toy_eisner", module.EisnerStructure)):
        catalogue._set(("spacy_nonmono", registry, name), func)   # also after a re-import
    yield module
    for registry, name in (("decoders", "toy_chunked"), ("structures", "toy_eisner")):
        catalogue.REGISTRY.pop(("spacy_nonmono", registry, name), None)


def test_toy_structure_equals_brute_force_over_projective_trees(toy_plugins):
    rng = numpy.random.default_rng(0)
    structure = toy_plugins.EisnerStructure()
    for _ in range(60):
        n = int(rng.integers(1, 6))
        table = rng.normal(size=(n + 2, n + 2, 1)).astype("f")
        gold = numpy.asarray([h for h in ref.all_trees(n)[int(rng.integers(len(ref.all_trees(n))))]])
        weight = float(rng.choice([0.0, 1.0, -5.0]))
        score, cost, heads, _ = structure.decode({"arc": table}, gold, weight)
        scores = table[:-1, :-1, 0]
        trees = [t for t in ref.all_trees(n) if ref.n_roots(t) == 1 and is_projective(t)]
        best = max(ref.objective(scores, t, gold, weight) for t in trees)
        assert tuple(heads) in trees
        assert score + weight * cost == pytest.approx(best, abs=1e-4)
        assert score == pytest.approx(ref.tree_score(scores, heads), abs=1e-4)
        assert cost == ref.tree_cost(heads, gold)


@pytest.fixture(scope="module")
def examples():
    return [Example(Doc(d.vocab, words=[t.text for t in d]), d)
            for d in sample_docs("train", limit=24)]


def test_toy_decoder_trains_parses_and_loads_with_its_setting(toy_plugins, examples, tmp_path):
    nlp = make_nlp(decoding="toy_chunked", decoding_options={"chunk_tokens": 30})
    parser = nlp.get_pipe("nonmono_parser")
    assert parser.decoder.options == {"chunk_tokens": 30}
    train(nlp, examples, epochs=2)
    docs = list(nlp.pipe([Doc(nlp.vocab, words=[t.text for t in eg.reference])
                          for eg in examples]))
    assert all(tree_ok(doc) for doc in docs) and parser.decoder.calls > 1
    nlp.to_disk(tmp_path / "toy")
    loaded = spacy.load(tmp_path / "toy")
    assert loaded.get_pipe("nonmono_parser").decoder.options == {"chunk_tokens": 30}
    with pytest.raises(ValueError, match="chunk_tokens must be a positive integer"):
        make_nlp(decoding="toy_chunked", decoding_options={"chunk_tokens": 0})


def test_toy_structure_trains_and_parses_projective_trees(toy_plugins, examples):
    nlp = spacy.blank("en")
    nlp.add_pipe("nonmono_parser", config={"system": "toy_eisner", "decoding": "global",
                                           "model": global_model()})
    history = train(nlp, examples, epochs=6)
    assert history[-1] < history[0]
    parser = nlp.get_pipe("nonmono_parser")
    assert parser.cfg["projectivize"] == "pseudo"      # a projective structure
    for doc in nlp.pipe([Doc(nlp.vocab, words=[t.text for t in eg.reference])
                         for eg in examples]):
        assert tree_ok(doc)


@pytest.mark.slow
def test_spacy_train_with_plugins_from_code(tmp_path):
    """`spacy train --code` with the shipped config, switched to each plug-in
    by overrides alone (the global one with the decoder's default model)."""
    DocBin(docs=sample_docs("train", n_sents_per_doc=3, limit=12)).to_disk(tmp_path / "t.spacy")
    DocBin(docs=sample_docs("dev", limit=6)).to_disk(tmp_path / "d.spacy")
    key = "--components.nonmono_parser."
    for name, overrides in (
            ("decoder", [key + "decoding", "toy_chunked",
                         key + "decoding_options", '{"chunk_tokens": 50}']),
            ("structure", [key + "decoding", "global", key + "system", "toy_eisner",
                           key + "model", "null"])):
        result = subprocess.run(
            [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / "nonmono_parser.cfg"),
             "--code", str(PLUGINS), "--output", str(tmp_path / name),
             "--paths.train", str(tmp_path / "t.spacy"), "--paths.dev", str(tmp_path / "d.spacy"),
             "--training.max_steps", "4", "--training.eval_frequency", "2", *overrides],
            capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert (tmp_path / name / "model-last").is_dir()
