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
command).
"""
from pathlib import Path
from typing import Dict, Optional

from thinc.api import Config

CONFIG_DIR = Path(__file__).resolve().parent
COMPONENT = "nonmono_parser"
# Longest sentence the global decoder parses whole in the configs
# `init-config --decoding global` writes (MH4 with hybrid scores: about 0.1 s
# and 100 MB at 150 words, n^4 and n^3 beyond).
GLOBAL_MAX_SENTENCE_LENGTH = 150
# The order of spaCy's own generated configs.
# Pipelines `filled_config` starts from, by name.
PIPELINES = {"parser": "nonmono_parser.cfg", "full": "full_pipeline.cfg"}
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
    beam_width: Optional[int] = None,
    pipeline: str = "parser",
) -> Config:
    """A packaged config with these settings of the nonmono_parser
    component, filled: `pipeline` "parser" (nonmono_parser.cfg: the component
    alone) or "full" (full_pipeline.cfg). None leaves the config's setting;
    decoding "global" also puts in the global model (and the system `mh4`
    unless another is given), greedy or beam decoding of the full pipeline
    the step model, on the shared encoder."""
    from spacy import util

    if pipeline not in PIPELINES:
        raise ValueError(f"Unknown pipeline {pipeline!r}: expected one of "
                         f"{', '.join(repr(p) for p in PIPELINES)}.")
    config = util.load_config(config_path(PIPELINES[pipeline]), interpolate=False)
    settings = {"system": system, "oracle": oracle, "projectivize": projectivize,
                "system_options": system_options, "decoding": decoding,
                "beam_width": beam_width}
    component = config["components"][COMPONENT]
    if pipeline == "full":
        if decoding in ("greedy", "beam"):
            # nonmono_parser.cfg's step model and length guard, on the shared encoder.
            alone = util.load_config(config_path("nonmono_parser.cfg"),
                                     interpolate=False)["components"][COMPONENT]
            alone["model"]["tok2vec"] = component["model"]["tok2vec"]
            component["model"] = alone["model"]
            component["max_sentence_length"] = alone["max_sentence_length"]
        settings["system"] = system or ("mh4" if decoding in (None, "global") else "covington_nm")
    elif decoding == "global":
        from ..models.global_model import DEFAULT_CONFIG

        component["model"] = Config().from_str(DEFAULT_CONFIG)["model"]
        settings["system"] = system or "mh4"
        # The MH4 chart's length guard (docs/results/mh4/charts.md): longer
        # sentences are parsed in windows and skipped in training.
        component["max_sentence_length"] = GLOBAL_MAX_SENTENCE_LENGTH
    component.update({key: value for key, value in settings.items() if value is not None})
    if lang is not None:
        config["nlp"]["lang"] = lang
    return fill(config)


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
