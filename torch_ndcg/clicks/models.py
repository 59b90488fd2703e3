r"""Click models: simulated clicks on logged rankings, with the true examination propensities.

Every model takes graded labels ``relevance`` and the logged ranking as ``ranks`` (the 1-based
position at which each item was shown, a permutation of ``1..n`` within each list; from logged
scores, :func:`logged_ranks`), on the dense layout ``[..., N]`` (each list one session; ``mask``
marks real items) or the flat layout (1-D items with ``indexes=`` session ids). Each list is one
session: repeat a list to simulate many sessions of it. The draws come from ``generator``.

An examined item of label ``y`` is clicked with the graded probability

.. math:: \alpha(y) = \epsilon^- + (\epsilon^+ - \epsilon^-)\,\frac{2^y - 1}{2^{y_{\max}} - 1}

(``noise=(ε⁻, ε⁺)``: ε⁻ the click probability of a non-relevant item, ε⁺ of a perfect one;
Chuklin, Markov & de Rijke, *Click Models for Web Search*, 2015; the form of Ai et al. 2018).
The models differ in which ranks are examined:

* :func:`pbm_clicks`, the position-based model: rank ``r`` is examined with probability
  :math:`(1/r)^\eta`, whatever else is shown (Joachims, Swaminathan & Schnabel, WSDM 2017).
* :func:`cascade_clicks`, the cascade model (Craswell, Zoeter, Taylor & Ramsey, WSDM 2008): the
  user reads from the top and stops at the first click; rank ``r`` is examined with probability
  :math:`\prod_{j < r} (1 - \alpha_j)`.
* :func:`dcm_clicks`, the dependent click model (Guo, Liu & Wang, WSDM 2009): as the cascade, but
  after a click at rank ``j`` the user goes on with probability :math:`\lambda_j`; rank ``r`` is
  examined with probability :math:`\prod_{j < r} (1 - \alpha_j (1 - \lambda_j))`.

Each returns a :class:`~torch_ndcg.clicks.Clicks`: the clicks (0/1, float) and, as
``propensities``, the true probability that each item was examined given its list (1 at padding,
where nothing is clicked). Under all three, the click of an item and its examination are
independent given the items above it, so ``clicks / propensities`` is unbiased for :math:`\alpha`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from ..validation import check_flag, check_ids, check_mask, check_same_shape, check_tensor
from .target import Clicks

DEFAULT_NOISE = (0.1, 1.0)
DEFAULT_MAX_LABEL = 4
DEFAULT_CONTINUATION = 0.5


@dataclass(frozen=True)
class _Items:
    """The items of a click model's input as ``[L, W]`` sessions in rank order (column ``j`` holds
    rank ``j + 1``), padded at the end of each row."""

    relevance: Tensor  # float64, 0 at padding
    valid: Tensor  # bool
    where: Tensor  # each slot's position in the flattened input; padding: the input's size (one past the end)
    shape: torch.Size

    @property
    def ranks(self) -> Tensor:
        return torch.arange(1, self.valid.shape[-1] + 1, device=self.valid.device).expand_as(self.valid)

    def scatter(self, values: Tensor, fill: float) -> Tensor:
        # Padding slots write into one extra entry, dropped after: no boolean indexing (a host sync).
        out = torch.full((self.shape.numel() + 1,), fill, dtype=values.dtype, device=values.device)
        return out.index_copy_(0, self.where.reshape(-1), values.reshape(-1))[:-1].view(self.shape)


def _exclusive_sum(values: Tensor) -> Tensor:
    """For each rank, the sum of ``values`` over the ranks above it in its session."""
    return values.cumsum(-1) - values


def _check_inputs(relevance: Tensor, ranks: Tensor, mask: Tensor | None, indexes: Tensor | None, validate: bool) -> None:
    check_tensor("relevance", relevance)
    check_tensor("ranks", ranks)
    check_flag("validate", validate)
    if relevance.is_complex() or ranks.is_floating_point() or ranks.is_complex() or ranks.dtype == torch.bool:
        raise TypeError(f"relevance must be real labels and ranks integer positions, got {relevance.dtype} and {ranks.dtype}")
    check_same_shape("relevance", relevance, "ranks", ranks)
    if relevance.dim() < 1 or relevance.shape[-1] == 0:
        raise ValueError(f"relevance must be [..., N] with N ≥ 1 (or flat [T] with indexes=), got {tuple(relevance.shape)}")
    check_mask(mask, relevance.shape)
    if indexes is not None:
        check_ids("indexes", indexes)
        check_same_shape("relevance", relevance, "indexes", indexes)
        if relevance.dim() != 1:
            raise ValueError(f"with indexes=, relevance, ranks and indexes must be 1-D [T], got {tuple(relevance.shape)}")


def _items(relevance: Tensor, ranks: Tensor, mask: Tensor | None, indexes: Tensor | None, max_label: float,
           validate: bool) -> _Items:  # fmt: skip
    _check_inputs(relevance, ranks, mask, indexes, validate)
    flat_position = torch.arange(relevance.numel(), device=relevance.device)
    if indexes is not None:
        rel, rank, where = relevance, ranks.long(), flat_position
        session = indexes.long()
        if mask is not None:
            rel, rank, where, session = rel[mask], rank[mask], where[mask], session[mask]
        # Rows of the padded sessions: one per distinct id, slots in rank order.
        _, row, count = torch.unique(session, return_inverse=True, return_counts=True)
        order = torch.sort(row * (rank.max() + 1 if rank.numel() else 1) + rank, stable=True).indices
        row = row[order]
        first = torch.cumsum(count, 0) - count
        column = torch.arange(row.shape[0], device=row.device) - first[row]
        width = int(count.max()) if count.numel() else 1
        grid = (count.shape[0], width)
        slot = row * width + column
        valid = torch.zeros(grid[0] * width, dtype=torch.bool, device=rel.device).index_fill_(0, slot, True).view(grid)
        rows = torch.zeros(grid[0] * width, dtype=torch.float64, device=rel.device).index_copy_(0, slot, rel[order].double()).view(grid)
        ranked = torch.zeros(grid[0] * width, dtype=torch.long, device=rel.device).index_copy_(0, slot, rank[order]).view(grid)
        padded_where = torch.full((grid[0] * width,), relevance.numel(), dtype=torch.long, device=rel.device)
        where = padded_where.index_copy_(0, slot, where[order]).view(grid)
    else:
        n = relevance.shape[-1]
        rank = ranks.reshape(-1, n).long()
        valid = torch.ones_like(rank, dtype=torch.bool) if mask is None else mask.reshape(-1, n)
        order = torch.where(valid, rank, rank.new_full((), n + 1 if not rank.numel() else int(rank.max()) + n + 1))
        order = order.sort(dim=-1, stable=True).indices
        valid = valid.gather(-1, order)
        rows = relevance.reshape(-1, n).double().gather(-1, order).masked_fill(~valid, 0.0)
        ranked = rank.gather(-1, order)
        where = flat_position.view(-1, n).gather(-1, order).masked_fill(~valid, relevance.numel())
    if validate and rows.numel():
        low, high = torch.where(valid, rows, 0.0).aminmax()
        if not (low >= 0 and high <= max_label):  # NaN fails both
            raise ValueError(f"relevance must be finite labels in [0, max_label={max_label}] at real items")
        positions = torch.arange(1, rows.shape[-1] + 1, device=rows.device)
        if not bool(((ranked == positions) | ~valid).all()) or not bool((valid[:, 1:] <= valid[:, :-1]).all()):
            raise ValueError("ranks must be the 1-based positions of a ranking: a permutation of 1..n within each session")
    return _Items(rows, valid, where, relevance.shape)


def _attraction(relevance: Tensor, noise: tuple[float, float], max_label: float) -> Tensor:
    r""":math:`\epsilon^- + (\epsilon^+ - \epsilon^-)(2^y - 1)/(2^{y_{\max}} - 1)`, written as
    :math:`2^{y - y_{\max}} (1 - 2^{-y}) / (1 - 2^{-y_{\max}})` so that no power overflows at any
    finite top grade."""
    low, high = noise
    fraction = torch.exp2(relevance - max_label) * -torch.expm1(-math.log(2) * relevance) / -math.expm1(-math.log(2) * max_label)
    return low + (high - low) * fraction


def _check_common(noise: object, max_label: object) -> tuple[float, float]:
    if (not isinstance(noise, (tuple, list)) or len(noise) != 2
            or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in noise)
            or not 0 <= noise[0] <= noise[1] <= 1):  # fmt: skip
        raise ValueError(f"noise must be (ε⁻, ε⁺) with 0 ≤ ε⁻ ≤ ε⁺ ≤ 1, got {noise!r}")
    if isinstance(max_label, bool) or not isinstance(max_label, (int, float)) or not 0 < max_label < math.inf:
        raise ValueError(f"max_label must be a finite number > 0 (the top grade of the label scale), got {max_label!r}")
    return float(noise[0]), float(noise[1])


def _result(items: _Items, clicked: Tensor, examined: Tensor, dtype: torch.dtype) -> Clicks:
    return Clicks(items.scatter(clicked.to(dtype), 0.0), items.scatter(examined.to(dtype), 1.0))


def _uniform(shape: torch.Size, device: torch.device, generator: torch.Generator | None) -> Tensor:
    """Uniform draws on ``generator``'s device, moved to ``device``."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    return torch.rand(shape, generator=generator, device=device if generator is None else generator.device).to(device)


def _dtype(relevance: Tensor) -> torch.dtype:
    return relevance.dtype if relevance.is_floating_point() else torch.get_default_dtype()


def pbm_clicks(
    relevance: Tensor,
    ranks: Tensor,
    *,
    eta: float = 1.0,
    noise: tuple[float, float] = DEFAULT_NOISE,
    max_label: float = DEFAULT_MAX_LABEL,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    generator: torch.Generator | None = None,
    validate: bool = True,
) -> Clicks:
    r"""Clicks of the position-based model: rank ``r`` is examined with probability
    :math:`p_r = (1/r)^\eta`, an examined item of label ``y`` clicked with probability
    :math:`\epsilon^- + (\epsilon^+ - \epsilon^-)(2^y - 1)/(2^{y_{\max}} - 1)`, all independently.

    Args:
        relevance: graded labels ``[..., N]`` (or flat ``[T]`` with ``indexes``), in ``[0, max_label]``.
        ranks: the logged ranking: the 1-based rank each item was shown at, a permutation of
            ``1..n`` per list (integer tensor of ``relevance``'s shape).
        eta: η ≥ 0, the severity of the position bias (default 1).
        noise: ``(ε⁻, ε⁺)``, the click probabilities of an examined item of label 0 and of label
            ``max_label`` (default ``(0.1, 1.0)``).
        max_label: ``y_max``, the top grade of the label scale (default 4, as LETOR's 0–4).
        mask: ``True`` at real items (padding gets no click, propensity 1).
        indexes: session ids of flat items (any order); each id is one list.
        generator: the random draws' source.
        validate: check labels and ranks (reads values).

    Returns:
        :class:`~torch_ndcg.clicks.Clicks` of ``relevance``'s shape: clicks and the true ``p_r``.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import pbm_clicks
        >>> target = pbm_clicks(torch.tensor([[4, 0, 2]]), torch.tensor([[1, 2, 3]]), generator=torch.Generator().manual_seed(0))
        >>> target.propensities
        tensor([[1.0000, 0.5000, 0.3333]])
    """
    noise = _check_common(noise, max_label)
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not eta >= 0:
        raise ValueError(f"eta must be a number ≥ 0, got {eta!r}")
    # Items are independent under the PBM: no session order is needed, only each item's rank; the
    # sessions are put in rank order only to check the labels and that the ranks are a ranking.
    if validate:
        _items(relevance, ranks, mask, indexes, max_label, validate)
    else:
        _check_inputs(relevance, ranks, mask, indexes, validate)
    dtype = _dtype(relevance)
    real = torch.ones_like(ranks, dtype=torch.bool) if mask is None else mask
    examined = torch.where(real, ranks.clamp(min=1).to(dtype).pow(-float(eta)), 1.0)
    attraction = _attraction(relevance.to(dtype), noise, max_label)
    draws = _uniform(relevance.shape, relevance.device, generator)
    # One uniform decides both events: P(u < p·α) = p·α, the product of independent events.
    clicked = real & (draws < examined * attraction)
    return Clicks(clicked.to(dtype), examined)


def cascade_clicks(
    relevance: Tensor,
    ranks: Tensor,
    *,
    noise: tuple[float, float] = DEFAULT_NOISE,
    max_label: float = DEFAULT_MAX_LABEL,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    generator: torch.Generator | None = None,
    validate: bool = True,
) -> Clicks:
    r"""Clicks of the cascade model: the user examines ranks 1, 2, … and clicks an examined item
    with probability :math:`\alpha_j = \epsilon^- + (\epsilon^+ - \epsilon^-)(2^{y_j} - 1)/(2^{y_{\max}} - 1)`,
    stopping at the first click. At most one click per list; rank ``r`` is examined with
    probability :math:`\prod_{j < r} (1 - \alpha_j)` (the returned propensities).

    Args: as in :func:`pbm_clicks` (no ``eta``).

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import cascade_clicks
        >>> target = cascade_clicks(torch.tensor([[4, 0, 2]]), torch.tensor([[2, 1, 3]]))
        >>> target.propensities
        tensor([[0.9000, 1.0000, 0.0000]])
    """
    return _sequential(relevance, ranks, None, noise, max_label, mask, indexes, generator, validate)


def dcm_clicks(
    relevance: Tensor,
    ranks: Tensor,
    *,
    continuation: float | Tensor = DEFAULT_CONTINUATION,
    noise: tuple[float, float] = DEFAULT_NOISE,
    max_label: float = DEFAULT_MAX_LABEL,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    generator: torch.Generator | None = None,
    validate: bool = True,
) -> Clicks:
    r"""Clicks of the dependent click model: as :func:`cascade_clicks`, but after a click at rank
    ``j`` the user goes on to rank ``j + 1`` with probability :math:`\lambda_j` (without a click,
    always). Rank ``r`` is examined with probability :math:`\prod_{j < r} (1 - \alpha_j(1 - \lambda_j))`.

    Args:
        continuation: :math:`\lambda_r` in ``[0, 1]``: one number for every rank (default 0.5), or
            a 1-D tensor of :math:`\lambda_1, \lambda_2, …` (ranks beyond its end take its last
            value). ``0`` is the cascade model, ``1`` a PBM with η = 0.
        relevance, ranks, noise, max_label, mask, indexes, generator, validate: as in :func:`pbm_clicks`.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import dcm_clicks
        >>> dcm_clicks(torch.tensor([[4, 0]]), torch.tensor([[1, 2]]), continuation=0.5).propensities
        tensor([[1.0000, 0.5000]])
    """
    if isinstance(continuation, Tensor):
        if continuation.dim() != 1 or not continuation.numel() or continuation.is_complex():
            raise ValueError(f"continuation must be a number or a 1-D real tensor of λ per rank, got shape {tuple(continuation.shape)}")
        if not bool(((continuation >= 0) & (continuation <= 1)).all()):
            raise ValueError("continuation must be probabilities λ in [0, 1]")
    elif isinstance(continuation, bool) or not isinstance(continuation, (int, float)) or not 0 <= continuation <= 1:
        raise ValueError(f"continuation must be a probability λ in [0, 1] or a 1-D tensor of them, got {continuation!r}")
    return _sequential(relevance, ranks, continuation, noise, max_label, mask, indexes, generator, validate)


def _sequential(relevance: Tensor, ranks: Tensor, continuation: float | Tensor | None, noise: tuple[float, float],
                max_label: float, mask: Tensor | None, indexes: Tensor | None, generator: torch.Generator | None,
                validate: bool) -> Clicks:  # fmt: skip
    """The cascade (``continuation=None``) and the DCM, vectorised: a session stops after rank
    ``j`` when ``j`` is attracting and the user does not go on, so rank ``r`` is examined iff no
    stop happens above it (a segmented count), and its probability is a segmented product."""
    noise = _check_common(noise, max_label)
    items = _items(relevance, ranks, mask, indexes, max_label, validate)
    alpha = _attraction(items.relevance, noise, max_label)
    attracted = _uniform(alpha.shape, alpha.device, generator) < alpha
    if continuation is None:
        stops, stop_probability = attracted, alpha
    else:
        if isinstance(continuation, Tensor):
            lam = continuation.to(alpha.device, torch.float64)[(items.ranks - 1).clamp(max=continuation.numel() - 1)]
        else:
            lam = torch.full_like(alpha, float(continuation))
        stops = attracted & (_uniform(alpha.shape, alpha.device, generator) >= lam)
        stop_probability = alpha * (1 - lam)
    examined = _exclusive_sum(stops.long()) == 0
    # log(1 − q) floored at −1000 (e^−1000 is 0 in float64): a certain stop (q = 1) keeps the
    # running sums finite, and everything below it gets probability 0.
    survival = _exclusive_sum(torch.log1p(-stop_probability).clamp(min=-1000.0)).exp()
    return _result(items, examined & attracted, survival, _dtype(relevance))


def logged_ranks(scores: Tensor, *, mask: Tensor | None = None, indexes: Tensor | None = None) -> Tensor:
    """The 1-based ranks ``[..., N]`` (or ``[T]`` with ``indexes=``) at which a logging ranker's
    ``scores`` show their items: by decreasing score, ties by index (the order of the first
    appearance); padding gets ranks after the real items (after a real item scored −inf too).
    A NaN score at a real item is a ``ValueError``.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import logged_ranks
        >>> logged_ranks(torch.tensor([[0.2, 0.9, 0.5]]))
        tensor([[3, 1, 2]])
    """
    check_tensor("scores", scores)
    if not scores.is_floating_point():
        raise TypeError(f"scores must be a floating point tensor, got {scores.dtype}")
    check_mask(mask, scores.shape)
    if indexes is not None:
        check_ids("indexes", indexes)
        check_same_shape("scores", scores, "indexes", indexes)
    key = scores.detach()
    nan = torch.isnan(key) if mask is None else torch.isnan(key) & mask
    if bool(nan.any()):
        raise ValueError("scores must not be NaN at real items: a NaN has no place in a ranking")
    order = key.sort(dim=-1, descending=True, stable=True).indices
    if mask is not None:
        # Padding after every real item, a real item scored −inf included: a stable sort on the
        # padding flag keeps the score order within each group.
        order = order.gather(-1, (~mask).gather(-1, order).to(torch.uint8).sort(dim=-1, stable=True).indices)
    if indexes is None:
        return torch.empty_like(order).scatter_(-1, order, torch.arange(1, scores.shape[-1] + 1, device=scores.device).expand_as(order))
    order = order[torch.sort(indexes[order], stable=True).indices]  # by session, then padding, then score
    session = indexes[order]
    start = torch.ones_like(session, dtype=torch.bool)
    start[1:] = session[1:] != session[:-1]
    position = torch.arange(order.shape[0], device=scores.device)
    rank = position - torch.cummax(torch.where(start, position, 0), 0).values + 1
    return torch.empty_like(rank).scatter_(0, order, rank)
