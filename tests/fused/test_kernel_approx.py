"""ApproxNDCG's rank kernels against the formula, written densely in float64 and differentiated by autograd."""

import pytest

pytest.importorskip("triton")  # the kernels need the real package

import torch  # noqa: E402
from kernel_setup import DEVICE  # noqa: E402

from torch_ndcg.fused.approx import approx_ranks, approx_ranks_backward  # noqa: E402


def reference_ranks(scores: torch.Tensor, valid: torch.Tensor, tau: float) -> torch.Tensor:
    """π_i = 1 + v_i Σ_{j≠i} v_j σ((s_j − s_i)/τ), as an N × N tensor."""
    n = scores.shape[-1]
    pairwise = torch.sigmoid((scores[..., None, :] - scores[..., :, None]) / tau)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=scores.device)
    return 1 + valid * (pairwise * valid[..., None, :] * off_diagonal).sum(-1)


def lists(batch: int, n: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    # Rounded scores give ties; the mask drops items in the middle of lists; one list is empty.
    scores = torch.randn(batch, n, dtype=torch.float64).round(decimals=1)
    valid = (torch.rand(batch, n) > 0.3).double()
    valid[0] = 1
    valid[-1] = 0
    return scores.to(DEVICE, dtype), valid.to(DEVICE, dtype)


@pytest.mark.parametrize("n", [1, 7, 33, 64])
@pytest.mark.parametrize(("dtype", "block"), [(torch.float64, (16, 16)), (torch.float32, None)])
def test_values_and_gradients_match_the_formula(n: int, dtype: torch.dtype, block) -> None:
    scores, valid = lists(3, n, dtype)
    grad_pi = torch.randn(3, n, dtype=torch.float64, device=DEVICE)
    exact = scores.double().requires_grad_(True)
    expected = reference_ranks(exact, valid.double(), 0.7)
    (expected * grad_pi).sum().backward()
    got = approx_ranks(scores, valid, 0.7, block=block)
    grad = approx_ranks_backward(scores, valid, 0.7, grad_pi.to(dtype), block=block)
    assert got.dtype == grad.dtype == dtype
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(got.double(), expected, rtol=tol, atol=tol)
    torch.testing.assert_close(grad.double(), exact.grad, rtol=tol, atol=tol * exact.grad.abs().max().item())
    assert (grad[valid == 0] == 0).all() and (got[valid == 0] == 1).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_scores_are_widened_on_load(dtype: torch.dtype) -> None:
    scores, valid = lists(2, 20, dtype)
    got = approx_ranks(scores, valid, 1.0)
    assert got.dtype == torch.float32
    expected = reference_ranks(scores.double(), valid.double(), 1.0)
    torch.testing.assert_close(got.double(), expected, rtol=1e-6, atol=1e-6)


def test_extreme_scores_stay_finite() -> None:
    scores = torch.tensor([[1e4, -1e4, 0.0, 1e4]], device=DEVICE)
    valid = torch.ones(1, 4, device=DEVICE)
    got = approx_ranks(scores, valid, 1e-3)
    grad = approx_ranks_backward(scores, valid, 1e-3, torch.ones(1, 4, device=DEVICE))
    assert torch.isfinite(grad).all()
    torch.testing.assert_close(got, torch.tensor([[1.5, 4.0, 3.0, 1.5]], device=DEVICE))
