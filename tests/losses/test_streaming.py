"""The streaming implementations equal the dense references, values and gradients, in O(N) memory."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses.relaxations import blocks as kernels

from loss_batches import awkward_batch

TOL = {torch.float32: 1e-5, torch.float64: 1e-9}

VARIANTS = [
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 8}),
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 8, "transposed": True}),
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 5, "stochastic": True, "samples": 3, "beta": 0.5}),
    (tn.approx_ndcg_loss, {}),
]


def _value_and_grad(loss, scores, relevance, mask, impl, options):
    options = dict(options)
    if options.get("stochastic"):
        options["generator"] = torch.Generator().manual_seed(7)  # the same noise for both impls
    x = scores.clone().requires_grad_()
    values = loss(x, relevance, mask=mask, impl=impl, reduction="none", empty="zero", **options)
    values.sum().backward()
    return values.detach(), x.grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 5, None])
@pytest.mark.parametrize("gain", ["linear", "exp2"])
@pytest.mark.parametrize(("loss", "options"), VARIANTS)
def test_streaming_equals_dense(monkeypatch, dtype, k, gain, loss, options):
    if dtype == torch.float64:  # a few rows per block: blocks cross list and row boundaries
        monkeypatch.setattr(kernels, "BLOCK_BYTES", 4 * 9 * 8)
    scores, relevance, mask = awkward_batch(dtype)
    options = {"k": k, "gain": gain, "temperature": 0.5, **options}
    dense = _value_and_grad(loss, scores, relevance, mask, "dense", options)
    streaming = _value_and_grad(loss, scores, relevance, mask, "streaming", options)
    tol = TOL[dtype]
    torch.testing.assert_close(streaming[0], dense[0], atol=tol, rtol=tol)
    torch.testing.assert_close(streaming[1], dense[1], atol=tol, rtol=tol)
    assert dense[1].abs().sum() > 0  # the comparison is not between two zero gradients


@pytest.mark.parametrize("block_bytes", [8, 9 * 9 * 8 * 2, kernels.BLOCK_BYTES])
def test_block_size_does_not_change_the_result(monkeypatch, block_bytes):
    scores, relevance, mask = awkward_batch(torch.float64)
    reference = _value_and_grad(tn.neural_ndcg_loss, scores, relevance, mask, "dense", {"sinkhorn_iters": 7})
    monkeypatch.setattr(kernels, "BLOCK_BYTES", block_bytes)
    got = _value_and_grad(tn.neural_ndcg_loss, scores, relevance, mask, "streaming", {"sinkhorn_iters": 7})
    torch.testing.assert_close(got, reference, atol=1e-12, rtol=1e-12)


def _largest_saved(fn) -> int:
    """numel of the largest tensor autograd keeps for backward while ``fn`` runs."""
    sizes = []

    def pack(tensor):
        sizes.append(tensor.numel())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return max(sizes)


@pytest.mark.parametrize("loss", [tn.neural_ndcg_loss, tn.approx_ndcg_loss])
def test_streaming_saves_only_vectors(loss):
    batch, length = 3, 40
    scores = torch.randn(batch, length, requires_grad=True)
    relevance = torch.randint(0, 3, (batch, length))
    for impl, bound in (("streaming", batch * length), ("dense", None)):
        largest = _largest_saved(lambda: loss(scores, relevance, impl=impl, sinkhorn_iters=3) if loss is tn.neural_ndcg_loss else loss(scores, relevance, impl=impl))
        if bound is None:
            assert largest >= batch * length * length  # the check can see an N × N tensor
        else:
            assert largest <= bound


def test_stochastic_samples_fold_into_the_batch_without_n_squared_state():
    scores = torch.randn(2, 30, requires_grad=True)
    relevance = torch.randint(0, 3, (2, 30))
    largest = _largest_saved(
        lambda: tn.neural_ndcg_loss(scores, relevance, stochastic=True, samples=8, sinkhorn_iters=3, impl="streaming")
    )
    assert largest <= 8 * 2 * 30


def test_auto_picks_by_shape_alone_for_neuralndcg_and_approxndcg(monkeypatch):
    from torch_ndcg.losses import common

    calls = []

    def spy(impl, lists, _real=common.resolve_impl, **options):
        calls.append(_real(impl, lists, **options))
        return calls[-1]

    monkeypatch.setattr(common, "resolve_impl", spy)
    monkeypatch.setattr(common, "AUTO_KERNEL_MAX_BYTES", 100 * 100 * 4)
    short, long = (torch.randint(0, 3, (2, n)) for n in (8, 400))
    tn.neural_ndcg_loss(torch.randn(2, 8), short, sinkhorn_iters=2)
    tn.neural_ndcg_loss(torch.randn(2, 400), long, sinkhorn_iters=2)
    # The padded width decides, not the real lengths (no value is read: compilable, and the same
    # choice for every batch of a shape).
    mask = torch.arange(400) < 100
    tn.neural_ndcg_loss(torch.randn(2, 400), long, mask=mask.expand(2, 400), sinkhorn_iters=2)
    tn.approx_ndcg_loss(torch.randn(2, 8), short)
    tn.approx_ndcg_loss(torch.randn(2, 400), long)
    assert calls == ["kernel", "streaming", "streaming", "dense", "streaming"]


@pytest.mark.parametrize(
    "loss, options",
    [
        (tn.lambda_loss, {"k": 5}),
        (tn.lambda_loss, {"weighting": "ndcg_loss2pp"}),
        (tn.lambda_loss, {"weighting": "ndcg_loss1"}),
        (tn.ranknet_loss, {"weighting": "lambdarank", "k": 5}),
        (tn.pairwise_hinge_loss, {"weighting": "dcg2", "k": 3}),
        (tn.ranknet_loss, {}),
    ],
)
def test_streaming_pair_sums_give_the_gradient_in_a_relevance_that_requires_grad(loss, options):
    # λ weights read the gains: the streaming backward must differentiate them as dense does.
    generator = torch.Generator().manual_seed(3)
    scores = torch.randn(3, 150, generator=generator, dtype=torch.float64)
    relevance = torch.randint(0, 4, (3, 150), generator=generator).double()
    grads = {}
    for impl in ("dense", "streaming"):
        x, y = scores.clone().requires_grad_(), relevance.clone().requires_grad_()
        loss(x, y, impl=impl, **options).backward()
        grads[impl] = (x.grad, torch.zeros_like(y) if y.grad is None else y.grad)
    for dense, streaming in zip(grads["dense"], grads["streaming"]):
        torch.testing.assert_close(streaming, dense, rtol=1e-9, atol=1e-12)
    # Distinct labels: finite differences of tied ones would cross the pair set's edge.
    distinct = torch.rand(2, 7, generator=generator, dtype=torch.float64) * 3
    small = (scores[:2, :7].clone().requires_grad_(), distinct.requires_grad_())
    assert torch.autograd.gradcheck(lambda s, y: loss(s, y, impl="streaming", **options), small)
