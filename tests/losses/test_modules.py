"""The ``torch.nn.Module`` forms call the functions with the options given at construction."""

from __future__ import annotations

import inspect

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

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
    assert torch.equal(criterion(scores, relevance, mask=mask), function(scores, relevance, mask=mask, **options))
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
    assert torch.equal(criterion(scores, relevance, mask=mask), function(scores, relevance, mask=mask, **options))
    key, value = next(iter(options.items()))
    assert f"{key}={value!r}" in repr(criterion) and "k=" not in repr(criterion)
    if module not in (tn.RankNetLoss, tn.PairwiseHingeLoss):  # whose k is the cutoff their pair weights read
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


def test_mask_is_a_keyword_of_forward():
    criterion = tn.ApproxNDCGLoss(k=3)
    scores, relevance, mask = torch.randn(2, 5), torch.randint(0, 3, (2, 5)), torch.ones(2, 5, dtype=torch.bool)
    assert inspect.signature(criterion.forward).parameters["mask"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError, match="positional"):
        criterion(scores, relevance, mask)


MODULES = {
    tn.NeuralNDCGLoss: tn.neural_ndcg_loss,
    tn.ApproxNDCGLoss: tn.approx_ndcg_loss,
    tn.LambdaLoss: tn.lambda_loss,
    tn.ListNetLoss: tn.listnet_loss,
    tn.SoftmaxLoss: tn.softmax_loss,
    tn.ListMLELoss: tn.listmle_loss,
    tn.RankNetLoss: tn.ranknet_loss,
    tn.PairwiseHingeLoss: tn.pairwise_hinge_loss,
}
# The distillation losses take a teacher's scores where the others take labels.
DISTILL_MODULES = {
    tn.DistillListNetLoss: tn.distill_listnet_loss,
    tn.DistillListMLELoss: tn.distill_listmle_loss,
    tn.DistillRankNetLoss: tn.distill_ranknet_loss,
    tn.MarginMSELoss: tn.margin_mse_loss,
    tn.AdrMSELoss: tn.adr_mse_loss,
}
_NOT_POSITIVE = st.sampled_from([0, -1, -0.5, float("nan"), float("-inf"), float("inf"), True, "1", None])
_NOT_A_FLAG = st.sampled_from([1, 0, "yes", None, 1.0])
_NOT_A_CHOICE = st.sampled_from(["", "Mean", "avg", "gpu", "kernel ", 1, None, ("mean",)])
# For every option any loss takes: values it must refuse.
BAD_VALUES = {
    "k": st.sampled_from([0, -3, (1, 2), [5, 10], 2.5, "10", True]),
    "gain": st.sampled_from(["exp", "Linear", 2, None]),
    "discount": st.sampled_from(["log", "log10", 1, None]),
    "empty": _NOT_A_CHOICE,
    "reduction": _NOT_A_CHOICE,
    "impl": _NOT_A_CHOICE,
    "weighting": _NOT_A_CHOICE,
    "validate": _NOT_A_FLAG,
    "transposed": _NOT_A_FLAG,
    "stochastic": _NOT_A_FLAG,
    "log_scores": _NOT_A_FLAG,
    "temperature": _NOT_POSITIVE,
    "beta": _NOT_POSITIVE,
    "sigma": _NOT_POSITIVE,
    "margin": _NOT_POSITIVE,
    "sinkhorn_iters": st.sampled_from([0, -1, 2.5, True, "5", None]),
    "samples": st.sampled_from([0, -1, 2.5, True, "5", None]),
    "mu": st.sampled_from([-1, -0.1, float("nan"), float("inf"), True, "1", None]),
    "tol": st.sampled_from([0, -1e-6, float("nan"), float("inf"), True, "1e-6"]),
    "generator": st.sampled_from([0, "seed", torch.zeros(1)]),
    "pairs": _NOT_A_CHOICE,
    "position_aware": _NOT_A_FLAG,
}


def _options(module) -> list[str]:
    return [name for name, p in inspect.signature(module).parameters.items() if p.default is not p.empty]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_every_module_refuses_every_bad_option_value_at_construction_as_its_function_does(data):
    module = data.draw(st.sampled_from(list(MODULES) + list(DISTILL_MODULES)), label="module")
    option = data.draw(st.sampled_from(_options(module)), label="option")
    value = data.draw(BAD_VALUES[option], label="value")
    if option == "discount" and value is None and module is tn.AdrMSELoss:
        value = "log"  # None is one of ADR-MSE's choices (no discount)
    with pytest.raises((ValueError, TypeError), match=option) as refused:
        module(**{option: value})
    scores = torch.randn(2, 4, requires_grad=True)
    function = MODULES.get(module) or DISTILL_MODULES[module]
    target = torch.randint(0, 3, (2, 4)) if module in MODULES else torch.randn(2, 4)
    with pytest.raises(type(refused.value), match=option):
        function(scores, target, **{option: value})


_SCALES = ("temperature", "beta", "sigma", "margin", "mu", "tol")


@pytest.mark.parametrize(
    "module, name",
    [(module, name) for module in [*MODULES, *DISTILL_MODULES] for name in _options(module) if name in _SCALES],
    ids=lambda value: value.__name__ if isinstance(value, type) else value,
)
def test_an_infinite_or_nan_scale_is_refused_at_construction_naming_it(module, name):
    # An infinite σ, margin, μ, temperature or β is finite in no dtype: refused before any batch.
    for value in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match=rf"^{name} must be a finite number"):
            module(**{name: value})


def test_ranknet_loss_refuses_an_infinite_sigma_at_construction():
    with pytest.raises(ValueError, match="sigma must be a finite number > 0, got inf"):
        tn.RankNetLoss(sigma=float("inf"))


def test_stochastic_neural_ndcg_refuses_an_infinite_beta_naming_it():
    scores, relevance = torch.randn(2, 4), torch.randint(0, 3, (2, 4))
    with pytest.raises(ValueError, match="beta must be a finite number > 0, got inf"):
        tn.neural_ndcg_loss(scores, relevance, stochastic=True, beta=float("inf"))
    with pytest.raises(ValueError, match="beta must be a finite number > 0, got inf"):
        tn.NeuralNDCGLoss(stochastic=True, beta=float("inf"))


def test_every_module_takes_exactly_its_functions_options():
    for module, function in {**MODULES, **DISTILL_MODULES}.items():
        ours = inspect.signature(module).parameters
        theirs = inspect.signature(function).parameters
        tensors = {"scores", "relevance", "teacher_scores", "mask", "indexes"}
        assert set(ours) == set(theirs) - tensors, module.__name__
        for name, parameter in ours.items():
            assert parameter.default is theirs[name].default, (module.__name__, name)
