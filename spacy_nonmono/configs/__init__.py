"""The training configs, shipped with the package so that commands find
them from any folder. The repository's top-level `configs/` holds symlinks
to these files (the ones users copy), so there is one copy of each.

- `nonmono_parser.cfg`: the component with its defaults (the recommended
  system, `covington_nm`);
- `spacy_parser.cfg`: spaCy's own `parser` with the same tok2vec and
  training settings, for comparisons;
- `full_pipeline.cfg`: the full-strength pipeline (the recipe of the MH4
  paper): a shared `tok2vec` (vocabulary embeddings, a character BiLSTM for
  rare and unknown words, a two-layer BiLSTM, dropout) trained by the parser
  and, with a weight, by spaCy's `morphologizer` and `tagger` (stack
  propagation), a `senter` for raw text, and `nonmono_parser` with MH4 global
  decoding; the learning rate decays on a dev plateau.
  `spacy_parser_pipeline` puts spaCy's parser in its place, for comparisons.

Both are shipped filled (every setting spaCy would add), so `spacy debug
config` and `spacy debug data` accept them as they are. `filled_config`
makes such a config for another system or language (the `init-config`
command), optionally reading static vectors in every encoder of the pipeline
and with the settings of `spacy pretrain` (`add_pretraining`).
"""
import copy
from pathlib import Path
from typing import Dict, Optional, Tuple

from thinc.api import Config

CONFIG_DIR = Path(__file__).resolve().parent
COMPONENT = "nonmono_parser"
# Pipelines `filled_config` starts from, by name ("transformer": the full
# pipeline with a transformer in place of its tok2vec, `transformer_pipeline`).
PIPELINES = {"parser": "nonmono_parser.cfg", "full": "full_pipeline.cfg",
             "transformer": "full_pipeline.cfg"}
# Transformers `init-config --pipeline transformer --transformer NAME` knows
# (Hugging Face names; spacy-curated-transformers' XLM-R architecture): their
# shapes. Their weights and pieces are fetched from the Hugging Face hub when
# the pipeline is initialized.
XLMR_TRANSFORMERS = {
    "xlm-roberta-base": {"hidden_width": 768, "num_hidden_layers": 12,
                         "num_attention_heads": 12, "intermediate_width": 3072},
    "xlm-roberta-large": {"hidden_width": 1024, "num_hidden_layers": 24,
                          "num_attention_heads": 16, "intermediate_width": 4096},
}
TRANSFORMER = "transformer"   # the transformer component's name
# The layer that reads the pipeline's static vectors, projected to the width
# of the WordEmbed layer it is put in (nO null: the WordEmbed sets its width,
# so that narrowing the encoder narrows the projection too).
STATIC_VECTORS = {"@architectures": "spacy_nonmono.StaticVectors.v1", "nO": None, "nM": None}
# The order of spaCy's own generated configs.
SECTION_ORDER = ("paths", "system", "nlp", "components", "corpora", "training", "pretraining",
                 "initialize")


def config_path(name: str) -> Path:
    """The packaged config `name` (e.g. "nonmono_parser.cfg")."""
    return CONFIG_DIR / name


def fill(config: Config) -> Config:
    """The config with every default filled in and validated, as `spacy init
    fill-config` makes it (a ValueError or spaCy's ConfigValidationError for
    a bad setting)."""
    from spacy import util

    nlp = util.load_model_from_config(config, auto_fill=True, validate=False)
    return util.load_model_from_config(nlp.config).config


def filled_config(
    system: Optional[str] = None,
    oracle: Optional[str] = None,
    lang: Optional[str] = None,
    system_options: Optional[Dict[str, object]] = None,
    projectivize: Optional[str] = None,
    decoding: Optional[str] = None,
    decoding_options: Optional[Dict[str, object]] = None,
    pipeline: str = "parser",
    vectors: Optional[str] = None,
    pretraining: bool = False,
    transformer: Optional[str] = None,
    tokenizer: str = "language",
    tag_input: bool = False,
    xpos: str = "whole",
    senter: str = "cnn",
    add_marks: float = 0.0,
    remove_punctuation: float = 0.0,
    tagger_layer: str = "none",
) -> Config:
    """A packaged config with these settings of the nonmono_parser
    component, filled: `pipeline` "parser" (nonmono_parser.cfg: the component
    alone) or "full" (full_pipeline.cfg). None leaves the config's setting.
    Another decoding than the config's also puts in that decoder's default
    model, written out (on the pipeline's shared encoder, where the
    component listens to one, and with the pipeline's dropout on the token
    vectors the parser reads), and its default system unless one is given.
    vectors: a pipeline with static vectors (`spacy init vectors`), loaded at
    initialization (`paths.vectors`) and read by every encoder of the
    pipeline (`read_static_vectors`).
    pretraining: add the settings of `spacy pretrain` (`add_pretraining`).
    tokenizer: "language" (spaCy's tokenizer of the pipeline's language) or
    "treebank" (one learned from the training treebank,
    `add_treebank_tokenizer`).
    tag_input: the parser reads the taggers' predictions (`add_tag_input`).
    xpos: the XPOS tagger: "whole" (spaCy's, whole tags), "positional"
    (`positional_xpos`: one softmax per position of a positional tag), or
    "none" for a treebank without XPOS: no tagger (`without_tagger`).
    tagger_layer: "none" (the taggers' softmaxes on the shared encoder) or
    "bilstm" (`tagger_layers`: a BiLSTM layer of each tagger's own between).
    senter: the full pipeline's sentence splitter: "cnn" (spaCy's senter
    model, a CNN that sees two words each side), "bilstm" (`bilstm_senter`:
    a BiLSTM of its own over the whole text, across sentences, with
    characters for every word), "shared" (`shared_senter`: on the shared
    encoder, which then reads the whole text), "syntax" (`syntax_senter`:
    sentences decided with syntax, on the shared encoder) or "break"
    (`break_senter`: a transition parser over documents with a Break move,
    on the shared encoder).
    add_marks, remove_punctuation: the shares of training docs rewritten with
    a full stop closing every sentence, or without their punctuation
    (`augment_punctuation`)."""
    from spacy import util

    from ..decoders import get_decoder

    if pipeline not in PIPELINES:
        raise ValueError(f"Unknown pipeline {pipeline!r}: expected one of "
                         f"{', '.join(repr(p) for p in PIPELINES)}.")
    config = util.load_config(config_path(PIPELINES[pipeline]), interpolate=False)
    component = config["components"][COMPONENT]
    settings = {"system": system, "oracle": oracle, "projectivize": projectivize,
                "system_options": system_options, "decoding": decoding,
                "decoding_options": decoding_options}
    if decoding not in (None, component["decoding"]):
        decoder = get_decoder(decoding)()
        model = Config().from_str(decoder.default_model)["model"]
        listener = component["model"]["tok2vec"]
        if listener.get("@architectures") == "spacy.Tok2VecListener.v1":
            model["tok2vec"] = listener
        # Both parser models take it: the full pipeline's 0.3 is worth 1.4-3.9
        # dev UAS to the global model, 2.9-3.3 to the greedy one (one seed).
        model["dropout"] = component["model"].get("dropout", 0.0)
        component["model"] = model
        settings["system"] = system or decoder.default_system
    component.update({key: value for key, value in settings.items() if value is not None})
    if lang is not None:
        config["nlp"]["lang"] = lang
    if senter not in SENTERS:
        raise ValueError(f"Unknown senter {senter!r}: expected one of "
                         f"{', '.join(repr(name) for name in SENTERS)}.")
    if senter != "cnn" and pipeline != "full":
        raise ValueError(f"senter {senter!r} is a setting of the full pipeline "
                         "(pipeline \"full\"), whose senter it replaces.")
    SENTERS[senter](config)
    if add_marks or remove_punctuation:
        augment_punctuation(config, add_marks, remove_punctuation)
    if vectors is not None:
        config["paths"]["vectors"] = str(vectors)
        read_static_vectors(config)
    if tag_input:
        add_tag_input(config)
    if xpos == "positional":
        positional_xpos(config)
    elif xpos == "none":
        without_tagger(config)
    elif xpos != "whole":
        raise ValueError(f"Unknown xpos {xpos!r}: expected 'whole', 'positional' or 'none'.")
    if tagger_layer == "bilstm":
        tagger_layers(config)
    elif tagger_layer != "none":
        raise ValueError(f"Unknown tagger_layer {tagger_layer!r}: expected 'none' or 'bilstm'.")
    if pretraining:
        add_pretraining(config)
    if tokenizer == "treebank":
        add_treebank_tokenizer(config)
    elif tokenizer != "language":
        raise ValueError(f"Unknown tokenizer {tokenizer!r}: expected 'language' or 'treebank'.")
    if pipeline == "transformer":
        config = transformer_pipeline(config, *xlmr_transformer(transformer or
                                                                "xlm-roberta-base"))
    elif transformer is not None:
        raise ValueError("A transformer is read by the \"transformer\" pipeline only.")
    return fill(config)


def vectors_problem(path, lang: str) -> Optional[str]:
    """Why the static vectors at `path` (a folder made by `spacy init
    vectors`) cannot serve a pipeline of language `lang`, or None: spaCy
    loads them only into a pipeline of their own language."""
    from spacy import util

    path = Path(path)
    if not (path / "vocab").is_dir() or not (path / "config.cfg").is_file():
        return (f"{path}: not a pipeline folder with vectors (make one with `spacy init "
                f"vectors {lang} VECTORS_FILE {path}`)")
    theirs = util.load_config(path / "config.cfg", interpolate=False)["nlp"]["lang"]
    if theirs != lang:
        return (f"{path}: vectors of language {theirs!r}, for a pipeline of language {lang!r} "
                f"(spaCy loads vectors into a pipeline of their own language): make them with "
                f"`spacy init vectors {lang} ...` (or the lab's `vectors --lang {lang}`)")
    return None


def read_static_vectors(config: Config) -> Config:
    """Make every encoder of the config's components read the pipeline's
    static vectors (in place): WordEmbed layers get a `vectors` layer
    (STATIC_VECTORS), spaCy's HashEmbedCNN its
    `pretrained_vectors` and MultiHashEmbed its `include_static_vectors`. The
    vectors themselves come from `[initialize] vectors`."""

    def visit(block):
        if not isinstance(block, dict):
            return
        architecture = block.get("@architectures")
        if architecture == "spacy_nonmono.WordEmbed.v1":
            block["vectors"] = dict(STATIC_VECTORS)
        elif architecture == "spacy.HashEmbedCNN.v2":
            block["pretrained_vectors"] = True
        elif architecture in ("spacy.MultiHashEmbed.v1", "spacy.MultiHashEmbed.v2"):
            block["include_static_vectors"] = True
        for value in block.values():
            visit(value)

    for component in config["components"].values():
        visit(component.get("model"))
    return config


def add_treebank_tokenizer(config: Config) -> Config:
    """Make the config's tokenizer one learned from the training treebank
    (in place): `spacy_nonmono.TreebankTokenizer.v1` (on spaCy's rules of
    the pipeline's language, or of `lang` if set), learned at initialization
    from the CoNLL-U file `paths.train_conllu` (null here: initialization
    then stops and says to set it) with the default settings, written out."""
    from ..pipeline.tokenizers import (MIN_AFFIX_COUNT, MIN_AFFIX_RATIO,
                                       MIN_EXCEPTION_COUNT)

    config["paths"]["train_conllu"] = None
    config["nlp"]["tokenizer"] = {"@tokenizers": "spacy_nonmono.TreebankTokenizer.v1",
                                  "lang": None}
    config["initialize"]["tokenizer"] = {"conllu_path": "${paths.train_conllu}",
                                         "min_affix_count": MIN_AFFIX_COUNT,
                                         "min_affix_ratio": MIN_AFFIX_RATIO,
                                         "min_exception_count": MIN_EXCEPTION_COUNT}
    return config


def add_pretraining(config: Config) -> Config:
    """Give the config spaCy's `[pretraining]` settings (in place), so that
    `spacy pretrain CONFIG OUT --paths.raw_text TEXT` trains the shared
    `tok2vec` component on raw text and `spacy train` starts from its weights
    (`paths.init_tok2vec`). spaCy's objectives are masked-word (cloze)
    objectives: 15% of the words are hidden ([MASK], or a random word) and
    the encoder predicts, from the context alone, their static vector
    (`spacy.PretrainVectors.v1`, cosine; where the pipeline reads static
    vectors) or their first and last 4 characters
    (`spacy.PretrainCharacters.v1`; without vectors). Raw text: one
    tokenized sentence a line (`spacy_nonmono.RawTextCorpus.v1`). One pass
    over the text (`max_epochs = 1`): a raw corpus is large, and a pass is
    what the benchmarks measured."""
    from spacy import util
    from spacy.language import DEFAULT_CONFIG_PRETRAIN_PATH

    if "tok2vec" not in config["components"]:
        raise ValueError("Pretraining trains the pipeline's shared `tok2vec` component, "
                         "which this pipeline does not have (use the full pipeline).")
    settings = util.load_config(DEFAULT_CONFIG_PRETRAIN_PATH, interpolate=False)["pretraining"]
    settings["max_epochs"] = 1
    if _reads_static_vectors(config["components"]["tok2vec"]):
        settings["objective"] = {"@architectures": "spacy.PretrainVectors.v1",
                                 "maxout_pieces": 3, "hidden_size": 300, "loss": "cosine"}
    config["pretraining"] = settings
    config["paths"]["raw_text"] = None
    config["corpora"]["pretrain"] = {"@readers": "spacy_nonmono.RawTextCorpus.v1",
                                     "path": "${paths.raw_text}", "min_length": 3,
                                     "max_length": 200, "limit": 0}
    return config


# The taggers whose predictions `add_tag_input` gives the parser, and the
# annotations each writes.
TAGGERS = {"morphologizer": ("POS", "MORPH"), "tagger": ("TAG",)}
# TagInput's defaults: Dozat et al.'s tag dropout (0.33).
TAG_INPUT = {"@architectures": "spacy_nonmono.TagInput.v1", "width": 32, "rows": 2000,
             "dropout": 0.33}


def add_tag_input(config: Config, parser: Optional[str] = None) -> Config:
    """Give the pipeline's parser (`parser`, or the nonmono_parser, or
    spaCy's `parser`) the taggers' predictions as input (in place): its
    tok2vec is wrapped in `spacy_nonmono.TagInput.v1`, which embeds the
    annotations of the morphologizer and tagger the pipeline has (UPOS and
    FEATS, XPOS) beside each word's vector, and in training the shared
    `tok2vec` and those taggers annotate the training docs with their
    predictions (`[training] annotating_components`), so that the parser
    learns from the tags it will read at run time."""
    components = config["components"]
    name = parser or (COMPONENT if COMPONENT in components else "parser")
    if name not in components:
        raise ValueError(f"add_tag_input: the pipeline has no component {name!r}.")
    taggers = [t for t in TAGGERS if t in components]
    if not taggers:
        raise ValueError("add_tag_input: the pipeline has no morphologizer or tagger whose "
                         "predictions the parser could read (the full pipeline has both: "
                         "init-config --pipeline full).")
    order = config["nlp"]["pipeline"]
    late = [t for t in taggers if order.index(t) > order.index(name)]
    if late:
        raise ValueError(f"add_tag_input: {', '.join(late)} must come before {name} in the "
                         "pipeline, to tag what the parser reads.")
    model = components[name]["model"]
    if model["tok2vec"].get("@architectures") == TAG_INPUT["@architectures"]:
        return config
    attrs = [attr for t in taggers for attr in TAGGERS[t]]
    model["tok2vec"] = {**TAG_INPUT, "attrs": attrs, "tok2vec": model["tok2vec"]}
    annotating = list(config["training"].get("annotating_components", []))
    upstream = ["tok2vec"] if "tok2vec" in components else []
    for t in upstream + taggers:
        if t not in annotating:
            annotating.append(t)
    config["training"]["annotating_components"] = annotating
    return config


def positional_xpos(config: Config) -> Config:
    """Make the pipeline's XPOS tagger predict each position of a positional
    tag (in place): `nonmono_positional_tagger`, on the same encoder, with
    the same settings."""
    if "tagger" not in config["components"]:
        raise ValueError("positional_xpos: the pipeline has no XPOS `tagger` (the full "
                         "pipeline has one: init-config --pipeline full).")
    tagger = config["components"]["tagger"]
    tagger["factory"] = "nonmono_positional_tagger"
    tagger["model"] = {"@architectures": "spacy_nonmono.PositionalTagger.v1", "nO": None,
                       "tok2vec": tagger["model"]["tok2vec"]}
    return config


# Each tagger's layer of its own (UDPipe 2's "one layer per task"): one
# bidirectional layer as wide as the shared encoder, over its vectors, reading
# the sequences the shared encoder reads (sentences, or pieces of whole docs).
TAGGER_LAYER_MODEL = {
    "@architectures": "spacy_nonmono.BiLSTMEncoder.v1", "width": "${components.tok2vec.model.width}",
    "depth": 1, "sentences": "${components.tok2vec.model.sentences}", "recurrent_dropout": 0.0,
    "window": "${components.tok2vec.model.window}",
    "overlap": "${components.tok2vec.model.overlap}"}


def tagger_layers(config: Config, dropout: float = 0.2, layer_dropout: float = 0.3) -> Config:
    """Give each tagger of the pipeline (morphologizer, XPOS tagger) a BiLSTM
    layer of its own between the shared encoder and its softmax (in place):
    the tagger's whole loss trains its layer, and the shared encoder still
    gets the share of its gradient that the tagger's `ScaleGradient` passes.
    dropout, layer_dropout: the layer's (BiLSTMEncoder's), in training."""
    components = config["components"]
    taggers = [name for name in TAGGERS if name in components]
    if not taggers or "tok2vec" not in components:
        raise ValueError("tagger_layers: the pipeline has no shared `tok2vec` and taggers "
                         "(the full pipeline has them: init-config --pipeline full).")
    for name in taggers:
        model = components[name]["model"]
        if model["tok2vec"].get("@architectures") != TAGGER_LAYER_MODEL["@architectures"]:
            model["tok2vec"] = {**TAGGER_LAYER_MODEL, "dropout": dropout,
                                "layer_dropout": layer_dropout, "tok2vec": model["tok2vec"]}
    return config


# The BiLSTM senter's encoder: the shared encoder's layers at two thirds of
# their width, over the whole text rather than sentence by sentence, and
# characters for every word (a boundary often shows in a word's ending).
BILSTM_SENTER = {
    "@architectures": "spacy_nonmono.BiLSTMEncoder.v1", "width": 128, "depth": 2,
    "dropout": 0.2, "layer_dropout": 0.3, "sentences": False, "recurrent_dropout": 0.0,
    "window": 0, "overlap": 0,
    "tok2vec": {"@architectures": "spacy_nonmono.WordEmbed.v1", "width": 64, "min_freq": 5,
                "word_dropout": 2.5, "token_dropout": 0.1, "vocabulary": True,
                "vectors": None, "combine": "sum",
                "chars": {"@architectures": "spacy_nonmono.CharEncoder.v1", "width": 64,
                          "char_width": 32, "lstm_width": 64, "depth": 1, "rows": 2000,
                          "dropout": 0.3, "max_chars": 40}}}


def bilstm_senter(config: Config) -> Config:
    """Give the pipeline's `senter` a BiLSTM encoder of its own (in place):
    it reads the whole text, across sentence boundaries (training docs keep
    several consecutive sentences), where spaCy's senter CNN sees two words
    each side. It comes before the shared encoder, which reads sentence by
    sentence what the senter decides."""
    if "senter" not in config["components"]:
        raise ValueError("bilstm_senter: the pipeline has no `senter` (the full pipeline has "
                         "one: init-config --pipeline full).")
    config["components"]["senter"]["model"]["tok2vec"] = copy.deepcopy(BILSTM_SENTER)
    return config


# The shared encoder under the shared senter reads a doc in pieces of 64
# tokens with 32 of context each side: read whole, a document of raw text
# is one sequence, one step per token (0.78x the words/s on Gothic); in
# pieces, its speed and scores are those of whole-doc reading (Gothic test,
# docs/results/sentences).
SHARED_WINDOW, SHARED_OVERLAP = 64, 32


def shared_senter(config: Config) -> Config:
    """Put the pipeline's `senter` on the shared encoder (in place): the
    shared BiLSTM reads the whole text, across sentence boundaries, instead
    of sentence by sentence (`sentences = false`, in overlapping pieces),
    and the senter, after it, reads its vectors through a listener, training
    it with a share of its gradient as the taggers do. The parser then reads
    vectors of words in context across sentences, on raw text as in training
    (whose docs keep several consecutive sentences)."""
    components = config["components"]
    if "senter" not in components or "tok2vec" not in components:
        raise ValueError("shared_senter: the pipeline has no `senter` and shared `tok2vec` "
                         "(the full pipeline has both: init-config --pipeline full).")
    components["tok2vec"]["model"].update(sentences=False, window=SHARED_WINDOW,
                                          overlap=SHARED_OVERLAP)
    components["senter"]["model"]["tok2vec"] = {
        "@architectures": "spacy_nonmono.ScaleGradient.v1", "scale": 0.2,
        "layer": {"@architectures": "spacy.Tok2VecListener.v1",
                  "width": "${components.tok2vec.model.width}", "upstream": "tok2vec"}}
    order = [name for name in config["nlp"]["pipeline"] if name != "senter"]
    order.insert(order.index("tok2vec") + 1, "senter")
    config["nlp"]["pipeline"] = order
    return config


def augment_punctuation(config: Config, add: float = 0.0, remove: float = 0.0) -> Config:
    """Train on text with and without punctuation (in place): the training
    corpus rewrites a share `add` of its docs with a full stop closing every
    sentence that lacks one, and a share `remove` without their punctuation
    (`spacy_nonmono.punctuation_augmenter.v1`)."""
    config["corpora"]["train"]["augmenter"] = punctuation_augmenter_section(add, remove)
    return config


def punctuation_augmenter_section(add: float = 0.0, remove: float = 0.0) -> Dict[str, object]:
    """The training corpus's augmenter of `augment_punctuation`, as a config
    section."""
    from ..pipeline.punctuation import punctuation_augmenter

    punctuation_augmenter(add, remove)    # checks the shares
    return {"@augmenters": "spacy_nonmono.punctuation_augmenter.v1", "add": add,
            "remove": remove, "mark": "."}


def syntax_senter(config: Config) -> Config:
    """Decide sentences with syntax (in place): the shared senter's setting
    (`shared_senter`: the shared encoder reads the whole text), with
    `nonmono_syntax_senter` instead of a per-word senter: the best analysis
    of the text into sentences, each a projective tree under first-order
    head scores on the shared vectors, and each sentence's first word
    under the per-word senter's log odds (`start_weight`)."""
    shared_senter(config)
    senter = config["components"]["senter"]
    config["components"]["senter"] = {
        "factory": "nonmono_syntax_senter", "max_length": senter["max_length"],
        "start_weight": 1.0, "overwrite": senter["overwrite"], "scorer": senter["scorer"],
        "model": {"@architectures": "spacy_nonmono.SentenceHeads.v1", "width": 128,
                  "dropout": 0.25, "tok2vec": senter["model"]["tok2vec"]}}
    return config


def break_senter(config: Config) -> Config:
    """Decide sentences with a transition parser over documents (in place):
    the shared senter's setting (`shared_senter`), with a greedy
    `nonmono_parser` of the system `arc_eager_break` (arc-eager with a
    Break move, trained on windows of consecutive gold sentences) instead of
    a per-word senter. Its trees decide the sentences, which the pipeline's
    parser then parses again (and whose arcs it replaces)."""
    from ..models.parser_model import DEFAULT_CONFIG

    shared_senter(config)
    senter = config["components"]["senter"]
    model = Config().from_str(DEFAULT_CONFIG)["model"]
    model.update(tok2vec=senter["model"]["tok2vec"], dropout=0.3)
    config["components"]["senter"] = {
        "factory": "nonmono_parser", "system": "arc_eager_break", "decoding": "greedy",
        "oracle": None, "projectivize": None, "follow_oracle_prob": None,
        "max_sentence_length": 200, "system_options": {}, "decoding_options": {},
        "scorer": senter["scorer"], "model": model}
    return config


# The full pipeline's sentence splitters (`init-config --senter`).
SENTERS = {"cnn": lambda config: config, "bilstm": bilstm_senter, "shared": shared_senter,
           "syntax": syntax_senter, "break": break_senter}


def without_tagger(config: Config) -> Config:
    """The pipeline without its XPOS `tagger` (in place), for a treebank
    whose XPOS column is empty (`_`): spaCy's CoNLL-U converter copies UPOS
    there, so a tagger would learn UPOS again and write it as XPOS. Without
    it XPOS is written `_`, as the treebank has it; a parser reading the
    taggers' tags (`add_tag_input`) reads the morphologizer's alone."""
    if "tagger" not in config["components"]:
        return config
    del config["components"]["tagger"]
    config["nlp"]["pipeline"] = [name for name in config["nlp"]["pipeline"] if name != "tagger"]
    training = config["training"]
    training["annotating_components"] = [name for name in training.get("annotating_components",
                                                                       []) if name != "tagger"]
    weights = training.get("score_weights", {})
    for key in [key for key in weights if key.startswith("tag_")]:
        del weights[key]
    for component in config["components"].values():
        tok2vec = component.get("model", {}).get("tok2vec", {})
        if tok2vec.get("@architectures") == TAG_INPUT["@architectures"]:
            tok2vec["attrs"] = [attr for attr in tok2vec["attrs"] if attr != "TAG"]
    return config


def _reads_static_vectors(block) -> bool:
    """Whether a config block has a StaticVectors layer."""
    if not isinstance(block, dict):
        return False
    return block.get("@architectures") == STATIC_VECTORS["@architectures"] or \
        any(_reads_static_vectors(value) for value in block.values())


def xlmr_transformer(name: str) -> Tuple[Dict, Dict]:
    """The model block and the `[initialize.components.transformer]` loaders
    of a known XLM-R transformer (XLMR_TRANSFORMERS), by its hub name."""
    if name not in XLMR_TRANSFORMERS:
        raise ValueError(f"Unknown transformer {name!r}: expected one of "
                         f"{', '.join(XLMR_TRANSFORMERS)} (another one: write its model block "
                         "into the config, docs/transformers.md).")
    model = {"@architectures": "spacy-curated-transformers.XlmrTransformer.v1",
             "vocab_size": 250002, **XLMR_TRANSFORMERS[name],
             "piece_encoder": {
                 "@architectures": "spacy-curated-transformers.XlmrSentencepieceEncoder.v1"},
             "with_spans": {"@architectures": "spacy-curated-transformers.WithStridedSpans.v1",
                            "stride": 96, "window": 128}}
    loaders = {"piecer_loader": {"@model_loaders":
                                 "spacy-curated-transformers.HFPieceEncoderLoader.v1",
                                 "name": name},
               "encoder_loader": {"@model_loaders":
                                  "spacy-curated-transformers.HFTransformerEncoderLoader.v1",
                                  "name": name}}
    return model, loaders


# spacy-transformers' (the older package's) `transformer` component and its
# listener (mean of a word's pieces, last layer), for `transformer_pipeline`:
# `transformer_pipeline(config, spacy_transformers_model(name), {},
# *SPACY_TRANSFORMERS)`. Its model loads itself (no loaders).
SPACY_TRANSFORMERS = (
    {"factory": "transformer", "max_batch_items": 4096,
     "set_extra_annotations": {
         "@annotation_setters": "spacy-transformers.null_annotation_setter.v1"}},
    {"@architectures": "spacy-transformers.TransformerListener.v1", "grad_factor": 1.0,
     "pooling": {"@layers": "reduce_mean.v1"}, "upstream": TRANSFORMER},
)


def spacy_transformers_model(name: str, window: int = 128, stride: int = 96) -> Dict:
    """spacy-transformers' model block for the Hugging Face model `name` (a
    hub name, or a folder `save_pretrained` wrote)."""
    return {"@architectures": "spacy-transformers.TransformerModel.v3", "name": name,
            "tokenizer_config": {"use_fast": True}, "transformer_config": {},
            "mixed_precision": False, "grad_scaler_config": {},
            "get_spans": {"@span_getters": "spacy-transformers.strided_spans.v1",
                          "window": window, "stride": stride}}


def transformer_pipeline(config: Config, model: Dict, loaders: Dict,
                         component: Optional[Dict] = None,
                         listener: Optional[Dict] = None) -> Config:
    """The full pipeline `config` with a transformer (spacy-curated-
    transformers' `curated_transformer` component, `model` its model block,
    `loaders` its `[initialize.components.transformer]`) in place of the
    shared tok2vec: the morphologizer, tagger and parser read it through
    scalar-weighting listeners (each its own mix of the layers, averaged over
    a word's pieces), the tags with 0.2 of their gradient as before. The
    transformer recipe's training settings replace the BiLSTM's: Adam at
    5e-5 with a linear warm-up and decay, gradient clipping 1, batches by
    padded size. Not filled (needs the extra to fill).
    component, listener: another package's transformer component (its
    settings without the model) and listener block (SPACY_TRANSFORMERS:
    spacy-transformers', with no loaders)."""
    config = Config(config).copy()
    components = config["components"]
    if "tok2vec" not in components:
        raise ValueError("A transformer replaces the full pipeline's shared `tok2vec`.")
    del components["tok2vec"]
    if component is None:
        component = {"factory": "curated_transformer", "all_layer_outputs": True,
                     "frozen": False}
    components[TRANSFORMER] = {**component, "model": dict(model)}
    config["nlp"]["pipeline"] = [TRANSFORMER if name == "tok2vec" else name
                                 for name in config["nlp"]["pipeline"]]
    model_path = f"${{components.{TRANSFORMER}.model."
    weighted = {"@architectures": "spacy-curated-transformers.ScalarWeightingListener.v1",
                "width": model_path + "hidden_width}", "upstream": TRANSFORMER,
                "grad_factor": 1.0, "pooling": {"@layers": "reduce_mean.v1"},
                "weighting": {"@architectures": "spacy-curated-transformers.ScalarWeight.v1",
                              "num_layers": model_path + "num_hidden_layers}",
                              "dropout_prob": 0.1}}
    listener = listener or weighted

    def replace_listeners(block):
        for key, value in list(block.items()):
            if isinstance(value, dict):
                if value.get("@architectures") == "spacy.Tok2VecListener.v1":
                    block[key] = dict(listener)
                else:
                    replace_listeners(value)

    replace_listeners(components)
    config["initialize"]["before_init"] = None          # no WordEmbed vocabulary to count
    if loaders:
        config["initialize"].setdefault("components", {})[TRANSFORMER] = dict(loaders)
    training = config["training"]
    training["optimizer"] = {"@optimizers": "Adam.v1", "beta1": 0.9, "beta2": 0.999,
                             "L2_is_weight_decay": True, "L2": 0.01, "grad_clip": 1.0,
                             "use_averages": False, "eps": 1e-8,
                             "learn_rate": {"@schedules": "warmup_linear.v1",
                                            "warmup_steps": 250, "total_steps": 20000,
                                            "initial_rate": 5e-5}}
    training["logger"] = {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
    training["batcher"] = {"@batchers": "spacy.batch_by_padded.v1", "discard_oversize": True,
                           "size": 2000, "buffer": 256, "get_length": None}
    return config


def spacy_parser_pipeline(config: Config, factory: str = "parser") -> Config:
    """A nonmono_parser pipeline config with spaCy's own parser (`factory`:
    "parser" or "beam_parser") in its place: the same encoder, other
    components and training settings; the parser's settings are those of
    spacy_parser.cfg. Filled."""
    from spacy import util

    config = Config(config).copy()
    spacy_config = util.load_config(config_path("spacy_parser.cfg"), interpolate=False)
    parser = spacy_config["components"]["parser"]
    parser["factory"] = factory
    parser["model"]["tok2vec"] = config["components"].pop(COMPONENT)["model"]["tok2vec"]
    config["components"]["parser"] = parser
    config["nlp"]["pipeline"] = ["parser" if name == COMPONENT else name
                                 for name in config["nlp"]["pipeline"]]
    return fill(config)


def config_text(config: Config, header: str = "") -> str:
    """The config as text in the order of spaCy's generated configs, each
    section followed by its subsections (thinc writes all sections of one
    depth first), values written by thinc. `header` lines become comments at the top."""
    blocks = []

    def visit(path, section):
        leaves = {key: value for key, value in section.items() if not isinstance(value, dict)}
        body = Config({"s": leaves}).to_str(interpolate=False).partition("\n")[2] if leaves else ""
        blocks.append(f"[{'.'.join(path)}]\n{body}".rstrip())
        for key, value in section.items():
            if isinstance(value, dict):
                visit(path + [key], value)

    rank = {key: k for k, key in enumerate(SECTION_ORDER)}
    for key in sorted(config, key=lambda key: rank.get(key, len(rank))):
        visit([key], config[key])
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comments + ("\n" if comments else "") + "\n\n".join(blocks) + "\n"
