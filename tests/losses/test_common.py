"""What both losses share: the metric's definitions, empty lists, masks, extremes and bad input."""

from __future__ import annotations

import math

import pytest
import torch

import torch_ndcg as tn
from loss_batches import awkward_batch

LOSSES = [
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 4}),
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 4, "transposed": True}),
    (tn.neural_ndcg_loss, {"sinkhorn_iters": 4, "stochastic": True, "samples": 2}),
    (tn.approx_ndcg_loss, {}),
]
IMPLS = ["dense", "streaming"]
CASES = [
    (loss, options, impl)
    for loss, options in LOSSES
    for impl in IMPLS + (["kernel"] if loss is tn.neural_ndcg_loss else [])
]


def _grad(loss, scores, relevance, **options):
    if options.get("stochastic"):
        options["generator"] = torch.Generator().manual_seed(0)  # the same noise on every call
    x = scores.clone().requires_grad_()
    value = loss(x, relevance, **options)
    value.backward()
    return value.detach(), x.grad


@pytest.mark.parametrize(("loss", "options", "impl"), CASES)
def test_masked_items_get_exactly_zero_gradient_and_change_nothing(impl, loss, options):
    scores, relevance, mask = awkward_batch(torch.float64)
    value, grad = _grad(loss, scores, relevance, mask=mask, impl=impl, **options)
    assert torch.all(grad[~mask] == 0)
    assert grad[mask].abs().sum() > 0
    moved = torch.where(mask, scores, torch.full_like(scores, 1e3))  # padding's scores do not matter
    relabelled = torch.where(mask, relevance, torch.full_like(relevance, 7.0))  # nor its labels
    assert torch.allclose(_grad(loss, moved, relabelled, mask=mask, impl=impl, **options)[0], value, atol=1e-12)


@pytest.mark.parametrize(("loss", "options", "impl"), CASES)
def test_only_empty_lists_give_zero_loss_and_zero_gradient(impl, loss, options):
    scores = torch.randn(3, 5, dtype=torch.float64)
    relevance = torch.zeros(3, 5, dtype=torch.float64)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    value, grad = _grad(loss, scores, relevance, mask=mask, impl=impl, **options)
    assert value == 0 and torch.all(grad == 0)
    per_list = loss(scores, relevance, mask=mask, impl=impl, reduction="none", **options)
    assert torch.isnan(per_list).all()  # skipped, as tn.ndcg(empty="skip") reports them
    assert torch.equal(loss(scores, relevance, impl=impl, empty="zero", reduction="none", **options), torch.ones(3).double())


@pytest.mark.parametrize(("loss", "options"), LOSSES)
def test_loss_is_one_minus_the_smooth_ndcg_and_empty_lists_follow_the_metric(loss, options):
    smooth = tn.neural_ndcg if loss is tn.neural_ndcg_loss else tn.approx_ndcg
    scores, relevance, mask = awkward_batch(torch.float64)
    if options.get("stochastic"):
        options = {**options, "generator": torch.Generator().manual_seed(0)}
    for empty in ("skip", "zero", "one"):
        per_list = smooth(scores, relevance, 5, mask=mask, empty=empty, reduction="none", **options)
        exact = tn.ndcg(scores, relevance, 5, mask=mask, empty=empty, reduction="none")
        assert torch.equal(torch.isnan(per_list), torch.isnan(exact))
        empty_lists = tn.idcg(relevance, 5, mask=mask, reduction="none") == 0
        torch.testing.assert_close(per_list[empty_lists], exact[empty_lists], equal_nan=True)
        if options.get("generator") is not None:
            options["generator"].manual_seed(0)
        losses = loss(scores, relevance, 5, mask=mask, empty=empty, reduction="none", **options)
        torch.testing.assert_close(losses, 1 - per_list, equal_nan=True)
        if options.get("generator") is not None:
            options["generator"].manual_seed(0)
    kept = ~torch.isnan(losses)
    total = loss(scores, relevance, 5, mask=mask, reduction="sum", **options)
    assert torch.isclose(total, losses[kept].sum())


def test_leading_batch_axes_and_reductions():
    scores = torch.randn(2, 3, 6)
    relevance = torch.randint(0, 3, (2, 3, 6))
    relevance[..., 0] = 1
    for loss, options in LOSSES[:1] + LOSSES[3:]:
        per_list = loss(scores, relevance, reduction="none", **options)
        assert per_list.shape == (2, 3)
        flat = loss(scores.reshape(6, 6), relevance.reshape(6, 6), reduction="none", **options)
        torch.testing.assert_close(per_list.reshape(6), flat)
        torch.testing.assert_close(loss(scores, relevance, **options), per_list.mean())


def test_float64_inputs_compute_in_float64_and_half_scores_in_float32():
    relevance = torch.randint(0, 3, (2, 5))
    assert tn.neural_ndcg(torch.randn(2, 5, dtype=torch.float64), relevance, sinkhorn_iters=2).dtype == torch.float64
    assert tn.approx_ndcg(torch.randn(2, 5).half(), relevance).dtype == torch.float32


EXTREMES = [
    ("huge scores", lambda: (torch.randn(3, 8) * 1e4, torch.randint(0, 4, (3, 8)), None)),
    ("tied huge scores", lambda: (torch.full((2, 6), -1e4), torch.randint(0, 4, (2, 6)), None)),
    ("N = 1", lambda: (torch.randn(3, 1), torch.ones(3, 1), None)),
    ("one valid item", lambda: (torch.randn(2, 5), torch.ones(2, 5), torch.eye(5, dtype=torch.bool)[:2])),
    ("all masked", lambda: (torch.randn(2, 5), torch.ones(2, 5), torch.zeros(2, 5, dtype=torch.bool))),
    ("labels up to 30", lambda: (torch.randn(2, 7), torch.randint(0, 31, (2, 7)).float(), None)),
]


@pytest.mark.parametrize("temperature", [1e-3, 1.0, 1e3])
@pytest.mark.parametrize(("loss", "options", "impl"), CASES)
@pytest.mark.parametrize(("case", "make"), EXTREMES, ids=[case for case, _ in EXTREMES])
def test_no_nan_or_inf_at_the_extremes(case, make, loss, options, impl, temperature):
    scores, relevance, mask = make()
    # empty="zero": empty lists stay in the graph too, so their gradient is checked as well.
    value, grad = _grad(
        loss, scores, relevance, mask=mask, gain="exp2", temperature=temperature, impl=impl, empty="zero", **options
    )
    assert torch.isfinite(value) and torch.isfinite(grad).all()


@pytest.mark.parametrize("smooth", [tn.neural_ndcg, tn.approx_ndcg])
def test_bad_input_is_refused_with_a_clear_error(smooth, monkeypatch):
    scores, relevance = torch.randn(2, 4), torch.randint(0, 3, (2, 4))
    errors = [
        ({"temperature": 0}, ValueError, "temperature"),
        ({"temperature": -1.0}, ValueError, "temperature"),
        ({"temperature": math.nan}, ValueError, "temperature"),
        ({"k": 0}, ValueError, "k must be"),
        ({"k": (1, 5)}, ValueError, "single"),
        ({"gain": "cubic"}, ValueError, "gain"),
        ({"empty": "nan"}, ValueError, "empty"),
        ({"reduction": "max"}, ValueError, "reduction"),
        ({"impl": "fast"}, ValueError, "impl"),
        ({"mask": torch.ones(2, 4)}, TypeError, "mask"),
        ({"mask": torch.ones(2, 5, dtype=torch.bool)}, ValueError, "mask"),
    ]
    if smooth is tn.neural_ndcg:
        errors += [
            ({"sinkhorn_iters": 0}, ValueError, "sinkhorn_iters"),
            ({"sinkhorn_iters": 2.5}, ValueError, "sinkhorn_iters"),
            ({"samples": 0}, ValueError, "samples"),
            ({"beta": 0.0}, ValueError, "beta"),
        ]
    for options, error, words in errors:
        with pytest.raises(error, match=words):
            smooth(scores, relevance, **options)
    with pytest.raises(ValueError, match="same shape"):
        smooth(scores, relevance[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        smooth(torch.tensor([[0.0, math.nan]]), torch.tensor([[1, 0]]))
    with pytest.raises(ValueError, match="negative"):
        smooth(scores, -relevance - 1)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises((ValueError, ImportError), match="triton"):  # CPU tensors: no Triton kernels
        smooth(scores, relevance, impl="triton")
    with pytest.raises(ValueError, match="reduction"):
        (tn.neural_ndcg_loss if smooth is tn.neural_ndcg else tn.approx_ndcg_loss)(scores, relevance, reduction="max")


# --- the standard ranking losses: the same contract, with ``empty`` speaking of the loss -------

STANDARD = [
    (tn.listnet_loss, {"gain": "exp2"}),
    (tn.softmax_loss, {}),
    (tn.listmle_loss, {}),
    (tn.ranknet_loss, {"impl": "dense", "sigma": 2.0}),
    (tn.ranknet_loss, {"impl": "streaming"}),
    (tn.pairwise_hinge_loss, {"impl": "dense"}),
    (tn.pairwise_hinge_loss, {"impl": "streaming", "margin": 0.5}),
    (tn.lambda_loss, {"impl": "dense", "k": 3, "gain": "exp2"}),
    (tn.lambda_loss, {"impl": "streaming", "weighting": "lambdarank"}),
    (tn.lambda_loss, {"impl": "streaming", "k": 2, "weighting": "ndcg_loss2"}),
    (tn.lambda_loss, {"impl": "dense", "weighting": "none"}),
]
STANDARD_IDS = [f"{loss.__name__}-{'-'.join(map(str, options.values()))}" for loss, options in STANDARD]


def _distinct_awkward_batch():
    """awkward_batch's masks and labels with distinct scores (no rank changes under gradcheck's steps)."""
    _, relevance, mask = awkward_batch(torch.float64)
    scores = torch.randperm(mask.numel(), generator=torch.Generator().manual_seed(3)).double().reshape(mask.shape)
    return scores * 0.137, relevance, mask  # no pair gap at a hinge margin


@pytest.mark.parametrize(("loss", "options"), STANDARD, ids=STANDARD_IDS)
def test_standard_gradcheck_with_masks(loss, options):
    scores, relevance, mask = _distinct_awkward_batch()
    x = scores.requires_grad_()
    assert torch.autograd.gradcheck(lambda s: loss(s, relevance, mask=mask, **options), (x,))


@pytest.mark.parametrize(("loss", "options"), STANDARD, ids=STANDARD_IDS)
def test_standard_masked_items_get_exactly_zero_gradient_and_change_nothing(loss, options):
    scores, relevance, mask = _distinct_awkward_batch()
    value, grad = _grad(loss, scores, relevance, mask=mask, **options)
    assert torch.all(grad[~mask] == 0) and grad[mask].abs().sum() > 0
    moved = torch.where(mask, scores, torch.full_like(scores, 1e3))
    relabelled = torch.where(mask, relevance, torch.full_like(relevance, 3.0))
    torch.testing.assert_close(_grad(loss, moved, relabelled, mask=mask, **options)[0], value, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("loss", "options"), STANDARD, ids=STANDARD_IDS)
def test_standard_empty_lists_follow_empty(loss, options):
    """Nothing relevant (IDCG = 0) or a single real item: skipped by default, or as ``empty`` says."""
    scores = torch.randn(4, 5, dtype=torch.float64)
    relevance = torch.tensor([[0.0] * 5, [2, 0, 1, 0, 3], [1, 0, 0, 0, 0], [0, 1, 2, 0, 1]], dtype=torch.float64)
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2, 1:] = False  # one real item
    per_list = loss(scores, relevance, mask=mask, reduction="none", **options)
    assert torch.isnan(per_list[[0, 2]]).all() and torch.isfinite(per_list[[1, 3]]).all()
    value, grad = _grad(loss, scores, relevance, mask=mask, **options)
    torch.testing.assert_close(value, per_list[[1, 3]].mean(), rtol=0, atol=1e-12)
    assert torch.all(grad[[0, 2]] == 0)
    zero = loss(scores, relevance, mask=mask, reduction="none", empty="zero", **options)
    assert torch.equal(zero[[0, 2]], torch.zeros(2).double()) and torch.equal(zero[[1, 3]], per_list[[1, 3]])
    kept = loss(scores, relevance, mask=mask, reduction="none", empty="keep", **options)
    assert torch.isfinite(kept).all() and torch.equal(kept[[1, 3]], per_list[[1, 3]])
    only_empty, grad = _grad(loss, scores[[0, 2]], relevance[[0, 2]], mask=mask[[0, 2]], **options)
    assert only_empty == 0 and torch.all(grad == 0)
    with pytest.raises(ValueError, match="empty='error'"):
        loss(scores, relevance, mask=mask, empty="error", **options)
    with pytest.raises(ValueError, match="empty must be one of"):
        loss(scores, relevance, empty="one", **options)


@pytest.mark.parametrize(("loss", "options"), STANDARD, ids=STANDARD_IDS)
def test_standard_losses_stay_finite_at_extreme_scores_and_labels(loss, options):
    gen = torch.Generator().manual_seed(5)
    for dtype in (torch.float32, torch.float64):
        scores = (torch.randint(0, 2, (3, 8), generator=gen) * 2e4 - 1e4).to(dtype)  # ±1e4
        scores[:, 0] = 0.5
        relevance = torch.randint(0, 31, (3, 8), generator=gen).to(dtype)  # exp2 gains up to 2^30 − 1
        relevance[:, 1] = 30
        mask = torch.rand(3, 8, generator=gen) > 0.2
        mask[:, :2] = True
        value, grad = _grad(loss, scores, relevance, mask=mask, **options)
        assert torch.isfinite(value) and torch.isfinite(grad).all()


@pytest.mark.parametrize("module", ["listwise", "pairwise", "lambdaloss", "modules"])
def test_standard_loss_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"torch_ndcg.losses.{module}"))
    assert result.attempted > 0 and result.failed == 0


def test_neural_ndcg_with_tol_refuses_second_derivatives_by_name():
    scores = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
    value = tn.neural_ndcg_loss(scores, torch.randint(0, 3, (2, 6)).double(), impl="kernel", tol=1e-6)
    with pytest.raises(ValueError, match="tol.*create_graph"):
        torch.autograd.grad(value, scores, create_graph=True)


HESSIAN_CASES = [
    (tn.neural_ndcg_loss, {"impl": "dense"}),
    (tn.neural_ndcg_loss, {"impl": "kernel"}),
    (tn.neural_ndcg_loss, {"impl": "auto"}),  # the kernel path on CPU
    (tn.neural_ndcg_loss, {"impl": "kernel", "transposed": True}),
    (tn.neural_ndcg_loss, {"impl": "kernel", "stochastic": True, "samples": 2}),
    (tn.neural_ndcg_loss, {"impl": "streaming"}),
    (tn.approx_ndcg_loss, {"impl": "dense"}),
    (tn.approx_ndcg_loss, {"impl": "streaming"}),
]


@pytest.mark.parametrize(("loss", "options"), HESSIAN_CASES)
def test_the_hessian_vector_product_where_second_derivatives_exist(loss, options):
    gen = torch.Generator().manual_seed(2)
    scores = torch.randn(3, 5, dtype=torch.float64, generator=gen, requires_grad=True)
    relevance = torch.randint(0, 3, (3, 5), generator=gen).double()
    mask = torch.tensor([[True] * 5, [True, False, True, True, False], [True] * 5])
    direction = torch.randn(3, 5, dtype=torch.float64, generator=gen)
    if loss is tn.neural_ndcg_loss:
        options = {"sinkhorn_iters": 3, **options}

    def value(s):
        seeded = {"generator": torch.Generator().manual_seed(0)} if options.get("stochastic") else {}
        return loss(s, relevance, 3, mask=mask, **options, **seeded)

    def gradient(s):
        return torch.autograd.grad(value(s), s, create_graph=True)[0]

    first = gradient(scores)
    (hvp,) = torch.autograd.grad((first * direction).sum(), scores)
    step = 1e-5
    finite = (gradient(scores + step * direction) - gradient(scores - step * direction)) / (2 * step)
    torch.testing.assert_close(hvp, finite.detach(), atol=1e-6, rtol=1e-5)
    # The create_graph gradient is the first-order one, and masked items get none of either.
    (plain,) = torch.autograd.grad(value(scores), scores)
    torch.testing.assert_close(first.detach(), plain, atol=1e-12, rtol=1e-10)
    assert hvp[~mask].abs().max() == 0 and plain[~mask].abs().max() == 0


@pytest.mark.parametrize(("loss", "options", "impl"), CASES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_an_empty_batch_gives_the_empty_value_for_every_impl(loss, options, impl, reduction):
    scores = torch.randn(0, 5, requires_grad=True)
    value = loss(scores, torch.zeros(0, 5), impl=impl, reduction=reduction, **options)
    expected = loss(scores, torch.zeros(0, 5), impl="dense", reduction=reduction, **options)
    assert torch.equal(value, expected) and value.shape == ((0,) if reduction == "none" else ())
    value.sum().backward()
    assert scores.grad.shape == (0, 5)


@pytest.mark.parametrize(("loss", "options", "impl"), [case for case in CASES if case[2] != "dense"])
def test_nothing_beyond_vectors_survives_backward_while_the_loss_is_kept(loss, options, impl):
    batch, length = 4, 64
    scores = torch.randn(batch, length, requires_grad=True)
    kept = loss(scores, torch.randint(0, 3, (batch, length)), impl=impl, **options)  # as history.append(loss)
    kept.backward()
    nodes, seen = [kept.grad_fn], set()
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        nodes += [next_node for next_node, _ in node.next_functions]
        buffers = getattr(getattr(node, "ops", None), "_buffers", [])
        assert all(buffer is None for buffer in buffers)  # streaming's block buffers
        if type(node).__name__ in ("KernelSinkhornDCGBackward", "SinkhornDCGBackward", "StreamingRanksBackward"):
            with pytest.raises(RuntimeError, match="freed"):
                node.saved_tensors  # scaling histories and saved vectors went with backward
