"""Ranking by score (torch_ndcg.ordering): the numpy host path agrees with torch.topk exactly."""

from unittest import mock

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torch_ndcg as tn
from torch_ndcg import ordering

pytestmark = pytest.mark.skipif(not ordering._SIMD_SORT, reason="the host path needs numpy ≥ 2 on x86-64/Arm")


@pytest.fixture
def torch_only(monkeypatch):
    """Within a test: from the call on, every selection goes through torch.topk."""

    def use_torch() -> None:
        monkeypatch.setattr(ordering, "_SIMD_SORT", False)

    return use_torch


def awkward_scores(*shape: int, seed: int = 0) -> torch.Tensor:
    """float32 scores with ties, both zeros, infinities and subnormals mixed in."""
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(*shape, generator=generator)
    specials = torch.tensor([0.0, -0.0, 1.0, -1.0, torch.inf, -torch.inf, 1e-45, -1e-45])
    pick = torch.randint(0, 3 * len(specials), shape, generator=generator)
    return torch.where(pick < len(specials), specials[pick.clamp(max=len(specials) - 1)], scores)


def top_keys_of(scores: torch.Tensor, depth: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    ranks = ordering.top_ranks(scores, depth)
    return ranks.keys, ranks.top_keys, ranks.index


@pytest.mark.parametrize("shape", [(7, 12), (3, 4, 9), (5, 1), (0, 6), (2, 256)])
@pytest.mark.parametrize("depth", [1, 3, "all"])
def test_host_top_scores_equals_topk_on_keys(shape, depth, torch_only):
    scores = awkward_scores(*shape)
    depth = shape[-1] if depth == "all" else min(depth, shape[-1])
    assert ordering._host_array(scores) is not None
    keys, top_keys, index = top_keys_of(scores, depth)
    torch_only()
    expected_keys, expected_top, _ = top_keys_of(scores, depth)
    assert torch.equal(keys, expected_keys) and torch.equal(top_keys, expected_top)
    assert torch.equal(keys.gather(-1, index), top_keys)  # each index points at its key
    ordered = index.sort(dim=-1).values  # every row's indices are distinct
    assert bool((ordered[..., 1:] != ordered[..., :-1]).all())


def test_negative_zero_ties_with_zero_and_infinities_rank_at_the_ends():
    scores = torch.tensor([[0.0, -torch.inf, -0.0, torch.inf, -1.0]])
    keys, top_keys, index = top_keys_of(scores, 5)
    assert index[0, 0] == 3 and set(index[0, 1:3].tolist()) == {0, 2} and index[0, 3:].tolist() == [4, 1]
    assert keys[0, 0] == keys[0, 2] and top_keys[0, 1] == top_keys[0, 2]


def test_top_values_equals_topk_values(torch_only):
    values = awkward_scores(6, 40, seed=1).abs()
    host = ordering.top_values(values, 7)
    torch_only()
    assert torch.equal(host, ordering.top_values(values, 7))
    assert torch.equal(host, torch.topk(values, 7).values)


def test_has_neighbours_equal():
    assert ordering._has_neighbours_equal(torch.tensor([[3, 2, 2], [5, 4, 1]]))
    assert not ordering._has_neighbours_equal(torch.tensor([[3, 2, 1], [5, 4, 1]]))
    assert not ordering._has_neighbours_equal(torch.empty(0, 3, dtype=torch.int32))


@pytest.mark.parametrize(
    ("values", "on_host"),
    [
        (torch.zeros(4, 256), True),
        (torch.zeros(4, 257), False),  # past the SIMD sort's sorting-network sizes
        (torch.zeros(4, 10, dtype=torch.float64), False),  # 64-bit keys leave no room for an index
        (torch.zeros(2**22 // 100 + 1, 100), False),  # the packed keys would take too much memory
    ],
)
def test_which_inputs_take_the_host_path(values, on_host):
    assert (ordering._host_array(values) is not None) == on_host


@pytest.mark.parametrize("host", [True, False])
def test_find_ties_sees_ties_up_to_the_first_unranked_item(host, torch_only):
    def distinct(scores, depth):
        if not host:
            torch_only()
        return ordering.top_ranks(torch.tensor([scores]), depth, find_ties=True).distinct

    # A tie between rank 2 and the item just past the cutoff changes DCG@2's expectation.
    assert not distinct([0.9, 0.5, 0.5, 0.1], 2)
    assert distinct([0.9, 0.5, 0.5, 0.1], 1)
    assert distinct([0.9, 0.5, 0.4, 0.4], 2)
    assert not distinct([0.0, -0.0, 0.4, 0.3], 4)
    assert not ordering.top_ranks(torch.tensor([[0.9, 0.5, 0.4]]), 2).distinct  # not asked: unknown


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
@pytest.mark.parametrize("host", [True, False])
def test_tie_break_orders_tied_scores_and_picks_the_straddling_group(depth, host, torch_only):
    if not host:
        torch_only()
    scores = torch.tensor([[0.5, 0.9, 0.5, 0.5, 0.1]])
    tie_break = torch.tensor([[1.0, 0.0, 3.0, 2.0, 0.0]])  # among the 0.5s: item 2, then 3, then 0
    ranks = ordering.top_ranks(scores, depth, tie_break=tie_break)
    assert ranks.index[0].tolist() == [1, 2, 3, 0, 4][:depth]
    assert ranks.distinct
    # "Never ranked" items (-inf) come after every ranked item, whatever their tie_break.
    last = ordering.top_ranks(torch.tensor([[-torch.inf, 0.2, 0.3]]), 3, tie_break=torch.tensor([[9.0, 0.0, 0.0]]))
    assert last.index[0].tolist() == [2, 1, 0]


def test_no_host_path_under_vmap():
    # A functorch transform hides the data from numpy: the torch path runs instead of failing.
    scores = torch.randn(3, 5, 8)
    batched = torch.vmap(lambda s: tn.ndcg(s, (s > 0).float(), 3, validate=False))(scores)
    expected = torch.stack([tn.ndcg(s, (s > 0).float(), 3) for s in scores])
    torch.testing.assert_close(batched, expected)


METRICS = ["ndcg", "dcg", "cg", "mrr", "precision", "recall", "hit_rate", "average_precision"]


@pytest.mark.parametrize("k", [(1, 5, None), 20, 7])
@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("ties", ["average", "first", "worst", "best"])
def test_dense_metrics_are_identical_on_both_paths(name, ties, tied, k, torch_only):
    generator = torch.Generator().manual_seed(2)
    scores = torch.randn(30, 20, generator=generator)  # tie-free, so NDCG and DCG skip tie groups
    if tied:
        scores[::3] = torch.randint(0, 6, (10, 20), generator=generator).float()
    relevance = torch.randint(0, 4, (30, 20), generator=generator)
    mask = torch.rand(30, 20, generator=generator) < 0.9
    call = lambda: getattr(tn, name)(scores, relevance, k, mask=mask, ties=ties, reduction="none")  # noqa: E731
    host = call()
    torch_only()
    assert torch.equal(host, call())


def test_float64_labels_and_strided_inputs_agree_on_both_paths(torch_only):
    generator = torch.Generator().manual_seed(4)
    scores = torch.randn(4, 3, 30, generator=generator)[:, 1, :]  # strided rows
    labels = torch.randint(0, 4, (4, 30, 2), generator=generator)[..., 0].double()  # float64 gains
    host = tn.ndcg(scores, labels, (3, 10), reduction="none")
    torch_only()
    assert host.dtype == torch.float64 and torch.equal(host, tn.ndcg(scores, labels, (3, 10), reduction="none"))


@pytest.mark.parametrize("shape", [(3, 2, 5), (2, 2, 1), (4, 1, 2, 6)])
def test_every_batch_shape_keeps_its_leading_axes(shape, torch_only):
    values = torch.rand(shape, generator=torch.Generator().manual_seed(5))
    host = ordering.top_values(values, 1)
    relevance = (values > 0.5).float()
    metrics = tn.ndcg(values, relevance, reduction="none"), tn.dcg(values, relevance, 1, reduction="none")
    torch_only()
    assert host.shape == (*shape[:-1], 1) and torch.equal(host, ordering.top_values(values, 1))
    assert torch.equal(metrics[0], tn.ndcg(values, relevance, reduction="none"))
    assert torch.equal(metrics[1], tn.dcg(values, relevance, 1, reduction="none"))


@pytest.mark.slow
@settings(deadline=None, max_examples=150)
@given(
    rows=st.integers(1, 5),
    length=st.integers(1, 40),
    distinct_scores=st.integers(1, 6),
    graded=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_whole_tie_groups_on_the_host_equal_the_torch_path(rows, length, distinct_scores, graded, seed):
    # The host path ranks whole tie groups (the straddling group's members come ranked, from one
    # sort); the torch path searches every item's key for them. Few distinct scores put a tie
    # group across most cutoffs; integer labels make every sum exact, so the paths agree to the bit.
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randint(0, distinct_scores, (rows, length), generator=generator).float() / 7
    labels = torch.randint(0, 5, (rows, length), generator=generator)
    labels = labels * (torch.rand(rows, length, generator=generator) < 0.5) if graded else labels.clamp(max=1)
    mask = torch.rand(rows, length, generator=generator) < 0.85
    for name in METRICS:
        for k in (1, 2, 3, 5, 10, None, (1, 3, 5)):  # (the deepest cutoff sets how deep the ranks go)
            for masked in (None, mask):
                call = lambda: getattr(tn, name)(scores, labels, k, mask=masked, reduction="none")  # noqa: E731
                host = call()
                with mock.patch.object(ordering, "_SIMD_SORT", False):
                    assert torch.equal(host, call()), (name, k, masked is not None)
