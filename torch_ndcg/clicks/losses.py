r"""Unbiased (inverse-propensity-weighted) forms of the listwise and NDCG losses, on a :class:`Clicks` target.

Each loss is its label-based twin evaluated on the inverse-propensity weights
:math:`w_i = c_i / \max(p_i, \text{clip})` as labels (gain linear: a click's gain is 1 under the
linear and the ``exp2`` gain alike, so :math:`w_i` is its gain over its propensity), with the
twin's own code: discount, cutoff, relaxation, masks, ``indexes=`` and ``empty`` are the twin's.

Under the position-based model :math:`E[w_i] = \gamma_i`, the click probability of item ``i``
once examined (for graded labels and the click models of :mod:`torch_ndcg.clicks.models`, an
increasing function of the label). A loss that is linear in its labels therefore has, on ``w``,
the expectation of the same loss on :math:`\gamma`: the IPS estimate is unbiased (Joachims,
Swaminathan & Schnabel, WSDM 2017). The twins normalise each list (NDCG divides by the IDCG,
softmax cross-entropy by the labels' total), which is not linear; so by default each list's
value is multiplied back by that normaliser computed on ``w`` (the IDCG@k of ``w``, or
:math:`\sum_i w_i`):

* ``self_normalised=False`` (default): the unbiased estimates :math:`\mathrm{IDCG}_w - \mathrm{DCG}_w`
  (the NDCG losses) and :math:`-\sum_i w_i \log \mathrm{softmax}(s)_i` (softmax cross-entropy);
  their gradients are unbiased estimates of the gradients on :math:`\gamma`.
* ``self_normalised=True``: the twin's normalised value on ``w`` (each list divided by its own
  IPS normaliser, a ratio estimator): biased, but each list counts once whatever its clicks'
  propensities, which bounds the variance a rare deep click adds.

``clip`` floors the propensities (weights at most ``1/clip``): less variance for some bias.
LambdaLoss's pair weights :math:`|G_i - G_j|` are not linear in the labels, so its IPS form does
not estimate its label twin on :math:`\gamma`: with at most one click per list it estimates
:math:`\sum_i \gamma_i\,\ell(s, e_i)`, the LambdaLoss of each item alone relevant weighted by
its click probability (see :func:`ips_lambda_loss`); with several clicks, pairs of two clicked
items add a bias even to that.

An unbiased loss given a label tensor, and a label loss given a :class:`Clicks`, is a TypeError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import definitions as d
from ..aggregation import reduce
from ..functional import idcg
from ..losses import approx_ndcg_loss, lambda_loss, listwise, neural_ndcg_loss, softmax_loss
from ..losses.options import GainLossOptions
from ..losses.common import check_loss_scores
from ..losses.layout import flat_call
from ..options import DEFAULT_DISCOUNT, DEFAULT_LOSS_EMPTY, DEFAULT_REDUCTION, LossEmpty, Reduction
from ..validation import check_flag, check_option, names_arguments
from ..options import REDUCTIONS
from .target import check_target

Normaliser = Callable[[Tensor, "Tensor | None", dict[str, Any]], Tensor]


def _weighted_cross_entropy(
    scores: Tensor, weights: Tensor, *, mask: Tensor | None = None, indexes: Tensor | None = None, gain: str,
    empty: str, reduction: str, validate: bool,
) -> Tensor:  # fmt: skip
    """``−Σ_i w_i log softmax(s)_i`` per list: the listwise losses' cross-entropy with the weights
    as its target, unnormalised (softmax cross-entropy's twin divides the target by its total)."""
    if indexes is not None:
        return flat_call(_weighted_cross_entropy, locals())
    lists = listwise.checked(scores, weights, mask, GainLossOptions(gain=gain, empty=empty, reduction=reduction,
                                                                    validate=validate))  # fmt: skip
    return listwise.cross_entropy(lists.real(lists.gains, 0.0), lists)


def _ideal(weights: Tensor, mask: Tensor | None, options: dict[str, Any]) -> Tensor:
    """The NDCG losses' normaliser: each list's IDCG@k of the weights, by the metric's code."""
    discount = options.get("discount", DEFAULT_DISCOUNT)
    return idcg(weights, options.get("k"), mask=mask, gain="linear", discount=discount, reduction="none", validate=False)


def _weighted(
    scores: Tensor,
    weights: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    twin: Callable[..., Tensor],
    normaliser: Normaliser | None,
    reduction: str,
    **options: Any,
) -> Tensor:
    """``twin`` on the IPS weights as labels, each list scaled back by its ``normaliser`` (None:
    as the twin gives it); flat items run as the twin's padded groups (:func:`flat_call`)."""
    if indexes is not None:
        return flat_call(_weighted, locals())
    if normaliser is None:
        return twin(scores, weights, mask=mask, reduction=reduction, gain="linear", **options)
    values = twin(scores, weights, mask=mask, reduction="none", gain="linear", **options)
    return reduce(values * normaliser(weights, mask, options), reduction)


def _ips(
    twin: Callable[..., Tensor], normaliser: Normaliser | None, scores: Tensor, target: object, mask: Tensor | None,
    indexes: Tensor | None, clip: float | None, self_normalised: bool, reduction: str, validate: bool,
    **options: Any,
) -> Tensor:  # fmt: skip
    """The IPS form of ``twin``: its value on the weights times ``normaliser`` (none when
    ``self_normalised``, or when ``twin`` is unnormalised already)."""
    clicks = check_target("target", target)
    check_loss_scores(scores)
    check_flag("self_normalised", self_normalised)
    check_option("reduction", reduction, REDUCTIONS)
    check_flag("validate", validate)
    if isinstance(scores, Tensor) and clicks.clicks.shape != scores.shape:
        raise ValueError(f"target's clicks must have the shape of scores {tuple(scores.shape)}, got {tuple(clicks.clicks.shape)}")
    weights = clicks.weights(clip=clip, mask=mask, validate=validate)
    if isinstance(scores, Tensor) and scores.is_floating_point():
        weights = weights.to(torch.promote_types(weights.dtype, scores.dtype))
    return _weighted(scores, weights, mask=mask, indexes=indexes, twin=twin,
                     normaliser=None if self_normalised else normaliser, reduction=reduction, validate=validate,
                     **options)  # fmt: skip


@names_arguments
def ips_softmax_loss(
    scores: Tensor,
    target: Any,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    clip: float | None = None,
    self_normalised: bool = False,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""IPS softmax cross-entropy (the listwise loss of Ai et al., SIGIR 2018):

    .. math:: L = -\sum_i w_i \log \operatorname{softmax}(s)_i,\qquad w_i = \frac{c_i}{\max(p_i, \text{clip})}

    Label twin: :func:`torch_ndcg.softmax_loss` (ListNet's top-one cross-entropy with
    label-normalised targets), which is the ``self_normalised=True`` form on ``w``.

    Args:
        scores: ``[..., N]`` (or flat ``[T]`` with ``indexes``) model scores.
        target: a :class:`~torch_ndcg.clicks.Clicks` of ``scores``' shape.
        mask, indexes, validate: as in :func:`torch_ndcg.ndcg`.
        clip: propensity floor (``None``: no clipping).
        self_normalised: each list divided by its total weight :math:`\sum_i w_i` (see the module).
        empty: a list without a click or with fewer than two real items: as in :func:`torch_ndcg.softmax_loss`.
        reduction: ``"mean"`` over lists, ``"sum"`` or ``"none"``.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks, ips_softmax_loss
        >>> target = Clicks(torch.tensor([[0.0, 1.0, 0.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> round(ips_softmax_loss(torch.tensor([[0.0, 0.0, 0.0]]), target).item(), 4)  # 2 · log 3
        2.1972
    """
    twin = softmax_loss if self_normalised else _weighted_cross_entropy
    return _ips(twin, None, scores, target, mask, indexes, clip, self_normalised, reduction, validate, empty=empty)


@names_arguments
def ips_neural_ndcg_loss(
    scores: Tensor,
    target: Any,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    clip: float | None = None,
    self_normalised: bool = False,
    discount: d.Discount = DEFAULT_DISCOUNT,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
    **options: Any,
) -> Tensor:
    r"""IPS NeuralNDCG: :math:`\mathrm{IDCG@k}_w - \mathrm{NeuralDCG@k}_w` per list, or with
    ``self_normalised`` :math:`1 - \mathrm{NeuralNDCG@k}_w`, where
    :math:`\mathrm{NeuralDCG@k}_w = \sum_{i \le k} \mathrm{discount}(i) \sum_j P_{ij} w_j`.

    Label twin: :func:`torch_ndcg.neural_ndcg_loss`; unbiased (default) for the smooth DCG@k of the
    click probabilities :math:`\gamma`.

    Args:
        scores, target, mask, indexes, clip, self_normalised, validate: as in :func:`ips_softmax_loss`.
        k, discount, empty, reduction: as in :func:`torch_ndcg.neural_ndcg_loss`.
        options: NeuralNDCG's other options (``temperature``, ``sinkhorn_iters``, ``impl``, …).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks, ips_neural_ndcg_loss
        >>> target = Clicks(torch.tensor([[0.0, 1.0, 0.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> scores = torch.tensor([[0.0, 3.0, 1.0]], requires_grad=True)
        >>> ips_neural_ndcg_loss(scores, target, temperature=0.1).backward()
        >>> bool(scores.grad[0, 1] <= 0)
        True
    """
    return _ips(neural_ndcg_loss, _ideal, scores, target, mask, indexes, clip, self_normalised, reduction, validate,
                k=k, discount=discount, empty=empty, **options)  # fmt: skip


@names_arguments
def ips_approx_ndcg_loss(
    scores: Tensor,
    target: Any,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    clip: float | None = None,
    self_normalised: bool = False,
    discount: d.Discount = DEFAULT_DISCOUNT,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
    **options: Any,
) -> Tensor:
    r"""IPS ApproxNDCG: :math:`\mathrm{IDCG@k}_w - \mathrm{ApproxDCG@k}_w` per list, or with
    ``self_normalised`` :math:`1 - \mathrm{ApproxNDCG@k}_w`, where
    :math:`\mathrm{ApproxDCG@k}_w = \sum_i w_i\,\mathrm{discount}(\pi_i)\,c_i` (smooth ranks π).

    Label twin: :func:`torch_ndcg.approx_ndcg_loss`. Arguments as in :func:`ips_neural_ndcg_loss`;
    ``options``: ApproxNDCG's ``temperature`` and ``impl``.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks, ips_approx_ndcg_loss
        >>> target = Clicks(torch.tensor([[0.0, 1.0, 0.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> round(ips_approx_ndcg_loss(torch.tensor([[0.0, 9.0, 1.0]]), target, temperature=0.01).item(), 4)
        0.0
    """
    return _ips(approx_ndcg_loss, _ideal, scores, target, mask, indexes, clip, self_normalised, reduction, validate,
                k=k, discount=discount, empty=empty, **options)  # fmt: skip


@names_arguments
def ips_lambda_loss(
    scores: Tensor,
    target: Any,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    clip: float | None = None,
    self_normalised: bool = False,
    discount: d.Discount = DEFAULT_DISCOUNT,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
    **options: Any,
) -> Tensor:
    r"""IPS LambdaLoss: :func:`torch_ndcg.lambda_loss` on ``w`` (its ``G_i = w_i / \mathrm{IDCG@k}_w``),
    times :math:`\mathrm{IDCG@k}_w` unless ``self_normalised``, so that a pair of a clicked item
    ``i`` over an unclicked one weighs :math:`w_i` (the propensity-weighted pairs of Joachims et
    al. 2017 and Wang et al. 2018).

    What it estimates: with at most one click per list (the cascade model, say) the loss of a
    list whose click is at item ``c`` is :math:`w_c\,\ell(s, e_c)`, where
    :math:`\ell(s, e_i)` is :func:`torch_ndcg.lambda_loss` with item ``i`` the only relevant one
    (LambdaLoss does not change when its labels are scaled, and the IDCG@k of :math:`e_i` is the
    discount of rank 1, which is 1 for the built-in discounts).
    Its expectation is therefore

    .. math:: E[L] = \sum_i \gamma_i\,\ell(s, e_i)

    over the items with a propensity > 0 (:math:`\gamma_i` the click probability of item ``i``
    once examined): a sum of single-item LambdaLosses, *not* the label twin on :math:`\gamma`
    (:math:`\mathrm{IDCG@k}_\gamma\,\ell(s, \gamma)`, whose pair weights are
    :math:`|\gamma_i - \gamma_j|`). Both are minimised by ranking the more attractive items
    first, but their values and gradients differ. With several clicks per list, pairs of two
    clicked items weigh :math:`|w_i - w_j|`, which is not linear in the clicks: the estimate is
    biased even for that sum. Empty lists (no click) count as 0 in the expectation: average
    with ``empty="zero"``.

    Label twin: :func:`torch_ndcg.lambda_loss`. Arguments as in :func:`ips_neural_ndcg_loss`;
    ``options``: LambdaLoss's ``weighting``, ``sigma``, ``mu`` and ``impl``.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks, ips_lambda_loss
        >>> target = Clicks(torch.tensor([[0.0, 1.0, 0.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> scores = torch.tensor([[1.0, 0.0, 0.0]], requires_grad=True)
        >>> ips_lambda_loss(scores, target).backward()
        >>> bool(scores.grad[0, 1] < 0)
        True
    """
    return _ips(lambda_loss, _ideal, scores, target, mask, indexes, clip, self_normalised, reduction, validate,
                k=k, discount=discount, empty=empty, **options)  # fmt: skip
