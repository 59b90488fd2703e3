"""On a CUDA device: every loss and the exact metric under ``torch.compile`` equal eager, and the
dense-layout calls with ``validate=False`` never wait for the device (skipped without CUDA)."""

import pytest
import torch

import torch_ndcg as tn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

LOSSES = {
    "neural_ndcg_loss": lambda s, r, **o: tn.neural_ndcg_loss(s, r, 5, **o),
    "approx_ndcg_loss": lambda s, r, **o: tn.approx_ndcg_loss(s, r, 5, **o),
    "listnet_loss": tn.listnet_loss,
    "listmle_loss": tn.listmle_loss,
    "softmax_loss": tn.softmax_loss,
    "ranknet_loss": tn.ranknet_loss,
    "lambda_loss": lambda s, r, **o: tn.lambda_loss(s, r, 5, **o),
    "pairwise_hinge_loss": tn.pairwise_hinge_loss,
}


def _batch(dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator(device="cuda").manual_seed(0)
    scores = torch.randn(8, 20, device="cuda", dtype=dtype, generator=generator)
    relevance = torch.randint(0, 4, (8, 20), device="cuda", generator=generator)
    mask = torch.rand(8, 20, device="cuda", generator=generator) < 0.85
    return scores, relevance, mask


def _value_and_grad(fn, scores, relevance, mask):
    x = scores.clone().requires_grad_(True)
    value = fn(x, relevance, mask=mask)
    value.backward()
    return value.detach(), x.grad


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_compiled_loss_equals_eager_on_cuda(name) -> None:
    torch._dynamo.reset()
    scores, relevance, mask = _batch()
    loss = LOSSES[name]

    def fn(s, r, mask):
        return loss(s, r, mask=mask, validate=False)

    eager = _value_and_grad(fn, scores, relevance, mask)
    compiled = _value_and_grad(torch.compile(fn), scores, relevance, mask)
    torch.testing.assert_close(compiled[0], eager[0], rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(compiled[1], eager[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("ties", ["average", "first"])
def test_compiled_metric_equals_eager_on_cuda(ties) -> None:
    torch._dynamo.reset()
    scores, relevance, mask = _batch(torch.float32)
    scores = scores.round(decimals=1)  # ties

    def fn(s, r, mask):
        return tn.ndcg(s, r, 10, mask=mask, ties=ties, validate=False)

    torch.testing.assert_close(torch.compile(fn)(scores, relevance, mask), fn(scores, relevance, mask))


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_with_validate_false_never_waits_for_the_device(name) -> None:
    scores, relevance, mask = _batch(torch.float32)
    x = scores.clone().requires_grad_(True)
    LOSSES[name](x, relevance, mask=mask, validate=False).backward()  # warm-up: Triton builds, caches
    x.grad = None
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        value = LOSSES[name](x, relevance, mask=mask, validate=False)
        value.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert torch.isfinite(value).all()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_validating_loss_compiles_as_one_graph_on_cuda(name) -> None:
    """The value checks run in one registered operator (a host read, as eager validate=True)."""
    torch._dynamo.reset()
    scores, relevance, mask = _batch()
    loss = LOSSES[name]

    def fn(s, r, mask):
        return loss(s, r, mask=mask)

    eager = _value_and_grad(fn, scores, relevance, mask)
    compiled = _value_and_grad(torch.compile(fn, fullgraph=True), scores, relevance, mask)
    torch.testing.assert_close(compiled[0], eager[0], rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(compiled[1], eager[1], rtol=1e-9, atol=1e-9)
    bad = scores.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="scores contains NaN"):
        torch.compile(fn, fullgraph=True)(bad, relevance, mask)


def test_the_sinkhorn_operator_on_cuda_passes_opcheck_and_equals_its_cpu_values() -> None:
    generator = torch.Generator().manual_seed(2)
    lengths = torch.tensor([9, 5, 0, 9, 2])
    values = torch.randn(5, 9, dtype=torch.float64, generator=generator)
    weights, gains = (torch.rand(5, 9, dtype=torch.float64, generator=generator) for _ in range(2))
    op = torch.ops.torch_ndcg.sinkhorn_dcg.default
    results = {}
    for device in ("cpu", "cuda"):
        x = values.to(device).requires_grad_()
        args = (x, lengths.to(device), weights.to(device), gains.to(device), 0.7, 4, False, None)
        if device == "cuda":
            torch.library.opcheck(op, args)
        dcg = op(*args)[0]
        (grad,) = torch.autograd.grad(dcg.sum(), x)
        results[device] = (dcg.detach().cpu(), grad.cpu())
    for on_cuda, on_cpu in zip(results["cuda"], results["cpu"]):
        torch.testing.assert_close(on_cuda, on_cpu, rtol=1e-9, atol=1e-12)


def test_the_kernel_path_on_cuda_equals_the_dense_path() -> None:
    scores, relevance, mask = _batch()
    kernel = _value_and_grad(lambda s, r, mask: tn.neural_ndcg_loss(s, r, 5, mask=mask, impl="kernel"), scores, relevance, mask)
    dense = _value_and_grad(lambda s, r, mask: tn.neural_ndcg_loss(s, r, 5, mask=mask, impl="dense"), scores, relevance, mask)
    for a, b in zip(kernel, dense):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
