"""`segmenters`: the full pipeline's sentence splitters, trained alone and
compared on whole documents.

For each treebank and each --senters setting (`init-config --senter`: cnn,
the shipped senter; bilstm, a BiLSTM over the whole text), a pipeline holding
only the full pipeline's senter is trained with the full pipeline's schedule
on the treebank's training documents (10 consecutive sentences a doc, as the
full pipeline trains) and chosen by sentence F1 on dev documents of 10
sentences. Each is then scored on gold tokens of whole documents (`# newdoc`;
the whole file where it has none), its sentences bounded to 60 words as the
pipeline runs it: sentence F1, where a predicted sentence counts when it
starts and ends where a gold one does (CoNLL 2018's Sentences, on gold
tokens, so without the tokenizer's errors). Also the senter's own words/s
(one thread, best of 3) and training minutes.

--text unpunctuated trains and scores on the treebank without its punctuation
(`pipeline.punctuation`): how a senter does on text whose punctuation does
not mark sentences; with --test-text as-is, how one trained without
punctuation does on punctuated text. "marked" closes every sentence with a
full stop: a treebank without punctuation (Gothic) as a modern edition would
print it. --add-marks and --remove-punctuation train with that share of the
training docs rewritten so (`spacy_nonmono.punctuation_augmenter.v1`).

Trained senters (--root/segmenters/<treebank>/<name>) and scores
(<name>.json beside them) are reused; a table of the mean ± sd over seeds is
printed and written to --root/segmenters/<treebank>.md.

--pipelines scores trained whole pipelines instead (e.g. the workflow's
model-best folders, whatever senter they hold), trained on nothing here: the
sentences of the pipeline's output on the --treebanks test file's gold
tokens, as it is, without punctuation and marked (--test-text: that one
only), sentence P/R/F1 and the whole pipeline's words/s, a row per pipeline
and text (--json writes them).
"""
import json
import statistics
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from spacy_nonmono.cli.common import HelpFormatter, InputError

SENTERS = ("cnn", "bilstm")
TEXTS = ("as-is", "unpunctuated", "marked")
# Training documents: consecutive sentences per doc, as the workflow converts them.
SENTENCES_PER_DOC = 10


def add_parser(commands) -> None:
    p = commands.add_parser("segmenters", help="Train the full pipeline's sentence splitters "
                            "alone and score them on whole documents.",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--ud-dir", type=Path, required=True,
                   help="Folder of UD treebanks (<treebank>/*-{train,dev,test}.conllu)")
    p.add_argument("--treebanks", required=True, help="Comma-separated treebank folders")
    p.add_argument("--root", type=Path, default=Path("bench"),
                   help="Where trained senters and scores go (<root>/segmenters)")
    p.add_argument("--senters", default=",".join(SENTERS),
                   help=f"Comma-separated senter settings ({', '.join(SENTERS)})")
    p.add_argument("--seeds", default="0", help="Comma-separated seeds")
    p.add_argument("--text", default="as-is", choices=TEXTS,
                   help="Train (and score) on the text as it is or without punctuation")
    p.add_argument("--test-text", default=None, choices=TEXTS,
                   help="Score on this text (default: --text)")
    p.add_argument("--add-marks", type=float, default=0.0,
                   help="Share of training docs whose sentences get a closing full stop")
    p.add_argument("--remove-punctuation", type=float, default=0.0,
                   help="Share of training docs without their punctuation")
    p.add_argument("--max-steps", type=int, default=8000,
                   help="Training updates at most (the workflow's schedule)")
    p.add_argument("--eval-frequency", type=int, default=200,
                   help="Updates between dev checks")
    p.add_argument("--patience", type=int, default=4000,
                   help="Stop after this many updates without a better dev F1")
    p.add_argument("--pipelines", nargs="+", type=Path, default=None,
                   help="Score these trained pipelines on the test file's texts, training nothing")
    p.add_argument("--json", type=Path, default=None,
                   help="With --pipelines: write the scores here")
    p.set_defaults(run=run)


def gold_docs(path: Path, text: str, n_sents: int = 0) -> list:
    """spaCy docs of the file's words with their gold annotation: groups of
    `n_sents` consecutive sentences of a document, or whole documents (0);
    the text as it is, without its punctuation, or with every sentence
    closed by a full stop (`pipeline.punctuation`)."""
    from spacy.training.converters import conllu_to_docs

    from spacy_nonmono.conllu_io import document_blocks
    from spacy_nonmono.pipeline.punctuation import with_marks, without_punctuation

    rewrite = {"as-is": lambda doc: doc, "unpunctuated": without_punctuation,
               "marked": lambda doc: with_marks(doc, ".")}[text]
    docs = []
    for chunk in document_blocks(path.read_text(encoding="utf8")):
        n = n_sents or chunk.count("\n\n") + 1
        docs.extend(rewrite(doc) for doc in conllu_to_docs(chunk, n_sents=n, no_print=True))
    return docs


def senter_config(senter: str, paths: Dict[str, str], args, seed: int):
    """The full pipeline's config (`init-config --pipeline full --senter S
    --add-marks A --remove-punctuation R`) with its senter alone, chosen by
    dev sentence F1."""
    from spacy_nonmono.configs import filled_config

    config = filled_config(pipeline="full", senter=senter, add_marks=args.add_marks,
                           remove_punctuation=args.remove_punctuation)
    config["nlp"]["pipeline"] = ["senter"]
    config["components"] = {"senter": config["components"]["senter"]}
    config["initialize"]["components"] = {}
    # The dev docs without their sentence starts: the senter is what is scored.
    for corpus in config["corpora"].values():
        corpus["gold_sentences"] = False
    training = config["training"]
    training["score_weights"] = {"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0}
    training["annotating_components"] = []
    training.update(max_steps=args.max_steps, eval_frequency=args.eval_frequency,
                    patience=args.patience)
    config["system"]["seed"] = seed
    config["paths"].update(paths)
    return config


def train_senter(config, output: Path) -> float:
    """Train with spaCy's loop into output (model-best, model-last); minutes."""
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop
    from thinc.api import fix_random_seed

    start = time.perf_counter()
    fix_random_seed(config["system"]["seed"])
    nlp = init_nlp(config)
    output.mkdir(parents=True, exist_ok=True)
    train_loop(nlp, output)
    return (time.perf_counter() - start) / 60


def sentence_spans(doc) -> set:
    return {(sent.start, sent.end) for sent in doc.sents}


def score(nlp, docs: Sequence) -> Tuple[Dict[str, float], float]:
    """Sentence precision, recall and F1 of nlp on the gold docs' words
    (their sentence starts hidden), and its words/s (best of 3 runs)."""
    from spacy.tokens import Doc

    def bare():
        return [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_)
                                                                    for t in doc])
                for doc in docs]

    best = 0.0
    for _ in range(3):
        inputs = bare()
        start = time.perf_counter()
        predicted = list(nlp.pipe(inputs))
        best = max(best, sum(len(d) for d in docs) / (time.perf_counter() - start))
    correct = sum(len(sentence_spans(p) & sentence_spans(g)) for p, g in zip(predicted, docs))
    n_predicted = sum(len(sentence_spans(p)) for p in predicted)
    n_gold = sum(len(sentence_spans(g)) for g in docs)
    precision = 100 * correct / max(n_predicted, 1)
    recall = 100 * correct / max(n_gold, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-12)
    return {"p": round(precision, 2), "r": round(recall, 2), "f1": round(f1, 2)}, best


def score_pipelines(args) -> int:
    """--pipelines: each trained pipeline's sentences on the test file's
    gold tokens, on each text."""
    import spacy

    from benchmarks.workflow.layout import log

    treebanks = [tb for tb in args.treebanks.split(",") if tb]
    if len(treebanks) != 1:
        raise InputError("--pipelines scores on one treebank's test file: give one --treebanks")
    test_files = sorted((args.ud_dir / treebanks[0]).glob("*-test.conllu"))
    if not test_files:
        raise InputError(f"{args.ud_dir / treebanks[0]} has no test file (*-test.conllu)")
    missing = [str(p) for p in args.pipelines if not (p / "config.cfg").exists()]
    if missing:
        raise InputError(f"{missing[0]} is not a trained pipeline (no config.cfg)")
    texts = [args.test_text] if args.test_text else list(TEXTS)
    docs = {text: gold_docs(test_files[0], text) for text in texts}
    rows = []
    for path in args.pipelines:
        nlp = spacy.load(path)
        for text in texts:
            scores, speed = score(nlp, docs[text])
            rows.append({"pipeline": str(path), "text": text, **scores,
                         "words_per_second": round(speed)})
            log(f"[{treebanks[0]}] {path}: {text} text, sentences F1 {scores['f1']:.2f}")
    lines = [f"{treebanks[0]} test, gold tokens of whole documents: the pipelines' sentences",
             "", "| pipeline | text | P | R | F1 | words/s |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {r['pipeline']} | {r['text']} | {r['p']:.2f} | {r['r']:.2f} | {r['f1']:.2f} | "
              f"{r['words_per_second']:,} |" for r in rows]
    print("\n".join(lines))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def run(args) -> int:
    import spacy
    from spacy.tokens import DocBin

    from benchmarks.workflow.layout import log

    if args.pipelines:
        return score_pipelines(args)
    senters = [s for s in args.senters.split(",") if s]
    unknown = [s for s in senters if s not in SENTERS]
    if unknown:
        raise InputError(f"unknown senter {unknown[0]!r}: expected one of {', '.join(SENTERS)}")
    seeds = [int(s) for s in args.seeds.split(",")]
    test_text = args.test_text or args.text
    for tb in args.treebanks.split(","):
        files = {split: sorted((args.ud_dir / tb).glob(f"*-{split}.conllu"))
                 for split in ("train", "dev", "test")}
        missing = [split for split, found in files.items() if not found]
        if missing:
            raise InputError(f"{args.ud_dir / tb} has no {missing[0]} file (*-{missing[0]}.conllu)")
        folder = args.root / "segmenters" / tb
        corpus = folder / f"corpus.{args.text}"
        corpus.mkdir(parents=True, exist_ok=True)
        paths = {}
        for split in ("train", "dev"):
            target = corpus / f"{split}.spacy"
            if not target.exists():
                DocBin(docs=gold_docs(files[split][0], args.text, SENTENCES_PER_DOC),
                       store_user_data=False).to_disk(target)
            paths[split] = str(target)
        tests = {split: gold_docs(files[split][0], test_text) for split in ("dev", "test")}
        augmented = (f"+marks{args.add_marks:g}" if args.add_marks else "") + \
            (f"-punct{args.remove_punctuation:g}" if args.remove_punctuation else "")
        rows = []
        for senter in senters:
            results = []
            for seed in seeds:
                name = f"{senter}.{args.text}" + augmented + (f".seed{seed}" if seed else "")
                model = folder / name
                record = folder / f"{name}.{test_text}.json"
                if record.exists():
                    results.append(json.loads(record.read_text()))
                    continue
                minutes = None
                if not (model / "model-best").exists():
                    log(f"[{tb}] training the {senter} senter on {args.text} text, seed {seed}")
                    minutes = train_senter(senter_config(senter, paths, args, seed), model)
                nlp = spacy.load(model / "model-best")
                result = {"senter": senter, "seed": seed, "text": args.text,
                          "test_text": test_text, "train_minutes": minutes}
                for split, docs in tests.items():
                    result[split], result[f"{split}_words_per_second"] = score(nlp, docs)
                record.write_text(json.dumps(result, indent=2) + "\n")
                log(f"[{tb}] {name}: dev F1 {result['dev']['f1']:.2f}, "
                    f"test F1 {result['test']['f1']:.2f}")
                results.append(result)
            rows.append((senter + augmented, results))
        table = summary(tb, args.text, test_text, rows)
        print(table)
        (folder.parent / f"{tb}.{args.text}{augmented}.{test_text}.md").write_text(table + "\n")
    return 0


def mean_sd(values: List[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def summary(tb: str, text: str, test_text: str, rows) -> str:
    lines = [f"{tb}: trained on {text} text, scored on {test_text} text (gold tokens, whole "
             "documents); mean ± sd over seeds", "",
             "| senter | seeds | dev P | dev R | dev F1 | test P | test R | test F1 | "
             "words/s | train min |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for senter, results in rows:
        cells = [mean_sd([r[split][key] for r in results])
                 for split in ("dev", "test") for key in ("p", "r", "f1")]
        speed = statistics.mean(r["test_words_per_second"] for r in results)
        minutes = mean_sd([r["train_minutes"] for r in results])
        lines.append(f"| {senter} | {len(results)} | " + " | ".join(cells) +
                     f" | {speed:,.0f} | {minutes} |")
    return "\n".join(lines)
