"""The Triton Sinkhorn primitives equal the streaming PyTorch ones (torch_ndcg.losses.relaxations.blocks.TorchBlocks)."""

import pytest

pytest.importorskip("triton")  # the kernels need the real package

import torch  # noqa: E402
from kernel_setup import DEVICE  # noqa: E402

from torch_ndcg.losses.relaxations.blocks import TorchBlocks, WeightedMean  # noqa: E402
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


def test_float32_backward_as_accurate_as_torch_where_the_normaliser_is_large() -> None:
    # NeuralSort's x_i = n + 1 - 2i makes |f| reach thousands on long lists, where f itself rounds
    # to ~|f|·ε: weights exp(t - f) must still sum to one per row, or the Sinkhorn backward
    # amplifies the error (the kernels once lost two digits against float64 at 64 x 1024).
    n = 300
    generator = torch.Generator().manual_seed(0)
    x = (n + 1 - 2 * torch.arange(1, n + 1, dtype=torch.float64)).repeat(2, 1)
    y, h, grad_f, grad_m = (torch.randn(2, n, dtype=torch.float64, generator=generator) for _ in range(4))
    y = 2 * y
    z = 50 * torch.randn(2, n, dtype=torch.float64, generator=generator)
    z[0, -5:] = -torch.inf
    f, m = torch_ops.lse_outer(x, y, z, h)
    exact = torch_ops.lse_outer_backward(x, y, z, f, grad_f, WeightedMean(h, m, grad_m))

    def errors(ops) -> list[float]:
        x32, y32, z32, h32, gf32, gm32 = (t.to(DEVICE, torch.float32) for t in (x, y, z, h, grad_f, grad_m))
        f32, m32 = ops.lse_outer(x32, y32, z32, h32)
        got = ops.lse_outer_backward(x32, y32, z32, f32, gf32, WeightedMean(h32, m32, gm32))
        return [((g.cpu().double() - e).abs().max() / e.abs().max()).item() for g, e in zip(got, exact)]

    for triton_error, torch_error in zip(errors(triton_ops), errors(torch_ops)):
        assert triton_error < 3 * max(torch_error, 1e-7)
