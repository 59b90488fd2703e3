"""The one boundary of the statistics: what per-query values, p-values and options they accept.

Every public function of :mod:`torch_ndcg.stats` checks its inputs here, once, before any
computation, so that a bad input is a ``ValueError``/``TypeError`` naming the argument rather
than a plausible p-value. Per-query values must be finite: a NaN (a query that a metric with
``empty="skip", reduction="none"`` left undefined) or an infinity has no sign, rank or mean that
a test could use, and any rule that drops it silently would test other queries than the user
thinks. Values are read (the check synchronises once per call); the tests themselves already do.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

__all__ = [
    "check_count",
    "check_generator",
    "check_open_unit",
    "per_query_values",
    "pvalue_table",
]

_NON_FINITE_HINT = (
    "a test needs a finite value for every query; a metric's per-query NaN marks a query without "
    "relevant items (empty='skip'): drop that query from both systems, or score it with "
    "empty='zero' or empty='one'"
)


def per_query_values(name: str, values: object) -> Tensor:
    """``values`` as a float64 ``[..., Q]`` tensor of finite per-query values, or a clear error.

    Refuses non-tensors, scalars, complex and bool tensors, and any NaN or infinite value (naming
    how many and the first one's index). Leading axes may be empty (``[0, Q]``): the result is
    then empty as well.
    """
    if not isinstance(values, Tensor):
        raise TypeError(f"{name} must be a tensor of per-query values [..., Q], got {type(values).__name__}")
    if values.dim() < 1:
        raise ValueError(f"{name} must have a query axis [..., Q], got a scalar")
    if values.is_complex() or values.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, got {values.dtype}")
    table = values.detach().to(torch.float64)
    _refuse(table, ~torch.isfinite(table),
            lambda count, first, value: f"{name} holds {count} NaN or infinite value(s), the first at index {first} "
                                        f"({value}); {_NON_FINITE_HINT}")
    return table


def pvalue_table(pvalues: object) -> Tensor:
    """``pvalues`` as a float64 ``[..., m]`` tensor of p-values in [0, 1] (NaN allowed: a test
    without a value), or a clear error naming ``pvalues``."""
    if not isinstance(pvalues, Tensor):
        raise TypeError(f"pvalues must be a tensor [..., m] of p-values, one family per row, got "
                        f"{type(pvalues).__name__}")
    if pvalues.dim() < 1:
        raise ValueError("pvalues must be a tensor [..., m] of p-values, one family per row, got a scalar")
    if pvalues.is_complex() or pvalues.dtype == torch.bool:
        raise TypeError(f"pvalues must hold real numbers, got {pvalues.dtype}")
    p = pvalues.detach().to(torch.float64)
    _refuse(p, ~torch.isnan(p) & ((p < 0) | (p > 1)),
            lambda count, first, value: f"pvalues must lie in [0, 1] (NaN for a missing test), got {count} "
                                        f"outside, the first {value} at index {first}")
    return p


def _refuse(table: Tensor, bad: Tensor, message: Callable[[int, tuple[int, ...], float], str]) -> None:
    """A ValueError made by ``message(count, first index, first value)`` when any entry is ``bad``."""
    if bool(bad.any()):
        first = tuple(int(i) for i in bad.nonzero()[0])
        raise ValueError(message(int(bad.sum()), first, float(table[first])))


def check_open_unit(name: str, value: object) -> float:
    """A number strictly between 0 and 1 (a confidence level, a significance threshold)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def check_count(name: str, value: object) -> int:
    """A positive int (resamples, permutations); ``True`` is refused."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def check_generator(generator: object) -> torch.Generator | None:
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    return generator
