r"""Offline evaluation from clicks: inverse-propensity-weighted DCG@k and NDCG@k of new scores.

Each metric is its label-based twin (:func:`torch_ndcg.dcg`, :func:`torch_ndcg.ndcg`) evaluated on
the inverse-propensity weights :math:`w_i = c_i / \max(p_i, \text{clip})` as labels with the
linear gain (a click's gain is 1 under either gain), by the twin's own code: ties, cutoff,
masks, ``indexes=``, ``empty`` and ``reduction`` are the twin's.

The clicks were logged under another ranking; the scores evaluated may rank the items anew.
Under the position-based model, :math:`E[w_i] = \gamma_i` (the click probability of an examined
item), so :func:`ips_dcg` is an unbiased estimate of the DCG@k the new scores would get with the
labels :math:`\gamma` and the linear gain (Joachims, Swaminathan & Schnabel, WSDM 2017; for the
click models of :mod:`torch_ndcg.clicks.models`, :math:`\gamma` is affine in :math:`2^y - 1`, so
it orders rankers as the ``exp2``-gain DCG@k does). :func:`ips_ndcg` divides by the IDCG@k of the
same weights: a ratio (self-normalised) estimate, biased but bounded in [0, 1].
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from .. import definitions as d
from ..functional import dcg, ndcg
from ..options import DEFAULT_DISCOUNT, DEFAULT_REDUCTION, Reduction
from ..validation import check_flag, names_arguments
from .target import check_target


def _weights(target: object, clip: float | None, mask: Tensor | None, validate: bool) -> Tensor:
    check_flag("validate", validate)
    return check_target("target", target).weights(clip=clip, mask=mask, validate=validate)


@names_arguments
def ips_dcg(
    scores: Tensor,
    target: Any,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    clip: float | None = None,
    discount: d.Discount = DEFAULT_DISCOUNT,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
    **options: Any,
) -> Tensor:
    r"""IPS-estimated DCG@k: :math:`\sum_{i \le k} w_{(i)}\,\mathrm{discount}(i)`, items ranked by ``scores``.

    Label twin: :func:`torch_ndcg.dcg` with labels :math:`\gamma` and ``gain="linear"``, of which
    this is an unbiased estimate under the position-based model.

    Args:
        scores: ``[..., N]`` (or flat ``[T]`` with ``indexes``) scores of the ranker evaluated.
        target: a :class:`~torch_ndcg.clicks.Clicks` (the logged clicks and their propensities).
        clip: propensity floor (``None``: none).
        k, indexes, mask, discount, reduction, validate: as in :func:`torch_ndcg.dcg`.
        options: the twin's other options (``ties``, ``sample_weight``, …).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks, ips_dcg
        >>> target = Clicks(torch.tensor([[0.0, 1.0, 0.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> ips_dcg(torch.tensor([[0.0, 3.0, 1.0]]), target)  # w = 2 at rank 1
        tensor(2.)
    """
    weights = _weights(target, clip, mask, validate)
    return dcg(scores, weights, k, indexes=indexes, mask=mask, gain="linear", discount=discount, reduction=reduction,
               validate=validate, **options)  # fmt: skip


@names_arguments
def ips_ndcg(
    scores: Tensor,
    target: Any,
    k: d.Cutoff = None,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    clip: float | None = None,
    discount: d.Discount = DEFAULT_DISCOUNT,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
    **options: Any,
) -> Tensor:
    r"""Self-normalised IPS NDCG@k: :func:`ips_dcg` over the IDCG@k of the same weights.

    Label twin: :func:`torch_ndcg.ndcg` with labels :math:`\gamma` and ``gain="linear"``; a ratio
    estimate of it (biased, consistent as clicks per list grow). A list without a click has
    IDCG 0 and follows ``empty`` (an option of the twin, passed in ``options``).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks, ips_ndcg
        >>> target = Clicks(torch.tensor([[1.0, 1.0, 0.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> round(ips_ndcg(torch.tensor([[2.0, 1.0, 0.0]]), target).item(), 4)  # w = (1, 2, 0) ranked 1, 2
        0.8597
    """
    weights = _weights(target, clip, mask, validate)
    return ndcg(scores, weights, k, indexes=indexes, mask=mask, gain="linear", discount=discount, reduction=reduction,
                validate=validate, **options)  # fmt: skip
