"""`text-cost`: what text without sentence cues costs a whole pipeline.

Three raw texts of the same words, each one doc through the whole pipeline
(tokenizer, senter, tags, parser), one thread, best of --runs runs:

  punctuated      the gold file's first sentences as written (its tokens,
                  spaces and punctuation): ordinary text of the language;
  unpunctuated    the same words without the punctuation tokens (UPOS PUNCT);
  no cues         the same, lowercased: no punctuation and no capitals left
                  for the senter to find sentences by.

It reports words/s (the pipeline's tokens per second), the sentences the
pipeline made and the longest one, and the cost of each text relative to the
punctuated one (its words/s over theirs), for every pipeline and every
--max-lengths setting of its senter (`bound_sentences`; "none": the senter
as trained, unbounded).
"""
import json
import time
from pathlib import Path
from typing import List, Optional

from spacy_nonmono.cli.common import (HelpFormatter, InputError, check_output_paths,
                                      load_parser_pipeline)

TEXTS = ("punctuated", "unpunctuated", "no cues")


def add_parser(commands) -> None:
    p = commands.add_parser("text-cost", help="Words/s of punctuated, unpunctuated and "
                            "cue-less raw text through whole pipelines.",
                            description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("pipelines", nargs="+", help="Pipeline folders (spacy.load)")
    p.add_argument("--gold", type=Path, required=True,
                   help="Gold CoNLL-U whose first sentences make the texts")
    p.add_argument("--words", type=int, default=2000, help="Words of the punctuated text")
    p.add_argument("--max-lengths", default="none",
                   help='Comma-separated senter bounds to time ("none": as trained)')
    p.add_argument("--runs", type=int, default=3, help="Timed runs; the best is reported")
    p.add_argument("--json", type=Path, default=None, help="Write the numbers as JSON here")
    p.set_defaults(run=run)


def texts(sentences, n_words: int):
    """The three texts (TEXTS) of the file's first sentences holding at least
    `n_words` words."""
    from spacy_nonmono.conllu_io import is_word
    from spacy_nonmono.conllu_io import gold_documents

    chosen, count = [], 0
    for sentence in sentences:
        if count >= n_words:
            break
        chosen.append(sentence)
        count += sum(1 for token in sentence if is_word(token))
    punctuated = " ".join(gold_documents([sentence])[0] for sentence in chosen)
    words = [token["form"] for sentence in chosen for token in sentence
             if is_word(token) and token["upos"] != "PUNCT"]
    unpunctuated = " ".join(words)
    return dict(zip(TEXTS, (punctuated, unpunctuated, unpunctuated.lower())))


def parse_cost(nlp, text: str, runs: int):
    """Best words/s over `runs` parses of `text`, the sentences made and the
    longest's length."""
    from spacy_nonmono.threads import one_blas_thread

    best, doc = float("inf"), None
    with one_blas_thread():
        for _ in range(runs):
            start = time.perf_counter()
            doc = nlp(text)
            best = min(best, time.perf_counter() - start)
    lengths = [len(sent) for sent in doc.sents]
    return {"words": len(doc), "words_per_second": len(doc) / best,
            "sentences": len(lengths), "longest": max(lengths)}


def senter_bound(value: str) -> Optional[int]:
    """A senter bound from the command line: a positive integer, or "none"."""
    if value.strip().lower() == "none":
        return None
    try:
        bound = int(value)
    except ValueError:
        bound = 0
    if bound < 1:
        raise InputError(f'a senter bound is a positive integer or "none", not {value!r}')
    return bound


def parse_max_lengths(value: str) -> List[Optional[int]]:
    bounds = [senter_bound(k) for k in value.split(",") if k.strip()]
    if not bounds:
        raise InputError("--max-lengths names no bound")
    return bounds


def run(args) -> int:
    from spacy_nonmono.evaluation import read_conllu
    from spacy_nonmono.pipeline.senter import bound_sentences, takes_sentence_bound

    bounds = parse_max_lengths(args.max_lengths)
    if args.words < 1 or args.runs < 1:
        raise InputError("--words and --runs must be at least 1")
    check_output_paths({"--json": args.json})
    sample = texts(read_conllu(args.gold), args.words)
    results = []
    for name in args.pipelines:
        nlp = load_parser_pipeline(name)
        has_senter = takes_sentence_bound(nlp)
        # A parser that decides sentences (`--senter break`) takes no bound.
        for bound in (bounds if has_senter or "senter" not in nlp.pipe_names else [None]):
            if bound is not None:
                if not has_senter:
                    raise InputError(f"{name} has no senter to bound (--max-lengths {bound})")
                bound_sentences(nlp, bound)
            elif has_senter and hasattr(nlp.get_pipe("senter"), "max_length"):
                bound_sentences(nlp, None)
            nlp(sample["punctuated"][:2000])     # warm-up
            row = {"pipeline": name, "max_length": bound}
            for kind, text in sample.items():
                row[kind] = parse_cost(nlp, text, args.runs)
                print(f"{name} (max_length {bound}), {kind}: "
                      f"{row[kind]['words_per_second']:.0f} words/s", flush=True)
            results.append(row)
    if args.json:
        args.json.write_text(json.dumps({"gold": str(args.gold), "words": args.words,
                                         "runs": results}, indent=2) + "\n")
    print(table(results))
    return 0


def table(results) -> str:
    lines = ["| pipeline | senter max_length | " + " | ".join(
                 f"{kind}: words/s (sentences, longest)" for kind in TEXTS)
             + " | cost of the worst, × punctuated |",
             "|---|---:|" + "---:|" * (len(TEXTS) + 1)]
    for row in results:
        reference = row["punctuated"]["words_per_second"]
        worst = min(row[kind]["words_per_second"] for kind in TEXTS)
        lines.append(f"| {row['pipeline']} | {row['max_length'] or 'none'} | " + " | ".join(
            f"{row[kind]['words_per_second']:.0f} ({row[kind]['sentences']}, "
            f"{row[kind]['longest']})" for kind in TEXTS) + f" | {reference / worst:.2f}x |")
    return "\n".join(lines)
