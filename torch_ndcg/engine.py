"""The metric table and the one evaluation that every layout (dense, flat, ranked) runs.

A metric is a sum over ranks of a per-rank term (:mod:`torch_ndcg.rank_statistics`), cut at
each cutoff, optionally discounted, divided by a normaliser, with a rule for queries that have
nothing to find. A layout ranks its queries into :class:`~torch_ndcg.rank_statistics.RankStatistics`
and answers the few questions of :class:`RankedQueries`; :func:`evaluate` does the rest, the
same way for every layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

import torch
from torch import Tensor

from . import definitions as d
from .aggregation import apply_empty
from .definitions import Cutoffs
from .options import AP_NORMALISERS, DEFAULT_AP_NORMALISER, DEFAULT_SHORT_LIST, SHORT_LISTS, moved
from .validation import check_flag, check_option
from .rank_statistics import (
    RankStatistics,
    expected_gain,
    first_hit_probability,
    hit_probability,
    precision_term,
    reciprocal_rank_term,
)

__all__ = ["Cutoffs", "Metric", "RankedQueries", "evaluate"]


class RankedQueries(Protocol):
    """A batch of ranked queries, in any layout: what :func:`evaluate` asks of it.

    Per-query results have the layout's query shape plus a trailing axis (``[..., 1]`` or
    ``[..., C]``, one column per cutoff).
    """

    ranks: RankStatistics

    def sums(self, terms: Tensor, cutoffs: Cutoffs) -> Tensor:
        """Per-rank ``terms`` (shaped like ``ranks``) → ``[..., C]`` sums over the first ``k`` ranks."""

    def discounts(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        """``discount(rank)`` of every rank, broadcastable against ``ranks``."""

    def ideal(self, discount: d.Discount, cutoffs: Cutoffs) -> Tensor:
        """``[..., C]`` IDCG: the DCG@k of each query's gains in decreasing order."""

    def relevant(self) -> Tensor:
        """``[..., 1]`` number of relevant items per query (relevance > 0, or ≥ the ``threshold``)."""

    def listed(self) -> Tensor:
        """``[..., 1]`` number of ranked items per query."""


Normaliser = Callable[[RankedQueries, Cutoffs, d.Discount], Tensor]
Emptiness = Callable[[RankedQueries, Tensor], Tensor]


@dataclass(frozen=True)
class Metric:
    """One metric: ``Σ_{rank ≤ k} term(rank) [· discount(rank)] / normaliser``.

    ``graded`` metrics weigh items by ``gain(relevance)`` (times the per-item ``weights``); the
    others count an item as relevant when its relevance is > 0 (or ≥ ``threshold``). ``is_empty``
    marks the queries whose value ``empty`` decides (given the normaliser); ``None`` means no
    query is ever empty. ``normaliser_choices`` are the normalisers the ``ap_normaliser`` option
    picks from (the first is the default); ``adaptive_normaliser`` replaces the normaliser under
    ``adaptive_k=True``. ``zero_short_lists`` scores 0 at every cutoff beyond a query's length
    (``short_list="zero"``, the LETOR tool's NDCG@k). The options a metric takes follow from these fields (``mrr`` has no
    ``gain``); each public function's signature lists exactly those.
    """

    name: str
    term: Callable[[RankStatistics], Tensor]
    graded: bool
    discounted: bool
    normaliser: Normaliser | None = None
    is_empty: Emptiness | None = None
    normaliser_choices: Mapping[str, Normaliser] = field(default_factory=dict)
    adaptive_normaliser: Normaliser | None = None
    zero_short_lists: bool = False

    def configured(
        self, *, ap_normaliser: str = DEFAULT_AP_NORMALISER, adaptive_k: bool = False,
        short_list: str = DEFAULT_SHORT_LIST,
    ) -> Metric:
        """This metric with the normaliser that ``ap_normaliser``/``adaptive_k`` choose and the
        ``short_list`` rule; a public function calls it, once, with the options it was given
        (checked here)."""
        check_option("ap_normaliser", ap_normaliser, AP_NORMALISERS)
        metric = replace(self, zero_short_lists=check_option("short_list", short_list, SHORT_LISTS) == "zero")
        if check_flag("adaptive_k", adaptive_k):
            return replace(metric, normaliser=self.adaptive_normaliser)
        if ap_normaliser != DEFAULT_AP_NORMALISER:
            return replace(metric, normaliser=self.normaliser_choices[ap_normaliser])
        return metric


def evaluate(
    metric: Metric, queries: RankedQueries, cutoffs: Cutoffs, *, discount: d.Discount, empty: str
) -> Tensor:
    """Per-query values ``[..., C]`` of ``metric`` at each cutoff (not yet reduced over queries)."""
    terms = metric.term(queries.ranks)
    if metric.discounted:
        terms = terms * queries.discounts(discount, cutoffs)
    values = queries.sums(terms, cutoffs)
    normaliser = None
    if metric.normaliser is not None:
        normaliser = metric.normaliser(queries, cutoffs, discount)
        # An empty query divides by zero here; apply_empty replaces its value.
        values = values / normaliser
    if metric.zero_short_lists:
        values = torch.where(_shorter_than_cutoff(queries, cutoffs), 0.0, values)
    if metric.is_empty is None:
        return values
    return apply_empty(values, metric.is_empty(queries, normaliser), empty)


def _shorter_than_cutoff(queries: RankedQueries, cutoffs: Cutoffs) -> Tensor:
    """``[..., C]`` whether a query lists fewer items than each cutoff (``None``: never)."""
    listed = queries.listed()
    return torch.cat([torch.zeros_like(listed, dtype=torch.bool) if k is None else listed < k for k in cutoffs], dim=-1)


def _ideal(queries: RankedQueries, cutoffs: Cutoffs, discount: d.Discount) -> Tensor:
    return queries.ideal(discount, cutoffs)


def _cutoff_or_listed(queries: RankedQueries, cutoffs: Cutoffs, _: d.Discount) -> Tensor:
    # trec_eval's P@k: divide by k even when the list is shorter; k=None means the list.
    listed = queries.listed()
    return torch.cat([listed if k is None else torch.full_like(listed, k) for k in cutoffs], dim=-1).clamp(min=1)


def _relevant(queries: RankedQueries, cutoffs: Cutoffs, _: d.Discount) -> Tensor:
    return queries.relevant().clamp(min=1).expand(*queries.relevant().shape[:-1], len(cutoffs))


def _cutoff_within_listed(queries: RankedQueries, cutoffs: Cutoffs, _: d.Discount) -> Tensor:
    # torchmetrics' adaptive_k: divide by min(k, the list's length).
    listed = queries.listed()
    return torch.cat([listed if k is None else listed.clamp(max=k) for k in cutoffs], dim=-1).clamp(min=1)


def _relevant_found(queries: RankedQueries, cutoffs: Cutoffs, _: d.Discount) -> Tensor:
    # torchmetrics' RetrievalMAP(top_k): divide by the relevant items ranked within the cutoff
    # (their expected number under tied scores); a query that found none scores 0, not 0/0.
    found = queries.sums(hit_probability(queries.ranks), cutoffs)
    return torch.where(found > 0, found, torch.ones_like(found))


def _relevant_within_cutoff(queries: RankedQueries, cutoffs: Cutoffs, _: d.Discount) -> Tensor:
    # AP@k divides by min(R, k); k=None is trec_eval's AP, divided by R.
    relevant = queries.relevant().clamp(min=1)
    return torch.cat([relevant if k is None else relevant.clamp(max=k) for k in cutoffs], dim=-1)


def _ideal_is_zero(_: RankedQueries, ideal: Tensor | None) -> Tensor:
    return ideal == 0


def _nothing_relevant(queries: RankedQueries, _: Tensor | None) -> Tensor:
    return queries.relevant() == 0


NDCG = Metric("ndcg", expected_gain, graded=True, discounted=True, normaliser=_ideal, is_empty=_ideal_is_zero)
DCG = Metric("dcg", expected_gain, graded=True, discounted=True)
CG = Metric("cg", expected_gain, graded=True, discounted=False)
MRR = Metric("mrr", reciprocal_rank_term, graded=False, discounted=False, is_empty=_nothing_relevant)
PRECISION = Metric(
    "precision", hit_probability, graded=False, discounted=False,
    normaliser=_cutoff_or_listed, is_empty=_nothing_relevant, adaptive_normaliser=_cutoff_within_listed,
)
RECALL = Metric(
    "recall", hit_probability, graded=False, discounted=False, normaliser=_relevant, is_empty=_nothing_relevant
)
HIT_RATE = Metric("hit_rate", first_hit_probability, graded=False, discounted=False, is_empty=_nothing_relevant)
# Rank-biased precision: hits discounted by (1 - p)·p^(rank - 1), the discount given with p.
RBP = Metric("rbp", hit_probability, graded=False, discounted=True)
AVERAGE_PRECISION = Metric(
    "average_precision", precision_term, graded=False, discounted=False,
    normaliser=_relevant_within_cutoff, is_empty=_nothing_relevant,
    normaliser_choices=dict(zip(AP_NORMALISERS, (_relevant_within_cutoff, _relevant, _relevant_found))),
)


__getattr__ = moved(__name__, {"sum_to_cutoffs": ("torch_ndcg.definitions.sum_to_cutoffs", lambda: d.sum_to_cutoffs)})
