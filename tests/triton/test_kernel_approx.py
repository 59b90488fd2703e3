"""ApproxNDCG's rank kernel against the formula, written densely in float64."""

import pytest
import torch
from kernel_setup import DEVICE

from torch_ndcg.triton import approx_ranks as dispatched_ranks


def approx_ranks(scores, valid, tau, block=None):
    from torch_ndcg.triton.approx import approx_ranks as kernel

    return kernel(scores, valid, tau, block=block)


def reference_ranks(scores: torch.Tensor, valid: torch.Tensor, tau: float) -> torch.Tensor:
    """π_i = 1 + v_i Σ_{j≠i} v_j σ((s_j − s_i)/τ), as an N × N tensor, differentiable by autograd."""
    n = scores.shape[-1]
    v = valid.to(scores.dtype)
    pairwise = torch.sigmoid((scores[..., None, :] - scores[..., :, None]) / tau)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=scores.device)
    return 1 + v * (pairwise * v[..., None, :] * off_diagonal).sum(-1)


def lists(batch: int, n: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    # Rounded scores give ties; the mask drops items in the middle of lists, and one list is empty.
    scores = torch.randn(batch, n, dtype=torch.float64).round(decimals=1).to(dtype)
    valid = torch.rand(batch, n) > 0.3
    valid[0] = True
    valid[-1] = False
    return scores.to(DEVICE), valid.to(DEVICE)


@pytest.mark.parametrize("n", [1, 7, 33, 64])
@pytest.mark.parametrize("block", [None, (16, 16)])
def test_values_and_gradients_match_the_formula(n: int, block) -> None:
    scores, valid = lists(3, n, torch.float32)
    weights = torch.randn(3, n, dtype=torch.float64, device=DEVICE)
    exact = scores.double().requires_grad_(True)
    expected = reference_ranks(exact, valid, 0.7)
    (expected * weights).sum().backward()
    x = scores.clone().requires_grad_(True)
    got = approx_ranks(x, valid, 0.7, block)
    (got * weights.float()).sum().backward()
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x.grad.double(), exact.grad, rtol=1e-5, atol=1e-5)
    assert (x.grad[~valid] == 0).all()
    assert (got[~valid] == 1).all()


def test_float64_gradcheck_with_mask_and_ties() -> None:
    scores, valid = lists(2, 7, torch.float64)
    scores.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda s: approx_ranks(s, valid, 0.5, (16, 16)), (scores,))


def test_float64_matches_to_float64_precision() -> None:
    scores, valid = lists(2, 40, torch.float64)
    got = approx_ranks(scores, valid, 0.3, (16, 16))
    torch.testing.assert_close(got, reference_ranks(scores, valid, 0.3), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_scores_are_widened(dtype: torch.dtype) -> None:
    scores, valid = lists(2, 20, dtype)
    x = scores.clone().requires_grad_(True)
    got = dispatched_ranks(x, valid, 1.0)
    got.sum().backward()
    assert got.dtype == torch.float32 and x.grad.dtype == dtype
    torch.testing.assert_close(got, reference_ranks(scores.float(), valid, 1.0), rtol=1e-5, atol=1e-5)


def test_extreme_scores_stay_finite() -> None:
    scores = torch.tensor([[1e4, -1e4, 0.0, 1e4]], device=DEVICE, requires_grad=True)
    valid = torch.ones(1, 4, dtype=torch.bool, device=DEVICE)
    got = approx_ranks(scores, valid, 1e-3)
    got.sum().backward()
    assert torch.isfinite(got).all() and torch.isfinite(scores.grad).all()
    torch.testing.assert_close(got, torch.tensor([[1.5, 4.0, 3.0, 1.5]], device=DEVICE))


def test_leading_batch_dimensions() -> None:
    scores = torch.randn(2, 3, 9, device=DEVICE)
    valid = torch.ones(2, 3, 9, dtype=torch.bool, device=DEVICE)
    torch.testing.assert_close(approx_ranks(scores, valid, 1.0), reference_ranks(scores, valid, 1.0))
