"""The Triton Sinkhorn primitives equal the streaming PyTorch ones (torch_ndcg.losses.kernels.TorchBlocks)."""

import pytest

pytest.importorskip("triton")  # the kernels need the real package

import torch  # noqa: E402
from kernel_setup import DEVICE  # noqa: E402

from torch_ndcg.losses.kernels import TorchBlocks, WeightedMean  # noqa: E402
from torch_ndcg.fused import sinkhorn as triton_ops  # noqa: E402

torch_ops = TorchBlocks()  # the streaming PyTorch primitives

SIZES = [1, 7, 33, 64]
# float64 with 16-wide tiles (several tiles per list: the online reductions across tiles), and
# float32 with the default tiles (one tile per list up to N = 64).
CASES = [(torch.float64, (16, 16)), (torch.float32, None)]


def close(got, expected) -> None:
    """1e-5 relative in float32 (to the result's scale: entries are sums with cancellation)."""
    for g, e in zip(got, expected):
        if e is None:
            assert g is None
            continue
        tol = 1e-5 if e.dtype == torch.float32 else 1e-11
        scale = e[torch.isfinite(e)].abs().max().item() if torch.isfinite(e).any() else 1.0
        torch.testing.assert_close(g, e, rtol=tol, atol=tol * max(scale, 1.0))


def vectors(n: int, dtype: torch.dtype, count: int = 4) -> list[torch.Tensor]:
    # Rounded y gives ties; -inf in z drops columns anywhere, and the middle list has none at all.
    x, y, z, *rest = [torch.randn(3, n, dtype=torch.float64) for _ in range(count)]
    y = y.round(decimals=1)
    z[torch.rand(3, n) < 0.3] = -torch.inf
    z[1] = -torch.inf
    return [t.to(DEVICE, dtype) for t in (x, y, z, *rest)]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("dtype", "block"), CASES)
def test_lse_outer(n: int, dtype: torch.dtype, block) -> None:
    x, y, z, h = vectors(n, dtype)
    close(triton_ops.lse_outer(x, y, z, h, block=block), torch_ops.lse_outer(x, y, z, h))
    close(triton_ops.lse_outer(x, y, z, block=block), torch_ops.lse_outer(x, y, z))
    f, m = triton_ops.lse_outer(x, y, z, h, block=block)
    assert (f[1] == -torch.inf).all() and (m[1] == 0).all()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("dtype", "block"), CASES)
def test_lse_outer_backward(n: int, dtype: torch.dtype, block) -> None:
    x, y, z, h, grad_f, grad_m = vectors(n, dtype, count=6)
    f, m = torch_ops.lse_outer(x, y, z, h)
    f[0, 0] = torch.inf  # a row the caller dropped
    # As in the Sinkhorn backward: dropped rows and rows without columns get no gradient.
    dead = ~torch.isfinite(f)
    grad_f, grad_m = grad_f.masked_fill(dead, 0.0), grad_m.masked_fill(dead, 0.0)
    mean = WeightedMean(h, m, grad_m)
    expected = torch_ops.lse_outer_backward(x, y, z, f, grad_f, mean)
    close(triton_ops.lse_outer_backward(x, y, z, f, grad_f, mean, block=block), expected)
    expected = torch_ops.lse_outer_backward(x, y, z, f, grad_f)
    close(triton_ops.lse_outer_backward(x, y, z, f, grad_f, block=block), expected)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("dtype", "block"), CASES)
def test_abs_diff_sum_and_backward(n: int, dtype: torch.dtype, block) -> None:
    _, s, _, grad_a = vectors(n, dtype)
    valid = (torch.rand(3, n, device=DEVICE) > 0.3).to(dtype)
    close([triton_ops.abs_diff_sum(s, valid, block=block)], [torch_ops.abs_diff_sum(s, valid)])
    got = triton_ops.abs_diff_sum_backward(s, valid, grad_a, block=block)
    close([got], [torch_ops.abs_diff_sum_backward(s, valid, grad_a)])
