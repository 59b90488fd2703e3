"""Propensity estimation: with PBM at η = 1 and 2, the estimates for ranks 1–10 normalised to rank 1
are within 10% of the truth from 10⁶ sessions, from swap interventions and from EM; DLA learns
the direction of the bias."""

import pytest
import torch

from torch_ndcg.clicks import DualLearning, logged_ranks, pbm_clicks, propensities_from_swaps, regression_em
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
