"""The synthetic default: deterministic, skewed, learnable, split three ways."""

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.data import synthetic_letor


def test_same_seed_same_data_other_seed_other_data():
    a = synthetic_letor((20, 5, 5), num_features=6, seed=3)
    b = synthetic_letor((20, 5, 5), num_features=6, seed=3)
    c = synthetic_letor((20, 5, 5), num_features=6, seed=4)
    for name in ("train", "vali", "test"):
        assert torch.equal(a[name].features, b[name].features)
        assert torch.equal(a[name].relevance, b[name].relevance)
    assert not torch.equal(a["train"].features, c["train"].features)


def test_shapes_lengths_and_skewed_graded_labels():
    splits = synthetic_letor((300, 40, 50), num_features=8, list_length=(10, 30), seed=0)
    assert [len(splits[s]) for s in ("train", "vali", "test")] == [300, 40, 50]
    lengths = splits["train"].list_lengths
    assert lengths.min() >= 10 and lengths.max() <= 30 and len(set(lengths.tolist())) > 5
    labels = splits["train"].relevance
    share = torch.bincount(labels.long(), minlength=5).float() / labels.numel()
    assert set(labels.unique().tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    assert share[0] > 0.45 and (share[:-1] >= share[1:]).all()  # most items 0, fewer at each grade
    assert splits["train"].qids[:2] == ["0", "1"] and splits["vali"].qids[0] == "300"


def test_log_normal_lengths_are_mslr_like_and_clipped():
    splits = synthetic_letor((2000, 1, 1), num_features=2, list_length=(2, 240), length_median=30, seed=0)
    lengths = splits["train"].list_lengths.double()
    assert lengths.min() >= 2 and lengths.max() <= 240
    assert 27 <= lengths.median() <= 33  # the median asked for
    # Spread 0.9 in log space: about 16% of lists are over 30·e^0.9 ≈ 74 items, and some reach the cap.
    assert 0.12 < (lengths > 74).double().mean() < 0.20 and lengths.max() == 240
    again = synthetic_letor((2000, 1, 1), num_features=2, list_length=(2, 240), length_median=30, seed=0)
    assert torch.equal(again["train"].list_lengths, splits["train"].list_lengths)


def test_labels_follow_the_features():
    # Without noise, a linear probe fitted on train ranks validation far better than chance.
    splits = synthetic_letor((400, 100, 10), num_features=8, noise=0.0, seed=1)
    train, vali = splits["train"], splits["vali"]
    design = torch.cat([train.features, torch.tanh(train.features)], dim=1)
    weights = torch.linalg.lstsq(design, train.relevance.unsqueeze(1)).solution
    batch = next(vali.batches(len(vali)))
    scores = (torch.cat([batch.features, torch.tanh(batch.features)], dim=-1) @ weights).squeeze(-1)
    learned = tn.ndcg(scores, batch.relevance, 10, mask=batch.mask, empty="skip")
    chance = tn.ndcg(torch.rand(batch.mask.shape), batch.relevance, 10, mask=batch.mask, empty="skip")
    assert learned > chance + 0.2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_queries": (10, 0, 1)}, "num_queries"),
        ({"num_queries": (10, 1)}, "num_queries"),
        ({"list_length": (5, 2)}, "min ≤ max"),
        ({"noise": -1.0}, "noise"),
        ({"num_features": 0}, "num_features"),
        ({"length_median": 60}, "length_median"),  # outside the default list_length (10, 50)
        ({"length_median": 20.5}, "length_median"),
        ({"length_median": True}, "length_median"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        synthetic_letor(**kwargs)
