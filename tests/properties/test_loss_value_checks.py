"""The losses' value checks behind one host read refuse exactly what the metrics' exact checks
refuse, and warn exactly when they warn: NaN, infinite or huge scores, negative, NaN, infinite or
exp2-overflowing labels, at real or masked items, in float32 and float64."""

from __future__ import annotations

import math
import warnings

import torch
from hypothesis import example, given
from hypothesis import strategies as st

from torch_ndcg.dense import check_values
from torch_ndcg.losses.value_checks import check_inputs, warn_nothing_relevant
from torch_ndcg.validation import warn_if_swapped

SCORES = (0.0, 1.0, 3.0, 1.5, -2.0, 3e38, -3e38, math.inf, -math.inf, math.nan)
LABELS = (0.0, 1.0, 0.5, 4.0, 125.0, 1100.0, -1.0, math.inf, math.nan)
# Scores that look like labels and labels that look like probabilities: the swap warning's case.
LABEL_LIKE, PROBABILITY_LIKE = (0.0, 1.0, 3.0), (0.0, 0.5, 1.0)
HUGE_LABELS = (0.0, 2.0, 125.0, 1100.0)  # past exp2's range in float32 (124 here), float64 (1020)


def _values(*palettes):
    return st.one_of(*(st.lists(st.sampled_from(p), min_size=18, max_size=18) for p in palettes))


def _outcome(check, *args):
    """("error", message) or ("warning", message) or ("ok", "")."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check(*args)
        except ValueError as error:
            return "error", str(error)
    return ("warning", str(caught[0].message)) if caught else ("ok", "")


def _exact(scores, relevance, mask, gain):
    dtype = torch.float64 if torch.float64 in (scores.dtype, relevance.dtype) else torch.float32
    check_values(scores, relevance, mask, gain, dtype)
    warn_if_swapped(scores, relevance, mask)
    real = relevance if mask is None else relevance[mask]
    if relevance.numel() and scores.shape[-1] > 1 and not bool((real != 0).any()):
        warn_nothing_relevant()  # a batch with nothing relevant: the loss would be 0, silently


@given(
    dtype=st.sampled_from([torch.float32, torch.float64]),
    shape=st.tuples(st.integers(1, 3), st.integers(1, 6)),
    scores=_values(SCORES, LABEL_LIKE),
    labels=_values(LABELS, PROBABILITY_LIKE, HUGE_LABELS),
    masked=st.lists(st.booleans(), min_size=18, max_size=18) | st.none(),
    gain=st.sampled_from(["linear", "exp2"]),
)
@example(torch.float32, (1, 4), [0.0, 1.0, 3.0, 1.0] * 5, [0.0, 0.5, 1.0, 0.5] * 5, None, "linear")  # swapped
@example(torch.float32, (2, 3), [0.0] * 18, [0.0, 125.0] * 9, None, "exp2")  # past float32's range
@example(torch.float64, (2, 3), [0.0] * 18, [1100.0, 2.0] * 9, [True, False] * 9, "exp2")  # float64's
@example(torch.float32, (1, 3), [1.0, math.nan, 2.0] * 6, [1.0] * 18, [True, False, True] * 6, "linear")  # masked NaN
def test_one_read_refuses_and_warns_exactly_as_the_exact_checks(dtype, shape, scores, labels, masked, gain):
    count = shape[0] * shape[1]
    s = torch.tensor(scores[:count], dtype=dtype).reshape(shape)
    r = torch.tensor(labels[:count], dtype=dtype).reshape(shape)
    mask = None if masked is None else torch.tensor(masked[:count]).reshape(shape)
    assert _outcome(check_inputs, s, r, mask, gain) == _outcome(_exact, s, r, mask, gain)
