"""Second derivatives are the dense path's on every path ``impl`` may name: the streaming and
kernel backwards differentiate the dense reference under ``create_graph=True``, so a gradient
penalty or a Hessian-vector product never silently loses its graph."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn

LOSSES = [
    (tn.lambda_loss, {}),
    (tn.ranknet_loss, {}),
    (tn.pairwise_hinge_loss, {}),
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 4}),
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 4, "transposed": True}),
    (tn.approx_ndcg_loss, {}),
]
IMPLS = {tn.neural_ndcg_loss: ("streaming", "kernel", "auto")}


def _penalty_grad(loss, scores, relevance, mask, **options):
    """``∂/∂s |∂L/∂s|²``: the gradient of a gradient penalty, which needs the second derivatives."""
    s = scores.clone().requires_grad_()
    (grad,) = torch.autograd.grad(loss(s, relevance, mask=mask, **options), s, create_graph=True)
    if not grad.requires_grad:  # a piecewise-linear loss (hinge): its second derivative is 0
        return grad, torch.zeros_like(grad)
    (second,) = torch.autograd.grad(grad.square().sum(), s)
    return grad.detach(), second


@pytest.mark.parametrize(("loss", "options"), LOSSES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_every_impl_gives_the_dense_second_derivatives(loss, options):
    gen = torch.Generator().manual_seed(3)
    scores = torch.randn(3, 7, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 4, (3, 7), generator=gen).double()
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[1, 5:] = False
    dense = _penalty_grad(loss, scores, relevance, mask, impl="dense", **options)
    assert (dense[1].abs().sum() > 0) == (loss is not tn.pairwise_hinge_loss)
    for impl in IMPLS.get(loss, ("streaming", "auto")):
        other = _penalty_grad(loss, scores, relevance, mask, impl=impl, **options)
        torch.testing.assert_close(other, dense, atol=1e-10, rtol=1e-9, msg=lambda m, impl=impl: f"{impl}: {m}")


def test_lambda_loss_gradient_penalty_at_the_streaming_shape_matches_dense():
    """32 × 64 is where "auto" runs the streaming pair sums (B·N² > 2¹⁶)."""
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(32, 64, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 5, (32, 64), generator=gen).double()
    auto = _penalty_grad(tn.lambda_loss, scores, relevance, None, impl="auto")
    dense = _penalty_grad(tn.lambda_loss, scores, relevance, None, impl="dense")
    torch.testing.assert_close(auto, dense, atol=1e-10, rtol=1e-9)
