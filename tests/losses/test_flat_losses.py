"""Every loss on flat items (``indexes=``) equals the same loss on the padded ``[Q, max n]`` form
of the same lists: values and gradients, every implementation and option, every ``empty``."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, strategies as st

import torch_ndcg as tn
from torch_ndcg.losses import layout

NDCG_EMPTY = ("skip", "zero", "one", "error")
LOSS_EMPTY = ("skip", "zero", "keep", "error")

# (loss, its empty policies, deterministic option sets)
LOSSES = [
    (tn.neural_ndcg_loss, NDCG_EMPTY, [
        {"impl": "dense", "sinkhorn_iters": 5}, {"impl": "streaming", "sinkhorn_iters": 5, "k": 2},
        {"impl": "kernel", "sinkhorn_iters": 7, "transposed": True}, {"impl": "auto", "temperature": 0.3},
        {"impl": "kernel", "tol": 1e-3, "k": 3}, {"impl": "dense", "transposed": True, "gain": "exp2"},
    ]),
    (tn.neural_ndcg, NDCG_EMPTY, [{"impl": "kernel", "sinkhorn_iters": 4}]),
    (tn.approx_ndcg_loss, NDCG_EMPTY, [{"impl": "dense"}, {"impl": "streaming", "k": 2}, {"impl": "auto"}]),
    (tn.approx_ndcg, NDCG_EMPTY, [{"impl": "dense", "temperature": 0.5}]),
    (tn.lambda_loss, LOSS_EMPTY, [
        {"impl": "dense"}, {"impl": "streaming", "k": 2, "weighting": "lambdarank"},
        {"impl": "auto", "weighting": "ndcg_loss2", "gain": "exp2"}, {"weighting": "none"},
    ]),
    (tn.listnet_loss, LOSS_EMPTY, [{}, {"gain": "exp2"}]),
    (tn.softmax_loss, LOSS_EMPTY, [{}]),
    (tn.listmle_loss, LOSS_EMPTY, [{}]),
    (tn.ranknet_loss, LOSS_EMPTY, [{"impl": "dense"}, {"impl": "streaming", "sigma": 2.0}]),
    (tn.pairwise_hinge_loss, LOSS_EMPTY, [{"impl": "dense", "margin": 0.5}, {"impl": "streaming"}]),
]
CASES = [(loss, empties, options) for loss, empties, sets in LOSSES for options in sets]


def padded(scores, relevance, indexes):
    """The dense form: one row per distinct id (ascending), items in flat-input order, and the
    flat position of each padded slot (-1 at padding)."""
    ids = sorted(set(indexes.tolist()))
    rows = [[i for i, q in enumerate(indexes.tolist()) if q == query] for query in ids]
    width = max(len(r) for r in rows)
    where = torch.full((len(rows), width), -1, dtype=torch.long)
    for row, items in enumerate(rows):
        where[row, : len(items)] = torch.tensor(items)
    mask = where >= 0
    take = where.clamp(min=0)
    return scores[take].where(mask, 0.0), relevance[take].where(mask, 0), mask, where


@st.composite
def flat_batches(draw):
    sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=7))
    ids = draw(st.lists(st.integers(-50, 50), min_size=len(sizes), max_size=len(sizes), unique=True))
    indexes = [q for q, n in zip(ids, sizes) for _ in range(n)]
    relevance = []
    for n in sizes:
        nothing = draw(st.booleans()) and draw(st.booleans())  # a quarter of the lists have nothing relevant
        relevance += [0] * n if nothing else draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    permutation = draw(st.permutations(range(len(indexes))))
    seed = draw(st.integers(0, 2**16))
    scores = torch.randn(len(indexes), dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    pick = torch.tensor(permutation, dtype=torch.long)
    return scores[pick], torch.tensor(relevance)[pick], torch.tensor(indexes)[pick]


def _outcome(loss, scores, relevance, **options):
    """The loss and the gradient of its value, or the ValueError it raises."""
    scores = scores.detach().requires_grad_(True)
    try:
        value = loss(scores, relevance, **options)
    except ValueError:
        return None
    (grad,) = torch.autograd.grad(value.nansum(), scores, allow_unused=True)
    return value.detach(), torch.zeros_like(scores) if grad is None else grad


@pytest.mark.parametrize(("loss", "empties", "options"), CASES, ids=lambda v: getattr(v, "__name__", None))
@given(batch=flat_batches(), data=st.data())
def test_flat_equals_padded(loss, empties, options, batch, data):
    scores, relevance, indexes = batch
    empty = data.draw(st.sampled_from(empties))
    reduction = data.draw(st.sampled_from(("mean", "sum", "none")))
    options = {**options, "empty": empty, "reduction": reduction}
    dense_scores, dense_relevance, mask, where = padded(scores, relevance, indexes)
    flat = _outcome(loss, scores, relevance, indexes=indexes, **options)
    dense = _outcome(loss, dense_scores, dense_relevance, mask=mask, **options)
    assert (flat is None) == (dense is None)  # empty="error" raises for both or neither
    if flat is None:
        return
    torch.testing.assert_close(flat[0], dense[0], rtol=1e-9, atol=1e-9, equal_nan=True)
    gathered = torch.zeros_like(scores).index_put_((where[mask],), dense[1][mask])
    assert torch.equal(dense[1][~mask], torch.zeros_like(dense[1][~mask]))
    torch.testing.assert_close(flat[1], gathered, rtol=1e-9, atol=1e-9)


def test_modules_take_indexes():
    scores, relevance = torch.randn(9, dtype=torch.float64), torch.randint(0, 3, (9,))
    indexes = torch.tensor([4, 1, 4, 4, 1, 9, 9, 9, 9])
    for module, function in ((tn.NeuralNDCGLoss(k=3), tn.neural_ndcg_loss), (tn.ListNetLoss(), tn.listnet_loss)):
        assert torch.equal(module(scores, relevance, indexes=indexes), function(scores, relevance, indexes=indexes,
                                                                                **({"k": 3} if module.k else {})))  # fmt: skip


def test_flat_mask_keeps_items():
    scores, relevance = torch.randn(8, dtype=torch.float64), torch.tensor([0, 2, 2, 0, 1, 2, 2, 0])
    indexes, keep = torch.tensor([0, 0, 1, 1, 1, 2, 2, 2]), torch.tensor([1, 0, 1, 1, 1, 1, 0, 1], dtype=torch.bool)
    kept = tn.lambda_loss(scores[keep], relevance[keep], indexes=indexes[keep], reduction="none")
    masked = tn.lambda_loss(scores, relevance, indexes=indexes, mask=keep, reduction="none")
    torch.testing.assert_close(masked, kept, rtol=0, atol=0, equal_nan=True)


def test_bad_flat_inputs_are_named():
    with pytest.raises(ValueError, match="1-D"):
        tn.listnet_loss(torch.randn(2, 3), torch.ones(2, 3), indexes=torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="shape"):
        tn.listnet_loss(torch.randn(3), torch.ones(3), indexes=torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError, match="indexes"):
        tn.listnet_loss(torch.randn(3), torch.ones(3), indexes=torch.zeros(3))


def test_groups_follow_lengths():
    """Lists go into power-of-two length classes, each padded to its own longest list only."""
    sizes = [3, 4, 1, 5, 100, 2]
    lists = layout._Lists(torch.repeat_interleave(torch.arange(6), torch.tensor(sizes)).flip(0))
    groups = lists.groups(like_kernel_plan=False)
    assert [g.tolist() for g in groups] == [[2], [5], [0, 1], [3], [4]]
    assert [lists.place(g).width for g in groups] == [1, 2, 4, 5, 100]
    assert lists.place(groups[2]).valid.tolist() == [[True, True, True, False], [True] * 4]


def _mean_over_draws(loss, scores, relevance, draws, **options):
    return torch.stack([loss(scores, relevance, **options, generator=torch.Generator().manual_seed(s)) for s in range(draws)]).mean(0)


@pytest.mark.parametrize("log_scores", [False, True])
def test_stochastic_neural_agrees_in_distribution(log_scores):
    scores = torch.tensor([0.3, -1.2, 2.0, 0.1, 0.7, -0.4, 1.5, -2.5, 0.9], dtype=torch.float64)
    relevance = torch.tensor([2, 0, 1, 3, 0, 1, 0, 2, 1])
    indexes = torch.tensor([3, 3, 8, 3, 8, 1, 1, 1, 1])
    dense_scores, dense_relevance, mask, _ = padded(scores, relevance, indexes)
    options = {"stochastic": True, "samples": 1000, "beta": 0.5, "log_scores": log_scores, "reduction": "none",
               "impl": "kernel", "sinkhorn_iters": 10}  # fmt: skip
    flat = _mean_over_draws(tn.neural_ndcg_loss, scores, relevance, 3, indexes=indexes, **options)
    dense = _mean_over_draws(tn.neural_ndcg_loss, dense_scores, dense_relevance, 3, mask=mask, **options)
    deterministic = tn.neural_ndcg_loss(scores, relevance, indexes=indexes, reduction="none", sinkhorn_iters=10)
    assert not torch.allclose(dense, deterministic, atol=1e-3)  # the noise matters at this beta
    torch.testing.assert_close(flat, dense, rtol=0, atol=0.01)  # 3,000 samples a side: > 5 standard errors


def test_log_scores_shift_reproduces_the_whole_batch_minimum():
    """Per group, ``log_scores`` sees the whole batch's minimum: with one sample and no noise
    (beta → 0 leaves only the shift), flat and padded agree to rounding, gradients included."""
    scores = torch.tensor([0.3, -1.2, 2.0, 0.1, 0.7, -0.4, 1.5, -2.5, 0.9, 4.0, 0.2], dtype=torch.float64)
    relevance = torch.tensor([2, 0, 1, 3, 0, 1, 0, 2, 1, 1, 2])
    indexes = torch.tensor([3, 3, 8, 8, 8, 1, 1, 1, 1, 8, 8])  # three length classes; the minimum in one
    dense_scores, dense_relevance, mask, where = padded(scores, relevance, indexes)
    options = {"stochastic": True, "samples": 1, "beta": 1e-300, "log_scores": True, "impl": "dense",
               "sinkhorn_iters": 5, "reduction": "sum"}  # fmt: skip
    flat = _outcome(tn.neural_ndcg_loss, scores, relevance, indexes=indexes, **options)
    dense = _outcome(tn.neural_ndcg_loss, dense_scores, dense_relevance, mask=mask, **options)
    torch.testing.assert_close(flat[0], dense[0], rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(flat[1], torch.zeros_like(scores).index_put_((where[mask],), dense[1][mask]),
                               rtol=1e-9, atol=1e-12)  # fmt: skip


def test_listmle_generator_agrees_in_distribution():
    scores = torch.tensor([0.3, -1.2, 2.0, 0.1, 0.7, -0.4, 1.5], dtype=torch.float64)
    relevance = torch.tensor([1, 1, 1, 0, 1, 1, 0])  # ties: the generator's order matters
    indexes = torch.tensor([0, 0, 0, 5, 5, 5, 5])
    dense_scores, dense_relevance, mask, _ = padded(scores, relevance, indexes)
    flat = _mean_over_draws(tn.listmle_loss, scores, relevance, 400, indexes=indexes, reduction="none")
    dense = _mean_over_draws(tn.listmle_loss, dense_scores, dense_relevance, 400, mask=mask, reduction="none")
    torch.testing.assert_close(flat, dense, rtol=0, atol=0.08)
