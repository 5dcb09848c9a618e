"""`gpu-check`: the full pipeline trained and run on a GPU against the CPU.

Builds each workflow system (the full pipeline's, e.g.
`mh4+global+full+lstmdrop`) twice from the same seed, once on the CPU and
once on GPU --gpu-id (thinc's `require_gpu`: the encoders and score tables
on the device, the charts and transition loops on the CPU with one copy of
the scores per batch), trains each for --steps updates on the same batches
and parses the same docs with each. Reports seconds per update and parsed
words/s on both, and the speed-up; checks that every parse is a tree. Run it
where a GPU is (docs/results/gpu/ has the figures and the command); with
--gpu-id -1 the "device" run is a second CPU run (what the tests check).
"""
import json
import time
from pathlib import Path

from spacy_nonmono.cli.common import HelpFormatter, InputError, check_output_paths

from spacy_nonmono.graph.trees import check_gold_tree

from .train_speed import build, check_arguments, training_docs


def is_tree(sent) -> bool:
    try:
        check_gold_tree([0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent])
        return True
    except ValueError:
        return False


def add_parser(commands) -> None:
    p = commands.add_parser("gpu-check", help="Train and parse the full pipeline on a GPU and "
                            "on the CPU, and compare the times.",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("corpus", type=Path, help="Training corpus (.spacy, e.g. the workflow's "
                   "corpus/<treebank>/train.spacy); the parse runs on its first docs")
    p.add_argument("--systems", default="mh4+global+full+lstmdrop",
                   help="Comma-separated workflow system names (the full pipeline's)")
    p.add_argument("--gpu-id", type=int, default=0, help="The GPU (-1: a second CPU run)")
    p.add_argument("--lang", default="xx", help="Language of the pipelines")
    p.add_argument("--steps", type=int, default=300, help="Training updates per run")
    p.add_argument("--batch-size", type=int, default=32, help="Docs per update")
    p.add_argument("--parse-docs", type=int, default=500, help="Docs parsed per run")
    p.add_argument("--seed", type=int, default=0, help="Seed of the batches and models")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.set_defaults(run=run)


def timed_run(name: str, args, docs, parse_docs) -> dict:
    """Train a fresh pipeline of `name` on docs, `args.batch_size` a step, on
    the current device, then parse parse_docs: the times."""
    from spacy.training import Example

    nlp = build(name, args.lang, args.seed, corpus=args.corpus)
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    optimizer = nlp.initialize(lambda: examples[:500])
    start = time.perf_counter()
    for step in range(args.steps):
        nlp.update(examples[step * args.batch_size:(step + 1) * args.batch_size], sgd=optimizer)
        if (step + 1) % 100 == 0:
            print(f"  {name}: {step + 1}/{args.steps} updates", flush=True)
    train_seconds = time.perf_counter() - start
    texts = [nlp.make_doc(doc.text) for doc in parse_docs]
    start = time.perf_counter()
    parsed = list(nlp.pipe(texts, batch_size=64))
    parse_seconds = time.perf_counter() - start
    bad = sum(not is_tree(sent) for doc in parsed for sent in doc.sents)
    return {"ms_per_update": round(1000 * train_seconds / args.steps, 1),
            "words_per_second": round(sum(len(d) for d in parsed) / parse_seconds),
            "sentences_not_trees": bad}


def run(args) -> int:
    from thinc.api import require_cpu, require_gpu

    names = check_arguments(args)
    if args.parse_docs < 1:
        raise InputError("--parse-docs must be positive")
    check_output_paths({"--json": args.json}, inputs=[args.corpus])
    docs = training_docs(args.corpus, args.lang, args.seed, args.steps * args.batch_size)
    parse_docs = docs[:args.parse_docs]
    if args.gpu_id >= 0:
        try:    # before any training: a machine without the GPU stops at once
            require_gpu(args.gpu_id)
        except (ValueError, ImportError) as e:
            raise InputError(f"--gpu-id {args.gpu_id}: no GPU ({' '.join(str(e).split())}); "
                             "install CuPy for its CUDA (e.g. pip install cupy-cuda12x)") from None
    rows = []
    for name in names:
        require_cpu()
        print(f"{name}: on the CPU", flush=True)
        cpu = timed_run(name, args, docs, parse_docs)
        if args.gpu_id >= 0:
            require_gpu(args.gpu_id)
        print(f"{name}: on {'GPU ' + str(args.gpu_id) if args.gpu_id >= 0 else 'the CPU'}",
              flush=True)
        device = timed_run(name, args, docs, parse_docs)
        require_cpu()
        rows.append({"system": name, "cpu": cpu, "device": device,
                     "train_speedup": round(cpu["ms_per_update"] / device["ms_per_update"], 2),
                     "parse_speedup": round(device["words_per_second"]
                                            / cpu["words_per_second"], 2)})
    device_name = f"GPU {args.gpu_id}" if args.gpu_id >= 0 else "CPU (second run)"
    if args.json:
        args.json.write_text(json.dumps({"corpus": str(args.corpus), "steps": args.steps,
                                         "batch_size": args.batch_size, "device": device_name,
                                         "systems": rows}, indent=2) + "\n")
    print(f"{args.corpus}: {args.steps} updates of {args.batch_size} docs, then "
          f"{len(parse_docs)} docs parsed; device: {device_name}")
    print("| system | CPU ms/update | device ms/update | speed-up | CPU words/s | "
          "device words/s | speed-up | not trees |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        c, d = r["cpu"], r["device"]
        print(f"| {r['system']} | {c['ms_per_update']} | {d['ms_per_update']} | "
              f"{r['train_speedup']}x | {c['words_per_second']:,} | {d['words_per_second']:,} | "
              f"{r['parse_speedup']}x | {c['sentences_not_trees'] + d['sentences_not_trees']} |")
    return 0 if all(r["cpu"]["sentences_not_trees"] + r["device"]["sentences_not_trees"] == 0
                    for r in rows) else 1
