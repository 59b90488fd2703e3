"""Exact ranking metrics on dense ``[..., N]`` batches: NDCG, DCG, IDCG, CG, MRR and companions.

Every function ranks the last axis, treats all leading axes as a batch of queries, and runs
as a handful of tensor kernels on the inputs' device (no Python loop over queries).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from . import definitions as d
from .ranking import rank_slots
from .selection import HostSort, host_sort, top_values
from .reduction import apply_empty, finish, normalise
from .slots import Slots, expected_gain, first_hit_probability, hit_probability, precision_term
from .validation import (
    TIES,
    as_float_scores,
    check_list_length,
    check_mask,
    check_option,
    check_relevance_dtype,
    check_relevance_values,
    check_same_shape,
    check_score_values,
    check_tensor,
)


@dataclass(frozen=True)
class DenseLists:
    """Validated dense inputs in the compute dtype, with padding neutralised."""

    scores: Tensor  # -inf at masked items
    gains: Tensor  # 0 at masked items
    relevance: Tensor  # 0 at masked items
    dtype: torch.dtype
    gain: d.Gain
    checked: bool  # values were validated (which synchronised), so ranking may read them too
    sorted_scores: HostSort | None  # short float32 CPU lists: sorted on the host, once, when first asked

    def hits(self) -> Tensor:
        """1.0 where relevance > 0 (and unmasked), else 0.0; built only by metrics that count hits."""
        return (self.relevance > 0).to(self.dtype)

    @property
    def length(self) -> int:
        return self.scores.shape[-1]


def prepare_lists(
    scores: Tensor,
    relevance: Tensor,
    mask: Tensor | None,
    gain: d.Gain,
    validate: bool,
) -> DenseLists:
    """Check and normalise ``scores``/``relevance``/``mask`` for every dense metric."""
    check_tensor("scores", scores)
    check_relevance_dtype("relevance", relevance)
    check_same_shape("scores", scores, "relevance", relevance)
    check_list_length("scores", scores)
    check_mask(mask, scores.shape)
    dtype = d.compute_dtype(scores, relevance)
    float_scores = as_float_scores("scores", scores)
    if validate:
        check_score_values("scores", float_scores, mask)
        check_relevance_values("relevance", relevance, mask)
        d.check_exp2_range(relevance if mask is None else relevance[mask], gain, dtype, scores.shape[-1])
    if mask is not None:
        # where(), not multiplication: masked labels may be NaN or negative.
        relevance = torch.where(mask, relevance, torch.zeros_like(relevance))
        float_scores = float_scores.masked_fill(~mask, -torch.inf)
    real_relevance = relevance.to(dtype)
    gains = d.gains(real_relevance, gain, dtype)
    if mask is not None:
        # A callable gain may give label 0 a non-zero gain: padding must still add nothing.
        gains = torch.where(mask, gains, torch.zeros_like(gains))
    return DenseLists(float_scores, gains, real_relevance, dtype, gain, validate, host_sort(float_scores))


def sum_to_cutoffs(terms: Tensor, cutoffs: tuple[int | None, ...]) -> Tensor:
    """``[..., D]`` per-slot terms → ``[..., C]`` sums over the first ``k`` slots, one per cutoff."""
    totals = torch.cumsum(terms, dim=-1)
    index = [d.clip_cutoff(k, terms.shape[-1]) - 1 for k in cutoffs]
    if len(index) == 1:
        return totals.narrow(-1, index[0], 1)
    # index_select, not advanced indexing: the latter is several times slower on CPU.
    return totals.index_select(-1, torch.tensor(index, device=terms.device))


def _depth(cutoffs: tuple[int | None, ...], length: int) -> int:
    return max(d.clip_cutoff(k, length) for k in cutoffs)


def _slots(
    lists: DenseLists, cutoffs: tuple[int | None, ...], ties: str, hits: Tensor | None = None
) -> Slots:
    """Ranked slots; pass ``hits`` (from :meth:`DenseLists.hits`) for metrics that count relevant items."""
    check_option("ties", ties, TIES)
    depth = _depth(cutoffs, lists.length)
    return rank_slots(
        lists.scores, lists.gains, hits, lists.relevance, depth, ties,
        may_sync=lists.checked, presorted=lists.sorted_scores,
    )


def _discounts(depth: int, discount: d.Discount, lists: DenseLists) -> Tensor:
    return d.discounts(depth, discount, lists.dtype, lists.scores.device)


def _dcg_at(lists: DenseLists, cutoffs: tuple[int | None, ...], discount: d.Discount, ties: str) -> Tensor:
    slots = _slots(lists, cutoffs, ties)
    terms = expected_gain(slots) * _discounts(slots.position.shape[-1], discount, lists)
    return sum_to_cutoffs(terms, cutoffs)


def _dcg_idcg_at(
    lists: DenseLists, cutoffs: tuple[int | None, ...], discount: d.Discount, ties: str, *, ideal: bool
) -> tuple[Tensor, Tensor | None]:
    """DCG@k and (with ``ideal``) IDCG@k, ``[..., C]`` each.

    Lists without ties near the top need no tie groups: for scores sorted on the host both gain
    orders come from a few numpy calls (:meth:`~torch_ndcg.selection.HostSort.tie_free_gains`),
    and the sums below are the same kernels as the general path's, so either path gives the
    same bits.
    """
    depth = _depth(cutoffs, lists.length)
    ordered = None
    if ties == "average" and lists.sorted_scores is not None:
        ordered = lists.sorted_scores.tie_free_gains(lists.gains, depth, ideal=ideal)
    if ordered is None:
        return _dcg_at(lists, cutoffs, discount, ties), _idcg_at(lists, cutoffs, discount) if ideal else None
    sums = sum_to_cutoffs(ordered * _discounts(depth, discount, lists), cutoffs)
    return tuple(sums.unbind(0)) if ideal else (sums, None)


def _idcg_at(lists: DenseLists, cutoffs: tuple[int | None, ...], discount: d.Discount) -> Tensor:
    depth = _depth(cutoffs, lists.length)
    ideal = top_values(lists.gains, depth, nonnegative=lists.gain in ("linear", "exp2"))
    return sum_to_cutoffs(ideal * _discounts(depth, discount, lists), cutoffs)


def ndcg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    discount: d.Discount = "log2",
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Normalised discounted cumulative gain at ``k``.

    .. math::
        \mathrm{NDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}},\quad
        \mathrm{DCG@k} = \sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})\,\mathrm{discount}(i)

    where :math:`rel_{(i)}` is the label of the item ranked ``i``-th by ``scores`` and IDCG@k is
    the DCG@k of the labels sorted in decreasing order (the best possible ranking).

    Args:
        scores: ``[..., N]`` model scores; higher ranks first. Integer scores are ranked as
            exact float64 values.
        relevance: ``[..., N]`` labels ≥ 0 (bool, int or float).
        k: cutoff; ``None`` or a value above ``N`` means the whole list; a sequence such as
            ``(1, 5, 10)`` adds a trailing dimension with one value per cutoff.
        mask: ``[..., N]`` bool, ``True`` for real items; padding may sit anywhere.
        gain: ``"linear"`` (``rel``), ``"exp2"`` (``2**rel - 1``) or a callable.
        discount: ``"log2"`` (``1/log2(rank + 1)``) or a callable of the 1-based rank.
        ties: ``"average"`` (expected value over all orderings of tied scores, as in
            scikit-learn), ``"first"`` (lower index first), ``"worst"``/``"best"`` (tied items
            by ascending/descending relevance).
        empty: value of a query whose IDCG is 0: ``"zero"``, ``"one"``, ``"skip"`` (left out
            of the mean; NaN with ``reduction="none"``) or ``"error"``.
        reduction: ``"mean"`` over queries, ``"sum"`` or ``"none"`` (shape ``[...]``).
        validate: check values (NaN, negative labels, …); ``False`` avoids every device
            synchronisation, for compiled or graph-captured code.

    Returns:
        float32 tensor (float64 if an input is float64).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ndcg(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]))
        tensor(0.6934)
    """
    lists = prepare_lists(scores, relevance, mask, gain, validate)
    cutoffs, many = d.resolve_cutoffs(k)
    dcg_k, idcg_k = _dcg_idcg_at(lists, cutoffs, discount, ties, ideal=True)
    return finish(normalise(dcg_k, idcg_k, empty), many, reduction)


def dcg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    discount: d.Discount = "log2",
    ties: str = "average",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Discounted cumulative gain: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})\,\mathrm{discount}(i)`.

    Options as in :func:`ndcg`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.dcg(torch.tensor([3., 2., 1.]), torch.tensor([3, 2, 3]), k=2)
        tensor(4.2619)
    """
    lists = prepare_lists(scores, relevance, mask, gain, validate)
    cutoffs, many = d.resolve_cutoffs(k)
    return finish(_dcg_idcg_at(lists, cutoffs, discount, ties, ideal=False)[0], many, reduction)


def idcg(
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    discount: d.Discount = "log2",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Ideal DCG: the DCG@k of the labels sorted in decreasing order of gain.

    .. math:: \mathrm{IDCG@k} = \sum_{i=1}^{k} \mathrm{gain}(rel^{*}_{(i)})\,\mathrm{discount}(i)

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.idcg(torch.tensor([3, 2, 2, 1]), k=4)
        tensor(5.6925)
    """
    check_relevance_dtype("relevance", relevance)
    lists = prepare_lists(torch.zeros(relevance.shape, device=relevance.device), relevance, mask, gain, validate)
    cutoffs, many = d.resolve_cutoffs(k)
    return finish(_idcg_at(lists, cutoffs, discount), many, reduction)


def cg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    ties: str = "average",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Cumulative gain of the top ``k``: :math:`\sum_{i=1}^{k} \mathrm{gain}(rel_{(i)})`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.cg(torch.tensor([0.3, 0.2, 0.1]), torch.tensor([0.5, 0.9, 0.3]), k=2)
        tensor(1.4000)
    """
    lists = prepare_lists(scores, relevance, mask, gain, validate)
    cutoffs, many = d.resolve_cutoffs(k)
    terms = expected_gain(_slots(lists, cutoffs, ties))
    return finish(sum_to_cutoffs(terms, cutoffs), many, reduction)


def mrr(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Mean reciprocal rank: :math:`1/\mathrm{rank}` of the first item with relevance > 0
    within the top ``k`` (0 if none).

    With ``ties="average"`` this is the exact expectation over orderings of tied items. A query
    with no relevant item at all is handled by ``empty``.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[3., 2., 1.]] * 3)
        >>> tn.mrr(scores, torch.tensor([[0, 0, 1], [0, 1, 0], [1, 0, 0]]))
        tensor(0.6111)
    """
    lists = prepare_lists(scores, relevance, mask, "linear", validate)
    cutoffs, many = d.resolve_cutoffs(k)
    hits = lists.hits()
    slots = _slots(lists, cutoffs, ties, hits)
    values = sum_to_cutoffs(first_hit_probability(slots) / (slots.position + 1), cutoffs)
    is_empty = (hits.sum(-1, keepdim=True) == 0).expand_as(values)
    return finish(apply_empty(values, is_empty, empty), many, reduction)


def _hit_metric(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff,
    mask: Tensor | None,
    ties: str,
    empty: str,
    reduction: str,
    validate: bool,
    name: str,
) -> Tensor:
    """Shared body of the binary-relevance companions (relevance > 0 counts as relevant)."""
    lists = prepare_lists(scores, relevance, mask, "linear", validate)
    cutoffs, many = d.resolve_cutoffs(k)
    hits = lists.hits()
    slots = _slots(lists, cutoffs, ties, hits)
    relevant = hits.sum(-1, keepdim=True)
    listed = (lists.scores > -torch.inf).sum(-1, keepdim=True).to(lists.dtype)
    values, is_empty = binary_metric(name, slots, cutoffs, relevant, listed)
    return finish(apply_empty(values, is_empty, empty), many, reduction)


def binary_metric(
    name: str,
    slots: Slots,
    cutoffs: tuple[int | None, ...],
    relevant: Tensor,
    listed: Tensor,
    sums: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """Precision, recall, hit rate or average precision at each cutoff: the one place their
    normalisers are defined, for every form.

    ``relevant`` and ``listed`` are ``[..., 1]`` counts of relevant and of real items per list.
    ``sums`` turns per-slot terms into ``[..., C]`` per-list sums up to each cutoff (default:
    dense slots, :func:`sum_to_cutoffs`). Returns the values ``[..., C]`` and which of them are
    empty (the list has no relevant item).
    """
    if sums is None:
        sums = lambda terms: sum_to_cutoffs(terms, cutoffs)  # noqa: E731
    per_slot = {
        "precision": hit_probability,
        "recall": hit_probability,
        "hit_rate": first_hit_probability,
        "average_precision": precision_term,
    }[name]
    totals = sums(per_slot(slots))
    is_empty = (relevant == 0).expand(*relevant.shape[:-1], len(cutoffs))
    safe_relevant = relevant.clamp(min=1)
    if name == "precision":
        # trec_eval's P@k: divide by k even when the list is shorter; k=None means the list.
        norm = torch.cat([listed if c is None else torch.full_like(listed, c) for c in cutoffs], dim=-1).clamp(min=1)
    elif name == "recall":
        norm = safe_relevant
    elif name == "average_precision":
        # AP@k normalises by min(R, k) (AP with k=None is trec_eval's AP: divide by R).
        norm = torch.cat([safe_relevant if c is None else safe_relevant.clamp(max=c) for c in cutoffs], dim=-1)
    else:
        return totals, is_empty
    return totals / norm, is_empty


def precision(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Precision@k: :math:`\frac{1}{k}\sum_{i=1}^{k} [rel_{(i)} > 0]`.

    Divides by ``k`` even when a list has fewer than ``k`` items (as trec_eval's P@k does);
    ``k=None`` divides by the list's own length.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=2)
        tensor(0.5000)
    """
    return _hit_metric(scores, relevance, k, mask, ties, empty, reduction, validate, "precision")


def recall(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Recall@k: :math:`\frac{1}{R}\sum_{i=1}^{k} [rel_{(i)} > 0]`, R = relevant items in the list.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.recall(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=2)
        tensor(0.5000)
    """
    return _hit_metric(scores, relevance, k, mask, ties, empty, reduction, validate, "recall")


def hit_rate(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""HitRate@k: 1 if any of the top ``k`` items has relevance > 0, else 0.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.hit_rate(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]), k=1)
        tensor(0.)
    """
    return _hit_metric(scores, relevance, k, mask, ties, empty, reduction, validate, "hit_rate")


def average_precision(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    ties: str = "average",
    empty: str = "zero",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Average precision at ``k``:

    .. math:: \mathrm{AP@k} = \frac{1}{\min(R, k)} \sum_{i=1}^{k} [rel_{(i)} > 0]\,\mathrm{P@i}

    With ``k=None`` the normaliser is ``R`` (trec_eval's AP). torchmetrics' ``RetrievalMAP``
    with ``top_k`` divides by the relevant items retrieved instead.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.average_precision(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([0, 1, 1]))
        tensor(0.5833)
    """
    return _hit_metric(scores, relevance, k, mask, ties, empty, reduction, validate, "average_precision")
