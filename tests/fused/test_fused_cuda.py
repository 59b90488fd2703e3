"""Triton losses on a GPU at realistic sizes (skipped without CUDA), and the GPU benchmark's CPU path."""

import pytest
import torch

import torch_ndcg as tn
from benchmarks import gpu

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _run(loss, impl: str, scores: torch.Tensor, labels: torch.Tensor, **options):
    if options.get("stochastic"):
        options["generator"] = torch.Generator("cuda").manual_seed(0)  # the same noise every run
    x = scores.clone().requires_grad_(True)
    value = loss(x, labels, impl=impl, reduction="none", **options)
    value.sum().backward()
    return value.detach(), x.grad


@cuda
@pytest.mark.parametrize(
    ("loss", "options"),
    [
        (tn.neural_ndcg, dict(sinkhorn_iters=50)),
        (tn.neural_ndcg, dict(sinkhorn_iters=50, transposed=True)),
        (tn.neural_ndcg, dict(sinkhorn_iters=10, stochastic=True, samples=4)),
        (tn.approx_ndcg, dict(k=10)),
    ],
)
def test_triton_equals_streaming_at_b64_n1024(loss, options) -> None:
    scores = torch.randn(64, 1024, device="cuda")
    labels = torch.randint(0, 5, (64, 1024), device="cuda")
    mask = torch.rand(64, 1024, device="cuda") > 0.1
    value, grad = _run(loss, "triton", scores, labels, mask=mask, **options)
    expected, expected_grad = _run(loss, "streaming", scores, labels, mask=mask, **options)
    torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-6)
    assert (grad[~mask] == 0).all()
    # Float32 gradients stray from float64 by rounding that the Sinkhorn backward amplifies (on
    # 1,024-item lists even the streaming path's reach ~5e-4 of the largest): Triton must be as
    # accurate as the float32 streaming path, measured against float64 on the same lists.
    deterministic = {key: value for key, value in options.items() if key not in ("stochastic", "samples")}
    _, exact = _run(loss, "streaming", scores.double(), labels, mask=mask, **deterministic)
    _, streaming32 = _run(loss, "streaming", scores, labels, mask=mask, **deterministic)
    scale = exact.abs().max().item()
    allowed = max(3e-4 * scale, 2 * (streaming32.double() - exact).abs().max().item())
    if options.get("stochastic"):  # float64 would draw different Gumbel noise: compare the float32 paths
        torch.testing.assert_close(grad, expected_grad, rtol=0, atol=allowed)
        return
    torch.testing.assert_close(grad.double(), exact, rtol=0, atol=allowed)


@cuda
def test_auto_uses_triton_on_cuda() -> None:
    from torch_ndcg.losses import common

    lists = common.prepare(torch.randn(2, 5, device="cuda"), torch.ones(2, 5, device="cuda"), None, None, "linear", "log2", True)
    assert common.resolve_impl("auto", lists) == "triton"


@cuda
def test_neural_ndcg_b64_n16384_fits_in_4_gib() -> None:
    scores = torch.randn(64, 16384, device="cuda", requires_grad=True)
    labels = torch.randint(0, 5, (64, 16384), device="cuda")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    tn.neural_ndcg_loss(scores, labels, sinkhorn_iters=50, impl="triton").backward()
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() - base < 4 * 2**30
    assert torch.isfinite(scores.grad).all()


def test_benchmark_without_cuda_says_so(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    gpu.main(quick=True, argv=[])
    assert "needs a CUDA device" in capsys.readouterr().out
