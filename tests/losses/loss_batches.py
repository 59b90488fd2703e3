"""Batches for the loss tests: padding in the middle of lists, ties, empty and all-masked lists."""

from __future__ import annotations

import torch


def awkward_batch(dtype: torch.dtype, batch: int = 6, length: int = 9, seed: int = 0):
    """scores, relevance, mask with every case the losses must get right in one batch."""
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(batch, length, generator=gen, dtype=dtype)
    relevance = torch.randint(0, 4, (batch, length), generator=gen).to(dtype)
    mask = torch.rand(batch, length, generator=gen) > 0.3
    mask[0] = True
    mask[0, length // 2] = False  # padding in the middle of a list
    scores[1, :4] = 0.25  # a tie group
    mask[1, :5] = True
    relevance[2] = 0  # no relevant item: IDCG = 0
    mask[3] = False  # every item masked
    mask[4] = False
    mask[4, 2] = True  # a single real item
    relevance[4, 2] = 2
    return scores, relevance, mask


def assert_flat_items_match_padding(fn, scores, relevance, mask, padded) -> None:
    """``fn`` on the real items in a shuffled flat layout (``indexes=``, one query id per row)
    gives the ``padded`` call's ``(value, gradient)``; ``fn`` sums over lists."""
    rows = torch.arange(scores.shape[0])[:, None].expand_as(scores)[mask]
    perm = torch.randperm(rows.numel(), generator=torch.Generator().manual_seed(0))
    x = scores[mask][perm].clone().requires_grad_()
    flat = fn(x, relevance[mask][perm], indexes=rows[perm])
    (flat_grad,) = torch.autograd.grad(flat, x)
    torch.testing.assert_close(flat.detach(), padded[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(flat_grad, padded[1][mask][perm], rtol=1e-12, atol=1e-12)
