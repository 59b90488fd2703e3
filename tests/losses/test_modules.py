"""The ``torch.nn.Module`` forms call the functions with the options given at construction."""

from __future__ import annotations

import copy
import inspect
import pickle

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
        (tn.NDCGLoss, tn.ndcg_loss, {"k": 3, "gain": "exp2", "relaxation": "neuralsort"}),
        (tn.DCGLoss, tn.dcg_loss, {"k": 3, "gain": "exp2", "relaxation": "bound"}),
        (tn.MRRLoss, tn.mrr_loss, {"k": 3, "threshold": 2.0, "relaxation": "sinkhorn"}),
        (tn.PrecisionLoss, tn.precision_loss, {"k": 3, "adaptive_k": True}),
        (tn.RecallLoss, tn.recall_loss, {"k": 3, "empty": "zero", "relaxation": tn.ApproxRanks(cutoff="midway")}),
        (tn.HitRateLoss, tn.hit_rate_loss, {"k": 3, "reduction": "sum"}),
        (tn.AveragePrecisionLoss, tn.average_precision_loss, {"k": 3, "ap_normaliser": "r"}),
        (tn.RBPLoss, tn.rbp_loss, {"k": 3, "persistence": 0.5, "reduction": "none"}),
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


def test_a_twin_module_with_a_gumbel_relaxation_draws_from_its_generator():
    scores, relevance = torch.randn(2, 6), torch.randint(0, 2, (2, 6))

    def criterion():
        return tn.MRRLoss(relaxation=tn.Gumbel(samples=4, generator=torch.Generator().manual_seed(1)))

    first, second = criterion(), criterion()
    assert torch.equal(first(scores, relevance), second(scores, relevance))
    assert not torch.equal(first(scores, relevance), first(scores, relevance))  # fresh noise per call


def test_unknown_option_fails_at_construction():
    with pytest.raises(TypeError):
        tn.ApproxNDCGLoss(sinkhorn_iters=5)
    with pytest.raises(TypeError):
        tn.NeuralNDCGLoss(temprature=0.5)
    with pytest.raises(TypeError):
        tn.MRRLoss(gain="exp2")  # a binary metric's twin has no gain
    with pytest.raises(TypeError):
        tn.DCGLoss(empty="skip")  # DCG calls no list empty


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
        (tn.NDCGLoss, {"relaxation": "sigmoid"}, "relaxation"),
        (tn.NDCGLoss, {"k": (1, 2)}, "k"),
        (tn.DCGLoss, {"gain": "exp"}, "gain"),
        (tn.MRRLoss, {"threshold": 0}, "threshold"),
        (tn.PrecisionLoss, {"k": 0}, "k"),
        (tn.RecallLoss, {"empty": "keep"}, "empty"),
        (tn.HitRateLoss, {"reduction": "avg"}, "reduction"),
        (tn.AveragePrecisionLoss, {"ap_normaliser": "R"}, "ap_normaliser"),
        (tn.RBPLoss, {"persistence": 1.0}, "persistence"),
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
    tn.NDCGLoss: tn.ndcg_loss,
    tn.DCGLoss: tn.dcg_loss,
    tn.MRRLoss: tn.mrr_loss,
    tn.PrecisionLoss: tn.precision_loss,
    tn.RecallLoss: tn.recall_loss,
    tn.HitRateLoss: tn.hit_rate_loss,
    tn.AveragePrecisionLoss: tn.average_precision_loss,
    tn.RBPLoss: tn.rbp_loss,
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
    "relaxation": st.sampled_from(["sigmoid", "Approx", "", None, 1, tn.ApproxRanks]),
    "threshold": st.sampled_from([0, -1, float("nan"), float("inf"), True, "1"]),
    "adaptive_k": _NOT_A_FLAG,
    "ap_normaliser": _NOT_A_CHOICE,
    "persistence": st.sampled_from([1, 1.5, -0.1, float("nan"), float("inf"), True, "0.8", None]),
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


TWIN_MODULES = [tn.NDCGLoss, tn.DCGLoss, tn.MRRLoss, tn.PrecisionLoss, tn.RecallLoss, tn.HitRateLoss,
                tn.AveragePrecisionLoss, tn.RBPLoss]  # fmt: skip


# Slow set: each compiles a fresh graph (the twin functions themselves compile in the quick set).
@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("module", TWIN_MODULES, ids=lambda module: module.__name__)
def test_a_twin_module_compiles_as_one_graph_and_equals_eager(module, dynamic):
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 6, dtype=torch.float64, generator=gen)
    relevance, mask = torch.randint(0, 3, (3, 6), generator=gen), torch.rand(3, 6, generator=gen) > 0.2
    criterion = module(3)
    torch._dynamo.reset()  # every module's forward is one code object: each test compiles afresh
    compiled = torch.compile(criterion, backend="aot_eager", fullgraph=True, dynamic=dynamic)
    eager, graph = scores.clone().requires_grad_(), scores.clone().requires_grad_()
    expected, got = criterion(eager, relevance, mask=mask), compiled(graph, relevance, mask=mask)
    expected.backward(), got.backward()
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(graph.grad, eager.grad, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("module", [*MODULES, *DISTILL_MODULES], ids=lambda module: module.__name__)
def test_every_module_survives_pickle_and_deepcopy(module):
    # A criterion is saved with a training state (a checkpoint, a Lightning module's copy).
    criterion = module()
    scores = torch.randn(2, 5, dtype=torch.float64)
    target = torch.randint(0, 3, (2, 5)) if module in MODULES else torch.randn(2, 5, dtype=torch.float64)
    for copied in (pickle.loads(pickle.dumps(criterion)), copy.deepcopy(criterion)):
        assert repr(copied) == repr(criterion)
        assert torch.equal(copied(scores, target), criterion(scores, target))
