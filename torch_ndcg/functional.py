"""The public metrics on scored lists: ``ndcg``, ``dcg``, ``idcg``, ``cg``, ``mrr`` and companions.

Each metric is one function for both layouts: dense ``[..., N]`` lists (one query per row), or
flat ``[T]`` items with query ids (``indexes=``, torchmetrics' retrieval layout). The options
are one signature, :meth:`ScoredMetric.__call__`, documented once in :mod:`torch_ndcg.options`;
each metric refuses an option it has no use for (``mrr`` has no ``gain``).

The path of ``scores`` through ``tn.ndcg``: :meth:`ScoredMetric.__call__` → the layout
(:func:`torch_ndcg.dense.prepare` and :func:`~torch_ndcg.dense.rank`, or
:func:`torch_ndcg.flat.select`, :func:`~torch_ndcg.flat.as_rows` and
:func:`~torch_ndcg.flat.rank`) → :func:`torch_ndcg.ordering.top_ranks` →
:func:`torch_ndcg.engine.evaluate` → :func:`torch_ndcg.aggregation.reduce_queries`.
"""

from __future__ import annotations

from typing import Unpack

from torch import Tensor

from . import definitions as d
from . import dense, engine, flat
from .aggregation import reduce_queries
from .engine import Metric, RankedQueries
from .options import REDUCTIONS, TIES, MetricOptions, Reduction, Ties, settle
from .validation import (
    check_list_length,
    check_flag,
    check_mask,
    check_option,
    check_relevance_dtype,
    check_threshold,
)

__all__ = ["average_precision", "cg", "dcg", "hit_rate", "idcg", "mrr", "ndcg", "precision", "recall"]

class ScoredMetric(engine.MetricFunction):
    """A ranking metric of scored items; its instances are ``torch_ndcg.ndcg`` and friends.

    Each instance's docstring gives its formula and example; the options are documented in
    :data:`torch_ndcg.options.OPTION_DOCS`.
    """

    module = "torch_ndcg"
    leading = ("scores", "relevance", "k", "indexes", "mask")
    trailing = ("ties", "allow_unretrieved", "reduction", "sample_weight", "validate")
    returns = (
        "float32 tensor (float64 if an input is float64): a scalar, ``[...]`` per query with "
        "``reduction=\"none\"``, and a trailing cutoff axis when ``k`` is a sequence."
    )

    def __call__(
        self,
        scores: Tensor,
        relevance: Tensor,
        k: d.Cutoff = None,
        *,
        indexes: Tensor | None = None,
        mask: Tensor | None = None,
        ties: Ties = "average",
        allow_unretrieved: bool = False,
        **options: Unpack[MetricOptions],
    ) -> Tensor:
        settled = settle(self.__name__, options, MetricOptions)
        metric = self.metric.configure(settled)
        check_option("ties", ties, TIES)
        check_option("reduction", settled["reduction"], REDUCTIONS)
        check_flag("allow_unretrieved", allow_unretrieved)
        cutoffs, many = d.resolve_cutoffs(k)
        threshold, validate = check_threshold(settled["threshold"]), settled["validate"]
        queries = _rank(
            metric, scores, relevance, cutoffs, indexes, mask, settled["gain"], ties, validate, settled["weights"],
            threshold, allow_unretrieved,
        )
        values = engine.evaluate(metric, queries, cutoffs, discount=settled["discount"], empty=settled["empty"])
        return reduce_queries(values, many, settled["reduction"], settled["sample_weight"], validate)


def _rank(
    metric: Metric,
    scores: Tensor,
    relevance: Tensor,
    cutoffs: engine.Cutoffs,
    indexes: Tensor | None,
    mask: Tensor | None,
    gain: d.Gain,
    ties: str,
    validate: bool,
    weights: Tensor | None,
    threshold: float | None,
    unretrieved: bool,
) -> RankedQueries:
    """Rank the queries of either layout, as deep as the cutoffs need."""
    if indexes is not None:
        scores, relevance, indexes, weights = flat.select(scores, relevance, indexes, mask, weights)
        rows = flat.as_rows(scores, relevance, indexes, weights)
        if rows is None:
            return flat.rank(
                scores, relevance, indexes, gain=gain, ties=ties, validate=validate, weights=weights,
                threshold=threshold, unretrieved=unretrieved, hits=not metric.graded,
            )
        scores, relevance, mask, weights = rows
    lists = dense.prepare(
        scores, relevance, mask, gain, validate, weights=weights, threshold=threshold, unretrieved=unretrieved
    )
    ranks = dense.rank(lists, dense.depth_of(cutoffs, lists.length), ties, hits=not metric.graded, validate=validate)
    return dense.DenseQueries(ranks, lists)


def idcg(
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    discount: d.Discount = "log2",
    reduction: Reduction = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Ideal DCG: the DCG@k of the labels sorted in decreasing order of gain.

    .. math:: \mathrm{IDCG@k} = \sum_{i=1}^{k} \mathrm{gain}(rel^{*}_{(i)})\,\mathrm{discount}(i)

    Takes dense ``[..., N]`` labels; the options are those of :func:`torch_ndcg.ndcg`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.idcg(torch.tensor([3, 2, 2, 1]), k=4)
        tensor(5.6925)
    """
    check_relevance_dtype("relevance", relevance)
    if relevance.dim() < 1:
        raise ValueError("relevance must have at least 1 dimension [..., N], got a scalar")
    check_list_length("relevance", relevance)
    check_mask(mask, relevance.shape)
    cutoffs, many = d.resolve_cutoffs(k)
    placeholder_scores = relevance.new_zeros(relevance.shape, dtype=d.compute_dtype(relevance))
    lists = dense.prepare(placeholder_scores, relevance, mask, gain, validate)
    return reduce_queries(dense.ideal_dcg(lists, cutoffs, discount), many, reduction)


ndcg = ScoredMetric(
    engine.NDCG,
    r"""Normalised discounted cumulative gain at ``k``.

.. math::
    \mathrm{NDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}},\quad
    \mathrm{DCG@k} = \sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})\,\mathrm{discount}(i)

where :math:`rel_{(i)}` is the label of the item ranked ``i``-th by ``scores`` and IDCG@k is the
DCG@k of the labels sorted in decreasing order (the best possible ranking).""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.ndcg(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]))
    tensor(0.6934)
    >>> scores = torch.tensor([0.9, 0.2, 0.8, 0.1, 0.4])
    >>> relevance = torch.tensor([0, 1, 1, 2, 0])
    >>> tn.ndcg(scores, relevance, indexes=torch.tensor([7, 3, 7, 3, 7]), reduction="none")
    tensor([0.8597, 0.6309])""",
)
dcg = ScoredMetric(
    engine.DCG,
    r"""Discounted cumulative gain: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})\,\mathrm{discount}(i)`.""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.dcg(torch.tensor([3., 2., 1.]), torch.tensor([3, 2, 3]), k=2)
    tensor(4.2619)""",
)
cg = ScoredMetric(
    engine.CG,
    r"""Cumulative gain of the top ``k``: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})`.""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.cg(torch.tensor([0.3, 0.2, 0.1]), torch.tensor([0.5, 0.9, 0.3]), k=2)
    tensor(1.4000)""",
)
mrr = ScoredMetric(
    engine.MRR,
    r"""Mean reciprocal rank: :math:`1/\mathrm{rank}` of the first item with relevance > 0 within the
top ``k`` (0 if none). With ``ties="average"`` this is the exact expectation over orderings of
tied items (McSherry & Najork, ECIR 2008).""",
    """    >>> import torch, torch_ndcg as tn
    >>> scores = torch.tensor([[3., 2., 1.]] * 3)
    >>> tn.mrr(scores, torch.tensor([[0, 0, 1], [0, 1, 0], [1, 0, 0]]))
    tensor(0.6111)""",
)
precision = ScoredMetric(
    engine.PRECISION,
    r"""Precision@k: :math:`\frac{1}{k}\sum_{i=1}^{k} [rel_{(i)} > 0]`. Divides by ``k`` even when a
list has fewer than ``k`` items (as trec_eval's P@k); ``k=None`` divides by the list's length, and
``adaptive_k=True`` by min(k, the list's length) (torchmetrics' ``adaptive_k``; rax's precision).""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=2)
    tensor(0.5000)""",
)
recall = ScoredMetric(
    engine.RECALL,
    r"""Recall@k: :math:`\frac{1}{R}\sum_{i=1}^{k} [rel_{(i)} > 0]`, R = relevant items in the list.""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.recall(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=2)
    tensor(0.5000)""",
)
hit_rate = ScoredMetric(
    engine.HIT_RATE,
    """HitRate@k: 1 if any of the top ``k`` items has relevance > 0, else 0.""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.hit_rate(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=1)
    tensor(0.)""",
)
average_precision = ScoredMetric(
    engine.AVERAGE_PRECISION,
    r"""Average precision at ``k``:

.. math:: \mathrm{AP@k} = \frac{1}{\min(R, k)} \sum_{i=1}^{k} [rel_{(i)} > 0]\,\mathrm{P@i}

With ``k=None`` the normaliser is ``R`` (trec_eval's AP). ``ap_normaliser="r"`` divides by R at
every k (trec_eval's ``map_cut``), ``"found"`` by the relevant items ranked within the top k
(torchmetrics' ``RetrievalMAP(top_k=k)``).""",
    """    >>> import torch, torch_ndcg as tn
    >>> tn.average_precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]))
    tensor(0.5833)""",
)

# The metrics are callable objects, which doctest does not collect by itself.
__test__ = {name: globals()[name].__doc__ for name in __all__ if name != "idcg"}
