"""The parser on a transformer: the full pipeline with spacy-curated-
transformers' `curated_transformer` in place of its tok2vec
(`configs.transformer_pipeline`, `init-config --pipeline transformer`), the
parser (global and greedy), morphologizer and tagger reading it through
listeners. The transformer is a tiny BERT built here: random weights and a
word-piece vocabulary made from the sample's words, nothing downloaded. The
package itself never needs torch: the `transformers` extra brings it."""
import io
import pickle
import subprocess
import sys

import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import load_config_from_str

from conftest import ROOT, run_command, tree_ok
from spacy_nonmono.configs import (XLMR_TRANSFORMERS, config_text, filled_config,
                                   transformer_pipeline, xlmr_transformer)
from test_full_pipeline import dev_docs, full_corpora  # noqa: F401 (a fixture)
from test_vectors import sample_words

SPECIAL_PIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# The parser's own widths, small; the transformer's are TINY_BERT's.
SMALL_PARSER = {"components.nonmono_parser.model.hidden_width": 16,
                "components.nonmono_parser.model.label_hidden_width": 16}


def tiny_bert(vocab_size: int):
    return {"@architectures": "spacy-curated-transformers.BertTransformer.v1",
            "vocab_size": vocab_size, "hidden_width": 16, "intermediate_width": 32,
            "num_attention_heads": 2, "num_hidden_layers": 2,
            "max_position_embeddings": 128,
            "piece_encoder": {
                "@architectures": "spacy-curated-transformers.BertWordpieceEncoder.v1"},
            "with_spans": {"@architectures": "spacy-curated-transformers.WithStridedSpans.v1",
                           "stride": 48, "window": 64}}


@pytest.fixture(scope="module")
def pieces(tmp_path_factory):
    """A word-piece vocabulary made here: the sample's words, and each
    character alone and as a continuation, so that every word has pieces."""
    words = sample_words()
    chars = sorted({c for word in words for c in word} | set("abcdefghijklmnopqrstuvwxyz"))
    path = tmp_path_factory.mktemp("pieces") / "vocab.txt"
    path.write_text("\n".join(SPECIAL_PIECES + chars + ["##" + c for c in chars] + words)
                    + "\n", encoding="utf8")
    return path


def tiny_config(pieces, decoding="global", **settings):
    config = filled_config(pipeline="full", lang="en", decoding=decoding, **settings)
    n_pieces = len(pieces.read_text(encoding="utf8").splitlines())
    loaders = {"piecer_loader": {"@model_loaders": "spacy-curated-transformers.WordpieceLoader.v1",
                                 "path": str(pieces)}}
    return transformer_pipeline(config, tiny_bert(n_pieces), loaders)


def test_transformer_pipeline_settings():
    """The pipeline's components and listeners, without the extra."""
    config = transformer_pipeline(filled_config(pipeline="full"), *xlmr_transformer(
        "xlm-roberta-base"))
    assert config["nlp"]["pipeline"] == ["senter", "transformer", "morphologizer", "tagger",
                                         "nonmono_parser"]
    assert "tok2vec" not in config["components"]
    parser = config["components"]["nonmono_parser"]["model"]["tok2vec"]
    assert parser["@architectures"] == "spacy-curated-transformers.ScalarWeightingListener.v1"
    assert parser["upstream"] == "transformer"
    assert parser["width"] == "${components.transformer.model.hidden_width}"
    tagger = config["components"]["tagger"]["model"]["tok2vec"]
    assert tagger["@architectures"] == "spacy_nonmono.ScaleGradient.v1"
    assert tagger["layer"]["upstream"] == "transformer"
    loaders = config["initialize"]["components"]["transformer"]
    assert loaders["encoder_loader"]["name"] == "xlm-roberta-base"
    assert config["initialize"]["before_init"] is None
    assert config["training"]["optimizer"]["learn_rate"]["initial_rate"] == 5e-5
    text = config_text(config)
    assert "[components.transformer.model.piece_encoder]" in text
    assert XLMR_TRANSFORMERS["xlm-roberta-large"]["hidden_width"] == 1024
    with pytest.raises(ValueError, match="Unknown transformer 'bert-base'"):
        xlmr_transformer("bert-base")
    with pytest.raises(ValueError, match="replaces the full pipeline's shared `tok2vec`"):
        transformer_pipeline(filled_config(pipeline="parser"), {}, {})


def run_without_torch(code: str) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter where `import torch` fails."""
    return subprocess.run([sys.executable, "-c", "import sys\nsys.modules['torch'] = None\n"
                           + code], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow      # a fresh interpreter
def test_no_module_of_the_package_imports_torch():
    result = run_without_torch(
        "import importlib, pkgutil, spacy_nonmono, benchmarks\n"
        "for package in (spacy_nonmono, benchmarks):\n"
        "    for m in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        if not m.name.endswith('__main__'): importlib.import_module(m.name)\n"
        "print('imported')\n")
    assert result.returncode == 0 and "imported" in result.stdout, result.stderr


try:
    import spacy_curated_transformers  # noqa: F401
    HAS_EXTRA = True
except ImportError:
    HAS_EXTRA = False
needs_extra = pytest.mark.skipif(not HAS_EXTRA, reason="the transformers extra is not "
                                 "installed (pip install -e \".[test,transformers]\")")


@pytest.mark.slow      # a fresh interpreter
@pytest.mark.skipif(HAS_EXTRA, reason="the transformers extra is installed, and spaCy "
                    "loads its factories (and torch) with every pipeline")
def test_the_install_without_the_extra_parses_without_torch():
    """Where the extra is not installed (CI's regular install), the full
    pipeline builds, and a parser pipeline parses, with torch unimportable."""
    result = run_without_torch(
        "import spacy_nonmono\n"
        "from spacy_nonmono.configs import filled_config\n"
        "from spacy.util import load_model_from_config\n"
        "load_model_from_config(filled_config(pipeline='full', lang='en'))\n"
        "nlp = load_model_from_config(filled_config(lang='en'))\n"
        "from spacy.training import Example\n"
        "eg = Example.from_dict(nlp.make_doc('A short text .'), {'heads': [2, 2, 2, 2], "
        "'deps': ['det', 'amod', 'ROOT', 'punct']})\n"
        "nlp.initialize(lambda: [eg])\n"
        "assert len(nlp('A short text .')) == 4\n"
        "print('parsed')\n")
    assert result.returncode == 0 and "parsed" in result.stdout, result.stderr


@needs_extra
@pytest.mark.parametrize("decoding", ["global", "greedy"])
def test_the_parser_trains_and_parses_on_a_tiny_transformer(decoding, pieces, full_corpora,
                                                           tmp_path):
    config = tiny_config(pieces, decoding)
    small = {k: v for k, v in SMALL_PARSER.items() if decoding == "global" or "label" not in k}
    config = load_config_from_str(config_text(config), overrides={
        **full_corpora, **small, "training.max_steps": 4,
        "training.eval_frequency": 2})
    nlp = init_nlp(config)
    assert nlp.pipe_names == ["senter", "transformer", "morphologizer", "tagger",
                              "nonmono_parser"]
    (tmp_path / "out").mkdir()
    log = io.StringIO()
    nlp, final = train_loop(nlp, tmp_path / "out", stdout=log, stderr=log)
    parser = nlp.get_pipe("nonmono_parser")
    assert parser.decoder.name == decoding
    docs = list(nlp.pipe(dev_docs(nlp, full_corpora["paths.dev"])))
    assert docs and all(tree_ok(doc) for doc in docs)
    expected = [[(t.head.i, t.dep_, t.pos_) for t in doc] for doc in docs]

    def same(other):
        got = list(other.pipe(dev_docs(other, full_corpora["paths.dev"])))
        assert [[(t.head.i, t.dep_, t.pos_) for t in doc] for doc in got] == expected

    same(spacy.load(final))
    # spacy-curated-transformers' component does not pickle (its loaders are
    # closures); ours does, beside it.
    parser = pickle.loads(pickle.dumps(nlp.get_pipe("nonmono_parser")))
    assert parser.decoder.name == decoding and parser.labels == nlp.get_pipe("nonmono_parser").labels
    text = nlp("The cat sat on the mat. Then it left.")
    assert tree_ok(text)


@needs_extra
def test_init_config_writes_a_transformer_pipeline(tmp_path):
    """`init-config --pipeline transformer` (XLM-R base, fetched from the hub
    when the pipeline is initialized, not here) and `spacy debug config`."""
    result = run_command("init-config", "trf.cfg", "--pipeline", "transformer", "--lang", "la",
                         cwd=tmp_path, check=True)
    text = (tmp_path / "trf.cfg").read_text(encoding="utf8")
    assert '@architectures = "spacy-curated-transformers.XlmrTransformer.v1"' in text
    assert 'name = "xlm-roberta-base"' in text
    assert result.returncode == 0
    result = run_command("init-config", "x.cfg", "--pipeline", "full", "--transformer",
                         "xlm-roberta-base", cwd=tmp_path)
    assert result.returncode == 2 and "transformer" in result.stderr
