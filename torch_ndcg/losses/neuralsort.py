r"""NDCG@k with the sort relaxed by the top ``k`` rows of NeuralSort, without Sinkhorn: a smooth
NDCG for long lists, in O(N log N + k·N) time and O(k·N) memory per list
(:mod:`.relaxations.neuralsort`). It is the NDCG of :mod:`torch_ndcg.over_ranks` fed by the
relaxation :class:`~.relaxations.choices.NeuralSortRows`
(``tn.ndcg_loss(..., relaxation=tn.NeuralSortRows(...))``)."""

from __future__ import annotations

from torch import Tensor

from .. import definitions as d
from ..options import DEFAULT_DISCOUNT, DEFAULT_GAIN, DEFAULT_LOSS_EMPTY, DEFAULT_REDUCTION, Empty, Reduction
from ..validation import names_arguments
from . import common
from .layout import flat_call
from .options import DEFAULT_SCALED_TEMPERATURE, NeuralSortNDCGOptions, Temperature
from .relaxations.choices import NeuralSortRows
from .twins import smooth_ndcg


@names_arguments
def neuralsort_ndcg(
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
    temperature: Temperature = DEFAULT_SCALED_TEMPERATURE,
    validate: bool = True,
) -> Tensor:
    r"""Smooth NDCG@k from the top ``k`` rows of NeuralSort (Grover et al., 2019), no Sinkhorn;
    differentiable in ``scores`` (and in a ``relevance`` that requires grad). Built for long lists
    (a whole catalogue scored per user).

    For the ``n`` real items of a list, row ``i`` of NeuralSort's relaxed sorting matrix is

    .. math:: \hat P_{i\cdot} = \mathrm{softmax}_j\!\left(
              \frac{(n + 1 - 2i)\,s_j - \sum_m |s_j - s_m|}{\tau}\right)

    (a distribution over the items: which item takes rank ``i``), and

    .. math:: \mathrm{DCG@k} = \sum_{i \le \min(k, n)} \mathrm{discount}(i) \sum_j \hat P_{ij}\,\mathrm{gain}(rel_j),
              \qquad \mathrm{NDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}

    with the metric's own gain, discount and exact IDCG@k, as in PiRank (Swezey et al., 2021).
    As τ → 0 with distinct scores the value tends to :func:`torch_ndcg.ndcg`. It is the NDCG of
    :mod:`torch_ndcg.over_ranks` fed by :class:`torch_ndcg.NeuralSortRows`: the loss is
    ``tn.ndcg_loss(..., relaxation=tn.NeuralSortRows(temperature=τ))``.

    How it differs from :func:`torch_ndcg.neural_ndcg` (Pobrotyn & Białobrzeski, 2021): that
    loss builds all ``n`` rows and runs Sinkhorn on the ``n × n`` matrix, which makes it nearly
    doubly stochastic (each item's ranks also sum to 1), at O(n²) per iteration. Here only rows
    ``1..k`` are built, each a softmax (rows sum to 1; columns are not normalised, so at a large
    τ one item can take mass in several of the top rows), in O(n log n + k·n) time (one sort and
    suffix sums give every :math:`\sum_m |s_j - s_m|`) and O(k·n) memory; the backward is
    analytic and recomputes the rows. It is NeuralNDCG's DCG on the NeuralSort matrix before
    Sinkhorn, read at its top ``k`` rows; ``k=None`` builds all ``n`` rows, the O(n²) cost.

    The logits grow with the list's length and the scores' spread, so one fixed τ is hard at
    long lists (gradients vanish) and soft at short ones. ``temperature="auto"`` (the default)
    sets, per list, :math:`\tau = \mathrm{std}(s)\,\sqrt{n}` (population standard deviation of
    its real scores; no gradient flows through τ, and the relaxation runs on the scores divided
    by a power of two, so that nothing overflows or underflows): the relaxation is the same at
    every finite score scale, and each top row spreads over a number of items that grows as
    :math:`\sqrt n` (for normal scores, a perplexity of about :math:`3.5\sqrt n`), so the
    gradient reaches relevant items below the top and does not vanish as ``n`` grows;
    ``temperature`` as a number is τ itself, the same for every list (a grid around the rule:
    multiples of std(s)·√n). A list whose real scores all tie (a zero-initialised model) has no
    spread: every τ gives it the same value, and only its gradient's size (∝ 1/τ) depends on τ,
    so the rule gives it τ = √n (the rule at unit spread) and a gradient of ordinary size.

    Args:
        scores, relevance, k, indexes, mask, gain, discount, empty, reduction, validate: as in
            :func:`torch_ndcg.ndcg` (``k`` is one cutoff; ``empty`` defaults to ``"skip"``).
        temperature: ``"auto"`` (the rule above) or a finite number τ > 0 used for every list
            (finite in the scores' dtype too).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[2.0, 1.0, 0.5]])
        >>> round(tn.neuralsort_ndcg(scores, torch.tensor([[2, 0, 1]]), temperature=0.01).item(), 4)
        0.9502
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(neuralsort_ndcg, locals())
    NeuralSortNDCGOptions(
        k=k, gain=gain, discount=discount, empty=empty, reduction=reduction, validate=validate,
        temperature=temperature,
    )  # checks every option, before any work
    return smooth_ndcg(
        scores, relevance, k, mask=mask, gain=gain, discount=discount, empty=empty, reduction=reduction,
        relaxation=NeuralSortRows(temperature=temperature), validate=validate,
    )  # fmt: skip


neuralsort_ndcg_loss = common.one_minus(
    neuralsort_ndcg,
    r"""NeuralSort top-rows NDCG loss: :math:`1 - \mathrm{NDCG@k}` per list, reduced by ``reduction``.

    Options and definitions as in :func:`neuralsort_ndcg` (the top ``k`` rows of NeuralSort,
    no Sinkhorn; O(n log n + k·n) per list, for long lists).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.randn(2, 1000, requires_grad=True)
        >>> relevance = (torch.rand(2, 1000) < 0.05).long()
        >>> tn.neuralsort_ndcg_loss(scores, relevance, k=10).backward()
        >>> scores.grad.shape
        torch.Size([2, 1000])
    """,
)
