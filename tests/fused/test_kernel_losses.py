"""Whole smooth DCGs with the Triton primitives equal the streaming PyTorch ones: values and gradients."""

import pytest

pytest.importorskip("triton")  # the kernels need the real package

import torch  # noqa: E402
from kernel_setup import DEVICE  # noqa: E402

from torch_ndcg.losses.relaxations.blocks import TorchBlocks  # noqa: E402
from torch_ndcg.losses.common import SortRelaxation  # noqa: E402
from torch_ndcg.losses.relaxations.sinkhorn.streaming import sinkhorn_dcg  # noqa: E402
from torch_ndcg.fused import ops as triton_ops  # noqa: E402

torch_ops = TorchBlocks()  # the streaming PyTorch primitives


def lists(n: int, dtype: torch.dtype, batch: int = 3):
    """Scores with ties, padding in the middle of lists, a one-item list; rank weights to k = 5."""
    scores = torch.randn(batch, n, dtype=torch.float64).round(decimals=1)
    valid = torch.rand(batch, n) > 0.3
    valid[0] = True
    valid[-1] = False
    valid[-1, n // 2] = True
    scores = torch.where(valid, scores, torch.zeros_like(scores))
    gains = torch.where(valid, torch.randint(0, 4, (batch, n)).double(), torch.zeros_like(scores))
    depth = valid.sum(-1, keepdim=True).clamp(max=5)
    pos = torch.arange(1, n + 1, dtype=torch.float64)
    rank_weight = torch.where(pos <= depth, 1 / torch.log2(pos + 1), torch.zeros_like(scores))
    return [t.to(DEVICE) if t.dtype == torch.bool else t.to(DEVICE, dtype) for t in (scores, valid, rank_weight, gains)]


def dcg_and_grad(ops, scores, valid, rank_weight, gains, tau, iters, transposed):
    x = scores.clone().requires_grad_(True)
    dcg = sinkhorn_dcg(x, SortRelaxation(valid, rank_weight, gains, tau, iters, transposed), ops)
    (dcg * torch.arange(1, len(dcg) + 1, dtype=dcg.dtype, device=DEVICE)).sum().backward()
    return dcg.detach(), x.grad


@pytest.mark.parametrize(("n", "transposed"), [(1, False), (7, True), (33, False), (33, True), (64, False)])
def test_neural_sinkhorn_matches_streaming_pytorch(n: int, transposed: bool) -> None:
    """float64: the same function to rounding. float32: values to 1e-5 relative, gradients as
    close to the float64 gradient as the PyTorch path's float32 gradient is.

    The float32 Sinkhorn gradient is ill-conditioned: a one-ulp change in any primitive (a
    different summation order, say) moves it by ~1e-5 to 1e-4 of its scale on lists with
    padding (measured over 12 seeds at N = 33: median 4e-5, max 1.1e-4, the same for both
    paths), so two float32 implementations cannot agree to 1e-5 of each other; both must stay
    within 3e-4 of the scale of the exact (float64) gradient.
    """
    args64 = lists(n, torch.float64)
    exact = dcg_and_grad(torch_ops, *args64, 0.5, 3, transposed)
    for g, e in zip(dcg_and_grad(triton_ops, *args64, 0.5, 3, transposed), exact):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-10 * max(e.abs().max().item(), 1.0))
    args32 = [t if t.dtype == torch.bool else t.float() for t in args64]
    got = dcg_and_grad(triton_ops, *args32, 0.5, 3, transposed)
    reference = dcg_and_grad(torch_ops, *args32, 0.5, 3, transposed)
    scale = max(exact[1].abs().max().item(), 1.0)
    for grad in (got[1], reference[1]):
        torch.testing.assert_close(grad.double(), exact[1], rtol=0, atol=3e-4 * scale)
    torch.testing.assert_close(got[0], reference[0], rtol=1e-5, atol=1e-6)
    assert (got[1][~args32[1]] == 0).all()


def test_neural_sinkhorn_float64_gradcheck() -> None:
    # Small: every gradcheck column is a full interpreted forward pass.
    scores, valid, rank_weight, gains = lists(5, torch.float64, batch=2)
    scores.requires_grad_(True)

    def dcg(s):
        return sinkhorn_dcg(s, SortRelaxation(valid, rank_weight, gains, 0.7, 2, True), triton_ops)

    assert torch.autograd.gradcheck(dcg, (scores,))
