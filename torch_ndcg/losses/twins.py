r"""Every ranked metric's smooth twin: a loss is a metric plus a relaxation.

* The metric is written once, over ranks, in :mod:`torch_ndcg.over_ranks` (its gain, discount,
  cutoff, normaliser and ``empty`` are the exact metric's: fed exact ranks it *is*
  :func:`torch_ndcg.ndcg`, :func:`torch_ndcg.mrr`, …).
* The relaxation (``relaxation=``, a name or an object of
  :mod:`torch_ndcg.losses.relaxations.choices`) turns scores into the smooth ranks that the
  definition reads: ``"approx"`` (default), ``"bound"``, ``"neuralsort"``, ``"sinkhorn"``,
  or ``tn.Gumbel(...)`` around any of them.

``tn.mrr_loss(scores, labels, k=10, relaxation="approx")`` is ApproxMRR@10,
``tn.recall_loss(..., relaxation="neuralsort")`` NeuralSort Recall@k,
``tn.ndcg_loss(..., relaxation="sinkhorn")`` NeuralNDCG. Each loss is ``1 − metric`` per list
(``−DCG`` for :func:`dcg_loss`, which has no upper bound), reduced by ``reduction``; lists that
the metric calls empty (nothing relevant) follow ``empty``, by default ``"skip"``: left out,
without gradient. The inputs and options are the metric's own (``k`` is one cutoff).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import definitions as d
from .. import over_ranks
from ..aggregation import reduce
from ..options import (
    DEFAULT_AP_NORMALISER,
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_REDUCTION,
    ApNormaliser,
    Empty,
    Reduction,
)
from ..validation import names_arguments
from . import common
from .layout import flat_call
from .options import TwinOptions, single_cutoff
from .relaxations.choices import DEFAULT_RELAXATION, Relaxation, RelaxationName, TwinLists, resolve_relaxation

__all__ = [
    "average_precision_loss", "dcg_loss", "hit_rate_loss", "mrr_loss", "ndcg_loss", "precision_loss", "rbp_loss",
    "recall_loss",
]  # fmt: skip

DEFAULT_PERSISTENCE = 0.8
_RANK_FREE = ("precision", "recall", "hit_rate")


def smooth_values(
    metric: over_ranks.RankMetric,
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff,
    *,
    mask: Tensor | None,
    relaxation: RelaxationName | Relaxation,
    validate: bool,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    threshold: float | None = None,
    options: over_ranks.MetricOptions,
) -> tuple[Tensor, Tensor, torch.Size]:
    """The smooth ``metric`` of each list ``[B]``, which lists it calls empty ``[B]``, and the
    batch shape: inputs prepared and checked exactly as the metrics do."""
    graded = metric.graded
    lists = common.prepare(
        scores, relevance, k, mask, gain if graded else "linear", discount, validate, ideal=metric.name == "ndcg"
    )
    valid, listed = lists.valid, lists.valid.sum(-1).to(lists.gains.dtype)
    if graded:  # (no graded metric counts relevant items)
        hits, facts = None, over_ranks.ListFacts(relevant=None, listed=listed, idcg=lists.idcg)
    else:  # binary metrics prepared their labels with the linear gain: the gains are the labels
        hits = torch.where(valid, d.is_relevant(lists.gains, threshold), False).to(lists.gains.dtype)
        facts = over_ranks.ListFacts(relevant=hits.sum(-1), listed=listed, idcg=lists.idcg)
    twin = TwinLists(lists.scores, valid, lists.gains if graded else hits, hits, lists.cutoff, facts, validate)
    values = resolve_relaxation(relaxation).values(twin, metric, options)
    if metric.name in _RANK_FREE and (lists.cutoff is None or lists.cutoff >= lists.length):
        # Over the whole list (no cutoff, or one no list reaches) these metrics read no rank: a
        # constant, kept on the scores' graph (with a zero gradient) so that backward() and
        # torch.func.grad work as for any loss.
        values = values + 0.0 * lists.scores.sum(-1)
    is_empty = torch.zeros_like(valid[:, 0]) if metric.is_empty is None else metric.is_empty(facts)
    return values, is_empty, lists.batch_shape


def twin_options(given: dict) -> TwinOptions:
    """The checked options of a twin from those its public form was ``given`` (a function's
    ``locals()``, a module's keywords): the metric's own, the defaults for those it has not (a
    metric without ``empty``, DCG and RBP, calls no list empty: ``"zero"`` never applies)."""
    return TwinOptions(
        k=given["k"], empty=given.get("empty", "zero"), reduction=given["reduction"], validate=given["validate"],
        relaxation=given["relaxation"], gain=given.get("gain", DEFAULT_GAIN),
        discount=given.get("discount", DEFAULT_DISCOUNT), threshold=given.get("threshold"),
        adaptive_k=given.get("adaptive_k", False), ap_normaliser=given.get("ap_normaliser", DEFAULT_AP_NORMALISER),
        persistence=given.get("persistence", DEFAULT_PERSISTENCE),
    )  # fmt: skip


def smooth_ndcg(scores: Tensor, relevance: Tensor, k: d.Cutoff, *, mask: Tensor | None, gain: d.Gain,
                discount: d.Discount, empty: str, reduction: str, relaxation: Relaxation, validate: bool) -> Tensor:  # fmt: skip
    """The smooth NDCG@k of each list, reduced by ``reduction`` (options already checked): the NDCG
    definition of :mod:`torch_ndcg.over_ranks` fed by ``relaxation``, which
    :func:`torch_ndcg.approx_ndcg`, :func:`torch_ndcg.neuralsort_ndcg` and
    :func:`torch_ndcg.neural_ndcg` are with their relaxation's options."""
    options = over_ranks.MetricOptions(k=single_cutoff(k), discount=discount)
    values, is_empty, shape = smooth_values(
        over_ranks.NDCG, scores, relevance, k, mask=mask, relaxation=relaxation, validate=validate, gain=gain,
        discount=discount, options=options,
    )  # fmt: skip
    return common.finish_values(values, is_empty, shape, validate, empty, reduction)


def _loss(metric: over_ranks.RankMetric, arguments: dict) -> Tensor:
    """The twin loss of ``metric`` for a public function's ``arguments`` (its ``locals()``)."""
    checked = twin_options(arguments)  # checks every option, before any work
    options = over_ranks.MetricOptions(
        k=single_cutoff(checked.k), discount=checked.discount, persistence=float(checked.persistence),
        adaptive_k=checked.adaptive_k, ap_normaliser=checked.ap_normaliser,
    )  # fmt: skip
    values, is_empty, shape = smooth_values(
        metric, arguments["scores"], arguments["relevance"], checked.k, mask=arguments["mask"],
        relaxation=checked.relaxation, validate=checked.validate, gain=checked.gain, discount=checked.discount,
        threshold=checked.threshold, options=options,
    )  # fmt: skip
    per_list = common.finish_values(values, is_empty, shape, checked.validate, checked.empty, "none")
    return reduce(-per_list if metric.name == "dcg" else 1.0 - per_list, checked.reduction)


@names_arguments
def ndcg_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    empty: Empty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth NDCG@k loss, :math:`1 - \mathrm{NDCG@k}` per list with the ranks relaxed:

    .. math:: \mathrm{NDCG@k} = \frac{1}{\mathrm{IDCG@k}} \sum_e \mathrm{gain}_e\,\mathrm{discount}(rank_e)\,within_e

    over the relaxation's entries (:mod:`torch_ndcg.over_ranks`), with the exact IDCG@k.
    ``relaxation="approx"`` is :func:`torch_ndcg.approx_ndcg_loss`, ``"neuralsort"``
    :func:`torch_ndcg.neuralsort_ndcg_loss`, ``"sinkhorn"`` :func:`torch_ndcg.neural_ndcg_loss`
    (each with its default options).

    Args:
        scores, relevance, k, mask, indexes, gain, discount, empty, reduction, validate: as in
            :func:`torch_ndcg.ndcg` (``k`` is one cutoff; ``empty`` defaults to ``"skip"``).
        relaxation: ``"approx"``, ``"bound"``, ``"neuralsort"``, ``"sinkhorn"``, ``"gumbel"``
            or a relaxation object (:mod:`torch_ndcg.losses.relaxations.choices`).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[0.1, 0.9, 0.4]], requires_grad=True)
        >>> tn.ndcg_loss(scores, torch.tensor([[2, 0, 1]])).backward()
        >>> bool(scores.grad[0, 0] < 0)  # raising the most relevant item lowers the loss
        True
    """
    if indexes is not None:
        return flat_call(ndcg_loss, locals())
    return _loss(over_ranks.NDCG, locals())


@names_arguments
def dcg_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth DCG@k loss, :math:`-\mathrm{DCG@k}` per list (DCG has no upper bound), with
    :math:`\mathrm{DCG@k} = \sum_e \mathrm{gain}_e\,\mathrm{discount}(rank_e)\,within_e`.

    Args:
        scores, relevance, k, mask, indexes, gain, discount, reduction, validate: as in
            :func:`torch_ndcg.dcg`.
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(-tn.dcg_loss(scores, torch.tensor([[1, 0, 0]]), relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        1.0
    """
    if indexes is not None:
        return flat_call(dcg_loss, locals())
    return _loss(over_ranks.DCG, locals())


@names_arguments
def mrr_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    threshold: float | None = None,
    empty: Empty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth MRR@k loss (ApproxMRR with ``"approx"``), :math:`1 - \mathrm{MRR@k}` per list, with

    .. math:: \mathrm{MRR@k} = \max_e \frac{[rel_e]\,within_e}{rank_e}

    (the reciprocal rank of the first relevant item for exact ranks; rax's form).

    Args:
        scores, relevance, k, mask, indexes, threshold, empty, reduction, validate: as in
            :func:`torch_ndcg.mrr` (``empty`` defaults to ``"skip"``).
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.mrr_loss(scores, torch.tensor([[0, 1, 1]]), relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        0.5
    """
    if indexes is not None:
        return flat_call(mrr_loss, locals())
    return _loss(over_ranks.MRR, locals())


@names_arguments
def precision_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    threshold: float | None = None,
    adaptive_k: bool = False,
    empty: Empty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth precision@k loss, :math:`1 - \mathrm{P@k}` per list, with
    :math:`\mathrm{P@k} = \sum_e [rel_e]\,within_e / k` (the list's length for ``k=None``;
    ``adaptive_k=True``: divided by :math:`\sum_e within_e`, which is min(k, n) for exact ranks
    and rax's count of retrieved items for relaxed ones).

    Args:
        scores, relevance, k, mask, indexes, threshold, adaptive_k, empty, reduction, validate:
            as in :func:`torch_ndcg.precision` (``empty`` defaults to ``"skip"``).
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.precision_loss(scores, torch.tensor([[0, 1, 1]]), k=2, relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        0.5
    """
    if indexes is not None:
        return flat_call(precision_loss, locals())
    return _loss(over_ranks.PRECISION, locals())


@names_arguments
def recall_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    threshold: float | None = None,
    empty: Empty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth recall@k loss (ApproxRecall@k with ``"approx"``), :math:`1 - \mathrm{R@k}` per
    list, with :math:`\mathrm{R@k} = \sum_e [rel_e]\,within_e / R` (R: the relevant items).

    Args:
        scores, relevance, k, mask, indexes, threshold, empty, reduction, validate: as in
            :func:`torch_ndcg.recall` (``empty`` defaults to ``"skip"``).
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.recall_loss(scores, torch.tensor([[0, 1, 1]]), k=2, relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        0.5
    """
    if indexes is not None:
        return flat_call(recall_loss, locals())
    return _loss(over_ranks.RECALL, locals())


@names_arguments
def hit_rate_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    threshold: float | None = None,
    empty: Empty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth hit rate@k loss, :math:`1 - \mathrm{HR@k}` per list, with
    :math:`\mathrm{HR@k} = \max_e [rel_e]\,within_e`.

    Args:
        scores, relevance, k, mask, indexes, threshold, empty, reduction, validate: as in
            :func:`torch_ndcg.hit_rate` (``empty`` defaults to ``"skip"``).
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.hit_rate_loss(scores, torch.tensor([[0, 1, 1]]), k=1, relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        1.0
    """
    if indexes is not None:
        return flat_call(hit_rate_loss, locals())
    return _loss(over_ranks.HIT_RATE, locals())


@names_arguments
def average_precision_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    threshold: float | None = None,
    ap_normaliser: ApNormaliser = DEFAULT_AP_NORMALISER,
    empty: Empty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth AP@k loss (ApproxAP with ``"approx"``), :math:`1 - \mathrm{AP@k}` per list, with

    .. math:: \mathrm{AP@k} = \frac{1}{\mathrm{norm}} \sum_e [rel_e]\,within_e\,\frac{upto_e}{rank_e}

    where :math:`upto_e` counts the relevant entries at or above :math:`e` (per item: a count on
    the scores' order, without gradient, as rax; per rank: the expected count) and ``norm`` is
    ``ap_normaliser``'s.

    Args:
        scores, relevance, k, mask, indexes, threshold, ap_normaliser, empty, reduction,
            validate: as in :func:`torch_ndcg.average_precision` (``empty`` defaults to ``"skip"``).
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.average_precision_loss(scores, torch.tensor([[1, 0, 1]]), relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        0.1667
    """
    if indexes is not None:
        return flat_call(average_precision_loss, locals())
    return _loss(over_ranks.AVERAGE_PRECISION, locals())


@names_arguments
def rbp_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    persistence: float = DEFAULT_PERSISTENCE,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    threshold: float | None = None,
    reduction: Reduction = DEFAULT_REDUCTION,
    relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
    validate: bool = True,
) -> Tensor:
    r"""Smooth rank-biased precision loss, :math:`1 - \mathrm{RBP@k}` per list, with
    :math:`\mathrm{RBP@k} = (1 - p) \sum_e [rel_e]\,p^{\,rank_e - 1}\,within_e`.

    Args:
        scores, relevance, k, persistence, mask, indexes, threshold, reduction, validate: as in
            :func:`torch_ndcg.rbp`.
        relaxation: as in :func:`ndcg_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[0.9, 0.8, 0.1]])
        >>> round(tn.rbp_loss(scores, torch.tensor([[0, 1, 1]]), persistence=0.5, relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        0.625
    """
    if indexes is not None:
        return flat_call(rbp_loss, locals())
    return _loss(over_ranks.RBP, locals())
