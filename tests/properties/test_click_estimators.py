"""The propensity estimators on logs they cannot fully identify, one property per kind of gap:

* ranks never displayed: the EM's estimate there is NaN and every displayed rank's is finite;
  without a display at rank 1 it refuses; the swap estimate is NaN (never infinite) at a rank
  whose sessions have no click at rank 1 or that no session pairs with rank 1;
* sparse ids: the EM's estimates do not depend on how the items are numbered (any distinct
  non-negative ids, up to 2⁶²), and a negative id is a ValueError naming ``items``;
* a shallower ``max_rank`` gives the swap estimate's first ranks, whatever the deeper partners.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_ndcg.clicks import EMNotConverged, logged_ranks, pbm_clicks, propensities_from_swaps, regression_em
from torch_ndcg.clicks import swap_intervention

WIDTH = 6


def _logs(seed: int, queries: int, sessions: int):
    """``sessions`` PBM sessions over ``queries`` queries of ``WIDTH`` items, ranked by a noisy
    logging ranker; item ids ``0..queries·WIDTH − 1``."""
    g = torch.Generator().manual_seed(seed)
    labels_of_query = torch.randint(0, 5, (queries, WIDTH), generator=g)
    query = torch.randint(0, queries, (sessions,), generator=g)
    labels = labels_of_query[query]
    shown = logged_ranks(labels + torch.randn(sessions, WIDTH, generator=g))
    clicks = pbm_clicks(labels, shown, generator=g).clicks
    return clicks, shown, query[:, None] * WIDTH + torch.arange(WIDTH)


def _em(clicks, shown, items, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EMNotConverged)  # the properties hold at any iteration
        return regression_em(clicks, shown, items, iterations=40, **options)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), hidden=st.sets(st.integers(2, WIDTH + 2), max_size=3), queries=st.integers(1, 4))
def test_em_is_nan_exactly_at_the_ranks_never_displayed(seed, hidden, queries):
    clicks, shown, items = _logs(seed, queries, 300)
    mask = ~torch.isin(shown, torch.tensor(sorted(hidden) or [0]))
    estimate = _em(clicks, shown, items, max_rank=WIDTH + 2, mask=mask)
    never = torch.tensor([r not in shown[mask].tolist() for r in range(1, WIDTH + 3)])
    assert torch.equal(torch.isnan(estimate), never)
    assert estimate[0] == 1 and torch.isfinite(estimate[~never]).all()


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_em_refuses_logs_without_a_display_at_rank_one(seed):
    clicks, shown, items = _logs(seed, 2, 50)
    with pytest.raises(ValueError, match="rank 1"):
        regression_em(clicks, shown, items, max_rank=WIDTH, mask=shown != 1)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), queries=st.integers(1, 4),
       ids=st.lists(st.integers(0, 2**62), min_size=4 * WIDTH, max_size=4 * WIDTH, unique=True))  # fmt: skip
def test_em_does_not_depend_on_how_items_are_numbered(seed, queries, ids):
    clicks, shown, items = _logs(seed, queries, 300)
    renamed = torch.tensor(ids)[items]
    torch.testing.assert_close(_em(clicks, shown, renamed, max_rank=WIDTH), _em(clicks, shown, items, max_rank=WIDTH))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), negative=st.integers(-(2**62), -1))
def test_em_refuses_a_negative_item_id_naming_it(seed, negative):
    clicks, shown, items = _logs(seed, 2, 50)
    items = items.clone()
    items[0, 0] = negative
    with pytest.raises(ValueError, match="items"):
        regression_em(clicks, shown, items, max_rank=WIDTH)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), sessions=st.integers(1, 60), click_rate=st.sampled_from([0.0, 0.05, 0.5]),
       deepest=st.integers(2, 10), max_rank=st.integers(1, 12))  # fmt: skip
def test_swap_estimate_is_nan_never_infinite_where_a_rank_is_not_identified(seed, sessions, click_rate, deepest, max_rank):
    g = torch.Generator().manual_seed(seed)
    shown, partner = swap_intervention(torch.arange(1, WIDTH + 1).expand(sessions, WIDTH), max_rank=deepest, generator=g)
    clicks = (torch.rand(sessions, WIDTH, generator=g) < click_rate).double()
    estimate = propensities_from_swaps(clicks, shown, partner, max_rank=max_rank)
    assert estimate.shape == (max_rank,) and estimate[0] == 1
    assert not torch.isinf(estimate).any()
    top = torch.tensor([float((clicks[partner == k] * (shown[partner == k] == 1)).sum()) for k in range(1, max_rank + 1)])
    assert torch.equal(torch.isnan(estimate[1:]), top[1:] == 0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), shallow=st.integers(1, WIDTH))
def test_swap_estimate_to_a_shallower_rank_is_the_first_ranks_of_the_deeper_one(seed, shallow):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 5, (2000, WIDTH), generator=g)
    shown, partner = swap_intervention(torch.arange(1, WIDTH + 1).expand(2000, WIDTH), max_rank=WIDTH, generator=g)
    clicks = pbm_clicks(labels, shown, generator=g).clicks
    deep = propensities_from_swaps(clicks, shown, partner, max_rank=WIDTH)
    torch.testing.assert_close(propensities_from_swaps(clicks, shown, partner, max_rank=shallow), deep[:shallow],
                               equal_nan=True)  # fmt: skip
