"""The pairwise losses agree at the hinge's kink on every path, and refuse multipliers of the
scores that are infinite or overflow the compute dtype, by name."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_hinge_gradient_at_the_kink_is_the_same_on_every_path(dtype):
    # Pairs exactly at the margin (s_i − s_j = 1) and pairs on either side of it.
    scores = torch.tensor([[2.0, 1.0, 0.0, 0.5], [0.0, 0.0, 3.0, 2.0]], dtype=dtype)
    relevance = torch.tensor([[3, 2, 1, 0], [1, 0, 2, 0]])
    grads = {}
    for impl in ("dense", "streaming", "auto"):
        s = scores.clone().requires_grad_()
        tn.pairwise_hinge_loss(s, relevance, impl=impl).backward()
        grads[impl] = s.grad
    torch.testing.assert_close(grads["streaming"], grads["dense"], rtol=0, atol=0)
    torch.testing.assert_close(grads["auto"], grads["dense"], rtol=0, atol=0)
    assert grads["dense"][0, 1] != 0  # the pair (1, 3) is inside the margin: there is a gradient


CASES = [
    (tn.ranknet_loss, "sigma"),
    (tn.lambda_loss, "sigma"),
    (tn.lambda_loss, "mu"),
    (tn.pairwise_hinge_loss, "margin"),
]


@pytest.mark.parametrize(("loss", "name"), CASES)
@pytest.mark.parametrize("value", [float("inf"), 1e39])  # 1e39 overflows float32
def test_infinite_or_overflowing_multipliers_are_refused_by_name(loss, name, value):
    scores = torch.randn(2, 5)
    relevance = torch.randint(0, 3, (2, 5))
    with pytest.raises(ValueError, match=name):
        loss(scores, relevance, **{name: value})


def test_a_large_multiplier_that_fits_float64_is_accepted():
    value = tn.ranknet_loss(torch.randn(2, 5, dtype=torch.float64), torch.randint(0, 3, (2, 5)), sigma=1e39)
    assert not torch.isnan(value)
