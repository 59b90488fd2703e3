"""Dense lists → rank statistics (torch_ndcg.dense.rank): tie groups, tie breaking, and the topk path."""

import pytest
import torch

from torch_ndcg import dense
from torch_ndcg.ordering import top_ranks

FIELDS = ("position", "group_gain", "group_size", "group_hits", "group_start", "hits_before")


def slots_of(scores, relevance, depth, ties, mask=None):
    """Lists as dense.prepare leaves them (-inf and zero labels at padding), gains = 10 × label."""
    scores = torch.as_tensor(scores, dtype=torch.float64)
    relevance = torch.as_tensor(relevance, dtype=torch.float64)
    if mask is not None:
        scores = scores.masked_fill(~mask, -torch.inf)
        relevance = torch.where(mask, relevance, torch.zeros_like(relevance))
    lists = dense.DenseLists(scores, relevance * 10, relevance, gains_nonnegative=True)
    return dense.rank(lists, depth, ties, hits=True, validate=True)


def as_lists(slots):
    return {field: getattr(slots, field).tolist() for field in FIELDS}


def test_average_tie_groups():
    # Sorted: 3 (items 1, 2, 4: labels 0, 2, 1), then 2 (item 3: label 1), then 1 (item 0: label 3).
    got = as_lists(slots_of([1.0, 3.0, 3.0, 2.0, 3.0], [3.0, 0.0, 2.0, 1.0, 1.0], 5, "average"))
    assert got == {
        "position": [0, 1, 2, 3, 4],
        "group_gain": [30, 30, 30, 10, 30],
        "group_size": [3, 3, 3, 1, 1],
        "group_hits": [2, 2, 2, 1, 1],
        "group_start": [0, 0, 0, 3, 4],
        "hits_before": [0, 0, 0, 2, 3],
    }


@pytest.mark.parametrize(
    ("ties", "labels"),
    [("first", [2.0, 0.0, 3.0]), ("worst", [0.0, 1.0, 2.0]), ("best", [4.0, 3.0, 2.0])],
)
def test_broken_ties_order_the_group(ties, labels):
    relevance = [2.0, 0.0, 3.0, 1.0, 4.0]
    for depth in (3, 5):  # through topk (depth < N) and the full sort
        got = slots_of([1.0] * 5, relevance, depth, ties)
        assert got.group_gain[:3].tolist() == [10 * v for v in labels]
        assert got.group_size.tolist() == [1.0] * depth
        assert got.group_start.tolist() == got.position.tolist()
        hits = (got.group_hits > 0).double()
        assert got.hits_before.tolist() == (torch.cumsum(hits, 0) - hits).tolist()


def test_straddling_group_is_counted_whole():
    # depth 2 cuts the group of four 5s: its size, gain and hits count every member in the row.
    scores = [5.0, 1.0, 5.0, 9.0, 5.0, 5.0]
    relevance = [1.0, 4.0, 0.0, 0.0, 2.0, 3.0]
    got = as_lists(slots_of(scores, relevance, 2, "average"))
    assert got["group_size"] == [1, 4]
    assert got["group_gain"] == [0, 60]
    assert got["group_hits"] == [0, 3]
    assert got["group_start"] == [0, 1]


@pytest.mark.parametrize("ties", ["average", "first", "worst", "best"])
@pytest.mark.parametrize("depth", [1, 3, 7])
def test_topk_path_equals_the_full_sort(ties, depth):
    g = torch.Generator().manual_seed(depth)
    scores = torch.randint(0, 3, (16, 24), generator=g).double()
    relevance = torch.randint(0, 3, (16, 24), generator=g).double()
    mask = torch.rand(16, 24, generator=g) < 0.8
    partial = slots_of(scores, relevance, depth, ties, mask)
    full = slots_of(scores, relevance, 24, ties, mask)
    for field in FIELDS:
        torch.testing.assert_close(getattr(partial, field), getattr(full, field)[..., :depth], msg=field)


@pytest.mark.parametrize("ties", ["average", "worst", "best"])
def test_slots_do_not_depend_on_the_item_order(ties):
    # Which tied members topk or sort return must not matter (for "first" the index is the rule).
    g = torch.Generator().manual_seed(0)
    scores = torch.randint(0, 3, (8, 30), generator=g).double()
    relevance = torch.randint(0, 4, (8, 30), generator=g).double()
    perm = torch.randperm(30, generator=g)
    for depth in (4, 30):
        before = slots_of(scores, relevance, depth, ties)
        after = slots_of(scores[:, perm], relevance[:, perm], depth, ties)
        for field in FIELDS:
            torch.testing.assert_close(getattr(after, field), getattr(before, field), msg=field)


@pytest.mark.parametrize("ties", ["average", "first", "worst", "best"])
def test_padding_ranks_last_with_nothing(ties):
    mask = torch.tensor([False, True, False, True, True])
    got = slots_of([9.0, 1.0, 9.0, 1.0, 0.5], [5.0, 1.0, 5.0, 0.0, 2.0], 5, ties, mask)
    assert got.group_gain[3:].tolist() == [0.0, 0.0]
    assert got.group_hits[3:].tolist() == [0.0, 0.0]
    # The real items' gains (10, 0, 20), all within the first 3 slots.
    assert (got.group_gain / got.group_size)[:3].sum().item() == 30.0



@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", ["distinct", "tie at the cutoff", "tie in the top", "tie below", "masked"])
@pytest.mark.parametrize("depth", [1, 4, 12])  # 12 = N: the full sort
@pytest.mark.parametrize("with_hits", [True, False])
def test_tie_free_shortcut_equals_the_tie_groups(case, depth, dtype, with_hits):
    # dense.rank skips the tie-group statistics when the top depth + 1 scores are distinct;
    # both paths must give identical statistics, with and without ties near the cutoff.
    g = torch.Generator().manual_seed(depth)
    scores = torch.randperm(6 * 12, generator=g).reshape(6, 12).to(dtype) / 7
    relevance = torch.randint(0, 4, (6, 12), generator=g).to(dtype)
    top = scores.sort(-1, descending=True).values
    tied = {"tie at the cutoff": depth, "tie in the top": 1, "tie below": 11}.get(case)
    if tied is not None and tied < 12:
        scores[:3] = torch.where(scores[:3] == top[:3, tied : tied + 1], top[:3, tied - 1 : tied], scores[:3])
    if case == "masked":
        mask = torch.rand(6, 12, generator=g) < 0.7
        scores, relevance = scores.masked_fill(~mask, -torch.inf), relevance * mask
    hits = (relevance > 0).to(dtype) if with_hits else None
    fields = FIELDS if with_hits else ("position", "group_gain", "group_size")
    lists = dense.DenseLists(scores, relevance * 10, relevance, gains_nonnegative=True)
    fast = dense.rank(lists, depth, "average", hits=with_hits, validate=True)
    general = dense._tie_groups(relevance * 10, hits, top_ranks(scores, depth))
    for field in fields:
        assert torch.equal(getattr(fast, field), getattr(general, field)), field
