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
        (tn.LambdaLoss, tn.lambda_loss, {"k": 3, "weighting": "lambdarank", "gain": "exp2"}),
    ],
)
def test_module_equals_function(module, function, options):
    scores = torch.randn(4, 7, requires_grad=True)
    relevance = torch.randint(0, 3, (4, 7))
    mask = torch.rand(4, 7) > 0.2
    criterion = module(**options)
    assert isinstance(criterion, torch.nn.Module) and not list(criterion.parameters())
    assert torch.equal(criterion(scores, relevance, mask), function(scores, relevance, mask=mask, **options))
    assert all(f"{key}={value!r}" in repr(criterion) for key, value in options.items())


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
    ("module", "function", "options"),
    [
        (tn.ListNetLoss, tn.listnet_loss, {"gain": "exp2"}),
        (tn.SoftmaxLoss, tn.softmax_loss, {"reduction": "sum"}),
        (tn.ListMLELoss, tn.listmle_loss, {"empty": "keep"}),
        (tn.RankNetLoss, tn.ranknet_loss, {"sigma": 2.0}),
        (tn.PairwiseHingeLoss, tn.pairwise_hinge_loss, {"margin": 0.5, "impl": "streaming"}),
    ],
)
def test_uncut_module_equals_function(module, function, options):
    scores = torch.randn(4, 7)
    relevance = torch.randint(0, 3, (4, 7))
    mask = torch.rand(4, 7) > 0.2
    criterion = module(**options)
    assert torch.equal(criterion(scores, relevance, mask), function(scores, relevance, mask=mask, **options))
    key, value = next(iter(options.items()))
    assert f"{key}={value!r}" in repr(criterion) and "k=" not in repr(criterion)
    with pytest.raises(TypeError):
        module(k=3)  # these losses have no cutoff


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
