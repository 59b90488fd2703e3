"""The long-list smooth NDCG losses at the edges of their inputs, one property per edge:

* a list whose real scores all tie (a zero-initialised model), at any common level, in float16,
  float32 and float64, gets a finite gradient of ordinary size from ``neuralsort_ndcg_loss``'s
  ``temperature="auto"``, the same at every level;
* scores × c at any finite scale give the same ``temperature="auto"`` relaxation: the same value,
  and the gradient × c the same;
* padding, through ``mask=`` or ``indexes=``, never changes a real item's gradient, however large
  the scores (where ``low − 1 == low`` in float32);
* a relevance that requires grad gets the full gradient (finite differences agree) from the
  losses that can give it, and a ``ValueError`` naming it from the paths that cannot.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torch_ndcg as tn

DTYPES = {torch.float16: 6e4, torch.float32: 1e37, torch.float64: 1e300}  # dtype: a level it holds


def _with_grad(loss, scores, relevance, **options):
    scores = scores.detach().clone().requires_grad_(True)
    value = loss(scores, relevance, **options)
    (grad,) = torch.autograd.grad(value.sum(), scores)
    return value.detach(), grad


@st.composite
def _lists(draw, max_length=40):
    """``(relevance [B, N], mask [B, N])``: every list has a real relevant item first."""
    batch, length = draw(st.integers(1, 3)), draw(st.integers(2, max_length))
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    relevance = torch.randint(0, 3, (batch, length), generator=generator)
    relevance[:, 0] = 2
    mask = torch.rand(batch, length, generator=generator) > draw(st.sampled_from([0.0, 0.3]))
    mask[:, :2] = True
    return relevance, mask, generator


@settings(max_examples=30, deadline=None)
@given(lists=_lists(), dtype=st.sampled_from(list(DTYPES)), level=st.floats(-1, 1), k=st.sampled_from([None, 1, 5]))
def test_tied_scores_get_a_finite_ordinary_gradient_the_same_at_every_level(lists, dtype, level, k):
    relevance, mask, _ = lists
    level *= DTYPES[dtype]
    value, grad = _with_grad(tn.neuralsort_ndcg_loss, torch.full(relevance.shape, level, dtype=dtype), relevance,
                             k=k, mask=mask)  # fmt: skip
    at_zero, grad_at_zero = _with_grad(tn.neuralsort_ndcg_loss, torch.zeros(relevance.shape, dtype=dtype), relevance,
                                       k=k, mask=mask)  # fmt: skip
    assert torch.isfinite(value) and torch.isfinite(grad).all()
    assert float(grad.abs().max()) < 1
    assert torch.equal(value, at_zero) and torch.equal(grad, grad_at_zero)
    assert torch.all(grad[~mask] == 0)


@settings(max_examples=30, deadline=None)
@given(
    lists=_lists(),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    exponent=st.floats(-1, 1),
    k=st.sampled_from([None, 3, 10]),
)
def test_auto_temperature_gives_the_same_relaxation_at_any_finite_scale(lists, dtype, exponent, k):
    relevance, mask, generator = lists
    scores = torch.randn(relevance.shape, dtype=torch.float64, generator=generator)
    c = 10.0 ** (exponent * (30 if dtype == torch.float32 else 300))
    value, grad = _with_grad(tn.neuralsort_ndcg_loss, scores.to(dtype), relevance, k=k, mask=mask, reduction="none")
    scaled, scaled_grad = _with_grad(tn.neuralsort_ndcg_loss, (scores * c).to(dtype), relevance, k=k, mask=mask,
                                     reduction="none")  # fmt: skip
    tolerance = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-8)
    torch.testing.assert_close(scaled, value, equal_nan=True, **tolerance)
    torch.testing.assert_close(scaled_grad.double() * c, grad.double(), **tolerance)


@settings(max_examples=30, deadline=None)
@given(
    lists=_lists(max_length=12),
    offset=st.sampled_from([0.0, 2.0**24, 2.0**30, -(2.0**40), 1e30]),
    temperature=st.sampled_from(["auto", "spread"]),
)
def test_padding_never_changes_a_real_items_gradient(lists, offset, temperature):
    relevance, mask, generator = lists
    spread = max(abs(offset) * 1e-5, 1.0)  # float32 resolves the scores apart
    scores = (torch.randn(relevance.shape, dtype=torch.float64, generator=generator) * spread + offset).float()
    options = dict(k=3, temperature=3 * spread if temperature == "spread" else "auto", reduction="none")
    _, grad = _with_grad(tn.neuralsort_ndcg_loss, scores, relevance, mask=mask, **options)
    flat = torch.arange(relevance.shape[0])[:, None].expand_as(mask)[mask]
    _, flat_grad = _with_grad(tn.neuralsort_ndcg_loss, scores[mask], relevance[mask], indexes=flat, **options)
    # float32 rounding, relative to the largest gradient (a sentinel equal to the lowest score bent
    # that item's gradient by a fifth of it)
    close = dict(atol=1e-4 * float(grad.abs().max()), rtol=1e-4)
    torch.testing.assert_close(flat_grad, grad[mask], **close)
    for row in range(relevance.shape[0]):  # each list alone, without padding
        keep = mask[row]
        _, alone = _with_grad(tn.neuralsort_ndcg_loss, scores[row, keep][None], relevance[row, keep][None], **options)
        torch.testing.assert_close(grad[row, keep], alone[0], **close)


@settings(max_examples=15, deadline=None)
@given(lists=_lists(max_length=8), temperature=st.sampled_from(["auto", 0.3, 2.0]), k=st.sampled_from([None, 2]))
def test_relevance_with_grad_gets_the_full_gradient_from_neuralsort(lists, temperature, k):
    relevance, mask, generator = lists
    scores = torch.randn(relevance.shape, dtype=torch.float64, generator=generator)
    soft = (relevance + torch.rand(relevance.shape, dtype=torch.float64, generator=generator)).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda r: tn.neuralsort_ndcg_loss(scores, r, k=k, mask=mask, temperature=temperature), (soft,)
    )


@settings(max_examples=15, deadline=None)
@given(lists=_lists(max_length=8), impl=st.sampled_from(["dense", "streaming", "sorted"]))
def test_relevance_with_grad_gets_the_full_gradient_from_approx_ndcg(lists, impl):
    relevance, mask, generator = lists
    scores = torch.randn(relevance.shape, dtype=torch.float64, generator=generator)
    soft = (relevance + torch.rand(relevance.shape, dtype=torch.float64, generator=generator)).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda r: tn.approx_ndcg_loss(scores, r, k=2, mask=mask, temperature=0.5, impl=impl), (soft,)
    )


@settings(max_examples=15, deadline=None)
@given(lists=_lists(max_length=8), impl=st.sampled_from(["auto", "kernel", "streaming"]), flat=st.booleans())
def test_relevance_with_grad_is_refused_by_the_neural_paths_that_cannot_give_it(lists, impl, flat):
    relevance, mask, generator = lists
    scores = torch.randn(relevance.shape, dtype=torch.float64, generator=generator)
    soft = relevance.double().requires_grad_(True)
    if flat:
        layout = dict(indexes=torch.arange(relevance.shape[0])[:, None].expand_as(mask)[mask])
        scores, soft = scores[mask], soft[mask]
    else:
        layout = dict(mask=mask)
    with pytest.raises(ValueError, match=rf"^relevance requires grad, but impl='(kernel|streaming)'"):
        tn.neural_ndcg_loss(scores, soft, impl=impl, **layout)
    assert math.isfinite(tn.neural_ndcg_loss(scores, soft.detach(), impl=impl, **layout).item())
