"""The losses at the edges of their inputs and options, one property per kind of edge:

* the kernel Sinkhorn's gradient of a float32 group that runs in float64 (with or without
  ``tol``, at the compiled loops' widths and beyond) is the float64 input's gradient;
* a tensor argument of any loss on a second device is a ``ValueError`` naming both devices;
* a distillation loss with teacher (or student) scores near the float maximum, divided by a
  temperature, gives the float64 value wherever that fits the input's dtype (inputs whose
  differences stay finite);
* a non-finite numeric option of any loss module is refused at construction, naming it;
* a scale option compiled with ``dynamic=True`` follows its value, equal to eager.
"""

from __future__ import annotations

import inspect
import math
import warnings

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import torch_ndcg as tn
from torch_ndcg.losses.relaxations.sinkhorn import kernel as sinkhorn_kernel


def _kernel_gradient(scores, relevance, **options):
    x = scores.clone().requires_grad_()
    tn.neural_ndcg_loss(x, relevance, impl="kernel", **options).backward()
    return x.grad


@settings(max_examples=25, deadline=None)
@given(
    width=st.one_of(st.integers(2, 12), st.sampled_from([90, 95, 96, 130])),
    seed=st.integers(0, 2**31 - 1),
    spread=st.sampled_from([1.0, 30.0, 300.0]),
    tol=st.sampled_from([None, 1e-6, 1e-4]),
    transposed=st.booleans(),
)
def test_a_float32_group_run_in_float64_has_the_float64_inputs_gradient(width, seed, spread, tol, transposed):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(2, width, generator=gen) * spread
    relevance = torch.randint(0, 3, (2, width), generator=gen)
    # A temperature at which float32 cannot resolve the log-kernel: the group runs in float64.
    largest = float(scores.abs().max())
    temperature = 0.75 * width * largest * torch.finfo(torch.float32).eps / sinkhorn_kernel.LOG_KERNEL_MAX_ERROR
    options = {"temperature": temperature, "tol": tol, "transposed": transposed, "sinkhorn_iters": 20}
    float32 = _kernel_gradient(scores, relevance, **options)
    float64 = _kernel_gradient(scores.double(), relevance, **options)
    assert float32.dtype == torch.float32
    torch.testing.assert_close(float32.double(), float64, atol=1e-5, rtol=1e-5)


def _teacher(s, r):
    return s * 0.5 - r


LOSSES = {
    "neural_ndcg_loss": (lambda s, r, **o: tn.neural_ndcg_loss(s, r, **o), "relevance"),
    "approx_ndcg_loss": (tn.approx_ndcg_loss, "relevance"),
    "listnet_loss": (tn.listnet_loss, "relevance"),
    "listmle_loss": (tn.listmle_loss, "relevance"),
    "softmax_loss": (tn.softmax_loss, "relevance"),
    "ranknet_loss": (tn.ranknet_loss, "relevance"),
    "lambda_loss": (tn.lambda_loss, "relevance"),
    "pairwise_hinge_loss": (tn.pairwise_hinge_loss, "relevance"),
    "distill_listnet_loss": (tn.distill_listnet_loss, "teacher_scores"),
    "distill_listmle_loss": (tn.distill_listmle_loss, "teacher_scores"),
    "distill_ranknet_loss": (tn.distill_ranknet_loss, "teacher_scores"),
    "margin_mse_loss": (tn.margin_mse_loss, "teacher_scores"),
    "adr_mse_loss": (tn.adr_mse_loss, "teacher_scores"),
    **{name: (getattr(tn, name), "relevance") for name in tn.losses.twins.__all__},
}


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(LOSSES)), moved=st.sampled_from(["target", "mask", "indexes"]), flat=st.booleans())
def test_any_argument_on_a_second_device_is_a_value_error_naming_both(name, moved, flat):
    loss, target = LOSSES[name]
    scores = torch.randn(2, 3)
    labels = torch.tensor([[2.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    arguments = {target: _teacher(scores, labels) if target == "teacher_scores" else labels}
    if flat:
        scores, arguments[target] = scores.flatten(), arguments[target].flatten()
        arguments["indexes"] = torch.tensor([0, 0, 0, 1, 1, 1])
    else:
        arguments["mask"] = torch.ones(2, 3, dtype=torch.bool)
        moved = "mask" if moved == "indexes" else moved
    if moved == "mask" and flat:
        moved = "indexes"
    key = target if moved == "target" else moved
    arguments[key] = arguments[key].to("meta")
    with pytest.raises(ValueError, match=rf"scores and {key} must be on the same device, got cpu and meta"):
        loss(scores, arguments.pop(target), **arguments)


_HUGE = st.sampled_from([3e38, -3e38, 3.4e38, -3.4e38, 1e38, -1e38])
_SMALL = st.floats(-5, 5, allow_nan=False, width=32)
DISTILL = {
    "distill_listnet_loss": lambda s, t, temperature: tn.distill_listnet_loss(s, t, temperature=temperature),
    "distill_ranknet_loss": lambda s, t, temperature: tn.distill_ranknet_loss(s, t, temperature=temperature),
    "adr_mse_loss": lambda s, t, temperature: tn.adr_mse_loss(s, t, temperature=temperature),
    "distill_listmle_loss": lambda s, t, temperature: tn.distill_listmle_loss(s, t),
    "margin_mse_loss": lambda s, t, temperature: tn.margin_mse_loss(s, t),
}


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(sorted(DISTILL)),
    teacher=st.lists(st.one_of(_HUGE, _SMALL), min_size=2, max_size=6),
    data=st.data(),
    temperature=st.sampled_from([0.05, 0.5, 1.0, 3.0]),
    huge_student=st.booleans(),
)
def test_distillation_near_the_float_maximum_gives_the_float64_value(name, teacher, data, temperature, huge_student):
    student = data.draw(st.lists(st.one_of(_HUGE, _SMALL) if huge_student else _SMALL,
                                 min_size=len(teacher), max_size=len(teacher)))  # fmt: skip
    # Inputs whose differences stay finite: a margin or a softmax shift of two such scores is
    # finite, and so is the value wherever float64's fits the input's dtype.
    assume(max(student + teacher) - min(student + teacher) <= torch.finfo(torch.float32).max)
    s, t = torch.tensor([student]), torch.tensor([teacher])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tn.TeacherScoresLookLikeLabels)
        narrow = DISTILL[name](s, t, temperature).item()
        wide = DISTILL[name](s.double(), t.double(), temperature).item()
    assert not math.isnan(narrow)
    if abs(wide) < torch.finfo(torch.float32).max / 2:  # the value fits float32
        assert narrow == pytest.approx(wide, rel=1e-4, abs=1e-4)


MODULES = [tn.NeuralNDCGLoss, tn.ApproxNDCGLoss, tn.NeuralSortNDCGLoss, tn.LambdaLoss, tn.RankNetLoss,
           tn.PairwiseHingeLoss, tn.DistillListNetLoss, tn.DistillRankNetLoss, tn.AdrMSELoss]  # fmt: skip
NUMERIC = ("temperature", "beta", "sigma", "margin", "mu", "tol")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), value=st.sampled_from([math.inf, -math.inf, math.nan]) | st.floats(allow_nan=True, allow_infinity=True))
def test_a_non_finite_numeric_option_is_refused_at_construction_naming_it(data, value):
    module = data.draw(st.sampled_from(MODULES))
    names = [name for name in inspect.signature(module).parameters if name in NUMERIC]
    name = data.draw(st.sampled_from(names))
    if math.isfinite(value) and value > 0:
        module(**{name: value})  # a finite positive value is every such option's to take
        return
    with pytest.raises(ValueError, match=rf"^{name} must be a finite number"):
        module(**{name: value})


_COMPILED = {}


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    case=st.sampled_from([("ranknet_loss", "sigma"), ("pairwise_hinge_loss", "margin"), ("lambda_loss", "mu")]),
    value=st.floats(1e-3, 1e3),
)
def test_a_scale_option_compiled_with_dynamic_shapes_follows_its_value(case, value):
    name, option = case
    loss = getattr(tn, name)

    def fn(s, r, v):
        return loss(s, r, **{option: v})

    compiled = _COMPILED.setdefault(case, torch.compile(fn, backend="aot_eager", dynamic=True, fullgraph=True))
    gen = torch.Generator().manual_seed(0)
    scores, relevance = torch.randn(3, 5, dtype=torch.float64, generator=gen), torch.randint(0, 3, (3, 5), generator=gen)
    torch.testing.assert_close(compiled(scores, relevance, value), fn(scores, relevance, value), rtol=1e-9, atol=1e-9)
