"""Click models: over 10⁶ simulated sessions the click-through rate at each rank matches the model's
formula within three standard errors; the returned propensities are the formula's; layouts agree."""

import pytest
import torch

from torch_ndcg.clicks import Clicks, cascade_clicks, dcm_clicks, logged_ranks, pbm_clicks

SESSIONS = 10**6
LABELS = torch.tensor([4, 3, 0, 2, 1, 0, 4, 2, 1, 3])  # shown at ranks 1..10
NOISE = (0.1, 1.0)


def attraction(labels: torch.Tensor) -> torch.Tensor:
    low, high = NOISE
    return low + (high - low) * (2.0 ** labels.double() - 1) / (2**4 - 1)


def expected(model: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Examination and click probability at ranks 1..10, from the models' definitions."""
    alpha = attraction(LABELS)
    rank = torch.arange(1, 11, dtype=torch.float64)
    if model == "pbm":
        examined = rank.pow(-2.0)
    else:
        stop = alpha if model == "cascade" else alpha * (1 - 0.3)
        examined = torch.cat([torch.ones(1, dtype=torch.float64), torch.cumprod(1 - stop, 0)[:-1]])
    return examined, examined * alpha


def simulate(model: str, generator: torch.Generator) -> Clicks:
    labels = LABELS.expand(SESSIONS, 10)
    ranks = torch.arange(1, 11).expand(SESSIONS, 10)
    if model == "pbm":
        return pbm_clicks(labels, ranks, eta=2.0, noise=NOISE, generator=generator)
    if model == "cascade":
        return cascade_clicks(labels, ranks, noise=NOISE, generator=generator)
    return dcm_clicks(labels, ranks, continuation=0.3, noise=NOISE, generator=generator)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["pbm", "cascade", "dcm"])
def test_click_through_rate_per_rank_matches_the_model(model):
    target = simulate(model, torch.Generator().manual_seed(1))
    examined, click = expected(model)
    ctr = target.clicks.double().mean(0)
    standard_error = (click * (1 - click) / SESSIONS).sqrt()
    assert ((ctr - click).abs() <= 3 * standard_error).all(), ((ctr - click) / standard_error).tolist()
    torch.testing.assert_close(target.propensities[0].double(), examined, rtol=1e-6, atol=1e-12)
    if model == "cascade":
        assert target.clicks.sum(-1).max() <= 1  # the cascade stops at its first click


def test_items_are_placed_by_rank_not_by_index():
    # Item 0 is shown last: under a cascade that always clicks its first item, only rank 1 is clicked.
    labels = torch.tensor([[4, 4, 4]])
    target = cascade_clicks(labels, torch.tensor([[3, 1, 2]]), noise=(1.0, 1.0))
    assert target.clicks.tolist() == [[0.0, 1.0, 0.0]]
    assert target.propensities.tolist() == [[0.0, 1.0, 0.0]]


@pytest.mark.parametrize("simulate_clicks", [pbm_clicks, cascade_clicks, dcm_clicks])
def test_flat_layout_and_mask_match_the_padded_lists(simulate_clicks):
    labels = torch.tensor([[3, 0, 1, 2], [1, 4, 0, 0]])
    ranks = torch.tensor([[2, 1, 4, 3], [2, 1, 9, 9]])
    mask = torch.tensor([[True, True, True, True], [True, True, False, False]])
    dense = simulate_clicks(labels, ranks, mask=mask, noise=(0.3, 0.9))
    flat = simulate_clicks(labels[mask], ranks[mask], indexes=torch.tensor([5, 5, 5, 5, 2, 2]), noise=(0.3, 0.9))
    torch.testing.assert_close(flat.propensities, dense.propensities[mask])
    assert dense.propensities[~mask].eq(1).all() and dense.clicks[~mask].eq(0).all()


def test_the_generator_makes_draws_repeatable():
    labels, ranks = torch.randint(0, 5, (50, 8)), torch.arange(1, 9).expand(50, 8)
    for simulate_clicks in (pbm_clicks, cascade_clicks, dcm_clicks):
        first = simulate_clicks(labels, ranks, generator=torch.Generator().manual_seed(3)).clicks
        again = simulate_clicks(labels, ranks, generator=torch.Generator().manual_seed(3)).clicks
        assert torch.equal(first, again)


def test_dcm_with_per_rank_continuation():
    labels = torch.tensor([[4, 4, 4]])
    target = dcm_clicks(labels, torch.tensor([[1, 2, 3]]), continuation=torch.tensor([0.5, 0.25]), noise=(1.0, 1.0))
    torch.testing.assert_close(target.propensities, torch.tensor([[1.0, 0.5, 0.125]]))


def test_logged_ranks_dense_and_flat():
    scores = torch.tensor([[0.1, 0.7, 0.7, 0.3]])
    assert logged_ranks(scores).tolist() == [[4, 1, 2, 3]]
    flat = logged_ranks(torch.tensor([0.1, 5.0, 0.7, 0.3, 0.9]), indexes=torch.tensor([1, 0, 1, 1, 0]))
    assert flat.tolist() == [3, 1, 1, 2, 2]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: pbm_clicks(torch.tensor([[5, 0]]), torch.tensor([[1, 2]])), ValueError),  # label above max_label
        (lambda: cascade_clicks(torch.tensor([[1, 0]]), torch.tensor([[1, 1]])), ValueError),  # not a ranking
        (lambda: pbm_clicks(torch.tensor([[1, 0]]), torch.tensor([[1.0, 2.0]])), TypeError),  # float ranks
        (lambda: pbm_clicks(torch.tensor([[1, 0]]), torch.tensor([[1, 2]]), noise=(0.5, 0.1)), ValueError),
        (lambda: pbm_clicks(torch.tensor([[1, 0]]), torch.tensor([[1, 2]]), eta=-1.0), ValueError),
        (lambda: dcm_clicks(torch.tensor([[1, 0]]), torch.tensor([[1, 2]]), continuation=1.5), ValueError),
        (lambda: pbm_clicks([[1, 0]], torch.tensor([[1, 2]])), TypeError),
    ],
)
def test_bad_inputs_are_named(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("ranks", [[1, 1, 3, 4], [1, 2, 3, 6], [0, 1, 2, 3]])
def test_pbm_refuses_ranks_that_are_not_a_ranking_as_its_siblings_do(ranks):
    labels, shown = torch.tensor([[1, 2, 3, 0]]), torch.tensor([ranks])
    with pytest.raises(ValueError, match="ranks"):
        pbm_clicks(labels, shown)
    with pytest.raises(ValueError, match="ranks"):
        pbm_clicks(labels.reshape(-1), shown.reshape(-1), indexes=torch.zeros(4, dtype=torch.long))


@pytest.mark.parametrize("model", [pbm_clicks, cascade_clicks, dcm_clicks])
@pytest.mark.parametrize("max_label", [float("inf"), float("nan"), 0.0])
def test_a_top_grade_that_is_not_a_finite_positive_number_is_refused_naming_it(model, max_label):
    with pytest.raises(ValueError, match="max_label"):
        model(torch.tensor([[1, 0]]), torch.tensor([[1, 2]]), max_label=max_label)


@pytest.mark.parametrize("model", [pbm_clicks, cascade_clicks])
def test_a_large_top_grade_clicks_by_the_formula_without_overflow(model):
    # (2^y − 1)/(2^2000 − 1) is 1 at y = 2000, about 1/2 at 1999 and about 0 at 1000.
    sessions = 40_000
    labels = torch.tensor([1999.0, 1000.0, 2000.0]).expand(sessions, 3)
    ranks = torch.tensor([1, 2, 3]).expand(sessions, 3)
    options = {"eta": 0.0} if model is pbm_clicks else {}
    clicks = model(labels, ranks, noise=(0.0, 1.0), max_label=2000, generator=torch.Generator().manual_seed(0), **options).clicks
    assert abs(clicks[:, 0].mean().item() - 0.5) < 3 * 0.5 / sessions**0.5
    assert clicks[:, 1].sum() == 0
    if model is pbm_clicks:
        assert clicks[:, 2].all()


def test_logged_ranks_put_padding_after_a_real_item_scored_minus_infinity():
    # The padding comes before the −inf item in index order: a tie at −inf would rank it first.
    scores = torch.tensor([[0.2, 0.5, -torch.inf, 9.0]])
    mask = torch.tensor([[True, False, True, True]])
    assert logged_ranks(scores, mask=mask).tolist() == [[2, 4, 3, 1]]
    flat = logged_ranks(scores.reshape(-1), mask=mask.reshape(-1), indexes=torch.zeros(4, dtype=torch.long))
    assert flat.tolist() == [2, 4, 3, 1]


def test_logged_ranks_refuse_nan_scores_at_real_items_only():
    with pytest.raises(ValueError, match="scores"):
        logged_ranks(torch.tensor([[0.2, torch.nan, 0.5]]))
    with pytest.raises(ValueError, match="scores"):
        logged_ranks(torch.tensor([0.2, torch.nan, 0.5]), indexes=torch.tensor([0, 0, 1]))
    padded = logged_ranks(torch.tensor([[0.2, torch.nan, 0.5]]), mask=torch.tensor([[True, False, True]]))
    assert padded.tolist() == [[2, 3, 1]]
