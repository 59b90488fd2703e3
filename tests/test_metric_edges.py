"""Metric classes at the edges: rows that ignore_index empties, and a compute() that saw no query."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
import torchmetrics.retrieval as tm  # noqa: E402

from torch_ndcg import metrics as M  # noqa: E402

OURS_AND_TORCHMETRICS = [
    (M.NDCG, tm.RetrievalNormalizedDCG), (M.MRR, tm.RetrievalMRR), (M.Precision, tm.RetrievalPrecision),
    (M.Recall, tm.RetrievalRecall), (M.HitRate, tm.RetrievalHitRate), (M.AveragePrecision, tm.RetrievalMAP),
    (M.DCG, None),
]
SCORES = torch.tensor([[0.9, 0.1, 0.3], [0.5, 0.4, 0.2], [0.2, 0.8, 0.6]])
LABELS = torch.tensor([[1, 0, -100], [-100, -100, -100], [0, 1, 1]])


def _flat(metric, scores, labels):
    ids = torch.arange(scores.shape[0]).unsqueeze(-1).expand_as(scores)
    metric.update(scores.reshape(-1), labels.reshape(-1), indexes=ids.reshape(-1))
    return metric.compute()


@pytest.mark.parametrize("ours, theirs", OURS_AND_TORCHMETRICS, ids=lambda c: getattr(c, "__name__", "-"))
def test_a_row_all_ignore_index_is_no_query_in_both_forms_and_torchmetrics(ours, theirs):
    dense = ours(ignore_index=-100)
    dense.update(SCORES, LABELS)
    flat = _flat(ours(ignore_index=-100), SCORES, LABELS)
    without_the_row = ours()
    without_the_row.update(SCORES[[0, 2]], LABELS[[0, 2]], mask=LABELS[[0, 2]] != -100)
    torch.testing.assert_close(dense.compute(), flat)
    torch.testing.assert_close(dense.compute(), without_the_row.compute())
    if theirs is not None:
        torch.testing.assert_close(flat, _flat(theirs(ignore_index=-100), SCORES, LABELS).to(flat.dtype))


def test_dropped_rows_take_their_weights_with_them():
    weighted = M.NDCG(ignore_index=-1)
    weighted.update(SCORES, LABELS.clamp(min=-1), weights=torch.ones(3, 3) * torch.tensor([[1.0], [5.0], [2.0]]),
                    sample_weight=torch.tensor([1.0, 100.0, 3.0]))
    kept = M.NDCG()
    kept.update(SCORES[[0, 2]], LABELS[[0, 2]].clamp(min=0), mask=LABELS[[0, 2]] >= 0,
                weights=torch.tensor([[1.0] * 3, [2.0] * 3]), sample_weight=torch.tensor([1.0, 3.0]))
    torch.testing.assert_close(weighted.compute(), kept.compute())


@given(st.lists(st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=3, max_size=3), min_size=1, max_size=5),
       st.sampled_from(["zero", "one", "skip"]))
def test_dense_and_flat_forms_agree_whatever_is_ignored(rows, empty):
    labels = torch.tensor(rows)
    scores = torch.linspace(0.1, 0.9, labels.numel()).reshape(labels.shape).flip(-1)
    if bool((labels == -1).all()):
        return  # the flat form refuses a batch without items
    dense = M.NDCG(ignore_index=-1, empty=empty)
    dense.update(scores, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # every query skipped: see the test below
        torch.testing.assert_close(dense.compute(), _flat(M.NDCG(ignore_index=-1, empty=empty), scores, labels))


@pytest.mark.parametrize("make, update", [
    (lambda: M.NDCG(k=3), lambda m: m.update(torch.zeros(0, 4), torch.zeros(0, 4))),
    (lambda: M.MRR(aggregation="median"), lambda m: m.update(torch.zeros(0, 4), torch.zeros(0, 4))),
    (lambda: M.NDCG(empty="skip"), lambda m: m.update(torch.rand(2, 3), torch.zeros(2, 3))),
    (lambda: M.Precision(ignore_index=-1), lambda m: m.update(torch.rand(2, 3), -torch.ones(2, 3, dtype=torch.long))),
    (lambda: M.OrderedPairAccuracy(), lambda m: m.update(torch.zeros(0, 4), torch.zeros(0, 4))),
    (lambda: M.RankedNDCG(k=2), lambda m: m.update(torch.zeros(0, 2, dtype=torch.long), torch.zeros(0, 2, dtype=torch.long))),
])
def test_a_compute_that_saw_no_query_warns_and_gives_zero(make, update):
    metric = make()
    update(metric)
    with pytest.warns(UserWarning, match=r"compute\(\) has seen no query.*a mean over nothing") as caught:
        assert float(metric.compute()) == 0.0
    assert caught[0].filename == __file__  # stacklevel: the caller's line


def test_a_compute_that_saw_a_query_does_not_warn():
    metric = M.NDCG()
    metric.update(torch.zeros(0, 3), torch.zeros(0, 3))
    metric.update(torch.tensor([[0.2, 0.1]]), torch.tensor([[1, 0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(metric.compute()) == 1.0
