"""Metric classes give their per-query values with ids, and compare() pairs two of them by those ids."""

import pytest
import torch

pytest.importorskip("torchmetrics")

import torch_ndcg as tn  # noqa: E402
from torch_ndcg.stats import compare  # noqa: E402


def test_per_query_matches_the_functional_values_by_id():
    scores = torch.rand(40, dtype=torch.float64)
    relevance = torch.randint(0, 3, (40,))
    indexes = torch.randint(0, 8, (40,)) * 3 + 5
    metric = tn.metrics.NDCG(k=5)
    metric.update(scores[:20], relevance[:20], indexes=indexes[:20])
    metric.update(scores[20:], relevance[20:], indexes=indexes[20:])
    ids, values = metric.per_query()
    expected = tn.ndcg(scores, relevance, 5, indexes=indexes, reduction="none")
    assert torch.equal(ids, torch.unique(indexes))
    torch.testing.assert_close(values, expected.to(torch.float64))


def test_per_query_with_dense_query_ids_and_compare_pairs_two_metrics():
    relevance = torch.randint(0, 3, (6, 10))
    ours, theirs = tn.metrics.NDCG(k=5), tn.metrics.NDCG(k=5)
    ids = torch.tensor([10, 11, 12, 13, 14, 15])
    ours.update(relevance.double() + 0.1 * torch.rand(6, 10), relevance, query_ids=ids)
    theirs.update(torch.rand(6, 10), relevance, query_ids=ids.flip(0)[torch.arange(6)].flip(0))
    result = compare({"ours": ours.per_query(), "theirs": theirs.per_query()}, measures=["ndcg@5"])
    assert result.query_ids == [str(i) for i in ids.tolist()]
    assert float(result.means[0, 0]) == pytest.approx(float(ours.compute()))


def test_per_query_without_ids_is_refused():
    metric = tn.metrics.NDCG()
    metric.update(torch.rand(3, 4), torch.randint(0, 2, (3, 4)))
    with pytest.raises(ValueError, match="query_ids="):
        metric.per_query()
