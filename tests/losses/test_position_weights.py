"""ListMLE's position weights (torch_ndcg.position_weights): PListMLE against its formula and
against sentence-transformers' PListMLELoss (committed reference values), a user's own function,
and the layouts and dtypes of listmle_loss."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn
from loss_batches import assert_flat_items_match_padding

REFERENCE = json.loads((Path(__file__).resolve().parent / "sentence_transformers_reference" / "losses.json").read_text())
PLISTMLE = [case for case in REFERENCE["cases"] if case["st_loss"] == "PListMLELoss"]


def _lists(seed: int = 0, rows: int = 4, length: int = 7):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(rows, length, dtype=torch.float64, generator=gen)
    relevance = torch.randperm(rows * length, generator=gen).reshape(rows, length).double() / 4  # no ties
    mask = torch.rand(rows, length, generator=gen) > 0.25
    mask[:, :2] = True
    return scores, relevance, mask


def _value_and_grad(fn, scores, *args, **kwargs):
    x = scores.clone().requires_grad_()
    value = fn(x, *args, **kwargs)
    (grad,) = torch.autograd.grad(value, x)
    return value.detach(), grad


def test_plistmle_is_its_formula_term_by_term():
    scores, relevance, mask = _lists()
    got = tn.listmle_loss(scores, relevance, mask=mask, weighting="plistmle", reduction="none")
    expected = []
    for s, y, m in zip(scores.tolist(), relevance.tolist(), mask.tolist()):
        ranked = [s[i] for i in sorted((i for i in range(len(s)) if m[i]), key=lambda i: -y[i])]
        n = len(ranked)
        weights = [2.0 ** (n - i) - 1 for i in range(1, n + 1)]
        terms = [math.log(sum(math.exp(v) for v in ranked[i:])) - ranked[i] for i in range(n)]
        expected.append(sum(w * t for w, t in zip(weights, terms)) / sum(weights))
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", PLISTMLE, ids=[case["name"] for case in PLISTMLE])
def test_plistmle_equals_sentence_transformers(case):
    """sentence-transformers' PListMLELoss (``respect_input_order=False``) sorts by its labels:
    here the reference's real-valued labels, shifted to be ≥ 0 (the order is the same)."""
    scores = torch.tensor(case["scores"], dtype=torch.float64)
    labels = torch.tensor(case["teacher_scores"], dtype=torch.float64)
    mask = torch.arange(scores.shape[-1])[None, :] < torch.tensor(case["lengths"])[:, None]
    labels = torch.where(mask, labels - labels.min(), 0.0)
    scores = torch.where(mask, scores, 1e3).requires_grad_(True)
    value = tn.listmle_loss(scores, labels, mask=mask, weighting="plistmle")
    value.backward()
    torch.testing.assert_close(value.detach(), torch.tensor(case["value"], dtype=torch.float64), rtol=0, atol=1e-6)
    torch.testing.assert_close(scores.grad, torch.tensor(case["grad"], dtype=torch.float64), rtol=0, atol=1e-6)


def test_a_users_function_weighs_the_positions():
    scores, relevance, mask = _lists(1)
    ones = tn.listmle_loss(scores, relevance, mask=mask, weighting=lambda position, length: torch.ones(()), reduction="none")
    torch.testing.assert_close(ones, tn.listmle_loss(scores, relevance, mask=mask, reduction="none"))
    top = tn.listmle_loss(scores, relevance, mask=mask, weighting=lambda position, length: (position == 1).double(),
                          reduction="none")  # fmt: skip
    best = relevance.masked_fill(~mask, -1).argmax(-1, keepdim=True)
    first = torch.logsumexp(scores.masked_fill(~mask, -torch.inf), -1) - scores.gather(-1, best)[:, 0]
    torch.testing.assert_close(top, first)


def test_bad_weightings_name_the_argument():
    scores, relevance, _ = _lists()
    with pytest.raises(ValueError, match="weighting"):
        tn.listmle_loss(scores, relevance, weighting="lambdarank")
    with pytest.raises(ValueError, match="weighting must return a tensor that broadcasts"):
        tn.listmle_loss(scores, relevance, weighting=lambda position, length: torch.ones(5, 5, 5))


def test_padding_and_flat_items_give_the_values_and_gradients_of_the_real_lists():
    scores, relevance, mask = _lists(2)
    fn = functools.partial(tn.listmle_loss, weighting="plistmle", reduction="sum")
    padded = _value_and_grad(fn, scores, relevance, mask=mask)
    noisy = torch.where(mask, scores, torch.full_like(scores, 1e3))
    torch.testing.assert_close(_value_and_grad(fn, noisy, relevance, mask=mask), padded, rtol=1e-12, atol=1e-12)
    assert_flat_items_match_padding(fn, scores, relevance, mask, padded)


def test_float32_agrees_with_float64_and_gradcheck():
    scores, relevance, mask = _lists(3)
    fn = functools.partial(tn.listmle_loss, mask=mask, weighting="plistmle")
    single = _value_and_grad(fn, scores.float(), relevance.float())
    assert single[0].dtype == single[1].dtype == torch.float32
    torch.testing.assert_close(single, tuple(t.float() for t in _value_and_grad(fn, scores, relevance)), rtol=1e-5, atol=1e-6)
    x = scores[:2, :5].clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda s: fn(s, relevance[:2, :5], mask=mask[:2, :5]), (x,))
    # Second derivatives with weights that are nowhere 0: PyTorch's logcumsumexp has a NaN double
    # backward where its incoming gradient is 0 (PListMLE's last position).
    harmonic = functools.partial(tn.listmle_loss, mask=mask[:2, :5], weighting=lambda position, length: 1 / position.abs().clamp(min=1))
    assert torch.autograd.gradgradcheck(lambda s: harmonic(s, relevance[:2, :5]), (x,))


def test_module_takes_the_weighting():
    scores, relevance, mask = _lists(4)
    torch.testing.assert_close(tn.ListMLELoss(weighting="plistmle")(scores, relevance, mask=mask),
                               tn.listmle_loss(scores, relevance, mask=mask, weighting="plistmle"))  # fmt: skip
