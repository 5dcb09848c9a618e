"""The O(n^2) and O(n) optimal-step algorithms of Nederhof (2019), sections 5
and 6 (spacy_nonmono.systems.optimal_step), against the brute-force search
of tests/reference_arc_standard.config_score, on projective gold trees: at
every configuration of random valid move sequences, with the restrictions
the strategies put on the configuration after a step."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_arc_standard as ref
from conftest import random_heads, scaled
from spacy_nonmono.graph import is_projective
from spacy_nonmono.systems.optimal_step import config_score_projective, run

seeds = st.integers(0, 2**32 - 1)


def restrictions(top):
    """The restrictions of the strategies (section 2; positions after the
    step, top = the stack's top), as reference_arc_standard's
    restricted_step_scores sets them."""
    out = [{}]
    if top >= 1:
        out.append({"no_left": top - 1})                          # nonstrict, after S
        out.append({"no_left": top - 1, "no_left_below": top - 1})  # strict, after S
        out.append({"no_right": top})                             # right_first, after L
    out.append({"no_left_below": top + 1})                        # strict, after R
    out.append({"no_left_below": top})                            # strict, after L
    out.append({"no_left": top})
    out.append({"no_left_below": top, "no_left": top})
    return out


def check(stack, buffer, heads, **restrict):
    expected = ref.config_score(stack, buffer, heads, **restrict)
    quadratic = config_score_projective(stack, buffer, heads, linear=False, **restrict)
    linear = config_score_projective(stack, buffer, heads, linear=True, **restrict)
    assert quadratic == linear == expected, (stack, buffer, heads, restrict)


def check_walk(rng, heads, n_restrictions=None):
    for stack, buffer in ref.random_walk(rng, len(heads)):
        options = restrictions(len(stack) - 1)
        if n_restrictions is not None:
            options = rng.sample(options, min(n_restrictions, len(options)))
        for restrict in options:
            check(stack, buffer, heads, **restrict)


# ------------------------------------------------------------- by hand

def test_examples():
    gold = [2, 0, 4, 2]                 # 2 -> 1, 0 -> 2, 2 -> 4, 4 -> 3
    for linear in (False, True):
        score = lambda *a, **kw: config_score_projective(*a, linear=linear, **kw)
        assert score([0], [1, 2, 3, 4], gold) == 4
        assert score([0, 1], [3, 4], gold) == 1      # 1 -> 2 made: 2 is gone
        assert score([0, 2], [3, 4], gold) == 3
        assert score([0, 2, 4], [], gold) == 2       # 3 gone: 2 -> 4, 0 -> 2
        assert score([0, 1, 2], [3, 4], gold) == 4
        # After a shift (nonstrict): word 1 may not take a left child.
        assert score([0, 1, 2], [3, 4], gold, no_left=1) == 4
        # Strict after a shift: word 2 may not take 1 either.
        assert score([0, 1, 2], [3, 4], gold, no_left=2) == 2
        # Right-before-left: the top takes no right child, so 2 -> 4 is lost,
        # and with it 0 -> 2 (node 0 takes one child, by the last step).
        assert score([0, 2], [3, 4], gold, no_right=1) == 1


def test_edge_cases():
    for linear in (False, True):
        score = lambda *a, **kw: config_score_projective(*a, linear=linear, **kw)
        assert score([0], [], []) == 0                        # final configuration
        assert score([0], [], [], no_right=0) == 0
        assert score([0], [1], [0]) == 1                      # stack of only 0
        assert score([0], [1, 2], [2, 0], no_right=0) is None  # 0 takes no child
        assert score([0, 2], [], [2, 0], no_right=0) is None
        assert score([0, 1], [], [0]) == 1                    # empty buffer
        assert score([0, 1, 2], [], [0, 1]) == 2
        assert score([0, 1, 2], [], [2, 0]) == 2
        assert score([0, 1, 2], [], [2, 0], no_left=2) == 0   # 2 -> 1 lost, so 0 -> 1
        # The top, the gold root, may take no right child: it cannot be
        # node 0's one child over the remaining input.
        assert score([0, 1], [2], [0, 1], no_right=1) == 0
        assert score([0, 1], [2], [0, 1]) == 2
        # Node 0's gold child in the buffer; stack nodes whose gold parent
        # is already attached.
        assert score([0, 3], [4, 5], [3, 1, 0, 5, 3]) == 3
    with pytest.raises(ValueError):
        config_score_projective([0], [1, 2], [2, 0], no_left=2)   # in the buffer
    with pytest.raises(ValueError):
        config_score_projective([0, 1, 2], [3], [0, 1, 2], no_right=1)
    with pytest.raises(ValueError):
        config_score_projective([1], [2], [0, 1])


# ------------------------------------------------------ against brute force

@settings(max_examples=scaled(40))
@given(seed=seeds, n=st.integers(1, 9))
def test_random_walks(seed, n):
    rng = random.Random(seed)
    heads = random_heads(rng, n, projective=True)
    check_walk(rng, heads)


def test_all_trees_of_four_words():
    """Every projective tree of 1..4 words, several walks each."""
    rng = random.Random(4)
    for n in range(1, 5):
        for heads in ref.projective_trees(n):
            for _ in range(2):
                check_walk(rng, list(heads))


def test_ud_sentences(ud_sentences):
    projective = [heads for _, _, heads, _ in ud_sentences if is_projective(heads)]
    assert projective
    rng = random.Random(0)
    for heads in projective[:scaled(40)]:
        check_walk(rng, list(heads), n_restrictions=3)


# ----------------------------------------------------- linear against quadratic

def test_longer_sentences_linear_states():
    """Quadratic == linear on longer trees (no brute force), and the linear
    algorithm computes O(n) values: at most 20 per position here, where the
    quadratic one fills 3 k (k + 1) / 2 + k m."""
    rng = random.Random(1)
    for n in (20, 50, 100):
        for _ in range(scaled(3)):
            heads = random_heads(rng, n, projective=True)
            for stack, buffer in ref.random_walk(rng, n):
                for restrict in rng.sample(restrictions(len(stack) - 1), 2):
                    quadratic, _ = run(stack, buffer, heads, linear=False, **restrict)
                    linear, states = run(stack, buffer, heads, linear=True, **restrict)
                    assert quadratic == linear, (stack, buffer, heads, restrict)
                    assert states <= 20 * (len(stack) + len(buffer))
