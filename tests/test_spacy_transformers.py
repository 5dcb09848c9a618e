"""The parser on spacy-transformers' (the older package's) `transformer`
component, as test_transformers.py tests it on spacy-curated-transformers'
`curated_transformer`: the full pipeline with a `transformer` in place of its
tok2vec and spacy-transformers' `TransformerListener.v1` in place of every
`spacy.Tok2VecListener.v1` (the parser's, and those inside the morphologizer's
and tagger's `ScaleGradient` blocks); the parser (global and greedy) trains
through spaCy's training loop, parses the dev docs into trees, and parses
them the same once saved and loaded. The transformer is a tiny Hugging Face
BERT saved here (random weights, test_transformers.py's word-piece
vocabulary), loaded by its folder with the hub offline: nothing downloaded.
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
from spacy_nonmono.configs import config_text, filled_config
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
LISTENER = {"@architectures": "spacy-transformers.TransformerListener.v1",
            "grad_factor": 1.0, "pooling": {"@layers": "reduce_mean.v1"},
            "upstream": TRANSFORMER}


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
    are test_transformers.py's: the sample's words, and each character alone
    and as a continuation, so that every word has pieces; each piece once
    (a one-letter word is also a character), so that ids are line numbers."""
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


def spacy_transformers_pipeline(config: Config, name: str) -> Config:
    """The full pipeline `config` with spacy-transformers' `transformer`
    (model `name`, a hub name or a folder) in place of its shared tok2vec,
    read through spacy-transformers' listeners. Training settings stay the
    full pipeline's. Not filled."""
    config = Config(config).copy()
    components = config["components"]
    del components["tok2vec"]
    components[TRANSFORMER] = {
        "factory": "transformer", "max_batch_items": 4096,
        "set_extra_annotations": {
            "@annotation_setters": "spacy-transformers.null_annotation_setter.v1"},
        "model": {"@architectures": "spacy-transformers.TransformerModel.v3", "name": name,
                  "tokenizer_config": {"use_fast": True}, "transformer_config": {},
                  "mixed_precision": False, "grad_scaler_config": {},
                  "get_spans": {"@span_getters": "spacy-transformers.strided_spans.v1",
                                "window": 64, "stride": 48}}}
    config["nlp"]["pipeline"] = [TRANSFORMER if name == "tok2vec" else name
                                 for name in config["nlp"]["pipeline"]]
    replaced = []

    def replace_listeners(block, path):
        for key, value in list(block.items()):
            if isinstance(value, dict):
                if value.get("@architectures") == "spacy.Tok2VecListener.v1":
                    block[key] = dict(LISTENER)
                    replaced.append(".".join(path + [key]))
                else:
                    replace_listeners(value, path + [key])

    replace_listeners(components, ["components"])
    assert sorted(replaced) == ["components.morphologizer.model.tok2vec.layer",
                                "components.nonmono_parser.model.tok2vec",
                                "components.tagger.model.tok2vec.layer"]
    config["initialize"]["before_init"] = None          # no WordEmbed vocabulary to count
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

    config = spacy_transformers_pipeline(
        filled_config(pipeline="full", lang="en", decoding=decoding), str(tiny_hf_bert))
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
