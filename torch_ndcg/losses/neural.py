r"""NeuralNDCG (Pobrotyn & Białobrzeski 2021): NDCG@k with the sort relaxed by NeuralSort + Sinkhorn.

The dense reference here materialises ``[B, N, N]`` and lets autograd differentiate through the
unrolled Sinkhorn iterations; :mod:`.sinkhorn_streaming` computes the same value and gradient
in O(B·N) memory.
"""

from __future__ import annotations

from typing import Unpack

import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from .. import definitions as d
from ..options import LOSS_DEFAULTS, NDCGLossOptions, NeuralImpl, settle
from ..validation import check_positive
from .layout import flat_call
from . import common
from .sinkhorn_kernel import kernel_dcg
from .sinkhorn_streaming import sinkhorn_dcg


def _normalise(logp: Tensor, exists: Tensor, dim: int) -> Tensor:
    """``logp − logsumexp(logp, dim)`` over existing entries; missing entries stay ``-inf``.

    Missing entries enter the logsumexp as the dtype's most negative finite number, so rows or
    columns with no entry at all keep a finite logsumexp and a NaN-free backward.
    """
    finite = logp.masked_fill(~exists, torch.finfo(logp.dtype).min)
    return (logp - torch.logsumexp(finite, dim, keepdim=True)).masked_fill(~exists, -torch.inf)


def dense_dcg(scores: Tensor, relaxation: common.SortRelaxation) -> Tensor:
    """Smooth DCG ``[B]`` from the explicit ``[B, N, N]`` NeuralSort + Sinkhorn matrix."""
    valid, tau = relaxation.valid, relaxation.tau
    v = valid.to(scores.dtype)
    n = v.sum(-1, keepdim=True)
    pos = common.positions(scores)
    spread = ((scores[:, :, None] - scores[:, None, :]).abs() * v[:, None, :]).sum(-1)  # A_j
    logits = ((n + 1 - 2 * pos)[:, :, None] * scores[:, None, :] - spread[:, None, :]) / tau
    exists = (pos <= n)[:, :, None] & valid[:, None, :]  # rows: positions 1..n; columns: items
    logp = _normalise(logits.masked_fill(~exists, -torch.inf), exists, -1)  # NeuralSort P̂
    if relaxation.transposed:
        logp, exists = logp.transpose(1, 2), exists.transpose(1, 2)
    for _ in range(relaxation.iters):
        logp = _normalise(_normalise(logp, exists, -2), exists, -1)
    if relaxation.transposed:
        logp = logp.transpose(1, 2)
    return torch.einsum("bi,bij,bj->b", relaxation.rank_weight, logp.exp(), relaxation.gains)


def _gumbel(shape: tuple[int, ...], like: Tensor, generator: torch.Generator | None) -> Tensor:
    """Standard Gumbel noise ``−log(−log U)``, U uniform, drawn from ``generator``."""
    tiny = torch.finfo(like.dtype).tiny
    uniform = torch.rand(shape, generator=generator, dtype=like.dtype, device=like.device)
    return -torch.log(-torch.log(uniform.clamp(min=tiny)))


def _log_scores(scores: Tensor, valid: Tensor) -> Tensor:
    """``log(s + |min s| + 1e-10)`` (allRank's ``log_scores``): the minimum over every real item of
    the batch, so each score is shifted to ≥ 0 before the logarithm; padding is left as it is."""
    smallest = torch.where(valid, scores, torch.full_like(scores, torch.inf)).min()
    smallest = torch.where(torch.isfinite(smallest), smallest, torch.zeros_like(smallest))  # no real item
    shifted = torch.where(valid, scores + smallest.abs() + 1e-10, torch.ones_like(scores))
    return torch.log(shifted)


def _smooth_dcg(
    lists: common.LossLists,
    rank_weight: Tensor,
    tau: float,
    iters: int,
    transposed: bool,
    stochastic: bool,
    samples: int,
    beta: float,
    generator: torch.Generator | None,
    impl: str,
    tol: float | None,
    log_scores: bool,
) -> Tensor:
    s, valid, gains = lists.scores, lists.valid, lists.gains

    def one(scores: Tensor, valid: Tensor, rank_weight: Tensor, gains: Tensor) -> Tensor:
        relaxation = common.SortRelaxation(valid, rank_weight, gains, tau, iters, transposed)
        if impl == "dense":
            return dense_dcg(scores, relaxation)
        if impl == "kernel":  # second derivatives through the dense reference
            return kernel_dcg(scores, relaxation, tol, lambda x: dense_dcg(x, relaxation))
        return sinkhorn_dcg(scores, relaxation, common.block_ops(impl, scores))

    if not stochastic:
        return one(s, valid, rank_weight, gains)
    if log_scores:
        s = _log_scores(s, valid)
    noise = _gumbel((samples, *s.shape), s, generator)
    if impl != "dense":
        # Samples fold into the batch: the saved state is O(samples · B · N), never N².
        perturbed = torch.where(valid, s + beta * noise, torch.zeros_like(s)).reshape(-1, s.shape[-1])
        many = [t.expand(samples, *t.shape).reshape(-1, t.shape[-1]) for t in (valid, rank_weight, gains)]
        return one(perturbed, *many).reshape(samples, -1).mean(0)
    # Dense: one sample at a time, recomputed in backward, so only one [B, N, N] graph is alive.
    # The per-sample values are stacked and averaged as the other paths average them: a running
    # float32 total would add a rounding error per sample (1e-5 relative at 1,024 samples).
    values = [
        checkpoint(one, torch.where(valid, s + beta * sample, torch.zeros_like(s)), valid, rank_weight, gains,
                   use_reentrant=False)
        for sample in noise
    ]  # fmt: skip
    return torch.stack(values).mean(0)


def check_options(
    *, temperature: float, empty: str, reduction: str, impl: str, sinkhorn_iters: int, samples: int, beta: float,
    tol: float | None, stochastic: bool = False, log_scores: bool = False, **_tensors_and_callables: object,
) -> None:
    """Every option check of :func:`neural_ndcg` that needs no tensor (the module runs it at
    construction)."""
    common.check_common(temperature, empty, reduction, impl, common.NEURAL_IMPLS)
    check_positive("sinkhorn_iters", sinkhorn_iters, integer=True)
    check_positive("samples", samples, integer=True)
    check_positive("beta", beta)
    if tol is not None:
        check_positive("tol", tol)
    if not isinstance(log_scores, bool):
        raise TypeError(f"log_scores must be a bool, got {log_scores!r}")
    if log_scores and not stochastic:
        raise ValueError("log_scores=True changes only the stochastic variant: pass stochastic=True too")


def neural_ndcg(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    temperature: float = 1.0,
    sinkhorn_iters: int = 50,
    transposed: bool = False,
    stochastic: bool = False,
    samples: int = 32,
    beta: float = 0.1,
    log_scores: bool = False,
    generator: torch.Generator | None = None,
    impl: NeuralImpl = "auto",
    tol: float | None = None,
    **options: Unpack[NDCGLossOptions],
) -> Tensor:
    r"""Smooth NDCG@k of NeuralNDCG (Pobrotyn & Białobrzeski, 2021); differentiable in ``scores``.

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
    ``ties="average"`` value.

    Args:
        scores, relevance, k, indexes, mask, gain, discount, empty, reduction, validate: as in
            :func:`torch_ndcg.ndcg` (``k`` is one cutoff; ``empty`` defaults to ``"skip"``).
        temperature: τ > 0; smaller is closer to the exact metric and has sparser gradients.
        sinkhorn_iters: Sinkhorn iterations, ≥ 1.
        transposed, stochastic, samples, beta, log_scores, generator: the variants above
            (``log_scores`` needs ``stochastic=True``).
        impl: ``"dense"`` (``[B, N, N]`` tensors and autograd, the readable reference),
            ``"kernel"`` (the NeuralSort kernel built once per
            list and Sinkhorn as matrix–vector scalings of it, ragged lists grouped by length;
            memory: one cache-sized group of kernels plus O(iterations·B·N) scalings; on CPU its
            two sequential loops are C compiled on first use where a C compiler is, see
            :mod:`torch_ndcg.losses.native`),
            ``"streaming"`` (O(B·N) memory, block recomputation in backward), ``"triton"`` (the
            streaming algorithm with fused Triton kernels; CUDA tensors) or ``"auto"`` (Triton
            on CUDA when installed, else kernel while the longest list's ``N × N`` kernel takes
            at most 256 MiB, else streaming). All give the same values and gradients. Second
            derivatives (``create_graph=True``): ``"dense"``, and ``"kernel"`` without ``tol``,
            whose backward then recomputes through dense (and takes dense's memory);
            ``"streaming"`` and ``"triton"`` raise ``ValueError``.
        tol: stop Sinkhorn early, after the first whole iteration whose matrix has every row and
            column sum within ``tol`` of 1 (allRank's criterion; allRank uses ``1e-6``), checked
            per group of lists of similar length; ``None`` (default) runs all
            ``sinkhorn_iters``. Only ``impl="kernel"`` (or ``"auto"`` choosing it) stops early.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.neural_ndcg(scores, torch.tensor([[2, 0, 1]]), temperature=0.01).item(), 4)
        0.9502
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(neural_ndcg, locals())
    settled = settle("neural_ndcg", options, NDCGLossOptions, LOSS_DEFAULTS)
    empty, reduction, discount = settled["empty"], settled["reduction"], settled["discount"]
    check_options(
        temperature=temperature, empty=empty, reduction=reduction, impl=impl, sinkhorn_iters=sinkhorn_iters,
        samples=samples, beta=beta, tol=tol, stochastic=stochastic, log_scores=log_scores,
    )  # fmt: skip
    lists = common.prepare(scores, relevance, k, mask, settled["gain"], discount, settled["validate"])
    rank_weight = common.rank_weights(lists, discount)
    impl = common.resolve_impl(impl, lists, kernel=True)
    if tol is not None and impl != "kernel":
        raise ValueError(f"tol (early stopping) needs impl='kernel'; these lists run with impl={impl!r}")
    dcg = _smooth_dcg(
        lists, rank_weight, float(temperature), sinkhorn_iters, transposed, stochastic, samples, beta, generator,
        impl, tol, log_scores,
    )  # fmt: skip
    return common.finish(dcg, lists, empty, reduction)


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
