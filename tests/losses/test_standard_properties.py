"""Property tests of the standard ranking losses against plain-Python oracles of their formulas."""

from __future__ import annotations

import math

import standard_reference as ref
import torch
from hypothesis import given
from hypothesis import strategies as st

import torch_ndcg as tn


@st.composite
def masked_lists(draw):
    """A few lists of one length ≤ 7: scores in [−5, 5], labels 0–3, any mask."""
    n = draw(st.integers(1, 7))
    rows = draw(st.integers(1, 3))
    score = st.floats(-5, 5, allow_nan=False)
    scores = [[draw(score) for _ in range(n)] for _ in range(rows)]
    labels = [[draw(st.integers(0, 3)) for _ in range(n)] for _ in range(rows)]
    mask = [[draw(st.booleans()) for _ in range(n)] for _ in range(rows)]
    return torch.tensor(scores, dtype=torch.float64), torch.tensor(labels, dtype=torch.float64), torch.tensor(mask)


def _real(row, mask_row):
    return [v for v, m in zip(row.tolist(), mask_row.tolist()) if m]


def _check(ours, oracle, scores, labels, mask, gains=None, pairwise=False, shift=True):
    """Per list, with ``empty="keep"``: the oracle on the real items only; ``"skip"``: NaN exactly
    for lists with nothing relevant, fewer than two real items or (pairwise) no pair to order."""
    gains = labels if gains is None else gains
    got = ours(scores, labels, mask=mask, empty="keep", reduction="none")
    skipped = ours(scores, labels, mask=mask, reduction="none")
    for b in range(scores.shape[0]):
        s, g, y = _real(scores[b], mask[b]), _real(gains[b], mask[b]), _real(labels[b], mask[b])
        assert math.isclose(got[b].item(), oracle(s, g), rel_tol=1e-9, abs_tol=1e-9)
        empty = sum(g) == 0 or len(s) < 2 or (pairwise and len(set(y)) < 2)
        assert math.isnan(skipped[b].item()) == empty
    if shift:  # only differences of scores matter (LambdaLoss's ranks may re-tie after rounding)
        shifted = ours(scores + 3.0, labels, mask=mask, empty="keep", reduction="none")
        torch.testing.assert_close(shifted, got, rtol=1e-9, atol=1e-9)


@given(masked_lists(), st.sampled_from(["linear", "exp2"]))
def test_listwise_losses_equal_their_formulas(data, gain):
    scores, labels, mask = data
    gains = labels if gain == "linear" else 2**labels - 1
    _check(lambda *a, **o: tn.listnet_loss(*a, gain=gain, **o), ref.listnet, scores, labels, mask, gains)
    _check(lambda *a, **o: tn.softmax_loss(*a, gain=gain, **o), ref.softmax, scores, labels, mask, gains)
    _check(tn.listmle_loss, ref.listmle, scores, labels, mask)


@given(masked_lists(), st.sampled_from(["dense", "streaming"]), st.floats(0.1, 3.0))
def test_pairwise_losses_equal_their_formulas(data, impl, slope):
    scores, labels, mask = data
    _check(
        lambda *a, **o: tn.ranknet_loss(*a, sigma=slope, impl=impl, **o),
        lambda s, g: ref.ranknet(s, g, sigma=slope), scores, labels, mask, pairwise=True,
    )  # fmt: skip
    _check(
        lambda *a, **o: tn.pairwise_hinge_loss(*a, margin=slope, impl=impl, **o),
        lambda s, g: ref.hinge(s, g, margin=slope), scores, labels, mask, pairwise=True,
    )  # fmt: skip


@given(
    masked_lists(),
    st.sampled_from(["ndcg_loss2pp", "ndcg_loss2", "lambdarank", "none"]),
    st.sampled_from([None, 1, 3]),
    st.sampled_from(["dense", "streaming"]),
    st.sampled_from(["exp2", "log2", "inverse"]),
)
def test_lambda_loss_equals_its_formula_on_the_metrics_definitions(data, weighting, k, impl, variant):
    scores, labels, mask = data
    # The weights follow the library's gain and discount, a callable discount included.
    gain = "linear" if variant == "log2" else "exp2"
    gains = labels if gain == "linear" else 2**labels - 1
    discount = "log2" if variant != "inverse" else (lambda r: 1.0 / r)
    oracle_discount = (lambda r: 1 / math.log2(1 + r)) if variant != "inverse" else (lambda r: 1.0 / r)
    _check(
        lambda *a, **o: tn.lambda_loss(
            *a, k, gain=gain, discount=discount, weighting=weighting, sigma=1.5, mu=4.0, impl=impl, **o
        ),
        lambda s, g: ref.lambda_loss(s, g, k, weighting, sigma=1.5, mu=4.0, discount=oracle_discount),
        scores, labels, mask, gains, pairwise=True, shift=False,
    )  # fmt: skip
