"""The public metrics on scored lists: ``ndcg``, ``dcg``, ``idcg``, ``cg``, ``mrr`` and companions.

Each metric is one plain function for both layouts: dense ``[..., N]`` lists (one query per
row), or flat ``[T]`` items with query ids (``indexes=``, torchmetrics' retrieval layout). Its
signature lists exactly the options it uses (``mrr`` has no ``gain``: Python refuses one), with
the defaults of :mod:`torch_ndcg.options`, and it hands them to one private evaluation,
:func:`_evaluate`, with its row of the metric table (:mod:`torch_ndcg.engine`).

The path of ``scores`` through ``tn.ndcg``: :func:`ndcg` → :func:`_evaluate` (every option
checked, once) → the layout (:func:`torch_ndcg.dense.queries`: :func:`~torch_ndcg.dense.prepare`
and :func:`~torch_ndcg.dense.rank` → :func:`torch_ndcg.ordering.top_ranks`; or
:func:`torch_ndcg.flat.queries`, which hands cheap-to-pad flat batches to the dense layout) →
:func:`torch_ndcg.engine.evaluate` → :func:`torch_ndcg.aggregation.reduce_queries`.
"""

from __future__ import annotations

from contextlib import nullcontext

import torch
from torch import Tensor

from . import definitions as d
from . import dense, engine, flat
from .aggregation import reduce_queries
from .options import (
    DEFAULT_AP_NORMALISER,
    DEFAULT_DISCOUNT,
    DEFAULT_EMPTY,
    DEFAULT_GAIN,
    DEFAULT_REDUCTION,
    DEFAULT_SHORT_LIST,
    DEFAULT_TIES,
    EMPTY,
    REDUCTIONS,
    TIES,
    ApNormaliser,
    Empty,
    Reduction,
    ShortList,
    Ties,
    document,
)
from .validation import (
    check_flag,
    check_list_length,
    check_mask,
    check_option,
    check_relevance_dtype,
    check_threshold,
    names_arguments,
)

__all__ = ["average_precision", "cg", "dcg", "hit_rate", "idcg", "mrr", "ndcg", "precision", "rbp", "recall"]

RETURNS = (
    "float32 tensor (float64 if an input is float64): a scalar, ``[...]`` per query with "
    "``reduction=\"none\"``, and a trailing cutoff axis when ``k`` is a sequence."
)


def _evaluate(
    metric: engine.Metric,
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff,
    *,
    indexes: Tensor | None,
    mask: Tensor | None,
    ties: str,
    allow_unretrieved: bool,
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
    """``metric`` of scored queries in either layout: the options checked here, once, and trusted below."""
    check_option("ties", ties, TIES)
    check_option("reduction", reduction, REDUCTIONS)
    check_option("empty", empty, EMPTY)
    check_flag("allow_unretrieved", allow_unretrieved)
    check_flag("validate", validate)
    if threshold is not None:
        threshold = check_threshold(threshold)
    if ap_normaliser is not DEFAULT_AP_NORMALISER or adaptive_k is not False or short_list is not DEFAULT_SHORT_LIST:
        metric = metric.configured(ap_normaliser=ap_normaliser, adaptive_k=adaptive_k, short_list=short_list)
    cutoffs, many = d.resolve_cutoffs(k)
    options = dict(gain=gain, ties=ties, hits=not metric.graded, validate=validate, weights=weights,
                   threshold=threshold, unretrieved=allow_unretrieved)  # fmt: skip
    # Without a gradient to carry, inference mode spares each of the many small kernels autograd's
    # bookkeeping; the result leaves it as an ordinary tensor (a copy: an inference tensor refuses
    # in-place updates and autograd).
    inference = _gradient_free(scores, relevance, weights, sample_weight, gain=gain, discount=discount)
    with torch.inference_mode() if inference else nullcontext():
        if indexes is None:
            queries: engine.RankedQueries = dense.queries(scores, relevance, cutoffs, mask=mask, **options)
        else:
            queries = flat.queries(scores, relevance, indexes, cutoffs, mask=mask, **options)
        values = engine.evaluate(metric, queries, cutoffs, discount=discount, empty=empty)
        result = reduce_queries(values, many, reduction, sample_weight, validate)
    return result.clone() if inference else result


def _gradient_free(*tensors: object, gain: d.Gain, discount: d.Discount) -> bool:
    """Whether nothing the evaluation computes can need autograd (no input requires a gradient and
    no callable option could bring one in), outside inference mode and compilation."""
    if torch.compiler.is_compiling() or torch.is_inference_mode_enabled():
        return False
    if not (isinstance(gain, str) and isinstance(discount, str)):
        return False
    return not any(isinstance(tensor, Tensor) and tensor.requires_grad for tensor in tensors)


@names_arguments
@document(RETURNS)
def ndcg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    weights: Tensor | None = None,
    empty: Empty = DEFAULT_EMPTY,
    short_list: ShortList = DEFAULT_SHORT_LIST,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Normalised discounted cumulative gain at ``k``.

    .. math::
        \mathrm{NDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}},\quad
        \mathrm{DCG@k} = \sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})\,\mathrm{discount}(i)

    where :math:`rel_{(i)}` is the label of the item ranked ``i``-th by ``scores`` and IDCG@k is the
    DCG@k of the labels sorted in decreasing order (the best possible ranking).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ndcg(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]))
        tensor(0.6934)
        >>> scores = torch.tensor([0.9, 0.2, 0.8, 0.1, 0.4])
        >>> relevance = torch.tensor([0, 1, 1, 2, 0])
        >>> tn.ndcg(scores, relevance, indexes=torch.tensor([7, 3, 7, 3, 7]), reduction="none")
        tensor([0.8597, 0.6309])
    """
    return _evaluate(
        engine.NDCG, scores, relevance, k, indexes=indexes, mask=mask, gain=gain, discount=discount, weights=weights,
        empty=empty, short_list=short_list, ties=ties, allow_unretrieved=allow_unretrieved, reduction=reduction, sample_weight=sample_weight,
        validate=validate,
    )


@names_arguments
@document(RETURNS)
def dcg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    weights: Tensor | None = None,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Discounted cumulative gain: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})\,\mathrm{discount}(i)`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.dcg(torch.tensor([3., 2., 1.]), torch.tensor([3, 2, 3]), k=2)
        tensor(4.2619)
    """
    return _evaluate(
        engine.DCG, scores, relevance, k, indexes=indexes, mask=mask, gain=gain, discount=discount, weights=weights,
        ties=ties, allow_unretrieved=allow_unretrieved, reduction=reduction, sample_weight=sample_weight,
        validate=validate,
    )


@names_arguments
@document(RETURNS)
def cg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    weights: Tensor | None = None,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Cumulative gain of the top ``k``: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.cg(torch.tensor([0.3, 0.2, 0.1]), torch.tensor([0.5, 0.9, 0.3]), k=2)
        tensor(1.4000)
    """
    return _evaluate(
        engine.CG, scores, relevance, k, indexes=indexes, mask=mask, gain=gain, weights=weights, ties=ties,
        allow_unretrieved=allow_unretrieved, reduction=reduction, sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def mrr(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    threshold: float | None = None,
    empty: Empty = DEFAULT_EMPTY,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Mean reciprocal rank: :math:`1/\mathrm{rank}` of the first item with relevance > 0 within the
    top ``k`` (0 if none). With ``ties="average"`` this is the exact expectation over orderings of
    tied items (McSherry & Najork, ECIR 2008).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[3., 2., 1.]] * 3)
        >>> tn.mrr(scores, torch.tensor([[0, 0, 1], [0, 1, 0], [1, 0, 0]]))
        tensor(0.6111)
    """
    return _evaluate(
        engine.MRR, scores, relevance, k, indexes=indexes, mask=mask, threshold=threshold, empty=empty, ties=ties,
        allow_unretrieved=allow_unretrieved, reduction=reduction, sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def precision(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    threshold: float | None = None,
    adaptive_k: bool = False,
    empty: Empty = DEFAULT_EMPTY,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Precision@k: :math:`\frac{1}{k}\sum_{i=1}^{k} [rel_{(i)} > 0]`. Divides by ``k`` even when a
    list has fewer than ``k`` items (as trec_eval's P@k); ``k=None`` divides by the list's length, and
    ``adaptive_k=True`` by min(k, the list's length) (torchmetrics' ``adaptive_k``; rax's precision).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=2)
        tensor(0.5000)
    """
    return _evaluate(
        engine.PRECISION, scores, relevance, k, indexes=indexes, mask=mask, threshold=threshold,
        adaptive_k=adaptive_k, empty=empty, ties=ties, allow_unretrieved=allow_unretrieved, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def recall(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    threshold: float | None = None,
    empty: Empty = DEFAULT_EMPTY,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Recall@k: :math:`\frac{1}{R}\sum_{i=1}^{k} [rel_{(i)} > 0]`, R = relevant items in the list.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.recall(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=2)
        tensor(0.5000)
    """
    return _evaluate(
        engine.RECALL, scores, relevance, k, indexes=indexes, mask=mask, threshold=threshold, empty=empty, ties=ties,
        allow_unretrieved=allow_unretrieved, reduction=reduction, sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def hit_rate(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    threshold: float | None = None,
    empty: Empty = DEFAULT_EMPTY,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""HitRate@k: 1 if any of the top ``k`` items has relevance > 0, else 0.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.hit_rate(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=1)
        tensor(0.)
    """
    return _evaluate(
        engine.HIT_RATE, scores, relevance, k, indexes=indexes, mask=mask, threshold=threshold, empty=empty,
        ties=ties, allow_unretrieved=allow_unretrieved, reduction=reduction, sample_weight=sample_weight,
        validate=validate,
    )


@names_arguments
@document(RETURNS)
def rbp(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    persistence: float = 0.8,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    threshold: float | None = None,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Rank-biased precision (Moffat & Zobel, TOIS 2008) of the top ``k``:

    .. math:: \mathrm{RBP@k} = (1 - p) \sum_{i=1}^{k} p^{\,i-1}\,[rel_{(i)} > 0]

    A user reads rank 1, then each next rank with probability ``p``; RBP is the expected rate of
    relevant items read (ir_measures' ``RBP(rel=threshold, p=p)`` with ``k=None``). Items below
    the list or the cutoff are unknown to it: the most RBP could grow by is its residual
    :math:`p^{\min(k, n)}` for a list of n items, every item of a list being judged. A query with
    nothing relevant scores 0.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.rbp(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), persistence=0.5)
        tensor(0.3750)
    """
    if isinstance(persistence, bool) or not isinstance(persistence, (int, float)) or not 0 <= persistence < 1:
        raise ValueError(f"persistence must be a number in [0, 1), got {persistence!r}")
    p = float(persistence)
    return _evaluate(
        engine.RBP, scores, relevance, k, indexes=indexes, mask=mask, threshold=threshold,
        discount=lambda rank: (1 - p) * p ** (rank - 1), ties=ties, allow_unretrieved=allow_unretrieved,
        reduction=reduction, sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(RETURNS)
def average_precision(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    threshold: float | None = None,
    ap_normaliser: ApNormaliser = DEFAULT_AP_NORMALISER,
    empty: Empty = DEFAULT_EMPTY,
    ties: Ties = DEFAULT_TIES,
    allow_unretrieved: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Average precision at ``k``:

    .. math:: \mathrm{AP@k} = \frac{1}{\min(R, k)} \sum_{i=1}^{k} [rel_{(i)} > 0]\,\mathrm{P@i}

    With ``k=None`` the normaliser is ``R`` (trec_eval's AP). ``ap_normaliser="r"`` divides by R at
    every k (trec_eval's ``map_cut``), ``"found"`` by the relevant items ranked within the top k
    (torchmetrics' ``RetrievalMAP(top_k=k)``).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.average_precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]))
        tensor(0.5833)
    """
    return _evaluate(
        engine.AVERAGE_PRECISION, scores, relevance, k, indexes=indexes, mask=mask, threshold=threshold,
        ap_normaliser=ap_normaliser, empty=empty, ties=ties, allow_unretrieved=allow_unretrieved, reduction=reduction,
        sample_weight=sample_weight, validate=validate,
    )


@names_arguments
@document(
    "float32 tensor (float64 if ``relevance`` is float64): a scalar, ``[...]`` per query with "
    "``reduction=\"none\"``, and a trailing cutoff axis when ``k`` is a sequence."
)
def idcg(
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    reduction: Reduction = DEFAULT_REDUCTION,
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
    check_option("reduction", reduction, REDUCTIONS)
    check_flag("validate", validate)
    check_relevance_dtype("relevance", relevance)
    if relevance.dim() < 1:
        raise ValueError("relevance must have at least 1 dimension [..., N], got a scalar")
    check_list_length("relevance", relevance)
    check_mask(mask, relevance.shape)
    cutoffs, many = d.resolve_cutoffs(k)
    placeholder_scores = relevance.new_zeros(relevance.shape, dtype=d.compute_dtype(relevance))
    lists = dense.prepare(placeholder_scores, relevance, mask, gain, validate)
    return reduce_queries(dense.ideal_dcg(lists, cutoffs, discount), many, reduction)
