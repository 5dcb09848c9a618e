"""Parse gold-tokenized CoNLL-U and score it like the CoNLL 2018 shared task.

Scores are over all syntactic words (integer ids), punctuation included;
labels are compared on their universal part (before ':'). Multiword-token
lines and empty nodes are kept in written predictions, unchanged, and are
not scored (they are not syntactic words of the basic tree).

Input is checked before anything is parsed: a file that is not CoNLL-U
(missing, binary, wrong column count, a word without an integer HEAD...) and,
for gold files, a sentence whose heads are not a tree raise `ConlluError`,
which names the file, the line and the problem, so that no bad gold is
scored silently and no traceback points at the wrong culprit.
"""
import codecs
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import conllu
from spacy.language import Language
from spacy.tokens import Doc

from ..graph import is_projective
from ..graph import check_gold_tree

# Universal relations of content words (CLAS), as in the CoNLL 2018 evaluation.
CONTENT_DEPRELS = frozenset(
    "nsubj obj iobj csubj ccomp xcomp obl vocative expl dislocated advcl advmod "
    "discourse nmod appos nummod acl amod conj fixed flat compound list parataxis "
    "orphan goeswith reparandum root dep".split()
)
# Gold arc length buckets: |head - dependent| (the root arc is its own bucket).
LENGTH_BUCKETS = (("root", 0, 0), ("1", 1, 1), ("2", 2, 2), ("3-6", 3, 6), ("7+", 7, 10**9))
# Sentence length in words: where a greedy parser's early errors compound.
SENTENCE_LENGTH_BUCKETS = (("1-10", 1, 10), ("11-20", 11, 20), ("21-30", 21, 30), ("31+", 31, 10**9))

Tree = Tuple[List[int], List[str]]   # heads (1-based, 0 = root) and labels of a sentence's words


def universal(label: str) -> str:
    return label.split(":", 1)[0].lower()


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


def _sentence_blocks(path: Path, lines: Iterable[str], tree: bool = True):
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
    for first, block in _sentence_blocks(path, _text_lines(path)):
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


def doc_tree(doc: Doc) -> Tree:
    """The parse of a one-sentence doc (the whole doc is one tree)."""
    heads = [0 if t.head.i == t.i else t.head.i + 1 for t in doc]
    return heads, [t.dep_ for t in doc]


def parse_sentences(nlp: Language, sentences: List[conllu.TokenList],
                    batch_size: int = 256, tags: Optional[List[Dict]] = None) -> List[Tree]:
    """Parse each gold sentence as one doc; return a tree per sentence. With
    a list for `tags`, each sentence's predicted tags are appended to it
    (`predicted_tags`)."""
    docs = (sentence_doc(nlp.vocab, s) for s in sentences)
    trees = []
    for doc in nlp.pipe(docs, batch_size=batch_size):
        if tags is not None:
            tags.append(predicted_tags(doc))
        heads, labels = doc_tree(doc)
        if heads.count(0) != 1:
            raise ValueError(
                f"The pipeline returned {heads.count(0)} roots for one sentence; "
                "sentences are parsed as single docs and need exactly one root."
            )
        # spaCy writes the UD label "root" as "ROOT"; write it back as UD does.
        trees.append((heads, ["root" if label == "ROOT" else label for label in labels]))
    return trees


def write_conllu(sentences: List[conllu.TokenList], trees: List[Tree],
                 path: Union[str, Path]) -> None:
    """Write the sentences with predicted HEAD and DEPREL on the words; other
    columns, multiword tokens and empty nodes are copied from the input. The
    enhanced DEPS of words are cleared ('_'), as they are not predicted."""
    with open(path, "w", encoding="utf8") as out:
        for sentence, (heads, labels) in zip(sentences, trees):
            copy = conllu.TokenList([dict(t) for t in sentence], metadata=sentence.metadata)
            words = [t for t in copy if is_word(t)]
            for token, head, label in zip(words, heads, labels):
                token["head"] = head
                token["deprel"] = label
                token["deps"] = None
            out.write(copy.serialize())


# The universal features, which UFeats compares (the CoNLL 2018 scorer's list).
UNIVERSAL_FEATURES = frozenset(
    "PronType NumType Poss Reflex Foreign Abbr Gender Animacy Number Case Definite Degree "
    "VerbForm Mood Tense Aspect Voice Evident Polarity Person Polite".split()
)


def universal_feats(feats) -> str:
    """A FEATS value (a string or the conllu library's dict) as its
    universal features, sorted: what UFeats compares."""
    if feats is None:
        return ""
    if isinstance(feats, str):
        pairs = [item.split("=", 1) for item in feats.split("|") if item and item != "_"]
        items = [(p[0], p[1] if len(p) > 1 else "") for p in pairs]
    else:
        items = [(k, "" if v is None else str(v)) for k, v in feats.items()]
    return "|".join(sorted(f"{k}={v}" if v else k for k, v in items if k in UNIVERSAL_FEATURES))


@dataclass
class Counts:
    total: int = 0
    heads: int = 0
    labelled: int = 0

    def add(self, head_ok: bool, label_ok: bool) -> None:
        self.total += 1
        self.heads += head_ok
        self.labelled += head_ok and label_ok

    @property
    def uas(self) -> float:
        return 100.0 * self.heads / self.total if self.total else 0.0

    @property
    def las(self) -> float:
        return 100.0 * self.labelled / self.total if self.total else 0.0


def f1(correct: int, predicted: int, gold: int) -> Dict[str, float]:
    p = correct / predicted if predicted else 0.0
    r = correct / gold if gold else 0.0
    return {"precision": 100 * p, "recall": 100 * r,
            "f1": 100 * (2 * p * r / (p + r) if p + r else 0.0), "gold": gold}


@dataclass
class Evaluation:
    """Scores of predicted trees against gold ones for the same words."""

    words: Counts = field(default_factory=Counts)
    projective: Counts = field(default_factory=Counts)
    nonprojective: Counts = field(default_factory=Counts)
    by_length: Dict[str, Counts] = field(default_factory=lambda: {b[0]: Counts() for b in LENGTH_BUCKETS})
    by_sentence_length: Dict[str, Counts] = field(
        default_factory=lambda: {b[0]: Counts() for b in SENTENCE_LENGTH_BUCKETS})
    sentences: int = 0
    nonprojective_sentences: int = 0
    skipped_sentences: int = 0   # invalid gold trees left out (read_gold(skip_invalid=True))
    clas_correct: int = 0
    clas_gold: int = 0
    clas_predicted: int = 0
    label_correct: Counter = field(default_factory=Counter)
    label_gold: Counter = field(default_factory=Counter)
    label_predicted: Counter = field(default_factory=Counter)
    # Words whose UPOS, XPOS, universal features were predicted (and, for
    # XPOS, are in the gold file: a treebank without the column has none).
    upos: Counts = field(default_factory=Counts)
    xpos: Counts = field(default_factory=Counts)
    ufeats: Counts = field(default_factory=Counts)

    def add_upos(self, gold: Sequence[str], predicted: Sequence[str]) -> None:
        """Count one sentence's predicted UPOS tags (a pipeline that sets
        none gives "" and is not counted)."""
        self._add_tags(self.upos, gold, predicted)

    def add_tags(self, sentence: conllu.TokenList, predicted: Dict[str, Optional[List[str]]]
                 ) -> None:
        """Count one gold sentence's predicted tags (`predicted_tags`)."""
        words = [t for t in sentence if is_word(t)]
        if predicted["upos"] is not None:
            self.add_upos([t["upos"] or "" for t in words], predicted["upos"])
        if predicted["xpos"] is not None:
            self._add_tags(self.xpos, [t["xpos"] or "" for t in words], predicted["xpos"],
                           gold_needed=True)
        if predicted["feats"] is not None:
            self._add_tags(self.ufeats, [universal_feats(t["feats"]) for t in words],
                           [universal_feats(f) for f in predicted["feats"]], predicted_needed=False)

    @staticmethod
    def _add_tags(counts: Counts, gold: Sequence[str], predicted: Sequence[str],
                  gold_needed: bool = False, predicted_needed: bool = True) -> None:
        if len(gold) != len(predicted):
            raise ValueError("Gold and predicted sentences differ in length; "
                             "evaluation needs gold tokenization.")
        for g, p in zip(gold, predicted):
            if (p or not predicted_needed) and (g or not gold_needed):
                counts.add(g == p, True)

    def add(self, gold: Tree, predicted: Tree) -> None:
        (gold_heads, gold_labels), (pred_heads, pred_labels) = gold, predicted
        if len(gold_heads) != len(pred_heads):
            raise ValueError("Gold and predicted sentences differ in length; "
                             "evaluation needs gold tokenization.")
        projective = is_projective(gold_heads)
        self.sentences += 1
        self.nonprojective_sentences += not projective
        part = self.projective if projective else self.nonprojective
        n = len(gold_heads)
        sentence_part = self.by_sentence_length[
            next(name for name, lo, hi in SENTENCE_LENGTH_BUCKETS if lo <= n <= hi)]
        for d, (gh, gl, ph, pl) in enumerate(zip(gold_heads, gold_labels, pred_heads, pred_labels), 1):
            gl, pl = universal(gl), universal(pl)
            head_ok, label_ok = gh == ph, gl == pl
            self.words.add(head_ok, label_ok)
            part.add(head_ok, label_ok)
            sentence_part.add(head_ok, label_ok)
            length = 0 if gh == 0 else abs(gh - d)
            bucket = next(name for name, lo, hi in LENGTH_BUCKETS if lo <= length <= hi)
            self.by_length[bucket].add(head_ok, label_ok)
            self.label_gold[gl] += 1
            self.label_predicted[pl] += 1
            self.label_correct[gl] += head_ok and label_ok
            gold_content, pred_content = gl in CONTENT_DEPRELS, pl in CONTENT_DEPRELS
            self.clas_gold += gold_content
            self.clas_predicted += pred_content
            self.clas_correct += gold_content and pred_content and head_ok and label_ok

    @property
    def clas(self) -> float:
        return f1(self.clas_correct, self.clas_predicted, self.clas_gold)["f1"]

    def to_dict(self) -> dict:
        def counts(c: Counts) -> dict:
            return {"uas": c.uas, "las": c.las, "words": c.total}

        labels = sorted(set(self.label_gold) | set(self.label_predicted))
        return {
            "uas": self.words.uas,
            "las": self.words.las,
            "clas": self.clas,
            "upos": self.upos.uas if self.upos.total else None,
            "xpos": self.xpos.uas if self.xpos.total else None,
            "ufeats": self.ufeats.uas if self.ufeats.total else None,
            "words": self.words.total,
            "sentences": self.sentences,
            "nonprojective_sentences": self.nonprojective_sentences,
            "skipped_sentences": self.skipped_sentences,
            "projective": counts(self.projective),
            "nonprojective": counts(self.nonprojective),
            "by_length": {name: counts(c) for name, c in self.by_length.items()},
            "by_sentence_length": {name: counts(c) for name, c in self.by_sentence_length.items()},
            "labels": {
                label: f1(self.label_correct[label], self.label_predicted[label], self.label_gold[label])
                for label in labels
            },
        }

    def to_table(self) -> str:
        d = self.to_dict()
        lines = [
            f"{'':<22}{'UAS':>8}{'LAS':>8}{'words':>9}",
            f"{'all':<22}{d['uas']:8.2f}{d['las']:8.2f}{d['words']:9d}",
            f"{'projective sents':<22}{d['projective']['uas']:8.2f}{d['projective']['las']:8.2f}"
            f"{d['projective']['words']:9d}",
            f"{'non-projective sents':<22}{d['nonprojective']['uas']:8.2f}"
            f"{d['nonprojective']['las']:8.2f}{d['nonprojective']['words']:9d}",
        ]
        for name, c in d["by_length"].items():
            label = "root arc" if name == "root" else f"arc length {name}"
            lines.append(f"{label:<22}{c['uas']:8.2f}{c['las']:8.2f}{c['words']:9d}")
        for name, c in d["by_sentence_length"].items():
            label = f"sentences of {name}"
            lines.append(f"{label:<22}{c['uas']:8.2f}{c['las']:8.2f}{c['words']:9d}")
        for key, name in (("upos", "UPOS"), ("xpos", "XPOS"), ("ufeats", "UFeats")):
            if d[key] is not None:
                lines.append(f"{name} accuracy: {d[key]:.2f}")
        lines.append(f"CLAS F1: {d['clas']:.2f}   sentences: {d['sentences']} "
                     f"({d['nonprojective_sentences']} non-projective)   "
                     f"skipped (invalid gold): {d['skipped_sentences']}")
        lines.append("")
        lines.append(f"{'label':<14}{'P':>8}{'R':>8}{'F1':>8}{'gold':>8}")
        for label, s in d["labels"].items():
            lines.append(f"{label:<14}{s['precision']:8.2f}{s['recall']:8.2f}{s['f1']:8.2f}{s['gold']:8d}")
        return "\n".join(lines)


def evaluate_trees(gold: Iterable[Tree], predicted: Iterable[Tree]) -> Evaluation:
    gold, predicted = list(gold), list(predicted)
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted.")
    evaluation = Evaluation()
    for g, p in zip(gold, predicted):
        evaluation.add(g, p)
    return evaluation


def evaluate_sentences(nlp: Language, sentences: List[conllu.TokenList],
                       output: Optional[Union[str, Path]] = None,
                       skipped: int = 0) -> Evaluation:
    """Parse gold sentences (read_gold) with nlp and score them; optionally
    write the predictions as CoNLL-U. skipped: how many invalid sentences
    read_gold left out, for the report."""
    tags: List[Dict] = []
    trees = parse_sentences(nlp, sentences, tags=tags)
    if output is not None:
        write_conllu(sentences, trees, output)
    evaluation = evaluate_trees((gold_tree(s) for s in sentences), trees)
    for sentence, predicted in zip(sentences, tags):
        evaluation.add_tags(sentence, predicted)
    evaluation.skipped_sentences = skipped
    return evaluation


def predicted_tags(doc: Doc) -> Dict[str, Optional[List[str]]]:
    """A parsed doc's UPOS, XPOS and FEATS, each None where the pipeline sets none."""
    return {"upos": [t.pos_ for t in doc] if doc.has_annotation("POS") else None,
            "xpos": [t.tag_ for t in doc] if doc.has_annotation("TAG") else None,
            "feats": [str(t.morph) for t in doc] if doc.has_annotation("MORPH") else None}


def evaluate_pipeline(nlp: Language, gold_path: Union[str, Path],
                      output: Optional[Union[str, Path]] = None,
                      skip_invalid: bool = False) -> Evaluation:
    """Parse the gold-tokenized sentences of a CoNLL-U file with nlp and
    score them (see read_gold for invalid gold and skip_invalid)."""
    sentences, skipped = read_gold(gold_path, skip_invalid)
    return evaluate_sentences(nlp, sentences, output, len(skipped))
