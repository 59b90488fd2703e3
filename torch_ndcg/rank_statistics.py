"""What each rank position of a list holds, in expectation over tied orderings, and the per-rank
terms the metrics sum.

Every metric in this package is a sum over rank positions (slots) of a per-slot term. With
``ties="average"`` a slot that falls inside a group of ``g`` equally scored items holds each of
them with probability ``1/g``; the terms below are the exact expectations over all ``g!``
orderings (McSherry & Najork, "Computing Information Retrieval Performance Measures
Efficiently in the Presence of Tied Scores", ECIR 2008). With the other tie modes every
group has size 1 and the terms reduce to the textbook ones.

Each layout (:mod:`torch_ndcg.dense`, :mod:`torch_ndcg.flat`, :mod:`torch_ndcg.ranked`) fills a
:class:`RankStatistics`; the functions here turn it into per-slot terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class RankStatistics:
    """Per-slot statistics of the tie group that covers each rank position.

    All fields share one shape (``[..., D]`` for dense lists, ``[T]`` for flat segments) and
    the compute dtype. Slots past the end of a list belong to a group with zero gain and no
    relevant item, so every term below is 0 there.
    """

    position: Tensor  # 0-based rank of the slot within its list
    group_gain: Tensor  # sum of the gains in the slot's tie group
    group_size: Tensor  # number of items in the tie group (≥ 1)
    group_hits: Tensor | None  # number of relevant (relevance > 0) items in the tie group
    group_start: Tensor | None  # 0-based rank of the group's first slot
    hits_before: Tensor | None  # relevant items ranked in earlier groups
    # (group_start and the relevant-item fields are None when a gain-only metric did not ask)


def expected_gain(slots: RankStatistics) -> Tensor:
    """E[gain at this slot] = group gain / group size."""
    return slots.group_gain / slots.group_size


def hit_probability(slots: RankStatistics) -> Tensor:
    """P(the item at this slot is relevant) = relevant items in the group / group size."""
    return slots.group_hits / slots.group_size


def _log_binomial(n: Tensor, m: Tensor) -> Tensor:
    return torch.lgamma(n + 1) - torch.lgamma(m + 1) - torch.lgamma(n - m + 1)


def first_hit_probability(slots: RankStatistics) -> Tensor:
    """P(this slot holds the first relevant item of the list).

    Only the first group with a relevant item can hold it. With ``r`` relevant items among the
    ``g`` of that group placed uniformly at random, the first of them sits at offset ``j`` with
    probability ``C(g-1-j, r-1) / C(g, r)`` for ``0 ≤ j ≤ g - r``.
    """
    # The difference of lgammas of large, close arguments cancels: in float32 a tie group of
    # 100,000 items put MRR off by 7 %. Counts are exact integers, so widen them to float64.
    wide = torch.float64
    g, r = slots.group_size.to(wide), slots.group_hits.to(wide)
    j = (slots.position - slots.group_start).to(wide)
    possible = (slots.hits_before == 0) & (r > 0) & (j <= g - r)
    # Clamp arguments so lgamma stays finite where the term is masked out anyway.
    r_safe = torch.where(possible, r, torch.ones_like(r))
    n = torch.where(possible, g - 1 - j, r_safe - 1)
    log_p = _log_binomial(n, r_safe - 1) - _log_binomial(g, r_safe)
    return torch.where(possible, torch.exp(log_p), torch.zeros_like(log_p)).to(slots.group_size.dtype)


def precision_term(slots: RankStatistics) -> Tensor:
    """E[hit(slot) · precision at the slot's rank], the summand of average precision.

    A relevant item at offset ``j`` of its group has, in expectation, ``(r - 1)·j/(g - 1)`` other
    relevant group members ahead of it, so its precision is
    ``(hits_before + 1 + (r - 1)·j/(g - 1)) / (position + 1)``.
    """
    g, r = slots.group_size, slots.group_hits
    j = slots.position - slots.group_start
    ahead = torch.where(g > 1, (r - 1).clamp(min=0) * j / (g - 1).clamp(min=1), torch.zeros_like(g))
    return (r / g) * (slots.hits_before + 1 + ahead) / (slots.position + 1)


def reciprocal_rank_term(slots: RankStatistics) -> Tensor:
    """E[1/rank of the first relevant item, counted at this slot]: the summand of MRR."""
    return first_hit_probability(slots) / (slots.position + 1)
