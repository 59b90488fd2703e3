r"""Listwise cross-entropy losses: ListNet, softmax cross-entropy and ListMLE.

All three compare the softmax of the scores over a list's real items with a target built from
the labels, in O(B·N) memory: padding is excluded from every softmax and gets exactly zero
gradient, and every ``log`` is a ``log_softmax``, a ``logcumsumexp`` or a cumulative sum shifted
by the list's largest score and checked for underflow, so scores of ±1e4 stay finite.

A small batch's time is mostly per-operation overhead, so the inputs are prepared lightly (no
IDCG, no cutoff) and the value checks cost one host read (:func:`_finish`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .. import definitions as d
from ..options import (
    DEFAULT_GAIN,
    DEFAULT_LISTMLE_WEIGHTING,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_REDUCTION,
    ListMLEWeighting,
    LossEmpty,
    Reduction,
)
from ..dense import check_layout, check_values, may_read_values
from ..validation import as_float_scores, check_broadcasts, check_gain_values, names_arguments
from . import common
from .layout import flat_call
from . import position_weights
from .options import GainLossOptions, ListMLEOptions, LossOptions
from .transforms import ListsFunction, check_gain_readable, transforms_active, vmap_over_lists
from .value_checks import validated, warn_nothing_relevant


@dataclass(frozen=True)
class Lists:
    """Checked ``[..., N]`` inputs of a listwise loss, in the compute dtype.

    Lighter than :func:`common.prepare`: no IDCG, no cutoff, no flattening, and the value
    checks wait for the loss (:func:`_finish`), where one host read clears the common case.
    """

    scores: Tensor  # as given (padding may hold anything); differentiable
    relevance: Tensor  # as given, in the compute dtype (padding may hold anything)
    gains: Tensor  # padding may hold anything: each loss masks what it reads
    mask: Tensor | None  # None: every item is real
    gain: d.Gain
    empty: str
    reduction: str
    validate: bool

    def real(self, values: Tensor, fill: float) -> Tensor:
        """``values`` with ``fill`` at the padding (``where``, not ``masked_fill``: about half the
        time on CPU for long lists)."""
        return values if self.mask is None else torch.where(self.mask, values, fill)


def checked(scores: Tensor, relevance: Tensor, mask: Tensor | None, options: LossOptions) -> Lists:
    """Shape and dtype checks (no tensor value read) and the gains; ``options`` are the loss's
    checked options."""
    empty, reduction, validate = options.empty, options.reduction, options.validate
    gain = getattr(options, "gain", DEFAULT_GAIN)
    common.check_loss_scores(scores)
    check_gain_readable(gain, validate)
    dtype = check_layout(scores, relevance, mask)
    if validate and isinstance(gain, str) and (torch.compiler.is_compiling() or transforms_active()):
        # One operator, not the graph break of _finish's host read (value_checks.py); under
        # torch.func it reads the plain tensors beneath the transform's wrappers.
        scores, validate = validated(scores, relevance, mask, gain), False
    scores = as_float_scores("scores", scores).to(dtype)
    relevance = relevance.to(dtype)
    gains = d.gains(relevance, gain, dtype)
    if validate and callable(gain):
        check_gain_values(gains, mask)
    return Lists(scores, relevance, gains, mask, gain, empty, reduction, validate)


def _finish(values: Tensor, lists: Lists) -> Tensor:
    """Per-list losses → the value checks, then ``empty`` and ``reduction``.

    A NaN or infinite real score, an infinite label or an overflowing gain makes some list's
    loss non-finite, so with ``validate`` one host read of the labels' range and the losses'
    sum clears the common case; anything suspicious runs the metrics' exact checks, which
    name the culprit (or find the input fine: then the values stand).
    """
    if lists.validate and values.numel():
        low, high, total = torch.stack((*lists.relevance.aminmax(), values.detach().sum())).tolist()
        limit = d.exp2_label_limit(values.dtype, lists.scores.shape[-1])
        if not (low >= 0 and math.isfinite(high) and math.isfinite(total)) or (lists.gain == "exp2" and high > limit):
            check_values(lists.scores.detach(), lists.relevance, lists.mask, lists.gain, values.dtype)
        if high == 0 and lists.scores.shape[-1] > 1:  # every label, padding too, is 0
            warn_nothing_relevant()
    empty = lists.empty
    return common.finish_loss(
        values, None if empty == "keep" else _nothing_to_rank(lists), values.shape, empty, lists.reduction
    )


def _nothing_to_rank(lists: Lists) -> Tensor:
    """``[...]`` lists with no real item of positive gain, or fewer than two real items."""
    if lists.scores.shape[-1] < 2:
        return torch.ones(lists.scores.shape[:-1], dtype=torch.bool, device=lists.scores.device)
    # amax, not (≤ 0).all(): a float reduction is several times cheaper than a bool one here.
    nothing = lists.real(lists.gains, 0.0).amax(-1) <= 0
    return nothing if lists.mask is None else nothing | (lists.mask.sum(-1) < 2)


def cross_entropy(target: Tensor, lists: Lists) -> Tensor:
    """``−Σ_i target_i log softmax(s)_i`` per list over the real items, then ``empty`` and
    ``reduction``. ``target`` is 0 at the padding.

    Plain autograd: ``log_softmax``'s own backward is one fused kernel, so a custom backward
    saves nothing, and second derivatives come for free.
    """
    # finfo.min, not −inf: padding gets probability 0 and every list stays finite, even one
    # with no real item; the target is 0 there, so those terms vanish.
    log_p = lists.real(lists.scores, torch.finfo(lists.scores.dtype).min).log_softmax(-1)
    return _finish((target.neg() * log_p).sum(-1), lists)


@names_arguments
def listnet_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""ListNet's top-one loss (Cao, Qin, Liu, Tsai & Li, ICML 2007).

    The cross-entropy between the top-one probabilities of the labels and of the scores, over
    the real items of each list:

    .. math:: L = -\sum_i \operatorname{softmax}(g)_i \,\log \operatorname{softmax}(s)_i,
              \qquad g_i = \mathrm{gain}(rel_i)

    With the default linear gain the target is ``softmax(relevance)``, as in the paper and in
    allRank's ``listNet`` (which also adds ``1e-10`` inside the log; this function does not).

    Args:
        scores, relevance, indexes, mask, gain, validate: as in :func:`torch_ndcg.ndcg`.
        empty: a list with nothing relevant (IDCG = 0) or fewer than two real items: ``"skip"``
            (left out of the mean, no gradient), ``"zero"`` (loss 0, counted), ``"keep"`` (the
            formula anyway; allRank's behaviour) or ``"error"``.
        reduction: ``"mean"`` over lists (allRank's), ``"sum"`` or ``"none"`` (``[...]``).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 0.0, 1.0]], requires_grad=True)
        >>> loss = tn.listnet_loss(scores, torch.tensor([[2, 0, 1]]))
        >>> round(loss.item(), 4)
        0.8324
        >>> loss.backward(); bool(scores.grad[0, 0] < 0)
        True
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(listnet_loss, locals())
    options = GainLossOptions(gain=gain, empty=empty, reduction=reduction, validate=validate)
    lists = checked(scores, relevance, mask, options)
    # −inf at padding: a list with no real item gets a NaN target, zeroed (nothing to match).
    target = lists.real(lists.gains, -torch.inf).softmax(-1)
    if mask is not None:
        target = target.nan_to_num_(0.0)
    return cross_entropy(target, lists)


@names_arguments
def softmax_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""Softmax cross-entropy with label-normalised targets, as rax's ``softmax_loss``.

    .. math:: L = -\sum_i \frac{g_i}{\sum_j g_j} \log \operatorname{softmax}(s)_i,
              \qquad g_i = \mathrm{gain}(rel_i)

    (Bruch, Wang, Bendersky & Najork, "An Analysis of the Softmax Cross Entropy Loss for
    Learning-to-Rank with Binary Relevance", ICTIR 2019.) A list whose gains sum to 0 has no
    target distribution: it is empty (IDCG = 0), and ``empty="keep"`` gives it loss 0, as rax does.

    Args:
        scores, relevance, indexes, mask, gain, validate: as in :func:`torch_ndcg.ndcg`.
        empty, reduction: as in :func:`listnet_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.softmax_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[1, 0, 1]])).item(), 4)
        0.9076
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(softmax_loss, locals())
    options = GainLossOptions(gain=gain, empty=empty, reduction=reduction, validate=validate)
    lists = checked(scores, relevance, mask, options)
    gains = lists.real(lists.gains, 0.0)
    total = gains.sum(-1, keepdim=True)
    return cross_entropy(gains / total.masked_fill(total == 0, 1.0), lists)


def label_order(relevance: Tensor, padding: Tensor | None, generator: torch.Generator | None) -> Tensor:
    """Indices ``[..., N]`` putting the real items by increasing label, then the padding.

    The reverse of a descending order whose ties keep index order (a stable sort) or, with
    ``generator``, the order of a seeded random permutation of each list.
    """
    # Padding sorts first, so it comes last once reversed: the prefix sums of the real items
    # then never include it.
    key = relevance if padding is None else relevance.masked_fill(padding, torch.inf)
    if generator is None:
        order = key.sort(dim=-1, descending=True, stable=True).indices
    else:
        shuffle = torch.rand(key.shape, generator=generator, device=generator.device).argsort(dim=-1).to(key.device)
        order = shuffle.gather(-1, key.gather(-1, shuffle).sort(dim=-1, descending=True, stable=True).indices)
    return order.flip(-1)


class PlackettLuce(ListsFunction):
    r"""``Σ_i (ℓ_i − s_i)`` over the real items of ``scores`` taken in ``order`` (increasing
    label, padding last), where ``ℓ_i = log Σ_{j ≤ i} e^{s_j}`` sums the item and every item
    ranked below it. Taking the order inside keeps its gradient a single scatter.

    The gradient, :math:`\partial/\partial s_k = -1 + \sum_{i \ge k} e^{s_k - \ell_i}`, comes
    from the backward. Two ways, chosen per call by a host read (``may_read``):

    * shifted by each list's largest score ``m``: ``c = cumsum(e^{s − m})``, ``ℓ = m + log c`` and
      :math:`\partial/\partial s_k = -1 + e^{s_k - m} \sum_{i \ge k} 1/c_i`, a few plain
      cumulative sums; exact to rounding while every ``c_i ≥ e^{s_1 − m}`` stays far from
      underflow, i.e. while no list's lowest-labelled score is more than ``log(eps / tiny)`` below
      its largest (71 in float32, 672 in float64);
    * otherwise in log space (``logcumsumexp``, an order of magnitude slower on CPU), where no
      exponential overflows: :math:`-1 + \exp\big(s_k + \log\sum_{i \ge k} e^{-\ell_i}\big)`,
      whose exponent is at most ``log(n − k + 1)`` since every :math:`\ell_i \ge \ell_k` for
      ``i ≥ k``.

    ``padding`` (True at padding, which comes last) is ``None`` when every item is real. Under
    ``create_graph=True`` the backward recomputes the gradient in differentiable operations (the
    log-space form, out of place), so Hessian-vector products work.
    """

    @staticmethod
    def forward(
        scores: Tensor, order: Tensor, padding: Tensor | None, may_read: bool
    ) -> tuple[Tensor, Tensor, Tensor, bool]:
        """The sums ``[B]``, then what the backward needs: two tensors and which form made them."""
        ranked = _ranked(scores, order, padding)
        top = ranked.amax(-1, keepdim=True).clamp_(min=torch.finfo(ranked.dtype).min)  # padding only: finite
        shifted = ranked - top
        if may_read and shifted.numel() > 0 and bool(_sums_are_exact(shifted, padding)):
            exp = shifted.exp()
            sums = exp.cumsum(-1)
            terms = sums.log().sub_(shifted)
            first, second, by_sums = exp, sums, True
        else:
            ell = ranked.logcumsumexp(-1)
            terms = ell - ranked
            first, second, by_sums = ranked, ell, False
        values = (terms if padding is None else terms.masked_fill_(padding, 0.0)).sum(-1)
        return values, first, second, by_sums

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        scores, order, padding, _ = inputs
        _, first, second, ctx.shifted = output
        ctx.save_for_backward(first, second, order, padding, scores)
        ctx.mark_non_differentiable(first, second)
        ctx.set_materialize_grads(False)  # no zero gradients made for those two: backward reads only the sums'

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(PlackettLuce.apply, info, in_dims, args)

    @staticmethod
    def backward(ctx, grad: Tensor | None, *_):
        if grad is None:  # (grads are not materialised) no gradient reached the sums: none for the scores
            return None, None, None, None
        first, second, order, padding, scores = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True (and torch.func): a differentiable gradient
            ranked = _ranked(scores, order, padding)
            slope = _log_space_slope(ranked, ranked.logcumsumexp(-1), padding)
            return torch.zeros_like(slope).scatter(-1, order, slope * grad.unsqueeze(-1)), None, None, None
        if ctx.shifted:
            exp, sums = first, second
            inverse = sums.reciprocal() if padding is None else sums.reciprocal().masked_fill_(padding, 0.0)
            slope = inverse.flip(-1).cumsum(-1).flip(-1).mul_(exp).sub_(1.0)
            if padding is not None:
                slope.masked_fill_(padding, 0.0)
        else:
            slope = _log_space_slope(first, second, padding)
        # order is a permutation: every item's gradient is written exactly once.
        return torch.empty_like(slope).scatter_(-1, order, slope.mul_(grad.unsqueeze(-1))), None, None, None


def _sums_are_exact(shifted: Tensor, padding: Tensor | None) -> Tensor:
    """Whether the cumulative sums of ``e^{shifted}`` keep full precision in every list: each
    list's first real term (its lowest label) is at least ``tiny / eps`` (a 0-d bool tensor)."""
    finfo = torch.finfo(shifted.dtype)
    first = shifted[..., 0] if padding is None else shifted[..., 0].masked_fill(padding[..., 0], 0.0)
    return first.amin() > math.log(finfo.tiny / finfo.eps)


def _ranked(scores: Tensor, order: Tensor, padding: Tensor | None) -> Tensor:
    """``scores`` in ``order``, ``-inf`` at the padding (a fresh tensor: filled in place)."""
    ranked = scores.gather(-1, order)
    return ranked if padding is None else ranked.masked_fill_(padding, -torch.inf)


def _log_space_slope(ranked: Tensor, ell: Tensor, padding: Tensor | None) -> Tensor:
    r""":math:`-1 + \exp\big(s_k + \log\sum_{i \ge k} e^{-\ell_i}\big)`, 0 at the padding, out of
    place, so that it is differentiable too (the create_graph path)."""
    neg = ell.neg() if padding is None else ell.neg().masked_fill(padding, -torch.inf)
    slope = (neg.flip(-1).logcumsumexp(-1).flip(-1) + ranked).exp() - 1.0
    return slope if padding is None else slope.masked_fill(padding, 0.0)


@names_arguments
def listmle_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    generator: torch.Generator | None = None,
    weighting: ListMLEWeighting = DEFAULT_LISTMLE_WEIGHTING,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""ListMLE (Xia, Liu, Wang, Zhang & Li, ICML 2008): the Plackett–Luce negative log-likelihood
    of the label order.

    With the real items sorted by decreasing relevance, :math:`y(1), …, y(n)`,

    .. math:: L = \sum_{i=1}^{n} \lambda_i \Big( \log \sum_{j=i}^{n} e^{s_{y(j)}} - s_{y(i)} \Big)

    with position weights :math:`\lambda_i` from ``weighting``: 1 by default (ListMLE), PListMLE's
    :math:`(2^{n-i} - 1) / \sum_k (2^{n-k} - 1)` with ``"plistmle"`` (Lan et al., UAI 2014; the
    weights of sentence-transformers' ``PListMLELoss``), or a function of
    :mod:`torch_ndcg.position_weights`' signature.

    Items with equal labels are ordered by index (a stable sort), or, when ``generator`` is
    given, by a random permutation drawn from it per list. allRank's ``listMLE`` always shuffles
    with the global RNG (and adds ``1e-10`` inside the log); on tie-free labels the two agree.

    Args:
        scores, relevance, indexes, mask, validate: as in :func:`torch_ndcg.ndcg`.
        generator: breaks label ties at random (on the generator's device) when given.
        weighting: ``"none"``, ``"plistmle"`` or a function of the positions (see
            :mod:`torch_ndcg.position_weights`).
        empty, reduction: as in :func:`listnet_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.listmle_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])).item(), 4)
        0.7209
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(listmle_loss, locals())
    options = ListMLEOptions(generator=generator, weighting=weighting, empty=empty, reduction=reduction, validate=validate)
    lists = checked(scores, relevance, mask, options)
    padding = None if mask is None else ~mask
    order = label_order(lists.relevance, padding, generator)
    padding = None if padding is None else padding.gather(-1, order)
    weight = position_weights.resolve(weighting)
    if weight is not None:
        values = _weighted_plackett_luce(lists.scores, order, padding, weight)
    elif torch.compiler.is_compiling():
        values = _plackett_luce_traced(lists.scores, order, padding)
    else:
        values = PlackettLuce.apply(lists.scores, order, padding, may_read_values(lists.scores, lists.validate))[0]
    return _finish(values, lists)


def _weighted_plackett_luce(
    scores: Tensor, order: Tensor, padding: Tensor | None, weight: position_weights.PositionWeight
) -> Tensor:
    """``Σ_i λ_i (ℓ_i − s_i)`` per list under autograd, the terms of :class:`PlackettLuce` (items
    in ``order``, increasing label, padding last) with the position weights ``λ = weight(position,
    length)``, positions counted from the top of the label order."""
    ranked = scores.gather(-1, order)
    if padding is not None:  # padding comes last: no real item's sum reaches it, and 0 keeps it finite
        ranked = ranked.masked_fill(padding, 0.0)
    terms = ranked.logcumsumexp(-1) - ranked
    if padding is None:
        length = ranked.new_full((*ranked.shape[:-1], 1), ranked.shape[-1])
    else:
        length = (~padding).sum(-1, keepdim=True).to(ranked.dtype)
    position = length - torch.arange(ranked.shape[-1], dtype=ranked.dtype, device=ranked.device)
    weights = check_broadcasts("weighting", weight(position, length), tuple(terms.shape), "positions'")
    return torch.where(position >= 1, weights * terms, torch.zeros((), dtype=terms.dtype, device=terms.device)).sum(-1)


def _plackett_luce_traced(scores: Tensor, order: Tensor, padding: Tensor | None) -> Tensor:
    """:class:`PlackettLuce`'s value in plain differentiable operations, for ``torch.compile``:
    its host read, which picks the shifted form whenever it is exact, becomes a ``torch.cond``
    in the graph (a compiled ``logcumsumexp`` on CPU costs several times the whole loss)."""
    ranked = _ranked(scores, order, padding)
    shifted = ranked - ranked.detach().amax(-1, keepdim=True).clamp(min=torch.finfo(ranked.dtype).min)
    if not shifted.numel():
        return shifted.sum(-1)

    def by_sums(shifted: Tensor) -> Tensor:
        sums = shifted.exp().cumsum(-1)
        # 1 at the padding: its log is finite there and its gradient (masked below) not 0/0.
        return (sums if padding is None else sums.masked_fill(padding, 1.0)).log() - shifted

    def by_logs(shifted: Tensor) -> Tensor:  # ℓ − s is the same whatever the shift
        return shifted.logcumsumexp(-1) - shifted

    terms = torch.cond(_sums_are_exact(shifted, padding), by_sums, by_logs, (shifted,))
    return (terms if padding is None else terms.masked_fill(padding, 0.0)).sum(-1)
