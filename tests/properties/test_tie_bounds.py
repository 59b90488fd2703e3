"""ties="worst" and "best" are the lowest and highest value over every order of tied items, with
per-item weights, thresholds and gains: worst ≤ average ≤ best, and every tie order in between."""

from __future__ import annotations

import itertools
from unittest import mock

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import torch_ndcg as tn
from torch_ndcg import flat

METRICS = ("ndcg", "dcg", "mrr", "precision", "recall", "average_precision", "hit_rate")
CUTOFFS = (1, 2, 3, None)


def _weights(weights):
    return {} if weights is None else {"weights": weights}  # (a metric without weights refuses them)


def _call(name, scores, labels, weights, layout, ties, **options):
    function = getattr(tn, name)
    options.pop("gain" if name not in ("ndcg", "dcg") else "threshold", None)
    weights = weights if name in ("ndcg", "dcg") else None  # (per-item weights weigh gains)
    if layout == "dense":
        return function(scores, labels, CUTOFFS, **_weights(weights), ties=ties, reduction="none", **options)
    ids = torch.zeros(scores.shape[-1], dtype=torch.long)
    flat_options = dict(indexes=ids, **_weights(weights), ties=ties, reduction="none", **options)
    if layout == "flat rows":
        return function(scores, labels, CUTOFFS, **flat_options)
    with mock.patch.object(flat, "as_rows", return_value=None):  # the segment path, not padded rows
        return function(scores, labels, CUTOFFS, **flat_options)


@pytest.mark.slow
@given(
    st.integers(1, 5).flatmap(lambda n: st.tuples(
        st.lists(st.integers(0, 2), min_size=n, max_size=n),  # scores from a tiny range: ties abound
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
    )),
    st.sampled_from(["dense", "flat rows", "flat segments"]),
    st.sampled_from([None, 2]),
    st.sampled_from(["linear", "exp2"]),
    st.booleans(),
)
def test_worst_and_best_bound_every_tie_order_with_weights(lists, layout, threshold, gain, weighted):
    scores, labels, weights = (torch.tensor(v) for v in lists)
    scores, weights = scores.float(), weights if weighted else None
    options = dict(threshold=threshold, gain=gain)
    for name in METRICS:
        worst, average, best = (_call(name, scores, labels, weights, layout, t, **options)
                                for t in ("worst", "average", "best"))
        orders = []
        for order in itertools.permutations(range(scores.numel())):
            order = torch.tensor(order)
            orders.append(_call(name, scores[order], labels[order], None if weights is None else weights[order],
                                "dense", "first", **options))
        lowest, highest = (v.reshape(worst.shape) for v in (torch.stack(orders).amin(0), torch.stack(orders).amax(0)))
        torch.testing.assert_close(worst, lowest, msg=lambda m: f"{name} worst: {m}")
        torch.testing.assert_close(best, highest, msg=lambda m: f"{name} best: {m}")
        assert bool((worst <= average + 1e-6).all() and (average <= best + 1e-6).all()), name


def test_the_reported_case():
    scores, labels, weights = torch.tensor([[3.0, 3.0, 1.0]]), torch.tensor([[2, 2, 1]]), torch.tensor([[0.5, 2.0, 1.0]])
    values = {t: float(tn.ndcg(scores, labels, weights=weights, ties=t)) for t in ("worst", "average", "first", "best")}
    assert values["worst"] <= values["first"] <= values["best"] and values["worst"] < values["average"] < values["best"]
