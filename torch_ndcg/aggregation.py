"""What a query with nothing to find is worth (``empty``) and how per-query values combine (``reduction``).

The options arrive checked (at the public function that took them); nothing here checks them again.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .options import AGGREGATIONS
from .validation import check_weights


def apply_empty(values: Tensor, is_empty: Tensor, empty: str) -> Tensor:
    """Replace the value of every query whose ideal score is 0.

    ``"zero"`` → 0, ``"one"`` → 1, ``"skip"`` → NaN (left out by :func:`reduce`),
    ``"error"`` → ValueError (this mode reads values, so it synchronises with the device).
    ``is_empty`` broadcasts against ``values`` (it may lack the trailing cutoff dimension).
    """
    if empty == "error":
        if bool(is_empty.any()):
            raise ValueError(
                "a query has no relevant item (its ideal DCG is 0) and empty='error'; "
                "choose empty='zero', 'one' or 'skip'"
            )
        return values
    fill = {"zero": 0.0, "one": 1.0, "skip": float("nan")}[empty]
    return torch.where(is_empty, fill, values)


def reduce(values: Tensor, reduction: str, *, cutoff_dim: bool = False) -> Tensor:
    """Combine per-query values over every query dimension.

    ``values`` has shape ``[...]`` or, with several cutoffs, ``[..., C]`` (``cutoff_dim``).
    NaN marks a skipped query: ``"mean"`` averages the others (0 when none is left, never
    NaN), ``"sum"`` ignores it, ``"none"`` returns it as NaN.
    """
    if reduction == "none":
        return values
    flat = values.reshape(-1, values.shape[-1]) if cutoff_dim else values.reshape(-1)
    if reduction == "sum":
        return flat.nansum(dim=0)
    return flat.nanmean(dim=0).nan_to_num(nan=0.0, posinf=math.inf, neginf=-math.inf)  # a mean over no query is 0


def weighted_reduce(values: Tensor, weights: Tensor, reduction: str) -> Tensor:
    """``Σ w·v / Σ w`` (``"mean"``) or ``Σ w·v`` (``"sum"``) over the queries of ``[..., C]`` values
    not skipped (NaN), with checked ``weights`` of the query shape ``[...]``; a mean of total weight
    0 is 0."""
    if reduction == "none":
        raise ValueError('sample_weight weighs the mean or sum over queries: it has no effect with reduction="none"')
    total, mass = weighted_sums(values, weights, torch.promote_types(values.dtype, weights.dtype))
    if reduction == "sum":
        return total
    return torch.where(mass > 0, total / mass, 0.0)


def weighted_sums(values: Tensor, weights: Tensor, dtype: torch.dtype | None = None) -> tuple[Tensor, Tensor]:
    """``[C]`` sums ``Σ w·v`` and ``Σ w`` over the queries of ``[..., C]`` values that are not
    skipped (NaN), for ``weights`` of the query shape ``[...]``, in ``dtype`` (default: the values')."""
    flat = values.reshape(-1, values.shape[-1]).to(dtype or values.dtype)
    weight = weights.reshape(-1, 1).to(flat.dtype).expand_as(flat)
    kept = ~torch.isnan(flat)
    return torch.where(kept, flat * weight, 0.0).sum(0), torch.where(kept, weight, 0.0).sum(0)


def reduce_queries(
    values: Tensor, many: bool, reduction: str, sample_weight: Tensor | None = None, validate: bool = True
) -> Tensor:
    """Reduce ``[..., C]`` per-query values, weighted by ``sample_weight`` of the query shape
    (checked here; its values only with ``validate``); a single cutoff (``many=False``) drops the C axis."""
    if sample_weight is not None:
        check_weights("sample_weight", sample_weight, values.shape[:-1], None, validate)
        reduced = weighted_reduce(values, sample_weight, reduction)
        return reduced if many else reduced.squeeze(-1)
    if not many:
        values = values.squeeze(-1)
    return reduce(values, reduction, cutoff_dim=many)


def _median(values: Tensor, dim: int | None = None) -> Tensor:
    return values.median()  # the lower of the two middle values, as torch and torchmetrics


def _min(values: Tensor, dim: int | None = None) -> Tensor:
    return values.min()


def _max(values: Tensor, dim: int | None = None) -> Tensor:
    return values.max()


def _mean(values: Tensor, dim: int | None = None) -> Tensor:
    return values.mean()


_AGGREGATIONS: dict[str, Callable[..., Tensor]] = dict(zip(AGGREGATIONS, (_mean, _median, _min, _max)))


def resolve_aggregation(aggregation: object) -> Callable[..., Tensor]:
    """torchmetrics' ``aggregation``: ``"mean"``, ``"median"``, ``"min"``, ``"max"`` or a callable
    ``f(values, dim=None)`` of the 1-D per-query values, returning a scalar tensor."""
    if callable(aggregation):
        return aggregation
    if isinstance(aggregation, str) and aggregation in _AGGREGATIONS:
        return _AGGREGATIONS[aggregation]
    raise ValueError(f"aggregation must be one of {tuple(AGGREGATIONS)} or a callable, got {aggregation!r}")


def aggregate_columns(values: Tensor, aggregation: Callable[..., Tensor]) -> Tensor:
    """``[Q, C]`` per-query values (NaN = skipped) → ``[C]``, ``aggregation`` of each cutoff's
    values that are not skipped (0 when none is left, as a mean over no query)."""
    results = []
    for column in values.unbind(-1):
        kept = column[~torch.isnan(column)]
        if kept.numel() == 0:
            results.append(column.new_zeros(()))
            continue
        result = torch.as_tensor(aggregation(kept, dim=None), dtype=column.dtype, device=column.device)
        if result.numel() != 1:
            raise ValueError(f"aggregation must return one value per cutoff, got shape {tuple(result.shape)}")
        results.append(result.reshape(()))
    return torch.stack(results)
