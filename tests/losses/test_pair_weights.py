"""Pair weights (torch_ndcg.pair_weights) in ranknet_loss, pairwise_hinge_loss and lambda_loss:
each weight against its formula written out pair by pair, the functions equal to the names,
a user's own function, and the layouts, dtypes and paths of the losses."""

from __future__ import annotations

import functools
import math

import pytest
import torch

import torch_ndcg as tn
from loss_batches import assert_flat_items_match_padding
from torch_ndcg.losses import pairwise

WEIGHTS = ["label_difference", "lambdarank", "dcg2", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp"]
MU = 10.0


def _discount(rank: int) -> float:
    return 1.0 / math.log2(1 + rank)


def _weight(name: str, i: int, j: int, y, G, rank, k) -> float:
    """``w_ij`` written out from the papers' formulas."""

    def cut(r: int) -> float:
        return _discount(r) if k is None or r <= k else 0.0

    gap = abs(rank[i] - rank[j])
    loss2 = abs(G[i] - G[j]) * (abs(_discount(gap) - _discount(gap + 1)) if gap else 0.0)
    lambdarank = abs(G[i] - G[j]) * abs(cut(rank[i]) - cut(rank[j]))
    last = max(rank[i], rank[j])
    return {
        "label_difference": abs(y[i] - y[j]),
        "lambdarank": lambdarank,
        "ndcg_loss2": loss2,
        "dcg2": loss2 / (1 - _discount(last)) if k is not None and last > k else loss2,
        "ndcg_loss2pp": MU * loss2 + lambdarank,
        "ndcg_loss1": G[i] * cut(rank[i]),
    }[name]


def _reference(loss: str, name: str, scores, relevance, mask, k, gain: str, scale: float) -> list[float]:
    """Per-list values of ``loss`` with weighting ``name``, pair by pair in Python floats."""
    out = []
    for s, y, m in zip(scores.tolist(), relevance.tolist(), mask.tolist()):
        real = [i for i in range(len(s)) if m[i]]
        g = {i: (2.0 ** y[i] - 1 if gain == "exp2" else y[i]) for i in real}
        rank = {i: r + 1 for r, i in enumerate(sorted(real, key=lambda i: (-s[i], i)))}
        ideal = sorted(g.values(), reverse=True)[: len(real) if k is None else k]
        idcg = sum(value * _discount(r + 1) for r, value in enumerate(ideal)) or 1.0
        G = {i: g[i] / idcg for i in real}
        total, count = 0.0, 0
        for i in real:
            for j in real:
                pair = True if name == "ndcg_loss1" else g[i] > g[j]
                if loss == "lambda" and k is not None:
                    pair = pair and rank[i] <= k and rank[j] <= k
                if not pair:
                    continue
                gap = s[i] - s[j]
                term = {
                    "ranknet": math.log1p(math.exp(-scale * gap)),
                    "hinge": max(0.0, scale - gap),
                    "lambda": math.log1p(math.exp(-scale * gap)) / math.log(2),
                }[loss]
                total += _weight(name, i, j, y, G, rank, k) * term
                count += 1
        out.append(total if loss == "lambda" else total / count)
    return out


def _lists(seed: int = 0, rows: int = 4, length: int = 7):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(rows, length, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 4, (rows, length), generator=gen).double()
    relevance[:, 0], relevance[:, 1] = 3.0, 0.0  # every list has a pair
    mask = torch.rand(rows, length, generator=gen) > 0.25
    mask[:, :2] = True
    return scores, relevance, mask


LOSSES = {
    "ranknet": lambda s, r, **o: tn.ranknet_loss(s, r, sigma=1.3, **o),
    "hinge": lambda s, r, **o: tn.pairwise_hinge_loss(s, r, margin=0.8, **o),
    "lambda": lambda s, r, k=None, **o: tn.lambda_loss(s, r, k, sigma=1.3, **o),
}
SCALES = {"ranknet": 1.3, "hinge": 0.8, "lambda": 1.3}


@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("gain", ["linear", "exp2"])
@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("name", WEIGHTS)
def test_each_weight_is_its_formula_pair_by_pair(name, loss, gain, k):
    scores, relevance, mask = _lists()
    got = LOSSES[loss](scores, relevance, mask=mask, k=k, gain=gain, weighting=name, reduction="none")
    expected = _reference(loss, name, scores, relevance, mask, k, gain, SCALES[loss])
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64), rtol=1e-12, atol=1e-12)


def _value_and_grad(fn, scores, *args, **kwargs):
    x = scores.clone().requires_grad_()
    value = fn(x, *args, **kwargs)
    (grad,) = torch.autograd.grad(value, x)
    return value.detach(), grad


@pytest.mark.parametrize("impl", ["dense", "streaming"])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("name", ["ndcg_loss2pp", "ndcg_loss2", "lambdarank"])
def test_lambda_loss_schemes_as_functions_equal_their_names(name, k, impl):
    """The paper's schemes keep their own faster path by name; their functions give the same
    values and gradients through the general one."""
    scores, relevance, mask = _lists(1)
    function = getattr(tn.pair_weights, name)
    if name == "ndcg_loss2pp":
        function = functools.partial(function, mu=2.5)
    options = dict(mask=mask, gain="exp2", mu=2.5, impl=impl)
    by_name = _value_and_grad(tn.lambda_loss, scores, relevance, k, weighting=name, **options)
    by_function = _value_and_grad(tn.lambda_loss, scores, relevance, k, weighting=function, **options)
    torch.testing.assert_close(by_function, by_name, rtol=1e-12, atol=1e-12)


def test_a_users_function_receives_the_pairs_and_weighs_them():
    scores, relevance, mask = _lists(2)
    seen = {}

    def top_heavy(pairs: tn.pair_weights.Pairs) -> torch.Tensor:
        seen["shapes"] = (pairs.gain_i.shape, pairs.gain_j.shape, pairs.rank_i.dtype, pairs.k)
        return pairs.label_i * pairs.discount(pairs.rank_i)

    got = tn.ranknet_loss(scores, relevance, mask=mask, k=4, weighting=top_heavy, reduction="none")
    assert seen["shapes"] == (torch.Size([4, 7, 1]), torch.Size([4, 1, 7]), torch.int64, 4)
    ones = tn.ranknet_loss(scores, relevance, mask=mask, weighting=lambda pairs: torch.ones(()), reduction="none")
    torch.testing.assert_close(ones, tn.ranknet_loss(scores, relevance, mask=mask, reduction="none"))
    # the label of the preferred item times its discount, pair by pair
    expected = []
    for s, y, m in zip(scores.tolist(), relevance.tolist(), mask.tolist()):
        real = [i for i in range(7) if m[i]]
        rank = {i: r + 1 for r, i in enumerate(sorted(real, key=lambda i: (-s[i], i)))}
        terms = [y[i] * _discount(rank[i]) * math.log1p(math.exp(-(s[i] - s[j]))) for i in real for j in real if y[i] > y[j]]
        expected.append(sum(terms) / len(terms))
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss", [tn.ranknet_loss, tn.pairwise_hinge_loss, tn.lambda_loss])
def test_bad_weightings_name_the_argument(loss):
    scores, relevance, _ = _lists()
    with pytest.raises(ValueError, match="weighting"):
        loss(scores, relevance, weighting="ndcg3")
    with pytest.raises(ValueError, match="weighting must return a tensor that broadcasts"):
        loss(scores, relevance, weighting=lambda pairs: torch.ones(2, 3, 3, 3))
    with pytest.raises(ValueError, match="weighting must return a tensor"):
        loss(scores, relevance, weighting=lambda pairs: 1.0)


@pytest.mark.parametrize("loss", [tn.ranknet_loss, tn.pairwise_hinge_loss])
@pytest.mark.parametrize("option", [{"k": 10}, {"gain": "exp2"}, {"discount": lambda r: 1 / r}])
def test_metric_options_without_a_weighting_are_refused_not_ignored(loss, option):
    """In RankNet and the pairwise hinge ``k``, ``gain`` and ``discount`` only shape the pair
    weights: with ``weighting="none"`` a top-10 RankNet would silently be the plain one."""
    scores, relevance, _ = _lists()
    with pytest.raises(ValueError, match=f"{next(iter(option))} define the NDCG@k that pair weights read"):
        loss(scores, relevance, **option)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("name", ["dcg2", "ndcg_loss1", "label_difference"])
def test_padding_and_flat_items_give_the_values_and_gradients_of_the_real_lists(loss, name):
    scores, relevance, mask = _lists(3)
    fn = functools.partial(LOSSES[loss], k=3, weighting=name, reduction="sum")
    padded = _value_and_grad(fn, scores, relevance, mask=mask)
    # garbage at the padding changes nothing
    noisy = torch.where(mask, scores, torch.full_like(scores, 1e3))
    noisy_relevance = torch.where(mask, relevance, torch.full_like(relevance, 5.0))
    torch.testing.assert_close(_value_and_grad(fn, noisy, noisy_relevance, mask=mask), padded, rtol=1e-12, atol=1e-12)
    # the flat layout: the real items, in a shuffled order, one query id each
    assert_flat_items_match_padding(fn, scores, relevance, mask, padded)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("name", ["dcg2", "ndcg_loss1"])
def test_float32_agrees_with_float64(loss, name):
    scores, relevance, mask = _lists(4)
    fn = functools.partial(LOSSES[loss], mask=mask, k=3, weighting=name)
    single = _value_and_grad(fn, scores.float(), relevance.float())
    assert single[0].dtype == single[1].dtype == torch.float32
    double = _value_and_grad(fn, scores, relevance)
    torch.testing.assert_close(single, tuple(t.float() for t in double), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("impl", ["dense", "streaming"])
@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("name", ["dcg2", "ndcg_loss1", "lambdarank"])
def test_gradcheck(loss, name, impl):
    scores, relevance, mask = _lists(5, rows=2, length=5)
    scores = scores.clone().requires_grad_()

    def fn(x):
        return LOSSES[loss](x, relevance, mask=mask, k=3, weighting=name, impl=impl, gain="exp2")

    assert torch.autograd.gradcheck(fn, (scores,))
    assert torch.autograd.gradgradcheck(fn, (scores,))


@pytest.mark.parametrize("loss", list(LOSSES))
def test_streaming_over_many_blocks_equals_dense_with_weights(loss, monkeypatch):
    scores, relevance, mask = _lists(6, rows=3, length=37)
    fn = functools.partial(LOSSES[loss], mask=mask, k=5, weighting="dcg2", gain="exp2", reduction="sum")
    dense = _value_and_grad(fn, scores, relevance, impl="dense")
    monkeypatch.setattr(pairwise, "SLAB_ELEMENTS", 3 * 37 * 5)
    torch.testing.assert_close(_value_and_grad(fn, scores, relevance, impl="streaming"), dense, rtol=1e-12, atol=1e-12)


def test_ndcg_loss1_counts_every_pair_of_real_items():
    """A list whose labels are all equal but relevant still has NDCG-Loss1's pairs (each item with
    every other and with itself), where the preferred-pair weights have none."""
    scores = torch.tensor([[0.3, -0.2, 1.0]], dtype=torch.float64)
    relevance = torch.tensor([[1.0, 1.0, 1.0]], dtype=torch.float64)
    value = tn.lambda_loss(scores, relevance, weighting="ndcg_loss1", reduction="none")
    expected = _reference("lambda", "ndcg_loss1", scores, relevance, torch.ones(1, 3, dtype=torch.bool), None, "linear", 1.0)
    torch.testing.assert_close(value, torch.tensor(expected, dtype=torch.float64))
    assert tn.lambda_loss(scores, relevance, weighting="ndcg_loss2", reduction="none").isnan().all()  # skipped: no pair


@pytest.mark.parametrize("module, function", [(tn.RankNetLoss, tn.ranknet_loss), (tn.PairwiseHingeLoss, tn.pairwise_hinge_loss),
                                              (tn.LambdaLoss, tn.lambda_loss)])
def test_modules_take_the_weighting(module, function):
    scores, relevance, mask = _lists(7)
    options = dict(weighting="dcg2", gain="exp2", k=3)
    torch.testing.assert_close(module(**options)(scores, relevance, mask=mask), function(scores, relevance, mask=mask, **options))
