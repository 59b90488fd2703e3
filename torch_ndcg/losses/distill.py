r"""Distillation losses: the target is a teacher's real-valued score for each item, not a label.

A reranker distilled from a cross-encoder or an LLM learns from the teacher's scores (often
negative logits), which the label losses refuse. Each loss here names its target
``teacher_scores`` and reads it only through its softmax, its pairwise differences, its margins
or its ranks, so any real value is a valid target; the teacher gets no gradient.

* :func:`distill_listnet_loss`: cross-entropy to the teacher's softmax at a temperature.
* :func:`distill_listmle_loss`: the Plackett–Luce likelihood of the teacher's order.
* :func:`distill_ranknet_loss`: RankNet with the soft pair targets ``σ((tᵢ − tⱼ)/T)``.
* :func:`margin_mse_loss`: the squared error between student and teacher score margins.
* :func:`adr_mse_loss`: the student's approximate ranks against the teacher's ranks,
  weighted by the discount of the teacher's rank.

Each has a ``torch.nn.Module`` form in :mod:`.modules` (``DistillListNetLoss``, …,
``AdrMSELoss``), which checks its options at construction.

Padding (``mask`` False) never enters a softmax, a pair, a rank or a normaliser, so the same
lists padded with any number of items give the same losses and gradients.

Mix-ups are refused or flagged: an integer or bool ``teacher_scores`` tensor is a tensor of
labels (TypeError naming the label loss to use); with ``validate=True``, float teacher scores that
are all whole numbers ≥ 0 with ties inside a list look like graded labels and raise a
:class:`TeacherScoresLookLikeLabels` warning (a teacher may legitimately output such grades, so
it is not refused; ``validate=False`` or a warnings filter silences it).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import definitions as d
from .. import options
from ..options import (
    DEFAULT_DISCOUNT,
    DEFAULT_IMPL,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_MARGIN_PAIRS,
    DEFAULT_REDUCTION,
    LossEmpty,
    MarginPairs,
    PairImpl,
    Reduction,
)
from ..registered_checks import register_check
from ..validation import (
    caller_stacklevel,
    check_list_length,
    check_mask,
    check_same_device,
    check_same_shape,
    check_tensor,
)
from . import common, listwise
from .layout import flat_call
from .options import (
    DEFAULT_DISTILL_TEMPERATURE,
    AdrMSEOptions,
    DistillListMLEOptions,
    MarginMSEOptions,
    TemperatureLossOptions,
)
from .relaxations.approximate_ranks import StreamingRanks, dense_ranks



class TeacherScoresLookLikeLabels(UserWarning):
    """Warned by the distillation losses (e.g. :func:`distill_listnet_loss`) when teacher scores
    are all whole numbers ≥ 0 with ties inside a list: probably graded labels.

    Example:
        >>> import warnings, torch, torch_ndcg as tn
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = tn.distill_listnet_loss(torch.randn(1, 3), torch.tensor([[2.0, 0.0, 0.0]]))
        >>> caught[0].category is tn.TeacherScoresLookLikeLabels
        True
    """


@dataclass(frozen=True)
class TeacherLists:
    """Checked ``[B, N]`` inputs of a distillation loss (leading batch axes flattened into ``B``)."""

    scores: Tensor  # compute dtype, differentiable, 0 at padding
    teacher: Tensor  # compute dtype, detached, 0 at padding
    valid: Tensor  # bool, True for real items
    counts: Tensor  # [B] real items per list, in the compute dtype
    batch_shape: torch.Size


def _prepare(owner: str, label_twin: str, scores: Tensor, teacher_scores: Tensor, mask: Tensor | None,
             validate: bool) -> TeacherLists:
    """Shapes, dtypes and (with ``validate``) values of the inputs of ``owner``, whose label
    counterpart ``label_twin`` is named when labels are passed as teacher scores."""
    check_tensor("scores", scores)
    check_tensor("teacher_scores", teacher_scores)
    if teacher_scores.is_complex() or scores.is_complex():
        raise TypeError(f"{owner}: scores and teacher_scores must be real-valued")
    if not teacher_scores.is_floating_point():
        raise TypeError(
            f"{owner}: teacher_scores must be a floating-point tensor of a teacher's real-valued scores, got "
            f"{teacher_scores.dtype}, which holds graded labels; for labels use tn.{label_twin}(scores, relevance), "
            "or pass teacher_scores.float() if these integers really are a teacher's scores"
        )
    check_same_shape("scores", scores, "teacher_scores", teacher_scores)
    check_list_length("scores", scores)
    check_mask(mask, scores.shape)
    check_same_device("scores", scores, "teacher_scores", teacher_scores)
    check_same_device("scores", scores, "mask", mask)
    if not scores.is_floating_point():
        raise TypeError(f"{owner}: scores must be a floating-point tensor (the student's scores), got {scores.dtype}")
    dtype = d.compute_dtype(scores, teacher_scores)
    scores = scores.to(dtype)
    teacher = teacher_scores.detach().to(dtype)
    n = scores.shape[-1]
    if mask is None:
        valid = torch.ones(scores.shape, dtype=torch.bool, device=scores.device)
    else:
        valid = mask
        zero = torch.zeros((), dtype=dtype, device=scores.device)
        # where(), not multiplication: padding may hold NaN or ±inf and must get zero gradient.
        scores = torch.where(valid, scores, zero)
        teacher = torch.where(valid, teacher, zero)
    if validate:  # one host read, or one registered operator under torch.compile
        scores = _validated(scores, teacher, valid, owner, label_twin)
    return TeacherLists(
        scores=scores.reshape(-1, n),
        teacher=teacher.reshape(-1, n),
        valid=valid.reshape(-1, n),
        counts=valid.reshape(-1, n).sum(-1).to(dtype),
        batch_shape=scores.shape[:-1],
    )


def _check_values(scores: Tensor, teacher: Tensor, valid: Tensor, owner: str, label_twin: str) -> None:
    """Finite real scores and teacher scores (one host read clears the common case), and a
    warning when the teacher scores look like graded labels. Padding is already 0."""
    if not scores.numel():
        return
    whole = (teacher == teacher.round()).all()
    stats = torch.stack((scores.detach().sum(), teacher.sum(), teacher.amin(), whole.to(teacher.dtype))).tolist()
    score_sum, teacher_sum, lowest, all_whole = stats
    for name, total, values in (("scores", score_sum, scores), ("teacher_scores", teacher_sum, teacher)):
        # A sum of finite terms may still overflow: the exact test clears those.
        if not math.isfinite(total) and not bool(torch.isfinite(values.detach()).all()):
            raise ValueError(
                f"{owner}: {name} contains NaN or infinite values at unmasked positions; mark such items False "
                "in mask=... to leave them out"
            )
    if all_whole and lowest >= 0 and _has_ties(teacher, valid):
        warnings.warn(
            f"{owner}: teacher_scores are all whole numbers ≥ 0 with ties inside a list, like graded labels; "
            f"a distillation loss reads them as a teacher's real-valued scores. For labels use tn.{label_twin}"
            "(scores, relevance); if these are a teacher's grades, pass validate=False to silence this warning",
            TeacherScoresLookLikeLabels,
            stacklevel=caller_stacklevel(),
        )


_validated = register_check(
    "check_teacher_values", "Tensor scores, Tensor teacher, Tensor valid, str owner, str label_twin", _check_values
)


def _has_ties(teacher: Tensor, valid: Tensor) -> bool:
    """Whether two real items of one list have the same (non-negative) teacher score."""
    ordered = teacher.masked_fill(~valid, -1.0).sort(dim=-1).values
    return bool(((ordered[..., 1:] == ordered[..., :-1]) & (ordered[..., 1:] >= 0)).any())


def _check_lists_to_rank(values: Tensor, is_empty: Tensor, owner: str) -> None:
    if bool(is_empty.any()):
        raise ValueError(
            f"{owner}: a list has fewer than two real items, so nothing to rank, and empty='error'; "
            "choose empty='skip', 'zero' or 'keep'"
        )


# A registered check, which torch.compile and torch.func keep (see register_check).
_lists_to_rank = register_check(
    "check_teacher_lists_to_rank", "Tensor values, Tensor is_empty, str owner", _check_lists_to_rank
)


def _finish(owner: str, values: Tensor, is_empty: Tensor, lists: TeacherLists, empty: str, reduction: str) -> Tensor:
    if empty == "error":
        values = _lists_to_rank(values, is_empty, owner)
    return common.finish_loss(values, is_empty, lists.batch_shape, empty, reduction)


def _too_short(lists: TeacherLists) -> Tensor:
    return lists.counts < 2


def distill_listnet_loss(
    scores: Tensor,
    teacher_scores: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    temperature: float = DEFAULT_DISTILL_TEMPERATURE,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""ListNet's top-one cross-entropy to the teacher's softmax at a temperature.

    .. math:: L = -T^2 \sum_i \operatorname{softmax}(t / T)_i \,\log \operatorname{softmax}(s / T)_i

    over the real items of each list (Cao, Qin, Liu, Tsai & Li, "Learning to Rank: From Pairwise
    Approach to Listwise Approach", ICML 2007, with the teacher's scores ``t`` in place of the
    labels; the temperature ``T`` on both sides and the factor ``T²``, which keeps the gradient's
    scale as ``T`` grows, are from Hinton, Vinyals & Dean, "Distilling the Knowledge in a Neural
    Network", 2015). It differs from the KL divergence to the teacher only by the teacher's
    entropy, a constant in ``s``; at ``T = 1`` it is sentence-transformers' ``ListNetLoss``.

    Args:
        scores: ``[..., N]`` the student's scores.
        teacher_scores: ``[..., N]`` the teacher's real-valued scores (any sign); no gradient.
        mask: ``[..., N]`` bool, False at padding.
        indexes: ``[T]`` query id of every item, for flat 1-D ``scores`` and ``teacher_scores`` (any
            order and list sizes): the same values and gradients as the padded lists.
        temperature: ``T > 0``.
        empty: a list with fewer than two real items: ``"skip"`` (left out of the mean, no
            gradient), ``"zero"`` (loss 0, counted), ``"keep"`` (the formula: 0) or ``"error"``.
        reduction: ``"mean"`` over lists, ``"sum"`` or ``"none"`` (``[...]``).
        validate: check for NaN/inf and warn on label-like teacher scores (reads values).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 0.0, 1.0]], requires_grad=True)
        >>> loss = tn.distill_listnet_loss(scores, torch.tensor([[-0.5, -3.0, -1.0]]))
        >>> round(loss.item(), 4)
        0.864
        >>> loss.backward(); bool(scores.grad[0, 0] > 0)
        True
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(distill_listnet_loss, locals())
    TemperatureLossOptions(temperature=temperature, empty=empty, reduction=reduction, validate=validate)
    lists = _prepare("distill_listnet_loss", "listnet_loss", scores, teacher_scores, mask, validate)
    tau = float(temperature)
    floor = torch.finfo(lists.scores.dtype).min
    # Each side is shifted by its largest real score before the division (a softmax does not
    # change): a finite score divided by a temperature < 1 may overflow to inf, and inf − inf
    # inside the softmax is NaN; a shifted score is ≤ 0, so at worst −inf, a probability of 0.
    target = torch.where(lists.valid, _below_largest(lists.teacher, lists.valid) / tau, -torch.inf)
    target = target.softmax(-1).nan_to_num(0.0)
    # With s' = s − max s ≤ 0: −T² Σ pᵢ log softmax(s/T)ᵢ = T Σ pᵢ (−s'ᵢ) + T² logsumexp(s'/T), each
    # part finite wherever the loss is (s'/T alone may not be). finfo.min at padding: finite
    # logs even for a list of padding only.
    shifted = _below_largest(lists.scores, lists.valid)
    spread = torch.where(target > 0, target * -shifted, 0.0).sum(-1)  # 0 · inf is no term
    values = tau * spread + tau**2 * torch.where(lists.valid, shifted / tau, floor).logsumexp(-1)
    return _finish("distill_listnet_loss", values, _too_short(lists), lists, empty, reduction)


def _below_largest(values: Tensor, valid: Tensor) -> Tensor:
    """``values`` minus the largest real one of their list, a constant to autograd (a list
    without a finite largest value is not shifted)."""
    largest = values.detach().masked_fill(~valid, -torch.inf).amax(-1, keepdim=True)
    return values - torch.where(torch.isfinite(largest), largest, 0.0)


def distill_listmle_loss(
    scores: Tensor,
    teacher_scores: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    position_aware: bool = False,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""ListMLE to the teacher's order: the Plackett–Luce negative log-likelihood of the real
    items sorted by decreasing teacher score, :math:`y(1), …, y(n)`,

    .. math:: L = \sum_{i=1}^{n} \Big( \log \sum_{j=i}^{n} e^{s_{y(j)}} - s_{y(i)} \Big)

    (Xia, Liu, Wang, Zhang & Li, "Listwise Approach to Learning to Rank", ICML 2008, with the
    teacher's order as the permutation). Equal teacher scores keep index order. Summed over
    the list's items, as sentence-transformers' ``ListMLELoss`` (with ``respect_input_order=False``) does.

    With ``position_aware=True`` it is PListMLE (Lan, Zhu, Guo, Niu & Cheng, "Position-Aware
    ListMLE: A Sequential Learning Process for Ranking", UAI 2014): position ``i``'s term is
    weighted by :math:`\lambda_i = (2^{n-i} - 1) / \sum_{k=1}^{n} (2^{n-k} - 1)`, so mistakes at
    the top of the teacher's ranking cost most (sentence-transformers' ``PListMLELoss`` weights;
    computed as :math:`2^{1-i} - 2^{1-n}` over its sum, which never overflows).

    Args:
        scores, teacher_scores, mask, empty, reduction, validate: as in :func:`distill_listnet_loss`.
        position_aware: PListMLE's weights (a bool).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.distill_listmle_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[3.5, -1.0, 0.2]])).item(), 4)
        0.7209
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(distill_listmle_loss, locals())
    DistillListMLEOptions(position_aware=position_aware, empty=empty, reduction=reduction, validate=validate)
    lists = _prepare("distill_listmle_loss", "listmle_loss", scores, teacher_scores, mask, validate)
    if position_aware:
        values = _position_aware_likelihood(lists)
        return _finish("distill_listmle_loss", values, _too_short(lists), lists, empty, reduction)
    padding = None if mask is None else ~lists.valid
    order = listwise.label_order(lists.teacher, padding, None)
    ranked_padding = None if padding is None else padding.gather(-1, order)
    may_read = (validate or lists.scores.is_cpu) and not torch.compiler.is_compiling()
    values = listwise.PlackettLuce.apply(lists.scores, order, ranked_padding, may_read)[0]
    return _finish("distill_listmle_loss", values, _too_short(lists), lists, empty, reduction)


def _position_aware_likelihood(lists: TeacherLists) -> Tensor:
    """``[B]`` PListMLE's weighted Plackett–Luce terms of the real items by decreasing teacher
    score (ties in index order, padding last), under autograd."""
    key = lists.teacher.masked_fill(~lists.valid, -torch.inf)
    order = key.sort(dim=-1, descending=True, stable=True).indices
    real = lists.valid.gather(-1, order)
    floor = torch.finfo(lists.scores.dtype).min  # exp(floor − s) = 0: padding leaves every sum
    ranked = torch.where(real, lists.scores.gather(-1, order), floor)
    terms = ranked.flip(-1).logcumsumexp(-1).flip(-1) - ranked
    position = torch.arange(1, ranked.shape[-1] + 1, dtype=ranked.dtype, device=ranked.device)
    weights = torch.where(real, torch.exp2(1 - position) - torch.exp2(1 - lists.counts)[:, None], 0.0)
    total = weights.sum(-1)
    return torch.where(real, weights * terms, 0.0).sum(-1) / torch.where(total > 0, total, 1.0)


def _real_pairs(valid: Tensor) -> Tensor:
    """``[B, N, N]`` pairs of two different real items."""
    eye = torch.eye(valid.shape[-1], dtype=torch.bool, device=valid.device)
    return valid[:, :, None] & valid[:, None, :] & ~eye


def distill_ranknet_loss(
    scores: Tensor,
    teacher_scores: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    temperature: float = DEFAULT_DISTILL_TEMPERATURE,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""RankNet with soft pair targets from the teacher, averaged over the real pairs of each list.

    For every pair of real items the target probability that ``i`` ranks above ``j`` is the
    teacher's, :math:`p_{ij} = \sigma\big((t_i - t_j)/T\big)`, and the loss is RankNet's
    cross-entropy (Burges et al., "Learning to Rank using Gradient Descent", ICML 2005, which
    allows any target probability :math:`\bar P_{ij}`):

    .. math:: L = \frac{2}{n(n-1)} \sum_{i<j} \Big( \log\big(1 + e^{s_i - s_j}\big) - p_{ij}\,(s_i - s_j) \Big)

    i.e. :math:`-p_{ij}\log\sigma(s_i - s_j) - (1 - p_{ij})\log\sigma(s_j - s_i)`, the same for
    ``(i, j)`` and ``(j, i)``. As ``T → 0`` the targets become hard (1, 0, or ½ for a tie).
    Memory is ``[B, N, N]``: meant for reranking lists (up to a few hundred items).

    Args:
        scores, teacher_scores, mask, empty, reduction, validate: as in :func:`distill_listnet_loss`.
        temperature: ``T > 0``, the teacher's pair-target temperature.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.distill_ranknet_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[3.5, -1.0, 0.2]])).item(), 4)
        0.3475
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(distill_ranknet_loss, locals())
    TemperatureLossOptions(temperature=temperature, empty=empty, reduction=reduction, validate=validate)
    lists = _prepare("distill_ranknet_loss", "ranknet_loss", scores, teacher_scores, mask, validate)
    diff = lists.scores[:, :, None] - lists.scores[:, None, :]
    margin = (lists.teacher[:, :, None] - lists.teacher[:, None, :]) / float(temperature)
    # softplus(d) − p·d as (1 − p)·relu(d) + p·relu(−d) + softplus(−|d|): no inf − inf where a
    # difference of finite scores overflows, and a zero weight drops its term (0 · inf is no term).
    # The weights in log space, 1 − p as log σ(−margin): 1 − σ(margin) rounds to 0 once σ rounds
    # to 1 (margin ≈ 17 in float32), and σ(−margin) itself underflows past 88, while the weight
    # times a difference near the float maximum is an ordinary number.
    terms = (
        _weighted(F.logsigmoid(-margin), F.relu(diff)) + _weighted(F.logsigmoid(margin), F.relu(-diff))
        + F.softplus(-diff.abs())
    )  # fmt: skip
    terms = torch.where(_real_pairs(lists.valid), terms, 0.0)
    # Every unordered pair appears twice, with the same term.
    pairs = (lists.counts * (lists.counts - 1)).clamp(min=1)
    # Each term divided first: near the float maximum the sum of the terms overflows, their mean does not.
    values = (terms / pairs.to(terms.dtype).reshape(*pairs.shape, 1, 1)).sum((-2, -1))
    return _finish("distill_ranknet_loss", values, _too_short(lists), lists, empty, reduction)


def _weighted(log_weight: Tensor, values: Tensor) -> Tensor:
    """``exp(log_weight) · values`` for ``values ≥ 0``, as ``exp(log_weight + log values)``: finite
    wherever the product is, and 0 where either factor is 0 (an infinite value included)."""
    positive = (values > 0) & (log_weight > -torch.inf)
    safe = torch.where(positive, values, 1.0)  # no log 0 in the value or the gradient
    return torch.where(positive, torch.exp(log_weight + safe.log()), 0.0)


def margin_mse_loss(
    scores: Tensor,
    teacher_scores: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    pairs: MarginPairs = DEFAULT_MARGIN_PAIRS,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""Margin-MSE (Hofstätter, Althammer, Schröder, Sertkan & Hanbury, "Improving Efficient
    Neural Ranking Models with Cross-Architecture Knowledge Distillation", 2020): the squared
    error between the student's and the teacher's score margins.

    With ``e_i = s_i − t_i`` over the ``n`` real items of a list,

    * ``pairs="all"``: the mean over every pair,
      :math:`\frac{2}{n(n-1)} \sum_{i<j} \big((s_i - s_j) - (t_i - t_j)\big)^2
      = \frac{2}{n-1} \sum_i (e_i - \bar e)^2` (computed in O(n));
    * ``pairs="first"``: the first item is the positive and every other real item a negative,
      :math:`\frac{1}{n-1} \sum_{j>1} \big((s_1 - s_j) - (t_1 - t_j)\big)^2`, the layout of
      sentence-transformers' ``MarginMSELoss`` (a list whose first item is padding is empty).

    Both are the paper's loss on a triplet ``(q, d⁺, d⁻)`` (``n = 2``). Neither changes when the
    student or the teacher adds a constant to a list's scores.

    Args:
        scores, teacher_scores, mask, empty, reduction, validate: as in :func:`distill_listnet_loss`.
        pairs: ``"all"`` or ``"first"``.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, t = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[3.0, 0.0, 0.5]])
        >>> round(tn.margin_mse_loss(s, t).item(), 4), tn.margin_mse_loss(s, t, pairs="first").item()
        (1.1667, 1.625)
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(margin_mse_loss, locals())
    MarginMSEOptions(pairs=pairs, empty=empty, reduction=reduction, validate=validate)
    lists = _prepare("margin_mse_loss", "ranknet_loss", scores, teacher_scores, mask, validate)
    errors = lists.scores - lists.teacher  # 0 at padding
    others = (lists.counts - 1).clamp(min=1)
    if pairs == "all":
        # The mean as a sum of errors / n: a sum of large finite errors may overflow, their mean not.
        mean = (errors / lists.counts.clamp(min=1)[:, None]).sum(-1, keepdim=True)
        centred = torch.where(lists.valid, errors - mean, 0.0)
        values = 2 * centred.square().sum(-1) / others
        is_empty = _too_short(lists)
    else:
        gaps = torch.where(lists.valid, errors[:, :1] - errors, 0.0)  # 0 for the first item itself
        values = gaps.square().sum(-1) / others
        is_empty = _too_short(lists) | ~lists.valid[:, 0]
    return _finish("margin_mse_loss", values, is_empty, lists, empty, reduction)


def teacher_ranks(teacher: Tensor, valid: Tensor) -> Tensor:
    """``[B, N]`` 1-based rank of each real item by decreasing teacher score, ties given their
    average rank (as ``ties="average"`` in the metrics), in O(N log N); 0 at padding."""
    key = teacher.masked_fill(~valid, -torch.inf)
    ordered = key.sort(dim=-1).values.contiguous()
    query = key.contiguous()
    at_most = torch.searchsorted(ordered, query, right=True)  # includes the padding (−inf)
    below = torch.searchsorted(ordered, query, right=False)
    total = ordered.shape[-1]
    above = total - at_most  # real items with a larger score (padding is never larger)
    ties = at_most - below  # real items with the same score, itself included
    ranks = above.to(teacher.dtype) + (ties.to(teacher.dtype) + 1) / 2
    return torch.where(valid, ranks, 0.0)


def adr_mse_loss(
    scores: Tensor,
    teacher_scores: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    temperature: float = DEFAULT_DISTILL_TEMPERATURE,
    discount: d.Discount | None = DEFAULT_DISCOUNT,
    impl: PairImpl = DEFAULT_IMPL,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""Approximate Discounted Rank MSE (Schlatt, Fröbe, Scells, Zhuang, Koopman, Zuccon, Stein,
    Potthast & Hagen, "Rank-DistiLLM: Closing the Effectiveness Gap Between Cross-Encoders and
    LLMs for Passage Re-Ranking", 2024): the student's approximate ranks against the teacher's
    ranks, each error weighted by the discount of the teacher's rank.

    .. math:: L = \frac{1}{n} \sum_i \mathrm{discount}(r_i)\,\big(r_i - \hat\pi_i\big)^2,\qquad
              \hat\pi_i = 1 + \sum_{j \ne i} \sigma\!\left(\frac{s_j - s_i}{T}\right)

    over the ``n`` real items, where ``r_i`` is item ``i``'s rank by decreasing teacher score
    (equal scores share their average rank) and :math:`\hat\pi_i` is ApproxNDCG's smooth rank
    (Qin, Liu & Li 2010), the library's :func:`torch_ndcg.approx_ndcg` ranks. With the
    default ``"log2"`` discount, :math:`1/\log_2(1 + r_i)`, the top of the teacher's ranking
    weighs most; ``discount=None`` gives the unweighted approximate-rank MSE.

    Args:
        scores, teacher_scores, mask, empty, reduction, validate: as in :func:`distill_listnet_loss`.
        temperature: ``T > 0`` of the smooth ranks.
        discount: ``"log2"``, a callable of the 1-based rank (as in :func:`torch_ndcg.ndcg`) or None.
        impl: the smooth ranks: ``"dense"`` (``[B, N, N]`` under autograd), ``"streaming"``
            (O(B·N) memory, blockwise backward) or ``"auto"`` (dense for small inputs).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 0.0, 1.0]], requires_grad=True)
        >>> loss = tn.adr_mse_loss(scores, torch.tensor([[-3.0, 1.0, -0.5]]), temperature=0.1)
        >>> round(loss.item(), 4)
        1.9999
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(adr_mse_loss, locals())
    AdrMSEOptions(temperature=temperature, discount=discount, impl=impl, empty=empty, reduction=reduction,
                  validate=validate)
    weight_of = None if discount is None else d.resolve_discount(discount)
    lists = _prepare("adr_mse_loss", "approx_ndcg_loss", scores, teacher_scores, mask, validate)
    tau = float(temperature)
    if impl == "auto":  # the pairwise losses' rule (ADR-MSE has no Triton path)
        impl = common.auto_impl(*lists.scores.shape, lists.scores, triton=False)
    if impl == "dense":
        smooth = dense_ranks(lists.scores, lists.valid, tau)
    else:
        smooth = StreamingRanks.apply(lists.scores, lists.valid, tau, common.block_ops(impl, lists.scores))
    ranks = teacher_ranks(lists.teacher, lists.valid)
    weights = torch.ones_like(ranks) if weight_of is None else weight_of(torch.where(lists.valid, ranks, 1.0))
    terms = torch.where(lists.valid, weights * (ranks - smooth).square(), 0.0)
    values = terms.sum(-1) / lists.counts.clamp(min=1)
    return _finish("adr_mse_loss", values, _too_short(lists), lists, empty, reduction)


__getattr__ = options.moved(
    __name__,
    {
        "ADR_IMPLS": ("torch_ndcg.options.PAIR_IMPLS", lambda: options.PAIR_IMPLS),
        "MARGIN_PAIRS": ("torch_ndcg.options.MARGIN_PAIRS", lambda: options.MARGIN_PAIRS),
    },
)
