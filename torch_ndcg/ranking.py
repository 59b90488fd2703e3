"""Rank dense ``[..., N]`` lists into their first ``depth`` slots, tie-aware, without a Python loop.

When ``depth`` is smaller than ``N`` only ``topk`` is used: every item scored above the
``depth``-th largest score is among the top ``depth``, and the one tie group that straddles the
cutoff is summarised by a single pass over the row (its size, gain and relevant count), so
the result never depends on which tied members ``topk`` happened to return.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .selection import HostSort, has_ties, top, top_scores
from .slots import Slots


def _group_sums(group_id: Tensor, values: Tensor) -> Tensor:
    """For each slot, the sum of ``values`` over the slots sharing its ``group_id``."""
    sums = torch.zeros_like(values).scatter_add_(-1, group_id, values)
    return sums.gather(-1, group_id)


def _exclusive_cumsum(values: Tensor) -> Tensor:
    return torch.cumsum(values, dim=-1) - values


def _positions(like: Tensor) -> Tensor:
    return torch.arange(like.shape[-1], device=like.device).expand_as(like)


def rank_slots(
    scores: Tensor,
    gains: Tensor,
    hits: Tensor | None,
    relevance: Tensor,
    depth: int,
    ties: str,
    *,
    may_sync: bool = False,
    presorted: HostSort | None = None,
) -> Slots:
    """Slots ``0..depth-1`` of every list.

    ``scores`` must already hold ``-inf`` at masked positions (and only there), and ``gains``,
    ``hits`` and ``relevance`` must be 0 there, so padding ranks last and contributes nothing.
    ``ties="average"`` keeps tie groups; ``"first"``, ``"worst"`` and ``"best"`` break them by
    index, ascending relevance and descending relevance respectively (gains and hits are
    functions of relevance, so the order inside equal relevance cannot matter).
    ``hits=None`` leaves the relevant-item statistics out, for metrics that only need gains.
    ``may_sync=True`` allows reading one value on the host: with ``ties="average"``, when no two
    of the top ``depth + 1`` scores are equal every group has one member, and the tie-group
    statistics (a dozen small kernels, which dominate on small batches) are skipped.
    ``presorted`` is :func:`~torch_ndcg.selection.host_sort` of ``scores`` where the caller has it.
    """
    # One more slot where the tie check runs: a tie between the last slot and the next one
    # crosses the cutoff.
    check_ties = ties == "average" and may_sync and depth < scores.shape[-1]
    scores, values, index = top_scores(scores, depth + check_ties, presorted=presorted)  # keys: order, equality
    if ties != "average":
        return _broken_slots(scores, gains, hits, relevance, values, index, ties)
    if may_sync and not has_ties(values):
        return _ordered_slots(gains, hits, index[..., :depth])
    return _average_slots(scores, gains, hits, values[..., :depth], index[..., :depth])


def _average_slots(scores: Tensor, gains: Tensor, hits: Tensor | None, values: Tensor, index: Tensor) -> Slots:
    """Tie-group slots from the top ``depth`` ``values`` of ``scores`` (descending) and their ``index``."""
    depth = values.shape[-1]
    top_gains = gains.gather(-1, index)
    new_group = torch.ones_like(values, dtype=torch.bool)
    new_group[..., 1:] = values[..., 1:] != values[..., :-1]
    group_id = torch.cumsum(new_group, dim=-1) - 1
    group_gain = _group_sums(group_id, top_gains)
    group_size = _group_sums(group_id, torch.ones_like(top_gains))
    top_hits = group_hits = hits_before = None
    if hits is not None:
        top_hits = hits.gather(-1, index)
        group_hits = _group_sums(group_id, top_hits)
    if depth < scores.shape[-1]:
        # The last group may continue past the cutoff: count all of its members in the row.
        threshold = values[..., -1:]
        at_threshold = (scores == threshold).to(gains.dtype)
        in_last = values == threshold
        group_gain = torch.where(in_last, (gains * at_threshold).sum(-1, keepdim=True), group_gain)
        group_size = torch.where(in_last, at_threshold.sum(-1, keepdim=True), group_size)
        if hits is not None:
            group_hits = torch.where(in_last, (hits * at_threshold).sum(-1, keepdim=True), group_hits)
    position = _positions(values)
    group_start = None
    if top_hits is not None:
        # Each group's first slot, looked up by group id; non-first slots write to a spare
        # column (a scatter + gather is several times faster than cummax on CPU).
        first_slot = torch.zeros(*values.shape[:-1], depth + 1, dtype=position.dtype, device=values.device)
        first_slot.scatter_(-1, torch.where(new_group, group_id, depth), position)
        group_start = first_slot.gather(-1, group_id)
        hits_before = _exclusive_cumsum(top_hits).gather(-1, group_start)
        group_start = group_start.to(gains.dtype)
    return Slots(
        position=position.to(gains.dtype),
        group_gain=group_gain,
        group_size=group_size,
        group_hits=group_hits,
        group_start=group_start,
        hits_before=hits_before,
    )


def _tie_priority(relevance: Tensor, ties: str) -> Tensor:
    """Larger priority ranks first among equal scores."""
    if ties == "first":
        n = relevance.shape[-1]
        return -torch.arange(n, device=relevance.device, dtype=relevance.dtype).expand_as(relevance)
    return -relevance if ties == "worst" else relevance


def _broken_slots(
    scores: Tensor, gains: Tensor, hits: Tensor | None, relevance: Tensor, values: Tensor, index: Tensor, ties: str
) -> Slots:
    """Slots in tie-rule order from the top ``values`` of ``scores`` (descending) and their ``index``."""
    depth = values.shape[-1]
    priority = _tie_priority(relevance, ties)
    # Order the selected items exactly: priority first, then a stable sort by score.
    by_priority = torch.sort(priority.gather(-1, index), dim=-1, descending=True, stable=True).indices
    index = index.gather(-1, by_priority)
    by_score = torch.sort(values.gather(-1, by_priority), dim=-1, descending=True, stable=True).indices
    index = index.gather(-1, by_score)
    if depth < scores.shape[-1]:
        # Which members of the straddling tie group made the cut must follow the tie rule,
        # not topk's arbitrary choice: take that group's members by priority instead.
        threshold = values[..., -1:]
        above = (values > threshold).sum(-1, keepdim=True)
        in_group = scores == threshold
        group_priority = torch.where(in_group, priority, torch.full_like(priority, -torch.inf))
        group_index = top(group_priority, depth)[1]
        position = _positions(index)
        from_group = group_index.gather(-1, (position - above).clamp(min=0))
        index = torch.where(position < above, index, from_group)
    return _ordered_slots(gains, hits, index)


def _ordered_slots(gains: Tensor, hits: Tensor | None, index: Tensor) -> Slots:
    """Slots holding the items ``index`` in that order, one item per tie group."""
    slot_gains = gains.gather(-1, index)
    slot_hits = None if hits is None else hits.gather(-1, index)
    # Broadcast views, not copies: small batches pay per kernel, not per element.
    position = torch.arange(index.shape[-1], dtype=gains.dtype, device=gains.device).expand(index.shape)
    return Slots(
        position=position,
        group_gain=slot_gains,
        group_size=torch.ones((), dtype=gains.dtype, device=gains.device).expand(index.shape),
        group_hits=slot_hits,
        group_start=position,
        hits_before=None if slot_hits is None else _exclusive_cumsum(slot_hits),
    )
