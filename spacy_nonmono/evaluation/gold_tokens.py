"""Score a pipeline on gold tokens and sentences like the CoNLL 2018 shared task.

Scores are over all syntactic words (integer ids), punctuation included;
labels are compared on their universal part (before ':'); UPOS, XPOS and
UFeats where the pipeline predicts them. The metrics are those of the
raw-text scorer (`metrics`), every word aligned to itself, with breakdowns by
projectivity, arc length, sentence length and label. Each gold sentence is parsed as one
doc of its words (`conllu_io.sentence_doc`); a prediction file holds what the
pipeline predicted and "_" elsewhere (`conllu_io.fill_sentence`).
"""
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Union

import conllu
from spacy.language import Language
from spacy.tokens import Doc

from ..conllu_io import (Tree, fill_sentence, gold_tree, is_word, read_gold, sentence_doc,
                         write_conllu)
from ..graph import is_projective
from .metrics import Word, matches, tree_words, universal_feats
# Gold arc length buckets: |head - dependent| (the root arc is its own bucket).
LENGTH_BUCKETS = (("root", 0, 0), ("1", 1, 1), ("2", 2, 2), ("3-6", 3, 6), ("7+", 7, 10**9))
# Sentence length in words: where a greedy parser's early errors compound.
SENTENCE_LENGTH_BUCKETS = (("1-10", 1, 10), ("11-20", 11, 20), ("21-30", 21, 30), ("31+", 31, 10**9))


def parse_docs(nlp: Language, sentences: Sequence[conllu.TokenList],
               batch_size: int = 256) -> Iterator[Doc]:
    """Each gold sentence parsed as one doc of its words, in order."""
    return nlp.pipe((sentence_doc(nlp.vocab, s) for s in sentences), batch_size=batch_size)


def doc_tree(doc: Doc) -> Tree:
    """The parse of a one-sentence doc (the whole doc is one tree), labels as
    UD writes them; a doc with other than one root is a ValueError."""
    heads = [0 if t.head.i == t.i else t.head.i + 1 for t in doc]
    if heads.count(0) != 1:
        raise ValueError(f"The pipeline returned {heads.count(0)} roots for one sentence; "
                         "sentences are parsed as single docs and need exactly one root.")
    # spaCy writes the UD label "root" as "ROOT"; write it back as UD does.
    return heads, ["root" if t.dep_ == "ROOT" else t.dep_ for t in doc]


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
                           gold_needed=True, metric="XPOS", column="xpos")
        if predicted["feats"] is not None:
            self._add_tags(self.ufeats, [universal_feats(t["feats"]) for t in words],
                           [universal_feats(f) for f in predicted["feats"]],
                           predicted_needed=False, metric="UFeats", column="feats")

    @staticmethod
    def _add_tags(counts: Counts, gold: Sequence[str], predicted: Sequence[str],
                  gold_needed: bool = False, predicted_needed: bool = True,
                  metric: str = "UPOS", column: str = "upos") -> None:
        """Count the words whose tag was predicted (and, gold_needed, is in
        the gold file), each correct as the metric says."""
        if len(gold) != len(predicted):
            raise ValueError("Gold and predicted sentences differ in length; "
                             "evaluation needs gold tokenization.")
        gold_words = [Word(**{column: tag}) for tag in gold]
        system_words = [Word(**{column: tag}) for tag in predicted]
        for i, (g, p) in enumerate(zip(gold, predicted)):
            if (p or not predicted_needed) and (g or not gold_needed):
                counts.add(matches(metric, gold_words, system_words, i, i), True)

    def add(self, gold: Tree, predicted: Tree) -> None:
        gold_heads, pred_heads = gold[0], predicted[0]
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
        gold_words, system_words = tree_words(*gold), tree_words(*predicted)
        # Every word is aligned to itself: the metrics of the raw-text scorer.
        for i, (gh, gw, sw) in enumerate(zip(gold_heads, gold_words, system_words)):
            head_ok = matches("UAS", gold_words, system_words, i, i)
            label_ok = gw.deprel == sw.deprel
            self.words.add(head_ok, label_ok)
            part.add(head_ok, label_ok)
            sentence_part.add(head_ok, label_ok)
            length = 0 if gh == 0 else abs(gh - (i + 1))
            bucket = next(name for name, lo, hi in LENGTH_BUCKETS if lo <= length <= hi)
            self.by_length[bucket].add(head_ok, label_ok)
            labelled = matches("LAS", gold_words, system_words, i, i)
            self.label_gold[gw.deprel] += 1
            self.label_predicted[sw.deprel] += 1
            self.label_correct[gw.deprel] += labelled
            self.clas_gold += gw.content
            self.clas_predicted += sw.content
            self.clas_correct += gw.content and matches("CLAS", gold_words, system_words, i, i)

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
    write the predictions as CoNLL-U (predictions only: `fill_sentence`).
    skipped: how many invalid sentences read_gold left out, for the report."""
    evaluation, blocks = Evaluation(), []
    for sentence, doc in zip(sentences, parse_docs(nlp, sentences)):
        evaluation.add(gold_tree(sentence), doc_tree(doc))
        evaluation.add_tags(sentence, predicted_tags(doc))
        if output is not None:
            blocks.append(fill_sentence(sentence, doc, keep_input=False))
    if output is not None:
        write_conllu(output, blocks)
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
