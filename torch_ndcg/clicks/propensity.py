r"""Examination propensities estimated three ways: from randomised swaps, from logs alone (EM), and
jointly with the ranker (DLA).

All three assume the position-based model: an item at rank ``r`` is clicked with probability
:math:`\theta_r \gamma_d`, the examination probability of the rank times the click probability
of the item, independently. Propensities are identified only up to a common factor, so each
estimate is returned normalised to rank 1 (:math:`\hat\theta_1 = 1`), which is all an
inverse-propensity-weighted loss needs (a common factor scales it, or cancels when
self-normalised).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ..validation import check_flag, check_ids, check_mask, check_positive, check_same_shape, check_tensor


def _check_log(clicks: Tensor, ranks: Tensor, max_rank: int) -> None:
    check_tensor("clicks", clicks)
    check_tensor("ranks", ranks)
    check_same_shape("clicks", clicks, "ranks", ranks)
    check_positive("max_rank", max_rank, integer=True)
    if ranks.is_floating_point() or ranks.is_complex() or ranks.dtype == torch.bool:
        raise TypeError(f"ranks must be integer 1-based positions, got {ranks.dtype}")


def swap_intervention(
    ranks: Tensor, *, max_rank: int, mask: Tensor | None = None, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """Randomise each session's ranking by one swap with rank 1 (Joachims, Swaminathan & Schnabel,
    WSDM 2017): draw ``k`` uniformly from ``2..min(max_rank, n)`` and, with probability 1/2, swap
    the items at ranks 1 and ``k``; either way the session's pair is ``(1, k)``.

    Args:
        ranks: the logged ranks ``[S, N]`` of ``S`` sessions (1-based, a permutation per row).
        max_rank: the deepest rank swapped with rank 1.
        mask: ``True`` at real items; a session with one real item has ``k = 1`` (no swap).
        generator: the random draws' source.

    Returns:
        ``(ranks, partner)``: the ranks shown (``[S, N]``) and each session's ``k`` (``[S]``).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import swap_intervention
        >>> shown, k = swap_intervention(torch.tensor([[1, 2, 3]]), max_rank=2)
        >>> k.tolist(), shown.tolist() in ([[1, 2, 3]], [[2, 1, 3]])
        ([2], True)
    """
    check_tensor("ranks", ranks)
    check_positive("max_rank", max_rank, integer=True)
    if ranks.dim() != 2:
        raise ValueError(f"ranks must be [S, N] sessions, got shape {tuple(ranks.shape)}")
    check_mask(mask, ranks.shape)
    n = torch.full(ranks.shape[:1], ranks.shape[1], device=ranks.device) if mask is None else mask.sum(-1)
    deepest = n.clamp(max=max_rank)
    draw = torch.rand(ranks.shape[:1], generator=generator, dtype=torch.float64).to(ranks.device)
    partner = torch.where(deepest > 1, 2 + (draw * (deepest - 1)).long().clamp(max=(deepest - 2).clamp(min=0)), 1)
    swap = torch.rand(ranks.shape[:1], generator=generator).to(ranks.device) < 0.5
    at_one, at_k = ranks == 1, ranks == partner[:, None]
    swapped = torch.where(at_one, partner[:, None], torch.where(at_k, torch.ones_like(ranks), ranks))
    return torch.where(swap[:, None], swapped, ranks), partner


def propensities_from_swaps(clicks: Tensor, ranks: Tensor, partner: Tensor, *, max_rank: int) -> Tensor:
    r"""Relative propensities :math:`\hat\theta_k / \hat\theta_1`, ``k = 1..max_rank``, from sessions
    randomised by :func:`swap_intervention`.

    Assumptions: the position-based model, and sessions whose pair ``(1, k)`` was shown in a
    uniformly random order, so that the items at ranks 1 and ``k`` have the same click
    probability :math:`\bar\gamma_k` on average. Then the clicks at rank ``k`` over those at rank 1
    in the sessions of pair ``k`` estimate :math:`\theta_k \bar\gamma_k / (\theta_1 \bar\gamma_k)`,
    without any model of relevance. A rank whose sessions have no click at rank 1 gets NaN.

    Args:
        clicks: ``[S, N]`` clicks of the sessions.
        ranks: ``[S, N]`` the ranks shown (after the swap).
        partner: ``[S]`` each session's ``k``.
        max_rank: the deepest rank estimated.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import pbm_clicks, propensities_from_swaps, swap_intervention
        >>> g = torch.Generator().manual_seed(0)
        >>> labels = torch.randint(0, 5, (100_000, 5), generator=g)
        >>> shown, k = swap_intervention(torch.arange(1, 6).expand(100_000, 5), max_rank=5, generator=g)
        >>> clicks = pbm_clicks(labels, shown, generator=g).clicks
        >>> propensities_from_swaps(clicks, shown, k, max_rank=5).round(decimals=1)
        tensor([1.0000, 0.5000, 0.3000, 0.2000, 0.2000], dtype=torch.float64)
    """
    _check_log(clicks, ranks, max_rank)
    check_tensor("partner", partner)
    if clicks.dim() != 2 or partner.shape != clicks.shape[:1]:
        raise ValueError(f"clicks and ranks must be [S, N] and partner [S], got {tuple(clicks.shape)} and {tuple(partner.shape)}")
    c = clicks.double()
    top = (c * (ranks == 1)).sum(-1)
    at_k = (c * (ranks == partner[:, None])).sum(-1)
    bins = max_rank + 1
    k = partner.long().clamp(max=bins - 1)
    top_sums = torch.zeros(bins, dtype=torch.float64, device=c.device).index_add_(0, k, top)
    k_sums = torch.zeros(bins, dtype=torch.float64, device=c.device).index_add_(0, k, at_k)
    ratio = k_sums / top_sums
    ratio[1] = 1.0
    return ratio[1:]


def regression_em(
    clicks: Tensor,
    ranks: Tensor,
    items: Tensor,
    *,
    max_rank: int,
    mask: Tensor | None = None,
    iterations: int = 200,
    relevance_model: object = None,
    validate: bool = True,
) -> Tensor:
    r"""Relative propensities :math:`\hat\theta_r / \hat\theta_1`, ``r = 1..max_rank``, from click
    logs without interventions, by expectation–maximisation (Wang, Golbandi, Bendersky, Metzler &
    Najork, "Position Bias Estimation for Unbiased Learning to Rank in Personal Search", WSDM 2018).

    Assumptions: the position-based model, :math:`P(c = 1) = \theta_r \gamma_d`, with examination
    and relevance hidden. The E-step gives each unclicked display its posteriors
    :math:`P(E = 1 \mid c = 0) = \theta_r (1 - \gamma_d) / (1 - \theta_r \gamma_d)` and
    :math:`P(R = 1 \mid c = 0) = (1 - \theta_r) \gamma_d / (1 - \theta_r \gamma_d)`; the M-step sets
    :math:`\theta_r` to the mean examination posterior over the displays at rank ``r``, and
    :math:`\gamma_d` to the mean relevance posterior over the displays of item ``d``, or, given
    ``relevance_model``, to that model's fit of them (the *regression* EM: relevance shared
    through features). The propensities are identified only where the same item (or, with a
    regression, similar items) is shown at several ranks across sessions: a logging ranker whose
    rankings vary (over time, with noise) is needed; a fixed ranking identifies nothing.

    Args:
        clicks: ``[..., N]`` clicks of the logged sessions (one session per list).
        ranks: ``[..., N]`` the ranks shown (1-based); displays deeper than ``max_rank`` are ignored.
        items: ``[..., N]`` integer ids of the query–document pairs shown (the same id in every
            session that shows the same item for the same query), from 0.
        max_rank: the deepest rank estimated.
        mask: ``True`` at real items.
        iterations: EM iterations (default 200).
        relevance_model: ``None`` (one :math:`\gamma_d` per item) or a callable taking the
            ``[D]`` relevance posteriors and the ``[D]`` display counts and returning the fitted
            ``[D]`` :math:`\gamma_d` in ``(0, 1)``.
        validate: check that clicks are 0/1 (reads values).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import logged_ranks, pbm_clicks, regression_em
        >>> g = torch.Generator().manual_seed(0)
        >>> labels = torch.tensor([4, 1, 3, 0]).expand(20_000, 4)  # one query of 4 items, 20,000 sessions
        >>> shown = logged_ranks(labels + 2 * torch.randn(20_000, 4, generator=g))  # a noisy logging ranker
        >>> clicks = pbm_clicks(labels, shown, generator=g).clicks
        >>> regression_em(clicks, shown, torch.arange(4).expand(20_000, 4), max_rank=4).round(decimals=1)
        tensor([1.0000, 0.5000, 0.3000, 0.3000], dtype=torch.float64)
    """
    _check_log(clicks, ranks, max_rank)
    check_ids("items", items)
    check_same_shape("clicks", clicks, "items", items)
    check_mask(mask, clicks.shape)
    check_positive("iterations", iterations, integer=True)
    check_flag("validate", validate)
    if relevance_model is not None and not callable(relevance_model):
        raise TypeError(f"relevance_model must be None or a callable, got {type(relevance_model).__name__}")
    keep = (ranks >= 1) & (ranks <= max_rank)
    if mask is not None:
        keep = keep & mask
    c, r, d = clicks[keep].double(), ranks[keep].long() - 1, items[keep].long()
    if validate and not bool(((c == 0) | (c == 1)).all()):
        raise ValueError("clicks must be 0 or 1 for the EM estimate")
    count = int(d.max()) + 1 if d.numel() else 0
    # The sufficient statistics: displays and clicks per (item, rank) cell.
    cell = d * max_rank + r
    shown = torch.bincount(cell, minlength=count * max_rank).view(count, max_rank).double()
    clicked = torch.bincount(cell, weights=c, minlength=count * max_rank).view(count, max_rank)
    unclicked = shown - clicked
    per_rank, per_item = shown.sum(0), shown.sum(1)
    theta = torch.full((max_rank,), 0.5, dtype=torch.float64, device=c.device)
    gamma = torch.full((count,), 0.5, dtype=torch.float64, device=c.device)
    for _ in range(iterations):
        both = theta[None, :] * gamma[:, None]
        not_clicked = (1 - both).clamp(min=1e-12)
        examined = theta[None, :] * (1 - gamma[:, None]) / not_clicked
        relevant = (1 - theta[None, :]) * gamma[:, None] / not_clicked
        theta = ((clicked + unclicked * examined).sum(0) / per_rank.clamp(min=1)).clamp(1e-6, 1 - 1e-6)
        posterior = (clicked + unclicked * relevant).sum(1) / per_item.clamp(min=1)
        gamma = posterior if relevance_model is None else relevance_model(posterior, per_item)
        gamma = gamma.clamp(1e-6, 1 - 1e-6)
    return theta / theta[0]


class DualLearning(nn.Module):
    r"""The propensity model of the dual learning algorithm (Ai, Bi, Luo, Guo & Croft, "Unbiased
    Learning to Rank with Unbiased Propensity Estimation", SIGIR 2018): propensities learnt jointly
    with the ranker.

    One logit per rank, :math:`\phi_r`; the estimated propensities relative to rank 1 are
    :math:`\hat\theta_r / \hat\theta_1 = e^{\phi_r - \phi_1}`. Each training step, the ranker
    minimises an IPS loss with :meth:`target` (its clicks over the current estimates), and this
    model minimises :meth:`loss`: the softmax cross-entropy of the propensity logits over each
    list's ranks, every click weighted by its *inverse relevance weight*
    :math:`\hat\gamma_{(1)} / \hat\gamma_i = e^{s_{(1)} - s_i}` (the ranker's softmax at the item
    shown first over the item's), clipped at ``max_weight``: the mirror image of the ranker's
    IPS loss, so that each corrects the other's bias.

    Assumptions: the position-based model; the ranker's softmax over a list estimates the items'
    relative click probabilities, and the propensity model's softmax the ranks' relative
    examination probabilities (both are only learnt up to a common factor, which the ratios remove).

    Args:
        max_rank: the deepest rank; deeper ranks share its logit.
        max_weight: clip of the inverse relevance weights (default 10; ``None``: no clip).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import DualLearning
        >>> model = DualLearning(max_rank=3)
        >>> model.propensities(torch.tensor([[1, 2, 3]]))
        tensor([[1., 1., 1.]])
    """

    def __init__(self, max_rank: int, *, max_weight: float | None = 10.0) -> None:
        super().__init__()
        check_positive("max_rank", max_rank, integer=True)
        if max_weight is not None:
            check_positive("max_weight", max_weight)
        self.max_rank, self.max_weight = max_rank, max_weight
        self.logits = nn.Parameter(torch.zeros(max_rank))

    def _logits(self, ranks: Tensor) -> Tensor:
        return self.logits[(ranks.long() - 1).clamp(0, self.max_rank - 1)]

    def propensities(self, ranks: Tensor) -> Tensor:
        """The current estimates :math:`\\hat\\theta_r / \\hat\\theta_1` at ``ranks`` (no gradient)."""
        with torch.no_grad():
            return (self._logits(ranks) - self.logits[0]).exp()

    def target(self, clicks: Tensor, ranks: Tensor):
        """The ranker's target: ``Clicks(clicks, current propensity estimates at ranks)``."""
        from .target import Clicks

        return Clicks(clicks, self.propensities(ranks).to(clicks.dtype if clicks.is_floating_point() else torch.float32))

    def loss(self, scores: Tensor, clicks: Tensor, ranks: Tensor, *, mask: Tensor | None = None) -> Tensor:
        r"""The propensity model's loss on ``[B, N]`` lists: :math:`-\sum_i c_i\,w_i \log
        \mathrm{softmax}_{j}(\phi_{r_j})_i`, the softmax over the list's real items, summed over
        lists and divided by the total click weight (``scores`` are detached: this loss trains
        the propensity model only)."""
        check_mask(mask, scores.shape)
        check_same_shape("scores", scores, "clicks", clicks)
        check_same_shape("scores", scores, "ranks", ranks)
        s = scores.detach()
        low = torch.finfo(s.dtype).min
        if mask is not None:
            s = s.masked_fill(~mask, low)
        first = s.gather(-1, (ranks == 1).long().argmax(-1, keepdim=True))
        weight = (first - s).exp()
        if self.max_weight is not None:
            weight = weight.clamp(max=self.max_weight)
        logits = self._logits(ranks).to(s.dtype)
        if mask is not None:
            logits = logits.masked_fill(~mask, low)
        c = clicks.to(s.dtype) * weight
        if mask is not None:
            c = c.masked_fill(~mask, 0.0)
        total = c.sum()
        return -(c * logits.log_softmax(-1)).sum() / total.clamp(min=torch.finfo(s.dtype).tiny)
