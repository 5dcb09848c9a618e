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
learned tokenizer aims at it (spelled multiword tokens cut into their words,
the others whole): the ceiling of any tokenizer that only cuts text, and
what is lost on the multiword tokens.
"""
import json
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

    from spacy_nonmono.evaluation.conllu_eval import read_conllu
    from spacy_nonmono.pipeline.tokenizers import (base_language, language_tokenizer,
                                                   learn_treebank_tokenizer, score_segmentation,
                                                   score_tokenizer, spells, surface_tokens,
                                                   treebank_chunks)

    learn_from, test = treebank_files(folder)
    code = test.name.split("-")[0].split("_")[0]
    lang = base_language(code)
    gold = read_conllu(test)
    vocab = Vocab()
    tokenizers = {"xx": language_tokenizer("xx", vocab)}
    if lang != "xx":
        tokenizers["language"] = language_tokenizer(lang, vocab)
    start = time.perf_counter()
    tokenizers["treebank"] = learn_treebank_tokenizer(learn_from, vocab, code)
    seconds = time.perf_counter() - start
    scores = {}
    for name, tokenizer in tokenizers.items():
        evaluation = score_tokenizer(tokenizer, gold)
        scores[name] = {"tokens": evaluation["Tokens"].f1, "words": evaluation["Words"].f1}
    tokens = [(form, words) for sentence in gold for form, words in surface_tokens(sentence)]
    multiword = [(form, words) for form, words in tokens if len(words) > 1]
    ceiling = score_segmentation(([piece for chunk in document for piece in chunk]
                                  for document in treebank_chunks(gold)), gold)
    return {"treebank": folder.name, "base": lang, "learned_from": learn_from.name,
            "test": test.name, "scores": scores, "learning_seconds": round(seconds, 1),
            "test_tokens": len(tokens), "multiword_tokens": len(multiword),
            "spelled": sum(spells(form, words) for form, words in multiword),
            "ceiling": {"tokens": ceiling["Tokens"].f1, "words": ceiling["Words"].f1}}


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
              "ceiling tokens F1 | ceiling words F1 |", "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['treebank']} | {r['test_tokens']:,} | {r['multiword_tokens']:,} | "
                     f"{r['spelled']:,} | {r['ceiling']['tokens']:.2f} | "
                     f"{r['ceiling']['words']:.2f} |")
    return "\n".join(lines)
