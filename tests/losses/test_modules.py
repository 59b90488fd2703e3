"""The ``torch.nn.Module`` forms call the functions with the options given at construction."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn


@pytest.mark.parametrize(
    ("module", "function", "options"),
    [
        (tn.NeuralNDCGLoss, tn.neural_ndcg_loss, {"k": 3, "temperature": 0.5, "sinkhorn_iters": 5, "gain": "exp2"}),
        (tn.ApproxNDCGLoss, tn.approx_ndcg_loss, {"k": 3, "temperature": 0.5, "reduction": "sum"}),
    ],
)
def test_module_equals_function(module, function, options):
    scores = torch.randn(4, 7, requires_grad=True)
    relevance = torch.randint(0, 3, (4, 7))
    mask = torch.rand(4, 7) > 0.2
    criterion = module(**options)
    assert isinstance(criterion, torch.nn.Module) and not list(criterion.parameters())
    assert torch.equal(criterion(scores, relevance, mask), function(scores, relevance, mask=mask, **options))
    assert "k=3" in repr(criterion) and "temperature=0.5" in repr(criterion)


def test_stochastic_module_draws_from_its_generator():
    scores, relevance = torch.randn(2, 6), torch.randint(0, 3, (2, 6))
    first = tn.NeuralNDCGLoss(stochastic=True, generator=torch.Generator().manual_seed(1), sinkhorn_iters=3)
    second = tn.NeuralNDCGLoss(stochastic=True, generator=torch.Generator().manual_seed(1), sinkhorn_iters=3)
    assert torch.equal(first(scores, relevance), second(scores, relevance))
    assert not torch.equal(first(scores, relevance), first(scores, relevance))  # fresh noise per call


def test_unknown_option_fails_at_construction():
    with pytest.raises(TypeError):
        tn.ApproxNDCGLoss(sinkhorn_iters=5)
    with pytest.raises(TypeError):
        tn.NeuralNDCGLoss(temprature=0.5)


@pytest.mark.parametrize(
    ("module", "options", "name"),
    [
        (tn.NeuralNDCGLoss, {"temperature": -1}, "temperature"),
        (tn.NeuralNDCGLoss, {"impl": "gpu"}, "impl"),
        (tn.NeuralNDCGLoss, {"sinkhorn_iters": 0}, "sinkhorn_iters"),
        (tn.NeuralNDCGLoss, {"tol": -1e-6}, "tol"),
        (tn.NeuralNDCGLoss, {"reduction": "max"}, "reduction"),
        (tn.ApproxNDCGLoss, {"k": (1, 2)}, "k"),
        (tn.ApproxNDCGLoss, {"impl": "kernel"}, "impl"),
        (tn.ApproxNDCGLoss, {"empty": "nan"}, "empty"),
    ],
)
def test_bad_option_values_fail_at_construction(module, options, name):
    with pytest.raises(ValueError, match=name):
        module(**options)
