"""Checks of trees given as head arrays (1-based heads of words 1..n, 0 =
the root): the one home of the gold-tree check and of projectivity."""
from typing import Sequence

from spacy.pipeline._parser_internals.nonproj import is_nonproj_tree


def is_projective(heads: Sequence[int]) -> bool:
    """Whether a tree given as 1-based heads (0 = the root) has no crossing
    arcs, by spaCy's `nonproj.is_nonproj_tree` (which takes absolute heads,
    the root its own head)."""
    return not is_nonproj_tree([k if h == 0 else h - 1 for k, h in enumerate(heads)])


def check_gold_tree(heads, sentences=False):
    """Raise ValueError unless heads (head of word k at k-1, 0 = root) is a
    single-rooted tree over words 1..n; with `sentences`, a document: one
    tree per sentence, each over consecutive words (`sentence_spans`)."""
    n = len(heads)
    roots = [k + 1 for k, h in enumerate(heads) if h == 0]
    for k, h in enumerate(heads):
        if not isinstance(h, int) and not hasattr(h, "__index__"):
            raise ValueError(f"Head of word {k+1} is not an integer: {h!r}")
        if h < 0 or h > n:
            raise ValueError(f"Head of word {k+1} is {h}, outside the sentence (0..{n}).")
        if h == k + 1:
            raise ValueError(f"Word {k+1} is its own head.")
    if not sentences and len(roots) != 1:
        raise ValueError(f"Gold tree must have exactly one root, found {len(roots)}: words {roots}.")
    if sentences and n and not roots:
        raise ValueError("Gold document has no root.")
    for k in range(1, n + 1):
        seen = set()
        v = k
        while v != 0:
            if v in seen:
                raise ValueError(f"Gold heads contain a cycle through word {v}.")
            seen.add(v)
            v = heads[v - 1]
    if sentences:
        sentence_spans(heads)


def sentence_spans(heads):
    """(start, end) word ranges (0-based, end exclusive) of the trees of a
    forest given as heads (head of word k at k-1, 0 = a root, no cycles), in
    order; ValueError unless each tree covers consecutive words."""
    n = len(heads)
    root_of = [0] * n
    for k in range(n):
        v = k + 1
        while heads[v - 1] != 0:
            v = heads[v - 1]
        root_of[k] = v
    spans = []
    start = 0
    for k in range(1, n + 1):
        if k == n or root_of[k] != root_of[k - 1]:
            spans.append((start, k))
            start = k
    if len(spans) != len(set(root_of)):
        raise ValueError("The trees of the document do not each cover consecutive words.")
    return spans
