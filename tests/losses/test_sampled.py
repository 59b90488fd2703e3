"""The sampled losses (``tn.sampled``): what each one equals in the cases with a known answer (the
whole catalogue as the sample, hand formulas), what the corrected estimators estimate (Monte
Carlo over the sampler), masks and accidental hits, the checks at the boundary, and
``torch.compile`` / ``torch.export`` / ``torch.func``."""

from __future__ import annotations

import math

import pytest
import torch
from torch.func import grad, vmap

import torch_ndcg as tn
from torch_ndcg.losses.sampled import (
    SampledLists,
    bpr_loss,
    gbce_beta,
    gbce_loss,
    in_batch_softmax_loss,
    sampled_ndcg_loss,
    sampled_softmax_loss,
)

F64 = torch.float64


def _catalogue(batch: int = 3, items: int = 12, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores of a whole catalogue ``[B, N]`` and each query's positive item ``[B]``."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch, items, dtype=F64, generator=gen), torch.randint(0, items, (batch,), generator=gen)


def _whole_catalogue_table(scores: torch.Tensor, positive: torch.Tensor) -> torch.Tensor:
    """``[B, N]``: the positive first, then every other item once."""
    order = torch.stack([torch.cat([p[None], torch.tensor([i for i in range(scores.shape[1]) if i != p])]) for p in positive])
    return scores.gather(1, order)


def _draw(scores: torch.Tensor, positive: torch.Tensor, q: torch.Tensor, m: int, gen: torch.Generator):
    """``m`` negatives per query drawn with replacement from ``q`` (0 at the positive)."""
    probabilities = q.expand(scores.shape).clone()
    probabilities[torch.arange(scores.shape[0]), positive] = 0
    probabilities = probabilities / probabilities.sum(-1, keepdim=True)
    drawn = torch.multinomial(probabilities, m, replacement=True, generator=gen)
    return scores.gather(1, drawn), probabilities.gather(1, drawn).log()


# --- what each loss equals -----------------------------------------------------------------------


def test_sampled_softmax_over_the_whole_catalogue_with_unit_weights_is_the_full_softmax():
    scores, positive = _catalogue()
    table = _whole_catalogue_table(scores, positive)
    m = table.shape[1] - 1
    # Each other item drawn once: q = 1/m, so log(m·q) = 0 and the correction changes nothing.
    lists = SampledLists.from_table(table, log_q=torch.full((m + 1,), -math.log(m), dtype=F64))
    full = tn.softmax_loss(scores, torch.nn.functional.one_hot(positive, scores.shape[1]).to(F64))
    torch.testing.assert_close(sampled_softmax_loss(lists), full)
    torch.testing.assert_close(sampled_softmax_loss(SampledLists.from_table(table)), full)


def test_logq_correction_subtracts_log_q_so_the_sampled_loss_estimates_the_full_softmax():
    """Popularity sampling: with ``s_j − log(m·q_j)`` the corrected loss approaches the full
    softmax's as ``m`` grows; adding ``log q`` (the sign bug) or omitting it stays far off."""
    scores, positive = _catalogue(batch=4, items=50, seed=1)
    gen = torch.Generator().manual_seed(2)
    popularity = torch.rand(50, dtype=F64, generator=gen) ** 4 + 1e-3
    q = popularity / popularity.sum()
    full = tn.softmax_loss(scores, torch.nn.functional.one_hot(positive, 50).to(F64))
    negatives, log_q = _draw(scores, positive, q, 200_000, gen)
    positives = scores.gather(1, positive[:, None])[:, 0]
    corrected = sampled_softmax_loss(SampledLists(positives, negatives, negative_log_q=log_q))
    flipped = sampled_softmax_loss(SampledLists(positives, negatives - 2 * log_q, negative_log_q=log_q))
    plain = sampled_softmax_loss(SampledLists(positives, negatives))
    assert abs(corrected - full) < 0.01
    assert abs(flipped - full) > 0.5 and abs(plain - full) > 0.5


def test_in_batch_softmax_is_cross_entropy_of_the_query_item_scores():
    gen = torch.Generator().manual_seed(0)
    queries, items = torch.randn(4, 3, dtype=F64, generator=gen), torch.randn(6, 3, dtype=F64, generator=gen)
    expected = torch.nn.functional.cross_entropy(queries @ items.T / 0.5, torch.arange(4))
    torch.testing.assert_close(in_batch_softmax_loss(queries, items, temperature=0.5), expected)


def test_in_batch_log_q_is_subtracted_from_every_column_positives_included():
    gen = torch.Generator().manual_seed(0)
    queries, items = torch.randn(4, 3, dtype=F64, generator=gen), torch.randn(4, 3, dtype=F64, generator=gen)
    log_q = torch.log(torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=F64))
    expected = torch.nn.functional.cross_entropy(queries @ items.T - log_q, torch.arange(4))  # Yi et al.'s s − log p
    torch.testing.assert_close(in_batch_softmax_loss(queries, items, log_q=log_q), expected)


def test_in_batch_duplicate_items_are_accidental_hits_not_negatives():
    gen = torch.Generator().manual_seed(0)
    queries, items = torch.randn(3, 2, dtype=F64, generator=gen), torch.randn(3, 2, dtype=F64, generator=gen)
    items = items.clone().requires_grad_()
    ids = torch.tensor([7, 8, 7])  # queries 0 and 2 share their positive item
    loss = in_batch_softmax_loss(queries, items, item_ids=ids, reduction="none")
    logits = queries @ items.detach().T
    # Query 0 against items 0 (positive) and 1; item 2 is the same item 7, not a negative of it.
    expected0 = torch.nn.functional.cross_entropy(logits[0:1, :2], torch.tensor([0]))
    torch.testing.assert_close(loss[0], expected0)
    (gradient,) = torch.autograd.grad(loss[0], items)
    assert torch.equal(gradient[2], torch.zeros(2, dtype=F64))


def test_table_accidental_hit_is_the_column_left_out_with_zero_gradient():
    table = torch.tensor([[1.0, 2.0, 0.5, -1.0]], dtype=F64, requires_grad=True)
    ids = torch.tensor([[4, 9, 4, 3]])
    for loss in (sampled_softmax_loss, bpr_loss, sampled_ndcg_loss):
        value = loss(SampledLists.from_table(table, ids=ids))
        kept = table.detach()[:, [0, 1, 3]]
        torch.testing.assert_close(value, loss(SampledLists.from_table(kept)))
        (gradient,) = torch.autograd.grad(value, table)
        assert gradient[0, 2] == 0


def test_bpr_is_the_mean_softplus_of_the_score_differences():
    positives = torch.tensor([[1.0, 0.0], [2.0, 0.5]], dtype=F64)
    negatives = torch.tensor([[0.5, 1.5, -1.0], [0.0, 3.0, 1.0]], dtype=F64)
    expected = torch.nn.functional.softplus(negatives[:, None, :] - positives[:, :, None]).mean((1, 2)).mean()
    torch.testing.assert_close(bpr_loss(SampledLists(positives, negatives)), expected)


def test_gbce_beta_is_the_papers_formula_and_t_zero_is_plain_binary_cross_entropy():
    alpha = 10 / 99
    assert gbce_beta(10, 100, 0.75) == pytest.approx(alpha * (0.75 * (1 - 1 / alpha) + 1 / alpha))
    assert gbce_beta(10, 100, 1.0) == pytest.approx(alpha)
    positives, negatives = torch.tensor([1.5, -0.5], dtype=F64), torch.randn(2, 10, dtype=F64)
    lists = SampledLists(positives, negatives)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    expected = (bce(positives, torch.ones(2, dtype=F64), reduction="none")
                + bce(negatives, torch.zeros_like(negatives), reduction="none").sum(-1)).mean()  # fmt: skip
    torch.testing.assert_close(gbce_loss(lists, catalogue_size=100, calibration=0.0), expected)
    beta = gbce_beta(10, 100, 0.75)
    calibrated = gbce_loss(lists, catalogue_size=100, calibration=0.75, reduction="none")
    torch.testing.assert_close(calibrated, beta * -torch.nn.functional.logsigmoid(positives)
                               + torch.nn.functional.softplus(negatives).sum(-1))  # fmt: skip


def test_sampled_ndcg_over_the_whole_catalogue_is_approx_ndcg():
    """Every non-positive item drawn once with ``q = 1/m``: the weights are 1 and the estimate is
    ApproxNDCG over the whole catalogue (graded positives, cutoff, exp2 gain)."""
    scores, _ = _catalogue(batch=2, items=10, seed=3)
    relevance = torch.zeros(2, 10, dtype=F64)
    relevance[0, [1, 4, 6]] = torch.tensor([2.0, 1.0, 1.0], dtype=F64)
    relevance[1, [0, 2, 9]] = torch.tensor([1.0, 3.0, 1.0], dtype=F64)
    positives = torch.full((2, 3), 0.0, dtype=F64)
    positive_relevance = torch.zeros(2, 3, dtype=F64)
    positive_mask = torch.zeros(2, 3, dtype=torch.bool)
    negatives = []
    for b in range(2):
        where = relevance[b].nonzero()[:, 0]
        positives[b, : len(where)] = scores[b, where]
        positive_relevance[b, : len(where)] = relevance[b, where]
        positive_mask[b, : len(where)] = True
        negatives.append(scores[b, relevance[b] == 0][:7])
    negatives = torch.stack(negatives)
    log_q = torch.full((7,), -math.log(7), dtype=F64)
    lists = SampledLists(positives, negatives, negative_log_q=log_q, positive_mask=positive_mask,
                         positive_relevance=positive_relevance)  # fmt: skip
    for k in (None, 2):
        expected = tn.approx_ndcg_loss(scores, relevance, k, gain="exp2", temperature=0.7, reduction="none")
        got = sampled_ndcg_loss(lists, k, gain="exp2", temperature=0.7, reduction="none")
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("sampler", ["uniform", "popularity"])
def test_sampled_ndcg_rank_estimate_is_unbiased_for_the_whole_catalogue_smooth_rank(sampler):
    """With the discount ``r ↦ r`` and one positive of relevance 1 the loss is ``1 − r̂``: its mean
    over many independent samples is ``1 −`` ApproxNDCG's smooth rank over the whole catalogue."""
    scores, positive = _catalogue(batch=3, items=40, seed=4)
    gen = torch.Generator().manual_seed(5)
    q = torch.ones(40, dtype=F64) if sampler == "uniform" else torch.rand(40, dtype=F64, generator=gen) + 0.05
    tau, draws, m = 0.5, 4000, 5
    positives = scores.gather(1, positive[:, None])[:, 0]
    others = torch.ones_like(scores, dtype=torch.bool)
    others[torch.arange(3), positive] = False
    full_rank = 1 + torch.where(others, torch.sigmoid((scores - positives[:, None]) / tau), 0.0).sum(-1)
    negatives, log_q = _draw(scores.repeat(draws, 1), positive.repeat(draws), q, m, gen)
    lists = SampledLists(positives.repeat(draws), negatives, negative_log_q=log_q)
    estimate = 1 - sampled_ndcg_loss(lists, temperature=tau, discount=lambda r: r, reduction="none")
    mean = estimate.reshape(draws, 3).mean(0)
    spread = estimate.reshape(draws, 3).std(0) / math.sqrt(draws)
    assert torch.all((mean - full_rank).abs() < 4 * spread), (mean, full_rank, spread)
    # Without the weights the rank is among the sample alone: far below the catalogue's.
    plain = 1 - sampled_ndcg_loss(SampledLists(positives.repeat(draws), negatives), temperature=tau,
                                  discount=lambda r: r, reduction="none")  # fmt: skip
    assert torch.all(plain.reshape(draws, 3).mean(0) < full_rank - 4)


def test_sampled_ndcg_cutoff_leaves_positives_far_below_k_without_gradient_and_no_cutoff_does_not():
    """The documented limit: the soft cutoff is in ranks, so positives estimated ~800 ranks down
    (a random start in a 1,600-item catalogue, 100 draws weighted 16) get no gradient at k = 10."""
    gen = torch.Generator().manual_seed(0)
    positives = torch.randn(4, 20, generator=gen, dtype=F64, requires_grad=True)
    negatives = torch.randn(4, 100, generator=gen, dtype=F64)
    lists = SampledLists(positives, negatives, negative_log_q=torch.full((100,), -math.log(1600), dtype=F64))
    cut = torch.autograd.grad(sampled_ndcg_loss(lists, 10, temperature=1.0), positives)[0]
    whole = torch.autograd.grad(sampled_ndcg_loss(lists, None, temperature=1.0), positives)[0]
    assert cut.abs().max() < 1e-12, cut.abs().max()
    assert whole.abs().min() > 1e-6, whole.abs().min()  # every positive moves, however far down


# --- masks, reductions, dtypes -------------------------------------------------------------------

LOSSES = {
    "sampled_softmax_loss": lambda lists: sampled_softmax_loss(lists, temperature=0.5),
    "bpr_loss": bpr_loss,
    "gbce_loss": lambda lists: gbce_loss(lists, catalogue_size=100),
    "sampled_ndcg_loss": lambda lists: sampled_ndcg_loss(lists, 2, temperature=0.5),
}


def _lists(dtype=F64, seed=0) -> SampledLists:
    gen = torch.Generator().manual_seed(seed)
    positives = torch.randn(3, 2, dtype=dtype, generator=gen)
    negatives = torch.randn(3, 5, dtype=dtype, generator=gen)
    positive_mask = torch.tensor([[True, True], [True, False], [False, False]])
    negative_mask = torch.rand(3, 5, generator=gen) > 0.3
    return SampledLists(positives, negatives, positive_mask=positive_mask, negative_mask=negative_mask)


@pytest.mark.parametrize("name", list(LOSSES))
def test_masked_positives_and_negatives_take_no_part_and_get_zero_gradient(name):
    lists = _lists()
    positives = lists.positive_scores.clone().requires_grad_()
    negatives = lists.negative_scores.clone().requires_grad_()
    value = LOSSES[name](lists._replace(positive_scores=positives, negative_scores=negatives))
    # Garbage at the masked places (NaN, inf, anything) changes nothing, and gets zero gradient.
    for fill in (1e3, math.nan, -math.inf):
        garbage_positives = torch.where(lists.positive_mask, lists.positive_scores, fill).requires_grad_()
        garbage_negatives = torch.where(lists.negative_mask, lists.negative_scores, fill).requires_grad_()
        garbage = LOSSES[name](lists._replace(positive_scores=garbage_positives, negative_scores=garbage_negatives))
        torch.testing.assert_close(garbage, value.detach())
        for gradient in torch.autograd.grad(garbage, (garbage_positives, garbage_negatives)):
            assert torch.isfinite(gradient).all()
    value.backward()
    assert torch.all(positives.grad[~lists.positive_mask] == 0)
    assert torch.all(negatives.grad[~lists.negative_mask] == 0)
    # The query with no real positive is left out of the mean.
    per_query = {"sampled_ndcg_loss": lambda l: sampled_ndcg_loss(l, 2, temperature=0.5, reduction="none"),
                 "gbce_loss": lambda l: gbce_loss(l, catalogue_size=100, reduction="none")}.get(
        name, lambda l: globals()[name](l, reduction="none") if name != "sampled_softmax_loss"
        else sampled_softmax_loss(l, temperature=0.5, reduction="none"))  # fmt: skip
    values = per_query(lists)
    assert torch.isnan(values[2]) and torch.isfinite(values[:2]).all()
    torch.testing.assert_close(value.detach(), values[:2].mean())


@pytest.mark.parametrize("name", list(LOSSES))
def test_float32_and_float64_agree_and_keep_their_dtype(name):
    high = LOSSES[name](_lists(F64))
    low = LOSSES[name](_lists(torch.float32))
    assert high.dtype == F64 and low.dtype == torch.float32
    torch.testing.assert_close(low.double(), high, rtol=1e-5, atol=1e-6)


def test_shared_negatives_equal_the_same_negatives_repeated_per_query():
    positives, shared = torch.randn(3, dtype=F64), torch.randn(4, dtype=F64)
    log_q = torch.log(torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=F64))
    for loss in (sampled_softmax_loss, sampled_ndcg_loss):
        torch.testing.assert_close(
            loss(SampledLists(positives, shared, negative_log_q=log_q)),
            loss(SampledLists(positives, shared.expand(3, 4), negative_log_q=log_q.expand(3, 4))),
        )


# --- the boundary --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lists, match",
    [
        (SampledLists(torch.zeros(3), torch.zeros(2, 4)), "negative_scores must be"),
        (SampledLists(torch.zeros(3), torch.zeros(3, 4), negative_log_q=torch.zeros(5)), "negative_log_q must have shape"),
        (SampledLists(torch.zeros(3), torch.zeros(3, 4), negative_log_q=torch.full((4,), 0.25)), "log-probabilities"),
        # 1/q would overflow float32: the importance weights of the sampled NDCG would be inf.
        (SampledLists(torch.zeros(3), torch.zeros(3, 4), negative_log_q=torch.full((4,), -1e3)), "1/q is finite"),
        (SampledLists(torch.zeros(3), torch.zeros(3, 4), negative_mask=torch.ones(3, 4)), "bool"),
        (SampledLists(torch.tensor([0.0, math.nan, 0.0]), torch.zeros(3, 4)), "positive_scores must be finite"),
        (SampledLists(torch.zeros(3, dtype=torch.long), torch.zeros(3, 4)), "floating point"),
    ],
)
def test_bad_lists_are_refused_naming_the_field(lists, match):
    with pytest.raises((ValueError, TypeError), match=match):
        sampled_softmax_loss(lists)


def test_bad_options_are_refused_naming_the_option():
    lists = _lists()
    with pytest.raises(ValueError, match="temperature"):
        sampled_softmax_loss(lists, temperature=0.0)
    with pytest.raises(ValueError, match="catalogue_size"):
        gbce_loss(lists, catalogue_size=5)
    with pytest.raises(ValueError, match="calibration"):
        gbce_loss(lists, catalogue_size=100, calibration=1.5)
    with pytest.raises(ValueError, match="no logQ correction"):
        bpr_loss(lists._replace(negative_log_q=torch.full((5,), -2.0, dtype=F64)))
    with pytest.raises(TypeError, match="SampledLists"):
        sampled_softmax_loss((torch.zeros(3), torch.zeros(3, 4)))
    with pytest.raises(ValueError, match="offset"):
        SampledLists.in_batch(torch.zeros(3, 2), torch.zeros(3, 2), offset=1)


# --- compile, export, torch.func -----------------------------------------------------------------


@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _value_and_grads(loss, positives, negatives, log_q):
    positives, negatives = positives.clone().requires_grad_(), negatives.clone().requires_grad_()
    value = loss(positives, negatives, log_q)
    return (value.detach(), *torch.autograd.grad(value, (positives, negatives)))


CORRECTED = {
    "sampled_softmax_loss": lambda p, n, q: sampled_softmax_loss(SampledLists(p, n, negative_log_q=q), temperature=0.5),
    "sampled_ndcg_loss": lambda p, n, q: sampled_ndcg_loss(SampledLists(p, n, negative_log_q=q), 2, temperature=0.5),
    "bpr_loss": lambda p, n, q: bpr_loss(SampledLists(p, n)),
    "gbce_loss": lambda p, n, q: gbce_loss(SampledLists(p, n), catalogue_size=50),
}


@pytest.mark.usefixtures("fresh_dynamo")
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", list(CORRECTED))
def test_compiles_as_one_graph_and_equals_eager(name, dynamic):
    loss = CORRECTED[name]
    gen = torch.Generator().manual_seed(0)
    args = (torch.randn(3, 2, dtype=F64, generator=gen), torch.randn(3, 6, dtype=F64, generator=gen),
            torch.log(torch.rand(6, dtype=F64, generator=gen) / 6))  # fmt: skip
    compiled = torch.compile(loss, backend="aot_eager", fullgraph=True, dynamic=dynamic)
    for got, want in zip(_value_and_grads(compiled, *args), _value_and_grads(loss, *args)):
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.usefixtures("fresh_dynamo")
def test_in_batch_softmax_compiles_as_one_graph_and_equals_eager():
    gen = torch.Generator().manual_seed(0)
    queries, items = torch.randn(4, 3, dtype=F64, generator=gen), torch.randn(5, 3, dtype=F64, generator=gen)
    ids, log_q = torch.tensor([1, 2, 1, 3, 4]), torch.log(torch.full((5,), 0.2, dtype=F64))

    def loss(queries, items):
        return in_batch_softmax_loss(queries, items, item_ids=ids, log_q=log_q, temperature=0.1)

    compiled = torch.compile(loss, backend="aot_eager", fullgraph=True, dynamic=True)
    torch.testing.assert_close(compiled(queries, items), loss(queries, items), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", list(CORRECTED))
def test_exports_and_equals_eager(name):
    loss = CORRECTED[name]

    class Model(torch.nn.Module):
        def forward(self, positives, negatives, log_q):
            return loss(positives, negatives, log_q)

    gen = torch.Generator().manual_seed(1)
    args = (torch.randn(3, 2, dtype=F64, generator=gen), torch.randn(3, 6, dtype=F64, generator=gen),
            torch.log(torch.rand(6, dtype=F64, generator=gen) / 6))  # fmt: skip
    exported = torch.export.export(Model(), args)
    torch.testing.assert_close(exported.module()(*args), loss(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(CORRECTED))
def test_torch_func_grad_equals_autograd_and_vmap_equals_the_loop(name):
    loss = CORRECTED[name]
    gen = torch.Generator().manual_seed(2)
    positives, negatives = torch.randn(4, 3, 2, dtype=F64, generator=gen), torch.randn(4, 3, 6, dtype=F64, generator=gen)
    log_q = torch.log(torch.rand(6, dtype=F64, generator=gen) / 6)
    _, want_p, want_n = _value_and_grads(loss, positives[0], negatives[0], log_q)
    got_p, got_n = grad(loss, argnums=(0, 1))(positives[0], negatives[0], log_q)
    torch.testing.assert_close(got_p, want_p)
    torch.testing.assert_close(got_n, want_n)
    batched = vmap(loss, in_dims=(0, 0, None))(positives, negatives, log_q)
    torch.testing.assert_close(batched, torch.stack([loss(p, n, log_q) for p, n in zip(positives, negatives)]))


def test_value_checks_still_refuse_bad_input_under_vmap_and_compile():
    bad = torch.full((6,), 0.5, dtype=F64)  # probabilities passed where log-probabilities belong
    positives, negatives = torch.zeros(2, 3, 2, dtype=F64), torch.zeros(2, 3, 6, dtype=F64)
    loss = CORRECTED["sampled_softmax_loss"]
    with pytest.raises(ValueError, match="log-probabilities"):
        vmap(loss, in_dims=(0, 0, None))(positives, negatives, bad)
    torch._dynamo.reset()
    with pytest.raises(ValueError, match="log-probabilities"):
        torch.compile(loss, backend="aot_eager", fullgraph=True)(positives[0], negatives[0], bad)


def test_in_batch_softmax_under_torch_func_and_export_equals_eager():
    gen = torch.Generator().manual_seed(3)
    queries, items = torch.randn(4, 3, dtype=F64, generator=gen), torch.randn(5, 3, dtype=F64, generator=gen)
    ids, log_q = torch.tensor([1, 2, 1, 3, 4]), torch.log(torch.full((5,), 0.2, dtype=F64))

    def loss(queries, items):
        return in_batch_softmax_loss(queries, items, item_ids=ids, log_q=log_q, temperature=0.1)

    leaves = queries.clone().requires_grad_(), items.clone().requires_grad_()
    want = torch.autograd.grad(loss(*leaves), leaves)
    for got, expected in zip(grad(loss, argnums=(0, 1))(queries, items), want):
        torch.testing.assert_close(got, expected)
    batched = vmap(loss)(queries.expand(2, 4, 3), items.expand(2, 5, 3))
    torch.testing.assert_close(batched, loss(queries, items).expand(2))

    class Model(torch.nn.Module):
        def forward(self, queries, items):
            return loss(queries, items)

    exported = torch.export.export(Model(), (queries, items))
    torch.testing.assert_close(exported.module()(queries, items), loss(queries, items), rtol=1e-12, atol=1e-12)
