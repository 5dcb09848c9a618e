"""`tokenization`: tokenizers on the raw text of UD test sets.

For each treebank (a folder of --ud-dir with *-ud-train.conllu, or else
*-ud-dev.conllu to learn from, and *-ud-test.conllu), the test file's raw
text is rebuilt as `evaluate --raw-text` rebuilds it (its documents and
paragraphs, spaced as SpaceAfter says) and cut by each tokenizer: spaCy's
`xx` rules, spaCy's rules of the treebank's language where spaCy has it (the
code its file names start with: hu-ud-test.conllu, en_ewt-ud-test.conllu),
and the tokenizer learned from the training file on top of those rules
(`spacy_nonmono.pipeline.tokenizers`). Tokens and words F1 are the CoNLL
2018 scorer's (our `evaluation.raw_text`), each token a word; sentence
splitting is not part of this. Learning seconds include reading the file.

Multiword tokens: how many test tokens are multiword tokens, how many are
spelled by their words, and the F1 of the treebank's own segmentation as the
learned tokenizer aims at it (spelled multiword tokens cut into their words
and recorded as one token, the others whole): the ceiling of any tokenizer
that only cuts text, and what is lost on the multiword tokens. The learned
tokenizer records the spelled multiword tokens it cuts (its forms and tails
learned: counted), which count as multiword tokens in its scores (as
`doc_to_conllu` writes them back); "no ranges" scores it with them
ignored, its words written as separate tokens. Speed: the learned
tokenizer's tokens a second on the test text, as documents and as
sentences, with the search for multiword tokens and without it (spaCy's
Tokenizer.__call__ on the same object), interleaved, median of 15 passes.
"""
import json
import statistics
import time
from pathlib import Path

from spacy_nonmono.cli.common import HelpFormatter, InputError, check_output_paths


def add_parser(commands) -> None:
    p = commands.add_parser("tokenization", help="Tokens and words F1 of the xx, the language's "
                            "and the treebank-learned tokenizer on UD test sets' raw text.",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--ud-dir", type=Path, default=Path("assets"),
                   help="Folder of treebank folders holding *-ud-{train,dev,test}.conllu")
    p.add_argument("--treebanks", required=True, help="Comma-separated treebank folders")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.set_defaults(run=run)


def treebank_files(folder: Path):
    """(file to learn from, test file) of a treebank folder: the training
    file, or the dev file where there is none."""
    def find(split):
        files = sorted(folder.glob(f"*-ud-{split}.conllu"))
        return files[0] if files else None

    learn_from, test = find("train") or find("dev"), find("test")
    if learn_from is None or test is None:
        raise InputError(f"{folder}: needs *-ud-test.conllu and *-ud-train.conllu (or "
                         "*-ud-dev.conllu)")
    return learn_from, test


def measure(folder: Path) -> dict:
    from spacy.vocab import Vocab

    from spacy_nonmono.conllu_io import (MULTIWORD_TOKENS, gold_documents, read_conllu,
                                         surface_tokens)
    from spacy_nonmono.evaluation.tokenization import score_segmentation, score_tokenizer
    from spacy_nonmono.pipeline.tokenizers import (file_language, language_tokenizer,
                                                   learn_treebank_tokenizer, spells)

    learn_from, test = treebank_files(folder)
    lang = file_language(test)
    gold = read_conllu(test)
    vocab = Vocab()
    tokenizers = {"xx": language_tokenizer("xx", vocab)}
    if lang != "xx":
        tokenizers["language"] = language_tokenizer(lang, vocab)
    start = time.perf_counter()
    tokenizers["treebank"] = learn_treebank_tokenizer(learn_from, vocab, lang)
    seconds = time.perf_counter() - start
    scores = {}
    for name, tokenizer in tokenizers.items():
        evaluation = score_tokenizer(tokenizer, gold)
        scores[name] = {"tokens": evaluation["Tokens"].f1, "words": evaluation["Words"].f1}
    evaluation = score_tokenizer(tokenizers["treebank"], gold, multiword=False)
    scores["treebank_no_ranges"] = {"tokens": evaluation["Tokens"].f1,
                                    "words": evaluation["Words"].f1}
    tokens = [(form, words) for sentence in gold for form, words, _ in surface_tokens(sentence)]
    multiword = [(form, words) for form, words in tokens if len(words) > 1]
    ceiling = score_segmentation([[tuple(words) if len(words) > 1 and spells(form, words)
                                   else form for form, words in tokens]], gold)
    learned = tokenizers["treebank"]
    recorded = sum(len(learned(text).user_data.get(MULTIWORD_TOKENS, ()))
                   for text in gold_documents(gold))
    speed = {"documents": tokens_per_second(learned, gold_documents(gold)),
             "sentences": tokens_per_second(learned, [text for sentence in gold
                                                      for text in gold_documents([sentence])])}
    return {"treebank": folder.name, "base": lang, "learned_from": learn_from.name,
            "test": test.name, "scores": scores, "learning_seconds": round(seconds, 1),
            "test_tokens": len(tokens), "multiword_tokens": len(multiword),
            "spelled": sum(spells(form, words) for form, words in multiword),
            "learned_multiword_forms": len(learned.multiword_tokens),
            "learned_multiword_tails": ["".join(tail) for tail in learned.multiword_tails],
            "recorded_multiword_tokens": recorded, "tokens_per_second": speed,
            "ceiling": {"tokens": ceiling["Tokens"].f1, "words": ceiling["Words"].f1}}


def tokens_per_second(tokenizer, texts, passes: int = 15) -> dict:
    """The tokenizer's tokens a second on the texts: "search" as called,
    "no_search" by spaCy's Tokenizer.__call__ (no multiword tokens looked
    for); passes interleaved, the median of each."""
    from spacy.tokenizer import Tokenizer

    calls = {"search": tokenizer, "no_search": lambda text: Tokenizer.__call__(tokenizer, text)}
    n = sum(len(tokenizer(text)) for text in texts)   # also warms the cache
    seconds = {name: [] for name in calls}
    for _ in range(passes):
        for name, call in calls.items():
            start = time.perf_counter()
            for text in texts:
                call(text)
            seconds[name].append(time.perf_counter() - start)
    return {name: round(n / statistics.median(times)) for name, times in seconds.items()}


def run(args) -> int:
    names = [name.strip() for name in args.treebanks.split(",") if name.strip()]
    if not names:
        raise InputError("--treebanks names no treebank")
    folders = [args.ud_dir / name for name in names]
    for folder in folders:
        treebank_files(folder)   # every input checked before any work
    check_output_paths({"--json": args.json})
    results = []
    for folder in folders:
        results.append(measure(folder))
        print(f"[{folder.name}] done", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    return 0


def table(results) -> str:
    def score(result, name, metric):
        value = result["scores"].get(name)
        return "–" if value is None else f"{value[metric]:.2f}"

    names = ("xx", "language", "treebank")
    lines = ["| treebank | base rules | learned from | tokens F1: xx | language | treebank | "
             "words F1: xx | language | treebank | learning (s) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['treebank']} | {r['base']} | {r['learned_from']} | "
                     + " | ".join(score(r, name, "tokens") for name in names) + " | "
                     + " | ".join(score(r, name, "words") for name in names)
                     + f" | {r['learning_seconds']:.1f} |")
    lines += ["", "| treebank | test tokens | multiword tokens | spelled by their words | "
              "recorded by the learned tokenizer | learned forms | learned tails | "
              "treebank tokens F1, no ranges | ceiling tokens F1 | ceiling words F1 |",
              "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    speeds = ["", "| treebank | learned tokenizer, thousand tokens/s: documents, no search | "
              "search | sentences, no search | search |", "|---|---:|---:|---:|---:|"]
    for r in results:
        tails = " ".join(f"`{tail}`" for tail in r["learned_multiword_tails"]) or "–"
        lines.append(f"| {r['treebank']} | {r['test_tokens']:,} | {r['multiword_tokens']:,} | "
                     f"{r['spelled']:,} | {r['recorded_multiword_tokens']:,} | "
                     f"{r['learned_multiword_forms']:,} | {tails} | "
                     f"{score(r, 'treebank_no_ranges', 'tokens')} | "
                     f"{r['ceiling']['tokens']:.2f} | {r['ceiling']['words']:.2f} |")
        speed = r["tokens_per_second"]
        speeds.append(f"| {r['treebank']} | " + " | ".join(
            f"{speed[texts][name] / 1000:,.0f}" for texts in ("documents", "sentences")
            for name in ("no_search", "search")) + " |")
    return "\n".join(lines + speeds)
