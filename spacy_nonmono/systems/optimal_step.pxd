# The optimal step of shift-reduce parsing for a projective gold tree
# (Nederhof 2019, sections 5 and 6). See optimal_step.pyx.
from ..graph.split_grammars cimport ShiftReduceConfig

# Ints of scratch that config_score_projective needs for a configuration of
# `length` positions (c.last + 1), for either algorithm.
cdef int projective_scratch_size(int length) noexcept nogil

# The most gold edges any computation from the configuration to the final
# one adds (the paper's sigma_max - |T n Tg|), or NEG_SCORE if the
# restrictions leave no computation: Table 5 (linear=False, O(n^2)) or with
# section 6's replacements (linear=True, O(n)). The gold tree must be
# projective; the restrictions must be those of the strategies (positions:
# no_left_below <= top + 1, no_left <= top, no_right -1, 0 or top). Node 0
# takes one child, by the last step (see graph/split_grammars.pxd).
cdef int config_score_projective(const ShiftReduceConfig* c, bint linear, int* scratch) noexcept nogil
