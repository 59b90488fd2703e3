"""Per-query values kept with their query ids, so that a metric class counts each query once.

``torch.utils.data.DistributedSampler`` pads the dataset by repeating samples until every rank
gets as many; a metric that sums per-query values then counts the repeated queries twice, and
the number depends on the world size. With an id per query the class keeps, per query, its
values (one per cutoff) and its id instead of a running sum; ``compute()`` gathers them from
every rank and keeps one value per id, whichever rank saw it and however often. The same id
with values that differ by more than :data:`RELATIVE_TOLERANCE` is not a repeat but two
different queries (or one query split across ranks): a ``ValueError`` naming the id.

Flat rows (``indexes=``) are evaluated on the rank that holds them when the ranks synchronise,
so only per-query values and ids travel; a query may span batches on one rank, not ranks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .validation import check_ids

RELATIVE_TOLERANCE = 1e-6


def add_states(metric: Any, cutoffs: int, tag: str) -> None:
    """The keyed states: per-query values ``[q, C]`` float64 and ids ``[q]`` int64, and a mark
    per rank that could not evaluate its flat rows (all gathered across ranks; lists, so that a
    metric without ids keeps no byte more). Their names
    carry the metric's configuration ``tag``: values are results, and ``MetricCollection`` must
    not share them between differently configured metrics that agree on a first batch."""
    metric._keyed = (f"keyed_values_{tag}", f"keyed_ids_{tag}", f"keyed_failed_{tag}")
    metric.add_state(metric._keyed[0], [], dist_reduce_fx="cat")
    metric.add_state(metric._keyed[1], [], dist_reduce_fx="cat")
    metric.add_state(metric._keyed[2], [], dist_reduce_fx="cat")
    metric._keyed_cutoffs = cutoffs


def kept(metric: Any) -> tuple[list[Tensor], list[Tensor]]:
    """The per-query values and ids a metric keeps (on this rank, or gathered after a sync)."""
    return _parts(getattr(metric, metric._keyed[0])), _parts(getattr(metric, metric._keyed[1]))


def keep(metric: Any, values: Tensor, query_ids: Tensor, rows: tuple[int, ...], sample_weight: Tensor | None) -> None:
    """Keep the per-query ``values`` ``[..., C]`` of a dense batch with one id per row (``rows``
    is the batch's row shape)."""
    check_ids("query_ids", query_ids)
    if tuple(query_ids.shape) != tuple(rows):
        raise ValueError(
            f"query_ids must hold one id per row of scores, shape {tuple(rows)}, got {tuple(query_ids.shape)}"
        )
    if sample_weight is not None:
        raise ValueError("sample_weight weighs the running mean of rows without ids; it cannot be given with query_ids")
    getattr(metric, metric._keyed[0]).append(values.reshape(-1, metric._keyed_cutoffs).to(torch.float64))
    getattr(metric, metric._keyed[1]).append(query_ids.reshape(-1).long().to(values.device))


def fold_rows(metric: Any, row_values: Callable[[], tuple[Tensor, Tensor] | None], row_states: tuple[str, ...]) -> None:
    """Before the ranks synchronise: this rank's flat rows become per-query values with ids
    (``row_values``), and the row states are emptied, so ranks exchange queries, not items.

    A rank whose rows fail to evaluate (a bad label, say) still takes part in the exchange, so
    no rank waits forever; the error is raised after it, on every rank (see :func:`distinct`)."""
    values_name, ids_name, failed_name = metric._keyed
    values, ids = kept(metric)
    failed = False
    try:
        evaluated = row_values()
    except (ValueError, TypeError) as error:
        metric._keyed_error, evaluated, failed = error, None, True
    setattr(metric, failed_name, [torch.ones(int(failed), device=metric.device)])
    if evaluated is not None:
        values.append(evaluated[0].to(torch.float64))
        ids.append(evaluated[1].long())
    for name in row_states:
        setattr(metric, name, [])
    if not sum(part.shape[0] for part in ids):
        # torchmetrics stands in a 1-D tensor of the metric's dtype for an empty list state.
        values = [torch.empty(0, metric._keyed_cutoffs, dtype=torch.float64, device=metric.device)]
        ids = [torch.empty(0, dtype=torch.long, device=metric.device)]
    setattr(metric, values_name, values)
    setattr(metric, ids_name, ids)


def distinct(metric: Any, rows: tuple[Tensor, Tensor] | None) -> Tensor | None:
    """``[Q, C]`` values of every query id seen (kept, and the flat ``rows`` evaluated now), one
    per id; ``None`` when there is none. Raises ``ValueError`` for an id whose values disagree."""
    if sum(part.numel() for part in _parts(getattr(metric, metric._keyed[2]))):
        error = getattr(metric, "_keyed_error", None)
        metric._keyed_error = None
        raise error or ValueError("another rank could not evaluate its flat rows: see that rank's error")
    values, ids = kept(metric)
    if rows is not None:
        values.append(rows[0].to(torch.float64))
        ids.append(rows[1].long())
    if not ids or not sum(part.numel() for part in ids):
        return None
    values = torch.cat([v.reshape(-1, metric._keyed_cutoffs) for v in values])
    ids = torch.cat([i.reshape(-1) for i in ids]).to(values.device)
    ids, order = torch.sort(ids, stable=True)
    values = values.index_select(0, order)
    start = torch.ones_like(ids, dtype=torch.bool)
    start[1:] = ids[1:] != ids[:-1]
    first = torch.where(start, torch.arange(ids.shape[0], device=ids.device), 0).cummax(0).values
    reference = values.index_select(0, first)
    agree = torch.isclose(values, reference, rtol=RELATIVE_TOLERANCE, atol=0.0, equal_nan=True).all(-1)
    if not bool(agree.all()):
        bad = int((~agree).nonzero()[0, 0])
        raise ValueError(
            f"query id {int(ids[bad])} has values that differ by more than {RELATIVE_TOLERANCE:g} (relative): "
            f"{reference[bad].tolist()} and {values[bad].tolist()}; an id must name one query, seen whole "
            "(a query split across ranks or batches of dense rows is not supported)"
        )
    return values[start]


def _parts(state: list[Tensor] | Tensor) -> list[Tensor]:
    """A list state's tensors (after a synchronisation it is one concatenated tensor)."""
    return list(state) if isinstance(state, list) else [state]

