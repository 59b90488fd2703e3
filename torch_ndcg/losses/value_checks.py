"""A loss's value checks: one host read in the common case, and one registered operator under
``torch.compile``, so that a validating loss compiles as one graph.

A loss checks its inputs' values (NaN or infinite scores, negative or non-finite labels,
``exp2`` gains that overflow; a warning when scores and labels look swapped) by reading them on
the host. :func:`check_inputs` reads one three-number summary; only a suspicious one runs the
metrics' exact checks, which name the culprit.

Under ``torch.compile`` a read is a graph break: the graph is cut there and the pieces run with
Python between them, which costs more than the checks. The functions :func:`~torch_ndcg.registered_checks.register_check`
makes instead hand the inputs to a registered operator (``torch_ndcg::check_inputs`` for a
loss's inputs; the smooth NDCG losses' result check and the distillation losses' checks
likewise), which the compiler keeps as one opaque call (it sees only a fake implementation).
The operator runs the eager check on the real tensors and returns a zero that is added to the
scores, so that the loss depends on the call and it is never dropped. A bad input raises the
same ``ValueError`` (or warning) compiled as eager, and the graph has no break. A callable
``gain`` cannot cross an operator's boundary: such calls keep the metrics' checks and their
graph breaks.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import Tensor

from .. import definitions as d
from ..dense import check_values
from ..registered_checks import register_check
from ..validation import caller_stacklevel, unmasked, warn_if_swapped


def check_inputs(scores: Tensor, relevance: Tensor, mask: Tensor | None, gain: str) -> None:
    """The metrics' value checks of float ``scores`` and ``relevance`` for the named ``gain``,
    behind one host read: the labels' range and the scores' sum (finite whenever every real
    score is, unless large ones overflow it: then the exact checks clear them)."""
    if not relevance.numel():
        return
    labels = unmasked(relevance.to(scores.dtype if relevance.is_floating_point() else torch.float64), mask)
    summary = (*labels.aminmax(), unmasked(scores, mask).sum().to(labels.dtype))
    low, high, total = torch.stack(summary).tolist()
    dtype = d.compute_dtype(scores, relevance)
    limit = d.exp2_label_limit(dtype, scores.shape[-1])
    if not (low >= 0 and math.isfinite(high) and math.isfinite(total)) or (gain == "exp2" and high > limit):
        check_values(scores, relevance, mask, gain, dtype)
    if relevance.is_floating_point() and high <= 1:  # labels that may be probabilities
        warn_if_swapped(scores, relevance, mask)
    if high == 0 and scores.shape[-1] > 1:  # (padding reads as 0 here)
        warn_nothing_relevant()


def warn_nothing_relevant() -> None:
    """Warn that a batch has no relevant item at all: a loss that skips such lists returns 0 with
    a zero gradient, which would hide a collate bug (labels dropped, a mask inverted)."""
    warnings.warn(
        "relevance: no list in this batch has a relevant item (every real label is 0), so a ranking loss "
        "has nothing to learn from it: with the default empty='skip' the loss is 0 and its gradient zero. "
        "Check the labels and the mask the batch was built with", UserWarning, stacklevel=caller_stacklevel(),
    )  # fmt: skip


def check_smooth_values(values: Tensor, is_empty: Tensor) -> None:
    """A smooth NDCG ``[B]`` that is NaN for a list with something to rank (``~is_empty``) is a
    ``ValueError``: NaN marks a skipped list from there on, and the checked inputs were finite,
    so it is a numerical failure at these scores, which must not pass as a skipped list."""
    if bool(torch.isnan(values).any()):
        failed = torch.isnan(values) & ~is_empty
        if bool(failed.any()):
            raise ValueError(
                f"scores: the smooth NDCG of list {int(failed.nonzero()[0, 0])} (flattened batch index) is NaN "
                "although the inputs are finite, a numerical failure at these scores and temperature; "
                "try float64 scores or a larger temperature"
            )


#: ``scores`` once their values and ``relevance``'s pass :func:`check_inputs` (see :func:`register_check`).
validated = register_check("check_inputs", "Tensor scores, Tensor relevance, Tensor? mask, str gain", check_inputs)
#: ``values`` once they pass :func:`check_smooth_values` (see :func:`register_check`).
validated_smooth_values = register_check("check_smooth_values", "Tensor values, Tensor is_empty", check_smooth_values)
