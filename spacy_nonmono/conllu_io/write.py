"""Writing CoNLL-U: parsed Docs as UD tools write them.

- `doc_to_conllu`: one parsed Doc -> CoNLL-U text: a block per sentence with
  `# sent_id` and `# text`, every token a word (ID, FORM, LEMMA, UPOS, XPOS,
  FEATS where the pipeline set them, HEAD and DEPREL where a parser did, "_"
  otherwise), `SpaceAfter=No` in MISC where no space follows the token.
  Whitespace tokens (spaCy makes one of a run of spaces or a line break)
  are not words in CoNLL-U: they are left out, and a word attached to one
  is attached to its nearest head that is a word. Multiword tokens: where
  `doc.user_data["multiword_tokens"]` (MULTIWORD_TOKENS; set by
  `TreebankTokenizer`) lists (start, end) token spans that are one surface
  token, a range line `start-end FORM _ ... _ MISC` (the words' FORMs
  joined) comes before the span's words, and `SpaceAfter=No` goes on the
  range line, not on the words, as the CoNLL-U format has it. A span that
  is not within one sentence, or whose tokens have space between them or
  are not all words, is written as plain words.
- `fill_sentence`: a sentence read from CoNLL-U (`conllu_sentences`) with
  the annotations of the Doc the pipeline made of its words; multiword
  tokens, empty nodes and comments kept.
- `write_conllu`: CoNLL-U text to a file, atomically (`files.atomic_output`).
"""
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import conllu
from spacy.tokens import Doc, Span

from ..files import atomic_output
from .read import is_word

ROOT_LABELS = ("ROOT", "root")
# doc.user_data key: the (start, end) token spans (end exclusive) that are
# one surface token, a multiword token, in order; kept by Doc.to_bytes.
MULTIWORD_TOKENS = "multiword_tokens"


def _value(text: str) -> str:
    return text if text else "_"


def _deprel(label: str) -> str:
    return "root" if label in ROOT_LABELS else _value(label)


def _word_heads(sent: Span, words: List) -> List[Optional[int]]:
    """The 1-based HEAD of each word of the sentence (0: the root), following
    a head that is a whitespace token up to one that is a word; None where
    the doc has no parse."""
    if not sent.doc.has_annotation("DEP"):
        return [None] * len(words)
    number = {token.i: k for k, token in enumerate(words, start=1)}
    heads = []
    for token in words:
        head = token.head
        while head.i not in number and head.head.i != head.i:
            head = head.head
        heads.append(0 if head.i == token.i or head.i not in number else number[head.i])
    return heads


def multiword_spans(sent: Span) -> Dict[int, int]:
    """The doc's multiword tokens (MULTIWORD_TOKENS) that can be written in
    this sentence: first token index -> end, for spans of at least two
    tokens within the sentence, all words (no whitespace token) with no
    space between them, not overlapping an earlier one."""
    doc = sent.doc
    spans, end = {}, sent.start
    for start, stop in sorted(tuple(span) for span in doc.user_data.get(MULTIWORD_TOKENS, ())):
        if start < end or start < sent.start or stop > sent.end or stop - start < 2:
            continue
        tokens = doc[start:stop]
        if any(token.is_space for token in tokens) or \
                any(token.whitespace_ for token in tokens[:-1]):
            continue
        spans[start], end = stop, stop
    return spans


def sentence_lines(sent: Span, sent_id: str, no_space_at_end: bool = False) -> List[str]:
    """The CoNLL-U lines of one sentence of a parsed doc (no blank line)."""
    doc = sent.doc
    words = [token for token in sent if not token.is_space]
    no_space = []   # of each word: no space follows it
    for k, token in enumerate(words, start=1):
        space = bool(token.whitespace_) or (token.i + 1 < len(doc) and doc[token.i + 1].is_space)
        no_space.append(no_space_at_end if k == len(words) else not space)
    multiword = multiword_spans(sent) if MULTIWORD_TOKENS in doc.user_data else {}
    lines = [f"# sent_id = {sent_id}", f"# text = {' '.join(sent.text.split())}"]
    inside = 0   # the end of the multiword token being written
    for k, (token, head) in enumerate(zip(words, _word_heads(sent, words)), start=1):
        if token.i in multiword:
            inside = multiword[token.i]
            last = k + inside - token.i - 1
            lines.append("\t".join([f"{k}-{last}", doc[token.i:inside].text] + ["_"] * 7 +
                                    ["SpaceAfter=No" if no_space[last - 1] else "_"]))
        feats = str(token.morph) if token.has_morph() else ""
        lines.append("\t".join([
            str(k), token.text, _value(token.lemma_), _value(token.pos_), _value(token.tag_),
            _value(feats), "_" if head is None else str(head),
            "_" if head is None else _deprel(token.dep_), "_",
            "SpaceAfter=No" if no_space[k - 1] and token.i >= inside else "_"]))
    return lines


def doc_to_conllu(doc: Doc, first_sent_id: int = 1, sent_id_prefix: str = "",
                  comments: Tuple[str, ...] = ()) -> str:
    """The doc as CoNLL-U (see the module): sentences numbered from
    first_sent_id, each `sent_id` prefixed by sent_id_prefix; `comments`
    (e.g. "newdoc id = a.txt", "newpar") go before the first sentence."""
    blocks = []
    sents = list(doc.sents) if doc.has_annotation("SENT_START") or \
        doc.has_annotation("DEP") else [doc[:]]
    for n, sent in enumerate(sents):
        if not any(not token.is_space for token in sent):
            continue
        # A sentence glued to the next one (no space between) ends in SpaceAfter=No.
        glued = n + 1 < len(sents) and not sent[-1].whitespace_ and not sent[-1].is_space
        lines = sentence_lines(sent, f"{sent_id_prefix}{first_sent_id + len(blocks)}", glued)
        if not blocks:
            lines = [f"# {comment}" for comment in comments] + lines
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)

# The columns a pipeline may set on a word besides HEAD and DEPREL.
TAG_COLUMNS = ("lemma", "upos", "xpos", "feats")


def doc_columns(doc: Doc) -> List[Dict[str, object]]:
    """What a parsed doc says of each of its words, by CoNLL-U column: the
    tag columns the pipeline set, HEAD and DEPREL where a parser did."""
    words = []
    for word, head in zip(doc, _word_heads(doc[:], list(doc))):
        columns: Dict[str, object] = {column: value for column, value in (
            ("lemma", word.lemma_), ("upos", word.pos_), ("xpos", word.tag_)) if value}
        if word.has_morph():
            columns["feats"] = conllu.parser.parse_dict_value(str(word.morph))
        if head is not None:
            columns["head"], columns["deprel"] = head, _deprel(word.dep_)
        words.append(columns)
    return words


def filled_sentence(sentence: conllu.TokenList, words: Sequence[Dict[str, object]],
                    keep_input: bool = True) -> str:
    """The sentence as CoNLL-U with each word's columns set from `words` (in
    order; `doc_columns`). A column not given keeps the input's value with
    `keep_input` (what `parse` does: the pipeline adds to the user's file),
    else is "_" (a prediction file: only what was predicted). Enhanced DEPS
    are cleared where a tree is given (they would describe another tree);
    multiword tokens, empty nodes and comments are kept."""
    copy = conllu.TokenList([dict(t) for t in sentence], metadata=sentence.metadata)
    for token, columns in zip((t for t in copy if is_word(t)), words):
        if not keep_input:
            token.update(lemma="_", upos="_", xpos="_", feats=None, head=None, deprel="_",
                         deps=None)
        token.update(columns)
        if "head" in columns:
            token["deps"] = None
    return copy.serialize()


def fill_sentence(sentence: conllu.TokenList, doc: Doc, keep_input: bool = True) -> str:
    """The sentence with the annotations of the doc the pipeline made of its
    words (`filled_sentence`)."""
    return filled_sentence(sentence, doc_columns(doc), keep_input)


def write_conllu(path: Union[str, Path], blocks: Iterable[str]) -> None:
    """CoNLL-U text (sentence blocks, each ending in a blank line) to a file;
    an existing file is replaced only once all of it is written."""
    with atomic_output(path) as out:
        for block in blocks:
            out.write(block)
