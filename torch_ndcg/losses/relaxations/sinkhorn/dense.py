"""NeuralNDCG's smooth DCG from the explicit ``[B, N, N]`` NeuralSort + Sinkhorn matrix: the
readable reference under autograd, which every other path equals (and whose graph gives
second derivatives)."""

from __future__ import annotations

import torch
from torch import Tensor

from ...common import SortRelaxation, positions


def _normalise(logp: Tensor, exists: Tensor, dim: int) -> Tensor:
    """``logp − logsumexp(logp, dim)`` over existing entries; missing entries stay ``-inf``.

    Missing entries enter the logsumexp as the dtype's most negative finite number, so rows or
    columns with no entry at all keep a finite logsumexp and a NaN-free backward.
    """
    finite = logp.masked_fill(~exists, torch.finfo(logp.dtype).min)
    return (logp - torch.logsumexp(finite, dim, keepdim=True)).masked_fill(~exists, -torch.inf)


def dense_dcg(scores: Tensor, relaxation: SortRelaxation) -> Tensor:
    """Smooth DCG ``[B]`` from the explicit ``[B, N, N]`` NeuralSort + Sinkhorn matrix."""
    return torch.einsum("bi,bij,bj->b", relaxation.rank_weight, dense_matrix(scores, relaxation), relaxation.gains)


def dense_matrix(scores: Tensor, relaxation: SortRelaxation) -> Tensor:
    """The ``[B, N, N]`` NeuralSort + Sinkhorn matrix: row ``i``, the chance that each item takes
    rank ``i`` (0 beyond a list's real items); ``rank_weight`` and ``gains`` are not read."""
    valid, tau = relaxation.valid, relaxation.tau
    v = valid.to(scores.dtype)
    n = v.sum(-1, keepdim=True)
    pos = positions(scores)
    spread = ((scores[:, :, None] - scores[:, None, :]).abs() * v[:, None, :]).sum(-1)  # A_j
    logits = ((n + 1 - 2 * pos)[:, :, None] * scores[:, None, :] - spread[:, None, :]) / tau
    exists = (pos <= n)[:, :, None] & valid[:, None, :]  # rows: positions 1..n; columns: items
    logp = _normalise(logits.masked_fill(~exists, -torch.inf), exists, -1)  # NeuralSort P̂
    if relaxation.transposed:
        logp, exists = logp.transpose(1, 2), exists.transpose(1, 2)
    for _ in range(relaxation.iters):
        logp = _normalise(_normalise(logp, exists, -2), exists, -1)
    if relaxation.transposed:
        logp = logp.transpose(1, 2)
    return logp.exp()
