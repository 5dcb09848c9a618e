"""Optimal projectivization (Nederhof 2019, end of section 3):
`spacy_nonmono.graph.split_grammars.optimal_projectivization` against the
brute-force enumeration of every single-rooted projective tree in
tests/reference_arc_standard.py (`best_projective`)."""
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.pipeline._parser_internals import nonproj

import reference_arc_standard as ref
from conftest import random_heads, scaled
from spacy_nonmono.graph import is_projective
from spacy_nonmono.graph.split_grammars import optimal_projectivization

seeds = st.integers(0, 2**32 - 1)


def check_result(heads, result):
    """proj_heads is a single-rooted projective tree keeping `kept` arcs of
    heads; count is a positive whole float."""
    proj_heads, kept, count = result
    n = len(heads)
    assert len(proj_heads) == n
    assert all(isinstance(h, int) for h in proj_heads), proj_heads
    assert ref.is_single_rooted_tree(proj_heads), (heads, proj_heads)
    assert is_projective(list(proj_heads)) and ref.crossing_free(proj_heads), (heads, proj_heads)
    assert ref.common_arcs(proj_heads, heads) == kept, (heads, proj_heads, kept)
    assert isinstance(count, float) and count >= 1 and count == int(count), count
    return proj_heads, kept, count


def pseudo_projective_kept(heads):
    """Arcs of heads that spaCy's pseudo-projective lifting keeps."""
    absolute = [k if h == 0 else h - 1 for k, h in enumerate(heads)]
    lifted, _ = nonproj.projectivize(absolute, ["dep"] * len(heads))
    lifted = [0 if h == k else h + 1 for k, h in enumerate(lifted)]
    return ref.common_arcs(lifted, heads)


def test_empty_and_one_word():
    assert optimal_projectivization([]) == ([], 0, 1.0)
    assert optimal_projectivization([0]) == ([0], 1, 1.0)


def test_hand_examples():
    # 3 -> 1 and 4 -> 2 cross; two trees keep 3 arcs (2's head 1 or 3).
    proj, kept, count = check_result([3, 4, 0, 3], optimal_projectivization([3, 4, 0, 3]))
    assert (kept, count) == (3, 2.0)
    assert proj in ([3, 1, 0, 3], [3, 3, 0, 3])
    # Root 1; 1 -> 3 and 2 -> 4 cross.
    proj, kept, count = check_result([0, 1, 1, 2], optimal_projectivization([0, 1, 1, 2]))
    assert (kept, count) == (3, 4.0)
    # An arc over the root word is non-projective: root 2, 3 -> 1 spans it.
    assert not is_projective([3, 0, 2]) and not ref.crossing_free([3, 0, 2])
    proj, kept, count = check_result([3, 0, 2], optimal_projectivization([3, 0, 2]))
    assert (kept, count) == (2, 1.0) and proj == [2, 0, 2]


@settings(max_examples=scaled(60))
@given(seed=seeds, n=st.integers(1, 8))
def test_against_enumeration(seed, n):
    heads = random_heads(random.Random(seed), n)
    proj, kept, count = check_result(heads, optimal_projectivization(heads))
    best, n_best = ref.best_projective(heads)
    assert (kept, count) == (best, float(n_best)), (heads, proj, kept, count, best, n_best)
    assert kept >= pseudo_projective_kept(heads)


@settings(max_examples=scaled(30))
@given(seed=seeds, n=st.integers(1, 12))
def test_projective_input_is_returned(seed, n):
    heads = random_heads(random.Random(seed), n, projective=True)
    assert optimal_projectivization(heads) == (heads, n, 1.0)


def test_all_trees_of_five_words():
    """Every single-rooted tree over 5 words (5**4 = 625 of them)."""
    import itertools
    trees = [list(h) for h in itertools.product(range(6), repeat=5)
             if ref.is_single_rooted_tree(h)]
    assert len(trees) == 625
    for heads in trees:
        _, kept, count = check_result(heads, optimal_projectivization(heads))
        assert (kept, count) == tuple(map(float, ref.best_projective(heads))), heads


def test_many_optimal_trees_are_counted_exactly():
    """Arcs that cross each other a lot: 539 trees keep the best 3 arcs."""
    heads = [0, 5, 6, 7, 8, 1, 2, 3]          # root 1
    assert ref.is_single_rooted_tree(heads)
    _, kept, count = check_result(heads, optimal_projectivization(heads))
    assert (kept, count) == (3, 539.0) == tuple(map(float, ref.best_projective(heads)))


def test_ud_sentences(ud_sentences):
    """Real sentences: the result is always a projective tree keeping
    `kept` arcs, at least as many as pseudo-projectivization keeps;
    projective sentences come back unchanged; up to 9 words, kept and
    count equal the enumeration's."""
    checked = 0
    for _, words, heads, _ in ud_sentences:
        heads = list(heads)
        proj, kept, count = check_result(heads, optimal_projectivization(heads))
        assert kept >= pseudo_projective_kept(heads), (words, heads)
        if is_projective(heads):
            assert (proj, kept, count) == (heads, len(heads), 1.0)
        if len(heads) <= 9:
            assert (kept, count) == tuple(map(float, ref.best_projective(heads))), (words, heads)
            checked += 1
    assert checked
