"""Top-k selection (torch_ndcg.selection): the numpy host path agrees with torch.topk exactly."""

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg import selection

pytestmark = pytest.mark.skipif(not selection._SIMD_SORT, reason="the host path needs numpy ≥ 2 on x86-64/Arm")


@pytest.fixture
def torch_only(monkeypatch):
    """Within a test: from the call on, every selection goes through torch.topk."""

    def use_torch() -> None:
        monkeypatch.setattr(selection, "_SIMD_SORT", False)

    return use_torch


def awkward_scores(*shape: int, seed: int = 0) -> torch.Tensor:
    """float32 scores with ties, both zeros, infinities and subnormals mixed in."""
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(*shape, generator=generator)
    specials = torch.tensor([0.0, -0.0, 1.0, -1.0, torch.inf, -torch.inf, 1e-45, -1e-45])
    pick = torch.randint(0, 3 * len(specials), shape, generator=generator)
    return torch.where(pick < len(specials), specials[pick.clamp(max=len(specials) - 1)], scores)


@pytest.mark.parametrize("shape", [(7, 12), (3, 4, 9), (5, 1), (0, 6), (2, 256)])
@pytest.mark.parametrize("depth", [1, 3, "all"])
def test_host_top_scores_equals_topk_on_keys(shape, depth, torch_only):
    scores = awkward_scores(*shape)
    depth = shape[-1] if depth == "all" else min(depth, shape[-1])
    assert selection._on_host(scores)
    keys, top_keys, index = selection.top_scores(scores, depth)
    torch_only()
    expected_keys, expected_top, _ = selection.top_scores(scores, depth)
    assert torch.equal(keys, expected_keys) and torch.equal(top_keys, expected_top)
    assert torch.equal(keys.gather(-1, index), top_keys)  # each index points at its key
    ordered = index.sort(dim=-1).values  # every row's indices are distinct
    assert bool((ordered[..., 1:] != ordered[..., :-1]).all())


def test_negative_zero_ties_with_zero_and_infinities_rank_at_the_ends():
    scores = torch.tensor([[0.0, -torch.inf, -0.0, torch.inf, -1.0]])
    keys, top_keys, index = selection.top_scores(scores, 5)
    assert index[0, 0] == 3 and set(index[0, 1:3].tolist()) == {0, 2} and index[0, 3:].tolist() == [4, 1]
    assert keys[0, 0] == keys[0, 2] and top_keys[0, 1] == top_keys[0, 2]


def test_top_values_equals_topk_values(torch_only):
    values = awkward_scores(6, 40, seed=1).abs()
    host = selection.top_values(values, 7)
    torch_only()
    assert torch.equal(host, selection.top_values(values, 7))
    assert torch.equal(host, torch.topk(values, 7).values)


def test_has_ties():
    assert selection.has_ties(torch.tensor([[3, 2, 2], [5, 4, 1]]))
    assert not selection.has_ties(torch.tensor([[3, 2, 1], [5, 4, 1]]))
    assert not selection.has_ties(torch.empty(0, 3, dtype=torch.int32))


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
    assert selection._on_host(values) == on_host


def test_tie_free_gains_in_score_and_ideal_order():
    scores = torch.tensor([[0.3, 0.9, -0.2, 0.5], [1.0, 2.0, 3.0, 4.0]])
    gains = torch.tensor([[1.0, 0.0, 3.0, 2.0], [4.0, 0.0, 0.0, 1.0]])
    got = selection.host_sort(scores).tie_free_gains(gains, 3, ideal=True)
    assert got.tolist() == [[[0.0, 2.0, 1.0], [1.0, 0.0, 0.0]], [[3.0, 2.0, 1.0], [4.0, 1.0, 0.0]]]
    assert torch.equal(selection.host_sort(scores).tie_free_gains(gains, 3, ideal=False), got[0])
    batched = selection.host_sort(scores.expand(3, 2, 4)).tie_free_gains(gains.expand(3, 2, 4), 3, ideal=True)
    assert torch.equal(batched, got.unsqueeze(1).expand(2, 3, 2, 3))


def test_tie_free_gains_declines_ties_at_the_top():
    def gains_at(scores, depth):
        return selection.host_sort(torch.tensor([scores])).tie_free_gains(torch.ones(1, 4), depth, ideal=True)

    # A tie between slot 2 and the item just past the cutoff changes DCG@2's expectation.
    assert gains_at([0.9, 0.5, 0.5, 0.1], 2) is None
    assert gains_at([0.9, 0.5, 0.5, 0.1], 1) is not None
    assert gains_at([0.9, 0.5, 0.4, 0.4], 2) is not None
    assert gains_at([0.0, -0.0, 0.4, 0.3], 4) is None


def test_host_sort_is_reused_and_top_matches_top_scores(torch_only):
    scores = awkward_scores(5, 30, seed=3)
    presorted = selection.host_sort(scores)
    host = selection.top_scores(scores, 7, presorted=presorted)
    torch_only()
    assert selection.host_sort(scores) is None
    device = selection.top_scores(scores, 7)
    assert torch.equal(host[0], device[0]) and torch.equal(host[1], device[1])


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
