"""What every decoder needs from a Doc and from gold data, apart from how it
parses: the spans to parse (sentences, long ones cut into windows), the gold
trees that can be trained on (checked, counted when not, projectivized when
asked), and the rule that turns the decoder's per-span trees into one
single-rooted tree per sentence.

Spans are (doc index, start, end) token ranges; a tree over a span gives for
word k + 1 its head (1-based within the span, 0 = the span's root) and a
label id (-1: none).
"""
from collections import Counter
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.pipeline import Sentencizer
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example

from ..graph import attach_to_single_root, check_gold_tree, is_projective
from ..graph.split_grammars import optimal_projectivization

# Label written for words attached by a repair rule (a window's root, a
# second root, a word a system left without head).
REPAIR_LABEL = "dep"
ROOT_LABEL = "ROOT"
# How projective systems learn from non-projective gold trees (`projectivize`):
# "pseudo": spaCy's pseudo-projective lifting with decorated labels,
# deprojectivized at output; "optimal": a projective tree with the most gold
# arcs (Nederhof 2019), labels unchanged; "none": the original trees.
PROJECTIVIZE = ("pseudo", "optimal", "none")

Window = Tuple[int, int, int]   # (sentence start, start, end) in a doc
SENTENCE_END = frozenset(Sentencizer.default_punct_chars)


class GoldProblems(Counter):
    """Counts of training sentences skipped, by reason."""

    def summary(self) -> str:
        return ", ".join(f"{n} {reason}" for reason, n in sorted(self.items()))


def resolve_projectivize(system, value: Optional[str]) -> str:
    """The `projectivize` setting for this system: null means the system's
    `default_projectivize` ("pseudo" for a projective system, "none" for
    arc_standard's optimal-step oracle and for a non-projective system,
    which takes nothing else)."""
    if value is not None and value not in PROJECTIVIZE:
        valid = ", ".join(repr(v) for v in PROJECTIVIZE)
        raise ValueError(f"Unknown projectivize {value!r}: expected one of {valid} (or null).")
    if not system.projective:
        if value not in (None, "none"):
            raise ValueError(
                f"System {system.name!r} builds non-projective trees: projectivize must be "
                f"'none' (or null), not {value!r}.")
        return "none"
    return getattr(system, "default_projectivize", "pseudo") if value is None else value


def pseudo_projectivize(heads: List[int], labels: List[str]) -> Tuple[List[int], List[str]]:
    """A sentence's tree (1-based heads, 0 = root) made projective by spaCy's
    pseudo-projective lifting (Nivre & Nilsson 2005, HEAD scheme): lifted
    arcs get decorated labels "label||head's label"."""
    absolute = [k if h == 0 else h - 1 for k, h in enumerate(heads)]
    lifted, decorated = nonproj.projectivize(absolute, list(labels))
    return [0 if h == k else h + 1 for k, h in enumerate(lifted)], list(decorated)


def punctuation_sentences(doc: Doc) -> List[Tuple[int, int]]:
    """(start, end) of the doc's sentences by spaCy's sentencizer rule: after
    sentence-final punctuation, the next word that is not punctuation (a
    closing quote or bracket stays behind) starts a sentence."""
    starts = [0]
    seen_end = False
    for token in doc:
        if seen_end and not token.is_punct and token.text not in SENTENCE_END:
            starts.append(token.i)
            seen_end = False
        elif token.text in SENTENCE_END:
            seen_end = True
    return list(zip(starts, starts[1:] + [len(doc)]))


def windows(doc: Doc, limit: int, split_unsegmented: bool = False) -> List[Window]:
    """(sentence start, start, end) of the token spans to parse: the
    sentences when boundaries are set, else the whole doc (or, with
    split_unsegmented, its sentences by punctuation); sentences longer than
    `limit` are cut into windows of `limit` words. (A system that decides
    sentences reads a doc without boundaries in windows of its own:
    `NonMonoParser._parse_documents`.)"""
    if len(doc) == 0:
        return []
    if doc.has_annotation("SENT_START"):
        sents = [(s.start, s.end) for s in doc.sents]
    elif split_unsegmented:
        sents = punctuation_sentences(doc)
    else:
        sents = [(0, len(doc))]
    return [(start, w, min(end, w + limit)) for start, end in sents
            for w in range(start, end, limit)]


def decides_sentences(doc: Doc) -> bool:
    """Whether a parser whose system decides sentences decides this doc's:
    only where nothing set them before it (boundaries given with the text,
    or by a senter, are kept, as spaCy's parser keeps them)."""
    return not doc.has_annotation("SENT_START")


def gold_trees(examples: List[Example], limit: int, projectivize: str, problems: Counter,
               documents: bool = False) -> Iterator[Tuple[int, int, int, List[int], List[str]]]:
    """Yield (doc index, start, end, heads, labels) for every gold sentence
    whose tree can be trained on: heads are 1-based within the sentence
    (0 = root), labels strings, projectivized as `projectivize` says.
    Sentences that cannot be trained on are counted in `problems`. With
    `documents` (a system that decides sentences), runs of consecutive
    sentences of at most `limit` words instead, one tree per sentence
    (`document_windows`)."""
    if documents:
        yield from document_windows(gold_trees(examples, limit, projectivize, problems), limit)
        return
    for d, eg in enumerate(examples):
        if len(eg.predicted) == 0:
            continue
        if not eg.reference.has_annotation("DEP"):
            problems["docs without a gold parse"] += 1
            continue
        heads, deps = eg.get_aligned_parse(projectivize=False)
        starts = eg.get_aligned_sent_starts()
        bounds = [k for k, s in enumerate(starts) if s == 1 or k == 0] + [len(starts)]
        for start, end in zip(bounds, bounds[1:]):
            reason = None
            if end - start > limit:
                reason = f"sentences longer than max_sentence_length={limit}"
            elif any(h is None or not (start <= h < end) for h in heads[start:end]):
                reason = "sentences with missing, misaligned or out-of-sentence heads"
            else:
                sent_heads = [0 if h == start + k else h - start + 1
                              for k, h in enumerate(heads[start:end])]
                sent_deps = list(deps[start:end])
                try:
                    check_gold_tree(sent_heads)
                except ValueError:
                    reason = "sentences whose gold heads are not a single-rooted tree"
            if reason is not None:
                problems[reason] += 1
                continue
            if projectivize == "pseudo":
                sent_heads, sent_deps = pseudo_projectivize(sent_heads, sent_deps)
            elif projectivize == "optimal" and not is_projective(sent_heads):
                sent_heads = optimal_projectivization(sent_heads)[0]
            yield d, start, end, sent_heads, sent_deps


def document_windows(trees, limit: int):
    """The gold sentences of `gold_trees` joined into windows of consecutive
    sentences of a doc, at most `limit` words each: (doc index, start, end,
    heads, labels), each sentence's root with the head 0. A sentence that
    cannot be trained on ends a window."""
    window = None
    for d, start, end, heads, labels in trees:
        if window is not None and (window[0] != d or window[2] != start
                                   or end - window[1] > limit):
            yield window
            window = None
        if window is None:
            window = (d, start, end, list(heads), list(labels))
            continue
        offset = start - window[1]
        window[3].extend(h + offset if h else 0 for h in heads)
        window[4].extend(labels)
        window = (d, window[1], end, window[3], window[4])
    if window is not None:
        yield window


def labelled_gold(trees, label_ids: Dict[str, int], problems: Counter):
    """The gold trees of `gold_trees` with label ids: (doc index, start, end,
    heads, label ids), the root's label -1 (it is not learned: the root is
    always written ROOT, so any label is right). Sentences with labels the
    component cannot learn are counted in `problems`."""
    for d, start, end, sent_heads, sent_deps in trees:
        arc_deps = [dep for dep, h in zip(sent_deps, sent_heads) if h != 0]
        reason = None
        if any(not dep for dep in arc_deps):
            reason = "sentences with missing labels"
        elif ROOT_LABEL in arc_deps:
            reason = f"sentences with the label {ROOT_LABEL} on a word that is not the root"
        elif any(dep not in label_ids for dep in arc_deps):
            reason = "sentences with labels unknown to the component"
        if reason is not None:
            problems[reason] += 1
            continue
        yield d, start, end, sent_heads, [label_ids[dep] if h != 0 else -1
                                          for dep, h in zip(sent_deps, sent_heads)]


def doc_parses(docs: Sequence[Doc], doc_windows: Sequence[Tuple[int, Window]],
               heads: Sequence[numpy.ndarray], labels: Sequence[numpy.ndarray],
               label_names: Sequence[str],
               free: Set[int] = frozenset()) -> List[Tuple[numpy.ndarray, List[str]]]:
    """Per doc, (heads, labels): the absolute index of each token's head
    (itself for a root) and label strings, from the decoder's trees over the
    windows. A sentence's windows are joined and the tree layer's root rule
    (`graph.attach_to_single_root`, the one every system's parse ends with)
    makes it one tree: the first word attached to node 0 is the root,
    labelled ROOT; every other word attached to node 0 (a later window's
    root) is attached to it with the label "dep". No other word is labelled
    ROOT: a label ROOT on an arc (only in pipelines trained before this rule)
    is written "dep". The trees of the docs `free`, whose sentences a system
    that decides them parsed (`decides_sentences`), are kept as they are,
    one sentence per root: the sentences the parse decides, which spaCy
    reads from the heads."""
    results = [(numpy.arange(len(doc), dtype="int64"), [ROOT_LABEL] * len(doc)) for doc in docs]
    names = [REPAIR_LABEL if label == ROOT_LABEL else label for label in label_names]
    # Per sentence, its windows' arcs in sentence positions (1-based, 0 = root).
    sentences: Dict[Tuple[int, int], Tuple[List[numpy.ndarray], List[numpy.ndarray]]] = {}
    for (d, (sent_start, start, end)), h, l in zip(doc_windows, heads, labels):
        if d in free:
            _write_tree(results[d], start, h[:end - start], l[:end - start], names)
            continue
        sent_heads, sent_labels = sentences.setdefault((d, sent_start), ([], []))
        h = numpy.asarray(h[:end - start], dtype="int64")
        sent_heads.append(numpy.where(h > 0, h + (start - sent_start), h))
        sent_labels.append(numpy.asarray(l[:end - start], dtype="int64"))
    for (d, sent_start), (sent_heads, sent_labels) in sentences.items():
        tree, tree_labels = attach_to_single_root(numpy.concatenate(sent_heads),
                                                  numpy.concatenate(sent_labels))
        _write_tree(results[d], sent_start, tree, tree_labels, names)
    return results


def _write_tree(result, offset: int, heads, labels, names: Sequence[str]) -> None:
    """Write a span's arcs (1-based heads within the span, 0 = a root) into
    a doc's (absolute heads, label strings), a root its own head, ROOT."""
    doc_heads, doc_labels = result
    for k, (h, l) in enumerate(zip(heads, labels)):
        token = offset + k
        if h == 0:
            doc_heads[token], doc_labels[token] = token, ROOT_LABEL
        else:
            doc_heads[token] = offset + h - 1
            doc_labels[token] = names[l] if l >= 0 else REPAIR_LABEL
