"""The dense layout: ``[..., N]`` lists, one query per row, ranked along the last axis.

:func:`prepare` checks and normalises the inputs, :func:`rank` orders every row into its
first ``depth`` ranks with tie-group statistics, and :class:`DenseQueries` answers the
engine's questions (:class:`~torch_ndcg.engine.RankedQueries`). Everything is a handful of
tensor kernels on the inputs' device, with no Python loop over queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from . import definitions as d
from .definitions import Cutoffs, sum_to_cutoffs
from .ordering import TopRanks, top_ranks, top_values
from .rank_statistics import RankStatistics
from .registered_checks import register_check
from .validation import (
    as_float_scores,
    check_list_length,
    check_mask,
    check_relevance_dtype,
    check_relevance_values,
    check_gain_values,
    check_same_device,
    check_same_shape,
    check_score_values,
    check_tensor,
    check_weighted_gains,
    check_weights,
    warn_if_swapped,
)


@dataclass(frozen=True)
class DenseLists:
    """Checked dense inputs in the compute dtype, with padding neutralised."""

    scores: Tensor  # -inf at masked items
    gains: Tensor  # 0 at masked items
    relevance: Tensor  # 0 at masked items
    gains_nonnegative: bool  # the built-in gains of labels ≥ 0 (a callable gain may be negative)
    threshold: float | None = None  # the binary metrics' relevance threshold (None: > 0)
    retrieved: Tensor | None = None  # bool, False at unretrieved (-inf) items; None: every item is ranked

    def is_relevant(self) -> Tensor:
        return d.is_relevant(self.relevance, self.threshold)

    @property
    def dtype(self) -> torch.dtype:
        return self.gains.dtype

    @property
    def length(self) -> int:
        return self.scores.shape[-1]


def check_layout(scores: Tensor, relevance: Tensor, mask: Tensor | None) -> torch.dtype:
    """The checks of ``scores``/``relevance``/``mask`` that read no value (types, shapes, list
    length); returns the compute dtype."""
    check_tensor("scores", scores)
    check_relevance_dtype("relevance", relevance)
    check_same_shape("scores", scores, "relevance", relevance)
    check_list_length("scores", scores)
    check_mask(mask, scores.shape)
    check_same_device("scores", scores, "relevance", relevance)
    check_same_device("scores", scores, "mask", mask)
    return d.compute_dtype(scores, relevance)


def prepare(
    scores: Tensor,
    relevance: Tensor,
    mask: Tensor | None,
    gain: d.Gain,
    validate: bool,
    *,
    weights: Tensor | None = None,
    threshold: float | None = None,
    unretrieved: bool = False,
) -> DenseLists:
    """Check ``scores``/``relevance``/``mask`` ``[..., N]`` and compute the gains (times ``weights``).

    Shape and dtype are always checked; values (NaN scores, negative labels, exp2 overflow,
    bad callable gains) only with ``validate``. With ``unretrieved``, a ``-inf`` score marks an
    item that is never ranked but still counts in the ideal DCG and in R.
    """
    float_scores = check(scores, relevance, mask, gain, validate, weights=weights, unretrieved=unretrieved)
    dtype = d.compute_dtype(scores, relevance, weights)
    if mask is not None:
        # where(), not multiplication: masked labels may be NaN or negative.
        relevance = torch.where(mask, relevance, torch.zeros_like(relevance))
        float_scores = float_scores.masked_fill(~mask, -torch.inf)
    real_relevance = relevance.to(dtype)
    gains = d.gains(real_relevance, gain, dtype)
    if validate and callable(gain):
        check_gain_values(gains, mask)
    if weights is not None:
        check_weights("weights", weights, scores.shape, mask, validate)
        gains = gains * weights.to(dtype)
        if validate:
            check_weighted_gains(gains, mask)
    if mask is not None:
        # A callable gain may give label 0 a non-zero gain: padding must still add nothing.
        gains = torch.where(mask, gains, torch.zeros_like(gains))
    retrieved = float_scores > -torch.inf if unretrieved else None
    return DenseLists(
        float_scores, gains, real_relevance, gains_nonnegative=isinstance(gain, str), threshold=threshold,
        retrieved=retrieved,
    )


def check(
    scores: Tensor, relevance: Tensor, mask: Tensor | None, gain: d.Gain, validate: bool,
    *, weights: Tensor | None = None, unretrieved: bool = False,
) -> Tensor:
    """The checks of :func:`prepare` that need no gains (those of a callable gain's values and of
    ``weights`` stay there); returns the scores as floats (:func:`~torch_ndcg.validation.as_float_scores`).
    ``weights`` only widen the compute dtype, against which exp2 gains are checked."""
    check_layout(scores, relevance, mask)
    float_scores = as_float_scores("scores", scores)
    if validate:
        dtype = d.compute_dtype(scores, relevance, weights)
        if isinstance(gain, str):  # one registered operator under torch.compile and torch.export
            return _validated(float_scores, relevance, mask, gain, dtype, unretrieved)
        _check_and_warn(float_scores, relevance, mask, gain, dtype, unretrieved)
    return float_scores


def _check_and_warn(
    float_scores: Tensor, relevance: Tensor, mask: Tensor | None, gain: d.Gain, dtype: torch.dtype, unretrieved: bool
) -> None:
    label_range = check_values(float_scores, relevance, mask, gain, dtype, unretrieved=unretrieved)
    warn_if_swapped(float_scores, relevance, mask, label_range=label_range)


_validated = register_check(
    "check_metric_values",
    "Tensor scores, Tensor relevance, Tensor? mask, str gain, ScalarType dtype, bool unretrieved",
    _check_and_warn,
)


def check_values(
    float_scores: Tensor, relevance: Tensor, mask: Tensor | None, gain: d.Gain, dtype: torch.dtype,
    *, unretrieved: bool = False,
) -> tuple[float, float] | None:
    """The value checks of :func:`prepare` (NaN scores, negative labels, exp2 overflow); each
    synchronises. Returns the range of float labels read (:func:`~torch_ndcg.validation.check_relevance_values`)."""
    check_score_values("scores", float_scores, mask, unretrieved=unretrieved)
    label_range = check_relevance_values("relevance", relevance, mask)
    if mask is None:
        d.check_exp2_range(relevance, gain, dtype, float_scores.shape[-1])
    else:  # each label against its own list's real length, not the padded one
        d.check_exp2_range(relevance[mask], gain, dtype, mask.sum(-1, keepdim=True).expand_as(mask)[mask])
    return label_range


def queries(
    scores: Tensor,
    relevance: Tensor,
    cutoffs: Cutoffs,
    *,
    mask: Tensor | None,
    gain: d.Gain,
    ties: str,
    hits: bool,
    validate: bool,
    weights: Tensor | None = None,
    threshold: float | None = None,
    unretrieved: bool = False,
) -> DenseQueries:
    """Dense ``[..., N]`` lists checked (:func:`prepare`) and ranked (:func:`rank`) as deep as the
    cutoffs reach: what :func:`torch_ndcg.engine.evaluate` takes."""
    lists = prepare(scores, relevance, mask, gain, validate, weights=weights, threshold=threshold, unretrieved=unretrieved)
    return DenseQueries(rank(lists, depth_of(cutoffs, lists.length), ties, hits=hits, validate=validate), lists)


def may_read_values(tensor: Tensor, validate: bool) -> bool:
    """Whether a ranking shortcut may read a value on the host.

    On CPU that costs nothing, so every shortcut is taken whatever ``validate`` says; on an
    accelerator it is a synchronisation, which ``validate=False`` promises never to make; under
    ``torch.compile`` a value read would be a data-dependent branch.
    """
    return (validate or tensor.is_cpu) and not torch.compiler.is_compiling()


def rank(lists: DenseLists, depth: int, ties: str, *, hits: bool, validate: bool) -> RankStatistics:
    """Rank statistics of the first ``depth`` ranks of every list.

    ``ties="average"`` keeps tie groups (skipped when the top ``depth`` scores are known to be
    distinct: the group statistics are a dozen small kernels that dominate small batches);
    ``"first"`` breaks ties by index; ``"worst"`` and ``"best"`` by ascending and descending
    value of what the metric sums: the relevance, which orders the hits (``hits=True``), or the
    gains times the per-item weights (``hits=False``, gain-only metrics, which do not need the
    relevant-item statistics). Ordering weighted gains by relevance let an item of equal label
    but larger weight come first under "worst", above the "average" value.
    """
    item_hits = lists.is_relevant().to(lists.dtype) if hits else None
    gains = lists.gains
    if lists.retrieved is not None:  # an unretrieved item gains nothing where it lands (after the ranked ones)
        gains = torch.where(lists.retrieved, gains, torch.zeros_like(gains))
        item_hits = None if item_hits is None else torch.where(lists.retrieved, item_hits, torch.zeros_like(item_hits))
    if ties != "average":
        summed = lists.relevance if hits else gains  # (hits follow the relevance; weighted gains need not)
        ranks = top_ranks(lists.scores, depth, tie_break=_tie_priority(summed, ties))
        return _ordered(gains, item_hits, ranks.index)
    ranks = top_ranks(lists.scores, depth, find_ties=may_read_values(lists.scores, validate))
    if ranks.distinct:
        return _ordered(gains, item_hits, ranks.index)
    return _tie_groups(gains, item_hits, ranks, depth)


@dataclass(frozen=True)
class DenseQueries:
    """Dense lists and their rank statistics: the dense answer to :class:`~torch_ndcg.engine.RankedQueries`."""

    ranks: RankStatistics  # [..., depth]
    lists: DenseLists

    def sums(self, terms: Tensor, cutoffs: Cutoffs) -> Tensor:
        return sum_to_cutoffs(terms, cutoffs)

    def discounts(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        return d.discounts(self.ranks.position.shape[-1], discount, self.lists.dtype, self.lists.scores.device)

    def ideal(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        return ideal_dcg(self.lists, cutoffs, discount)

    def relevant(self) -> Tensor:
        return self.lists.is_relevant().sum(-1, keepdim=True).to(self.lists.dtype)

    def listed(self) -> Tensor:
        return (self.lists.scores > -torch.inf).sum(-1, keepdim=True).to(self.lists.dtype)


def depth_of(cutoffs: Cutoffs, length: int) -> int:
    """The deepest rank any cutoff reaches in lists of ``length`` items."""
    return max(d.clip_cutoff(k, length) for k in cutoffs)


def ideal_dcg(lists: DenseLists, cutoffs: Cutoffs, discount: d.Discount) -> Tensor:
    """``[..., C]`` IDCG@k: each list's gains in decreasing order, discounted and summed."""
    depth = depth_of(cutoffs, lists.length)
    best = top_values(lists.gains, depth, nonnegative=lists.gains_nonnegative)
    return sum_to_cutoffs(best * d.discounts(depth, discount, lists.dtype, lists.scores.device), cutoffs)


def _tie_priority(values: Tensor, ties: str) -> Tensor:
    """Larger priority ranks first among equal scores: ``values`` ascending for "worst"."""
    if ties == "first":
        n = values.shape[-1]
        return -torch.arange(n, device=values.device, dtype=values.dtype).expand_as(values)
    return -values if ties == "worst" else values


def _group_sums(group_id: Tensor, values: Tensor, slot_group: Tensor) -> Tensor:
    """The sum of ``values`` over the slots of each ``group_id``, for the groups ``slot_group``."""
    sums = torch.zeros_like(values).scatter_add_(-1, group_id, values)
    return sums.gather(-1, slot_group)


def _exclusive_cumsum(values: Tensor) -> Tensor:
    return torch.cumsum(values, dim=-1) - values


def _tie_groups(gains: Tensor, hits: Tensor | None, ranks: TopRanks, depth: int | None = None) -> RankStatistics:
    """Tie-group statistics of the first ``depth`` (default: all) ranked items, whose tied
    members come in any order."""
    values, index, keys = ranks.top_keys, ranks.index, ranks.keys
    depth = values.shape[-1] if depth is None else depth
    width = values.shape[-1]  # (more than depth when the ranks hold whole groups)
    top_gains = gains.gather(-1, index)
    new_group = group_id = ranks.group
    if group_id is None or hits is not None:
        new_group = torch.ones_like(values, dtype=torch.bool)
        new_group[..., 1:] = values[..., 1:] != values[..., :-1]
    if group_id is None:
        group_id = torch.cumsum(new_group, dim=-1) - 1
    slot_group = group_id if width == depth else group_id[..., :depth]
    group_gain = _group_sums(group_id, top_gains, slot_group)
    group_size = _group_sums(group_id, torch.ones_like(top_gains), slot_group)
    top_hits = group_hits = hits_before = None
    if hits is not None:
        top_hits = hits.gather(-1, index)
        group_hits = _group_sums(group_id, top_hits, slot_group)
    if not ranks.whole_groups and width < keys.shape[-1]:
        # The last group may continue past the cutoff: count all of its members in the row.
        threshold = values[..., -1:]
        at_threshold = (keys == threshold).to(gains.dtype)
        in_last = values == threshold
        group_gain = torch.where(in_last, (gains * at_threshold).sum(-1, keepdim=True), group_gain)
        group_size = torch.where(in_last, at_threshold.sum(-1, keepdim=True), group_size)
        if hits is not None:
            group_hits = torch.where(in_last, (hits * at_threshold).sum(-1, keepdim=True), group_hits)
    position = torch.arange(depth, device=values.device, dtype=gains.dtype).expand(slot_group.shape)
    group_start = None
    if top_hits is not None:
        # Each group's first slot, looked up by group id; non-first slots write to a spare
        # column (a scatter + gather is several times faster than cummax on CPU).
        slots = torch.arange(width, device=values.device).expand(values.shape)
        first_slot = torch.zeros(*values.shape[:-1], width + 1, dtype=torch.long, device=values.device)
        first_slot.scatter_(-1, torch.where(new_group, group_id, width), slots)
        group_start = first_slot.gather(-1, slot_group)
        hits_before = _exclusive_cumsum(top_hits).gather(-1, group_start)
        group_start = group_start.to(gains.dtype)
    return RankStatistics(
        position=position,
        group_gain=group_gain,
        group_size=group_size,
        group_hits=group_hits,
        group_start=group_start,
        hits_before=hits_before,
    )


def _ordered(gains: Tensor, hits: Tensor | None, index: Tensor) -> RankStatistics:
    """Statistics of the items ``index`` in that order, one item per tie group."""
    slot_gains = gains.gather(-1, index)
    slot_hits = None if hits is None else hits.gather(-1, index)
    # Broadcast views, not copies: small batches pay per kernel, not per element.
    position = torch.arange(index.shape[-1], dtype=gains.dtype, device=gains.device).expand(index.shape)
    return RankStatistics(
        position=position,
        group_gain=slot_gains,
        group_size=torch.ones((), dtype=gains.dtype, device=gains.device).expand(index.shape),
        group_hits=slot_hits,
        group_start=position,
        hits_before=None if slot_hits is None else _exclusive_cumsum(slot_hits),
    )
