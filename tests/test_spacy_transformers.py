"""The parser on spacy-transformers' (the older package's) `transformer`
component, as test_transformers.py tests it on spacy-curated-transformers'
`curated_transformer`: the full pipeline with a `transformer` in place of its
tok2vec and spacy-transformers' `TransformerListener.v1` in place of every
`spacy.Tok2VecListener.v1` (the parser's, and those inside the morphologizer's
and tagger's `ScaleGradient` blocks); the parser (global and greedy) trains
through spaCy's training loop (the transformer recipe's settings of
`configs.transformer_pipeline`), parses the dev docs into trees, and parses
them the same once saved and loaded. The transformer is a tiny Hugging Face
BERT saved here (random weights, a word-piece vocabulary made as
test_transformers.py makes its own), loaded by its folder with the hub
offline: nothing downloaded.
Skipped where spacy-transformers is not installed (it is no extra of the
package: `pip install spacy-transformers`)."""
import io
import string

import numpy
import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import load_config_from_str
from thinc.api import Config

from conftest import tree_ok
from spacy_nonmono.configs import (SPACY_TRANSFORMERS, config_text, filled_config,
                                   spacy_transformers_model, transformer_pipeline)
from test_full_pipeline import dev_docs, full_corpora  # noqa: F401 (a fixture)
from test_transformers import SMALL_PARSER, SPECIAL_PIECES
from test_vectors import sample_words

try:
    import spacy_transformers  # noqa: F401
    HAS_SPACY_TRANSFORMERS = True
except ImportError:
    HAS_SPACY_TRANSFORMERS = False
needs_spacy_transformers = pytest.mark.skipif(
    not HAS_SPACY_TRANSFORMERS,
    reason="spacy-transformers is not installed (pip install spacy-transformers)")

TRANSFORMER = "transformer"
PIPELINE = ["senter", TRANSFORMER, "morphologizer", "tagger", "nonmono_parser"]


@pytest.fixture
def offline(monkeypatch):
    """The Hugging Face hub offline. huggingface_hub and transformers read
    the variables when imported (spaCy imports them with its entry points,
    before any test runs), so their flags are set too."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    import huggingface_hub.constants
    import transformers.utils.hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(transformers.utils.hub, "_is_offline_mode", True, raising=False)


@pytest.fixture(scope="module")
def tiny_hf_bert(tmp_path_factory):
    """A folder holding a tiny BERT (2 layers of width 16, random weights) and
    its fast word-piece tokenizer, as `save_pretrained` writes them: what
    `from_pretrained(folder)` loads, here as the hub's models do. The pieces
    are made as test_transformers.py's `pieces`: the sample's words, and each
    character alone and as a continuation, so that every word has pieces;
    here each piece once (a one-letter word is also a character): the fast
    tokenizer numbers pieces by line and would save a vocabulary with holes."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny_hf_bert")
    words = sample_words()
    chars = sorted({c for word in words for c in word} | set(string.ascii_letters))
    pieces = list(dict.fromkeys(SPECIAL_PIECES + chars + ["##" + c for c in chars] + words))
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(pieces) + "\n", encoding="utf8")
    config = BertConfig(vocab_size=len(pieces), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32,
                        max_position_embeddings=512)
    BertModel(config).save_pretrained(folder)
    # Cased, as the pieces are written; spans longer than the model's
    # positions are truncated by spacy-transformers, not failed on.
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=False,
                      model_max_length=512).save_pretrained(folder)
    return folder


def spacy_transformers_config(folder, decoding: str) -> Config:
    """The full pipeline on spacy-transformers' `transformer` (the model in
    `folder`), as `configs.transformer_pipeline` makes it: every listener
    replaced (the parser's and the two inside the taggers' ScaleGradient)."""
    config = transformer_pipeline(filled_config(pipeline="full", lang="en", decoding=decoding),
                                  spacy_transformers_model(str(folder), window=64, stride=48),
                                  {}, *SPACY_TRANSFORMERS)
    listeners = [config["components"]["nonmono_parser"]["model"]["tok2vec"]] + [
        config["components"][name]["model"]["tok2vec"]["layer"]
        for name in ("morphologizer", "tagger")]
    assert all(block == SPACY_TRANSFORMERS[1] for block in listeners)
    assert "transformer" not in config["initialize"]["components"]   # it loads itself
    return config


def transformer_weights(nlp):
    """A copy of the Hugging Face model's weights."""
    model = nlp.get_pipe(TRANSFORMER).model.transformer
    return {key: value.detach().numpy().copy() for key, value in model.state_dict().items()}


@needs_spacy_transformers
@pytest.mark.parametrize("decoding", ["global", "greedy"])
def test_the_parser_trains_and_parses_on_spacy_transformers(decoding, tiny_hf_bert, offline,
                                                           full_corpora, tmp_path):  # noqa: F811
    from spacy_transformers.layers.listener import TransformerListener

    config = spacy_transformers_config(tiny_hf_bert, decoding)
    small = {k: v for k, v in SMALL_PARSER.items() if decoding == "global" or "label" not in k}
    config = load_config_from_str(config_text(config), overrides={
        **full_corpora, **small, "training.max_steps": 4, "training.eval_frequency": 2})
    nlp = init_nlp(config)
    assert nlp.pipe_names == PIPELINE
    # The parser listens last: its backprop is the one that updates the
    # transformer (the others' gradients are accumulated until then).
    assert nlp.get_pipe(TRANSFORMER).listening_components == PIPELINE[2:]
    parser = nlp.get_pipe("nonmono_parser")
    assert any(isinstance(node, TransformerListener) for node in parser.model.walk())
    before = transformer_weights(nlp)
    (tmp_path / "out").mkdir()
    log = io.StringIO()
    nlp, final = train_loop(nlp, tmp_path / "out", stdout=log, stderr=log)
    assert parser.decoder.name == decoding
    # The parser's gradient reaches the transformer (it applies each batch's
    # gradient at its next update: nlp.update finishes each component's
    # update before the listeners after it backpropagate).
    after = transformer_weights(nlp)
    assert any(not numpy.array_equal(before[key], after[key]) for key in before), \
        "the transformer did not learn"
    docs = list(nlp.pipe(dev_docs(nlp, full_corpora["paths.dev"])))
    assert docs and all(tree_ok(doc) for doc in docs)
    expected = [[(t.head.i, t.dep_, t.pos_) for t in doc] for doc in docs]
    loaded = spacy.load(final)
    assert loaded.pipe_names == PIPELINE
    got = list(loaded.pipe(dev_docs(loaded, full_corpora["paths.dev"])))
    assert [[(t.head.i, t.dep_, t.pos_) for t in doc] for doc in got] == expected
    assert tree_ok(nlp("The cat sat on the mat. Then it left."))
