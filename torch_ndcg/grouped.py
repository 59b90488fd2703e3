"""Flat, grouped form: 1-D ``scores``, ``relevance`` and ``indexes``, one query per distinct index.

This is the layout of torchmetrics' retrieval metrics. Queries may come in any order and have
any size. When padding every query to the longest at most doubles the data, one stable sort by
index lays the batch out as padded ``[Q, L]`` rows for the dense kernels. Otherwise nothing is
padded (padding explodes for skewed sizes): one lexicographic sort by (index ascending, score descending) lays every query out as a contiguous
segment in rank order; tie groups are runs of equal score inside a segment. The resulting flat
:class:`~torch_ndcg.slots.Slots` carry the same per-slot statistics as the dense form, so the
same tie-exact terms apply, and per-query values are segment sums (``index_add_``).

Output sizes here are data-dependent (the number of queries, the items with a positive gain),
so unlike the dense form the grouped form synchronises with the device a few times even with
``validate=False``; it is meant for evaluation, not for graph-captured code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from . import definitions as d
from . import dense
from .reduction import apply_empty, finish, normalise
from .slots import Slots, expected_gain, first_hit_probability
from .validation import (
    TIES,
    as_float_scores,
    check_ids,
    check_option,
    check_relevance_dtype,
    check_relevance_values,
    check_same_shape,
    check_score_values,
)

Cutoffs = tuple[int | None, ...]


@dataclass(frozen=True)
class Segments:
    """Items sorted into query segments in rank order, with their slot statistics."""

    slots: Slots  # [T] flat, one slot per item
    query: Tensor  # [T] 0-based query number of each slot (ascending index order), non-decreasing
    count: int  # Q, the number of distinct indexes
    gains: Tensor  # [T] gains in the same sorted order
    size: Tensor  # [Q, 1] items per query
    relevant: Tensor  # [Q, 1] items with relevance > 0 per query

    def sum(self, terms: Tensor, cutoffs: Cutoffs) -> Tensor:
        """``[T]`` per-slot terms → ``[Q, C]`` per-query sums over the slots ranked before each cutoff."""
        return _segment_sums(terms, self.slots.position, self.query, self.count, cutoffs)


def _segment_sums(terms: Tensor, position: Tensor, query: Tensor, count: int, cutoffs: Cutoffs) -> Tensor:
    """``[T]`` terms → ``[Q, C]``: per query, the sum over items whose 0-based ``position`` is below each cutoff."""
    zero = torch.zeros((), dtype=terms.dtype, device=terms.device)
    columns = [terms if k is None else torch.where(position < k, terms, zero) for k in cutoffs]
    sums = terms.new_zeros(count, len(cutoffs))
    for column, values in enumerate(columns):
        sums[:, column].index_add_(0, query, values)
    return sums


_HALF = 1 << 31
_WORD = 1 << 32


def _descending_key(values: Tensor) -> Tensor | None:
    """int64 key in ``[0, 2**32)`` whose ascending order is the descending order of float32 ``values``.

    Uses the IEEE-754 bit pattern (non-negative floats order like their bits, negative ones in
    reverse), so one integer sort replaces a float sort plus a second stable sort. ``None``
    for other dtypes: a float64 value cannot be packed next to a query number in 64 bits.
    """
    if values.dtype != torch.float32:
        return None
    bits = (values + 0.0).view(torch.int32).long()  # + 0.0 turns -0.0 into 0.0: equal scores, equal keys
    return torch.where(bits >= 0, (_HALF - 1) - bits, bits + _WORD)


def _fits_half_word(major: Tensor) -> bool:
    """Whether ``major`` lies in ``[-2**31, 2**31)``, so ``major * 2**32 + key`` cannot overflow int64."""
    if major.dtype in (torch.int8, torch.uint8, torch.int16, torch.int32):
        return True
    low, high = torch.aminmax(major)
    return bool((low >= -_HALF) & (high < _HALF))  # synchronises


def _take(values: Tensor, index: Tensor) -> Tensor:
    """``values[index]`` for 1-D tensors. ``index_select`` is 3–4× faster than advanced indexing
    on one CPU thread, and advanced indexing enters a parallel region even for small inputs,
    which stalls for ~16 ms on a busy 2-core machine (torch 2.13)."""
    return values.index_select(0, index)


def _starts(sorted_values: Tensor) -> Tensor:
    """True where a sorted sequence takes a new value (and at 0): the starts of its runs."""
    start = torch.ones_like(sorted_values, dtype=torch.bool)
    start[1:] = sorted_values[1:] != sorted_values[:-1]
    return start


def _lex_sort(major: Tensor, minor: Tensor, prior: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Stable sort by ``major`` ascending, then ``minor`` descending.

    Elements equal in both keep the order of ``prior`` (a permutation), or the input order.
    Returns the permutation and, in sorted order, the starts of the runs of equal ``major``
    and of equal (``major``, ``minor``).
    """
    minor_key = _descending_key(minor)
    if minor_key is not None and _fits_half_word(major):
        key = major.long() * _WORD + minor_key
        key, order = torch.sort(key if prior is None else _take(key, prior), stable=True)
        order = order if prior is None else _take(prior, order)
        return order, _starts(key >> 32), _starts(key)  # >> floors, so negative majors come back exactly
    order = prior
    for values, descending in ((minor, True), (major, False)):
        step = torch.sort(values if order is None else _take(values, order), descending=descending, stable=True).indices
        order = step if order is None else _take(order, step)
    new_major = _starts(_take(major, order))
    return order, new_major, new_major | _starts(_take(minor, order))


def _runs(start: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Runs of a sorted sequence, from their starts: each element's run number (0-based), the
    flat index of its run's first element, and the size of every run (``[T]``, first runs used)."""
    run = torch.cumsum(start, dim=0) - 1
    size = torch.zeros_like(run).index_add_(0, run, torch.ones_like(run))
    return run, _take(torch.cumsum(size, dim=0) - size, run), size


def _check_flat(scores: Tensor, relevance: Tensor, indexes: Tensor, ties: str) -> None:
    """Shape, dtype and option checks of the flat form (no value is read)."""
    check_option("ties", ties, TIES)
    as_float_scores("scores", scores)
    check_relevance_dtype("relevance", relevance)
    check_ids("indexes", indexes)
    check_same_shape("scores", scores, "relevance", relevance)
    check_same_shape("scores", scores, "indexes", indexes)
    if scores.dim() != 1:
        raise ValueError(f"scores, relevance and indexes must be 1-D [T], got shape {tuple(scores.shape)}")
    if scores.shape[0] == 0:
        raise ValueError("scores is empty (T = 0): there is no query to evaluate")


class Rows(NamedTuple):
    """A flat batch laid out as padded ``[Q, L]`` rows for the dense kernels."""

    scores: Tensor
    relevance: Tensor
    mask: Tensor | None  # None when every query has exactly L items


# Padding every query to the longest is worth it (the dense kernels need no segment
# bookkeeping) while it at most doubles the data; skewed sizes take the segment path.
_MAX_PADDING = 2


def _as_rows(scores: Tensor, relevance: Tensor, indexes: Tensor, ties: str) -> Rows | None:
    """``[Q, L]`` rows (ascending index order) when padding is cheap, else None.

    One stable sort by index (skipped when ids already ascend) keeps each query's items in
    input order, which is what ``ties="first"`` ranks by. Synchronises up to four times.
    """
    _check_flat(scores, relevance, indexes, ties)
    total = indexes.shape[0]
    if bool((indexes[1:] >= indexes[:-1]).all()):
        ids, order = indexes, None
    else:
        # Sorting 32-bit keys is about twice as fast as 64-bit ones on CPU.
        ids, order = torch.sort(indexes.int() if _fits_half_word(indexes) else indexes, stable=True)
        scores, relevance = _take(scores, order), _take(relevance, order)
    start = _starts(ids)
    count = int(start.sum())
    if total % count == 0 and bool(start.view(count, -1)[:, 0].all()):
        # Exactly one run start at the head of every equal slice: every query has total/count items.
        return Rows(scores.reshape(count, -1), relevance.reshape(count, -1), None)
    query, first, size = _runs(start)
    longest = int(size.max())
    if count * longest > _MAX_PADDING * total:
        return None
    slot = query * longest + torch.arange(total, device=ids.device) - first
    padded = count * longest
    mask = torch.zeros(padded, dtype=torch.bool, device=ids.device).index_fill_(0, slot, True)
    return Rows(
        scores.new_zeros(padded).index_copy_(0, slot, scores).view(count, longest),
        relevance.new_zeros(padded).index_copy_(0, slot, relevance).view(count, longest),
        mask.view(count, longest),
    )


def prepare_segments(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    *,
    gain: d.Gain,
    ties: str,
    validate: bool,
) -> Segments:
    """Check the flat inputs and rank every query segment (tie-aware, no loop over queries).

    ``ties="first"`` ranks the earlier item of the flat input first; ``"worst"``/``"best"``
    rank tied items by ascending/descending relevance.
    """
    _check_flat(scores, relevance, indexes, ties)
    float_scores = as_float_scores("scores", scores)
    dtype = d.compute_dtype(scores, relevance)
    if validate:
        check_score_values("scores", float_scores, None)
        check_relevance_values("relevance", relevance, None)
        d.check_exp2_range(relevance, gain, dtype)

    prior = None
    if ties in ("worst", "best"):
        prior = torch.sort(relevance.to(dtype), descending=ties == "best", stable=True).indices
    order, query_start, group_start = _lex_sort(indexes, float_scores, prior)
    real_relevance = _take(relevance, order).to(dtype)
    gains = d.gains(real_relevance, gain, dtype)
    hits = (real_relevance > 0).to(dtype)

    query, query_first, query_size = _runs(query_start)
    count = int(query[-1]) + 1  # synchronises: the output has one value per query
    flat = torch.arange(scores.shape[0], device=scores.device)
    hits_seen = torch.cumsum(hits.long(), dim=0) - hits.long()  # exact integer counts
    if ties == "average":
        group, group_first, group_size = _runs(group_start)
        group_gain = _take(torch.zeros_like(gains).index_add_(0, group, gains), group)
        group_size = _take(group_size, group).to(dtype)
        group_hits = _take(torch.zeros_like(hits).index_add_(0, group, hits), group)
    else:
        group_first, group_gain, group_size, group_hits = flat, gains, torch.ones_like(gains), hits
    slots = Slots(
        position=(flat - query_first).to(dtype),
        group_gain=group_gain,
        group_size=group_size,
        group_hits=group_hits,
        group_start=(group_first - query_first).to(dtype),
        hits_before=(_take(hits_seen, group_first) - _take(hits_seen, query_first)).to(dtype),
    )
    size = query_size[:count, None].to(dtype)
    relevant = gains.new_zeros(count, 1).index_add_(0, query, hits[:, None])
    return Segments(slots, query, count, gains, size, relevant)


def _depth(cutoffs: Cutoffs, total: int) -> int:
    """Deepest rank any cutoff reaches (``total`` items bound every query's length)."""
    return min(total, max(total if k is None else k for k in cutoffs))


def _discount_of(position: Tensor, cutoffs: Cutoffs, discount: d.Discount) -> Tensor:
    """Discount of every 0-based ``position``; positions beyond the deepest cutoff get any finite value."""
    depth = _depth(cutoffs, position.shape[0])
    table = d.discounts(depth, discount, position.dtype, position.device)
    return _take(table, position.long().clamp(max=depth - 1))


def _idcg(segments: Segments, cutoffs: Cutoffs, discount: d.Discount) -> Tensor:
    """``[Q, C]`` ideal DCG: each query's gains sorted in decreasing order, then discounted."""
    gains = segments.gains
    # Zero gains add nothing wherever they rank, and with no negative gain (possible only from a
    # callable) they rank last: sorting just the positive gains gives the same sums, much faster.
    keep = gains > 0
    if bool((gains < 0).any()):  # synchronises
        keep = torch.ones_like(keep)
    kept = keep.nonzero().squeeze(1)
    query, gains = _take(segments.query, kept), _take(gains, kept)
    order = _lex_sort(query, gains)[0]
    # query is already sorted, so sorting by (query, gain) only reorders the gains within each query.
    _, first, _ = _runs(_starts(query))
    position = (torch.arange(query.shape[0], device=query.device) - first).to(gains.dtype)
    terms = _take(gains, order) * _discount_of(position, cutoffs, discount)
    return _segment_sums(terms, position, query, segments.count, cutoffs)


def _dcg_idcg(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff,
    gain: d.Gain,
    discount: d.Discount,
    ties: str,
    validate: bool,
    ideal: bool,
) -> tuple[Tensor, Tensor | None, bool]:
    segments = prepare_segments(scores, relevance, indexes, gain=gain, ties=ties, validate=validate)
    cutoffs, many = d.resolve_cutoffs(k)
    discounts = _discount_of(segments.slots.position, cutoffs, discount)
    dcg_k = segments.sum(expected_gain(segments.slots) * discounts, cutoffs)
    idcg_k = _idcg(segments, cutoffs, discount) if ideal else None
    return dcg_k, idcg_k, many


def grouped_ndcg(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    gain: d.Gain = "linear",
    discount: d.Discount = "log2",
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""NDCG@k of every query of a flat batch, ``DCG@k / IDCG@k`` per distinct value of ``indexes``.

    Args:
        scores: ``[T]`` model scores (higher ranks first).
        relevance: ``[T]`` labels ≥ 0.
        indexes: ``[T]`` integer query id of each item; any order, any query size.
        k, gain, discount, empty, reduction, validate: as in :func:`torch_ndcg.ndcg`;
            ``reduction="none"`` gives ``[Q]`` (or ``[Q, C]``) in ascending index order.
        ties: as in :func:`torch_ndcg.ndcg`; ``"first"`` ranks the earlier item of the flat input
            first.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([0.9, 0.2, 0.8, 0.1, 0.4])
        >>> relevance = torch.tensor([0, 1, 1, 2, 0])
        >>> tn.grouped_ndcg(scores, relevance, torch.tensor([7, 3, 7, 3, 7]), reduction="none")
        tensor([0.8597, 0.6309])
    """
    rows = _as_rows(scores, relevance, indexes, ties)
    if rows is not None:
        return dense.ndcg(
            rows.scores, rows.relevance, k, mask=rows.mask, gain=gain, discount=discount, ties=ties,
            empty=empty, reduction=reduction, validate=validate,
        )
    dcg_k, idcg_k, many = _dcg_idcg(scores, relevance, indexes, k, gain, discount, ties, validate, True)
    return finish(normalise(dcg_k, idcg_k, empty), many, reduction)


def grouped_dcg(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    gain: d.Gain = "linear",
    discount: d.Discount = "log2",
    ties: str = "average",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""DCG@k of every query of a flat batch (options as in :func:`grouped_ndcg`).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.grouped_dcg(torch.tensor([3., 2., 1.]), torch.tensor([3, 2, 3]), torch.zeros(3, dtype=torch.long), k=2)
        tensor(4.2619)
    """
    rows = _as_rows(scores, relevance, indexes, ties)
    if rows is not None:
        return dense.dcg(
            rows.scores, rows.relevance, k, mask=rows.mask, gain=gain, discount=discount, ties=ties,
            reduction=reduction, validate=validate,
        )
    dcg_k, _, many = _dcg_idcg(scores, relevance, indexes, k, gain, discount, ties, validate, False)
    return finish(dcg_k, many, reduction)


def grouped_mrr(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Reciprocal rank of the first item with relevance > 0 in each query's top ``k`` (0 if none).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([3., 2., 1., 3., 2., 1.])
        >>> tn.grouped_mrr(scores, torch.tensor([0, 1, 0, 1, 0, 0]), torch.tensor([0, 0, 0, 1, 1, 1]))
        tensor(0.7500)
    """
    rows = _as_rows(scores, relevance, indexes, ties)
    if rows is not None:
        return dense.mrr(
            rows.scores, rows.relevance, k, mask=rows.mask, ties=ties, empty=empty, reduction=reduction,
            validate=validate,
        )
    segments = prepare_segments(scores, relevance, indexes, gain="linear", ties=ties, validate=validate)
    cutoffs, many = d.resolve_cutoffs(k)
    slots = segments.slots
    values = segments.sum(first_hit_probability(slots) / (slots.position + 1), cutoffs)
    is_empty = (segments.relevant == 0).expand_as(values)
    return finish(apply_empty(values, is_empty, empty), many, reduction)


def _companion(
    name: str,
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff,
    ties: str,
    empty: str,
    reduction: str,
    validate: bool,
) -> Tensor:
    rows = _as_rows(scores, relevance, indexes, ties)
    if rows is not None:
        return getattr(dense, name)(
            rows.scores, rows.relevance, k, mask=rows.mask, ties=ties, empty=empty, reduction=reduction,
            validate=validate,
        )
    segments = prepare_segments(scores, relevance, indexes, gain="linear", ties=ties, validate=validate)
    cutoffs, many = d.resolve_cutoffs(k)
    values, is_empty = dense.binary_metric(
        name, segments.slots, cutoffs, segments.relevant, segments.size,
        sums=lambda terms: segments.sum(terms, cutoffs),
    )
    return finish(apply_empty(values, is_empty, empty), many, reduction)


def grouped_precision(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Precision@k per query: :math:`\frac{1}{k}\sum_{i=1}^{k} [rel_{(i)} > 0]` (``k=None``: the query's size).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.grouped_precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), torch.zeros(3, dtype=torch.long), k=2)
        tensor(0.5000)
    """
    return _companion("precision", scores, relevance, indexes, k, ties, empty, reduction, validate)


def grouped_recall(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Recall@k per query: relevant items in the top ``k`` over the query's relevant items R.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.grouped_recall(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), torch.zeros(3, dtype=torch.long), k=2)
        tensor(0.5000)
    """
    return _companion("recall", scores, relevance, indexes, k, ties, empty, reduction, validate)


def grouped_hit_rate(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""HitRate@k per query: 1 if any of the top ``k`` items has relevance > 0.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.grouped_hit_rate(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), torch.zeros(3, dtype=torch.long), k=1)
        tensor(0.)
    """
    return _companion("hit_rate", scores, relevance, indexes, k, ties, empty, reduction, validate)


def grouped_average_precision(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    k: d.Cutoff = None,
    *,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""AP@k per query: :math:`\frac{1}{\min(R, k)} \sum_{i=1}^{k} [rel_{(i)} > 0]\,\mathrm{P@i}` (R for ``k=None``).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.grouped_average_precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), torch.zeros(3, dtype=torch.long))
        tensor(0.5833)
    """
    return _companion("average_precision", scores, relevance, indexes, k, ties, empty, reduction, validate)
