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

import math
import warnings

import torch
from torch import Tensor, nn

from ..validation import caller_stacklevel, check_flag, check_ids, check_mask, check_positive, check_same_shape, check_tensor

DEFAULT_EM_ITERATIONS = 10_000
DEFAULT_EM_TOLERANCE = 1e-4
# Iterations between two convergence checks of the EM (each check is one host read).
_EM_CHECK_EVERY = 10


class EMNotConverged(RuntimeWarning):
    """:func:`regression_em` used its whole iteration budget before meeting its tolerance: the
    estimates are still moving (raise ``iterations``, or vary the logged rankings more)."""


def _check_log(clicks: Tensor, ranks: Tensor, max_rank: int) -> None:
    check_tensor("clicks", clicks)
    check_tensor("ranks", ranks)
    check_same_shape("clicks", clicks, "ranks", ranks)
    check_positive("max_rank", max_rank, integer=True)
    _check_integer_ranks(ranks)


def _check_integer_ranks(ranks: Tensor) -> None:
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
    _check_integer_ranks(ranks)
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
    without any model of relevance.

    A rank that the sessions do not identify is NaN: one that is no session's ``k`` (deeper than
    the lists, say), or whose sessions have no click at rank 1 (the ratio's denominator).
    Sessions whose ``k`` is deeper than ``max_rank`` are left out: they say nothing of the ranks
    estimated.

    Args:
        clicks: ``[S, N]`` clicks of the sessions.
        ranks: ``[S, N]`` the ranks shown (after the swap).
        partner: ``[S]`` each session's ``k`` (integers ≥ 1; ``1``: no swap, as for one item).
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
    if partner.is_floating_point() or partner.is_complex() or partner.dtype == torch.bool:
        raise TypeError(f"partner must be integer ranks k (as swap_intervention returns them), got {partner.dtype}")
    if partner.numel() and int(partner.min()) < 1:
        raise ValueError(f"partner must be ranks k ≥ 1, got {int(partner.min())}")
    c = clicks.double()
    top = (c * (ranks == 1)).sum(-1)
    at_k = (c * (ranks == partner[:, None])).sum(-1)
    # Bin max_rank + 1 collects the sessions of deeper partners, dropped below.
    bins = max_rank + 2
    k = partner.long().clamp(max=bins - 1)
    top_sums = torch.zeros(bins, dtype=torch.float64, device=c.device).index_add_(0, k, top)
    k_sums = torch.zeros(bins, dtype=torch.float64, device=c.device).index_add_(0, k, at_k)
    ratio = torch.where(top_sums > 0, k_sums / top_sums, torch.nan)
    ratio[1] = 1.0
    return ratio[1:-1]


def regression_em(
    clicks: Tensor,
    ranks: Tensor,
    items: Tensor,
    *,
    max_rank: int,
    mask: Tensor | None = None,
    iterations: int = DEFAULT_EM_ITERATIONS,
    tolerance: float = DEFAULT_EM_TOLERANCE,
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

    Stopping: the EM converges linearly, slowly when the rankings vary little. Every few
    iterations the change :math:`\Delta` of the estimates (largest relative change over the
    ranks) and its rate :math:`\rho` (the ratio of two successive changes) give the distance
    left to the fixed point, :math:`\Delta \rho / (1 - \rho)`; the EM stops once that and
    :math:`\Delta` are below ``tolerance``. When ``iterations`` run out first, an :class:`EMNotConverged` warning says so
    and the current estimates are returned.

    A rank ``r ≤ max_rank`` at which no display is logged is not identified: its estimate is NaN.
    Without a display at rank 1 nothing can be normalised to it: a ``ValueError``.

    Args:
        clicks: ``[..., N]`` clicks of the logged sessions (one session per list).
        ranks: ``[..., N]`` the ranks shown (1-based); displays deeper than ``max_rank`` are ignored.
        items: ``[..., N]`` integer ids ≥ 0 of the query–document pairs shown (the same id in
            every session that shows the same item for the same query); any ids, however large
            or sparse: the tables follow the distinct ids.
        max_rank: the deepest rank estimated.
        mask: ``True`` at real items.
        iterations: the most EM iterations (default 10,000).
        tolerance: the estimated distance to the fixed point, relative to each estimate, at
            which the EM stops (default 1e-4).
        relevance_model: ``None`` (one :math:`\gamma_d` per item) or a callable taking the
            ``[D]`` relevance posteriors and the ``[D]`` display counts and returning the fitted
            ``[D]`` :math:`\gamma_d` in ``(0, 1)`` (``D`` distinct items, in increasing id order).
        validate: check that clicks are 0/1 and real ranks ≥ 1 (reads values).

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
    check_positive("tolerance", tolerance)
    check_flag("validate", validate)
    if relevance_model is not None and not callable(relevance_model):
        raise TypeError(f"relevance_model must be None or a callable, got {type(relevance_model).__name__}")
    real = torch.ones_like(ranks, dtype=torch.bool) if mask is None else mask
    keep = real & (ranks >= 1) & (ranks <= max_rank)
    c, r, ids = clicks[keep].double(), ranks[keep].long() - 1, items[keep].long()
    if validate and not bool(((c == 0) | (c == 1)).all()):
        raise ValueError("clicks must be 0 or 1 for the EM estimate")
    if validate and bool((real & (ranks < 1)).any()):
        raise ValueError("ranks must be 1-based positions (≥ 1) at real items")
    if ids.numel() and int(ids.min()) < 0:
        raise ValueError(f"items must be ids ≥ 0, got {int(ids.min())}")
    # Tables over the distinct ids only: their count, not the largest id, sizes the memory.
    distinct, d = torch.unique(ids, return_inverse=True)
    count = distinct.shape[0]
    # The sufficient statistics: displays and clicks per (item, rank) cell.
    cell = d * max_rank + r
    shown = torch.bincount(cell, minlength=count * max_rank).view(count, max_rank).double()
    clicked = torch.bincount(cell, weights=c, minlength=count * max_rank).view(count, max_rank)
    unclicked = shown - clicked
    per_rank, per_item = shown.sum(0), shown.sum(1)
    displayed = per_rank > 0
    if not bool(displayed[0]):
        raise ValueError("no display at rank 1 (within mask): propensities relative to rank 1 are not identified")
    theta = torch.full((max_rank,), 0.5, dtype=torch.float64, device=c.device)
    gamma = torch.full((count,), 0.5, dtype=torch.float64, device=c.device)
    previous, change = theta / theta[0], None
    for step in range(1, iterations + 1):
        both = theta[None, :] * gamma[:, None]
        not_clicked = (1 - both).clamp(min=1e-12)
        examined = theta[None, :] * (1 - gamma[:, None]) / not_clicked
        relevant = (1 - theta[None, :]) * gamma[:, None] / not_clicked
        theta = ((clicked + unclicked * examined).sum(0) / per_rank.clamp(min=1)).clamp(1e-6, 1 - 1e-6)
        posterior = (clicked + unclicked * relevant).sum(1) / per_item.clamp(min=1)
        gamma = posterior if relevance_model is None else relevance_model(posterior, per_item)
        gamma = gamma.clamp(1e-6, 1 - 1e-6)
        if step % _EM_CHECK_EVERY == 0:
            current = theta / theta[0]
            latest = float(((current - previous).abs() / current)[displayed].max())
            # Both the last change and the distance it implies: early on the fast modes die out
            # and a quick drop in the change would promise a fixed point the slow mode is far from.
            if change is not None and latest < min(change, tolerance) and latest * latest / (change - latest) < tolerance:
                break
            previous, change = current, latest
    else:
        warnings.warn(
            f"regression_em: {iterations} iterations ended before the estimates settled within tolerance={tolerance} "
            f"(last change over {_EM_CHECK_EVERY} iterations: {'not measured' if change is None else f'{change:.3g}'}); "
            f"raise iterations",
            EMNotConverged, stacklevel=caller_stacklevel(),
        )  # fmt: skip
    return torch.where(displayed, theta / theta[0], torch.nan)


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
        first = s.gather(-1, (ranks == 1).long().argmax(-1, keepdim=True))
        # The weights in log space: e^{s_(1) − s_i} overflows once the gap passes the dtype's
        # exponent range, and only their ratios to the total reach the loss.
        log_weight = first - s
        if self.max_weight is not None:
            log_weight = log_weight.clamp(max=math.log(self.max_weight))
        c = clicks.to(s.dtype)
        clicked = c > 0 if mask is None else (c > 0) & mask
        log_weight = torch.where(clicked, c.clamp(min=torch.finfo(s.dtype).tiny).log() + log_weight, -torch.inf)
        top = log_weight.amax()
        share = (log_weight - torch.where(torch.isfinite(top), top, 0.0)).exp()  # 0 where nothing is clicked
        logits = self._logits(ranks).to(s.dtype)
        if mask is not None:
            logits = logits.masked_fill(~mask, low)
        log_probability = torch.where(clicked, logits.log_softmax(-1), 0.0)
        return -(share * log_probability).sum() / share.sum().clamp(min=torch.finfo(s.dtype).tiny)
