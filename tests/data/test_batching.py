"""Padded batches, standardisation and the dataset's own checks."""

import pytest
import torch

from torch_ndcg.data import RankingDataset, pad_batch


def small():
    return RankingDataset.from_queries(
        [
            (torch.tensor([[1.0, 10.0], [3.0, 10.0]]), torch.tensor([1.0, 0.0])),
            (torch.tensor([[5.0, 10.0]]), torch.tensor([2.0])),
            (torch.tensor([[7.0, 10.0], [9.0, 10.0], [11.0, 10.0]]), torch.tensor([0.0, 0.0, 4.0])),
        ],
        qids=["a", "b", "c"],
    )


def test_batches_cover_every_query_once_with_tail_padding():
    ds = small()
    batches = list(ds.batches(2))
    assert [b.mask.sum(dim=1).tolist() for b in batches] == [[2, 1], [3]]
    assert batches[0].relevance.tolist() == [[1.0, 0.0], [2.0, 0.0]]
    shuffled = list(ds.batches(2, shuffle=True, generator=torch.Generator().manual_seed(1)))
    total = sum(b.relevance.sum() for b in shuffled)
    assert total == ds.relevance.sum() and sum(b.features.shape[0] for b in shuffled) == 3


def test_max_items_subsamples_long_lists_in_order():
    ds = small()
    batch = pad_batch([ds[2]], max_items=2, generator=torch.Generator().manual_seed(0))
    assert batch.features.shape == (1, 2, 2)
    first = batch.features[0, :, 0].tolist()
    assert first == sorted(first) and set(first) <= {7.0, 9.0, 11.0}
    with pytest.raises(ValueError, match="max_items"):
        pad_batch([ds[0]], max_items=0)


def test_standardize_with_training_statistics():
    ds = small()
    mean, std = ds.feature_stats()
    assert torch.allclose(mean, torch.tensor([6.0, 10.0]))
    assert std[1] == 1  # constant feature: no division by zero
    z = ds.standardized(mean, std)
    assert torch.allclose(z.features.mean(dim=0), torch.zeros(2), atol=1e-6)
    assert torch.allclose(z.features[:, 0].std(unbiased=False), torch.tensor(1.0))
    assert z.qids == ds.qids and torch.equal(z.relevance, ds.relevance)


def test_with_num_features_and_repr():
    ds = small().with_num_features(4)
    assert ds.features.shape == (6, 4) and ds.features[:, 2:].abs().sum() == 0
    assert "3 queries, 6 items, 4 features, list length 1–3" in repr(ds)
    with pytest.raises(ValueError, match="num_features=1"):
        ds.with_num_features(1)


def test_invalid_datasets_are_refused():
    x, y = torch.zeros(3, 2), torch.zeros(3)
    with pytest.raises(ValueError, match="offsets must run from 0 to 3"):
        RankingDataset(x, y, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="at least one item"):
        RankingDataset(x, y, torch.tensor([0, 0, 3]))
    with pytest.raises(ValueError, match="≥ 0"):
        RankingDataset(x, torch.tensor([0.0, -1.0, 0.0]), torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="features must be"):
        RankingDataset(torch.zeros(3), y, torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="2 qids for 1 queries"):
        RankingDataset(x, y, torch.tensor([0, 3]), qids=["a", "b"])
    with pytest.raises(ValueError, match="batch_size"):
        next(RankingDataset(x, y, torch.tensor([0, 3])).batches(0))
    with pytest.raises(ValueError, match="query 1 has 3 features"):
        pad_batch([(torch.zeros(1, 2), torch.zeros(1)), (torch.zeros(1, 3), torch.zeros(1))])
