"""impl="triton" through the public losses equals impl="streaming": every variant, values and gradients.

float64, so that equality is to rounding; float32 accuracy is checked per primitive and for the
whole Sinkhorn in test_kernel_sinkhorn.py and test_kernel_losses.py.
"""

import pytest

pytest.importorskip("triton")  # the kernels need the real package

import torch  # noqa: E402
from kernel_setup import DEVICE  # noqa: E402

import torch_ndcg as tn  # noqa: E402
from torch_ndcg.losses import common  # noqa: E402

VARIANTS = {
    "neural": dict(sinkhorn_iters=3),
    "neural-transposed": dict(sinkhorn_iters=3, transposed=True),
    "neural-stochastic": dict(sinkhorn_iters=2, stochastic=True, samples=3, beta=0.3),
    "approx": dict(),
}


def batch(n: int, dtype: torch.dtype):
    scores = torch.randn(3, n, dtype=torch.float64).round(decimals=1).to(DEVICE, dtype)  # ties
    labels = torch.randint(0, 4, (3, n), device=DEVICE)
    mask = torch.rand(3, n, device=DEVICE) > 0.3
    mask[0] = True
    mask[1, : n // 2] = False  # padding first, then real items
    return scores, labels, mask


def value_and_grad(variant: str, impl: str, scores, labels, mask, k):
    x = scores.clone().requires_grad_(True)
    options = dict(VARIANTS[variant], mask=mask, k=k, gain="exp2", temperature=0.5, reduction="none", impl=impl)
    if variant.startswith("neural"):
        value = tn.neural_ndcg(x, labels, generator=torch.Generator(DEVICE).manual_seed(1), **options)
    else:
        value = tn.approx_ndcg(x, labels, **options)
    (value * torch.arange(1, 4, device=DEVICE)).sum().backward()
    return value.detach(), x.grad


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize(("n", "k"), [(1, None), (33, 5)])
def test_triton_equals_streaming(variant: str, n: int, k) -> None:
    scores, labels, mask = batch(n, torch.float64)
    got = value_and_grad(variant, "triton", scores, labels, mask, k)
    expected = value_and_grad(variant, "streaming", scores, labels, mask, k)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-10, equal_nan=True)  # NaN: an empty list
    assert (got[1][~mask] == 0).all()


def test_approx_gradcheck_through_the_public_loss() -> None:
    scores, labels, mask = batch(6, torch.float64)
    scores.requires_grad_(True)

    def loss(s):
        return tn.approx_ndcg_loss(s, labels, k=3, mask=mask, temperature=0.7, impl="triton")

    assert torch.autograd.gradcheck(loss, (scores,))


def test_auto_picks_triton_only_for_cuda_tensors() -> None:
    scores, labels, mask = batch(8, torch.float32)
    lists = common.prepare(scores, labels, None, mask, "linear", "log2", True)
    assert (common.resolve_impl("auto", lists) == "triton") == (DEVICE == "cuda")
