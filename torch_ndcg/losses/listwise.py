r"""Listwise cross-entropy losses: ListNet, softmax cross-entropy and ListMLE.

All three compare the softmax of the scores over a list's real items with a target built from
the labels, in O(B·N) memory: padding is excluded from every softmax and gets exactly zero
gradient, and every ``log`` is a ``log_softmax``/``logcumsumexp`` so scores of ±1e4 stay finite.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .. import definitions as d
from . import common


def _checked(
    scores: Tensor, relevance: Tensor, mask: Tensor | None, gain: d.Gain, empty: str, reduction: str, validate: bool
) -> common.LossLists:
    common.check_loss_options(empty, reduction)
    return common.prepare(scores, relevance, None, mask, gain, "log2", validate, ideal=False)


class SoftmaxCrossEntropy(torch.autograd.Function):
    """``−Σ_i t_i log softmax(s)_i`` over the real items, with its gradient ``softmax(s)·Σt − t``
    computed alongside the value (a handful of O(B·N) operations, nothing kept but the gradient)."""

    @staticmethod
    def forward(ctx, scores: Tensor, valid: Tensor, target: Tensor) -> Tensor:
        # finfo.min, not −inf: padding gets probability 0 and every list stays finite, even one
        # with no real item; the target is 0 there, so those terms vanish.
        filled = scores.masked_fill(~valid, torch.finfo(scores.dtype).min)
        log_p = filled - filled.logsumexp(-1, keepdim=True)
        ctx.save_for_backward(log_p.exp().mul_(target.sum(-1, keepdim=True)).sub_(target))
        return -(target * log_p).sum(-1)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor):
        (slope,) = ctx.saved_tensors
        return slope * grad[:, None], None, None


def _cross_entropy(target: Tensor, lists: common.LossLists, empty: str, reduction: str) -> Tensor:
    """``−Σ_i target_i log softmax(s)_i`` per list, then ``empty`` and ``reduction``."""
    values = SoftmaxCrossEntropy.apply(lists.scores, lists.valid, target)
    return common.finish_loss(values, common.nothing_to_rank(lists), lists, empty, reduction)


def listnet_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    empty: str = "skip",
    reduction: str = "mean",
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
        scores, relevance, mask, gain, validate: as in :func:`torch_ndcg.ndcg`.
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
    lists = _checked(scores, relevance, mask, gain, empty, reduction, validate)
    target = torch.softmax(lists.gains.masked_fill(~lists.valid, -torch.inf), -1).nan_to_num_(0.0)
    return _cross_entropy(target, lists, empty, reduction)


def softmax_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    gain: d.Gain = "linear",
    empty: str = "skip",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""Softmax cross-entropy with label-normalised targets, as rax's ``softmax_loss``.

    .. math:: L = -\sum_i \frac{g_i}{\sum_j g_j} \log \operatorname{softmax}(s)_i,
              \qquad g_i = \mathrm{gain}(rel_i)

    (Bruch, Wang, Bendersky & Najork, "An Analysis of the Softmax Cross Entropy Loss for
    Learning-to-Rank with Binary Relevance", ICTIR 2019.) A list whose gains sum to 0 has no
    target distribution: it is empty (IDCG = 0), and ``empty="keep"`` gives it loss 0, as rax does.

    Args:
        scores, relevance, mask, gain, validate: as in :func:`torch_ndcg.ndcg`.
        empty, reduction: as in :func:`listnet_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.softmax_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[1, 0, 1]])).item(), 4)
        0.9076
    """
    lists = _checked(scores, relevance, mask, gain, empty, reduction, validate)
    total = lists.gains.sum(-1, keepdim=True)
    target = lists.gains / torch.where(total > 0, total, torch.ones_like(total))
    return _cross_entropy(target, lists, empty, reduction)


def label_order(gains: Tensor, valid: Tensor, generator: torch.Generator | None) -> Tensor:
    """Indices ``[B, N]`` putting padding first, then real items by decreasing gain.

    Ties keep index order (a stable sort) or, with ``generator``, the order of a seeded random
    permutation of each list.
    """
    # Padding first: the suffix sums of the real items then never include it.
    key = torch.where(valid, gains, torch.full_like(gains, torch.inf))
    if generator is None:
        return key.sort(dim=-1, descending=True, stable=True).indices
    shuffle = torch.rand(key.shape, generator=generator, device=generator.device).argsort(dim=-1).to(key.device)
    order = key.gather(-1, shuffle).sort(dim=-1, descending=True, stable=True).indices
    return shuffle.gather(-1, order)


class PlackettLuce(torch.autograd.Function):
    r"""``Σ_i (ℓ_i − s_i)`` over the real items of lists in label order, ``ℓ_i = log Σ_{j ≥ i} e^{s_j}``.

    The gradient is computed with the value, in log space so that no exponential overflows:
    :math:`\partial/\partial s_k = -1 + \sum_{i \le k} e^{s_k - \ell_i}
    = -1 + \exp\big(s_k + \log\sum_{i \le k} e^{-\ell_i}\big)`, whose exponent is at most
    ``log k`` since every :math:`\ell_i \ge \ell_k` for ``i ≤ k``.
    """

    @staticmethod
    def forward(ctx, ranked: Tensor, real: Tensor) -> Tensor:
        suffix = ranked.flip(-1).logcumsumexp(-1).flip(-1)
        zero = torch.zeros((), dtype=ranked.dtype, device=ranked.device)
        values = torch.where(real, suffix - ranked, zero).sum(-1)
        prefix = suffix.neg().masked_fill_(~real, -torch.inf).logcumsumexp(-1)
        ctx.save_for_backward(torch.where(real, (ranked + prefix).exp_() - 1, zero))
        return values

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor):
        (slope,) = ctx.saved_tensors
        return slope * grad[:, None], None


def listmle_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    generator: torch.Generator | None = None,
    empty: str = "skip",
    reduction: str = "mean",
    validate: bool = True,
) -> Tensor:
    r"""ListMLE (Xia, Liu, Wang, Zhang & Li, ICML 2008): the Plackett–Luce negative log-likelihood
    of the label order.

    With the real items sorted by decreasing relevance, :math:`y(1), …, y(n)`,

    .. math:: L = \sum_{i=1}^{n} \Big( \log \sum_{j=i}^{n} e^{s_{y(j)}} - s_{y(i)} \Big)

    Items with equal labels are ordered by index (a stable sort), or, when ``generator`` is
    given, by a random permutation drawn from it per list. allRank's ``listMLE`` always shuffles
    with the global RNG (and adds ``1e-10`` inside the log); on tie-free labels the two agree.

    Args:
        scores, relevance, mask, validate: as in :func:`torch_ndcg.ndcg`.
        generator: breaks label ties at random (on the generator's device) when given.
        empty, reduction: as in :func:`listnet_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.listmle_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])).item(), 4)
        0.7209
    """
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    lists = _checked(scores, relevance, mask, "linear", empty, reduction, validate)
    order = label_order(lists.gains, lists.valid, generator)
    values = PlackettLuce.apply(lists.scores.gather(-1, order), lists.valid.gather(-1, order))
    return common.finish_loss(values, common.nothing_to_rank(lists), lists, empty, reduction)
