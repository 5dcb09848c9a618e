"""The CoNLL 2018 per-word metrics, defined once for both scorers.

A metric compares a gold word with the system word aligned to it: on gold
tokens (`gold_tokens`) every word is aligned to itself, from raw text
(`raw_text`) the alignment comes from the text the two sides share. Each
metric is a key of a word, computed on each side with that side's words and
a map of its word indices into the gold side's; a pair counts as correct
when the keys are equal (the official scorer's definitions, in `raw_text`'s
docstring):

UPOS, XPOS, UFeats (universal features), AllTags, Lemmas (a gold "_"
accepts any lemma), UAS (the head, as a gold word, or the root), LAS (and the
universal DEPREL); CLAS, MLAS and BLEX count content words only (`content`):
LAS; LAS with UPOS, UFeats and the functional children; LAS with the lemma.
"""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

# Universal relations of content words (CLAS, MLAS, BLEX) and of the
# functional children MLAS compares: the CoNLL 2018 scorer's lists.
CONTENT_DEPRELS = frozenset(
    "nsubj obj iobj csubj ccomp xcomp obl vocative expl dislocated advcl advmod "
    "discourse nmod appos nummod acl amod conj fixed flat compound list parataxis "
    "orphan goeswith reparandum root dep".split()
)
FUNCTIONAL_DEPRELS = frozenset("aux cop mark det clf case cc".split())
# The universal features, which UFeats compares (the CoNLL 2018 scorer's list).
UNIVERSAL_FEATURES = frozenset(
    "PronType NumType Poss Reflex Foreign Abbr Gender Animacy Number Case Definite Degree "
    "VerbForm Mood Tense Aspect Voice Evident Polarity Person Polite".split()
)
ROOT = -1          # head of a root word
UNALIGNED = None   # where a system word's head (or child) has no gold partner


def universal_deprel(label: str) -> str:
    """A DEPREL's universal part (before ':'), as the official scorer
    compares it (case-sensitive)."""
    return label.split(":", 1)[0]


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
class Word:
    """What the metrics read of one syntactic word."""

    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = ""      # universal features, sorted, joined by "|"
    deprel: str = "_"    # universal part
    head: int = ROOT     # index into its side's words
    children: List[int] = field(default_factory=list)   # functional ones

    @property
    def content(self) -> bool:
        return self.deprel in CONTENT_DEPRELS


def attach(words: List[Word], first: int, heads: Sequence[int]) -> None:
    """Set the heads (1-based within the sentence, 0 for the root) and the
    functional children of one sentence's words, words[first:]."""
    for i, head in enumerate(heads):
        word = words[first + i]
        if head:
            word.head = first + head - 1
            if word.deprel in FUNCTIONAL_DEPRELS:
                words[word.head].children.append(first + i)


def tree_words(heads: Sequence[int], labels: Sequence[str]) -> List[Word]:
    """The words of one tree (heads 1-based, 0 the root; DEPRELs)."""
    words = [Word(deprel=universal_deprel(label)) for label in labels]
    attach(words, 0, heads)
    return words


Mapper = Callable[[int], Optional[int]]
Key = Callable[[Word, Mapper, List[Word], Word], object]


def _lemma(word: Word, gold_partner: Word) -> str:
    return word.lemma if gold_partner.lemma != "_" else "_"


def _labelled(w, m, words, g):
    return m(w.head), w.deprel


def _morpho(w, m, words, g):
    children = tuple((m(c), words[c].deprel, words[c].upos, words[c].feats) for c in w.children)
    return m(w.head), w.deprel, w.upos, w.feats, children


# Per-word metric: its key (word, its side's index mapper into gold words,
# its side's words, the aligned gold word) and whether it counts content
# words only.
WORD_METRICS: Dict[str, Tuple[Key, bool]] = {
    "UPOS": (lambda w, m, words, g: w.upos, False),
    "XPOS": (lambda w, m, words, g: w.xpos, False),
    "UFeats": (lambda w, m, words, g: w.feats, False),
    "AllTags": (lambda w, m, words, g: (w.upos, w.xpos, w.feats), False),
    "Lemmas": (lambda w, m, words, g: _lemma(w, g), False),
    "UAS": (lambda w, m, words, g: m(w.head), False),
    "LAS": (_labelled, False),
    "CLAS": (_labelled, True),
    "MLAS": (_morpho, True),
    "BLEX": (lambda w, m, words, g: (m(w.head), w.deprel, _lemma(w, g)), True),
}


def same_index(i: int) -> Optional[int]:
    return i


def aligned_index(to_gold: Dict[int, int]) -> Mapper:
    """The mapper of a system side whose word s is aligned to gold word
    to_gold[s] (UNALIGNED where none; the root stays the root)."""
    def mapper(i: int) -> Optional[int]:
        return ROOT if i == ROOT else to_gold.get(i, UNALIGNED)
    return mapper


def matches(metric: str, gold: List[Word], system: List[Word], g: int, s: int,
            system_map: Mapper = same_index) -> bool:
    """Whether system word s agrees with gold word g on the metric."""
    key, _ = WORD_METRICS[metric]
    return key(gold[g], same_index, gold, gold[g]) == key(system[s], system_map, system, gold[g])


def _percent(numerator: int, denominator: int) -> float:
    return round(100 * (numerator / denominator), 2) if denominator else 0.0


@dataclass(frozen=True)
class Score:
    """Counts of one metric and precision, recall, F1 in percent (2 decimals)."""

    gold: int
    system: int
    correct: int
    aligned: Optional[int] = None   # per-word metrics (UPOS...BLEX): pairs counted
    precision: float = field(init=False)
    recall: float = field(init=False)
    f1: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "precision", _percent(self.correct, self.system))
        object.__setattr__(self, "recall", _percent(self.correct, self.gold))
        object.__setattr__(self, "f1", _percent(2 * self.correct, self.gold + self.system))

    @property
    def aligned_accuracy(self) -> Optional[float]:
        """correct / aligned in percent (2 decimals); None for Tokens,
        Sentences and Words, as in the official report."""
        return None if self.aligned is None else _percent(self.correct, self.aligned)

    def to_dict(self) -> Dict[str, Union[int, float, None]]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "gold": self.gold, "system": self.system, "correct": self.correct,
                "aligned": self.aligned}


def count(metric: str, gold: List[Word], system: List[Word], pairs: Sequence[Tuple[int, int]],
          system_map: Mapper = same_index) -> Score:
    """The metric's Score over aligned (gold, system) word pairs."""
    _, content_only = WORD_METRICS[metric]
    counted = [(g, s) for g, s in pairs if not content_only or gold[g].content]
    correct = sum(matches(metric, gold, system, g, s, system_map) for g, s in counted)
    return Score(sum(1 for w in gold if not content_only or w.content),
                 sum(1 for w in system if not content_only or w.content),
                 correct, len(counted))
