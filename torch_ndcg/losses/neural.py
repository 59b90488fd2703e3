r"""NeuralNDCG (Pobrotyn & Białobrzeski 2021): NDCG@k with the sort relaxed by NeuralSort + Sinkhorn,
which is the NDCG of :mod:`torch_ndcg.over_ranks` fed by the relaxation
:class:`~.relaxations.choices.SinkhornRows` (``stochastic=True``: by
``Gumbel(SinkhornRows(...))``; ``tn.ndcg_loss(..., relaxation=...)`` with either is this loss).

Three implementations give the same value and gradient: the dense reference
(:mod:`.relaxations.sinkhorn.dense`, ``[B, N, N]`` under autograd), the kernel path (:mod:`.relaxations.sinkhorn.op`, the
registered operator ``torch_ndcg::sinkhorn_dcg``) and the streaming path
(:mod:`.relaxations.sinkhorn.streaming`, O(B·N) memory; with Triton kernels on CUDA).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import definitions as d
from ..options import (
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    DEFAULT_IMPL,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_REDUCTION,
    Empty,
    NeuralImpl,
    Reduction,
)
from ..validation import names_arguments
from . import common
from .layout import flat_call
from .options import DEFAULT_BETA, DEFAULT_SAMPLES, DEFAULT_SINKHORN_ITERS, DEFAULT_TEMPERATURE, NeuralNDCGOptions
from .relaxations.choices import Gumbel, SinkhornRows
from .twins import smooth_ndcg


@names_arguments
def neural_ndcg(
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
    sinkhorn_iters: int = DEFAULT_SINKHORN_ITERS,
    transposed: bool = False,
    stochastic: bool = False,
    samples: int = DEFAULT_SAMPLES,
    beta: float = DEFAULT_BETA,
    log_scores: bool = False,
    generator: torch.Generator | None = None,
    impl: NeuralImpl = DEFAULT_IMPL,
    tol: float | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Smooth NDCG@k of NeuralNDCG (Pobrotyn & Białobrzeski, 2021); differentiable in ``scores``
    (and, with ``impl="dense"``, in a ``relevance`` that requires grad, which the other paths
    refuse).

    For the ``n`` real items of a list, NeuralSort (Grover et al., 2019) relaxes the sorting
    permutation to

    .. math:: \hat P_{i\cdot} = \mathrm{softmax}_j\!\left(
              \frac{(n + 1 - 2i)\,s_j - \sum_m |s_j - s_m|}{\tau}\right),\quad i = 1..n,

    which ``sinkhorn_iters`` log-domain Sinkhorn iterations (columns, then rows; a fixed count,
    no host synchronisation) turn into a nearly doubly stochastic :math:`P`. Then

    .. math:: \mathrm{DCG@k} = \sum_{i \le k} \mathrm{discount}(i) \sum_j P_{ij}\,\mathrm{gain}(rel_j),
              \qquad \mathrm{NeuralNDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}

    with the metric's own gain, discount and exact IDCG@k. ``transposed=True`` runs Sinkhorn on
    :math:`\hat P^\top` (so it ends on columns: every item's distribution over ranks is exact)
    and computes :math:`\sum_j \mathrm{gain}(rel_j) \sum_{i \le k} P_{ij}\,\mathrm{discount}(i)`.
    ``stochastic=True`` averages over ``samples`` perturbed scores :math:`s + \beta g`,
    :math:`g \sim \mathrm{Gumbel}(0, 1)` i.i.d. drawn from ``generator``; ``log_scores=True``
    perturbs :math:`\log(s + |\min s| + 10^{-10})` instead (allRank's ``log_scores``, its default
    for this variant; the minimum is over the batch's real items, where allRank also counts
    padding). As τ → 0 with distinct
    scores the value tends to :func:`torch_ndcg.ndcg`; tied scores tend to its
    ``ties="average"`` value. It is the NDCG of :mod:`torch_ndcg.over_ranks` fed by
    :class:`torch_ndcg.SinkhornRows` (``stochastic=True``: by :class:`torch_ndcg.Gumbel` around it):
    the loss is ``tn.ndcg_loss(..., relaxation=tn.SinkhornRows(temperature=τ, sinkhorn_iters=...,
    transposed=..., impl=..., tol=...))``.

    Args:
        scores, relevance, k, indexes, mask, gain, discount, empty, reduction, validate: as in
            :func:`torch_ndcg.ndcg` (``k`` is one cutoff; ``empty`` defaults to ``"skip"``).
        temperature: τ > 0; smaller is closer to the exact metric and has sparser gradients.
        sinkhorn_iters: Sinkhorn iterations, ≥ 1.
        transposed, stochastic, samples, beta, log_scores, generator: the variants above
            (``log_scores`` needs ``stochastic=True``).
        impl: ``"dense"`` (``[B, N, N]`` tensors and autograd, the readable reference),
            ``"kernel"`` (the registered operator ``torch_ndcg::sinkhorn_dcg``: the NeuralSort
            kernel built once per list and Sinkhorn as matrix–vector scalings of it, ragged
            lists grouped by length; memory: one cache-sized group of kernels plus
            O(iterations·B·N) scalings), ``"streaming"`` (O(B·N) memory, block recomputation in
            backward), ``"triton"`` (the streaming algorithm with fused Triton kernels; CUDA
            tensors) or ``"auto"`` (Triton on CUDA when installed, else kernel while one padded
            ``N × N`` kernel takes at most 256 MiB, else streaming; always kernel with ``tol``).
            :func:`torch_ndcg.backends` tells which runs. All give the same values and
            gradients, and under ``create_graph=True`` all give the dense path's second
            derivatives (the backward then differentiates the dense reference, at its memory;
            with ``tol`` a ``ValueError``).
        tol: stop Sinkhorn early, after the first whole iteration whose matrix has every row and
            column sum within ``tol`` of 1 (allRank's criterion; allRank uses ``1e-6``), checked
            per group of lists of similar length; ``None`` (default) runs all
            ``sinkhorn_iters``. Runs on the kernel path (``impl="kernel"`` or ``"auto"``); any
            other ``impl`` with ``tol`` is a ``ValueError``.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.neural_ndcg(scores, torch.tensor([[2, 0, 1]]), temperature=0.01).item(), 4)
        0.9502
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(neural_ndcg, locals())
    NeuralNDCGOptions(
        k=k, gain=gain, discount=discount, empty=empty, reduction=reduction, validate=validate,
        temperature=temperature, impl=impl, sinkhorn_iters=sinkhorn_iters, transposed=transposed,
        stochastic=stochastic, samples=samples, beta=beta, log_scores=log_scores, generator=generator, tol=tol,
    )  # checks every option, before any work
    sinkhorn = SinkhornRows(
        temperature=temperature, sinkhorn_iters=sinkhorn_iters, transposed=transposed, impl=impl, tol=tol
    )  # (with tol only the kernel path stops early, so "auto" runs it whatever the shape)
    relaxation = (
        Gumbel(sinkhorn, samples=samples, beta=beta, log_scores=log_scores, generator=generator) if stochastic
        else sinkhorn
    )  # fmt: skip
    return smooth_ndcg(
        scores, relevance, k, mask=mask, gain=gain, discount=discount, empty=empty, reduction=reduction,
        relaxation=relaxation, validate=validate,
    )  # fmt: skip


neural_ndcg_loss = common.one_minus(
    neural_ndcg,
    r"""NeuralNDCG loss: :math:`1 - \mathrm{NeuralNDCG@k}` per list, reduced by ``reduction``.

    A perfect ranking (at small τ) gives 0. Options and definitions as in :func:`neural_ndcg`;
    lists whose IDCG is 0 are left out with ``empty="skip"`` (no gradient; a batch of only such
    lists gives 0).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[0.1, 0.9, 0.4]], requires_grad=True)
        >>> loss = tn.neural_ndcg_loss(scores, torch.tensor([[2, 0, 1]]), k=2)
        >>> loss.backward()
        >>> bool(scores.grad[0, 0] < 0)  # raising the relevant item lowers the loss
        True
    """,
)
