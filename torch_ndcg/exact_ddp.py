"""Per-query values kept with their query ids, so that a metric class counts each query once.

``torch.utils.data.DistributedSampler`` pads the dataset by repeating samples until every rank
gets as many; a metric that sums per-query values then counts the repeated queries twice, and
the number depends on the world size. With an id per query the class keeps, per query, its
values (one per cutoff) and its id instead of a running sum; ``compute()`` gathers them from
every rank and keeps one value per id, whichever rank saw it and however often. A repeat is the
same query seen whole again: each query also carries its number of items and a checksum of its
labels, so the same id with other items, or with values that differ by more than
:data:`RELATIVE_TOLERANCE`, is not a repeat but two different queries (or one query split across
ranks, even when its parts happen to score the same): a ``ValueError`` naming the id. (Parts with
as many items and the same labels look like a repeat: the checksum sees labels, not items.)

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
    """The keyed states: per-query values ``[q, C]`` float64, ids ``[q]`` int64 and contents
    ``[q, 2]`` int64 (see :func:`contents`), and a mark per rank that could not evaluate its flat
    rows (all gathered across ranks; lists, so that a metric without ids keeps no byte more).
    Their names carry the metric's configuration ``tag``: values are results, and
    ``MetricCollection`` must not share them between differently configured metrics that agree
    on a first batch."""
    metric._keyed = tuple(f"keyed_{kind}_{tag}" for kind in ("values", "ids", "contents", "failed"))
    for name in metric._keyed:
        metric.add_state(name, [], dist_reduce_fx="cat")
    metric._keyed_cutoffs = cutoffs


def kept(metric: Any) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
    """The per-query values, ids and contents a metric keeps (on this rank, or gathered after a sync)."""
    return tuple(_parts(getattr(metric, name)) for name in metric._keyed[:3])  # type: ignore[return-value]


# Checksum arithmetic modulo the prime 2**31 - 1: every product stays below 2**62 and a sum of
# up to 2**32 items' terms below 2**63, so int64 never overflows and any order of summation
# gives the same bits on every rank and device.
_PRIME = 2**31 - 1


def contents(relevance: Tensor, query: Tensor, queries: int) -> Tensor:
    """``[queries, 2]`` int64: each query's number of items and a checksum of its labels (in any
    order; labels compared as float32), for items of labels ``relevance`` ``[n]`` in queries
    ``query`` ``[n]`` (``0 .. queries - 1``)."""
    bits = relevance.to(torch.float32).add(0.0).view(torch.int32).to(torch.int64)  # (+ 0.0: -0.0 is 0.0)
    term = (bits % _PRIME * 48271 + 11) % _PRIME
    term = (term * term + bits) % _PRIME
    found = torch.zeros(queries, 2, dtype=torch.int64, device=relevance.device)
    found.index_put_((query, torch.zeros_like(query)), torch.ones_like(term), accumulate=True)
    found.index_put_((query, torch.ones_like(query)), term, accumulate=True)
    return found


def keep(
    metric: Any, values: Tensor, query_ids: Tensor, relevance: Tensor, mask: Tensor | None, sample_weight: Tensor | None
) -> None:
    """Keep the per-query ``values`` ``[..., C]`` of a dense batch with one id per row, and the
    contents of its rows (``relevance`` ``[..., N]``, real items where ``mask``)."""
    check_ids("query_ids", query_ids)
    rows = tuple(relevance.shape[:-1])
    if tuple(query_ids.shape) != rows:
        raise ValueError(f"query_ids must hold one id per row of scores, shape {rows}, got {tuple(query_ids.shape)}")
    if sample_weight is not None:
        raise ValueError("sample_weight weighs the running mean of rows without ids; it cannot be given with query_ids")
    labels = relevance.reshape(-1, relevance.shape[-1])
    row = torch.arange(labels.shape[0], device=labels.device).unsqueeze(-1).expand_as(labels)
    real = torch.ones_like(labels, dtype=torch.bool) if mask is None else mask.reshape(labels.shape)
    values_name, ids_name, contents_name = metric._keyed[:3]
    getattr(metric, values_name).append(values.reshape(-1, metric._keyed_cutoffs).to(torch.float64))
    getattr(metric, ids_name).append(query_ids.reshape(-1).long().to(values.device))
    getattr(metric, contents_name).append(contents(labels[real], row[real], labels.shape[0]).to(values.device))


def fold_rows(
    metric: Any, row_values: Callable[[], tuple[Tensor, Tensor, Tensor] | None], row_states: tuple[str, ...]
) -> None:
    """Before the ranks synchronise: this rank's flat rows become per-query values with ids
    (``row_values``: values, ids and contents), and the row states are emptied, so ranks exchange
    queries, not items.

    A rank whose rows fail to evaluate (a bad label, say) still takes part in the exchange, so
    no rank waits forever; the error is raised after it, on every rank (see :func:`distinct`)."""
    failed_name = metric._keyed[3]
    keyed = kept(metric)
    failed = False
    try:
        evaluated = row_values()
    except (ValueError, TypeError) as error:
        metric._keyed_error, evaluated, failed = error, None, True
    setattr(metric, failed_name, [torch.ones(int(failed), device=metric.device)])
    if evaluated is not None:
        for parts, part in zip(keyed, evaluated):
            parts.append(part)
    for name in row_states:
        setattr(metric, name, [])
    if not sum(part.shape[0] for part in keyed[1]):
        # torchmetrics stands in a 1-D tensor of the metric's dtype for an empty list state.
        keyed = (
            [torch.empty(0, metric._keyed_cutoffs, dtype=torch.float64, device=metric.device)],
            [torch.empty(0, dtype=torch.long, device=metric.device)],
            [torch.empty(0, 2, dtype=torch.long, device=metric.device)],
        )
    for name, parts in zip(metric._keyed, keyed):
        setattr(metric, name, parts)


def distinct(metric: Any, rows: tuple[Tensor, Tensor, Tensor] | None) -> Tensor | None:
    """``[Q, C]`` values of every query id seen (kept, and the flat ``rows`` evaluated now: values,
    ids, contents), one per id; ``None`` when there is none. Raises ``ValueError`` for an id seen
    with other items or labels, or with values that disagree."""
    if sum(part.numel() for part in _parts(getattr(metric, metric._keyed[3]))):
        error = getattr(metric, "_keyed_error", None)
        metric._keyed_error = None
        raise error or ValueError("another rank could not evaluate its flat rows: see that rank's error")
    values, ids, found = kept(metric)
    if rows is not None:
        values.append(rows[0])
        ids.append(rows[1])
        found.append(rows[2])
    if not ids or not sum(part.numel() for part in ids):
        return None
    values = torch.cat([v.reshape(-1, metric._keyed_cutoffs).to(torch.float64) for v in values])
    ids = torch.cat([i.reshape(-1).long() for i in ids]).to(values.device)
    found = torch.cat([f.reshape(-1, 2).long() for f in found]).to(values.device)
    ids, order = torch.sort(ids, stable=True)
    values, found = values.index_select(0, order), found.index_select(0, order)
    start = torch.ones_like(ids, dtype=torch.bool)
    start[1:] = ids[1:] != ids[:-1]
    first = torch.where(start, torch.arange(ids.shape[0], device=ids.device), 0).cummax(0).values
    whole = (
        "an id must name one query, seen whole (a query split across ranks or batches of dense rows is not supported)"
    )
    reference = found.index_select(0, first)
    same = (found == reference).all(-1)
    if not bool(same.all()):
        bad = int((~same).nonzero()[0, 0])
        (n, _), (m, _) = reference[bad].tolist(), found[bad].tolist()
        items = f"{n} and {m} items" if n != m else f"{n} items each, with different labels"
        raise ValueError(f"query id {int(ids[bad])} is seen with different items ({items}); {whole}")
    reference = values.index_select(0, first)
    agree = torch.isclose(values, reference, rtol=RELATIVE_TOLERANCE, atol=0.0, equal_nan=True).all(-1)
    if not bool(agree.all()):
        bad = int((~agree).nonzero()[0, 0])
        raise ValueError(
            f"query id {int(ids[bad])} has values that differ by more than {RELATIVE_TOLERANCE:g} (relative): "
            f"{reference[bad].tolist()} and {values[bad].tolist()}; {whole}"
        )
    return values[start]


def _parts(state: list[Tensor] | Tensor) -> list[Tensor]:
    """A list state's tensors (after a synchronisation it is one concatenated tensor)."""
    return list(state) if isinstance(state, list) else [state]

