"""The streaming losses' block primitives as Triton kernels: a drop-in for :mod:`torch_ndcg.losses.relaxations.blocks`.

The losses pass a module of primitives to their streaming autograd Functions; this is the
module they pass for ``impl="triton"``. Importing it imports Triton.
"""

from .approx import approx_ranks, approx_ranks_backward
from .sinkhorn import abs_diff_sum, abs_diff_sum_backward, lse_outer, lse_outer_backward

__all__ = [
    "abs_diff_sum",
    "abs_diff_sum_backward",
    "approx_ranks",
    "approx_ranks_backward",
    "lse_outer",
    "lse_outer_backward",
]
