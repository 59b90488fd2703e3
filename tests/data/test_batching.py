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
    with pytest.raises(ValueError, match=r"queries\[1\] has 3 features"):
        pad_batch([(torch.zeros(1, 2), torch.zeros(1)), (torch.zeros(1, 3), torch.zeros(1))])


def test_negative_indices_count_from_the_end_and_out_of_range_raises():
    ds = small()
    assert torch.equal(ds[-1][1], ds[2][1]) and torch.equal(ds[-3][1], ds[0][1])
    assert ds[-1][1].tolist() == [0.0, 0.0, 4.0]
    for index in (3, -4, 100):
        with pytest.raises(IndexError, match=f"query index {index} is out of range for 3 queries"):
            ds[index]
    assert len(list(ds)) == 3  # iteration stops on the IndexError, as for a list


@pytest.mark.parametrize(
    "queries, message",
    [
        ([(torch.zeros(2, 3), torch.zeros(3))], r"queries\[0\] must be features \[n, F\] and relevance \[n\], got \(2, 3\) and \(3,\)"),
        ([(torch.zeros(2, 3), torch.zeros(2)), (torch.zeros(4), torch.zeros(4))], r"queries\[1\] must be features \[n, F\]"),
        ([(torch.zeros(2, 3), torch.zeros(2, 1))], r"queries\[0\] must be features"),
    ],
)
def test_pad_batch_and_from_queries_name_the_bad_query(queries, message):
    with pytest.raises(ValueError, match=message):
        pad_batch(queries)
    with pytest.raises(ValueError, match=message):
        RankingDataset.from_queries(queries)


def test_from_queries_refuses_different_feature_widths():
    with pytest.raises(ValueError, match=r"queries\[1\] has 3 features, queries\[0\] has 2"):
        RankingDataset.from_queries([(torch.zeros(1, 2), torch.zeros(1)), (torch.zeros(2, 3), torch.zeros(2))])


@pytest.mark.parametrize("label", [float("inf"), float("nan"), -1.0])
def test_non_finite_or_negative_labels_are_refused(label):
    with pytest.raises(ValueError, match="finite and ≥ 0"):
        RankingDataset(torch.zeros(2, 1), torch.tensor([0.0, label]), torch.tensor([0, 2]))


def test_select_keeps_the_chosen_queries_their_qids_and_rows():
    ds = small()
    ds = RankingDataset(ds.features, ds.relevance, ds.offsets, ds.qids, rows=torch.tensor([5, 0, 1, 2, 3, 4]))
    part = ds.select([2, 0])
    assert part.qids == ["c", "a"] and part.list_lengths.tolist() == [3, 2]
    assert part.relevance.tolist() == [0.0, 0.0, 4.0, 1.0, 0.0] and part.rows.tolist() == [2, 3, 4, 5, 0]
    assert torch.equal(part.standardized(*part.feature_stats()).rows, part.rows)
    with pytest.raises(ValueError, match=r"query indices in \[0, 3\)"):
        ds.select([3])
    with pytest.raises(ValueError, match="no file order"):
        part.in_file_order(torch.zeros(5))
    assert ds.in_file_order(torch.arange(6.0)).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 0.0]
    with pytest.raises(ValueError, match="not read from a file"):
        small().in_file_order(torch.zeros(6))
