"""Workflow system names: what `<system>[-<oracle>][+<variant>]...` (and
`spacy_parser`, `udpipe`, ensembles `A&B[@structure]`) trains, and the
training config each name gets. `workflow/` runs the steps over them;
docs/results/README.md lists the names.
"""
import json
from pathlib import Path
from typing import Dict, NamedTuple, Optional, Tuple

from spacy_nonmono.cli.common import InputError
from spacy_nonmono.configs import punctuation_augmenter_section

# Variant name -> settings merged onto the component's defaults by
# "<system>+<variant>" (left to right): system options, except the component
# settings of COMPONENT_SETTINGS. Why each exists, and what it measured:
# docs/results/README.md.
VARIANTS: Dict[str, Dict[str, object]] = {
    # Covington: scan exploration (training follows No-Arc at the Shift/No-Arc
    # tie with this probability; "shift": replacing only Shift).
    "scan0": {"scan_explore_prob": 0.0},
    "scan75": {"scan_explore_prob": 0.75},
    "scan75shift": {"scan_explore_prob": 0.75, "scan_explore_replaces": "shift"},
    "scan100": {"scan_explore_prob": 1.0},
    # Covington: the training target at the Shift/No-Arc tie ("none": both,
    # the full scan).
    "none": {"tie_break": "none"},
    "shift": {"tie_break": "shift"},
    "shift_if_headed": {"tie_break": "shift_if_headed"},
    "weighted25": {"tie_break": "weighted", "no_arc_weight": 0.25},
    "weighted75": {"tie_break": "weighted", "no_arc_weight": 0.75},
    "weighted90": {"tie_break": "weighted", "no_arc_weight": 0.9},
    "weighted95": {"tie_break": "weighted", "no_arc_weight": 0.95},
    # covington_nm: the target for moves that replace a wrong arc by another
    # ("none": all zero-cost moves, the full target).
    "monotonic": {"replace_tie_break": "monotonic"},
    "replace50": {"replace_tie_break": "weighted", "replace_weight": 0.5},
    "replace75": {"replace_tie_break": "weighted", "replace_weight": 0.75},
    "replace_none": {"replace_tie_break": "none"},
    # covington_nm: the loss expression of the dynamic oracle.
    "lower": {"loss": "lower"},
    "pc_upper": {"loss": "pc_upper"},
    "upper": {"loss": "upper"},
    # swap_stay_eager: the 13-slot context.
    "wide": {"context": "wide"},
    # Half the training states follow the oracle (its default is 0.1).
    "follow50": {"follow_oracle_prob": 0.5},
    # Projective systems: train on optimally projectivized trees, on the
    # original trees, or on spaCy's pseudo-projective lifting (the default
    # but for arc_standard's optimal step, whose default is the original trees).
    "proj_optimal": {"projectivize": "optimal"},
    "proj_none": {"projectivize": "none"},
    "proj_pseudo": {"projectivize": "pseudo"},
    # Exact decoding (mh3, mh4 charts; mst) with the global model, whose
    # encoder is a BiLSTM on the CNN tok2vec (models/global_model.py).
    "global": {"decoding": "global"},
    # Beam search over the transition system, trained globally, with the
    # component's beam settings (spaCy's beam_parser's: width 8, density
    # 0.0001, half the updates beam updates). spacy_parser+beam is spaCy's
    # beam_parser with the same settings.
    "beam": {"decoding": "beam"},
    # After +beam: every training batch a beam update (the default mixes half
    # greedy updates in, as spaCy's beam_parser does).
    "beam_every": {"decoding_options.update_prob": 1.0},
    # After +beam: the beam update at the first step the gold histories fall
    # out of the beam (early update) instead of at the maximum violation.
    "early": {"decoding_options.update": "early"},
    # After +global: pruned exact decoding (docs/results/pruning/): each word
    # keeps its 4 likeliest heads within a margin of 5 under first-order
    # scores (a chart model trains a pruner for them).
    "prune": {"decoding_options.prune_heads": 4, "decoding_options.prune_margin": 5.0},
}
# The global decoder's settings that +prune sets.
PRUNING_SETTINGS = ("decoding_options.prune_heads", "decoding_options.prune_margin")
# Settings of the component (not system options) that variants may set.
COMPONENT_SETTINGS = ("follow_oracle_prob", "decoding", "projectivize",
                      "decoding_options.update_prob", "decoding_options.update",
                      *PRUNING_SETTINGS)
# Variants that change the model: "bilstm" puts the global model's BiLSTM on
# the tok2vec of a greedy parser (ours or spaCy's), so that comparisons keep
# one encoder; "two" scores the charts' reduce transitions from {s0, b0};
# "full" trains the parser in the full-strength pipeline (full_pipeline.cfg:
# shared encoder, auxiliary taggers, senter, schedule), spaCy's parser too;
# "biaffine" scores arcs and labels of the global model biaffinely.
# After +full, settings of the full pipeline (docs/results/full_pipeline/).
# The ablation: each takes one ingredient of the recipe out (the taggers'
# gradient on the shared encoder, the character encoder, the vocabulary
# embeddings, every dropout of the encoder, the learning-rate decay, the
# dropout on the vectors the global model's scorers read). Levers: the paper's
# batches of about 100 words; weight dropout 0.2 or 0.3 inside the BiLSTM;
# the paper's LSTM dropout on the previous hidden state (0.3, one mask per
# sequence);
# dropout 0.3 on the vectors our greedy model reads (as the global model's);
# parameter averaging (thinc's moving average, used to evaluate and save).
# Config paths -> values.
ENCODER = "components.tok2vec.model"
# What +full changes in the shipped full pipeline (init-config --pipeline
# full): the encoder's weight dropout, and our greedy model's dropout on the
# token vectors, are off, as in the runs that the results pages compare
# (their records keep their names). The shipped configs are +full+lstmdrop
# (global, spaCy's parser) and +full+lstmdrop+mlpdrop (greedy, beam).
FULL_BASE: Dict[str, object] = {f"{ENCODER}.dropout": 0.0}
FULL_BASE_GREEDY: Dict[str, object] = {"components.nonmono_parser.model.dropout": 0.0}
FULL_VARIANTS: Dict[str, Dict[str, object]] = {
    "notags": {"components.morphologizer.model.tok2vec.scale": 0.0,
               "components.tagger.model.tok2vec.scale": 0.0},
    "nochars": {f"{ENCODER}.tok2vec.chars": None},
    "novocab": {f"{ENCODER}.tok2vec.vocabulary": False},
    "nodropout": {f"{ENCODER}.layer_dropout": 0.0, f"{ENCODER}.tok2vec.word_dropout": 0.0,
                  f"{ENCODER}.tok2vec.token_dropout": 0.0,
                  f"{ENCODER}.tok2vec.chars.dropout": 0.0},
    "constlr": {"training.optimizer.learn_rate.max_decays": 0},
    "nomlpdrop": {"components.nonmono_parser.model.dropout": 0.0},
    "batch100": {"training.batcher.size": 100},
    "lstmdrop": {f"{ENCODER}.dropout": 0.2},
    "lstmdrop3": {f"{ENCODER}.dropout": 0.3},
    "hdrop": {f"{ENCODER}.recurrent_dropout": 0.3},
    "mlpdrop": {"components.nonmono_parser.model.dropout": 0.3},
    "avg": {"training.optimizer.use_averages": True},
    # The CoNLL 2017-2018 winners' levers (docs/results/winners_recipe/):
    # characters for every word, summed with its row or beside it; the
    # taggers' gradient at full weight on the shared encoder; their label
    # smoothing (UDPipe 2's 0.03); a row for every form seen twice (Dozat et
    # al.); a third BiLSTM layer; a wider one (192 units per direction).
    "charsum": {f"{ENCODER}.tok2vec.combine": "sum"},
    "charcat": {f"{ENCODER}.tok2vec.combine": "concat"},
    "tagloss": {"components.morphologizer.model.tok2vec.scale": 1.0,
                "components.tagger.model.tok2vec.scale": 1.0},
    "smooth": {"components.morphologizer.label_smoothing": 0.03,
               "components.tagger.label_smoothing": 0.03},
    "minfreq2": {f"{ENCODER}.tok2vec.min_freq": 2},
    "deep": {f"{ENCODER}.depth": 3},
    # A leaner encoder (docs/results/pruning/): the character LSTM with one
    # layer (as Dozat et al.'s and UDPipe 2's), half its cost.
    "chardepth1": {f"{ENCODER}.tok2vec.chars.depth": 1},
    "width384": {f"{ENCODER}.width": 384},
    # Training text with a full stop closing every sentence of 20% of the
    # docs (`init-config --add-marks 0.2`; docs/results/sentences/): a
    # pipeline of an unpunctuated treebank that reads punctuation where a
    # text has it.
    "marks20": {"corpora.train.augmenter": punctuation_augmenter_section(add=0.2)},
}
# After +full: the XPOS tagger predicts each position of the tag
# (`configs.positional_xpos`).
XPOS_POSITIONS = "xpospos"
# After +full: every encoder of the pipeline reads static vectors
# (`init-config --vectors`), those of --vectors-dir/<treebank>.
VECTORS = "vectors"
# After +full: the shared encoder starts from `spacy pretrain` weights, one
# pass over a sample of --pretrain-words words of --raw-text-dir/<treebank>.txt
# (`configs.add_pretraining`); one pretraining per treebank and encoder,
# which every seed and parser on that encoder starts from.
PRETRAIN = "pretrain"
# After +full: the parser reads the taggers' predicted tags (`configs.add_tag_input`).
TAGS_IN = "tagsin"
# After +full: each tagger has a BiLSTM layer of its own (`configs.tagger_layers`);
# +taglayer0: the same without its dropout.
TAGGER_LAYER = "taglayer"
TAGGER_LAYER_NO_DROPOUT = "taglayer0"
# After +full: the senter reads the text with a BiLSTM of its own, or the shared
# encoder over the whole text (`init-config --senter`: `configs.SENTERS`).
SENTER_VARIANTS = {"bilstmsenter": "bilstm", "sharedsenter": "shared",
                   "syntaxsenter": "syntax", "breaksenter": "break"}
# The model variants that set the full pipeline's components (after +full).
COMPONENT_VARIANTS = (TAGS_IN, XPOS_POSITIONS, TAGGER_LAYER, TAGGER_LAYER_NO_DROPOUT,
                      *SENTER_VARIANTS)
MODEL_VARIANTS = ("bilstm", "two", "full", "biaffine", VECTORS, PRETRAIN, *COMPONENT_VARIANTS) + \
    tuple(FULL_VARIANTS)
GLOBAL_MODEL_VARIANTS = ("nomlpdrop",)   # FULL_VARIANTS of the global model
GREEDY_MODEL_VARIANTS = ("mlpdrop",)     # FULL_VARIANTS of our greedy model
SPACY_PARSER = "spacy_parser"
UDPIPE = "udpipe"
# "A&B&...": the ensemble (`nonmono_ensemble`) of the trained runs A, B, ...
# of the same seed, built by the train step from their models; a member
# "A.seed<k>" is seed k's run whatever the ensemble's seed ("A&A.seed1&A.seed2":
# three seeds of one system); "A&B&...@S" reparses its votes with the
# arc-factored structure S (default mst).
ENSEMBLE = "&"
REPARSE = "@"


def run_name(system: str, seed: int) -> str:
    """The name of one training run: the system's for seed 0 (the layout of
    single-seed runs), "<system>.seed<k>" for seed k."""
    return system if seed == 0 else f"{system}.seed{seed}"


def member_run(member: str, seed: int) -> str:
    """The run an ensemble member names: "A.seed<k>" is seed k's run of A,
    "A" the ensemble's seed's."""
    system, _, fixed = member.rpartition(".seed")
    return member if system and fixed.isdigit() else run_name(member, seed)


class SystemSpec(NamedTuple):
    """What a workflow system name trains."""
    system: Optional[str]                # system or structure; None: spacy_parser, udpipe
    oracle: Optional[str] = None         # None: the system's default oracle
    options: Dict[str, object] = {}      # system options over the system's defaults
    settings: Dict[str, object] = {}     # component settings (COMPONENT_SETTINGS)
    model: Tuple[str, ...] = ()          # MODEL_VARIANTS, in order
    members: Tuple[str, ...] = ()        # an ensemble's member systems
    structure: str = "mst"               # the structure an ensemble reparses with


def parse_system(name: str) -> SystemSpec:
    """Read and check a workflow system name: `spacy_parser[+bilstm]`,
    `udpipe`, `<system>[-<oracle>][+<variant>]...` or an ensemble
    `A&B&...[@structure]`. The system is a
    registered transition system (or, with +global, a structure of the
    global decoder: mh3, mh4, mst, mh4_arcs), the oracle one of its oracles other than
    its default (left out: the default), and each variant of VARIANTS merges
    its settings onto the component's defaults, left to right; MODEL_VARIANTS
    change the model. The decoder checks the system, oracle and options.
    Anything else is an InputError saying which part is wrong."""
    from spacy_nonmono.pipeline.sentences import resolve_projectivize
    from spacy_nonmono.decoders import get_decoder
    from spacy_nonmono.registry import systems

    def wrong(why: str) -> InputError:
        return InputError(f"unknown system name {name!r}: {why}")

    if REPARSE in name and ENSEMBLE not in name:
        raise wrong(f"{REPARSE} names the structure of an ensemble: "
                    f"{ENSEMBLE.join(['A', 'B'])}{REPARSE}<structure>")
    if ENSEMBLE in name:
        joined, _, structure = name.partition(REPARSE)
        members = tuple(joined.split(ENSEMBLE))
        for member in members:
            if not member or member == UDPIPE:
                raise wrong(f"an ensemble {ENSEMBLE.join(['A', 'B'])} joins trained "
                            "pipelines, not " + (repr(member) if member else "an empty name"))
            system, _, fixed = member.rpartition(".seed")
            try:
                parse_system(system if system and fixed.isdigit() else member)
            except InputError as error:
                raise wrong(str(error)) from None
        if REPARSE in name:
            from spacy_nonmono.pipeline.ensemble import arc_structure

            try:
                arc_structure(structure)
            except ValueError as error:
                raise wrong(str(error)) from None
        return SystemSpec(None, members=members, structure=structure or "mst")

    head, *variants = name.split("+")
    if head in (SPACY_PARSER, UDPIPE):
        if head == SPACY_PARSER and (variants in ([], ["bilstm"]) or (
                variants[:1] == ["full"]
                and set(variants[1:]) <= set(FULL_VARIANTS) - set(GLOBAL_MODEL_VARIANTS)
                - set(GREEDY_MODEL_VARIANTS) | {VECTORS, PRETRAIN, *COMPONENT_VARIANTS})):
            return SystemSpec(None, model=tuple(variants))
        if head == SPACY_PARSER and variants in (["beam"], ["full", "beam"]):
            return SystemSpec(None, settings=VARIANTS["beam"], model=tuple(variants[:-1]))
        if not variants:
            return SystemSpec(None)
        raise wrong(f"{head} takes no variant but {SPACY_PARSER}+bilstm, "
                    f"{SPACY_PARSER}+full and {SPACY_PARSER}[+full]+beam")
    system, dash, oracle = head.partition("-")
    settings: Dict[str, object] = {}
    model = []
    for variant in variants:
        if variant in MODEL_VARIANTS:
            model.append(variant)
        elif variant in VARIANTS:
            settings.update(VARIANTS[variant])
        else:
            raise wrong(f"no variant {variant!r}; the variants: "
                        f"{', '.join(list(VARIANTS) + list(MODEL_VARIANTS))}")
    decoding = settings.get("decoding", "greedy")
    if "two" in model and decoding != "global":
        raise wrong("+two is a feature set of the global model: add +global first")
    if "bilstm" in model and (decoding == "global" or "full" in model):
        raise wrong("+global's and +full's models have their BiLSTM already")
    for variant in ("biaffine",) + GLOBAL_MODEL_VARIANTS:
        if variant in model and decoding != "global":
            raise wrong(f"+{variant} sets the global model: add +global first")
    for variant in GREEDY_MODEL_VARIANTS:
        if variant in model and decoding == "global":
            raise wrong(f"+{variant} sets the greedy model; the global model's is +nomlpdrop")
    ablated = [v for v in model if v in FULL_VARIANTS]
    if ablated and "full" not in model[:model.index(ablated[0])]:
        raise wrong(f"+{ablated[0]} takes an ingredient out of the full pipeline: add +full first")
    if VECTORS in model and "full" not in model[:model.index(VECTORS)]:
        raise wrong(f"+{VECTORS} gives the full pipeline's encoders static vectors: "
                    "add +full first")
    if PRETRAIN in model and "full" not in model[:model.index(PRETRAIN)]:
        raise wrong(f"+{PRETRAIN} pretrains the full pipeline's shared encoder: add +full first")
    for variant in COMPONENT_VARIANTS:
        if variant in model and "full" not in model[:model.index(variant)]:
            raise wrong(f"+{variant} sets the full pipeline's components: add +full first")
    beam_training = [v for v in variants
                     if any(k.startswith("decoding_options.") and k not in PRUNING_SETTINGS
                            for k in VARIANTS.get(v, ()))]
    if beam_training and decoding != "beam":
        raise wrong(f"+{beam_training[0]} sets how the beam trains: add +beam first")
    if "prune" in variants and decoding != "global":
        raise wrong("+prune prunes exact decoding: add +global first")
    options = {k: v for k, v in settings.items() if k not in COMPONENT_SETTINGS}
    decoder = get_decoder(decoding)()
    try:
        default_oracle = decoder.default_oracle(decoder.build_system(system, [], None, {}))
    except ValueError as e:
        raise wrong(f"{e} A name is {SPACY_PARSER}, {UDPIPE} or "
                    f"<system>[-<oracle>][+<variant>]... with a system of "
                    f"{', '.join(sorted(systems.get_all()))} (and mst with +global)") from None
    if dash and oracle == default_oracle:
        raise wrong(f"{oracle!r} is {system}'s default oracle: leave it out "
                    f"({name.replace(head, system, 1)!r}); docs/results/README.md translates "
                    "the names of earlier notes")
    try:
        built = decoder.build_system(system, [], oracle or None, options)
        resolve_projectivize(built, settings.get("projectivize"))
    except ValueError as e:
        raise wrong(f"{'+'.join([head] + variants)}: {e}") from None
    return SystemSpec(system, oracle or None, options,
                      {k: v for k, v in settings.items() if k in COMPONENT_SETTINGS}, tuple(model))


def training_config(name: str, out_dir: Optional[Path] = None) -> Tuple[str, Dict[str, str]]:
    """The config (in --configs) and `spacy train` overrides that train a
    workflow system (not udpipe). A +full system's config is written to
    `out_dir` (its absolute path returned)."""
    from thinc.api import Config

    from spacy_nonmono.models.global_model import BILSTM_CONFIG, DEFAULT_CONFIG

    spec = parse_system(name)
    if "full" in spec.model:
        return str(full_pipeline_config(spec, name, out_dir)), {}
    bilstm = Config().from_str(BILSTM_CONFIG)["tok2vec"]
    if spec.system is None:
        if spec.settings.get("decoding") == "beam":
            return "spacy_parser.cfg", {"components.parser.factory": "beam_parser"}
        return "spacy_parser.cfg", ({"components.parser.model.tok2vec": json.dumps(bilstm)}
                                    if "bilstm" in spec.model else {})
    key = "components.nonmono_parser."
    overrides = {key + "system": spec.system}
    if spec.oracle:
        overrides[key + "oracle"] = spec.oracle
    if spec.options:
        overrides[key + "system_options"] = json.dumps(spec.options)
    overrides.update({key + k: json.dumps(v) for k, v in spec.settings.items()})
    if spec.settings.get("decoding") == "global":
        overrides[key + "model"] = json.dumps(Config().from_str(DEFAULT_CONFIG)["model"])
    if "two" in spec.model:
        overrides[key + "model.features"] = json.dumps("two")
    if "biaffine" in spec.model:
        overrides[key + "model.scorer"] = json.dumps("biaffine")
    if "bilstm" in spec.model:
        overrides[key + "model.tok2vec"] = json.dumps(bilstm)
    return "nonmono_parser.cfg", overrides


def full_pipeline_config(spec: SystemSpec, name: str, out_dir: Optional[Path]) -> Path:
    """Write the full pipeline's config for a +full system to out_dir/<name>.cfg."""
    from spacy_nonmono.configs import (SENTERS, add_pretraining, add_tag_input, config_text,
                                       filled_config, positional_xpos, read_static_vectors,
                                       spacy_parser_pipeline, tagger_layers)

    if out_dir is None:
        raise InputError(f"{name}: a +full system's config is written to a folder; none given")
    if spec.system is None:
        config = spacy_parser_pipeline(
            filled_config(pipeline="full"),
            factory="beam_parser" if spec.settings.get("decoding") == "beam" else "parser")
    else:
        config = filled_config(pipeline="full", system=spec.system, oracle=spec.oracle,
                               system_options=spec.options or None,
                               decoding=spec.settings.get("decoding", "greedy"),
                               projectivize=spec.settings.get("projectivize"))
        component = config["components"]["nonmono_parser"]
        for setting, value in spec.settings.items():
            if setting not in ("decoding", "projectivize"):
                *sections, key = setting.split(".")
                section = component
                for part in sections:
                    section = section[part]
                section[key] = value
        if "two" in spec.model:
            component["model"]["features"] = "two"
        if "biaffine" in spec.model:
            component["model"]["scorer"] = "biaffine"
    for variant, senter in SENTER_VARIANTS.items():
        if variant in spec.model:
            SENTERS[senter](config)
    if VECTORS in spec.model:
        read_static_vectors(config)    # the vectors themselves: --paths.vectors at training
    greedy = spec.system is not None and spec.settings.get("decoding", "greedy") != "global"
    for variant in spec.model:
        settings = FULL_VARIANTS.get(variant, {})
        if variant == "full":
            settings = {**FULL_BASE, **(FULL_BASE_GREEDY if greedy else {})}
        for setting, value in settings.items():
            *sections, key = setting.split(".")
            section = config
            for part in sections:
                section = section[part]
            section[key] = value
    if XPOS_POSITIONS in spec.model:
        positional_xpos(config)
    if TAGGER_LAYER in spec.model:
        tagger_layers(config)
    if TAGGER_LAYER_NO_DROPOUT in spec.model:
        tagger_layers(config, dropout=0.0, layer_dropout=0.0)
    if TAGS_IN in spec.model:
        add_tag_input(config)
    if PRETRAIN in spec.model:
        add_pretraining(config)    # after the encoder's variants: its objective reads them
    out_dir.mkdir(parents=True, exist_ok=True)
    path = (out_dir / f"{name}.cfg").resolve()
    path.write_text(config_text(config, f"{name}: made by the workflow"), encoding="utf8")
    return path


def system_name(system: str) -> Optional[str]:
    """The transition system a workflow system trains (None: not ours)."""
    return parse_system(system).system


def is_udpipe(run: str) -> bool:
    return run.partition(".seed")[0] == UDPIPE
