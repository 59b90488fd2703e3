r"""Position weights of ListMLE: what :func:`torch_ndcg.listmle_loss` multiplies each position's
Plackett–Luce term by, as plain functions.

ListMLE sums, over the real items sorted by decreasing label :math:`y(1), …, y(n)`, the terms
:math:`\log \sum_{j \ge i} e^{s_{y(j)}} - s_{y(i)}`; its ``weighting=`` takes a name or a function
of this signature::

    def weight(position: Tensor, length: Tensor) -> Tensor:  # broadcastable to [B, N]

``position`` is the 1-based position ``i`` of each term in the label order (``[B, N]``; 0 or less
at the padding, whose terms are dropped), ``length`` the number ``n`` of real
items of each list (``[B, 1]``), both whole numbers in the loss's compute dtype; it returns the weight :math:`\lambda_i` of each term, made of
tensor operations (no host read), so that the loss runs under ``torch.compile``, ``torch.export``
and ``torch.func``.

Example:
    >>> import torch, torch_ndcg as tn
    >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
    >>> def harmonic(position, length):
    ...     return 1 / position.clamp(min=1)
    >>> round(tn.listmle_loss(s, rel, weighting=harmonic).item(), 4)
    0.5642
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

PositionWeight = Callable[[Tensor, Tensor], Tensor]


def plistmle(position: Tensor, length: Tensor) -> Tensor:
    r"""PListMLE's weights (Lan, Zhu, Guo, Niu & Cheng, "Position-Aware ListMLE: A Sequential
    Learning Process for Ranking", UAI 2014), as sentence-transformers' ``PListMLELoss``
    weighs them: :math:`\lambda_i = (2^{n-i} - 1) / \sum_{k=1}^{n} (2^{n-k} - 1)`, so a mistake at
    the top of the label order costs most. Computed as :math:`2^{1-i} - 2^{1-n}` over its sum,
    which never overflows. A list of one item has weight 0.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
        >>> round(tn.listmle_loss(s, rel, weighting="plistmle").item(), 4)
        0.384
    """
    real = position >= 1
    raw = torch.where(real, torch.exp2(1 - position) - torch.exp2(1 - length), torch.zeros((), dtype=position.dtype))
    total = raw.sum(-1, keepdim=True)
    return raw / torch.where(total > 0, total, torch.ones_like(total))


#: The weights by the names ``weighting=`` takes (``"none"``, every weight 1, has no function).
NAMED: dict[str, PositionWeight] = {"plistmle": plistmle}


def resolve(weighting: str | PositionWeight) -> PositionWeight | None:
    """The function of a checked ``weighting`` (``None`` for ``"none"``)."""
    if callable(weighting):
        return weighting
    return None if weighting == "none" else NAMED[weighting]
