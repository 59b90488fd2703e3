"""Propensity estimation: with PBM at η = 1 and 2, the estimates for ranks 1–10 normalised to rank 1
are within 10% of the truth from 10⁶ sessions, from swap interventions and from EM; DLA learns
the direction of the bias."""

import warnings

import pytest
import torch

from torch_ndcg.clicks import DualLearning, EMNotConverged, logged_ranks, pbm_clicks, propensities_from_swaps, regression_em
from torch_ndcg.clicks import swap_intervention

SESSIONS, LENGTH = 10**6, 10


@pytest.mark.slow
@pytest.mark.parametrize("eta", [1.0, 2.0])
def test_swap_interventions_recover_the_propensities(eta):
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 5, (SESSIONS, LENGTH), generator=g)
    shown, partner = swap_intervention(torch.arange(1, LENGTH + 1).expand(SESSIONS, LENGTH), max_rank=LENGTH, generator=g)
    clicks = pbm_clicks(labels, shown, eta=eta, generator=g).clicks
    estimate = propensities_from_swaps(clicks, shown, partner, max_rank=LENGTH)
    truth = torch.arange(1, LENGTH + 1, dtype=torch.float64).pow(-eta)
    assert ((estimate / truth - 1).abs() <= 0.10).all(), (estimate / truth).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("eta", [1.0, 2.0])
def test_em_recovers_the_propensities_from_logs_alone(eta):
    # 1,000 queries of 10 items; each session shows one query ranked by a noisy logging ranker, so
    # an item appears at several ranks across sessions (what identifies the propensities).
    g = torch.Generator().manual_seed(0)
    queries = 1000
    labels_of_query = torch.randint(0, 5, (queries, LENGTH), generator=g)
    query = torch.randint(0, queries, (SESSIONS,), generator=g)
    labels = labels_of_query[query]
    items = query[:, None] * LENGTH + torch.arange(LENGTH)
    shown = logged_ranks(labels + 1.5 * torch.randn(SESSIONS, LENGTH, generator=g))
    clicks = pbm_clicks(labels, shown, eta=eta, generator=g).clicks
    estimate = regression_em(clicks, shown, items, max_rank=LENGTH)
    truth = torch.arange(1, LENGTH + 1, dtype=torch.float64).pow(-eta)
    assert ((estimate / truth - 1).abs() <= 0.10).all(), (estimate / truth).tolist()


def test_em_with_a_relevance_model_is_called_with_the_posteriors():
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 5, (2000, 5), generator=g)
    shown = logged_ranks(torch.randn(2000, 5, generator=g))
    items = torch.arange(5).expand(2000, 5)
    clicks = pbm_clicks(labels, shown, generator=g).clicks
    seen = []

    def shared(posterior, counts):  # one relevance for every item: a (bad) regression
        seen.append(posterior.shape)
        return ((posterior * counts).sum() / counts.sum()).expand_as(posterior)

    with pytest.warns(EMNotConverged):
        estimate = regression_em(clicks, shown, items, max_rank=5, iterations=5, relevance_model=shared)
    assert seen == [torch.Size([5])] * 5 and estimate[0] == 1 and estimate.shape == (5,)


def test_swap_intervention_swaps_rank_one_with_the_partner_only():
    g = torch.Generator().manual_seed(0)
    ranks = torch.arange(1, 7).expand(1000, 6)
    shown, partner = swap_intervention(ranks, max_rank=4, generator=g)
    assert partner.min() >= 2 and partner.max() <= 4 and set(partner.tolist()) == {2, 3, 4}
    assert torch.equal(shown.sort(-1).values, ranks)
    changed = shown != ranks
    assert torch.isin(changed.sum(-1), torch.tensor([0, 2])).all()
    swapped = changed.any(-1)
    assert 0.4 < swapped.double().mean() < 0.6
    assert (shown[swapped, 0] == partner[swapped]).all()


def test_dual_learning_learns_that_lower_ranks_are_examined_less():
    # A ranker that already knows relevance (scores = labels): the propensity model must see that
    # equally relevant items are clicked less at lower ranks.
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 5, (4000, 6), generator=g).float()
    shown = logged_ranks(torch.randn(4000, 6, generator=g))
    clicks = pbm_clicks(labels, shown, eta=1.0, generator=g).clicks
    model = DualLearning(max_rank=6)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(200):
        loss = model.loss(labels * 2.0, clicks, shown)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    estimate = model.propensities(torch.arange(1, 7))
    assert estimate[0] == 1 and (estimate.diff() < 0).all()
    target = model.target(clicks, shown)
    assert torch.equal(target.clicks, clicks) and target.propensities.shape == clicks.shape


def _noisy_logs(eta, *, sessions, queries, noise, seed=0):
    """Sessions of ``queries`` queries of 10 items ranked by a logging ranker whose score noise
    ``noise`` varies the rankings (a small noise: items rarely move, the EM converges slowly)."""
    g = torch.Generator().manual_seed(seed)
    labels_of_query = torch.randint(0, 5, (queries, LENGTH), generator=g)
    query = torch.randint(0, queries, (sessions,), generator=g)
    labels = labels_of_query[query]
    items = query[:, None] * LENGTH + torch.arange(LENGTH)
    shown = logged_ranks(labels + noise * torch.randn(sessions, LENGTH, generator=g))
    return pbm_clicks(labels, shown, eta=eta, generator=g).clicks, shown, items


@pytest.mark.slow
@pytest.mark.parametrize("eta", [1.0, 2.0])
def test_em_with_rankings_varied_little_converges_to_the_propensities(eta):
    clicks, shown, items = _noisy_logs(eta, sessions=SESSIONS, queries=1000, noise=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EMNotConverged)
        estimate = regression_em(clicks, shown, items, max_rank=LENGTH)
    truth = torch.arange(1, LENGTH + 1, dtype=torch.float64).pow(-eta)
    assert ((estimate / truth - 1).abs() <= 0.10).all(), (estimate / truth).tolist()


def test_em_default_stops_near_its_fixed_point_when_convergence_is_slow():
    # η = 2 with rankings varied little: 200 iterations leave rank 10 about 50% above the fixed point.
    clicks, shown, items = _noisy_logs(2.0, sessions=100_000, queries=100, noise=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EMNotConverged)
        estimate = regression_em(clicks, shown, items, max_rank=LENGTH)
        fixed_point = regression_em(clicks, shown, items, max_rank=LENGTH, iterations=100_000, tolerance=1e-8)
    assert ((estimate / fixed_point - 1).abs() <= 0.02).all(), (estimate / fixed_point).tolist()


def test_em_warns_when_its_iteration_budget_ends_first():
    clicks, shown, items = _noisy_logs(2.0, sessions=20_000, queries=20, noise=0.5)
    with pytest.warns(EMNotConverged, match="iterations"):
        regression_em(clicks, shown, items, max_rank=LENGTH, iterations=30)


def test_em_memory_follows_the_distinct_ids_not_the_largest():
    clicks, shown, items = _noisy_logs(1.0, sessions=2000, queries=5, noise=1.0)
    dense = regression_em(clicks, shown, items, max_rank=LENGTH)
    for offset in (3_000_000, 2**40):  # tables of (largest id + 1) rows would take gigabytes or fail
        sparse = regression_em(clicks, shown, items * 7919 + offset, max_rank=LENGTH)
        torch.testing.assert_close(sparse, dense)


def test_em_refuses_negative_item_ids_naming_them():
    clicks, shown, items = _noisy_logs(1.0, sessions=100, queries=2, noise=1.0)
    with pytest.raises(ValueError, match="items"):
        regression_em(clicks, shown, items - 5, max_rank=LENGTH)


def test_em_gives_nan_at_ranks_never_displayed_and_refuses_without_rank_one():
    clicks, shown, items = _noisy_logs(1.0, sessions=2000, queries=5, noise=1.0)
    keep = shown != 4  # rank 4 is never shown
    estimate = regression_em(clicks, shown, items, max_rank=LENGTH, mask=keep)
    assert torch.isnan(estimate[3]) and torch.isfinite(estimate[torch.arange(LENGTH) != 3]).all()
    assert torch.isnan(regression_em(clicks, shown, items, max_rank=LENGTH + 2)[LENGTH:]).all()
    with pytest.raises(ValueError, match="rank 1"):
        regression_em(clicks, shown, items, max_rank=LENGTH, mask=shown != 1)


def test_swap_estimate_ignores_partners_deeper_than_max_rank():
    # Partners drawn to rank 10, estimated to rank 5: rank 5 must not pool the sessions of 6..10.
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 5, (400_000, LENGTH), generator=g)
    shown, partner = swap_intervention(torch.arange(1, LENGTH + 1).expand(400_000, LENGTH), max_rank=LENGTH, generator=g)
    clicks = pbm_clicks(labels, shown, eta=1.0, generator=g).clicks
    shallow = propensities_from_swaps(clicks, shown, partner, max_rank=5)
    deep = propensities_from_swaps(clicks, shown, partner, max_rank=LENGTH)
    torch.testing.assert_close(shallow, deep[:5])
    assert abs(float(shallow[4]) / 0.2 - 1) < 0.1


def test_swap_estimate_is_nan_where_a_rank_is_not_identified():
    clicks = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    shown = torch.tensor([[1, 2, 3], [1, 2, 3], [3, 2, 1]])
    partner = torch.tensor([2, 2, 3])  # pair 2: one click at rank 1; pair 3: none; pair 4: no session
    estimate = propensities_from_swaps(clicks, shown, partner, max_rank=4)
    assert estimate[:2].tolist() == [1.0, 1.0] and torch.isnan(estimate[2:]).all()
    only_deep = propensities_from_swaps(clicks[:1], shown[:1], partner[:1], max_rank=2)
    assert torch.isnan(only_deep[1])  # a click at rank 2 but none at rank 1: not infinity
    with pytest.raises(ValueError, match="partner"):
        propensities_from_swaps(clicks, shown, partner - 3, max_rank=4)


def test_swap_intervention_refuses_float_ranks():
    with pytest.raises(TypeError, match="ranks"):
        swap_intervention(torch.tensor([[1.0, 2.0, 3.0]]), max_rank=3)


def test_dual_learning_loss_is_finite_in_float32_past_the_exponent_range():
    # A score gap of 100 > log(float32 max) ≈ 88.7: the weight e^100 overflows float32.
    model = DualLearning(max_rank=3, max_weight=None)
    with torch.no_grad():
        model.logits.copy_(torch.tensor([0.3, -0.2, -1.0]))
    scores = torch.tensor([[100.0, 0.0, 5.0], [1.0, 2.0, 3.0]])
    clicks = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    ranks = torch.tensor([[1, 2, 3], [3, 1, 2]])
    for max_weight in (None, 10.0):
        model.max_weight = max_weight
        single = model.loss(scores, clicks, ranks)
        double = model.loss(scores.double(), clicks.double(), ranks)
        assert torch.isfinite(single)
        torch.testing.assert_close(single.double(), double, rtol=1e-6, atol=1e-6)
        single.backward()
        assert torch.isfinite(model.logits.grad).all()
        model.logits.grad = None
    mask = torch.tensor([[True, True, False], [True, True, True]])
    torch.testing.assert_close(model.loss(scores, clicks, ranks, mask=mask).double(),
                               model.loss(scores.double(), clicks.double(), ranks, mask=mask))  # fmt: skip
