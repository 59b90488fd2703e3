r"""Pair weights: what a pairwise loss multiplies each pair's term by, as plain functions.

The pairwise losses (:func:`torch_ndcg.ranknet_loss`, :func:`torch_ndcg.pairwise_hinge_loss`,
:func:`torch_ndcg.lambda_loss`) sum :math:`w_{ij}\,\phi(s_i - s_j)` over their pairs
:math:`(i, j)`: real items with :math:`\mathrm{gain}(rel_i) > \mathrm{gain}(rel_j)` (in
``lambda_loss`` also both current ranks ≤ k). Their ``weighting=`` takes a name or a function of
this module's signature::

    def weight(pairs: Pairs) -> Tensor:  # broadcastable to [B, R, C]

which receives a :class:`Pairs` view of a block of pairs, ``R`` rows (the items ``i``) by ``C``
columns (the items ``j``) of each of the ``B`` lists, and returns ``w_ij``. The view's per-item
tensors come from the loss's own ``gain``, ``discount`` and ``k``, through
:mod:`torch_ndcg.definitions`, and the IDCG@k is the metric's exact one, so an NDCG weight
weighs the NDCG that :func:`torch_ndcg.ndcg` reports. A weight is read as a constant of the
backward (the ranks come from the detached scores), as in LambdaRank and LambdaLoss. It must be
made of tensor operations (no host read) to run under ``torch.compile``, ``torch.export`` and
``torch.func`` as the losses do. A function whose attribute ``every_pair`` is true receives every
ordered pair of real items, ``i = j`` included, instead of the preferred ones (NDCG-Loss1's pair
set, Wang et al. 2018).

Weights that read a cutoff (:func:`lambdarank`, :func:`dcg2`, :func:`ndcg_loss1`) take the
loss's ``k``: in ``ranknet_loss`` and ``pairwise_hinge_loss`` it changes the weights only;
``lambda_loss`` also keeps only the pairs of its current top k.

Example:
    >>> import torch, torch_ndcg as tn
    >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
    >>> def top_item(pairs):  # the preferred item's label at its current rank's discount
    ...     return pairs.label_i * pairs.discount(pairs.rank_i)
    >>> round(tn.ranknet_loss(s, rel, weighting=top_item).item(), 4)
    0.3593
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from ..validation import check_broadcasts
from .options import DEFAULT_MU

PairWeight = Callable[["Pairs"], Tensor]


@dataclass(frozen=True)
class Pairs:
    """A block of pairs as a weight reads them: ``*_i`` tensors are ``[B, R, 1]`` (the rows, items
    ``i``), ``*_j`` tensors ``[B, 1, C]`` (the columns, items ``j``); a tensor that is the same for
    every list may have 1 in place of ``B``. Values at padding are arbitrary (the loss drops those
    pairs). Everything is in the compute dtype except the ranks.

    Attributes:
        label_i, label_j: the relevance labels.
        gain_i, gain_j: :math:`G = \\mathrm{gain}(rel) / \\mathrm{IDCG@k}` (the IDCG of a list with
            nothing relevant counts as 1, so its gains stay 0).
        rank_i, rank_j: ``int64`` 1-based ranks by the current scores, ties by index.
        k: the loss's cutoff (``None``: the whole list).
        discounts: ``[N + 1]`` ``discount(r)`` for ``r = 1 … N + 1`` (read it through
            :meth:`discount`).
    """

    label_i: Tensor
    label_j: Tensor
    gain_i: Tensor
    gain_j: Tensor
    rank_i: Tensor
    rank_j: Tensor
    k: int | None
    discounts: Tensor

    def discount(self, rank: Tensor) -> Tensor:
        """``discount(rank)`` of 1-based ``int64`` ranks from 1 to ``N + 1``."""
        return self.discounts[rank - 1]

    def discount_at_k(self, rank: Tensor) -> Tensor:
        """``discount(rank)`` within the cutoff, 0 beyond it (the metric's own ``D``)."""
        values = self.discount(rank)
        return values if self.k is None else torch.where(rank <= self.k, values, torch.zeros_like(values))


def label_difference(pairs: Pairs) -> Tensor:
    r"""The labels' gap, :math:`w_{ij} = |rel_i - rel_j|` (rax's ``labeldiff_lambdaweight``).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
        >>> round(tn.ranknet_loss(s, rel, weighting=tn.pair_weights.label_difference).item(), 4)
        0.2935
    """
    return (pairs.label_i - pairs.label_j).abs()


def lambdarank(pairs: Pairs) -> Tensor:
    r"""|ΔNDCG@k| of swapping the two items (Burges, "From RankNet to LambdaRank to LambdaMART",
    2010): :math:`w_{ij} = |G_i - G_j|\,|D_k(r_i) - D_k(r_j)|`, with :math:`D_k(r)` the discount
    within the cutoff and 0 beyond.

    rax's ``dcg_lambdaweight(normalize=True, topn=k)`` is this times the padded list length
    (rax scales its DCG weights up by it).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
        >>> round(tn.ranknet_loss(s, rel, weighting="lambdarank").item(), 4)
        0.0359
    """
    return (pairs.gain_i - pairs.gain_j).abs() * (pairs.discount_at_k(pairs.rank_i) - pairs.discount_at_k(pairs.rank_j)).abs()


def _gap_discount(pairs: Pairs) -> Tensor:
    """``|D(|r_i − r_j|) − D(|r_i − r_j| + 1)|``, 0 for an item with itself: one lookup in the table
    of that difference by gap (two lookups with shifted indices miscompile under Inductor's
    dynamic shapes)."""
    table = pairs.discounts
    by_gap = torch.cat([table.new_zeros(1), (table[:-1] - table[1:]).abs()])
    return by_gap[(pairs.rank_i - pairs.rank_j).abs()]


def ndcg_loss2(pairs: Pairs) -> Tensor:
    r"""LambdaLoss's NDCG-Loss2 (Wang, Li, Golbandi, Bendersky & Najork, "The LambdaLoss Framework
    for Ranking Metric Optimization", CIKM 2018):
    :math:`w_{ij} = |G_i - G_j|\,\delta_{ij}`, :math:`\delta_{ij} = |D(|r_i - r_j|) - D(|r_i - r_j| + 1)|`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
        >>> round(tn.lambda_loss(s, rel, weighting=tn.pair_weights.ndcg_loss2).item(), 4)
        0.145
    """
    return (pairs.gain_i - pairs.gain_j).abs() * _gap_discount(pairs)


def dcg2(pairs: Pairs) -> Tensor:
    r""":func:`ndcg_loss2` with the top-n form of Jagerman, Qin, Wang, Bendersky & Najork ("On
    Optimizing Top-K Metrics for Neural Ranking Models", SIGIR 2022) when ``k`` is set: a pair
    reaching beyond the cutoff, :math:`m = \max(r_i, r_j) > k`, is weighted up by
    :math:`1 / (1 - D(m))`.

    rax's ``dcg2_lambdaweight(normalize=True, topn=k)`` is this times the padded list length.
    ``lambda_loss`` keeps only the pairs of its top k, where the factor is 1: it changes
    ``ranknet_loss`` and ``pairwise_hinge_loss``.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0, 0.5]]), torch.tensor([[2, 0, 1, 0]])
        >>> round(tn.ranknet_loss(s, rel, k=2, weighting="dcg2").item(), 4)
        0.0512
    """
    weight = ndcg_loss2(pairs)
    if pairs.k is None:
        return weight
    last = torch.maximum(pairs.rank_i, pairs.rank_j)
    beyond = 1.0 / (1.0 - pairs.discount(last))  # the rank m ≥ 2 of a pair beyond k ≥ 1: D(m) < 1
    return weight * torch.where(last > pairs.k, beyond, torch.ones_like(beyond))


def ndcg_loss2pp(pairs: Pairs, mu: float = DEFAULT_MU) -> Tensor:
    r"""LambdaLoss's NDCG-Loss2++ (Wang et al. 2018), the paper's best:
    :math:`w_{ij} = \mu\,w^{\rm Loss2}_{ij} + w^{\rm LambdaRank}_{ij}` (:func:`ndcg_loss2`,
    :func:`lambdarank`). Another μ: ``functools.partial(ndcg_loss2pp, mu=…)``, or the ``mu``
    option of ``lambda_loss`` with ``weighting="ndcg_loss2pp"``.

    Example:
        >>> import functools, torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
        >>> weight = functools.partial(tn.pair_weights.ndcg_loss2pp, mu=1.0)
        >>> round(tn.lambda_loss(s, rel, weighting=weight).item(), 4)
        0.3005
    """
    return mu * ndcg_loss2(pairs) + lambdarank(pairs)


def ndcg_loss1(pairs: Pairs) -> Tensor:
    r"""LambdaLoss's NDCG-Loss1 (Wang et al. 2018): :math:`w_{ij} = G_i\,D_k(r_i)`, the row item's
    share of the NDCG, over every ordered pair of real items (``i = j`` included), as in the paper's
    :math:`-\sum_i \sum_j (G_i / \log_2(1 + r_i)) \log_2 \sigma(s_i - s_j)`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> s, rel = torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])
        >>> round(tn.lambda_loss(s, rel, weighting="ndcg_loss1").item(), 4)
        2.0455
    """
    return pairs.gain_i * pairs.discount_at_k(pairs.rank_i)


ndcg_loss1.every_pair = True  # type: ignore[attr-defined]

#: The weights by the names ``weighting=`` takes (``"none"``, every weight 1, has no function).
NAMED: dict[str, PairWeight] = {
    "label_difference": label_difference,
    "lambdarank": lambdarank,
    "dcg2": dcg2,
    "ndcg_loss1": ndcg_loss1,
    "ndcg_loss2": ndcg_loss2,
    "ndcg_loss2pp": ndcg_loss2pp,
}


def every_pair(weight: PairWeight) -> bool:
    """Whether ``weight`` is summed over every ordered pair of real items (its ``every_pair``
    attribute), not only the preferred ones; a ``functools.partial`` answers for its function."""
    return bool(getattr(getattr(weight, "func", weight), "every_pair", False))


def resolve(weighting: str | PairWeight, mu: float = DEFAULT_MU) -> PairWeight | None:
    """The function of a checked ``weighting`` (``None`` for ``"none"``); ``mu`` goes to
    ``"ndcg_loss2pp"``."""
    if callable(weighting):
        return weighting
    if weighting == "none":
        return None
    if weighting == "ndcg_loss2pp":
        return lambda pairs: ndcg_loss2pp(pairs, mu)
    return NAMED[weighting]


@dataclass(frozen=True)
class Items:
    """What the loss keeps per item for the weights: ``[B, N]`` labels, gains over IDCG@k and
    ranks (``None``: the items are in score order, so item ``p`` has rank ``p + 1``), and the
    ``[N + 1]`` discount table."""

    labels: Tensor
    gains: Tensor
    ranks: Tensor | None
    k: int | None
    discounts: Tensor

    def block(self, rows: slice, cols: slice, labels: Tensor, gains: Tensor, ranks: Tensor | None = None) -> Pairs:
        """The :class:`Pairs` of ``rows`` × ``cols`` (the tensors come as arguments, so that a
        streaming Function and torch.func see them; this object's own are not read)."""
        if ranks is None:  # in score order the ranks are positions, the same for every list
            device = labels.device
            rank_i = torch.arange(rows.start + 1, rows.stop + 1, device=device)[None, :, None]
            rank_j = torch.arange(cols.start + 1, cols.stop + 1, device=device)[None, None, :]
        else:
            rank_i, rank_j = ranks[:, rows, None], ranks[:, None, cols]
        return Pairs(
            labels[:, rows, None], labels[:, None, cols], gains[:, rows, None], gains[:, None, cols],
            rank_i, rank_j, self.k, self.discounts,
        )

    def vectors(self) -> tuple[Tensor, ...]:
        return (self.labels, self.gains) if self.ranks is None else (self.labels, self.gains, self.ranks)


def weigh(weight: PairWeight, pairs: Pairs, shape: tuple[int, int, int]) -> Tensor:
    """``weight(pairs)``, refused unless it is a tensor that broadcasts to the block's ``shape``."""
    return check_broadcasts("weighting", weight(pairs), shape, "pairs'")
