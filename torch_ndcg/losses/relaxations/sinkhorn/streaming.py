r"""NeuralNDCG's smooth DCG in O(B·N) memory: log-domain Sinkhorn with a recomputing backward.

NeuralSort's log-kernel for a list of ``n`` real items (positions ``i ≤ n``) is

.. math:: L_{ij} = \frac{(n + 1 - 2i)\,s_j - A_j}{\tau} = r_i s_j + a_j,\qquad
          A_j = \sum_m |s_j - s_m|,

an outer product plus a column term, so no ``N × N`` matrix needs to be stored: every matrix
ever needed is ``exp(r_i s_j + u_i + w_j)`` for two scaling vectors. With ``w⁰ = a`` the
half-steps are

* rows:    ``u_i = −log Σ_j exp(r_i s_j + w_j)`` (NeuralSort's softmax is the first one),
* columns: ``w_j = −log Σ_i exp(s_j r_i + u_i)`` (``a`` folds into ``w``),

each one call of :func:`blocks.lse_outer`; the last one also returns the expected gain per
position (or the expected discount per item, transposed), whose weighted sum is the DCG. Only
the ``2·iters + 2`` scaling vectors are saved. The backward walks the half-steps in reverse:
for ``f_i = log Σ_j exp(x_i y_j + z_j)`` the gradients are ``∂f_i/∂z_j = W_ij``,
``∂f_i/∂y_j = W_ij x_i`` and ``∂f_i/∂x_i = Σ_j W_ij y_j`` with ``W`` the normalised weights,
which :func:`blocks.lse_outer_backward` recomputes block by block; the scores' gradient
collects the ``y`` (row steps) or ``x`` (column steps) parts, and ``a``'s gradient goes through
:func:`blocks.abs_diff_sum_backward`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from .. import blocks
from ..blocks import WeightedMean
from ...common import SortRelaxation, positions, second_order, valid_counts
from ...transforms import ListsFunction, vmap_over_lists
from .dense import dense_dcg


def half_steps(iters: int, transposed: bool) -> list[str]:
    """Order of normalisations after NeuralSort's row softmax.

    Plain: ``iters`` × (columns, rows), ending on rows. Transposed (Sinkhorn on ``P̂ᵀ``): its
    first normalisation is of rows again, an exact no-op that is skipped, so it ends on columns.
    """
    steps = ["row"] + ["col", "row"] * iters
    return steps[:-1] if transposed else steps


def row_coefficients(valid: Tensor, tau: float, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """``r_i = (n + 1 − 2i)/τ`` and which positions ``i ≤ n`` exist, per list."""
    n = valid_counts(valid)
    pos = positions(valid.to(dtype))
    rows = pos <= n
    r = torch.where(rows, (n + 1 - 2 * pos) / tau, torch.zeros_like(pos))
    return r, rows


class SinkhornDCG(ListsFunction):
    """Smooth DCG ``[B]`` of ``scores [B, N]`` (the relaxation's tensors as arguments of their
    own, so that torch.func sees them); ``ops`` provides the block primitives. The forward also
    returns what the backward needs (not differentiable)."""

    @staticmethod
    def forward(
        scores: Tensor, valid: Tensor, rank_weight: Tensor, gains: Tensor, tau: float, iters: int, transposed: bool,
        ops: Any,
    ) -> tuple[Tensor, ...]:
        r, rows = row_coefficients(valid, tau, scores.dtype)
        v = valid.to(scores.dtype)
        column = ops.abs_diff_sum(scores, v).div(-tau).masked_fill(~valid, -torch.inf)
        states = [column]
        steps = half_steps(iters, transposed)
        for step in steps[:-1]:
            if step == "row":
                f, _ = ops.lse_outer(r, scores, states[-1])
                states.append(torch.where(rows, -f, -torch.inf))
            else:
                f, _ = ops.lse_outer(scores, r, states[-1])
                states.append(torch.where(valid, -f, -torch.inf))
        if steps[-1] == "row":
            f, mean = ops.lse_outer(r, scores, states[-1], gains)  # expected gain per position
            dcg = (rank_weight * mean).sum(-1)
        else:
            f, mean = ops.lse_outer(scores, r, states[-1], rank_weight)  # expected discount per item
            dcg = (gains * mean).sum(-1)
        if hasattr(ops, "release"):
            ops.release()  # no block buffers held between forward and backward
        return dcg, f, mean, *states

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        scores, valid, rank_weight, gains, tau, iters, transposed, ops = inputs
        ctx.save_for_backward(scores, valid, rank_weight, gains, *output[1:])
        ctx.mark_non_differentiable(*output[1:])
        ctx.tau, ctx.iters, ctx.transposed, ctx.ops = tau, iters, transposed, ops

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(SinkhornDCG.apply, info, in_dims, args)

    @staticmethod
    def backward(ctx, grad_dcg: Tensor, *_):
        scores, valid, rank_weight, gains, f, mean, *states = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True (and torch.func): the dense reference's graph
            relaxation = SortRelaxation(valid, rank_weight, gains, ctx.tau, ctx.iters, ctx.transposed)
            return second_order(lambda x: dense_dcg(x, relaxation), scores, grad_dcg), *(None,) * 7
        ops, tau = ctx.ops, ctx.tau
        r, rows = row_coefficients(valid, tau, scores.dtype)
        steps = half_steps(ctx.iters, ctx.transposed)
        grad = grad_dcg[:, None]
        if steps[-1] == "row":
            _, grad_s, grad_z = ops.lse_outer_backward(
                r, scores, states[-1], f, torch.zeros_like(f), WeightedMean(gains, mean, grad * rank_weight)
            )
        else:
            grad_s, _, grad_z = ops.lse_outer_backward(
                scores, r, states[-1], f, torch.zeros_like(f), WeightedMean(rank_weight, mean, grad * gains)
            )
        for h in range(len(steps) - 2, -1, -1):
            # state h+1 = -f where the output exists (-inf elsewhere, i.e. f = +inf: zero weight).
            out = states[h + 1]
            exists = out > -torch.inf
            grad_f = torch.where(exists, -grad_z, torch.zeros_like(grad_z))
            if steps[h] == "row":
                _, gy, grad_z = ops.lse_outer_backward(r, scores, states[h], -out, grad_f)
                grad_s = grad_s + gy
            else:
                gx, _, grad_z = ops.lse_outer_backward(scores, r, states[h], -out, grad_f)
                grad_s = grad_s + gx
        # states[0] = −A/τ at real items.
        grad_a = torch.where(valid, -grad_z / tau, torch.zeros_like(grad_z))
        grad_s = grad_s + ops.abs_diff_sum_backward(scores, valid.to(scores.dtype), grad_a)
        grad_s = torch.where(valid, grad_s, torch.zeros_like(grad_s))
        if hasattr(ops, "release"):
            ops.release()  # the graph may outlive backward (a kept loss): keep no blocks with it
        return grad_s, *(None,) * 7


def sinkhorn_dcg(scores: Tensor, relaxation: SortRelaxation, ops: Any = None) -> Tensor:
    """Streaming smooth DCG ``[B]``; same value and gradient as the dense reference.

    ``ops`` supplies the block primitives of :mod:`..blocks` (default: a fresh
    :class:`blocks.TorchBlocks`).
    """
    ops = blocks.TorchBlocks() if ops is None else ops
    r = relaxation
    return SinkhornDCG.apply(scores, r.valid, r.rank_weight, r.gains, r.tau, r.iters, r.transposed, ops)[0]
