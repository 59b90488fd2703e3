"""The ranked layout (recommenders), and the ``torch_ndcg.ranked`` metrics: a recommended list of
item ids against a ground truth of ids.

A query is a ranked list ``ranked_ids[b]`` (best first) and a ground truth ``target_ids[b]`` with
``target_relevance[b]`` (or relevance 1 for every target: implicit feedback). Items of the truth
that were never recommended still count in the ideal DCG. A ranked list has no ties, so each
rank is one slot of a :class:`~torch_ndcg.rank_statistics.RankStatistics` with group size 1
and the dense layout's per-rank terms and conventions apply unchanged.

These are functions of their own (``tn.ranked.ndcg``, not a keyword of ``tn.ndcg``) because
their inputs are ids, not scores: a different contract deserves a different name, while each
metric keeps one name within the namespace.

Conventions:

* ``k=None`` is each list's own length (padding excluded, at least 1); the ideal ranking is cut
  at the same depth. An explicit ``k`` cuts both the list and the ideal ranking at ``k``, even
  for lists shorter than ``k`` (a short list is not given a smaller ideal, just as precision
  still divides by ``k``).
* A query is empty (``empty`` decides its value) only when its ground truth has nothing
  relevant, never because nothing was recommended: a user with relevant items and an empty
  recommended list scores 0 on every metric.
* A recommended id missing from the truth has gain 0.
* A duplicated id in one ranked list counts at its first position only; later copies keep their
  rank (the list is not shortened) but gain nothing and are not hits.
* ``pad_id`` marks padding in both tensors, at any position; padding in a ranked list is removed
  before ranking (``[A, pad, B]`` ranks ``B`` second).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from . import definitions as d
from . import engine
from .aggregation import reduce_queries
from .definitions import Cutoffs, sum_to_cutoffs
from .options import (
    DEFAULT_AP_NORMALISER,
    DEFAULT_DISCOUNT,
    DEFAULT_EMPTY,
    DEFAULT_GAIN,
    DEFAULT_REDUCTION,
    DEFAULT_SHORT_LIST,
    EMPTY,
    REDUCTIONS,
    ApNormaliser,
    Empty,
    Reduction,
    ShortList,
    document,
)
from .ordering import top_values
from .rank_statistics import RankStatistics
from .registered_checks import register_check
from .validation import (
    check_flag,
    check_gain_values,
    check_ids,
    check_list_length,
    check_option,
    check_pad_id,
    check_relevance_dtype,
    check_relevance_values,
    check_threshold,
    check_weighted_gains,
    check_weights,
    names_arguments,
)

__all__ = ["average_precision", "dcg", "from_lists", "hit_rate", "mrr", "ndcg", "precision", "recall"]


@dataclass(frozen=True)
class RankedLists:
    """Ranked lists looked up in their ground truth, flattened to ``[B, ...]`` in the compute dtype:
    the ranked answer to :class:`~torch_ndcg.engine.RankedQueries`."""

    ranks: RankStatistics  # [B, K]: rank r of list b holds its r-th real (non-pad) recommended item
    target_gains: Tensor  # [B, M], 0 at padding
    listed_items: Tensor  # [B, 1] real items in each ranked list
    relevant_targets: Tensor  # [B, 1] targets with relevance > 0
    batch_shape: torch.Size

    def sums(self, terms: Tensor, cutoffs: Cutoffs) -> Tensor:
        # Slots past a list's length hold nothing, so k=None (the list's length) sums every slot.
        return sum_to_cutoffs(terms, cutoffs)

    def discounts(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        gains = self.target_gains
        return d.discounts(self.ranks.position.shape[-1], discount, gains.dtype, gains.device)

    def ideal(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        # k=None cuts each row's ideal at its own list's length, at least 1: an empty list is
        # a failure to recommend, not a query with nothing to find.
        listed = self.listed_items.long().clamp(min=1)
        row_cutoffs = torch.cat([listed if k is None else torch.full_like(listed, k) for k in cutoffs], dim=-1)
        targets = self.target_gains.shape[-1]
        depth = min(targets, max(self.ranks.position.shape[-1] if k is None else k for k in cutoffs))
        gains = self.target_gains
        best = top_values(gains, depth) * d.discounts(depth, discount, gains.dtype, gains.device)
        # Per-row cutoffs: index a cumulative sum that starts with the empty sum.
        totals = torch.nn.functional.pad(torch.cumsum(best, dim=-1), (1, 0))
        return totals.gather(-1, row_cutoffs.clamp(max=depth))

    def relevant(self) -> Tensor:
        return self.relevant_targets

    def listed(self) -> Tensor:
        return self.listed_items


def _check_unique_targets(sorted_ids: Tensor, pad_id: int) -> None:
    """Two relevances for one item make the metric ambiguous (synchronises)."""
    same = (sorted_ids[..., 1:] == sorted_ids[..., :-1]) & (sorted_ids[..., 1:] != pad_id)
    if bool(same.any()):
        raise ValueError(
            "target_ids has an id twice in one row; each ground-truth item needs exactly one "
            "relevance (merge the duplicates, or pad them with pad_id)"
        )


def _check_values(
    relevance: Tensor, is_target: Tensor, target: Tensor, gain: d.Gain, dtype: torch.dtype, pad_id: int
) -> None:
    """The ground truth's value checks (synchronise): labels, exp2 range, one relevance per item."""
    check_relevance_values("target_relevance", relevance, is_target)
    d.check_exp2_range(relevance[is_target], gain, dtype)
    _check_unique_targets(torch.sort(target, dim=-1).values, pad_id)


_validated = register_check(
    "check_ranked_values",
    "Tensor relevance, Tensor is_target, Tensor target, str gain, ScalarType dtype, int pad_id",
    _check_values,
)


def prepare_ranked(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None,
    *,
    pad_id: int,
    gain: d.Gain,
    validate: bool,
    weights: Tensor | None = None,
    threshold: float | None = None,
) -> RankedLists:
    """Check the inputs and look every recommended id up in its row's ground truth.

    Targets are sorted once per row and found with a batched ``searchsorted``:
    O((K + M) log M) per row, never a ``[B, K, M]`` comparison.
    """
    check_ids("ranked_ids", ranked_ids)
    check_ids("target_ids", target_ids)
    pad_id = check_pad_id(pad_id)
    if ranked_ids.dim() < 1 or target_ids.dim() < 1:
        raise ValueError("ranked_ids and target_ids must have shape [..., K] and [..., M], got a scalar")
    if ranked_ids.shape[:-1] != target_ids.shape[:-1]:
        raise ValueError(
            "ranked_ids [..., K] and target_ids [..., M] must share their leading (query) dimensions, "
            f"got {tuple(ranked_ids.shape)} and {tuple(target_ids.shape)}"
        )
    check_list_length("ranked_ids", ranked_ids)
    if target_relevance is not None:
        check_relevance_dtype("target_relevance", target_relevance)
        if target_relevance.shape != target_ids.shape:
            raise ValueError(
                "target_relevance must have the shape of target_ids "
                f"{tuple(target_ids.shape)}, got {tuple(target_relevance.shape)}"
            )
    batch_shape = ranked_ids.shape[:-1]
    rows = batch_shape.numel()
    ranked = ranked_ids.reshape(rows, ranked_ids.shape[-1]).long()
    target = target_ids.reshape(rows, target_ids.shape[-1]).long()
    dtype = d.compute_dtype(target_relevance, weights)
    if target_relevance is None:
        relevance = torch.ones(target.shape, dtype=dtype, device=target.device)
    else:
        relevance = target_relevance.reshape(target.shape)
    if target.shape[-1] == 0:
        # No ground truth in any row: one padding column keeps the lookup well-defined.
        target = torch.full((target.shape[0], 1), pad_id, dtype=torch.long, device=target.device)
        relevance = torch.zeros(target.shape, dtype=dtype, device=target.device)
    is_target = target != pad_id
    if validate and isinstance(gain, str):  # one registered operator under torch.compile and torch.export
        relevance = _validated(relevance, is_target, target, gain, dtype, pad_id)
    elif validate:
        _check_values(relevance, is_target, target, gain, dtype, pad_id)
    relevance = torch.where(is_target, relevance.to(dtype), torch.zeros((), dtype=dtype, device=target.device))
    # where(), not multiplication: a callable gain may give label 0 (or padding) a non-zero gain.
    gains = torch.where(is_target, d.gains(relevance, gain, dtype), torch.zeros_like(relevance))
    if validate and callable(gain):
        check_gain_values(gains, is_target)
    if weights is not None:
        check_weights("weights", weights, target_ids.shape, target_ids != pad_id, validate)
        if target_ids.shape[-1]:  # (else the single padding column has gain 0 anyway)
            gains = torch.where(is_target, gains * weights.reshape(gains.shape).to(dtype), torch.zeros_like(gains))
            if validate:
                check_weighted_gains(gains, None)
    hits = d.is_relevant(relevance, threshold).to(dtype)  # padding has relevance 0, below any threshold

    sorted_ids, order = torch.sort(target, dim=-1)
    width = ranked.shape[-1]
    at = torch.searchsorted(sorted_ids, ranked).clamp(max=sorted_ids.shape[-1] - 1)
    is_item = ranked != pad_id
    found = is_item & (sorted_ids.gather(-1, at) == ranked)
    # Only the first copy of a recommended id earns its gain: the lowest column that found each target.
    column = torch.arange(width, device=ranked.device).expand_as(ranked)
    first_column = torch.full_like(sorted_ids, width).scatter_reduce_(
        -1, at, torch.where(found, column, width), reduce="amin"
    )
    first = found & (first_column.gather(-1, at) == column)
    zero = torch.zeros((), dtype=dtype, device=ranked.device)
    item_gains = torch.where(first, gains.gather(-1, order).gather(-1, at), zero)
    item_hits = torch.where(first, hits.gather(-1, order).gather(-1, at), zero)

    # Drop padding: the r-th real item of a row goes to slot r; padding lands in a spare last slot.
    slot = torch.where(is_item, torch.cumsum(is_item, dim=-1) - 1, width)
    spare = torch.zeros(ranked.shape[0], width + 1, dtype=dtype, device=ranked.device)
    slot_gains = spare.scatter(-1, slot, item_gains)[:, :width]
    slot_hits = spare.scatter(-1, slot, item_hits)[:, :width]
    position = torch.arange(width, dtype=dtype, device=ranked.device).expand_as(slot_gains)
    ranks = RankStatistics(
        position=position,
        group_gain=slot_gains,
        group_size=torch.ones_like(slot_gains),
        group_hits=slot_hits,
        group_start=position,
        hits_before=torch.cumsum(slot_hits, dim=-1) - slot_hits,
    )
    listed = is_item.sum(-1, keepdim=True).to(dtype)
    relevant = hits.sum(-1, keepdim=True)
    return RankedLists(ranks, gains, listed, relevant, batch_shape)



RETURNS = "float32 tensor (float64 if ``target_relevance`` is float64)."


def _evaluate(
    metric: engine.Metric,
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None,
    k: d.Cutoff,
    *,
    pad_id: int,
    reduction: str,
    sample_weight: Tensor | None,
    validate: bool,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    weights: Tensor | None = None,
    empty: str = DEFAULT_EMPTY,
    threshold: float | None = None,
    ap_normaliser: str = DEFAULT_AP_NORMALISER,
    adaptive_k: bool = False,
    short_list: str = DEFAULT_SHORT_LIST,
) -> Tensor:
    """``metric`` of recommended lists: the options checked here, once, and trusted below."""
    check_option("reduction", reduction, REDUCTIONS)
    check_option("empty", empty, EMPTY)
    check_flag("validate", validate)
    if threshold is not None:
        threshold = check_threshold(threshold)
    if ap_normaliser is not DEFAULT_AP_NORMALISER or adaptive_k is not False or short_list is not DEFAULT_SHORT_LIST:
        metric = metric.configured(ap_normaliser=ap_normaliser, adaptive_k=adaptive_k, short_list=short_list)
    cutoffs, many = d.resolve_cutoffs(k)
    lists = prepare_ranked(
        ranked_ids, target_ids, target_relevance, pad_id=pad_id, gain=gain, validate=validate, weights=weights,
        threshold=threshold,
    )
    values = engine.evaluate(metric, lists, cutoffs, discount=discount, empty=empty)
    values = values.reshape(*lists.batch_shape, values.shape[-1])
    return reduce_queries(values, many, reduction, sample_weight, validate)



@names_arguments
@document(RETURNS)
def ndcg(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    weights: Tensor | None = None,
    empty: Empty = DEFAULT_EMPTY,
    short_list: ShortList = DEFAULT_SHORT_LIST,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""NDCG@k of recommended lists against their ground truth.

    .. math::
        \mathrm{NDCG@k} = \frac{\sum_{i=1}^{k} \mathrm{gain}(rel(id_i))\,\mathrm{discount}(i)}
                               {\sum_{i=1}^{\min(k, M)} \mathrm{gain}(rel^{*}_{(i)})\,\mathrm{discount}(i)}

    where :math:`rel(id)` is the id's relevance in the truth (0 if absent) and :math:`rel^{*}_{(i)}`
    the truth's labels in decreasing order.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.ndcg(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]), k=5)
        tensor(0.6509)
    """
    return _evaluate(
        engine.NDCG, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, gain=gain, discount=discount, weights=weights, empty=empty, short_list=short_list, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def dcg(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    weights: Tensor | None = None,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""DCG@k of recommended lists: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel(id_i))\,\mathrm{discount}(i)`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.dcg(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]))
        tensor(1.0616)
    """
    return _evaluate(
        engine.DCG, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, gain=gain, discount=discount, weights=weights, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def mrr(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    threshold: float | None = None,
    empty: Empty = DEFAULT_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Reciprocal rank of the first relevant recommended id (relevance > 0) within the top ``k`` (0 if none).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.mrr(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]))
        tensor(0.5000)
    """
    return _evaluate(
        engine.MRR, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, threshold=threshold, empty=empty, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def precision(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    threshold: float | None = None,
    adaptive_k: bool = False,
    empty: Empty = DEFAULT_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Precision@k: relevant ids among the top ``k``, divided by ``k`` (``k=None``: the list's length).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.precision(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]), k=2)
        tensor(0.5000)
    """
    return _evaluate(
        engine.PRECISION, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, threshold=threshold, adaptive_k=adaptive_k, empty=empty, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def recall(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    threshold: float | None = None,
    empty: Empty = DEFAULT_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Recall@k: relevant ids among the top ``k``, divided by all relevant targets R.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.recall(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]), k=2)
        tensor(0.5000)
    """
    return _evaluate(
        engine.RECALL, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, threshold=threshold, empty=empty, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def hit_rate(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    threshold: float | None = None,
    empty: Empty = DEFAULT_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""HitRate@k: 1 if any of the top ``k`` ids is relevant, else 0.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.hit_rate(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]), k=1)
        tensor(0.)
    """
    return _evaluate(
        engine.HIT_RATE, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, threshold=threshold, empty=empty, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def average_precision(
    ranked_ids: Tensor,
    target_ids: Tensor,
    target_relevance: Tensor | None = None,
    k: d.Cutoff = None,
    *,
    pad_id: int = -1,
    threshold: float | None = None,
    ap_normaliser: ApNormaliser = DEFAULT_AP_NORMALISER,
    empty: Empty = DEFAULT_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""AP@k: :math:`\frac{1}{\min(R, k)} \sum_{i=1}^{k} [id_i\ \text{relevant}]\,\mathrm{P@i}`;
    with ``k=None`` the normaliser is R, all relevant targets (trec_eval's AP of the list).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ranked.average_precision(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]))
        tensor(0.5000)
    """
    return _evaluate(
        engine.AVERAGE_PRECISION, ranked_ids, target_ids, target_relevance, k, pad_id=pad_id, threshold=threshold, ap_normaliser=ap_normaliser, empty=empty, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


def from_lists(
    predict_lists: Sequence[Sequence[Hashable]],
    ground_truths: Sequence[Mapping[Hashable, float] | Iterable[Hashable]],
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Python lists of ids (any hashable: strings, ints, …) → padded tensors for the ranked metrics.

    Args:
        predict_lists: one recommended list per query, best first.
        ground_truths: one truth per query: a mapping ``id -> relevance``, or an iterable of ids
            (implicit feedback: relevance 1; repeated ids count once).
        dtype: relevance dtype; float64 keeps Python floats exact.
        device: where the tensors go.

    Returns:
        ``(ranked [B, K] long, target [B, M] long, relevance [B, M])`` padded with ``-1``. Ids are
        numbered in order of first appearance; ``K`` and ``M`` are at least 1.

    Example:
        >>> import torch_ndcg as tn
        >>> ranked, target, rel = tn.from_lists([["A", "B"]], [{"B": 1.0, "C": 0.5}])
        >>> ranked, target, rel
        (tensor([[0, 1]]), tensor([[1, 2]]), tensor([[1.0000, 0.5000]], dtype=torch.float64))
    """
    if len(predict_lists) != len(ground_truths):
        raise ValueError(
            f"predict_lists and ground_truths must have one entry per query, got {len(predict_lists)} "
            f"and {len(ground_truths)}"
        )
    numbers: dict[Hashable, int] = {}

    def number(item: Hashable) -> int:
        if isinstance(item, (Tensor, np.ndarray)):
            # A tensor hashes by identity: two equal ids would be two different items.
            raise TypeError(
                f"ids must be hashable values such as int or str, got a {type(item).__name__}; "
                "pass whole rows as tensors/arrays, or convert with .tolist()"
            )
        return numbers.setdefault(item, len(numbers))

    ranked, targets, labels = [], [], []
    for i, (predicted, truth) in enumerate(zip(predict_lists, ground_truths)):
        predicted, truth = _as_python(predicted), _as_python(truth)
        if isinstance(predicted, (str, bytes)) or not isinstance(predicted, Iterable):
            raise TypeError(f"predict_lists[{i}] must be a list of ids, got {type(predicted).__name__}")
        if isinstance(truth, (str, bytes)) or not isinstance(truth, Iterable):
            raise TypeError(
                f"ground_truths[{i}] must be a dict id -> relevance or an iterable of ids, "
                f"got {type(truth).__name__}"
            )
        relevance = dict(truth) if isinstance(truth, Mapping) else dict.fromkeys(truth, 1.0)
        ranked.append([number(item) for item in predicted])
        targets.append([number(item) for item in relevance])
        labels.append(list(relevance.values()))

    def padded(rows: list[list], fill: float, kind: torch.dtype) -> Tensor:
        width = max([1, *map(len, rows)])
        try:
            return torch.tensor([row + [fill] * (width - len(row)) for row in rows], dtype=kind, device=device)
        except (TypeError, ValueError) as error:
            raise TypeError(f"ground-truth relevances must be real numbers ({error})") from None

    shape = (len(ranked), 1)
    if not ranked:
        empty_ids = torch.full(shape, -1, dtype=torch.long, device=device)
        return empty_ids, empty_ids.clone(), torch.zeros(shape, dtype=dtype, device=device)
    return padded(ranked, -1, torch.long), padded(targets, -1, torch.long), padded(labels, 0.0, dtype)


def _as_python(row: object) -> object:
    """A tensor or array row of ids (or a mapping's worth of them) as Python values."""
    if isinstance(row, (Tensor, np.ndarray)):
        if row.ndim != 1:
            raise TypeError(f"a row of ids must be 1-D, got a {row.ndim}-D {type(row).__name__}")
        return row.tolist()
    return row
