"""Score a parse of raw text against gold, as the CoNLL 2018 UD shared task does.

When a pipeline starts from raw text, its sentences, tokens and words need
not be the gold ones, so system and gold are first aligned through the text
they share. These are the definitions of the shared task's scorer
(conll18_ud_eval.py, https://universaldependencies.org/conll18/evaluation.html),
implemented here independently.

Text. Each side is read as one string of characters: the FORMs of its
surface tokens in order, with whitespace removed (a FORM may hold spaces, as
in "New York", and gold and system may put them differently). Both strings
must be equal; if not, `TextMismatchError` (a ValueError) names the first
differing position, with context and the sentence and token on each side.
Empty nodes (ids like 3.1) are skipped.

Spans. A surface token is a multi-word token (a "1-2" line) or a word not
inside one; its span is (start, end) in that string. A word inside a
multi-word token has the token's span. A sentence spans from its first to
its last character.

- Tokens, Sentences: a system span is correct when a gold span is equal.
- Words: words are aligned one to one, in order. Outside multi-word tokens,
  a gold and a system word align when their spans are equal. Where a
  multi-word token begins, on either side, a region is formed and its words
  are aligned by a longest common subsequence of their lowercased FORMs
  (whitespace removed outside multi-word tokens, as written inside; where
  several subsequences are longest, an earlier gold word is left out rather
  than a system word). The region is the official scorer's: it starts with
  that token (skipping at most one word of the other side that starts
  before it and is not in a multi-word token) and ends at the token's end,
  which grows to the end of every multi-word token taken in. Words are
  taken in order of their start (gold first on ties) until the next word of
  each side lies beyond the end: a multi-word-token word that starts at or
  after it, or another word that ends after it.
- Per-word metrics count the aligned pairs whose values agree: UPOS, XPOS,
  UFeats (the universal features of the official list, in any order; others,
  like Number[psor], are dropped), AllTags (UPOS, XPOS and UFeats), Lemmas
  (a gold lemma "_" accepts any), UAS (the system word's head is aligned to
  the gold word's head, or both are roots), LAS (UAS, and the DEPREL's
  universal part, before ':', is equal; case-sensitive, as officially).
- CLAS, MLAS, BLEX count content words only: universal DEPREL in the
  official list (CONTENT_DEPRELS: nsubj, obj, ..., root, dep; so not aux,
  case, cc, clf, cop, det, mark, punct). Gold counts gold content words,
  system counts system content words, and correct pairs are those with a
  gold content word and (CLAS) the LAS match; MLAS adds UPOS, UFeats and the
  word's functional children (universal DEPREL aux, case, cc, clf, cop, det,
  mark), as a list in order, each with its alignment, DEPREL, UPOS and
  UFeats; BLEX adds the lemma (as in Lemmas).

Precision is correct / system, recall correct / gold, F1 2 * correct /
(gold + system), each 0 when its denominator is 0 (as officially). `Score`
gives them in percent rounded to 2 decimals, like the official report
(Python's round(100 * ratio, 2): the exact binary value is rounded, halves
to even), with the counts to compute exact values from; `aligned` (per-word
metrics only, not Tokens, Sentences, Words) is the number of aligned pairs
counted, the denominator of the official "AligndAcc".

Input is checked as the official scorer checks it: words numbered 1, 2, ...
in each sentence, multi-word ranges that start at the next word, non-empty
FORMs of surface tokens, integer HEADs within the sentence, exactly one root
and no cycle; anything else is a ValueError naming the side and sentence.

Known differences from conll18_ud_eval.py (otherwise all counts and rounded
scores agreed with it on 40,000 random gold/system pairs with multi-word
tokens, spaces in FORMs and differing sentences, when this was written):
whitespace is every character for which str.isspace() holds (the official
script removes Unicode category Zs only; they differ on control characters
such as U+001C-U+001F and U+0085, and on U+2028/U+2029, none of which belong
in a FORM); a multi-word range may be followed by empty nodes before its
words (the official reader expects the words right after the range line);
words are checked to be numbered 1, 2, ... inside multi-word tokens too; a
feature named twice in FEATS counts once (the conllu package keeps one
value), which only invalid CoNLL-U has.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import conllu

from ..conllu_io import doc_to_conllu, gold_documents, read_conllu, write_conllu
from .metrics import WORD_METRICS, Score, Word, aligned_index, attach, count, universal_deprel
from .metrics import universal_feats as _universal_feats

METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
           "UAS", "LAS", "CLAS", "MLAS", "BLEX")
CONTEXT = 15       # characters shown either side of a text mismatch


class TextMismatchError(ValueError):
    """Gold and system are not the same text (whitespace removed)."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position


@dataclass(frozen=True)
class RawTextEvaluation:
    """The scores of every metric of METRICS, by name."""

    scores: Dict[str, Score]

    def __getitem__(self, metric: str) -> Score:
        return self.scores[metric]

    def to_dict(self) -> Dict[str, Dict[str, Union[int, float, None]]]:
        return {name: score.to_dict() for name, score in self.scores.items()}

    def table(self) -> str:
        """A text table like the official scorer's verbose report."""
        lines = [f"{'Metric':<11}| Precision |    Recall |  F1 Score | AligndAcc",
                 "-----------+-----------+-----------+-----------+-----------"]
        for name, s in self.scores.items():
            acc = "" if s.aligned_accuracy is None else f"{s.aligned_accuracy:10.2f}"
            lines.append(f"{name:<11}|{s.precision:10.2f} |{s.recall:10.2f} |{s.f1:10.2f} |{acc}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Reading one side


class _Surface(NamedTuple):
    """Where a word is in the text, which alignment reads."""
    start: int
    end: int
    in_mwt: bool
    form: str        # what LCS alignment compares: lowercased (outside multi-word
                     # tokens whitespace removed, as in the text; inside, as written)


@dataclass
class _Side:
    name: str
    text: str
    tokens: List[Tuple[int, int]]
    sentences: List[Tuple[int, int]]
    surfaces: List[_Surface]
    words: List[Word]
    token_origin: List[Tuple[int, str]]   # per token: sentence index, FORM as written
    sentence_names: List[str]


def _strip(form: str) -> str:
    return "".join(c for c in form if not c.isspace())


def _value(token, key: str) -> str:
    value = token.get(key)
    return "_" if value is None else str(value)


def _sentence_name(sentence, number: int) -> str:
    parts = [f"sentence {number + 1}"]
    sent_id = getattr(sentence, "metadata", {}).get("sent_id")
    if sent_id is not None:
        parts.append(f"sent_id = {sent_id}")
    line = getattr(sentence, "first_line", None)
    if line is not None:
        parts.append(f"from line {line}")
    return parts[0] if len(parts) == 1 else f"{parts[0]} ({', '.join(parts[1:])})"


def _read_side(sentences: Sequence[conllu.TokenList], name: str) -> _Side:
    pieces: List[str] = []
    tokens, spans, surfaces, words, origin, names = [], [], [], [], [], []
    offset = 0
    for number, sentence in enumerate(sentences):
        where = _sentence_name(sentence, number)
        names.append(where)
        first_word, sentence_start = len(words), offset
        expected, mwt_last, mwt_span = 1, 0, (0, 0)
        heads = []

        def fail(problem: str):
            raise ValueError(f"{name}, {where}: {problem}")

        def surface(form) -> Tuple[int, int]:
            nonlocal offset
            stripped = _strip(form or "")
            if not stripped:
                fail(f"empty FORM {form!r} (whitespace is removed)")
            pieces.append(stripped)
            tokens.append((offset, offset + len(stripped)))
            origin.append((number, form))
            offset += len(stripped)
            return tokens[-1]

        for token in sentence:
            tid = token.get("id")
            if isinstance(tid, tuple) and len(tid) == 3 and tid[1] == ".":
                continue   # empty node
            if isinstance(tid, tuple) and len(tid) == 3 and tid[1] == "-":
                first, last = tid[0], tid[2]
                if mwt_last >= expected or first != expected or last < first:
                    fail(f"multi-word token {first}-{last} does not start at the next word "
                         f"({expected}) or is not a range")
                mwt_last, mwt_span = last, surface(token.get("form"))
                continue
            if not isinstance(tid, int) or isinstance(tid, bool):
                fail(f"unknown token id {tid!r}")
            if tid != expected:
                fail(f"word id {tid} out of order (expected {expected})")
            expected += 1
            form = token.get("form") or ""
            if tid <= mwt_last:   # not part of the text: compared as written
                (start, end), compared = mwt_span, form
            else:
                (start, end), compared = surface(form), _strip(form)
            surfaces.append(_Surface(start, end, tid <= mwt_last, compared.lower()))
            words.append(Word(_value(token, "lemma"), _value(token, "upos"),
                              _value(token, "xpos"), _universal_feats(token.get("feats")),
                              universal_deprel(_value(token, "deprel"))))
            heads.append(token.get("head"))
        if mwt_last >= expected:
            fail(f"multi-word token ends at word {mwt_last}, after the last word")
        if not heads:
            fail("no words")
        _attach(words, first_word, heads, fail)
        spans.append((sentence_start, offset))
    return _Side(name, "".join(pieces), tokens, spans, surfaces, words, origin, names)


def _attach(words: List[Word], first: int, heads: List, fail: Callable) -> None:
    """Check one sentence's heads (a tree) and set its words' heads and
    functional children."""
    n = len(heads)
    for i, head in enumerate(heads):
        if not isinstance(head, int) or isinstance(head, bool) or not 0 <= head <= n:
            fail(f"HEAD {head!r} of word {i + 1} is not a word of the sentence or 0")
    if heads.count(0) != 1:
        fail(f"{heads.count(0)} roots (HEAD 0); a sentence needs exactly one")
    for i, head in enumerate(heads):
        seen, node = {i}, head
        while node != 0:
            if node - 1 in seen:
                fail(f"word {i + 1} is on a cycle of heads")
            seen.add(node - 1)
            node = heads[node - 1]
    attach(words, first, heads)


# ---------------------------------------------------------------------------
# Text check


def _check_text(gold: _Side, system: _Side) -> None:
    if gold.text == system.text:
        return
    a, b = gold.text, system.text
    position = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo, hi = max(0, position - CONTEXT), position + CONTEXT

    def describe(side: _Side) -> str:
        if position >= len(side.text):
            return f"{side.name} text ends there (after ...{side.text[lo:position]!r})"
        i = bisect.bisect_right(side.tokens, (position, float("inf"))) - 1
        number, form = side.token_origin[i]
        return (f"{side.name} has {side.text[position]!r} in token {form!r} of "
                f"{side.sentence_names[number]}: ...{side.text[lo:position]!r} + "
                f"{side.text[position:hi]!r}...")

    raise TextMismatchError(
        f"gold and system text (FORMs, whitespace removed) differ at character {position}: "
        f"{describe(gold)}; {describe(system)}", position)


# ---------------------------------------------------------------------------
# Word alignment


def _region(gold: List[_Surface], system: List[_Surface], gi: int, si: int):
    """Bounds (g0, s0, g1, s1) of the multi-word region starting at gold[gi] or
    system[si] (one of which is in a multi-word token); see the docstring."""
    if gold[gi].in_mwt:
        end = gold[gi].end
        if not system[si].in_mwt and system[si].start < gold[gi].start:
            si += 1
    else:
        end = system[si].end
        if gold[gi].start < system[si].start:
            gi += 1
    g0, s0 = gi, si

    def within(words: List[_Surface], i: int) -> bool:
        if i >= len(words):
            return False
        word = words[i]
        return word.start < end if word.in_mwt else word.end <= end

    while within(gold, gi) or within(system, si):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            word, gi = gold[gi], gi + 1
        else:
            word, si = system[si], si + 1
        if word.in_mwt:
            end = max(end, word.end)
    return g0, s0, gi, si


def _lcs(a: Sequence[str], b: Sequence[str]) -> List[Tuple[int, int]]:
    """Index pairs of a longest common subsequence of a and b; where a word
    of a can be left out without shortening it, it is."""
    n, m = len(a), len(b)
    # suffix[i][j]: LCS length of a[i:] and b[j:]
    suffix = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        here, below = suffix[i], suffix[i + 1]
        for j in range(m - 1, -1, -1):
            here[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], here[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif suffix[i + 1][j] == suffix[i][j]:
            i += 1
        else:
            j += 1
    return pairs


def _align(gold: List[_Surface], system: List[_Surface]) -> List[Tuple[int, int]]:
    """(gold index, system index) of the aligned words, in order."""
    pairs, gi, si = [], 0, 0
    while gi < len(gold) and si < len(system):
        g, s = gold[gi], system[si]
        if g.in_mwt or s.in_mwt:
            g0, s0, gi, si = _region(gold, system, gi, si)
            matched = _lcs([w.form for w in gold[g0:gi]], [w.form for w in system[s0:si]])
            pairs.extend((g0 + a, s0 + b) for a, b in matched)
        elif (g.start, g.end) == (s.start, s.end):
            pairs.append((gi, si))
            gi, si = gi + 1, si + 1
        elif g.start <= s.start:
            gi += 1
        else:
            si += 1
    return pairs


# ---------------------------------------------------------------------------
# Scoring


def _span_score(gold: List[Tuple[int, int]], system: List[Tuple[int, int]]) -> Score:
    return Score(len(gold), len(system), len(set(gold) & set(system)))


def _evaluate(gold: _Side, system: _Side) -> RawTextEvaluation:
    _check_text(gold, system)
    pairs = _align(gold.surfaces, system.surfaces)
    to_gold = aligned_index({s: g for g, s in pairs})
    scores = {
        "Tokens": _span_score(gold.tokens, system.tokens),
        "Sentences": _span_score(gold.sentences, system.sentences),
        "Words": Score(len(gold.words), len(system.words), len(pairs)),
    }
    for name in WORD_METRICS:
        scores[name] = count(name, gold.words, system.words, pairs, to_gold)
    return RawTextEvaluation({name: scores[name] for name in METRICS})


def evaluate_raw_text(gold: Sequence[conllu.TokenList],
                      system: Sequence[conllu.TokenList]) -> RawTextEvaluation:
    """Score system sentences against gold sentences (conllu TokenLists, e.g.
    from read_conllu or conllu.parse) of the same text, CoNLL 2018 style.
    Raises TextMismatchError (a ValueError) if the texts differ and ValueError
    for sentences that cannot be scored."""
    return _evaluate(_read_side(gold, "gold"), _read_side(system, "system"))


def evaluate_raw_text_files(gold_path: Union[str, Path],
                            system_path: Union[str, Path]) -> RawTextEvaluation:
    """evaluate_raw_text on two CoNLL-U files (read with read_conllu, which
    raises ConlluError for a file that is not CoNLL-U). Messages name the
    files."""
    gold = _read_side(read_conllu(gold_path), f"gold {gold_path}")
    system = _read_side(read_conllu(system_path), f"system {system_path}")
    return _evaluate(gold, system)


# ---------------------------------------------------------------------------
# A pipeline on the gold file's raw text


def evaluate_pipeline_raw_text(nlp, gold_path: Union[str, Path], batch_size: int = 64,
                               output: Optional[Union[str, Path]] = None):
    """Parse the gold file's raw text (`gold_documents`) with the whole
    pipeline (tokenizer, sentences, tags, parser) and score it against the
    gold file, CoNLL 2018 style. Returns the evaluation and the words/s of
    the pipeline (system words); `output` writes the parse as CoNLL-U."""
    import time

    gold = read_conllu(gold_path)
    texts = gold_documents(gold)
    start = time.perf_counter()
    parsed = list(nlp.pipe(texts, batch_size=batch_size))
    seconds = time.perf_counter() - start
    conllu_text, n = [], 0
    for doc in parsed:
        block = doc_to_conllu(doc, first_sent_id=n + 1)
        n += block.count("\n\n")
        conllu_text.append(block)
    system_text = "".join(conllu_text)
    system = conllu.parse(system_text)
    evaluation = _evaluate(_read_side(gold, f"gold {gold_path}"), _read_side(system, "system"))
    if output is not None:   # once scored: a parse that cannot be scored replaces nothing
        write_conllu(output, [system_text])
    words = sum(1 for doc in parsed for token in doc if not token.is_space)
    return evaluation, words / max(seconds, 1e-9)
