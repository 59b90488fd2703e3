r"""ApproxNDCG's approximate ranks (Qin, Liu & Li, 2010) of only the items that can reach a
cutoff: the same smooth NDCG@k in O(N log M + M·N) instead of O(N²).

The approximate rank :math:`\tilde r_i = 1 + \sum_{j \ne i} \sigma((s_j - s_i)/\tau)` is at least
:math:`1 + \tfrac12 \#\{j \ne i : s_j \ge s_i\}`, since each term with :math:`s_j \ge s_i` is at
least ½. So the item at position ``q`` of the descending order has :math:`\tilde r \ge 1 + (q-1)/2`,
and once ``q > M = ⌈2(k + cτ)⌉`` its soft cutoff :math:`\sigma((k + \tfrac12 - \tilde r)/\tau)` is
below :math:`\sigma(-c)`. With ``c = 40``, :math:`\sigma(-40) \approx 4\cdot 10^{-18}` is below
float64's resolution, so those items' terms, values and gradients, are 0 to float precision: only
the top ``M`` items by score (one ``topk``) need their ranks, each a sum over the whole list.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from ..common import second_order
from ..transforms import ListsFunction, vmap_over_lists
from .blocks import blocks

# The soft cutoff of an item left out is below σ(−SATURATION) ≈ 4e-18, under float64's ε/2.
SATURATION = 40


def candidates(length: int, cutoff: int | None, tau: float) -> int:
    """``M``: how many of a list's top-scored items can reach the soft cutoff (see the module);
    every item without a cutoff."""
    if cutoff is None:
        return length
    # A branch, not min(): under torch.compile(dynamic=True) the count is then N (a plain symbol)
    # or a constant, never a compound symbol (which autograd.Function inputs cannot carry).
    # Compared before ceil: at a τ near float64's largest the bound is inf, which ceil refuses.
    wanted = 2 * (cutoff + SATURATION * tau)
    return length if wanted >= length else math.ceil(wanted)


def top_candidates(scores: Tensor, valid: Tensor, count: int) -> Tensor:
    """The positions ``[B, M]`` of each list's ``M`` highest real scores (padding after them)."""
    lowest = torch.full_like(scores, -torch.inf)
    return torch.topk(torch.where(valid, scores, lowest), count, dim=-1, sorted=False).indices


def _sigmoids(scores: Tensor, chosen: Tensor, tau: float) -> Tensor:
    """``σ((s_j − s_c)/τ)`` ``[b, m, N]`` for the candidates ``c`` at positions ``chosen`` ``[b, m]``."""
    return torch.sigmoid((scores[:, None, :] - scores.gather(-1, chosen)[:, :, None]) / tau)


def dense_candidate_ranks(scores: Tensor, valid: Tensor, chosen: Tensor, tau: float) -> Tensor:
    """The candidates' ranks from the whole ``[B, M, N]`` sigmoid matrix, under autograd."""
    return 0.5 + (_sigmoids(scores, chosen, tau) * valid[:, None, :]).sum(-1)  # 1 + Σ − σ(0) for itself


class CandidateRanks(ListsFunction):
    r"""``r̃_c = 1 + Σ_{j ≠ c, real} σ((s_j − s_c)/τ)`` ``[B, M]`` for the candidates ``c``, with
    an analytic backward: ``∂r̃_c/∂s_j = σ'_{cj}/τ`` and ``∂r̃_c/∂s_c = −Σ_{j≠c} σ'_{cj}/τ``. Both
    passes recompute the sigmoids in bounded blocks (:func:`.blocks.blocks`), so memory is
    O(B·(N + M)); under ``create_graph=True`` the backward differentiates
    :func:`dense_candidate_ranks` (at its memory) for second derivatives."""

    @staticmethod
    def forward(scores: Tensor, valid: Tensor, chosen: Tensor, tau: float) -> Tensor:
        v = valid.to(scores.dtype)
        ranks = torch.empty(chosen.shape, dtype=scores.dtype, device=scores.device)
        for lists, rows in blocks(*chosen.shape, scores.shape[-1], scores.element_size()):
            pairs = _sigmoids(scores[lists], chosen[lists, rows], tau)
            ranks[lists, rows] = 0.5 + torch.bmm(pairs, v[lists, :, None])[:, :, 0]
        return ranks

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        scores, valid, chosen, tau = inputs
        ctx.save_for_backward(scores, valid, chosen)
        ctx.tau = tau

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(CandidateRanks.apply, info, in_dims, args)

    @staticmethod
    def backward(ctx, grad_ranks: Tensor):
        scores, valid, chosen = ctx.saved_tensors
        tau = ctx.tau
        if torch.is_grad_enabled():  # create_graph=True (and torch.func): the dense reference's graph
            dense = lambda x: dense_candidate_ranks(x, valid, chosen, tau)  # noqa: E731
            return second_order(dense, scores, grad_ranks), None, None, None
        v = valid.to(scores.dtype)
        upstream = grad_ranks * v.gather(-1, chosen) / tau  # a padded candidate passes nothing back
        grad = torch.zeros_like(scores)
        for lists, rows in blocks(*chosen.shape, scores.shape[-1], scores.element_size()):
            which, weight = chosen[lists, rows], upstream[lists, rows]
            slopes = _sigmoids(scores[lists], which, tau)
            slopes.sub_(slopes.square()).mul_(v[lists, None, :])  # σ'; the candidate's own σ'(0) cancels
            grad[lists] += torch.bmm(weight[:, None, :], slopes)[:, 0, :]
            grad[lists] = grad[lists].scatter_add(-1, which, -weight * slopes.sum(-1))
        return grad, None, None, None


def candidate_ranks(scores: Tensor, valid: Tensor, chosen: Tensor, tau: float) -> Tensor:
    """The approximate ranks ``[B, M]`` of the items at positions ``chosen`` ``[B, M]``."""
    return CandidateRanks.apply(scores, valid, chosen, tau)


def dense_ranks(scores: Tensor, valid: Tensor, tau: float) -> Tensor:
    r"""``π_i = 1 + v_i Σ_{j≠i} v_j σ((s_j − s_i)/τ)`` from the explicit ``[B, N, N]`` matrix."""
    v = valid.to(scores.dtype)
    others = v[:, None, :] * (1 - torch.eye(scores.shape[-1], dtype=scores.dtype, device=scores.device))
    pairs = torch.sigmoid((scores[:, None, :] - scores[:, :, None]) / tau)
    return 1 + v * (pairs * others).sum(-1)


class StreamingRanks(ListsFunction):
    """The same ranks in O(B·N) memory; the backward recomputes the sigmoid blocks."""

    @staticmethod
    def forward(scores: Tensor, valid: Tensor, tau: float, ops: Any) -> Tensor:
        ranks = ops.approx_ranks(scores, valid.to(scores.dtype), tau)
        _release(ops)
        return ranks

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        scores, valid, tau, ops = inputs
        ctx.save_for_backward(scores, valid)
        ctx.tau, ctx.ops = tau, ops

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(StreamingRanks.apply, info, in_dims, args)

    @staticmethod
    def backward(ctx, grad_pi: Tensor):
        scores, valid = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True (and torch.func): the dense reference's graph
            return second_order(lambda x: dense_ranks(x, valid, ctx.tau), scores, grad_pi), None, None, None
        grad = ctx.ops.approx_ranks_backward(scores, valid.to(scores.dtype), ctx.tau, grad_pi)
        _release(ctx.ops)
        return grad, None, None, None


def _release(ops: Any) -> None:
    """Drop the block buffers: the graph, and so ``ops``, may live on after backward."""
    if hasattr(ops, "release"):
        ops.release()
