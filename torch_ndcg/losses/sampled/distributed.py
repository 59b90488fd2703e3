r"""Negatives shared across ``torch.distributed`` ranks, with a gradient back to each rank's shard.

:func:`gather_negatives` concatenates every rank's ``[B', ...]`` tensor (rank order) into
``[world·B', ...]``. Its backward sums the gathered gradient over the ranks (one all-reduce)
and returns each rank its own rows: every rank's loss reads the others' items, so the gradient
of the ranks' summed losses reaches each item on the rank that made it. Under DDP, which
averages the ranks' parameter gradients, the ranks' mean loss then has the gradient of one
process that holds every rank's batch.

Memory per rank: the gathered ``world·B' × D`` items and, in the backward, a gradient of the
same size (the all-reduce is in place), plus the ``B × world·B'`` scores of the loss.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor


def _active() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


class _Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, local: Tensor) -> Tensor:
        ctx.rows = local.shape[0]
        parts = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, local.contiguous())
        return torch.cat(parts)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        grad = grad.contiguous().clone()
        dist.all_reduce(grad)
        start = dist.get_rank() * ctx.rows
        return grad[start : start + ctx.rows]


def gather_negatives(local: Tensor) -> Tensor:
    """Every rank's ``local`` (``[B', ...]``, the same shape on every rank) concatenated in rank
    order; ``local`` itself outside ``torch.distributed`` or with one rank.

    The gradient flows back to each rank's own rows (module docstring). Integer tensors (item
    ids) are gathered without a gradient.

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import gather_negatives
        >>> gather_negatives(torch.ones(2, 3)).shape  # not distributed: unchanged
        torch.Size([2, 3])
    """
    if not isinstance(local, Tensor) or local.dim() == 0:
        raise TypeError(f"local must be a tensor of at least one dimension [B', ...], got {local!r}")
    if not _active():
        return local
    if not local.is_floating_point():
        parts = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, local.contiguous())
        return torch.cat(parts)
    return _Gather.apply(local)


def rank_offset(local: Tensor) -> int:
    """Where this rank's rows start in :func:`gather_negatives`'s result (0 outside distributed)."""
    return dist.get_rank() * local.shape[0] if _active() else 0
