"""`train-speed`: what a training step costs each system, side by side.

Builds each workflow system (`spacy_parser`, `arc_standard-static`,
`arc_standard+proj_none`, ... as `workflow` names them, from the shipped
configs) on the same training corpus, then times `nlp.update` on the same
batches of --batch-size docs for --steps steps, the systems taking turns
at every step so that the machine's load falls on all alike (one thread).
Reports seconds, milliseconds per training word and the ratio to the first
system: the cost of an oracle, an encoder or a decoder in training. Model
initialization is not timed.
"""
import json
import random
import time
from pathlib import Path
from typing import Optional

from spacy_nonmono.cli.common import HelpFormatter, InputError, check_output_paths


def add_parser(commands) -> None:
    p = commands.add_parser("train-speed", help="Seconds per training step of workflow systems, "
                            "timed side by side on the same batches.",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("corpus", type=Path, help="Training corpus (.spacy, e.g. the workflow's "
                   "corpus/<treebank>/train.spacy)")
    p.add_argument("--systems", required=True,
                   help="Comma-separated workflow system names; the first is the baseline")
    p.add_argument("--lang", default="xx", help="Language of the pipelines")
    p.add_argument("--steps", type=int, default=50, help="Timed training steps per system")
    p.add_argument("--batch-size", type=int, default=32,
                   help="Docs per step (a workflow corpus's docs hold several sentences)")
    p.add_argument("--seed", type=int, default=0, help="Seed of the sentence order and models")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.set_defaults(run=run)


def build(name: str, lang: str, seed: int, corpus: Optional[Path] = None):
    """A blank pipeline of workflow system `name`, from the shipped configs
    (a +full system's config written to a temporary folder; its vocabulary
    counted from `corpus` when it is initialized)."""
    import tempfile

    from spacy import util

    from benchmarks.system_names import training_config
    from spacy_nonmono.configs import CONFIG_DIR

    with tempfile.TemporaryDirectory() as folder:
        config_name, overrides = training_config(name, Path(folder))
        # As `spacy train` reads command-line overrides: JSON, else a string.
        overrides = {key: _value(text) for key, text in overrides.items()}
        overrides.update({"nlp.lang": lang, "paths.train": str(corpus) if corpus else None,
                          "paths.dev": None, "system.seed": seed})
        config = util.load_config(CONFIG_DIR / config_name, overrides=overrides,
                                  interpolate=False)
    util.fix_random_seed(seed)
    return util.load_model_from_config(config, auto_fill=True, validate=True)


def training_docs(corpus: Path, lang: str, seed: int, needed: int):
    """`needed` docs of the corpus in a seeded order, repeated as needed."""
    import spacy
    from spacy.tokens import DocBin

    docs = list(DocBin().from_disk(corpus).get_docs(spacy.blank(lang).vocab))
    random.Random(seed).shuffle(docs)
    return (docs * (needed // max(1, len(docs)) + 1))[:needed]


def check_arguments(args) -> list:
    """The system names of --systems, every argument checked."""
    import spacy

    from benchmarks.system_names import parse_system

    names = [name.strip() for name in args.systems.split(",") if name.strip()]
    if not names:
        raise InputError("--systems names no system")
    for name in names:
        parse_system(name)
    if args.steps < 1 or args.batch_size < 1:
        raise InputError("--steps and --batch-size must be positive")
    if not args.corpus.is_file() or args.corpus.suffix != ".spacy":
        raise InputError(f"{args.corpus}: not a .spacy corpus file")
    try:
        spacy.util.get_lang_class(args.lang)
    except ImportError:
        raise InputError(f"--lang {args.lang!r}: not a spaCy language code (use 'xx' for any)")
    return names


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def run(args) -> int:
    from spacy.training import Example

    names = check_arguments(args)
    check_output_paths({"--json": args.json}, inputs=[args.corpus])
    docs = training_docs(args.corpus, args.lang, args.seed, args.steps * args.batch_size)
    pipelines = []
    for name in names:
        nlp = build(name, args.lang, args.seed, args.corpus)
        examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
        optimizer = nlp.initialize(lambda: examples[:500])
        pipelines.append((name, nlp, optimizer, examples))
    seconds = {name: 0.0 for name in names}
    for step in range(args.steps):
        batch = slice(step * args.batch_size, (step + 1) * args.batch_size)
        for name, nlp, optimizer, examples in pipelines:
            start = time.perf_counter()
            nlp.update(examples[batch], sgd=optimizer)
            seconds[name] += time.perf_counter() - start
    words = sum(len(doc) for doc in docs)
    rows = [{"system": name, "seconds": round(seconds[name], 3),
             "ms_per_word": round(1000 * seconds[name] / words, 4),
             "ratio": round(seconds[name] / seconds[names[0]], 3)} for name in names]
    if args.json:
        args.json.write_text(json.dumps({"corpus": str(args.corpus), "steps": args.steps,
                                         "batch_size": args.batch_size, "words": words,
                                         "systems": rows}, indent=2) + "\n")
    print(f"{args.corpus}: {args.steps} steps of {args.batch_size} docs ({words:,} words)")
    print("| system | seconds | ms per word | vs first |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['system']} | {row['seconds']:.2f} | {row['ms_per_word']:.3f} "
              f"| {row['ratio']:.2f}x |")
    return 0
