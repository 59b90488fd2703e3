"""The flat layout: 1-D ``scores``, ``relevance`` and ``indexes``, one query per distinct index.

This is the layout of torchmetrics' retrieval metrics. Queries may come in any order and have
any size. When padding every query to the longest at most doubles the data, one stable sort by
index lays the batch out as padded ``[Q, L]`` rows for the dense kernels. Otherwise nothing is
padded (padding explodes for skewed sizes): one lexicographic sort by (index ascending, score descending) lays every query out as a contiguous
segment in rank order; tie groups are runs of equal score inside a segment. The resulting flat
:class:`~torch_ndcg.rank_statistics.RankStatistics` carry the same per-slot statistics as the
dense layout, so the same tie-exact terms apply, and per-query values are segment sums
(``index_add_``).

Output sizes here are data-dependent (the number of queries, the items with a positive gain),
so unlike the dense layout the flat one synchronises with the device a few times even with
``validate=False``; it is meant for evaluation, not for graph-captured code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from . import definitions as d
from . import dense
from .definitions import Cutoffs
from .ordering import ordered_key
from .rank_statistics import RankStatistics
from .validation import (
    as_float_scores,
    check_gain_values,
    check_ids,
    check_mask,
    check_relevance_dtype,
    check_relevance_values,
    check_same_device,
    check_same_shape,
    check_score_values,
    check_weighted_gains,
    check_weights,
    warn_if_swapped,
)


@dataclass(frozen=True)
class Segments:
    """Items sorted into query segments in rank order, with their rank statistics: the flat
    answer to :class:`~torch_ndcg.engine.RankedQueries`."""

    ranks: RankStatistics  # [T] flat, one slot per item
    query: Tensor  # [T] 0-based query number of each slot (ascending index order), non-decreasing
    count: int  # Q, the number of distinct indexes
    gains: Tensor  # [T] gains in the same sorted order
    size: Tensor  # [Q, 1] ranked items per query (unretrieved ones excluded)
    relevant_items: Tensor  # [Q, 1] relevant items per query (relevance > 0, or ≥ the threshold)

    def sums(self, terms: Tensor, cutoffs: Cutoffs) -> Tensor:
        """``[T]`` per-slot terms → ``[Q, C]`` per-query sums over the slots ranked before each cutoff."""
        return _segment_sums(terms, self.ranks.position, self.query, self.count, cutoffs)

    def discounts(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        return _discount_of(self.ranks.position, cutoffs, discount)

    def ideal(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        return _idcg(self, cutoffs, discount)

    def relevant(self) -> Tensor:
        return self.relevant_items

    def listed(self) -> Tensor:
        return self.size


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

    One integer sort then replaces a float sort plus a second stable sort. ``None`` for other
    dtypes: a float64 value cannot be packed next to a query number in 64 bits.
    """
    if values.dtype != torch.float32:
        return None
    return (_HALF - 1) - ordered_key(values).long()


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


def select(
    scores: Tensor, relevance: Tensor, indexes: Tensor, mask: Tensor | None, weights: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    """Check the flat inputs' shapes and dtypes (no value is read) and keep the items ``mask`` marks
    (with their ``weights``)."""
    _check_flat(scores, relevance, indexes)
    check_mask(mask, scores.shape)
    for name, tensor in (("relevance", relevance), ("indexes", indexes), ("mask", mask)):
        check_same_device("scores", scores, name, tensor)
    if weights is not None:
        check_weights("weights", weights, scores.shape, None, validate=False)
    if mask is None:
        return scores, relevance, indexes, weights
    scores, relevance, indexes = scores[mask], relevance[mask], indexes[mask]
    weights = None if weights is None else weights[mask]
    if scores.shape[0] == 0:
        raise ValueError("mask keeps no item: there is no query to evaluate")
    return scores, relevance, indexes, weights


def _check_flat(scores: Tensor, relevance: Tensor, indexes: Tensor) -> None:
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
    weights: Tensor | None = None  # the items' weights, when given


# Padding every query to the longest is worth it (the dense kernels need no segment
# bookkeeping) while it at most doubles the data; skewed sizes take the segment path.
_MAX_PADDING = 2


def as_rows(
    scores: Tensor, relevance: Tensor, indexes: Tensor, weights: Tensor | None = None, *, always: bool = False
) -> Rows | None:
    """``[Q, L]`` rows (ascending index order) when padding is cheap (or ``always``), else None.

    One stable sort by index (skipped when ids already ascend) keeps each query's items in
    input order, which is what ``ties="first"`` ranks by. Synchronises up to four times.
    """
    total = indexes.shape[0]
    if bool((indexes[1:] >= indexes[:-1]).all()):
        ids, order = indexes, None
    else:
        # Sorting 32-bit keys is about twice as fast as 64-bit ones on CPU.
        ids, order = torch.sort(indexes.int() if _fits_half_word(indexes) else indexes, stable=True)
        scores, relevance = _take(scores, order), _take(relevance, order)
        weights = None if weights is None else _take(weights, order)
    start = _starts(ids)
    count = int(start.sum())
    if total % count == 0 and bool(start.view(count, -1)[:, 0].all()):
        # Exactly one run start at the head of every equal slice: every query has total/count items.
        return Rows(
            scores.reshape(count, -1), relevance.reshape(count, -1), None,
            None if weights is None else weights.reshape(count, -1),
        )
    query, first, size = _runs(start)
    longest = int(size.max())
    if count * longest > _MAX_PADDING * total and not always:
        return None
    slot = query * longest + torch.arange(total, device=ids.device) - first
    padded = count * longest
    mask = torch.zeros(padded, dtype=torch.bool, device=ids.device).index_fill_(0, slot, True)

    def padded_rows(values: Tensor) -> Tensor:
        return values.new_zeros(padded).index_copy_(0, slot, values).view(count, longest)

    return Rows(
        padded_rows(scores), padded_rows(relevance), mask.view(count, longest),
        None if weights is None else padded_rows(weights),
    )


def queries(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
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
) -> Segments | dense.DenseQueries:
    """Flat items of queries ``indexes`` checked and ranked: as padded dense rows when padding is
    cheap (:func:`as_rows`), else as query segments (:func:`rank`)."""
    scores, relevance, indexes, weights = select(scores, relevance, indexes, mask, weights)
    rows = as_rows(scores, relevance, indexes, weights)
    if rows is None:
        return rank(
            scores, relevance, indexes, gain=gain, ties=ties, validate=validate, weights=weights,
            threshold=threshold, unretrieved=unretrieved, hits=hits,
        )
    return dense.queries(
        rows.scores, rows.relevance, cutoffs, mask=rows.mask, gain=gain, ties=ties, hits=hits, validate=validate,
        weights=rows.weights, threshold=threshold, unretrieved=unretrieved,
    )


def rank(
    scores: Tensor,
    relevance: Tensor,
    indexes: Tensor,
    *,
    gain: d.Gain,
    ties: str,
    validate: bool,
    weights: Tensor | None = None,
    threshold: float | None = None,
    unretrieved: bool = False,
    hits: bool = True,
) -> Segments:
    """Rank every query segment of checked flat inputs (tie-aware, no loop over queries).

    ``ties="first"`` ranks the earlier item of the flat input first; ``"worst"``/``"best"``
    rank tied items by ascending/descending value of what the metric sums: relevance, which
    orders the hits (``hits=True``), or gains times ``weights``. With ``unretrieved``, a ``-inf`` score
    marks an item that gains nothing at a rank but counts in the ideal DCG and in R.
    """
    float_scores = as_float_scores("scores", scores)
    dtype = d.compute_dtype(scores, relevance, weights)
    if validate:
        check_score_values("scores", float_scores, None, unretrieved=unretrieved)
        label_range = check_relevance_values("relevance", relevance, None)
        warn_if_swapped(float_scores, relevance, None, label_range=label_range)

    prior = None
    if ties in ("worst", "best"):
        if hits:  # hits follow the relevance
            summed = relevance.to(dtype)
        else:
            summed = d.gains(relevance.to(dtype), gain, dtype)
            summed = summed if weights is None else summed * weights.to(dtype)
        prior = torch.sort(summed, descending=ties == "best", stable=True).indices
    order, query_start, group_start = _lex_sort(indexes, float_scores, prior)
    real_relevance = _take(relevance, order).to(dtype)
    gains = d.gains(real_relevance, gain, dtype)
    if validate and callable(gain):
        check_gain_values(gains, None)
    if weights is not None:
        check_weights("weights", weights, scores.shape, None, validate)
        gains = gains * _take(weights, order).to(dtype)
        if validate:  # (one total of every query's gains bounds each of them)
            check_weighted_gains(gains, None)
    hits = d.is_relevant(real_relevance, threshold).to(dtype)

    query, query_first, query_size = _runs(query_start)
    count = int(query[-1]) + 1  # synchronises: the output has one value per query
    if validate:  # a DCG sums one query's gains: each label's own query bounds the overflow check
        d.check_exp2_range(_take(relevance, order), gain, dtype, _take(query_size, query))
    size = query_size[:count, None].to(dtype)
    ranked_gains, ranked_hits = gains, hits  # what an item brings at its rank
    if unretrieved:
        retrieved = _take(float_scores, order) > -torch.inf
        ranked_gains = torch.where(retrieved, gains, torch.zeros_like(gains))
        ranked_hits = torch.where(retrieved, hits, torch.zeros_like(hits))
        size = gains.new_zeros(count, 1).index_add_(0, query, retrieved[:, None].to(dtype))
    flat = torch.arange(scores.shape[0], device=scores.device)
    hits_seen = torch.cumsum(ranked_hits.long(), dim=0) - ranked_hits.long()  # exact integer counts
    if ties == "average":
        group, group_first, group_size = _runs(group_start)
        group_gain = _take(torch.zeros_like(gains).index_add_(0, group, ranked_gains), group)
        group_size = _take(group_size, group).to(dtype)
        group_hits = _take(torch.zeros_like(hits).index_add_(0, group, ranked_hits), group)
    else:
        group_first, group_gain, group_size, group_hits = flat, ranked_gains, torch.ones_like(gains), ranked_hits
    ranks = RankStatistics(
        position=(flat - query_first).to(dtype),
        group_gain=group_gain,
        group_size=group_size,
        group_hits=group_hits,
        group_start=(group_first - query_first).to(dtype),
        hits_before=(_take(hits_seen, group_first) - _take(hits_seen, query_first)).to(dtype),
    )
    relevant = gains.new_zeros(count, 1).index_add_(0, query, hits[:, None])
    return Segments(ranks, query, count, gains, size, relevant)


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
    if kept.shape[0] == 0:  # nothing relevant anywhere: every ideal is 0
        return gains.new_zeros(segments.count, len(cutoffs))
    query, gains = _take(segments.query, kept), _take(gains, kept)
    order = _lex_sort(query, gains)[0]
    # query is already sorted, so sorting by (query, gain) only reorders the gains within each query.
    _, first, _ = _runs(_starts(query))
    position = (torch.arange(query.shape[0], device=query.device) - first).to(gains.dtype)
    terms = _take(gains, order) * _discount_of(position, cutoffs, discount)
    return _segment_sums(terms, position, query, segments.count, cutoffs)
