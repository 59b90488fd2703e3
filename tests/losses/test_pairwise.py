"""Pairwise losses: streaming equals dense over many blocks, holds one slab at a time, and RankNet is
LambdaLoss without weights."""

from __future__ import annotations

import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import torch_ndcg as tn
from torch_ndcg.losses import pairwise

PAIR_LOSSES = [
    (tn.ranknet_loss, {"sigma": 1.5}),
    (tn.pairwise_hinge_loss, {"margin": 0.7}),
    (tn.lambda_loss, {"k": 5, "gain": "exp2"}),
    (tn.lambda_loss, {"weighting": "ndcg_loss2"}),
]


def _value_and_grad(loss, scores, relevance, mask, **options):
    x = scores.clone().requires_grad_()
    value = loss(x, relevance, mask=mask, reduction="sum", **options)
    value.backward()
    return value, x.grad


@pytest.mark.parametrize(("loss", "options"), PAIR_LOSSES)
def test_streaming_over_many_blocks_equals_dense(loss, options, monkeypatch):
    gen = torch.Generator().manual_seed(4)
    scores = torch.randn(3, 37, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 4, (3, 37), generator=gen).double()
    mask = torch.rand(3, 37, generator=gen) > 0.2
    dense = _value_and_grad(loss, scores, relevance, mask, impl="dense", **options)
    monkeypatch.setattr(pairwise, "SLAB_ELEMENTS", 3 * 37 * 5)  # 5 rows per block, the last one short
    assert len(pairwise.row_blocks(3, 37)) == 8
    streamed = _value_and_grad(loss, scores, relevance, mask, impl="streaming", **options)
    torch.testing.assert_close(streamed, dense, rtol=1e-12, atol=1e-12)


class _LargestTensor(TorchDispatchMode):
    """numel of the largest tensor any operator returns while active."""

    largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(tensor, torch.Tensor):
                self.largest = max(self.largest, tensor.numel())
        return out


@pytest.mark.parametrize(("loss", "options"), [PAIR_LOSSES[0], PAIR_LOSSES[3]])
def test_long_lists_never_hold_more_than_one_slab(loss, options, monkeypatch):
    """No tensor larger than one [B, block, N] slab, none N × N (the losses benchmark measures
    the resulting peak memory at B = 4, N = 4096)."""
    batch, length = 2, 256
    monkeypatch.setattr(pairwise, "SLAB_ELEMENTS", batch * length * 16)
    scores = torch.randn(batch, length, requires_grad=True)
    relevance = torch.randint(0, 5, (batch, length))
    with _LargestTensor() as seen:
        loss(scores, relevance, impl="auto", **options).backward()
    assert seen.largest == batch * length * 16
    assert torch.isfinite(scores.grad).all()


def test_auto_is_dense_for_short_lists_and_streaming_for_long(monkeypatch):
    calls = []
    monkeypatch.setattr(pairwise, "dense_pair_sum", lambda *a, _real=pairwise.dense_pair_sum: calls.append("dense") or _real(*a))
    tn.ranknet_loss(torch.randn(2, 8), torch.randint(0, 3, (2, 8)))
    assert calls == ["dense"]
    tn.ranknet_loss(torch.randn(2, 400), torch.randint(0, 3, (2, 400)))
    assert calls == ["dense"]


def test_ranknet_is_unweighted_lambda_loss_in_bits_per_pair():
    gen = torch.Generator().manual_seed(6)
    scores = torch.randn(4, 9, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 3, (4, 9), generator=gen).double()
    mask = torch.rand(4, 9, generator=gen) > 0.25
    pairs = ((relevance[:, :, None] > relevance[:, None, :]) & mask[:, :, None] & mask[:, None, :]).sum((-2, -1))
    ranknet = tn.ranknet_loss(scores, relevance, mask=mask, sigma=2.0, reduction="none", empty="keep")
    summed = tn.lambda_loss(scores, relevance, mask=mask, weighting="none", sigma=2.0, reduction="none", empty="keep")
    torch.testing.assert_close(summed, ranknet * pairs / math.log(2), rtol=1e-12, atol=1e-12)


def test_pair_counts_without_a_pair_matrix():
    gains = torch.tensor([[3.0, 1.0, 1.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    valid = torch.tensor([[True, True, True, True, False], [True] * 5])
    lists = tn.losses.common.LossLists(gains, valid, gains, gains[:, 0], None, torch.Size([2]))
    assert pairwise.pair_counts(lists).tolist() == [5, 0]  # 3>1, 3>1, 3>0, 1>0, 1>0


@pytest.mark.parametrize("loss", [tn.ranknet_loss, tn.pairwise_hinge_loss])
def test_bad_options_name_the_argument(loss):
    scores, relevance = torch.randn(2, 4), torch.randint(0, 3, (2, 4))
    option = "sigma" if loss is tn.ranknet_loss else "margin"
    with pytest.raises(ValueError, match=option):
        loss(scores, relevance, **{option: 0.0})
    with pytest.raises(ValueError, match="impl"):
        loss(scores, relevance, impl="triton")
    with pytest.raises(TypeError):
        loss(scores, relevance, 3)  # no cutoff: options are keyword-only
