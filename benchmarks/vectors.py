"""Static vectors from a raw corpus, the lab's recipe (docs/vectors.md):

  raw-text SOURCE... --output corpus.txt --exclude DEV.conllu TEST.conllu
      plain text files (folders are read recursively, *.txt) -> one sentence
      a line, words and punctuation split apart; every corpus sentence that
      shares a run of --ngram words with an excluded treebank sentence is
      left out, so that vectors never saw the sentences they are scored on
      (the report says how many test sentences the corpus held).
  vectors corpus.txt OUTPUT --lang la
      floret (`pip install floret`) trains subword vectors on the corpus, and
      spaCy's `init vectors` turns them into a pipeline folder OUTPUT that
      `--paths.vectors`, `init-config --vectors` and the workflow's
      --vectors-dir read. Floret's hashed subword rows give every word a
      vector, the unseen ones too.
"""
import re
import sys
import time
import unicodedata
from pathlib import Path
from typing import Iterable, Iterator, List, Sequence, Set, Tuple

from spacy_nonmono.cli.common import HelpFormatter, InputError, check_output_paths

# A word (letters and digits, with inner hyphens or apostrophes) or one
# punctuation mark: UD's tokens for the languages without clitics to split.
TOKEN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
# Where a sentence ends: after . ! ? ; : (the colon and semicolon too, as the
# treebanks of Latin and Greek end sentences there).
SENTENCE_END = {".", "!", "?", ";", ":"}
# Section numbers of editions: "[ 12 ]", "[12]", "(12)".
SECTION_NUMBER = re.compile(r"[\[(]\s*\d+[a-z]?\s*[\])]")


def add_parser(commands) -> None:
    p = commands.add_parser(
        "raw-text", help="Clean a raw corpus into one tokenized sentence a line, without the "
        "sentences of given treebank files.", description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("sources", type=Path, nargs="+",
                   help="Text files, or folders whose *.txt files are read (recursively)")
    p.add_argument("--output", type=Path, required=True, help="The corpus to write")
    p.add_argument("--exclude", type=Path, nargs="*", default=[],
                   help="CoNLL-U files whose sentences the corpus must not hold (dev, test)")
    p.add_argument("--ngram", type=int, default=5,
                   help="A corpus sentence sharing a run of this many words (lowercased, "
                   "punctuation left out) with an excluded sentence is left out; shorter "
                   "excluded sentences are matched whole")
    p.add_argument("--min-words", type=int, default=3,
                   help="Sentences of fewer words are left out (headings, page furniture)")
    p.set_defaults(run=run_raw_text)

    p = commands.add_parser(
        "vectors", help="Train floret vectors on a corpus and save them as a spaCy vectors "
        "pipeline folder.", description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("corpus", type=Path, help="One tokenized sentence a line (raw-text's output)")
    p.add_argument("output", type=Path, help="The pipeline folder to write (spaCy's "
                   "`init vectors` output)")
    p.add_argument("--lang", required=True, help="Language code of the pipeline folder")
    p.add_argument("--dim", type=int, default=100, help="Vector width")
    p.add_argument("--epochs", type=int, default=5, help="Passes over the corpus")
    p.add_argument("--min-count", type=int, default=3, help="Words seen fewer times are left "
                   "to their subwords")
    p.add_argument("--minn", type=int, default=3, help="Shortest character n-gram")
    p.add_argument("--maxn", type=int, default=5, help="Longest character n-gram")
    p.add_argument("--rows", type=int, default=50000, help="Rows of the hashed table")
    p.add_argument("--hash-count", type=int, default=2, help="Rows each n-gram is hashed to")
    p.add_argument("--threads", type=int, default=2, help="floret's training threads (one "
                   "gives the same vectors each time)")
    p.set_defaults(run=run_vectors)


# -- raw-text ----------------------------------------------------------------------


def text_files(sources: Sequence[Path]) -> List[Path]:
    files = []
    for source in sources:
        if source.is_dir():
            files.extend(sorted(source.rglob("*.txt")))
        elif source.is_file():
            files.append(source)
        else:
            raise InputError(f"{source}: no such file or folder")
    if not files:
        raise InputError(f"no *.txt files in {', '.join(map(str, sources))}")
    return files


def sentences_of(text: str) -> Iterator[List[str]]:
    """The tokenized sentences of a raw text (NFC, section numbers out)."""
    text = SECTION_NUMBER.sub(" ", unicodedata.normalize("NFC", text))
    sentence: List[str] = []
    for line in text.splitlines():
        for token in TOKEN.findall(line):
            sentence.append(token)
            if token in SENTENCE_END:
                yield sentence
                sentence = []
        if not line.strip() and sentence:   # a blank line ends a paragraph
            yield sentence
            sentence = []
    if sentence:
        yield sentence


def words(tokens: Iterable[str]) -> List[str]:
    return [token.lower() for token in tokens if TOKEN.fullmatch(token) and token[0].isalnum()]


def ngrams(w: Sequence[str], n: int) -> Set[Tuple[str, ...]]:
    """The runs of n words of a sentence's `words` (a shorter sentence: all
    its words)."""
    if len(w) < n:
        return {tuple(w)} if w else set()
    return {tuple(w[k:k + n]) for k in range(len(w) - n + 1)}


def excluded_ngrams(paths: Sequence[Path], n: int) -> List[Set[Tuple[str, ...]]]:
    """Per sentence of the CoNLL-U files, its word runs (ngrams)."""
    from spacy_nonmono.evaluation import read_conllu

    out = []
    for path in paths:
        for sentence in read_conllu(path):
            forms = [token["form"] for token in sentence if isinstance(token["id"], int)]
            out.append(ngrams(words(forms), n))
    return out


def run_raw_text(args) -> int:
    check_output_paths({"--output": args.output}, [*args.sources, *args.exclude])
    if args.ngram < 2 or args.min_words < 1:
        raise InputError("--ngram must be at least 2 and --min-words at least 1")
    files = text_files(args.sources)
    excluded = excluded_ngrams(args.exclude, args.ngram)
    # n-gram -> the excluded sentences holding it; short sentences by all their words.
    index = {}
    for k, grams in enumerate(excluded):
        for gram in grams:
            index.setdefault(gram, set()).add(k)
    found: Set[int] = set()
    kept = dropped = n_words = 0
    start = time.perf_counter()
    with args.output.open("w", encoding="utf8") as out:
        for f, path in enumerate(files, 1):
            text = path.read_text(encoding="utf8", errors="replace")
            for tokens in sentences_of(text):
                w = words(tokens)
                if len(w) < args.min_words:
                    continue
                hits = set()
                for gram in ngrams(w, args.ngram) | {tuple(w)}:
                    hits |= index.get(gram, set())
                if hits:
                    found |= hits
                    dropped += 1
                    continue
                out.write(" ".join(tokens) + "\n")
                kept += 1
                n_words += len(w)
            if f % 200 == 0 or f == len(files):
                print(f"{f}/{len(files)} files, {kept:,} sentences kept, {dropped:,} left out "
                      f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    print(f"| files | sentences kept | words kept | sentences left out | excluded sentences "
          f"found in the corpus |\n|---:|---:|---:|---:|---:|\n| {len(files)} | {kept:,} | "
          f"{n_words:,} | {dropped:,} | {len(found)} of {len(excluded)} |")
    print(f"Wrote {args.output}", file=sys.stderr)
    return 0


# -- vectors ---------------------------------------------------------------------------


def run_vectors(args) -> int:
    if not args.corpus.is_file():
        raise InputError(f"{args.corpus}: no such file")
    if args.output.exists() and any(args.output.iterdir()):
        raise InputError(f"{args.output}: is not empty")
    try:
        import floret
    except ImportError:
        raise InputError("the vectors command trains with floret: pip install floret") from None
    import spacy
    from spacy.training.initialize import convert_vectors

    try:
        nlp = spacy.blank(args.lang)
    except ImportError as e:
        raise InputError(str(e)) from None
    start = time.perf_counter()
    model = floret.train_unsupervised(
        str(args.corpus), model="skipgram", mode="floret", dim=args.dim, epoch=args.epochs,
        minCount=args.min_count, minn=args.minn, maxn=args.maxn, bucket=args.rows,
        hashCount=args.hash_count, thread=args.threads, verbose=1)
    args.output.mkdir(parents=True, exist_ok=True)
    table = args.output / "vectors.floret"
    model.save_floret_vectors(str(table))
    convert_vectors(nlp, table, truncate=0, prune=-1, mode="floret")
    table.unlink()
    nlp.to_disk(args.output)
    rows, width = nlp.vocab.vectors.shape
    print(f"floret vectors: {len(model.words):,} words, {rows:,} rows of width {width}, "
          f"{time.perf_counter() - start:.0f} s; wrote {args.output}")
    return 0
