"""Reading CoNLL-U: files checked line by line, sentences as `conllu`
TokenLists, gold trees, and Docs of their words; raw text files as documents.

Input is checked before anything is parsed: a file that is not CoNLL-U
(missing, binary, wrong column count, a word without an integer HEAD...) and,
for gold files, a sentence whose heads are not a tree raise `ConlluError`,
which names the file, the line and the problem, so that no bad gold is
scored silently and no traceback points at the wrong culprit.
"""
import codecs
import itertools
import re
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import conllu
from spacy.tokens import Doc

from ..graph import check_gold_tree

Tree = Tuple[List[int], List[str]]   # heads (1-based, 0 = root) and labels of a sentence's words


def is_word(token) -> bool:
    return isinstance(token["id"], int)


class ConlluError(ValueError):
    """A CoNLL-U file that cannot be read or scored: the file, the line (None
    when the problem is the file as a whole) and what is wrong, so that the
    command line can say it in one line."""

    def __init__(self, path: Union[str, Path], problem: str, line: Optional[int] = None):
        self.path, self.problem, self.line = Path(path), problem, line
        where = str(path) if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {problem}")


COLUMNS = 10
WORD_ID = re.compile(r"[1-9][0-9]*")
OTHER_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*|[0-9]+\.[1-9][0-9]*")   # multiword token, empty node
HEAD = re.compile(r"-?[0-9]+")   # range and tree shape are checked per sentence (read_gold)


# What tells binary data from text in another encoding, in a file that is
# not UTF-8: the zlib header of a .spacy corpus (DocBin: compressed msgpack),
# or control bytes that no text has (tab, line and page breaks aside).
ZLIB_HEADERS = (b"\x78\x9c", b"\x78\xda")
BINARY_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def _text_lines(path: Path) -> List[str]:
    """The lines of a UTF-8 text file; anything else is a ConlluError, which
    tells text in another encoding (convert it) from binary data (a .spacy
    corpus given where CoNLL-U is needed is the usual mistake)."""
    if not path.exists():
        raise ConlluError(path, "no such file")
    if path.is_dir():
        raise ConlluError(path, "is a folder, not a CoNLL-U file")
    if path.suffix == ".spacy":
        raise ConlluError(path, "is a .spacy corpus; this needs a CoNLL-U file (.conllu)")
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ConlluError(path, "is UTF-16 text; CoNLL-U must be UTF-8: convert it, e.g. "
                          "with iconv -f utf-16 -t utf-8")
    nul = data.find(b"\0")   # valid UTF-8, but never in text
    if nul >= 0:
        raise _binary_data(path, data, nul)
    try:
        text = data.decode("utf-8-sig")   # a byte order mark is no reason to fail
    except UnicodeDecodeError as e:
        # Control bytes count only here: in valid UTF-8 text they are the
        # line checks' business, which name the line.
        control = BINARY_BYTES.search(data)
        if control or data.startswith(ZLIB_HEADERS):
            raise _binary_data(path, data, control.start() if control else 0) from None
        line, column = _position(data, e.start)
        raise ConlluError(path, f"not UTF-8 text (byte 0x{data[e.start]:02x} at column "
                          f"{column}); CoNLL-U must be UTF-8: convert it, e.g. with "
                          "iconv -f latin1 -t utf-8 if it is Latin-1", line) from None
    return [line.rstrip("\r") for line in text.split("\n")]


def _binary_data(path: Path, data: bytes, offset: int) -> ConlluError:
    return ConlluError(path, "not a UTF-8 text file (binary data; a .spacy corpus?); "
                       "this needs a CoNLL-U file", _position(data, offset)[0])


def _position(data: bytes, offset: int) -> Tuple[int, int]:
    """Line and column (1-based, in bytes) of a byte offset."""
    return data.count(b"\n", 0, offset) + 1, offset - data.rfind(b"\n", 0, offset)


def _line_problem(columns: List[str], expected_word: int, tree: bool = True) -> Optional[str]:
    """What is wrong with one token line (split on tabs), or None. Words must
    come in order 1, 2, 3... and have a FORM and (with `tree`) an integer
    HEAD and a DEPREL."""
    if len(columns) != COLUMNS:
        return f"expected {COLUMNS} tab-separated columns, found {len(columns)}"
    token_id, form, head, deprel = columns[0], columns[1], columns[6], columns[7]
    if OTHER_ID.fullmatch(token_id):
        return None
    if not WORD_ID.fullmatch(token_id):
        return (f"ID {token_id!r} is not a word id (1, 2, ...), a multiword range (1-2) "
                "or an empty node (1.1)")
    if int(token_id) != expected_word:
        return f"word ID {token_id} out of order (expected {expected_word})"
    if not form:
        return f"word {token_id} has an empty FORM"
    if not tree:
        return None
    if not HEAD.fullmatch(head):
        return f"HEAD {head!r} of word {token_id} is not an integer"
    if deprel in ("", "_"):
        return f"word {token_id} has no DEPREL ({deprel!r})"
    return None


def sentence_blocks(path: Path, lines: Iterable[str], tree: bool = True):
    """(first line number, lines) of each sentence of the lines (a list, or
    a file read as it goes); checks every token line (`_line_problem`)."""
    block, first, expected_word = [], 0, 1
    for number, line in enumerate(itertools.chain(lines, [""]), start=1):
        line = line.rstrip("\r\n")
        if line.strip():
            if not block:
                first, expected_word = number, 1
            block.append(line)
            if not line.startswith("#"):
                problem = _line_problem(line.split("\t"), expected_word, tree)
                if problem:
                    raise ConlluError(path, problem, number)
                expected_word += WORD_ID.fullmatch(line.split("\t", 1)[0]) is not None
        elif block:
            if expected_word == 1:
                raise ConlluError(path, "sentence has no words (only comments, multiword "
                                  "tokens or empty nodes)", first)
            yield first, block
            block = []


def read_conllu(path: Union[str, Path]) -> List[conllu.TokenList]:
    """The sentences of a CoNLL-U file, each with its first line number as
    `first_line`. Raises ConlluError for anything that is not well-formed
    CoNLL-U with a basic tree's columns filled in on every word, and for a
    file without sentences; heads are not checked to form a tree (read_gold)."""
    path = Path(path)
    sentences = []
    for first, block in sentence_blocks(path, _text_lines(path)):
        try:
            sentence = conllu.parse("\n".join(block) + "\n\n")[0]
        except conllu.exceptions.ParseException as e:
            raise ConlluError(path, f"cannot parse the sentence: {e}", first) from None
        sentence.first_line = first
        sentences.append(sentence)
    if not sentences:
        raise ConlluError(path, "no sentences (empty file)")
    return sentences


def sentence_name(sentence: conllu.TokenList) -> str:
    """How messages name a sentence: its sent_id when it has one."""
    sent_id = sentence.metadata.get("sent_id")
    return "sentence" if sent_id is None else f"sentence (sent_id = {sent_id})"


def tree_problem(heads: Sequence[int]) -> Optional[str]:
    """Why heads (1-based, 0 = root) are not a single-rooted tree over the
    words, or None. The engine's own check, so that evaluation and training
    reject the same trees."""
    try:
        check_gold_tree(list(heads))
    except ValueError as e:
        return str(e)
    return None


def read_gold(path: Union[str, Path], skip_invalid: bool = False
              ) -> Tuple[List[conllu.TokenList], List[ConlluError]]:
    """The gold sentences of a CoNLL-U file (read_conllu) whose heads form a
    tree, and the errors of the sentences left out. A sentence that is not a
    tree is a ConlluError naming it, unless skip_invalid: then it is skipped
    (scores of invalid gold would be meaningless). No valid sentence left is
    an error too."""
    path = Path(path)
    sentences, skipped = [], []
    for sentence in read_conllu(path):
        problem = tree_problem(gold_tree(sentence)[0])
        if problem is None:
            sentences.append(sentence)
            continue
        error = ConlluError(path, f"{sentence_name(sentence)} is not a tree: {problem}",
                            sentence.first_line)
        if not skip_invalid:
            raise error
        skipped.append(error)
    if not sentences:
        raise ConlluError(path, f"no valid sentence to score ({len(skipped)} skipped)")
    return sentences, skipped


def gold_tree(sentence: conllu.TokenList) -> Tree:
    words = [t for t in sentence if is_word(t)]
    return [int(t["head"]) for t in words], [t["deprel"] for t in words]


def sentence_doc(vocab, sentence: conllu.TokenList) -> Doc:
    """A one-sentence Doc of the sentence's syntactic words (gold tokens and
    sentence). A word's
    trailing space comes from SpaceAfter=No on it or on its multiword token."""
    words, spaces = [], []
    no_space_after = set()
    for t in sentence:
        misc = t["misc"] or {}
        if misc.get("SpaceAfter") == "No":
            last = t["id"][2] if isinstance(t["id"], tuple) and t["id"][1] == "-" else t["id"]
            no_space_after.add(last)
    for t in sentence:
        if is_word(t):
            words.append(t["form"])
            spaces.append(t["id"] not in no_space_after)
    if spaces:
        spaces[-1] = False
    # Gold segmentation: the doc is one sentence, which parsers that can
    # split sentences (spaCy's parser) must respect.
    sent_starts = [True] + [False] * (len(words) - 1) if words else []
    return Doc(vocab, words=words, spaces=spaces, sent_starts=sent_starts)



def text_documents(path: Path) -> Iterator[str]:
    """The paragraphs of a UTF-8 text file, streamed (see the module)."""
    paragraph: List[str] = []
    with _open_text(path) as lines:
        for line in lines:
            if line.strip():
                paragraph.append(line)
            elif paragraph:
                yield " ".join(" ".join(paragraph).split())
                paragraph = []
    if paragraph:
        yield " ".join(" ".join(paragraph).split())


def _open_text(path: Path):
    if not path.exists():
        raise ConlluError(path, "no such file")
    if path.is_dir():
        raise ConlluError(path, "is a folder, not a text file")
    with path.open("rb") as f:
        head = f.read(4096)
    if b"\0" in head:
        raise ConlluError(path, "not a text file (binary data)")
    return path.open(encoding="utf-8-sig", errors="strict")


def conllu_sentences(path: Path, vocab) -> Iterator[Tuple[conllu.TokenList, Doc]]:
    """The sentences of a CoNLL-U file, streamed, each with a Doc of its
    words. The file needs tokens only (HEAD and DEPREL may be "_"); any
    other problem is a ConlluError naming the line."""
    with _open_text(path) as lines:
        for first, block in sentence_blocks(path, lines, tree=False):
            try:
                sentence = conllu.parse("\n".join(block) + "\n\n")[0]
            except conllu.exceptions.ParseException as e:
                raise ConlluError(path, f"cannot parse the sentence: {e}", first) from None
            yield sentence, sentence_doc(vocab, sentence)


def gold_documents(sentences: Sequence[conllu.TokenList]) -> List[str]:
    """The raw text of a gold file, as documents: split where a sentence
    starts a new document or paragraph (`# newdoc`, `# newpar`), each the
    sentences' texts (their FORMs, a space after a token unless
    SpaceAfter=No) joined as the file spaces them."""
    documents: List[List[str]] = []
    for sentence in sentences:
        starts = not documents or any(key.startswith(("newdoc", "newpar"))
                                      for key in sentence.metadata)
        if starts:
            documents.append([])
        documents[-1].append(sentence_text(sentence))
    return ["".join(parts).strip() for parts in documents]


def document_blocks(text: str) -> List[str]:
    """The documents of a CoNLL-U text, each as CoNLL-U text: split before
    every sentence that starts a new document (`# newdoc`); the whole text
    where none does."""
    documents: List[List[str]] = []
    for block in text.split("\n\n"):
        block = block.strip("\n")
        if not block:
            continue
        if not documents or any(line.startswith("# newdoc") for line in block.split("\n")):
            documents.append([])
        documents[-1].append(block)
    return ["\n\n".join(blocks) + "\n\n" for blocks in documents]


def sentence_text(sentence: conllu.TokenList) -> str:
    """The sentence's text, with the space that follows it (if any)."""
    return "".join(form + ("" if glued else " ") for form, _, glued in surface_tokens(sentence))


def surface_tokens(sentence: conllu.TokenList) -> List[Tuple[str, List[str], bool]]:
    """(FORM, its words' FORMs, whether no space follows it) of each surface
    token of a sentence: a multiword token (SpaceAfter on its range line) or
    a word outside one; empty nodes are left out."""
    tokens: List[Tuple[str, List[str], bool]] = []
    last = 0   # the last word of the multiword token being read
    for token in sentence:
        token_id = token["id"]
        glued = (token["misc"] or {}).get("SpaceAfter") == "No"
        if isinstance(token_id, tuple):
            if token_id[1] == "-":
                last = token_id[2]
                tokens.append((token["form"], [], glued))
            continue   # an empty node
        if token_id <= last:
            tokens[-1][1].append(token["form"])
        else:
            tokens.append((token["form"], [token["form"]], glued))
    return tokens
