"""`parse PIPELINE INPUT... --output OUT.conllu`: raw text (or CoNLL-U) in,
CoNLL-U out, as UD tools write it.

A text input (any file not ending in .conllu, or --input-format text) is
read as documents split at blank lines (paragraphs); the pipeline tokenizes
it, splits sentences and parses. A CoNLL-U input keeps its tokens and
sentences: the pipeline annotates them (UPOS, XPOS, FEATS, LEMMA where it
sets them; HEAD and DEPREL), and multiword tokens, empty nodes and comments
are copied. Each output sentence has `# sent_id` and `# text` (text inputs
also `# newdoc id` and `# newpar`), `SpaceAfter=No` where no space follows.
Inputs are streamed: a large file is never held whole.

Example:
  spacy-nonmono parse training/la/model-best caesar.txt --output caesar.conllu
"""
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from ..files import atomic_output
from .common import InputError, RawHelpFormatter, check_output_paths, load_pipeline


def add_parser(commands) -> None:
    p = commands.add_parser("parse", help="Parse raw text (or CoNLL-U) files with a pipeline "
                            "and write CoNLL-U.", description=__doc__,
                            formatter_class=RawHelpFormatter)
    p.add_argument("pipeline", help="Pipeline folder or package name (spacy.load)")
    p.add_argument("inputs", type=Path, nargs="+", help="Text or CoNLL-U files")
    p.add_argument("--output", type=Path, required=True,
                   help='The CoNLL-U file to write ("-": standard output)')
    p.add_argument("--input-format", choices=("auto", "text", "conllu"), default="auto",
                   help="auto: CoNLL-U for files ending in .conllu, text otherwise")
    p.add_argument("--n-process", type=int, default=1, help="Processes (nlp.pipe's n_process)")
    p.add_argument("--batch-size", type=int, default=64, help="Documents per batch")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="A progress line on stderr (auto: when stderr is a terminal)")
    p.set_defaults(run=run)


def input_format(path: Path, choice: str) -> str:
    if choice != "auto":
        return choice
    return "conllu" if path.suffix == ".conllu" else "text"


def run(args) -> int:
    from ..conllu_io import conllu_sentences, text_documents

    to_stdout = str(args.output) == "-"
    check_output_paths({} if to_stdout else {"--output": args.output}, inputs=args.inputs)
    if args.n_process < 1 or args.batch_size < 1:
        raise InputError("--n-process and --batch-size must be positive")
    for path in args.inputs:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
    nlp = load_pipeline(args.pipeline)

    def items():
        """(text or Doc, (format, input path, paragraph number, sentence))."""
        for path in args.inputs:
            if input_format(path, args.input_format) == "conllu":
                for sentence, doc in conllu_sentences(path, nlp.vocab):
                    yield doc, ("conllu", path, 0, sentence)
            else:
                for k, text in enumerate(text_documents(path)):
                    yield text, ("text", path, k, None)

    show = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    start = time.perf_counter()
    # A parse that fails (a bad input among good ones) leaves an existing
    # --output as it was: the file is replaced only once all is written.
    with nullcontext(sys.stdout) if to_stdout else atomic_output(args.output) as out:
        n_words, n_sents = write_parses(nlp, items(), out, args, show)
    seconds = time.perf_counter() - start
    print(f"{chr(13) if show else ''}Parsed {n_words:,} words in {n_sents:,} sentences "
          f"({n_words / max(seconds, 1e-9):,.0f} words/s)"
          f"{'' if to_stdout else f'; wrote {args.output}'}", file=sys.stderr)
    return 0


def write_parses(nlp, items, out, args, show: bool):
    """Parse the items (see `run`) and write them to out as CoNLL-U, with a
    progress line on stderr if `show`; returns the words and sentences
    written. A bad input is an InputError."""
    from ..conllu_io import ConlluError, doc_to_conllu, fill_sentence

    n_words = n_sents = 0
    start = last_shown = time.perf_counter()
    try:
        stream = nlp.pipe(items, as_tuples=True, n_process=args.n_process,
                          batch_size=args.batch_size)
        for doc, (kind, path, k, sentence) in stream:
            if kind == "conllu":
                out.write(fill_sentence(sentence, doc))
                n_sents += 1
            else:
                comments = (f"newdoc id = {path.name}",) if k == 0 else ()
                text = doc_to_conllu(doc, first_sent_id=n_sents + 1,
                                     comments=comments + ("newpar",))
                out.write(text)
                n_sents += text.count("\n\n")    # one blank line ends each sentence
            n_words += sum(not token.is_space for token in doc)
            now = time.perf_counter()
            if show and now - last_shown >= 1.0:
                print(f"\r{n_words:,} words, {n_sents:,} sentences, "
                      f"{n_words / (now - start):,.0f} words/s", end="", file=sys.stderr,
                      flush=True)
                last_shown = now
    except ConlluError as e:
        raise InputError(str(e)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"an input is not UTF-8 text ({e.reason} at byte {e.start}); "
                         "convert it, e.g. with iconv") from None
    return n_words, n_sents
