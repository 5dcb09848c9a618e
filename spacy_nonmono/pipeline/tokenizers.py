"""Tokenizers for pipelines of any language: another language's, or one
learned from a treebank.

**Another language's.** The workflow trains multi-language (`xx`)
pipelines, whose tokenizer knows no language's rules; on raw text that costs
what the language's own rules would get right (Hungarian test set: tokens F1
96.4 with `xx`, 99.9 with `hu`). `language_tokenizer` builds spaCy's
tokenizer of a language (its exceptions, prefixes, suffixes, infixes, token
and URL patterns) over any pipeline's vocab, so that a trained pipeline can
tokenize as that language does: `use_language_tokenizer(nlp, "hu")`, or in a
config

    [nlp.tokenizer]
    @tokenizers = "spacy_nonmono.LanguageTokenizer.v1"
    lang = "hu"

**Learned from a treebank.** `use_treebank_tokenizer(nlp, "train.conllu",
lang="en")` gives a pipeline a tokenizer that splits text as the training
treebank (CoNLL-U) does; in a config, `spacy_nonmono.TreebankTokenizer.v1`
learns it at `nlp.initialize()` from `[initialize.tokenizer] conllu_path`
(docs/configuration.md). It starts from spaCy's rules of the language (`xx`
where spaCy has none) and learns, from where they cut the treebank's raw
text otherwise than the treebank: affix patterns (`learn_treebank_rules`,
step 1), special cases (steps 2 and 3) and the runs of words that are one
surface token (`learn_multiword_tokens`), which `TreebankTokenizer` records
on each Doc (`doc.user_data["multiword_tokens"]`). The algorithm, why it is
so, and what it costs: docs/tokenization.md.
"""
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import (Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

import conllu
import srsly
from spacy.attrs import SPACY
from spacy.language import Language
from spacy.strings import get_string_id
from spacy.symbols import ORTH
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc
from spacy.util import (compile_infix_regex, compile_prefix_regex, compile_suffix_regex,
                        get_lang_class, registry)
from spacy.vocab import Vocab

from ..conllu_io import MULTIWORD_TOKENS, gold_documents, read_conllu, surface_tokens

Pieces = Tuple[str, ...]   # a chunk as the treebank splits it

# Learning settings (TreebankTokenizer.initialize, learn_treebank_tokenizer).
MIN_AFFIX_COUNT = 5
MIN_AFFIX_RATIO = 0.9
MIN_EXCEPTION_COUNT = 1
MAX_AFFIX_ROUNDS = 5


@dataclass
class TokenizerRules:
    """What a spaCy tokenizer is made of: prefix, suffix and infix patterns
    (regular expressions, tried in order), special cases, token and URL
    matchers."""

    prefixes: List[str] = field(default_factory=list)
    suffixes: List[str] = field(default_factory=list)
    infixes: List[str] = field(default_factory=list)
    exceptions: Dict[str, List[Dict]] = field(default_factory=dict)
    token_match: Optional[Callable] = None
    url_match: Optional[Callable] = None

    @classmethod
    def of_language(cls, lang: str) -> "TokenizerRules":
        """spaCy's rules of language `lang` (ValueError for a language
        spaCy does not have)."""
        try:
            defaults = get_lang_class(lang).Defaults
        except ImportError:
            raise ValueError(f"spaCy has no language {lang!r}") from None
        return cls(list(defaults.prefixes or []), list(defaults.suffixes or []),
                   list(defaults.infixes or []), dict(defaults.tokenizer_exceptions),
                   defaults.token_match, defaults.url_match)

    def tokenizer(self, vocab: Vocab, cls: type = Tokenizer) -> Tokenizer:
        def pattern(compile, rules):
            return compile(rules) if rules else None

        prefixes = pattern(compile_prefix_regex, self.prefixes)
        suffixes = pattern(compile_suffix_regex, self.suffixes)
        infixes = pattern(compile_infix_regex, self.infixes)
        return cls(vocab, rules=self.exceptions,
                   prefix_search=prefixes.search if prefixes else None,
                   suffix_search=suffixes.search if suffixes else None,
                   infix_finditer=infixes.finditer if infixes else None,
                   token_match=self.token_match, url_match=self.url_match)


def language_tokenizer(lang: str, vocab: Vocab) -> Tokenizer:
    """spaCy's tokenizer of language `lang` over `vocab` (ValueError for a
    language spaCy does not have)."""
    return TokenizerRules.of_language(lang).tokenizer(vocab)


def use_language_tokenizer(nlp: Language, lang: str) -> Language:
    """Give the pipeline language `lang`'s tokenizer (in place)."""
    nlp.tokenizer = language_tokenizer(lang, nlp.vocab)
    return nlp


@registry.tokenizers("spacy_nonmono.LanguageTokenizer.v1")
def make_language_tokenizer(lang: str) -> Callable[[Language], Tokenizer]:
    """The tokenizer of language `lang` in a pipeline of any language."""
    language_tokenizer(lang, Vocab())     # an unknown language fails when the config loads

    def create(nlp: Language) -> Tokenizer:
        return language_tokenizer(lang, nlp.vocab)

    return create


# ---------------------------------------------------------------------------
# The treebank's chunks


def base_language(lang: str) -> str:
    """The language whose rules a treebank tokenizer starts from: `lang`
    where spaCy has it, else "xx"."""
    try:
        get_lang_class(lang)
    except ImportError:
        return "xx"
    return lang


def file_language(path: Union[str, Path]) -> str:
    """The language of a UD file, by the code its name starts with
    (hu-ud-test.conllu, en_ewt-ud-test.conllu), where spaCy has it; else
    "xx"."""
    return base_language(Path(path).name.split("-")[0].split("_")[0])


def spells(form: str, words: Sequence[str]) -> bool:
    """Whether a token's words spell it (their FORMs make its FORM)."""
    return "".join(words) == form


def treebank_chunks(sentences: Sequence[conllu.TokenList]) -> List[List[Pieces]]:
    """The sentences' raw text as `gold_documents` rebuilds it, each
    document as its chunks (cut at whitespace) and each chunk as its pieces:
    its surface tokens, a multiword token replaced by its words where they
    spell it. A token whose FORM holds a space spans chunks: they are kept
    together, as one chunk of pieces with spaces."""
    pieces = iter([piece for sentence in sentences
                   for form, words, _ in surface_tokens(sentence)
                   for piece in (words if spells(form, words) else [form])])
    documents = []
    for text in gold_documents(sentences):
        chunks, taken, length, wanted = [], [], 0, 0
        for chunk in text.split():
            wanted += len(chunk)
            while length < wanted:
                taken.append(next(pieces))
                length += len(_strip(taken[-1]))
            if length == wanted:
                chunks.append(tuple(taken))
                taken, length, wanted = [], 0, 0
        documents.append(chunks)
    return documents


def _strip(text: str) -> str:
    return "".join(text.split())


# ---------------------------------------------------------------------------
# Learning

AFFIXES = ("prefixes", "suffixes", "infixes")


@dataclass
class _Chunk:
    """A distinct chunk: its text, the treebank's pieces, how often it
    occurs, and the offsets where the treebank splits it."""

    text: str
    pieces: Pieces
    count: int
    cuts: frozenset


def _cuts(pieces: Sequence[str]) -> frozenset:
    offsets, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        offsets.append(at)
    return frozenset(offsets)


@dataclass
class LearnedRules:
    """A treebank's tokenizer: the base rules, the affix patterns added
    (tried before the base's) and removed (the base's), by kind
    ("prefixes", "suffixes", "infixes"), and the special cases learned
    (string -> pieces)."""

    base: TokenizerRules
    added: Dict[str, List[str]] = field(default_factory=lambda: {k: [] for k in AFFIXES})
    removed: Dict[str, List[str]] = field(default_factory=lambda: {k: [] for k in AFFIXES})
    exceptions: Dict[str, Pieces] = field(default_factory=dict)
    multiword_tokens: Dict[str, Pieces] = field(default_factory=dict)
    multiword_tails: List[Pieces] = field(default_factory=list)

    def rules(self, kind: Optional[str] = None, pattern: Optional[str] = None,
              add: bool = True) -> TokenizerRules:
        """The rules, with `pattern` of `kind` added or removed if given."""
        rules = TokenizerRules(token_match=self.base.token_match, url_match=self.base.url_match)
        for name in AFFIXES:
            added, removed = list(self.added[name]), set(self.removed[name])
            if name == kind and add:
                added.append(pattern)
            elif name == kind:
                removed.add(pattern)
            setattr(rules, name, added + [p for p in getattr(self.base, name) if p not in removed])
        rules.exceptions = {**self.base.exceptions,
                            **{key: [{ORTH: piece} for piece in pieces]
                               for key, pieces in self.exceptions.items()}}
        return rules


def learn_treebank_rules(sentences: Sequence[conllu.TokenList], lang: str = "xx",
                         min_affix_count: int = MIN_AFFIX_COUNT,
                         min_affix_ratio: float = MIN_AFFIX_RATIO,
                         min_exception_count: int = MIN_EXCEPTION_COUNT) -> LearnedRules:
    """Learn how the treebank `sentences` split text, on top of spaCy's
    rules of `lang` (xx where spaCy does not have it); see the module."""
    counts = Counter(chunk for document in treebank_chunks(sentences) for chunk in document
                     if all(_strip(piece) == piece for piece in chunk))
    chunks = [_Chunk("".join(pieces), pieces, n, _cuts(pieces)) for pieces, n in counts.items()]
    learned = LearnedRules(TokenizerRules.of_language(base_language(lang)))
    vocab = Vocab()   # not the pipeline's: learning tokenizes a lot of text

    def outputs(rules: TokenizerRules, which: Optional[List[_Chunk]] = None) -> List[Pieces]:
        if which is not None:   # a few chunks: their special cases only (much faster to load)
            texts = "\n".join(chunk.text for chunk in which)
            rules.exceptions = {key: value for key, value in rules.exceptions.items()
                                if key in texts}
        tokenizer = rules.tokenizer(vocab)
        return [tuple(token.text for token in tokenizer(chunk.text))
                for chunk in (chunks if which is None else which)]

    tried = set()
    for _ in range(MAX_AFFIX_ROUNDS):
        current = outputs(learned.rules())
        edits = []
        for kind, patterns, add in _affix_candidates(chunks, current, learned, min_affix_count):
            for pattern in patterns:   # the first that helps, if any
                if (kind, pattern, add) in tried:
                    continue
                tried.add((kind, pattern, add))
                if _helps(chunks, current, kind, pattern, add, learned, outputs,
                          min_affix_count, min_affix_ratio):
                    edits.append((kind, pattern, add))
                    break
        if not edits:
            break
        for kind, pattern, add in edits:
            (learned.added if add else learned.removed)[kind].append(pattern)
    tokenizer = learned.rules().tokenizer(vocab)
    learned.exceptions.update(_run_exceptions(
        chunks, [tuple(token.text for token in tokenizer(chunk.text)) for chunk in chunks],
        tokenizer, min_exception_count))
    learned.exceptions.update(_chunk_exceptions(chunks, outputs(learned.rules()),
                                                min_exception_count))
    learned.multiword_tokens, learned.multiword_tails = learn_multiword_tokens(
        sentences, min_affix_count, min_affix_ratio, min_exception_count)
    return learned


def _affix_candidates(chunks: List[_Chunk], outputs: List[Pieces], learned: LearnedRules,
                      min_count: int) -> List[Tuple[str, List[str], bool]]:
    """Edits of the affix patterns worth trying, as (kind, patterns to try
    in turn, add): a piece the output leaves unsplit at the start of a
    chunk (after the pieces it got right) as a prefix, at the end as a
    suffix, strictly inside an output token as an infix, each literal and
    then only next to a letter or digit ("-" of "Gaza-Streifen" but not of
    "--"); a base pattern that makes a cut the treebank does not make, to
    remove. Each in at least min_count distinct chunks: an affix serves many
    words ("and" of "and/or" is one chunk's, however frequent)."""
    pieces: List[Counter] = [Counter(), Counter(), Counter()]
    wrong_cuts = []   # chunks with a cut the treebank does not make
    for chunk, output in zip(chunks, outputs):
        gold = chunk.pieces
        if output == gold:
            continue
        if _cuts(output) - chunk.cuts:
            wrong_cuts.append((chunk, _cuts(output) - chunk.cuts))
        for side, (g, o) in enumerate(((gold, output), (gold[::-1], output[::-1]))):
            i = 0
            while i < min(len(g), len(o)) and g[i] == o[i]:
                i += 1
            if i < len(g) - 1 and i < len(o) and len(o[i]) > len(g[i]) and \
                    (o[i].startswith(g[i]) if side == 0 else o[i].endswith(g[i])):
                pieces[side][g[i]] += 1
        ends, at = set(), 0
        for token in output:
            at += len(token)
            ends.add(at)
        start = len(gold[0])
        for piece in gold[1:-1]:   # inside an output token: no output cut from start to end
            if not any(start <= cut <= start + len(piece) for cut in ends):
                pieces[2][piece] += 1
            start += len(piece)
    candidates = []
    for kind, counter in zip(AFFIXES, pieces):
        for piece, n in counter.items():
            literal = re.escape(piece)
            variants = [literal, _next_to_word(kind, literal)]
            if n >= min_count and not set(variants) & set(learned.added[kind]):
                candidates.append((kind, variants, True))
    removed = Counter()
    for kind in AFFIXES:
        for pattern in getattr(learned.base, kind):
            if pattern in learned.removed[kind]:
                continue
            regex = re.compile(_anchored(kind, pattern))
            for chunk, cuts in wrong_cuts:
                if any(cut in cuts for cut in _pattern_cuts(kind, regex, chunk.text)):
                    removed[kind, pattern] += 1
    candidates += [(kind, [pattern], False) for (kind, pattern), n in removed.items()
                   if n >= min_count]
    return candidates


def _next_to_word(kind: str, literal: str) -> str:
    """The pattern `literal` where it touches a letter or digit on the
    side(s) it is cut from."""
    before, after = r"(?<=[^\W_])", r"(?=[^\W_])"
    return {"prefixes": literal + after, "suffixes": before + literal,
            "infixes": before + literal + after}[kind]


def _anchored(kind: str, pattern: str) -> str:
    """A pattern as spaCy compiles it (compile_prefix_regex...)."""
    return {"prefixes": f"^(?:{pattern})", "suffixes": f"(?:{pattern})$",
            "infixes": pattern}[kind]


def _pattern_cuts(kind: str, regex: re.Pattern, text: str) -> List[int]:
    """Where a compiled affix pattern would cut the text (inside it)."""
    if kind == "infixes":
        spots = [at for m in regex.finditer(text) for at in (m.start(), m.end())]
    else:
        m = regex.search(text)
        spots = [] if m is None else [m.end() if kind == "prefixes" else m.start()]
    return [at for at in spots if 0 < at < len(text)]


def _helps(chunks: List[_Chunk], current: List[Pieces], kind: str, pattern: str, add: bool,
           learned: LearnedRules, outputs: Callable, min_count: int, min_ratio: float) -> bool:
    """Whether the edit moves the output toward the treebank in at least
    min_count distinct chunks and min_ratio of the chunk occurrences whose
    output it changes (errors: cuts made or missed)."""
    # Where the pattern occurs at all: an affix may be cut after others ("|" of "word|.").
    regex = re.compile(pattern)
    touched = [k for k, chunk in enumerate(chunks) if regex.search(chunk.text)]
    after = outputs(learned.rules(kind, pattern, add), [chunks[k] for k in touched])
    better = worse = better_chunks = 0
    for k, output in zip(touched, after):
        chunk = chunks[k]
        change = len(_cuts(output) ^ chunk.cuts) - len(_cuts(current[k]) ^ chunk.cuts)
        if change < 0:
            better, better_chunks = better + chunk.count, better_chunks + 1
        elif change > 0:
            worse += chunk.count
    return better_chunks >= min_count and better >= min_ratio * (better + worse)


def _run_exceptions(chunks: List[_Chunk], outputs: List[Pieces], tokenizer: Tokenizer,
                    min_count: int) -> Dict[str, Pieces]:
    """Special cases for the shortest runs of pieces that cover where each
    chunk's output differs, split as the treebank splits them most often."""
    keys = set()
    for chunk, output in zip(chunks, outputs):
        differ = chunk.cuts ^ _cuts(output)
        if differ:
            starts = [0, *sorted(chunk.cuts)]
            ends = [*sorted(chunk.cuts), len(chunk.text)]
            first = max(k for k, start in enumerate(starts) if start < min(differ))
            last = min(k for k, end in enumerate(ends) if end > max(differ))
            keys.add("".join(chunk.pieces[first:last + 1]))
    longest = max(map(len, keys), default=0)
    votes: Dict[str, Counter] = defaultdict(Counter)
    for chunk in chunks:   # every occurrence of a key as a run of pieces votes
        pieces = chunk.pieces
        for i in range(len(pieces)):
            run = ""
            for j in range(i, len(pieces)):
                run += pieces[j]
                if len(run) > longest:
                    break
                if run in keys:
                    votes[run][pieces[i:j + 1]] += chunk.count
    exceptions = {}
    for key, splits in votes.items():
        pieces, n = splits.most_common(1)[0]
        if n >= min_count and tuple(token.text for token in tokenizer(key)) != pieces:
            exceptions[key] = pieces
    return exceptions


def _chunk_exceptions(chunks: List[_Chunk], outputs: List[Pieces],
                      min_count: int) -> Dict[str, Pieces]:
    """Special cases for whole chunks whose most frequent split the rules
    still do not produce."""
    votes: Dict[str, Counter] = defaultdict(Counter)
    output_of = {}
    for chunk, output in zip(chunks, outputs):
        votes[chunk.text][chunk.pieces] += chunk.count
        output_of[chunk.text] = output
    exceptions = {}
    for text, splits in votes.items():
        pieces, n = splits.most_common(1)[0]
        if n >= min_count and output_of[text] != pieces:
            exceptions[text] = pieces
    return exceptions


# ---------------------------------------------------------------------------
# Spelled multiword tokens

WORDLIKE = re.compile(r"[^\W_]")   # a letter or digit: what a tail's first word needs


def learn_multiword_tokens(sentences: Sequence[conllu.TokenList],
                           min_tail_count: int = MIN_AFFIX_COUNT,
                           min_tail_ratio: float = MIN_AFFIX_RATIO,
                           min_count: int = MIN_EXCEPTION_COUNT
                           ) -> Tuple[Dict[str, Pieces], List[Pieces]]:
    """The treebank's spelled multiword tokens, as (forms, tails): each
    FORM of one (its words spell it) -> its most frequent words, if it is a
    multiword token at least `min_count` times and more often than its words
    occur as separate surface tokens with no space between; and the tails
    (the words after the first: English "'s", "n't") that make a multiword
    token with whatever word comes before, glued: those of spelled
    multiword tokens with at least `min_tail_count` distinct first words
    (containing a letter or digit), in at least `min_tail_ratio` of the
    places where the tail follows such a word with no space between."""
    documents = [surface_tokens(sentence) for sentence in sentences]
    splits: Dict[str, Counter] = defaultdict(Counter)
    tail_words: Dict[Pieces, set] = defaultdict(set)
    tail_counts: Counter = Counter()
    for tokens in documents:
        for form, words, _ in tokens:
            if len(words) > 1 and spells(form, words):
                splits[form][tuple(words)] += 1
                if WORDLIKE.search(words[0]):
                    tail_words[tuple(words[1:])].add(words[0])
                    tail_counts[tuple(words[1:])] += 1
    forms = {form: counts.most_common(1)[0] for form, counts in splits.items()}
    by_first: Dict[str, List[Tuple[str, Pieces]]] = defaultdict(list)
    for form, (words, _) in forms.items():
        by_first[words[0]].append((form, words))
    tails_by_first: Dict[str, List[Pieces]] = defaultdict(list)
    for tail in tail_counts:
        tails_by_first[tail[0]].append(tail)
    plain: Counter = Counter()        # the words as separate surface tokens, glued
    plain_tails: Counter = Counter()
    for tokens in documents:
        for i, (form, words, _) in enumerate(tokens):
            if len(words) != 1:
                continue
            for key, run in by_first.get(form, ()):
                if _glued_run(tokens, i, run):
                    plain[key] += 1
            if i and tokens[i - 1][2] and WORDLIKE.search(tokens[i - 1][0]):
                for tail in tails_by_first.get(form, ()):
                    if _glued_run(tokens, i, tail):
                        plain_tails[tail] += 1
    kept = {form: words for form, (words, n) in forms.items()
            if n >= min_count and n > plain[form]}
    tails = [tail for tail, n in tail_counts.items()
             if len(tail_words[tail]) >= min_tail_count
             and n >= min_tail_ratio * (n + plain_tails[tail])]
    return kept, sorted(tails)


def _glued_run(tokens: List[Tuple[str, List[str], bool]], i: int, words: Pieces) -> bool:
    """Whether the surface tokens from i are these words, each a token of
    one word, with no space between them."""
    run = tokens[i:i + len(words)]
    return len(run) == len(words) and \
        all(len(w) == 1 and form == word for (form, w, _), word in zip(run, words)) and \
        all(glued for _, _, glued in run[:-1])


# ---------------------------------------------------------------------------
# In a pipeline


class TreebankTokenizer(Tokenizer):
    """spaCy's tokenizer, whose `initialize` learns its rules from a
    treebank on top of spaCy's rules of language `lang` (those it has until
    then), and the treebank's spelled multiword tokens: the Docs it makes
    record which runs of tokens are one surface token
    (`doc.user_data["multiword_tokens"]`, see `find_multiword_tokens`).
    Saved (`to_bytes`, `to_disk`) and pickled with both; it reads what a
    plain spaCy tokenizer saved (no multiword tokens)."""

    lang = "xx"
    # Until set_multiword_tokens: none (read-only defaults).
    multiword_tokens: Mapping[str, Pieces] = MappingProxyType({})   # FORM -> its words
    multiword_tails: Sequence[Pieces] = ()     # the words after any first word
    _second_words: frozenset = frozenset()     # hashes of the words that can follow a first one
    _forms_at: Mapping[Tuple[int, int], List[Tuple[int, ...]]] = MappingProxyType({})
    _tails_at: Mapping[int, List[Tuple[int, ...]]] = MappingProxyType({})

    def __call__(self, string: str) -> Doc:
        """Tokenize, and record the multiword tokens (spaCy's `pipe` calls
        this too)."""
        doc = Tokenizer.__call__(self, string)
        if self._second_words:
            spans = self.find_multiword_tokens(doc)
            if spans:
                doc.user_data[MULTIWORD_TOKENS] = spans
        return doc

    def find_multiword_tokens(self, doc: Doc) -> List[Tuple[int, int]]:
        """The (start, end) token spans of the doc that are one spelled
        multiword token, in order and not overlapping: tokens with no space
        between them that are the words of a learned FORM, else a word
        holding a letter or digit followed by a learned tail ("Wei" + "'s")."""
        if len(doc) < 2:
            return []
        both = doc.to_array([ORTH, SPACY]).ravel().tolist()   # no hash is 0 or 1
        second = self._second_words
        if second.isdisjoint(both):
            return []
        orth, spaced = both[0::2], both[1::2]
        spans: List[Tuple[int, int]] = []
        for j in [j for j in range(1, len(orth)) if orth[j] in second and not spaced[j - 1]]:
            i = j - 1
            if spans and i < spans[-1][1]:
                continue
            found = 0
            for words in self._forms_at.get((orth[i], orth[j]), ()):
                if tuple(orth[i:i + len(words)]) == words and \
                        not any(spaced[i:i + len(words) - 1]):
                    found = i + len(words)
                    break
            if not found and self._tails_at.get(orth[j]) and WORDLIKE.search(doc[i].text):
                for tail in self._tails_at[orth[j]]:
                    if tuple(orth[j:j + len(tail)]) == tail and \
                            not any(spaced[j:j + len(tail) - 1]):
                        found = j + len(tail)
                        break
            if found:
                spans.append((i, found))
        return spans

    def set_multiword_tokens(self, forms: Dict[str, Sequence[str]],
                             tails: Iterable[Sequence[str]] = ()) -> None:
        """Take these spelled multiword tokens (FORM -> its words) and
        tails (see `learn_multiword_tokens`), in place."""
        self.multiword_tokens = {form: tuple(words) for form, words in forms.items()
                                 if len(words) > 1 and spells(form, words)}
        self.multiword_tails = sorted(tuple(tail) for tail in tails if len(tail) > 0)
        forms_at: Dict[Tuple[int, int], List[Tuple[int, ...]]] = defaultdict(list)
        for words in self.multiword_tokens.values():
            keys = tuple(get_string_id(word) for word in words)
            forms_at[keys[:2]].append(keys)
        tails_at: Dict[int, List[Tuple[int, ...]]] = defaultdict(list)
        for tail in self.multiword_tails:
            keys = tuple(get_string_id(word) for word in tail)
            tails_at[keys[0]].append(keys)
        for index in (forms_at, tails_at):   # the longest first
            for key in index:
                index[key] = sorted(set(index[key]), key=len, reverse=True)
        self._forms_at, self._tails_at = dict(forms_at), dict(tails_at)
        self._second_words = frozenset([key[1] for key in forms_at] + list(tails_at))

    def _multiword_state(self) -> Dict:
        return {"forms": {form: list(words) for form, words in self.multiword_tokens.items()},
                "tails": [list(tail) for tail in self.multiword_tails]}

    def to_bytes(self, *, exclude=()) -> bytes:
        """spaCy's tokenizer state, and the multiword tokens (the field
        "multiword_tokens", which spaCy's own tokenizer ignores)."""
        data = super().to_bytes(exclude=exclude)
        if "multiword_tokens" in exclude:
            return data
        msg = srsly.msgpack_loads(data)
        msg["multiword_tokens"] = self._multiword_state()
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, bytes_data: bytes, *, exclude=()) -> "TreebankTokenizer":
        """Load `to_bytes`'s data, or a plain spaCy tokenizer's (no
        multiword tokens)."""
        super().from_bytes(bytes_data, exclude=exclude)
        if "multiword_tokens" not in exclude:
            state = srsly.msgpack_loads(bytes_data).get("multiword_tokens") or {}
            self.set_multiword_tokens(state.get("forms", {}), state.get("tails", []))
        return self

    def __reduce__(self):
        _, args, *_ = super().__reduce__()
        return _unpickle_treebank_tokenizer, (self.lang, *args), self._multiword_state()

    def __setstate__(self, state: Dict) -> None:
        self.set_multiword_tokens(state.get("forms", {}), state.get("tails", []))

    def initialize(self, get_examples: Optional[Callable] = None, *,
                   nlp: Optional[Language] = None, conllu_path: Optional[Path] = None,
                   min_affix_count: int = MIN_AFFIX_COUNT,
                   min_affix_ratio: float = MIN_AFFIX_RATIO,
                   min_exception_count: int = MIN_EXCEPTION_COUNT) -> None:
        """Learn the rules and the spelled multiword tokens from the CoNLL-U
        file `conllu_path` (the training examples lose multiword tokens:
        they are not read)."""
        if conllu_path is None:
            raise ValueError(
                "spacy_nonmono.TreebankTokenizer.v1 learns from a treebank: set "
                "[initialize.tokenizer] conllu_path to the training CoNLL-U file (in a config "
                "from `spacy-nonmono init-config --tokenizer treebank`: --paths.train_conllu)")
        learned = learn_treebank_rules(read_conllu(conllu_path), self.lang, min_affix_count,
                                       min_affix_ratio, min_exception_count)
        self.set_rules(learned.rules())
        self.set_multiword_tokens(learned.multiword_tokens, learned.multiword_tails)

    def set_rules(self, rules: TokenizerRules) -> None:
        """Take these rules (in place)."""
        made = rules.tokenizer(self.vocab)
        self.rules = {}   # first, so that each pattern set below reloads no special case
        for name in ("prefix_search", "suffix_search", "infix_finditer", "token_match",
                     "url_match"):
            setattr(self, name, getattr(made, name))
        self.rules = made.rules


def _unpickle_treebank_tokenizer(lang: str, vocab: Vocab, *args) -> TreebankTokenizer:
    tokenizer = TreebankTokenizer(vocab, *args)
    tokenizer.lang = lang
    return tokenizer


def treebank_base_tokenizer(lang: str, vocab: Vocab) -> TreebankTokenizer:
    """A TreebankTokenizer before learning: spaCy's rules of `lang` (xx
    where spaCy does not have it)."""
    base = base_language(lang)
    tokenizer = TokenizerRules.of_language(base).tokenizer(vocab, cls=TreebankTokenizer)
    tokenizer.lang = base
    return tokenizer


def learn_treebank_tokenizer(conllu_path: Union[str, Path], vocab: Vocab, lang: str = "xx",
                             **settings) -> TreebankTokenizer:
    """A tokenizer that splits text as the treebank in `conllu_path` does,
    learned on top of spaCy's rules of `lang` (xx where spaCy does not have
    it); settings: those of `TreebankTokenizer.initialize`."""
    tokenizer = treebank_base_tokenizer(lang, vocab)
    tokenizer.initialize(conllu_path=Path(conllu_path), **settings)
    return tokenizer


def use_treebank_tokenizer(nlp: Language, conllu_path: Union[str, Path],
                           lang: Optional[str] = None, **settings) -> Language:
    """Give the pipeline a tokenizer learned from the treebank in
    `conllu_path` (in place) on top of spaCy's rules of `lang` (default: the
    pipeline's language). The pipeline's config then names it as a config
    would (`[nlp.tokenizer]`: spacy_nonmono.TreebankTokenizer.v1 and its base
    language; `[initialize.tokenizer]`: this file and settings), so that
    `nlp.to_disk` and `spacy.load` (which finds our registered tokenizer)
    keep the learned rules and multiword tokens."""
    tokenizer = learn_treebank_tokenizer(conllu_path, nlp.vocab, lang or nlp.lang, **settings)
    nlp.tokenizer = tokenizer
    nlp.config["nlp"]["tokenizer"] = {"@tokenizers": "spacy_nonmono.TreebankTokenizer.v1",
                                      "lang": tokenizer.lang}
    nlp.config.setdefault("initialize", {})["tokenizer"] = {
        "conllu_path": str(conllu_path), "min_affix_count": MIN_AFFIX_COUNT,
        "min_affix_ratio": MIN_AFFIX_RATIO, "min_exception_count": MIN_EXCEPTION_COUNT,
        **settings}
    return nlp


@registry.tokenizers("spacy_nonmono.TreebankTokenizer.v1")
def make_treebank_tokenizer(lang: Optional[str] = None
                            ) -> Callable[[Language], TreebankTokenizer]:
    """A tokenizer learned from a treebank at `nlp.initialize()`
    ([initialize.tokenizer] conllu_path and the learning settings) on top of
    spaCy's rules of `lang` (default: the pipeline's language; xx where
    spaCy does not have it)."""

    def create(nlp: Language) -> TreebankTokenizer:
        return treebank_base_tokenizer(lang or nlp.lang, nlp.vocab)

    return create
