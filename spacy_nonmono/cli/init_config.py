"""`init-config OUTPUT.cfg`: a filled training config for the nonmono_parser
component with the system, oracle, system options and language you choose
(the packaged configs/nonmono_parser.cfg with those settings), ready for
`spacy train OUTPUT.cfg --paths.train ... --paths.dev ...`. Use "-" to print
it. Every setting is checked the way the component checks it, so a bad name
or option is an error here, not after training starts.

Example:
  spacy-nonmono init-config la.cfg --lang la --system arc_eager_unshift
  spacy-nonmono init-config nm.cfg --system covington_nm --option loss=pc_upper
  spacy-nonmono init-config mh4.cfg --decoding global --lang got
  spacy-nonmono init-config beam.cfg --system arc_eager_unshift --decoding beam
  spacy-nonmono init-config full.cfg --pipeline full --lang la --vectors vectors/la
  spacy-nonmono init-config full.cfg --pipeline full --lang la --vectors vectors/la \
      --pretraining
  spacy-nonmono init-config full.cfg --pipeline full --lang en --tokenizer treebank
"""
import json
import sys
from pathlib import Path

from ..configs import SENTERS, XLMR_TRANSFORMERS
from ..files import write_text_atomic
from .common import InputError, RawHelpFormatter, check_output_path


def add_parser(commands) -> None:
    p = commands.add_parser(
        "init-config",
        help="Write a filled training config for a chosen system, oracle and language.",
        description=__doc__,
        formatter_class=RawHelpFormatter,
    )
    p.add_argument("output", help='Config file to write ("-": standard output)')
    p.add_argument("--system", default=None,
                   help="Transition system (default: the component's, covington_nm)")
    p.add_argument("--oracle", default=None,
                   help="Training oracle (default: the system's, see docs/configuration.md)")
    p.add_argument("--lang", default=None,
                   help='Language code of the pipeline (nlp.lang; default "xx", multi-language)')
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="A system option (repeatable), e.g. loss=pc_upper or "
                   "no_arc_weight=0.9; VALUE is read as JSON, else as a string")
    p.add_argument("--decoding", default=None,
                   help="greedy (default), beam (beam search over the system, trained "
                   "globally) or global: exact decoding of mh3, mh4 or mst, with the global "
                   "model (a BiLSTM encoder; system mh4 unless --system says); the config "
                   "gets the decoder's default model")
    p.add_argument("--decoding-option", action="append", default=[], metavar="KEY=VALUE",
                   help="A setting of the decoder (repeatable), e.g. width=16 for beam; "
                   "VALUE is read as JSON, else as a string")
    p.add_argument("--pipeline", default="parser", choices=("parser", "full", "transformer"),
                   help="parser: the component alone (configs/nonmono_parser.cfg); full: the "
                   "full-strength pipeline (configs/full_pipeline.cfg: shared encoder with "
                   "words and characters, morphologizer, tagger, senter; global MH4 unless "
                   "--decoding/--system say otherwise); transformer: the full pipeline with "
                   "a pretrained transformer (--transformer) in place of its encoder (needs "
                   "`pip install \"spacy-nonmono[transformers]\"`; docs/transformers.md)")
    p.add_argument("--transformer", default=None, choices=sorted(XLMR_TRANSFORMERS),
                   help="--pipeline transformer: the transformer, fetched from the Hugging "
                   "Face hub when the pipeline is initialized (default: xlm-roberta-base)")
    p.add_argument("--projectivize", default=None, choices=("pseudo", "optimal", "none"),
                   help="Projective systems: how they learn from non-projective trees "
                   "(default: pseudo)")
    p.add_argument("--vectors", default=None, metavar="PATH",
                   help="A pipeline folder with static vectors of the pipeline's language "
                   "(made by `spacy init vectors LANG VECTORS_FILE PATH`, floret vectors too): "
                   "loaded at initialization (paths.vectors) and read by every encoder of the "
                   "pipeline, frozen (default: no vectors)")
    p.add_argument("--pretraining", action="store_true",
                   help="Full pipeline: add the settings of `spacy pretrain` (one pass of a "
                   "masked-word objective over raw text, paths.raw_text: one tokenized "
                   "sentence a line), so that `spacy pretrain CONFIG DIR` pretrains the shared "
                   "encoder and `spacy train CONFIG --paths.init_tok2vec DIR/model-last.bin` "
                   "starts from it")
    p.add_argument("--tokenizer", default="language", choices=("language", "treebank"),
                   help="language: spaCy's tokenizer of --lang; treebank: one "
                   "learned at initialization from the training treebank, on top of spaCy's "
                   "rules of the pipeline's language (spacy_nonmono.TreebankTokenizer.v1; "
                   "set paths.train_conllu to the training CoNLL-U file: "
                   "docs/configuration.md#a-tokenizer-learned-from-the-treebank)")
    p.add_argument("--tag-input", action="store_true",
                   help="Full pipeline: the parser reads the morphologizer's and tagger's "
                   "predicted UPOS, FEATS and XPOS, embedded beside each word's vector "
                   "(spacy_nonmono.TagInput.v1; in training the taggers annotate the training "
                   "docs: [training] annotating_components)")
    p.add_argument("--xpos", default="whole", choices=("whole", "positional", "none"),
                   help="Full pipeline: the XPOS tagger. whole: spaCy's tagger (whole tags); "
                   "positional: one softmax per position of a positional tag (Latin, Czech: "
                   "nonmono_positional_tagger); none: the treebank has no XPOS column (all "
                   "`_`): no tagger, XPOS written `_`")
    p.add_argument("--tagger-layer", default="none", choices=("none", "bilstm"),
                   help="Full pipeline: none: the taggers' softmaxes read the shared "
                   "encoder; bilstm: each tagger has a BiLSTM layer of its own between them "
                   "(spacy_nonmono.BiLSTMEncoder.v1 over the listener)")
    p.add_argument("--senter", default="cnn", choices=tuple(SENTERS),
                   help="Full pipeline: the sentence splitter's model. cnn: spaCy's senter "
                   "(a CNN that sees two words each side); bilstm: a BiLSTM of its own over "
                   "the whole text, across sentences, with characters for every word; shared: "
                   "on the shared encoder, which then reads the whole text (for text whose "
                   "punctuation does not mark sentences: docs/sentences.md); syntax: the "
                   "best analysis of the whole text into sentences, each a tree under "
                   "first-order head scores on the shared encoder; break: a greedy "
                   "arc-eager parser with a Break move over the whole text, on the shared "
                   "encoder, whose trees decide the sentences")
    p.add_argument("--add-marks", type=float, default=0.0, metavar="SHARE",
                   help="Train with this share of the training docs rewritten with a full "
                   "stop closing every sentence: for a treebank without punctuation whose "
                   "pipeline will read punctuated text (spacy_nonmono.punctuation_augmenter.v1)")
    p.add_argument("--remove-punctuation", type=float, default=0.0, metavar="SHARE",
                   help="Train with this share of the training docs without their "
                   "punctuation: for text that may lack it")
    p.set_defaults(run=run)


def parse_option(text: str):
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise InputError(f"--option takes KEY=VALUE, not {text!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def run(args) -> int:
    from ..configs import config_text, filled_config, vectors_problem

    output = None if args.output == "-" else Path(args.output)
    if output is not None:
        check_output_path(output, "OUTPUT")
    options = dict(parse_option(text) for text in args.option)
    if args.vectors is not None:
        problem = vectors_problem(args.vectors, args.lang or "xx")
        if problem:
            raise InputError(f"--vectors {problem}")
    try:
        config = filled_config(system=args.system, oracle=args.oracle, lang=args.lang,
                               system_options=options or None, projectivize=args.projectivize,
                               decoding=args.decoding,
                               decoding_options=dict(parse_option(text)
                                                     for text in args.decoding_option) or None,
                               pipeline=args.pipeline, vectors=args.vectors,
                               pretraining=args.pretraining, transformer=args.transformer,
                               tokenizer=args.tokenizer, tag_input=args.tag_input,
                               xpos=args.xpos, senter=args.senter, add_marks=args.add_marks,
                               remove_punctuation=args.remove_punctuation,
                               tagger_layer=args.tagger_layer)
    except Exception as e:   # the component's ValueErrors, spaCy's config and language errors
        message = " ".join(str(e).split())
        raise InputError(f"cannot make this config: {message}") from None
    settings = config["components"]["nonmono_parser"]
    treebank = args.tokenizer == "treebank"
    header = (f"pipeline {', '.join(config['nlp']['pipeline'])}; "
              f"nonmono_parser: system {settings['system']!r}, decoding "
              f"{settings['decoding']!r}, oracle {settings['oracle']!r}, "
              f"system_options {dict(settings['system_options'])!r}, "
              f"static vectors {config['paths']['vectors']!r}"
              f"{', pretraining settings' if args.pretraining else ''}"
              f"{', tokenizer learned from paths.train_conllu' if treebank else ''}, made by "
              f"`spacy-nonmono init-config`.\n"
              "Train: spacy train CONFIG --output DIR --paths.train TRAIN.spacy "
              "--paths.dev DEV.spacy"
              f"{' --paths.train_conllu TRAIN.conllu' if treebank else ''}")
    text = config_text(config, header)
    if output is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(output, text)
        print(f"Wrote {output}", file=sys.stderr)
    return 0
