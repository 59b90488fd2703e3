"""A NaN per-list value is never skipped silently: the float32 corner where the kernel path's
float32 log-kernel cannot resolve its entries runs in float64 and equals the other paths, and a
numerical failure that still gives NaN raises a ValueError naming ``scores``."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses.relaxations.sinkhorn import kernel as sinkhorn_kernel


def _corner():
    torch.manual_seed(1)
    scores = (torch.randn(2, 200, dtype=torch.float64) * 1e4).round().float()[:1]
    relevance = torch.randint(1, 5, (2, 200))[:1]
    return scores, relevance


def _loss(scores, relevance, impl):
    x = scores.clone().requires_grad_()
    value = tn.neural_ndcg_loss(x, relevance, temperature=1e-3, transposed=True, impl=impl)
    value.backward()
    return value.detach(), x.grad


def test_integer_scores_around_1e4_at_small_temperature_in_float32():
    scores, relevance = _corner()
    kernel, dense = _loss(scores, relevance, "kernel"), _loss(scores, relevance, "dense")
    assert torch.isfinite(kernel[0]) and torch.isfinite(kernel[1]).all()
    torch.testing.assert_close(kernel, dense, atol=1e-5, rtol=1e-5)
    float64 = tn.neural_ndcg_loss(scores.double(), relevance, temperature=1e-3, transposed=True, impl="kernel")
    torch.testing.assert_close(kernel[0].double(), float64, atol=1e-5, rtol=1e-5)


def test_a_nan_list_value_raises_naming_scores(monkeypatch):
    monkeypatch.setattr(sinkhorn_kernel, "_compute_dtype", lambda s, n, width, tau: s.dtype)  # float32 regardless
    scores, relevance = _corner()
    with pytest.raises(ValueError, match="scores"):
        tn.neural_ndcg_loss(scores, relevance, temperature=1e-3, transposed=True, impl="kernel")


def test_skipped_lists_still_skip():
    value = tn.neural_ndcg_loss(torch.randn(2, 4), torch.tensor([[0, 0, 0, 0], [1, 0, 2, 0]]), reduction="none")
    assert torch.isnan(value[0]) and torch.isfinite(value[1])


def test_a_nan_list_value_raises_naming_scores_when_compiled_too(monkeypatch):
    monkeypatch.setattr(sinkhorn_kernel, "_compute_dtype", lambda s, n, width, tau: s.dtype)  # float32 regardless
    scores, relevance = _corner()
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda s, r: tn.neural_ndcg_loss(s, r, temperature=1e-3, transposed=True, impl="kernel"),
        backend="aot_eager", fullgraph=True,
    )  # fmt: skip
    with pytest.raises(ValueError, match="scores"):
        compiled(scores, relevance)
    torch._dynamo.reset()
