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
(docs/configuration.md). It reads the CoNLL-U file itself: spaCy's
converter, and so the training examples, keep the words of a multiword token
and lose its surface form (German "zum" becomes "zu dem" in the text), so
they cannot teach how the text is cut.

What it learns from. The treebank's raw text, rebuilt as
`evaluation.raw_text.gold_documents` rebuilds it (FORMs, a space after a
token unless SpaceAfter=No), is cut at whitespace into chunks, which is all
a spaCy tokenizer ever splits; each chunk has its treebank pieces: its
surface tokens, a multiword token ("1-2" line) replaced by its words where
they spell it (their FORMs make its FORM: English "don't" = "do" + "n't"),
so that the parser gets the words it is trained on, and kept whole where
they do not (German "zum" = "zu dem": a tokenizer only cuts text, it cannot
write "dem"). Such a token is then one word for the rest of the pipeline,
tagged and attached as one word, and its other words are missing (de_gsd
test set: 2.5 words F1 lost). A spelled multiword token cut into its words
costs tokens F1 as the CoNLL 2018 scorer counts it, since the pipeline's
CoNLL-U has no multiword-token lines (en_ewt test set: 2.1 tokens F1, 0
words F1; docs/results/tokenization).

The algorithm starts from a base, spaCy's rules of the treebank's language
where spaCy has one, else those of `xx`, and tokenizes the distinct chunks
with the rules so far, looking at where the output differs from the
treebank's pieces:

1. Affix patterns, edited where the output errs consistently. Candidates: a
   piece the output leaves unsplit at the start of a chunk (after the
   pieces it got right) as a prefix, at the end as a suffix, strictly
   inside an output token as an infix; each literal, else only next to a
   letter or digit ("-" of "Gaza-Streifen" but not of "--"); and a base
   pattern that makes cuts the treebank does not make, to be removed. A
   candidate must come from at least `min_affix_count` distinct chunks (an
   affix serves many words: the "and" of "and/or" is one chunk's, however
   frequent) and is kept when, among the chunk occurrences whose output it
   changes, at least `min_affix_ratio` get closer to the treebank (fewer
   cuts made or missed wrongly): the split must happen in most chunks the
   pattern reaches, so Latin "que" is no suffix if the treebank does not
   split "quoque" and "atque". Kept patterns are tried before the base's;
   the step repeats while it keeps some (a new prefix can uncover the next
   one), each candidate tried once.
2. Exceptions for what the affixes still get wrong: each chunk still split
   differently gives the shortest run of its pieces that covers every
   difference ("etc." of "(etc.),"); that string becomes a special case,
   split as the treebank splits it most often where it occurs as a run of
   pieces, if that split occurs at least `min_exception_count` times and
   the rules do not produce it already. A special case applies wherever the
   tokenizer's affix peeling reaches the string, so it also serves "etc.)".
   Abbreviations the base cuts but the treebank keeps ("Ft."), and
   multiword tokens the base does not cut into their words, come here.
3. Whole chunks: a chunk whose most frequent split is still not produced
   (its special case is not reached, or conflicts with another) becomes a
   special case of its own, under the same count threshold.

Why so. Affixes reach words never seen and special cases only strings
seen, so affixes come first, but only consistent ones, since a wrong affix
also breaks unseen words. A candidate is judged where it changes the output,
not wherever its string occurs: a special case (":-)") or an earlier
pattern may keep it from acting, and a cut the base already makes is no
evidence for it. Simpler versions did worse when this was written: judged
by occurrences, "and" (of "and/or", "and,") became an English prefix, and
the emoticon ":-)", a special case no infix reaches, counted against German
"-"; without removals, the `xx` rules kept cutting Gothic's "·" where the
treebank does not (got_proiel test tokens F1 99.94 instead of 100.00). The training text
comes back all but exactly (what is left: chunks the treebank splits two
ways), and on the five test sets measured words F1 is at least that of
spaCy's rules of the language (docs/results/tokenization).

What is learned is spaCy's own tokenizer state (prefix, suffix and infix
patterns, special cases), saved with the pipeline (`nlp.to_disk`) and
pickled as any spaCy tokenizer; a pipeline given one by
`use_treebank_tokenizer` names spaCy's tokenizer in its config and loads
with no code of ours. Learning from the 200,000 words of en_ewt takes about
10 seconds, reading the file included.
"""
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import conllu
from spacy.language import Language
from spacy.symbols import ORTH
from spacy.tokenizer import Tokenizer
from spacy.util import (compile_infix_regex, compile_prefix_regex, compile_suffix_regex,
                        get_lang_class, registry)
from spacy.vocab import Vocab

from ..evaluation.conllu_eval import read_conllu
from ..evaluation.raw_text import RawTextEvaluation, evaluate_raw_text, gold_documents

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


def surface_tokens(sentence: conllu.TokenList) -> List[Tuple[str, List[str]]]:
    """(FORM, its words' FORMs) of each surface token of a sentence: a
    multiword token or a word outside one; empty nodes are left out."""
    tokens: List[Tuple[str, List[str]]] = []
    last = 0   # the last word of the multiword token being read
    for token in sentence:
        token_id = token["id"]
        if isinstance(token_id, tuple):
            if token_id[1] == "-":
                last = token_id[2]
                tokens.append((token["form"], []))
            continue   # an empty node
        if token_id <= last:
            tokens[-1][1].append(token["form"])
        else:
            tokens.append((token["form"], [token["form"]]))
    return tokens


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
                   for form, words in surface_tokens(sentence)
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
    learned.exceptions.update(_run_exceptions(chunks, outputs(learned.rules()),
                                              learned.rules().tokenizer(vocab),
                                              min_exception_count))
    learned.exceptions.update(_chunk_exceptions(chunks, outputs(learned.rules()),
                                                min_exception_count))
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
# In a pipeline


class TreebankTokenizer(Tokenizer):
    """spaCy's tokenizer, whose `initialize` learns its rules from a
    treebank on top of spaCy's rules of language `lang` (those it has until
    then). What it learns is spaCy's tokenizer state, saved and pickled as
    any tokenizer's."""

    lang = "xx"

    def __reduce__(self):
        _, args, *_ = super().__reduce__()
        return _unpickle_treebank_tokenizer, (self.lang, *args)

    def initialize(self, get_examples: Optional[Callable] = None, *,
                   nlp: Optional[Language] = None, conllu_path: Optional[Path] = None,
                   min_affix_count: int = MIN_AFFIX_COUNT,
                   min_affix_ratio: float = MIN_AFFIX_RATIO,
                   min_exception_count: int = MIN_EXCEPTION_COUNT) -> None:
        """Learn the rules from the CoNLL-U file `conllu_path` (the
        training examples lose multiword tokens: they are not read)."""
        if conllu_path is None:
            raise ValueError(
                "spacy_nonmono.TreebankTokenizer.v1 learns from a treebank: set "
                "[initialize.tokenizer] conllu_path to the training CoNLL-U file (in a config "
                "from `spacy-nonmono init-config --tokenizer treebank`: --paths.train_conllu)")
        learned = learn_treebank_rules(read_conllu(conllu_path), self.lang, min_affix_count,
                                       min_affix_ratio, min_exception_count)
        self.set_rules(learned.rules())

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
    pipeline's language). Saved with the pipeline, it loads with no code of
    ours (the pipeline's config keeps naming its former tokenizer, whose
    state the saved rules replace)."""
    nlp.tokenizer = learn_treebank_tokenizer(conllu_path, nlp.vocab, lang or nlp.lang,
                                             **settings)
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


# ---------------------------------------------------------------------------
# Scoring a tokenizer


def score_segmentation(documents: Iterable[Iterable[str]],
                       gold: Sequence[conllu.TokenList]) -> RawTextEvaluation:
    """Score tokens (each document's, in order) against the gold sentences
    whose raw text they cut (`gold_documents`), CoNLL 2018 style: each token
    is a word; Tokens and Words are meaningful, the rest is not (a document
    is one sentence, its words attached to its first)."""
    system = []
    for tokens in documents:
        system.append(conllu.TokenList([
            {"id": k, "form": token, "lemma": "_", "upos": "_", "xpos": "_", "feats": None,
             "head": 0 if k == 1 else 1, "deprel": "dep", "deps": None, "misc": None}
            for k, token in enumerate(tokens, start=1)]))
    return evaluate_raw_text(gold, system)


def score_tokenizer(tokenizer: Callable, gold: Sequence[conllu.TokenList]) -> RawTextEvaluation:
    """Tokens and words F1 (`score_segmentation`) of a tokenizer (text ->
    Doc) on the raw text of the gold sentences."""
    return score_segmentation(([token.text for token in tokenizer(text) if not token.is_space]
                               for text in gold_documents(gold)), gold)
