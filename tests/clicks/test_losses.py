"""The IPS losses and metrics: their label twins on the inverse-propensity weights, unbiased in
expectation, the Clicks/labels type boundary, and the layout options of every loss."""

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.clicks import Clicks, ips_approx_ndcg_loss, ips_dcg, ips_lambda_loss, ips_ndcg, ips_neural_ndcg_loss
from torch_ndcg.clicks import cascade_clicks, ips_softmax_loss, pbm_clicks

LOSSES = {
    ips_softmax_loss: (tn.softmax_loss, lambda w, mask: w.masked_fill(~mask, 0).sum(-1)),
    ips_neural_ndcg_loss: (tn.neural_ndcg_loss, lambda w, mask: tn.idcg(w, mask=mask, gain="linear", reduction="none")),
    ips_approx_ndcg_loss: (tn.approx_ndcg_loss, lambda w, mask: tn.idcg(w, mask=mask, gain="linear", reduction="none")),
    ips_lambda_loss: (tn.lambda_loss, lambda w, mask: tn.idcg(w, mask=mask, gain="linear", reduction="none")),
}


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(5, 7, generator=g, dtype=torch.float64)
    clicks = (torch.rand(5, 7, generator=g) < 0.4).double()
    clicks[2] = 0  # a list without a click: empty
    propensities = 1 / torch.arange(1, 8, dtype=torch.float64).expand(5, 7)
    mask = torch.ones(5, 7, dtype=torch.bool)
    mask[1, 5:] = False
    return scores, Clicks(clicks, propensities), mask


@pytest.mark.parametrize("loss", LOSSES)
def test_each_loss_is_its_twin_on_the_weights_times_the_normaliser(loss):
    twin, normaliser = LOSSES[loss]
    scores, target, mask = batch()
    weights = torch.where(mask & (target.clicks > 0), target.clicks / target.propensities, 0.0)
    expected = twin(scores, weights, mask=mask, gain="linear", reduction="none")
    got = loss(scores, target, mask=mask, self_normalised=True, reduction="none")
    torch.testing.assert_close(got, expected, equal_nan=True)
    unbiased = loss(scores, target, mask=mask, reduction="none")
    torch.testing.assert_close(unbiased, expected * normaliser(weights, mask), equal_nan=True)
    assert unbiased[2].isnan()  # the list without a click is skipped
    torch.testing.assert_close(loss(scores, target, mask=mask), unbiased.nanmean())


@pytest.mark.parametrize("loss", LOSSES)
def test_flat_layout_matches_the_padded_lists(loss):
    scores, target, mask = batch(1)
    ids = torch.arange(5)[:, None].expand(5, 7)
    padded = loss(scores, target, mask=mask, reduction="none")
    flat_target = Clicks(target.clicks[mask], target.propensities[mask])
    flat = loss(scores[mask], flat_target, indexes=ids[mask] * 3, reduction="none")
    torch.testing.assert_close(flat, padded, equal_nan=True)


@pytest.mark.parametrize("loss", LOSSES)
def test_gradients_flow_to_real_items_only(loss):
    scores, target, mask = batch(2)
    scores.requires_grad_(True)
    loss(scores, target, mask=mask).backward()
    assert scores.grad[~mask].eq(0).all() and scores.grad[2].eq(0).all() and scores.grad.abs().sum() > 0


@pytest.mark.parametrize("loss", LOSSES)
def test_empty_and_reduction_options(loss):
    scores, target, mask = batch(3)
    assert loss(scores, target, mask=mask, empty="zero", reduction="none")[2] == 0
    with pytest.raises(ValueError, match="empty"):
        loss(scores, target, mask=mask, empty="error")
    total = loss(scores, target, mask=mask, reduction="sum")
    torch.testing.assert_close(total, loss(scores, target, mask=mask, reduction="none").nansum())


def test_clip_floors_the_propensities():
    scores, target, mask = batch(4)
    clipped = ips_softmax_loss(scores, target, clip=0.5, reduction="none")
    floored = Clicks(target.clicks, target.propensities.clamp(min=0.5))
    torch.testing.assert_close(clipped, ips_softmax_loss(scores, floored, reduction="none"), equal_nan=True)


def test_ips_estimate_is_unbiased_for_the_examined_click_probabilities():
    # E[IDCG_w − DCG_w] over clicks is not IDCG_γ − DCG_γ (the IDCG is not linear), but the DCG part
    # is: E[DCG_w] = DCG_γ, checked through the metric ips_dcg over 200,000 PBM sessions.
    labels = torch.tensor([[3, 0, 1, 4, 2]])
    ranks = torch.tensor([[2, 5, 1, 3, 4]])
    sessions = 200_000
    target = pbm_clicks(labels.expand(sessions, 5), ranks.expand(sessions, 5), generator=torch.Generator().manual_seed(0))
    new_scores = torch.tensor([[0.5, 0.1, 0.2, 0.9, 0.4]]).expand(sessions, 5)
    estimate = ips_dcg(new_scores, target, k=3, reduction="none")
    gamma = 0.1 + 0.9 * (2.0 ** labels - 1) / 15
    truth = tn.dcg(new_scores[:1], gamma, k=3, gain="linear")
    error = (estimate.mean() - truth).abs()
    assert error < 3 * estimate.std() / sessions**0.5, (estimate.mean().item(), truth.item())


def test_ips_ndcg_is_the_ndcg_of_the_weights():
    scores, target, mask = batch(5)
    weights = torch.where(mask & (target.clicks > 0), target.clicks / target.propensities, 0.0)
    torch.testing.assert_close(ips_ndcg(scores, target, 3, mask=mask), tn.ndcg(scores, weights, 3, mask=mask, gain="linear"))
    torch.testing.assert_close(ips_dcg(scores, target, mask=mask, reduction="none"),
                               tn.dcg(scores, weights, mask=mask, gain="linear", reduction="none"))


@pytest.mark.parametrize("loss", [*LOSSES, ips_dcg, ips_ndcg])
def test_a_label_tensor_is_a_type_error(loss):
    scores, target, _ = batch()
    with pytest.raises(TypeError, match="Clicks"):
        loss(scores, target.clicks)


@pytest.mark.parametrize("label_loss", [tn.softmax_loss, tn.listnet_loss, tn.listmle_loss, tn.neural_ndcg_loss,
                                        tn.approx_ndcg_loss, tn.lambda_loss, tn.ranknet_loss, tn.ndcg])
def test_a_clicks_target_given_to_a_label_loss_is_a_type_error(label_loss):
    scores, target, _ = batch()
    with pytest.raises(TypeError, match="torch_ndcg.clicks"):
        label_loss(scores, target)
    with pytest.raises(TypeError, match="torch_ndcg.clicks"):
        label_loss(scores.reshape(-1), Clicks(target.clicks.reshape(-1), target.propensities.reshape(-1)),
                   indexes=torch.arange(5).repeat_interleave(7))


def test_bad_click_values_are_named():
    scores = torch.zeros(1, 3)
    with pytest.raises(ValueError, match="propensities"):
        ips_softmax_loss(scores, Clicks(torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([[0.0, 1.0, 1.0]])))
    with pytest.raises(ValueError, match="clicks"):
        ips_softmax_loss(scores, Clicks(torch.tensor([[-1.0, 0.0, 0.0]]), torch.ones(1, 3)))
    with pytest.raises(ValueError, match="shape"):
        ips_softmax_loss(scores, Clicks(torch.ones(1, 2), torch.ones(1, 2)))
    with pytest.raises(ValueError, match="clip"):
        ips_softmax_loss(scores, Clicks(torch.ones(1, 3), torch.ones(1, 3)), clip=0.0)
    with pytest.raises(ValueError):
        Clicks(torch.ones(1, 3), torch.ones(1, 2))
    with pytest.raises(TypeError):
        Clicks(torch.ones(1, 3), torch.ones(1, 3, dtype=torch.long))


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
def test_compiles_to_the_eager_values(dynamic):
    scores, target, mask = batch(6)
    for loss in (ips_softmax_loss, ips_approx_ndcg_loss):
        compiled = torch.compile(loss, dynamic=dynamic, fullgraph=False)
        torch.testing.assert_close(compiled(scores, target, mask=mask, validate=False),
                                   loss(scores, target, mask=mask, validate=False))


def test_ips_lambda_loss_estimates_the_sum_of_single_item_losses_not_its_label_twin():
    # Cascade clicks (one per list): the mean IPS LambdaLoss over sessions is Σᵢ γᵢ·lambda_loss(s, eᵢ),
    # which is far from the twin IDCG_γ · lambda_loss(s, γ). Labels ≤ 3: every item has a propensity > 0.
    sessions = 200_000
    labels, ranks = torch.tensor([1, 3, 0, 2, 3, 0]), torch.tensor([3, 1, 5, 2, 4, 6])
    scores = torch.tensor([0.3, -0.5, 1.2, 0.1, -1.0, 0.4], dtype=torch.float64)
    logged = cascade_clicks(labels.expand(sessions, 6), ranks.expand(sessions, 6), generator=torch.Generator().manual_seed(0))
    target = Clicks(logged.clicks.double(), logged.propensities.double())
    values = ips_lambda_loss(scores.expand(sessions, 6), target, empty="zero", reduction="none")
    mean, error = values.mean(), values.std() / sessions**0.5
    gamma = 0.1 + 0.9 * (2.0 ** labels.double() - 1) / 15
    alone = torch.eye(6, dtype=torch.float64)
    estimated = sum(gamma[i] * tn.lambda_loss(scores[None], alone[i][None]) for i in range(6))
    twin = tn.idcg(gamma[None], gain="linear") * tn.lambda_loss(scores[None], gamma[None], gain="linear")
    assert abs(mean - estimated) < 4 * error
    assert abs(mean - twin) > 50 * error


@pytest.mark.parametrize("loss", [*LOSSES, ips_dcg, ips_ndcg])
def test_masked_items_are_ignored_in_both_layouts(loss):
    scores, target, mask = batch()
    # Values no real item may hold, at the masked items only: a negative click, a zero propensity.
    clicks = target.clicks.masked_fill(~mask, -1.0)
    propensities = target.propensities.masked_fill(~mask, 0.0)
    dirty = Clicks(clicks, propensities)
    dense = loss(scores, dirty, mask=mask, reduction="sum")
    torch.testing.assert_close(dense, loss(scores, target, mask=mask, reduction="sum"))
    flat = loss(scores.reshape(-1), Clicks(clicks.reshape(-1), propensities.reshape(-1)), mask=mask.reshape(-1),
                indexes=torch.arange(5).repeat_interleave(7), reduction="sum")  # fmt: skip
    torch.testing.assert_close(flat, dense)


@pytest.mark.parametrize("loss", [*LOSSES, ips_dcg])
def test_an_infinite_clip_is_refused_naming_it(loss):
    scores, target, _ = batch()
    with pytest.raises(ValueError, match="clip"):
        loss(scores, target, clip=float("inf"))
