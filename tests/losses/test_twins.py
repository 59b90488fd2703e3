"""Every metric's smooth twin: the metric written once over ranks is the exact metric on exact
ranks, each relaxation tends to it as τ → 0, the bound stays below it, the Gumbel form is the
mean over its samples, and the twins differentiate (twice), take flat lists and keep the
existing NDCG losses' values."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg import over_ranks

TWINS = {
    "ndcg": tn.ndcg_loss, "dcg": tn.dcg_loss, "mrr": tn.mrr_loss, "precision": tn.precision_loss,
    "recall": tn.recall_loss, "hit_rate": tn.hit_rate_loss, "average_precision": tn.average_precision_loss,
    "rbp": tn.rbp_loss,
}  # fmt: skip
NO_EMPTY = ("dcg", "rbp")  # no list is ever empty for them: no ``empty`` option


def _metric(name: str, per_list_loss: torch.Tensor) -> torch.Tensor:
    return -per_list_loss if name == "dcg" else 1 - per_list_loss


def _options(name: str, **options: object) -> dict:
    return options if name in NO_EMPTY else {"empty": "zero", **options}


def _distinct(batch: int = 6, length: int = 11, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Float64 scores at least 0.1 apart (a shuffled grid of step 0.5), labels 0–2 with one
    list of nothing relevant, and a mask of lists of different lengths."""
    gen = torch.Generator().manual_seed(seed)
    scores = torch.stack([torch.randperm(length, generator=gen) for _ in range(batch)]).double() * 0.5
    relevance = torch.randint(0, 3, (batch, length), generator=gen).double()
    relevance[0] = 0
    mask = torch.rand(batch, length, generator=gen) > 0.25
    mask[:, :3] = True
    return scores, relevance, mask


def _metric_options(name: str) -> list[dict]:
    """Every option of the metric that changes its value."""
    if name in ("ndcg", "dcg"):
        return [{}, {"gain": "exp2"}]
    if name == "precision":
        return [{}, {"adaptive_k": True}, {"threshold": 2.0}]
    if name == "average_precision":
        return [{"ap_normaliser": choice} for choice in ("min_r_k", "r", "found")]
    if name == "rbp":
        return [{}, {"persistence": 0.5}]
    return [{}, {"threshold": 2.0}]


@pytest.mark.parametrize("name", list(TWINS))
@pytest.mark.parametrize("k", [None, 3, 20])
def test_each_metric_over_exact_ranks_is_the_exact_metric(name, k):
    scores, relevance, mask = _distinct()
    metric = over_ranks.METRICS[name]
    for options in _metric_options(name):
        threshold = options.get("threshold")
        hits = (torch.where(mask, relevance, 0) >= threshold if threshold else (relevance > 0) & mask).double()
        gains = tn.exp2_gain(relevance) if options.get("gain") == "exp2" else relevance
        value = torch.where(mask, gains, 0) if metric.graded else hits
        ranking = over_ranks.exact_ranking(scores, mask, value, k, hits=hits)
        idcg = tn.idcg(relevance, k, mask=mask, reduction="none", gain=options.get("gain", "linear"))
        facts = over_ranks.ListFacts(hits.sum(-1), mask.sum(-1).double(), idcg)
        metric_options = {key: v for key, v in options.items() if key not in ("gain", "threshold")}
        values = metric.values(ranking, facts, over_ranks.MetricOptions(k=k, **metric_options))
        if metric.is_empty is not None:
            values = torch.where(metric.is_empty(facts), 0.0, values)
        exact = getattr(tn, name)(scores, relevance, k, mask=mask, reduction="none", **options)
        torch.testing.assert_close(values, exact, rtol=0, atol=1e-12)


SHARP = {
    "approx": tn.ApproxRanks(temperature=1e-3),
    "approx midway": tn.ApproxRanks(temperature=1e-3, cutoff="midway"),
    "neuralsort": tn.NeuralSortRows(temperature=1e-3),
    "sinkhorn": tn.SinkhornRows(temperature=1e-3, sinkhorn_iters=100),
    "sinkhorn dense": tn.SinkhornRows(temperature=1e-3, sinkhorn_iters=100, impl="dense"),
}


@pytest.mark.parametrize("relaxation", list(SHARP))
@pytest.mark.parametrize("name", list(TWINS))
@pytest.mark.parametrize("k", [None, 3])
def test_each_relaxation_tends_to_the_exact_metric_as_the_temperature_falls(relaxation, name, k):
    scores, relevance, mask = _distinct()
    for options in _metric_options(name):
        smooth = TWINS[name](
            scores, relevance, k, mask=mask, reduction="none", relaxation=SHARP[relaxation], **_options(name, **options)
        )
        exact = getattr(tn, name)(scores, relevance, k, mask=mask, reduction="none", **options)
        torch.testing.assert_close(_metric(name, smooth), exact, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["ndcg", "dcg", "mrr", "precision", "recall", "average_precision", "rbp"])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("cutoff", ["fixed", "midway"])
def test_the_bound_is_at_most_the_metric(name, k, cutoff):
    gen = torch.Generator().manual_seed(1)
    scores, relevance = torch.randn(20, 9, dtype=torch.float64, generator=gen), torch.randint(0, 3, (20, 9), generator=gen)
    for scale in (0.1, 1.0, 10.0):
        bound = TWINS[name](scores * scale, relevance, k, reduction="none", relaxation=tn.BoundRanks(cutoff=cutoff),
                            **_options(name))  # fmt: skip
        exact = getattr(tn, name)(scores, relevance, k, reduction="none")
        assert bool((_metric(name, bound) <= exact + 1e-12).all())


def test_the_bound_tightens_as_the_scores_scale_up_where_nothing_is_ranked_above():
    # The hinge max(0, s_j − s_i + 1) of an item below tends to 0 as the scores scale up, so the
    # top item's bound rank tends to 1; an item above adds at least 1 + its margin, which does
    # not vanish (the bound is loose below the top).
    scores = torch.tensor([[3.0, 1.0, 0.0, 2.0]], dtype=torch.float64)
    relevance = torch.tensor([[1, 0, 0, 0]])
    gaps = [1 - float(1 - tn.mrr_loss(scores * c, relevance, relaxation="bound")) for c in (0.25, 0.5, 1.0)]
    assert gaps[0] > gaps[1] > gaps[2] == 0.0


@pytest.mark.parametrize("inner", ["approx", "neuralsort"])
def test_the_gumbel_form_is_the_mean_over_its_perturbed_samples(inner):
    scores, relevance, mask = _distinct(batch=3, length=7)
    samples, beta = 5, 0.3
    noisy = tn.Gumbel(inner, samples=samples, beta=beta, generator=torch.Generator().manual_seed(7))
    value = tn.mrr_loss(scores, relevance, 3, mask=mask, reduction="none", relaxation=noisy, empty="zero")
    uniform = torch.rand((samples, *scores.shape), generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    gumbel = -torch.log(-torch.log(uniform))
    by_hand = torch.stack([
        tn.mrr_loss(torch.where(mask, scores + beta * g, 0), relevance, 3, mask=mask, reduction="none",
                    relaxation=inner, empty="zero")
        for g in gumbel
    ]).mean(0)  # fmt: skip
    torch.testing.assert_close(value, by_hand, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("impl", ["dense", "kernel", "streaming"])
def test_neural_ndcg_stochastic_is_the_gumbel_form_of_sinkhorn(impl):
    scores, relevance, mask = _distinct(batch=3, length=7)
    scores.requires_grad_(True)
    options = dict(temperature=0.5, sinkhorn_iters=10, impl=impl)
    before = tn.neural_ndcg_loss(scores, relevance, 3, mask=mask, reduction="none", stochastic=True, samples=4,
                                 generator=torch.Generator().manual_seed(3), empty="zero", **options)  # fmt: skip
    gumbel = tn.Gumbel(tn.SinkhornRows(**options), samples=4, generator=torch.Generator().manual_seed(3))
    twin = tn.ndcg_loss(scores, relevance, 3, mask=mask, reduction="none", relaxation=gumbel, empty="zero")
    assert torch.equal(twin, before)
    (grad_before,) = torch.autograd.grad(before.sum(), scores)
    (grad_twin,) = torch.autograd.grad(twin.sum(), scores)
    assert torch.equal(grad_twin, grad_before)


@pytest.mark.parametrize(
    ("existing", "relaxation"),
    [
        (lambda *a, **o: tn.approx_ndcg_loss(*a, temperature=0.5, **o), tn.ApproxRanks(temperature=0.5)),
        (lambda *a, **o: tn.approx_ndcg_loss(*a, impl="sorted", **o), tn.ApproxRanks(impl="sorted")),
        (tn.neuralsort_ndcg_loss, "neuralsort"),
        (tn.neural_ndcg_loss, "sinkhorn"),
    ],
    ids=["approx", "approx sorted", "neuralsort", "sinkhorn"],
)
@pytest.mark.parametrize("k", [None, 3])
def test_the_ndcg_twin_is_the_existing_ndcg_loss(existing, relaxation, k):
    gen = torch.Generator().manual_seed(2)
    scores = torch.randn(4, 9, generator=gen, requires_grad=True)
    relevance = torch.randint(0, 3, (4, 9), generator=gen)
    before = existing(scores, relevance, k)
    (grad_before,) = torch.autograd.grad(before, scores)
    twin = tn.ndcg_loss(scores, relevance, k, relaxation=relaxation)
    (grad_twin,) = torch.autograd.grad(twin, scores)
    torch.testing.assert_close(twin, before)
    torch.testing.assert_close(grad_twin, grad_before)


NDCG_LOSSES_AS_TWINS = {
    "approx dense": (tn.approx_ndcg_loss, {"impl": "dense"}, tn.ApproxRanks(impl="dense")),
    "approx streaming": (tn.approx_ndcg_loss, {"impl": "streaming"}, tn.ApproxRanks(impl="streaming")),
    "approx sorted": (tn.approx_ndcg_loss, {"impl": "sorted", "temperature": 0.05},
                      tn.ApproxRanks(impl="sorted", temperature=0.05)),
    "neuralsort auto": (tn.neuralsort_ndcg_loss, {}, tn.NeuralSortRows()),
    "neuralsort 0.5": (tn.neuralsort_ndcg_loss, {"temperature": 0.5}, tn.NeuralSortRows(temperature=0.5)),
    "sinkhorn dense": (tn.neural_ndcg_loss, {"impl": "dense"}, tn.SinkhornRows(impl="dense")),
    "sinkhorn kernel transposed": (tn.neural_ndcg_loss, {"impl": "kernel", "transposed": True},
                                   tn.SinkhornRows(impl="kernel", transposed=True)),
    "sinkhorn streaming": (tn.neural_ndcg_loss, {"impl": "streaming", "sinkhorn_iters": 4},
                           tn.SinkhornRows(impl="streaming", sinkhorn_iters=4)),
}  # fmt: skip


@pytest.mark.parametrize("case", list(NDCG_LOSSES_AS_TWINS))
@pytest.mark.parametrize("k", [None, 3])
def test_the_ndcg_losses_are_the_ndcg_twin_bit_for_bit(case, k):
    """One computation, not two that agree: every implementation of each NDCG loss gives its
    relaxation's NDCG twin exactly, value and gradient."""
    existing, options, relaxation = NDCG_LOSSES_AS_TWINS[case]
    scores, relevance, mask = _distinct(batch=4, length=40, seed=5)
    scores = (scores + 0.3 * torch.randn(scores.shape, dtype=scores.dtype, generator=torch.Generator().manual_seed(1)))
    scores.requires_grad_(True)
    before = existing(scores, relevance, k, mask=mask, reduction="none", empty="zero", **options)
    twin = tn.ndcg_loss(scores, relevance, k, mask=mask, reduction="none", empty="zero", relaxation=relaxation)
    assert torch.equal(twin, before)
    (grad_before,) = torch.autograd.grad(before.sum(), scores)
    (grad_twin,) = torch.autograd.grad(twin.sum(), scores)
    assert torch.equal(grad_twin, grad_before)


def test_sinkhorn_rows_stop_early_with_neural_ndcgs_tol():
    scores, relevance, mask = _distinct(batch=3, length=9, seed=2)
    options = dict(temperature=0.5, sinkhorn_iters=60, impl="kernel")
    loose = tn.neural_ndcg_loss(scores, relevance, mask=mask, reduction="none", empty="zero", tol=0.3, **options)
    twin = tn.ndcg_loss(scores, relevance, mask=mask, reduction="none", empty="zero",
                        relaxation=tn.SinkhornRows(tol=0.3, **options))  # fmt: skip
    assert torch.equal(twin, loose)
    every = tn.ndcg_loss(scores, relevance, mask=mask, reduction="none", empty="zero",
                         relaxation=tn.SinkhornRows(**options))  # fmt: skip
    assert not torch.allclose(twin, every, rtol=0, atol=1e-9)  # it did stop early
    with pytest.raises(ValueError, match=r"^tol \(early stopping\) needs impl='kernel'"):
        tn.SinkhornRows(impl="streaming", tol=1e-6)
    with pytest.raises(ValueError, match="tol=None"):
        tn.mrr_loss(scores, relevance, mask=mask, relaxation=tn.SinkhornRows(tol=1e-6))


# (cutoff="midway" is left out: its threshold carries no gradient, by design, as rax's.)
RELAXATIONS = {
    "approx": tn.ApproxRanks(temperature=0.5),
    "approx streaming": tn.ApproxRanks(temperature=0.5, impl="streaming"),
    "bound": "bound",
    "neuralsort": tn.NeuralSortRows(temperature=0.5),
    "sinkhorn": tn.SinkhornRows(temperature=0.5, sinkhorn_iters=5),
}


@pytest.mark.parametrize("relaxation", list(RELAXATIONS))
@pytest.mark.parametrize("name", list(TWINS))
def test_twins_pass_gradcheck_and_gradgradcheck(relaxation, name):
    scores, relevance, mask = _distinct(batch=3, length=5, seed=4)
    scores = (scores + 0.1 * torch.randn(scores.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))

    def fn(s):
        return TWINS[name](s, relevance, 2, mask=mask, relaxation=RELAXATIONS[relaxation], **_options(name))

    s = scores.clone().requires_grad_()
    assert torch.autograd.gradcheck(fn, (s,))
    assert torch.autograd.gradgradcheck(fn, (s,))


@pytest.mark.parametrize("relaxation", ["approx", "bound", "neuralsort", "sinkhorn"])
@pytest.mark.parametrize("name", list(TWINS))
def test_flat_lists_give_the_padded_values_and_gradients(relaxation, name):
    scores, relevance, mask = _distinct(batch=4, length=6, seed=5)
    ids = torch.arange(4)[:, None].expand(4, 6)
    padded_scores = scores.clone().requires_grad_()
    padded = TWINS[name](padded_scores, relevance, 2, mask=mask, relaxation=relaxation, **_options(name))
    flat_scores = scores[mask].clone().requires_grad_()
    flat = TWINS[name](flat_scores, relevance[mask], 2, indexes=ids[mask], relaxation=relaxation, **_options(name))
    torch.testing.assert_close(flat, padded)
    (grad_padded,) = torch.autograd.grad(padded, padded_scores)
    (grad_flat,) = torch.autograd.grad(flat, flat_scores)
    torch.testing.assert_close(grad_flat, grad_padded[mask])


@pytest.mark.parametrize("name", list(TWINS))
@pytest.mark.parametrize("relaxation", ["approx", "neuralsort"])
def test_float32_twins_agree_with_float64(name, relaxation):
    scores, relevance, mask = _distinct(batch=3, length=8, seed=6)
    single = TWINS[name](scores.float(), relevance.float(), 3, mask=mask, relaxation=relaxation, **_options(name))
    double = TWINS[name](scores, relevance, 3, mask=mask, relaxation=relaxation, **_options(name))
    assert single.dtype == torch.float32
    torch.testing.assert_close(single.double(), double, rtol=1e-5, atol=1e-5)


def test_a_relaxation_is_a_name_or_an_object():
    scores, relevance = torch.randn(2, 5), torch.randint(0, 2, (2, 5))
    with pytest.raises(ValueError, match="relaxation must be one of"):
        tn.mrr_loss(scores, relevance, relaxation="sigmoid")
    with pytest.raises(ValueError, match="Gumbel"):
        tn.Gumbel(tn.Gumbel())
    with pytest.raises(ValueError, match="cutoff"):
        tn.ApproxRanks(cutoff="half")
    with pytest.raises(ValueError, match="impl='sorted'"):
        tn.ApproxRanks(impl="sorted", cutoff="midway")
    with pytest.raises(ValueError, match="temperature"):
        tn.NeuralSortRows(temperature=0.0)
    with pytest.raises(ValueError, match="impl='dense'"):
        tn.mrr_loss(scores, relevance, relaxation=tn.SinkhornRows(impl="kernel"))
    with pytest.raises(ValueError, match="persistence"):
        tn.rbp_loss(scores, relevance, persistence=1.0)


def test_sinkhorn_paths_without_a_relevance_gradient_refuse_relevance_that_requires_grad():
    scores, relevance = torch.randn(2, 5), torch.rand(2, 5).requires_grad_()
    with pytest.raises(ValueError, match="relevance requires grad"):
        tn.ndcg_loss(scores, relevance, relaxation=tn.SinkhornRows(impl="kernel"))
    tn.ndcg_loss(scores, relevance, relaxation=tn.SinkhornRows(impl="dense")).backward()
    assert relevance.grad is not None


@pytest.mark.parametrize("relaxation", ["approx", "bound", tn.ApproxRanks(cutoff="midway")])
@pytest.mark.parametrize("name", ["precision", "recall", "hit_rate"])
@pytest.mark.parametrize("k", [5, 8])
def test_a_cutoff_at_or_past_the_list_length_leaves_the_loss_on_the_scores_graph(k, name, relaxation):
    # The per-item relaxations never cut lists no longer than k, so these metrics read no rank:
    # the loss is a constant with a zero gradient, and a training step on a batch of short lists
    # (MQ2008's, at k=10) must still run.
    scores, relevance, mask = _distinct(batch=3, length=5, seed=7)
    leaf = scores.clone().requires_grad_()
    TWINS[name](leaf, relevance, k, mask=mask, relaxation=relaxation, **_options(name)).backward()
    assert torch.equal(leaf.grad, torch.zeros_like(scores))

    def loss(s):
        return TWINS[name](s, relevance, k, mask=mask, relaxation=relaxation, validate=False, **_options(name))

    assert torch.equal(torch.func.grad(loss)(scores), torch.zeros_like(scores))
