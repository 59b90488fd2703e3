"""What a new user gets wrong: swapped scores and relevance, integer scores to a loss, an empty batch."""

from __future__ import annotations

import warnings

import pytest
import torch

import torch_ndcg as tn

PROBABILITIES = torch.tensor([[0.9, 0.2, 0.6, 0.4]])
LABELS = torch.tensor([[2.0, 0.0, 1.0, 0.0]])
LOSSES = ["approx_ndcg_loss", "lambda_loss", "listmle_loss", "listnet_loss", "neural_ndcg_loss",
          "pairwise_hinge_loss", "ranknet_loss", "softmax_loss"]
MODULES = ["ApproxNDCGLoss", "LambdaLoss", "ListMLELoss", "ListNetLoss", "NeuralNDCGLoss", "PairwiseHingeLoss",
           "RankNetLoss", "SoftmaxLoss", "NDCGLoss", "DCGLoss", "MRRLoss", "PrecisionLoss", "RecallLoss",
           "HitRateLoss", "AveragePrecisionLoss", "RBPLoss"]


def _swapped_warnings(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # Python's own rule: once per warning and calling line
        call()
    return [w for w in caught if "are they swapped?" in str(w.message)]


def test_swapped_scores_and_relevance_warn_once_per_call_site():
    def loop():
        for _ in range(3):
            tn.ndcg(LABELS, PROBABILITIES)  # one line, called three times

    caught = _swapped_warnings(loop)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert "The order is (scores, relevance)" in str(caught[0].message)
    flat = _swapped_warnings(lambda: tn.mrr(LABELS[0, :3], PROBABILITIES[0, :3], indexes=torch.tensor([0, 0, 1])))
    assert len(flat) == 1 and flat[0].filename == __file__


def test_a_metric_class_warns_of_swapped_arguments_at_the_update_line():
    pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
    metric = tn.metrics.NDCG()
    assert _swapped_warnings(lambda: metric.update(LABELS, PROBABILITIES))[0].filename == __file__


@pytest.mark.parametrize("scores, relevance, options", [
    (PROBABILITIES, LABELS, {}),  # the right order
    (LABELS, PROBABILITIES, {"validate": False}),  # no value is read
    (LABELS, torch.tensor([[1.0, 0.0, 1.0, 0.0]]), {}),  # binary labels, not probabilities
    (torch.tensor([[2.0, 2.0, 2.0, 2.0]]), PROBABILITIES, {}),  # one score value: nothing to tell
    (LABELS * 7, PROBABILITIES, {}),  # scores beyond label-like integers
    (torch.tensor([[5.0, 4.0, 3.0, 2.0]]), PROBABILITIES, {}),  # scores made from ranks (5 - rank)
    (LABELS + 0.5, PROBABILITIES, {}),  # scores that are not whole numbers
])
def test_no_swap_warning_where_nothing_looks_swapped(scores, relevance, options):
    assert not _swapped_warnings(lambda: tn.ndcg(scores, relevance, **options))


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_integer_or_bool_scores_to_a_loss_are_a_type_error_naming_scores(name, dtype):
    scores = torch.tensor([[3, 1, 2, 0]]).to(dtype)
    with pytest.raises(TypeError, match=r"^scores must be a floating point tensor .*got torch\."):
        getattr(tn, name)(scores, LABELS)


@pytest.mark.parametrize("name", MODULES)
def test_loss_modules_refuse_integer_scores_too(name):
    with pytest.raises(TypeError, match="^scores must be a floating point tensor"):
        getattr(tn, name)()(torch.tensor([[3, 1, 2, 0]]), LABELS)


@pytest.mark.parametrize("name", LOSSES)
def test_float_scores_without_grad_stay_accepted(name):
    with torch.no_grad():  # a validation loss
        value = getattr(tn, name)(PROBABILITIES, LABELS)
    assert value.dtype == torch.float32 and torch.isfinite(value) and value.grad_fn is None


@pytest.mark.parametrize("call", [
    lambda s, r: tn.ndcg(s, r), lambda s, r: tn.mrr(s, r, 3), lambda s, r: tn.ordered_pair_accuracy(s, r),
    *[lambda s, r, name=name: getattr(tn, name)(s, r) for name in LOSSES],
])
def test_an_empty_batch_is_a_mean_over_nothing_zero(call):
    # Documented convention (README): the functions and losses average over no query as 0; the
    # metric classes warn when compute() saw no query (tests/test_metric_edges.py).
    value = call(torch.zeros(0, 4, requires_grad=True), torch.zeros(0, 4))
    assert value.shape == () and float(value.detach()) == 0.0


ON_META = torch.zeros(1, 4, device="meta")  # another device, without a GPU


@pytest.mark.parametrize(
    "call",
    [
        lambda: tn.ndcg(ON_META, LABELS, 2),
        lambda: tn.ndcg(LABELS, PROBABILITIES, 2, mask=torch.ones(1, 4, dtype=torch.bool, device="meta")),
        *(lambda name=name: getattr(tn, name)(ON_META.requires_grad_(), LABELS) for name in LOSSES),
    ],
)
def test_tensors_on_two_devices_are_a_value_error_naming_both(call):
    with pytest.raises(ValueError, match=r"must be on the same device, got (meta and cpu|cpu and meta)"):
        call()


def test_a_metric_class_refuses_tensors_on_two_devices_at_the_update():
    pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
    metric = tn.metrics.NDCG(k=2)
    with pytest.raises(ValueError, match="scores and relevance must be on the same device, got meta and cpu"):
        metric.update(ON_META, LABELS)  # refused here, not when the kept rows are evaluated


@pytest.mark.parametrize("name", LOSSES)
def test_a_batch_with_nothing_relevant_warns_instead_of_training_on_zero(name):
    # Every list empty: the loss is 0 with a zero gradient, which would hide a collate bug.
    scores, nothing = torch.randn(3, 5, requires_grad=True), torch.zeros(3, 5, dtype=torch.long)
    with pytest.warns(UserWarning, match="no list in this batch has a relevant item"):
        getattr(tn, name)(scores, nothing)
    one = nothing.clone()
    one[1, 2] = 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(tn, name)(scores, one, mask=torch.ones(3, 5, dtype=torch.bool))  # one relevant item: no warning
