r"""ApproxNDCG (Qin, Liu & Li 2010): NDCG@k with each item's rank replaced by a smooth count, which
is the NDCG of :mod:`torch_ndcg.over_ranks` fed by the relaxation
:class:`~.relaxations.choices.ApproxRanks` (``tn.ndcg_loss(..., relaxation=tn.ApproxRanks(...))``).

Only the approximate ranks are quadratic in N: the dense reference builds the ``[B, N, N]``
sigmoid matrix under autograd, the streaming path sums it block by block in
:mod:`.relaxations.blocks` with an analytic backward, and the sorted path ranks only the items
that can reach the cutoff (:mod:`.relaxations.approximate_ranks`), O(M·N) for long lists. The
discount, the cutoff and the sum are O(N) and stay under autograd, so any discount callable works.
"""

from __future__ import annotations

from torch import Tensor

from .. import definitions as d
from ..options import (
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    DEFAULT_IMPL,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_REDUCTION,
    Empty,
    Impl,
    Reduction,
)
from ..validation import names_arguments
from . import common
from .layout import flat_call
from .options import DEFAULT_TEMPERATURE, ApproxNDCGOptions
from .relaxations.choices import ApproxRanks
from .twins import smooth_ndcg


@names_arguments
def approx_ndcg(
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
    temperature: float = DEFAULT_TEMPERATURE,
    impl: Impl = DEFAULT_IMPL,
    validate: bool = True,
) -> Tensor:
    r"""Smooth NDCG@k of ApproxNDCG (Qin, Liu & Li, 2010); differentiable in ``scores``.

    Each real item's rank is replaced by the smooth count

    .. math:: \pi_i = 1 + \sum_{j \ne i,\ \mathrm{real}} \sigma\!\left(\frac{s_j - s_i}{\tau}\right)

    and the discount is evaluated at that real-valued rank:

    .. math:: \mathrm{DCG@k} = \sum_i \mathrm{gain}(rel_i)\,\mathrm{discount}(\pi_i)\,c_i,\qquad
              c_i = \sigma\!\left(\frac{k + \tfrac12 - \pi_i}{\tau}\right)

    The soft cutoff :math:`c_i` uses the same τ (so one knob sharpens ranks and cutoff together)
    and tends to the hard top-k indicator :math:`[\pi_i \le k]` as τ → 0; with ``k=None`` or
    ``k ≥`` the list's number of real items, :math:`c_i = 1`. NDCG divides by the metric's exact
    IDCG@k, so as τ → 0 with distinct scores the value tends to :func:`torch_ndcg.ndcg`. It is the
    NDCG of :mod:`torch_ndcg.over_ranks` fed by :class:`torch_ndcg.ApproxRanks`: the loss is
    ``tn.ndcg_loss(..., relaxation=tn.ApproxRanks(temperature=τ, impl=impl))``.
    Since one τ sets both the ranks' softness (on the scores' scale) and the cutoff's (on the
    ranks' scale), only items whose smooth rank is within a few τ of ``k`` get a gradient with
    ``k`` set; on long lists a τ that keeps the ranks sharp leaves most relevant items without
    one, where :func:`torch_ndcg.neuralsort_ndcg` scales its temperature with the list.

    Args:
        scores, relevance, k, indexes, mask, gain, discount, empty, reduction, validate: as in
            :func:`torch_ndcg.ndcg` (``k`` is one cutoff; ``empty`` defaults to ``"skip"``).
        temperature: τ > 0.
        impl: ``"dense"`` (``[B, N, N]`` sigmoid matrix under autograd), ``"streaming"`` (O(B·N)
            memory, blockwise analytic backward), ``"triton"`` (the streaming algorithm in fused
            Triton kernels; CUDA tensors), ``"sorted"`` (for long lists: only the ``M`` items
            that can reach the cutoff get ranks, ``M = min(n, ⌈2(k + 40τ)⌉)``; O(N log M + M·N)
            time, O(B·(N + M)) memory; the terms it leaves out are below σ(−40) ≈ 4·10⁻¹⁸ each,
            so values and gradients equal the others' to float precision; it costs the others'
            O(N²) when ``k`` is None or τ is of the order of N/80) or ``"auto"`` (sorted when
            ``2M ≤ N`` beyond the smallest batches, see :func:`torch_ndcg.backends`). All give
            the same values and gradients.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.approx_ndcg(scores, torch.tensor([[2, 0, 1]]), temperature=0.01).item(), 4)
        0.9502
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(approx_ndcg, locals())
    ApproxNDCGOptions(
        k=k, gain=gain, discount=discount, empty=empty, reduction=reduction, validate=validate,
        temperature=temperature, impl=impl,
    )  # checks every option, before any work
    return smooth_ndcg(
        scores, relevance, k, mask=mask, gain=gain, discount=discount, empty=empty, reduction=reduction,
        relaxation=ApproxRanks(temperature=temperature, impl=impl), validate=validate,
    )  # fmt: skip


approx_ndcg_loss = common.one_minus(
    approx_ndcg,
    r"""ApproxNDCG loss: :math:`1 - \mathrm{ApproxNDCG@k}` per list, reduced by ``reduction``.

    Options and definitions as in :func:`approx_ndcg`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[0.1, 0.9, 0.4]], requires_grad=True)
        >>> tn.approx_ndcg_loss(scores, torch.tensor([[2, 0, 1]])).backward()
        >>> bool(scores.grad[0, 0] < 0)
        True
    """,
)
