"""``empty`` (queries with nothing to find) and ``reduction`` (combining queries)."""

import math

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.aggregation import apply_empty, reduce

NAN = float("nan")


def test_apply_empty_modes():
    values = torch.tensor([0.5, 0.0, 0.25])
    is_empty = torch.tensor([False, True, False])
    assert apply_empty(values, is_empty, "zero").tolist() == [0.5, 0.0, 0.25]
    assert apply_empty(values, is_empty, "one").tolist() == [0.5, 1.0, 0.25]
    skipped = apply_empty(values, is_empty, "skip")
    assert skipped[0] == 0.5 and math.isnan(skipped[1]) and skipped[2] == 0.25
    assert apply_empty(values, ~is_empty & False, "error") is values
    with pytest.raises(ValueError, match="empty='error'"):
        apply_empty(values, is_empty, "error")
    with pytest.raises(ValueError, match="empty must be one of"):  # checked where the public function takes it
        tn.ndcg(torch.rand(2, 3), torch.ones(2, 3), empty="nan")
    # The input is left alone; dtype is kept.
    assert values.tolist() == [0.5, 0.0, 0.25]
    assert apply_empty(values.double(), is_empty, "one").dtype == torch.float64


def test_apply_empty_broadcasts_over_cutoffs():
    values = torch.tensor([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    is_empty = torch.tensor([[False], [True]])
    want = torch.tensor([[0.1, 0.2, 0.3], [1.0, 1.0, 1.0]])
    torch.testing.assert_close(apply_empty(values, is_empty, "one"), want)


def test_reduce_modes():
    values = torch.tensor([[0.5, NAN], [0.25, 1.0]])
    assert reduce(values, "none") is values
    assert reduce(values, "mean").item() == pytest.approx((0.5 + 0.25 + 1.0) / 3)
    assert reduce(values, "sum").item() == pytest.approx(1.75)
    with pytest.raises(ValueError, match="reduction must be one of"):  # checked where the public function takes it
        tn.ndcg(torch.rand(2, 3), torch.ones(2, 3), reduction="avg")


def test_mean_over_only_skipped_queries_is_zero():
    values = torch.full((2, 3), NAN)
    assert reduce(values, "mean").item() == 0.0
    assert reduce(values, "sum").item() == 0.0
    assert reduce(values, "mean", cutoff_dim=True).tolist() == [0.0, 0.0, 0.0]


def test_reduce_keeps_the_cutoff_dimension():
    # [2, 2, C=3]: each cutoff is averaged over the queries where it is not skipped.
    values = torch.tensor([[[1.0, NAN, 0.5], [0.0, NAN, 0.5]], [[0.5, 1.0, NAN], [0.5, NAN, NAN]]])
    mean = reduce(values, "mean", cutoff_dim=True)
    assert mean.shape == (3,)
    assert mean.tolist() == pytest.approx([0.5, 1.0, 0.5])
    assert reduce(values, "sum", cutoff_dim=True).tolist() == pytest.approx([2.0, 1.0, 1.0])
    # Without the flag the last axis is one more query axis.
    assert reduce(values, "mean").item() == pytest.approx(4.0 / 7)


def test_reduce_dtype_and_gradient():
    values = torch.tensor([0.5, 0.25], dtype=torch.float64, requires_grad=True)
    out = reduce(values, "mean")
    assert out.dtype == torch.float64
    out.backward()
    assert values.grad.tolist() == [0.5, 0.5]
