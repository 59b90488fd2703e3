r"""Pairwise losses: RankNet / pairwise logistic and pairwise hinge, and the pair machinery that
LambdaLoss shares.

Every pairwise loss here is :math:`\sum_{i,j} w_{ij}\,\phi(s_j - s_i)` per list (``i`` the
preferred item), with weights ``w`` built block by block from per-item vectors (labels, ranks,
gains) and ``φ`` elementwise.
The dense form builds the ``[B, N, N]`` matrices under autograd; :class:`StreamingPairSum`
holds one ``[B, block, N]`` slab at a time and recomputes it in its backward, so memory is
O(B·N) plus one slab whatever N is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..options import (
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    DEFAULT_IMPL,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_PAIR_WEIGHTING,
    DEFAULT_REDUCTION,
    LossEmpty,
    PairImpl,
    PairWeighting,
    Reduction,
)
from ..validation import names_arguments
from .. import definitions as d
from . import common, pair_weights
from .layout import flat_call
from .options import DEFAULT_MARGIN, DEFAULT_SIGMA, PairwiseHingeOptions, RankNetOptions
from .transforms import ListsFunction, vmap_over_lists

# Elements per [B, block, N] slab of the streaming path: 2^22 float64 elements are 32 MiB, and a
# block holds a handful of such temporaries (B = 4, N = 4096: 256 rows per block).
SLAB_ELEMENTS = 2**22


@dataclass(frozen=True)
class PairTerms:
    """``weight(rows, cols, *vectors)`` → ``[B, rows, cols]`` pair weights (0 for non-pairs),
    built from the per-list tensors ``vectors`` (``[B, ...]`` each, handed to the weight as
    arguments, so that the streaming Function and torch.func see them); ``phi`` and its
    derivative ``slope`` act on ``s_j − s_i``, how far the lesser item j is scored above i.
    ``triangular``: items are sorted so that a preferred item always comes first, and a block of
    rows needs only the columns from its first row on (half the pairs)."""

    weight: Callable[..., Tensor]
    vectors: tuple[Tensor, ...]
    phi: Callable[[Tensor], Tensor]
    slope: Callable[[Tensor], Tensor]
    triangular: bool = False


def _differences(scores: Tensor, rows: slice, cols: slice) -> Tensor:
    return scores[:, None, cols] - scores[:, rows, None]


def _columns(terms: PairTerms, rows: slice, length: int) -> slice:
    return slice(rows.start if terms.triangular else 0, length)


# A triangular sum in this many blocks of rows skips ~7/16 of the pairs; each block costs only a
# dozen operator calls, so this pays from lists of about 64 items on.
TRIANGULAR_BLOCKS = 8


def row_blocks(batch: int, length: int, triangular: bool = False) -> list[slice]:
    rows = max(1, min(length, SLAB_ELEMENTS // max(1, batch * length)))
    if triangular and length >= 8 * TRIANGULAR_BLOCKS:
        rows = min(rows, -(-length // TRIANGULAR_BLOCKS))
    return [slice(start, min(start + rows, length)) for start in range(0, length, rows)]


def dense_pair_sum(scores: Tensor, terms: PairTerms, vectors: tuple[Tensor, ...] | None = None) -> Tensor:
    """``[B]`` per-list sums from the full ``[B, N, N]`` matrices, differentiated by autograd
    (the weights from ``vectors``, by default the terms' own)."""
    every = slice(0, scores.shape[-1])
    weights = terms.weight(every, every, *(terms.vectors if vectors is None else vectors))
    return (weights * terms.phi(_differences(scores, every, every))).sum((-2, -1))


class StreamingPairSum(ListsFunction):
    """The same sums one ``[B, block, N]`` slab at a time; the backward recomputes each slab.
    The weights' vectors come as arguments (``terms.vectors`` is not read here)."""

    @staticmethod
    def forward(scores: Tensor, terms: PairTerms, *vectors: Tensor) -> Tensor:
        total = scores.new_zeros(scores.shape[0])
        for rows in row_blocks(*scores.shape, terms.triangular):
            cols = _columns(terms, rows, scores.shape[-1])
            # Out of place: torch.compile (torch 2.11) gave a result summed in place into a fresh
            # tensor no gradient at all.
            weight = terms.weight(rows, cols, *vectors)
            total = total + terms.phi(_differences(scores, rows, cols)).mul_(weight).sum((-2, -1))
        return total

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        scores, terms, *vectors = inputs
        ctx.save_for_backward(scores, *vectors)
        ctx.terms = terms

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(StreamingPairSum.apply, info, in_dims, args)

    @staticmethod
    def backward(ctx, grad: Tensor):
        scores, *vectors = ctx.saved_tensors
        terms, unused = ctx.terms, (None,) * (1 + len(vectors))
        if torch.is_grad_enabled():  # create_graph=True (and torch.func): the dense reference's graph
            return common.second_order(lambda x: dense_pair_sum(x, terms, tuple(vectors)), scores, grad), *unused
        grad_scores = torch.zeros_like(scores)
        for rows in row_blocks(*scores.shape, terms.triangular):
            cols = _columns(terms, rows, scores.shape[-1])
            slab = terms.slope(_differences(scores, rows, cols)).mul_(terms.weight(rows, cols, *vectors))
            grad_scores[:, rows] -= slab.sum(-1)  # ∂(s_j − s_i)/∂s_i = −1
            grad_scores[:, cols] += slab.sum(-2)  # ∂(s_j − s_i)/∂s_j = 1
        return grad_scores * grad[:, None], *unused


def pair_sum(scores: Tensor, terms: PairTerms, impl: str) -> Tensor:
    """``"auto"``: dense while the ``[B, N, N]`` matrices are small, streaming beyond."""
    if impl == "auto":
        impl = common.auto_impl(scores.shape[0], scores.shape[-1], scores, triton=False)
    if impl == "dense":
        return dense_pair_sum(scores, terms)
    return StreamingPairSum.apply(scores, terms, *terms.vectors)


def pair_keys(gains: Tensor, valid: Tensor) -> tuple[Tensor, Tensor]:
    """Gains as a preferred item (padding −inf) and as a lesser one (padding +inf): one comparison
    ``high_i > low_j`` then selects exactly the real pairs with ``gain_i > gain_j``."""
    return gains.masked_fill(~valid, -torch.inf), gains.masked_fill(~valid, torch.inf)


def preferred(high: Tensor, low: Tensor, rows: slice, cols: slice) -> Tensor:
    """``[B, rows, cols]``: item i (a row) has a larger gain than item j, both real."""
    return high[:, rows, None] > low[:, None, cols]


def check_scale(name: str, value: float, dtype: torch.dtype) -> None:
    """A multiplier of the scores (σ, the margin, μ) or a divisor (a temperature), finite as the
    options checked, must stay finite in the compute ``dtype`` too: one that overflows there would
    make every loss inf or NaN, or fail to convert (a comparison, which a symbolic float under
    ``torch.compile(dynamic=True)`` accepts)."""
    if not abs(value) <= torch.finfo(dtype).max:
        raise ValueError(f"{name} must be finite in {dtype} (at most {torch.finfo(dtype).max:.3g}), got {value!r}")


def _preferred_per_pair(rows: slice, cols: slice, high: Tensor, low: Tensor, per_pair: Tensor) -> Tensor:
    return preferred(high, low, rows, cols) * per_pair


def pair_counts(lists: common.LossLists) -> Tensor:
    """``[B]`` number of real pairs with different gains, in O(N log N) (no N × N matrix)."""
    key = torch.where(lists.valid, lists.gains, torch.full_like(lists.gains, torch.inf))
    below = torch.searchsorted(key.sort(dim=-1).values.contiguous(), lists.gains.contiguous())  # real items with a smaller gain
    return torch.where(lists.valid, below, torch.zeros_like(below)).sum(-1)


def score_order(scores: Tensor, valid: Tensor) -> Tensor:
    """``[B, N]`` indices by decreasing score, ties by index, padding last: position p holds rank p + 1."""
    key = torch.where(valid, scores.detach(), torch.full_like(scores, -torch.inf))
    return key.sort(dim=-1, descending=True, stable=True).indices


def weight_items(
    lists: common.LossLists, relevance: Tensor, order: Tensor, discount: d.Discount, *, in_score_order: bool
) -> pair_weights.Items:
    """What the pair weights read of each item, taken in ``order`` (``in_score_order``: ``order``
    sorts by score, so the ranks are positions). ``relevance`` is the loss's argument, checked."""
    dtype, n = lists.scores.dtype, lists.length
    labels = torch.where(lists.valid, relevance.reshape(-1, n).to(dtype), torch.zeros((), dtype=dtype))
    idcg = torch.where(lists.idcg == 0, torch.ones_like(lists.idcg), lists.idcg)[:, None]
    ranks = None
    if not in_score_order:
        by_score = score_order(lists.scores, lists.valid)
        positions = torch.arange(1, n + 1, device=by_score.device).expand_as(by_score)
        ranks = torch.empty_like(by_score).scatter_(-1, by_score, positions).gather(-1, order)
    discounts = d.discounts(n + 1, discount, dtype, lists.scores.device)
    gains = (lists.gains / idcg).gather(-1, order)
    return pair_weights.Items(labels.gather(-1, order), gains, ranks, lists.cutoff, discounts)


def weighted_terms(
    weight: pair_weights.PairWeight,
    items: pair_weights.Items,
    pair_keys_or_valid: tuple[Tensor, ...],
    factor: Tensor | None,
    phi: Callable[[Tensor], Tensor],
    slope: Callable[[Tensor], Tensor],
) -> PairTerms:
    """The :class:`PairTerms` of ``weight`` on ``items``: over the preferred pairs when
    ``pair_keys_or_valid`` is ``(high, low)`` (:func:`pair_keys`, items by decreasing gain, so
    triangular), over every ordered pair of real items when it is ``(valid,)``; ``factor``: a
    ``[B, 1, 1]`` factor of every pair (a mean's ``1/|P|``), or ``None``."""
    every = len(pair_keys_or_valid) == 1
    extra = () if factor is None else (factor,)

    def block(rows: slice, cols: slice, *vectors: Tensor) -> Tensor:
        keys, rest = vectors[: len(pair_keys_or_valid)], vectors[len(pair_keys_or_valid) :]
        if factor is not None:
            per_pair, rest = rest[0], rest[1:]
        shape = (keys[0].shape[0], rows.stop - rows.start, cols.stop - cols.start)
        if every:
            pairs = keys[0][:, rows, None] & keys[0][:, None, cols]
        else:
            pairs = preferred(keys[0], keys[1], rows, cols)
        w = pair_weights.weigh(weight, items.block(rows, cols, *rest), shape)
        w = torch.where(pairs, w, torch.zeros((), dtype=w.dtype, device=w.device))
        return w * per_pair if factor is not None else w

    return PairTerms(block, (*pair_keys_or_valid, *extra, *items.vectors()), phi, slope, triangular=not every)


def _mean_over_pairs(
    scores: Tensor,
    relevance: Tensor,
    mask: Tensor | None,
    scale: float,
    phi: Callable[[Tensor], Tensor],
    slope: Callable[[Tensor], Tensor],
    options: RankNetOptions | PairwiseHingeOptions,
    scale_options: dict[str, float],
) -> Tensor:
    """The mean of ``w_ij · phi(scale·(s_i − s_j))`` over the pairs ``rel_i > rel_j`` of each list
    (``slope`` is phi's derivative; ``w`` the options' weighting, 1 for ``"none"``), for a loss
    called with the checked ``options``; ``scale_options`` are its numeric options, checked
    against the compute dtype."""
    empty, reduction, impl = options.empty, options.reduction, options.impl
    weight = pair_weights.resolve(options.weighting)
    if weight is None:  # no metric read: neither IDCG nor ranks
        lists = common.prepare(scores, relevance, None, mask, "linear", "log2", options.validate, ideal=False)
    else:
        lists = common.prepare(scores, relevance, options.k, mask, options.gain, options.discount, options.validate)
    for name, value in scale_options.items():
        check_scale(name, value, lists.scores.dtype)
    every = weight is not None and pair_weights.every_pair(weight)
    counts = lists.valid.sum(-1) ** 2 if every else pair_counts(lists)
    per_pair = 1 / counts.clamp(min=1).to(lists.scores.dtype)[:, None, None]
    # By decreasing gain, padding last, a preferred item always precedes the other.
    high, low = pair_keys(lists.gains, lists.valid)
    order = high.sort(dim=-1, descending=True).indices
    high, low = high.gather(-1, order), low.gather(-1, order)
    if weight is None:
        terms = PairTerms(_preferred_per_pair, (high, low, per_pair), phi, slope, triangular=True)
    else:
        items = weight_items(lists, relevance, order, options.discount, in_score_order=False)
        keys = (lists.valid.gather(-1, order),) if every else (high, low)
        terms = weighted_terms(weight, items, keys, per_pair, phi, slope)
    # The scale (RankNet's σ) multiplies the N scores once rather than every pair's difference.
    values = pair_sum(lists.scores.gather(-1, order) * scale, terms, impl)
    return common.finish_loss(values, common.nothing_to_rank(lists) | (counts == 0), lists.batch_shape, empty, reduction)


@names_arguments
def ranknet_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    sigma: float = DEFAULT_SIGMA,
    weighting: PairWeighting = DEFAULT_PAIR_WEIGHTING,
    k: d.Cutoff = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    impl: PairImpl = DEFAULT_IMPL,
    validate: bool = True,
) -> Tensor:
    r"""RankNet / pairwise logistic loss (Burges et al., "Learning to Rank using Gradient
    Descent", ICML 2005), averaged over the pairs of each list with different labels.

    .. math:: L = \frac{1}{|P|} \sum_{(i,j) \in P} w_{ij} \log\!\big(1 + e^{-\sigma (s_i - s_j)}\big),
              \qquad P = \{(i, j) : rel_i > rel_j,\ i, j \text{ real}\}

    with pair weights :math:`w_{ij}` from ``weighting`` (1 by default; LambdaRank's |ΔNDCG@k|
    with ``"lambdarank"``: see :mod:`torch_ndcg.pair_weights`). allRank's ``rankNet`` (σ = 1)
    averages over all pairs of the whole batch instead, so lists with more pairs weigh more
    there; a batch of one list is the same number. rax's ``pairwise_logistic_loss`` with a
    ``lambdaweight_fn`` is this with ``gain="exp2"`` (rax's gain), its DCG weights times the
    padded list length (rax's scaling).

    Args:
        scores, relevance, indexes, mask, validate: as in :func:`torch_ndcg.ndcg`.
        sigma: σ > 0, the slope of the logistic.
        weighting: the pair weights: ``"none"`` (every pair 1), a name of
            :data:`torch_ndcg.pair_weights.NAMED` (``"label_difference"``, ``"lambdarank"``,
            ``"dcg2"``, ``"ndcg_loss1"``, ``"ndcg_loss2"``, ``"ndcg_loss2pp"``) or a function of a
            :class:`torch_ndcg.pair_weights.Pairs` (its signature is documented there).
        k, gain, discount: the cutoff, gain and discount of the NDCG@k that the weights read (as
            in :func:`torch_ndcg.ndcg`; ``k`` changes the weights, not the pairs). Unread with
            ``weighting="none"``.
        empty: a list without a pair of different labels (nothing relevant, or fewer than two
            real items): ``"skip"`` (default), ``"zero"``, ``"keep"`` (0, counted) or ``"error"``.
        reduction: over lists: ``"mean"``, ``"sum"`` or ``"none"``.
        impl: ``"dense"`` (``[B, N, N]`` under autograd), ``"streaming"`` (one ``[B, block, N]``
            slab at a time, recomputed in the backward) or ``"auto"`` (dense for small inputs).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.ranknet_loss(torch.tensor([[2.0, 0.0, 1.0]]), torch.tensor([[2, 0, 1]])).item(), 4)
        0.2512
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(ranknet_loss, locals())
    options = RankNetOptions(
        sigma=sigma, weighting=weighting, k=k, gain=gain, discount=discount, impl=impl, empty=empty,
        reduction=reduction, validate=validate,
    )
    return _mean_over_pairs(
        scores, relevance, mask, float(sigma), F.softplus, torch.sigmoid, options, {"sigma": sigma}
    )


@names_arguments
def pairwise_hinge_loss(
    scores: Tensor,
    relevance: Tensor,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    margin: float = DEFAULT_MARGIN,
    weighting: PairWeighting = DEFAULT_PAIR_WEIGHTING,
    k: d.Cutoff = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    impl: PairImpl = DEFAULT_IMPL,
    validate: bool = True,
) -> Tensor:
    r"""Pairwise hinge loss (Herbrich, Graepel & Obermayer 2000; RankSVM; rax's
    ``pairwise_hinge_loss``), averaged over the pairs of each list with different labels.

    .. math:: L = \frac{1}{|P|} \sum_{(i,j) \in P} w_{ij} \max\!\big(0,\ m - (s_i - s_j)\big),
              \qquad P = \{(i, j) : rel_i > rel_j,\ i, j \text{ real}\}

    with pair weights :math:`w_{ij}` from ``weighting`` (1 by default; see :func:`ranknet_loss`).

    Args:
        scores, relevance, indexes, mask, validate: as in :func:`torch_ndcg.ndcg`.
        margin: m > 0.
        weighting, k, gain, discount, empty, reduction, impl: as in :func:`ranknet_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> round(tn.pairwise_hinge_loss(torch.tensor([[2.0, 0.5, 1.0]]), torch.tensor([[2, 0, 1]])).item(), 4)
        0.1667
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(pairwise_hinge_loss, locals())
    options = PairwiseHingeOptions(
        margin=margin, weighting=weighting, k=k, gain=gain, discount=discount, impl=impl, empty=empty,
        reduction=reduction, validate=validate,
    )
    margin = float(margin)
    return _mean_over_pairs(
        scores, relevance, mask, 1.0,
        # relu and its slope agree at the kink (gradient 0 where s_i − s_j = m) on every path.
        lambda x: F.relu(x + margin),
        lambda x: (x > -margin).to(x.dtype),
        options,
        {"margin": margin},
    )  # fmt: skip
