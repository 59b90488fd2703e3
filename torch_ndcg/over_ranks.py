r"""Each ranked metric written once, over ranks: the definition that the exact metrics and the
smooth losses share.

A metric reads a ranking as a set of *entries* (:class:`Ranking`), each with

* ``rank``: a 1-based rank, possibly fractional;
* ``value``: its gain (graded metrics) or its relevance indicator (binary metrics);
* ``within``: how much of it lies inside the cutoff ``k`` (1 inside, 0 beyond or at padding);
* ``upto``: the relevant entries ranked at or above it, itself included (read by AP only).

Two readings fill these fields, and every metric below works on both:

* **per item** (an item is an entry): its exact rank from a sort (:func:`exact_ranking`), or a
  relaxed one (ApproxNDCG's approximate rank, a bound on it);
* **per rank** (rank ``i`` is an entry, ``rank = i``): a row-stochastic "which item takes rank
  ``i``" matrix ``P`` (NeuralSort rows, Sinkhorn) gives ``value_i = Σ_j P_ij value_j``, the
  expected gain or relevance at rank ``i``, and ``upto_i = Σ_{l ≤ i} value_l``.

With exact ranks both readings give the exact metric (:func:`torch_ndcg.ndcg`, :func:`torch_ndcg.mrr`,
…; ties are not averaged here: exact ranks of tied scores follow one order, so the equality holds
for tie-free scores). The metrics (gain, discount, cutoff, normaliser, empty queries) are those
of :mod:`torch_ndcg.definitions` and :mod:`torch_ndcg.engine`:

=================  ===================================================================  ===============================
metric             total over entries                                                   divided by
=================  ===================================================================  ===============================
DCG                :math:`\sum_e value_e\,\mathrm{discount}(rank_e)\,within_e`          1
NDCG               as DCG                                                               the exact IDCG@k
precision          :math:`\sum_e value_e\,within_e`                                     k (the list's n for k=None);
                                                                                        ``adaptive_k``: :math:`\sum_e within_e`
recall             :math:`\sum_e value_e\,within_e`                                     R, the relevant items (≥ 1)
RBP                :math:`\sum_e value_e\,(1-p)\,p^{rank_e - 1}\,within_e`               1
MRR                :math:`\max_e value_e\,within_e / rank_e`                            1
hit rate           :math:`\max_e value_e\,within_e`                                     1
AP                 :math:`\sum_e value_e\,within_e\,upto_e / rank_e`                    min(R, k), R, or the found ones
=================  ===================================================================  ===============================

``adaptive_k``'s :math:`\sum_e within_e` is min(k, n) for exact ranks (torchmetrics' adaptive
``k``) and rax's count of retrieved items for relaxed ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from . import definitions as d

__all__ = [
    "METRICS", "ListFacts", "MetricOptions", "Ranking", "RankMetric", "exact_ranking", "hits_at_or_above", "rank_weights",
]  # fmt: skip


@dataclass(frozen=True)
class Ranking:
    """``[B, E]`` entries of ``B`` rankings (see the module); padding entries have ``within`` 0."""

    rank: Tensor
    value: Tensor
    within: Tensor
    upto: Tensor | None = None  # only for metrics that read it (AP)


@dataclass(frozen=True)
class ListFacts:
    """``[B]`` facts of each list that the normalisers and ``empty`` read (no ranking needed)."""

    relevant: Tensor | None  # R: relevant real items (None: a graded metric's lists, which never read it)
    listed: Tensor  # n: real items
    idcg: Tensor | None = None  # the exact IDCG@k (NDCG only)


@dataclass(frozen=True)
class MetricOptions:
    """The metric's own options, already checked by the public function that took them."""

    k: int | None = None
    discount: d.Discount = "log2"
    persistence: float = 0.8
    ap_normaliser: str = "min_r_k"
    adaptive_k: bool = False


def _weighted(weight: Callable[[Tensor, MetricOptions], Tensor]) -> Callable[[Ranking, MetricOptions], Tensor]:
    """The total of a metric that sums ``value · weight(rank) · within`` over the entries."""

    def total(ranking: Ranking, options: MetricOptions) -> Tensor:
        return (ranking.value * (weight(ranking.rank, options) * ranking.within)).sum(-1)

    return total


@dataclass(frozen=True)
class RankMetric:
    """One metric over ranks: ``total(ranking) / normaliser``, ``empty`` deciding the lists that
    ``is_empty`` marks. ``graded`` metrics read gains, the others relevance indicators;
    ``rank_weight`` is set for the metrics that are a weighted sum over ranks (``total`` is then
    that sum), whose relaxations may use a faster path that reads the sum alone."""

    name: str
    graded: bool
    total: Callable[[Ranking, MetricOptions], Tensor]
    normaliser: Callable[[Ranking, ListFacts, MetricOptions], Tensor] | None = None
    is_empty: Callable[[ListFacts], Tensor] | None = None
    rank_weight: Callable[[Tensor, MetricOptions], Tensor] | None = None
    reads_upto: bool = False

    def values(self, ranking: Ranking, facts: ListFacts, options: MetricOptions) -> Tensor:
        """``[B]`` values, before ``empty`` (an empty list may divide by 0 here)."""
        return self.normalised(self.total(ranking, options), ranking, facts, options)

    def normalised(self, total: Tensor, ranking: Ranking, facts: ListFacts, options: MetricOptions) -> Tensor:
        """``total`` ``[B]`` divided by the normaliser (which may read the ranking's ``within``)."""
        return total if self.normaliser is None else total / self.normaliser(ranking, facts, options)


def _discount(rank: Tensor, options: MetricOptions) -> Tensor:
    return d.resolve_discount(options.discount)(rank)


def _rbp(rank: Tensor, options: MetricOptions) -> Tensor:
    # A tensor base, not a float's power: under torch.compile(dynamic=True) p is a symbolic float.
    p = torch.full_like(rank, options.persistence)
    return (1 - p) * p.pow(rank - 1)


def _one(rank: Tensor, options: MetricOptions) -> Tensor:
    return torch.ones_like(rank)


def _reciprocal_rank(ranking: Ranking, options: MetricOptions) -> Tensor:
    return (ranking.value * ranking.within / ranking.rank).amax(-1)


def _first_hit(ranking: Ranking, options: MetricOptions) -> Tensor:
    return (ranking.value * ranking.within).amax(-1)


def _precisions(ranking: Ranking, options: MetricOptions) -> Tensor:
    return (ranking.value * ranking.within * ranking.upto / ranking.rank).sum(-1)


def _ideal(ranking: Ranking, facts: ListFacts, options: MetricOptions) -> Tensor:
    return torch.where(facts.idcg == 0, torch.ones_like(facts.idcg), facts.idcg)


def _cutoff_or_listed(ranking: Ranking, facts: ListFacts, options: MetricOptions) -> Tensor:
    if options.adaptive_k:
        retrieved = ranking.within.sum(-1)  # (a bound's within may be negative: kept, as rax does)
        return torch.where(retrieved == 0, torch.ones_like(retrieved), retrieved)
    return facts.listed.clamp(min=1) if options.k is None else torch.full_like(facts.listed, options.k)


def _relevant(ranking: Ranking, facts: ListFacts, options: MetricOptions) -> Tensor:
    return facts.relevant.clamp(min=1)


def _ap_normaliser(ranking: Ranking, facts: ListFacts, options: MetricOptions) -> Tensor:
    relevant = facts.relevant.clamp(min=1)
    if options.ap_normaliser == "r" or (options.ap_normaliser == "min_r_k" and options.k is None):
        return relevant
    if options.ap_normaliser == "min_r_k":
        return relevant.clamp(max=options.k)
    found = (ranking.value * ranking.within).sum(-1)  # "found": the relevant ones within the cutoff
    return torch.where(found > 0, found, torch.ones_like(found))


def _ideal_is_zero(facts: ListFacts) -> Tensor:
    return facts.idcg == 0


def _nothing_relevant(facts: ListFacts) -> Tensor:
    return facts.relevant == 0


def rank_weights(metric: RankMetric, count: int, like: Tensor, options: MetricOptions) -> Tensor:
    """``[count]`` ``metric.rank_weight`` at the ranks ``1..count`` in ``like``'s dtype and device
    (a discount from :func:`torch_ndcg.definitions.discounts`, whose built-in tables are cached)."""
    if metric.rank_weight is _discount:
        return d.discounts(count, options.discount, like.dtype, like.device)
    return metric.rank_weight(torch.arange(1, count + 1, dtype=like.dtype, device=like.device), options)


DCG = RankMetric("dcg", True, _weighted(_discount), rank_weight=_discount)
NDCG = RankMetric("ndcg", True, _weighted(_discount), _ideal, _ideal_is_zero, rank_weight=_discount)
PRECISION = RankMetric("precision", False, _weighted(_one), _cutoff_or_listed, _nothing_relevant, rank_weight=_one)
RECALL = RankMetric("recall", False, _weighted(_one), _relevant, _nothing_relevant, rank_weight=_one)
RBP = RankMetric("rbp", False, _weighted(_rbp), rank_weight=_rbp)
MRR = RankMetric("mrr", False, _reciprocal_rank, is_empty=_nothing_relevant)
HIT_RATE = RankMetric("hit_rate", False, _first_hit, is_empty=_nothing_relevant)
AVERAGE_PRECISION = RankMetric(
    "average_precision", False, _precisions, _ap_normaliser, _nothing_relevant, reads_upto=True
)
METRICS: dict[str, RankMetric] = {
    m.name: m for m in (DCG, NDCG, PRECISION, RECALL, RBP, MRR, HIT_RATE, AVERAGE_PRECISION)
}


def hits_at_or_above(scores: Tensor, valid: Tensor, hits: Tensor) -> Tensor:
    """``[B, N]`` how many relevant real items score at least each item's score (itself
    included): the ``upto`` of per-item rankings, counted on the order of the scores, without
    gradient. O(N log N): one sort and a suffix sum."""
    lowest = torch.full_like(scores, -torch.inf)
    ascending, order = torch.sort(torch.where(valid, scores, lowest).detach(), dim=-1)
    in_order = torch.where(valid, hits, torch.zeros_like(hits)).detach().gather(-1, order)
    above = torch.cat([in_order.flip(-1).cumsum(-1).flip(-1), torch.zeros_like(in_order[:, :1])], -1)
    first = torch.searchsorted(ascending, scores.detach().contiguous())  # first item scoring ≥ s_i
    return above.gather(-1, first)


def exact_ranking(scores: Tensor, valid: Tensor, value: Tensor, k: int | None, *, hits: Tensor | None = None) -> Ranking:
    """Per-item exact ranks from a sort of ``[B, N]`` scores (ties in an unspecified order):
    ``rank``, ``value`` (0 at padding), ``within = [rank ≤ k]`` and ``upto`` (hits at or above,
    from ``hits``, default ``value``)."""
    lowest = torch.full_like(scores, -torch.inf)
    order = torch.sort(torch.where(valid, scores, lowest), dim=-1, descending=True, stable=True).indices
    position = torch.arange(1, scores.shape[-1] + 1, dtype=scores.dtype, device=scores.device).expand_as(scores)
    rank = torch.zeros_like(scores).scatter(-1, order, position)
    inside = valid if k is None else valid & (rank <= k)
    hits = value if hits is None else hits
    zero = torch.zeros_like(value)
    return Ranking(
        rank, torch.where(valid, value, zero), inside.to(scores.dtype), hits_at_or_above(scores, valid, hits)
    )
