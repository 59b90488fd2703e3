"""ApproxNDCG: gradients, the exact metric as τ → 0, the soft cutoff, and training to NDCG ≈ 1."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn


@pytest.mark.parametrize("impl", ["dense", "streaming"])
@pytest.mark.parametrize("k", [2, None])
def test_gradcheck_with_mask(impl, k):
    gen = torch.Generator().manual_seed(1)
    scores = torch.randn(3, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    relevance = torch.randint(0, 3, (3, 6), generator=gen).double()
    relevance[:, 0] = 1
    mask = torch.tensor([[1, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 1], [1] * 6], dtype=torch.bool)
    assert torch.autograd.gradcheck(
        lambda s: tn.approx_ndcg_loss(s, relevance, k, mask=mask, temperature=0.5, gain="exp2", impl=impl), (scores,)
    )


@pytest.mark.parametrize("k", [1, 3, None])
@pytest.mark.parametrize("gain", ["linear", "exp2"])
def test_small_temperature_gives_the_exact_metric(k, gain):
    gen = torch.Generator().manual_seed(2)
    scores = torch.stack([torch.randperm(10, generator=gen) for _ in range(4)]).double()
    relevance = torch.randint(0, 4, (4, 10), generator=gen).double()
    mask = torch.rand(4, 10, generator=gen) > 0.2
    exact = tn.ndcg(scores, relevance, k, mask=mask, gain=gain, reduction="none")
    for impl in ("dense", "streaming"):
        smooth = tn.approx_ndcg(
            scores, relevance, k, mask=mask, gain=gain, temperature=1e-3, impl=impl, empty="zero", reduction="none"
        )
        torch.testing.assert_close(smooth, exact, atol=1e-4, rtol=0)


def test_ranks_count_the_items_scored_above():
    from torch_ndcg.losses.relaxations.approximate_ranks import dense_ranks

    scores = torch.tensor([[0.0, 2.0, 1.0, 5.0]], dtype=torch.float64)
    valid = torch.tensor([[True, True, True, False]])
    ranks = dense_ranks(scores, valid, 1e-3)
    torch.testing.assert_close(ranks, torch.tensor([[3.0, 1.0, 2.0, 1.0]], dtype=torch.float64))


def test_cutoff_at_or_beyond_the_list_is_the_whole_list():
    scores = torch.randn(3, 6)
    relevance = torch.randint(0, 3, (3, 6))
    mask = torch.ones(3, 6, dtype=torch.bool)
    mask[0, :2] = False  # 4 real items: k = 4 already covers the list
    whole = tn.approx_ndcg(scores, relevance, mask=mask, reduction="none", empty="zero")
    at_four = tn.approx_ndcg(scores, relevance, 4, mask=mask, reduction="none", empty="zero")
    assert torch.equal(whole[0], at_four[0])
    assert not torch.allclose(whole[1:], at_four[1:])
    assert torch.equal(whole, tn.approx_ndcg(scores, relevance, 6, mask=mask, reduction="none", empty="zero"))


def test_soft_cutoff_sharpens_into_the_hard_top_k():
    scores = torch.tensor([[4.0, 3.0, 2.0, 1.0]], dtype=torch.float64)
    relevance = torch.tensor([[1.0, 1.0, 1.0, 1.0]], dtype=torch.float64)
    values = [tn.approx_ndcg(scores, relevance, 2, temperature=t).item() for t in (1.0, 0.3, 0.1, 0.01)]
    assert all(abs(b - 1.0) < abs(a - 1.0) for a, b in zip(values, values[1:]))
    assert abs(values[-1] - 1.0) < 1e-6


@pytest.mark.parametrize("k", [None, 3])
def test_adam_on_free_scores_reaches_the_best_ranking(k):
    gen = torch.Generator().manual_seed(4)
    relevance = torch.randint(0, 4, (4, 10), generator=gen).double()
    relevance[:, 0] = 3
    # Scores start near 0, as a fresh model's do. From widely spread random scores, items already
    # far apart get vanishing gradients and a list can stall (seen: ApproxNDCG at 0.957 with τ = 1).
    scores = (0.01 * torch.randn(4, 10, generator=gen, dtype=torch.float64)).requires_grad_()
    optimiser = torch.optim.Adam([scores], lr=0.1)
    for _ in range(100):
        optimiser.zero_grad()
        tn.approx_ndcg_loss(scores, relevance, k).backward()
        optimiser.step()
    assert tn.ndcg(scores.detach(), relevance, k) >= 0.99
