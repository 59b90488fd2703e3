r"""LambdaLoss (Wang, Li, Golbandi, Bendersky & Najork, CIKM 2018) on the metric's own NDCG.

The pair weights use this library's gain, discount, cutoff and exact IDCG@k, so the NDCG whose
bound is optimised is the NDCG :func:`torch_ndcg.ndcg` reports. The ranks in the weights are the
current ranks by score (ties by index), constants of the backward as in the paper.
"""

from __future__ import annotations

import math
import torch
import torch.nn.functional as F
from torch import Tensor

from .. import definitions as d
from ..options import (
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    DEFAULT_IMPL,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_REDUCTION,
    DEFAULT_WEIGHTING,
    LossEmpty,
    PairImpl,
    Reduction,
    Weighting,
)
from ..validation import names_arguments
from . import common
from .layout import flat_call
from .options import DEFAULT_MU, DEFAULT_SIGMA, LambdaLossOptions
from . import pair_weights
from .pairwise import (
    PairTerms,
    check_scale,
    pair_counts,
    pair_keys,
    pair_sum,
    preferred,
    score_order,
    weight_items,
    weighted_terms,
)


# The paper's schemes as they always ran here: their weights built straight from the positions
# in score order (the same values as their pair_weights functions, in fewer operations).
SCHEMES = ("ndcg_loss2pp", "ndcg_loss2", "lambdarank", "none")


def rank_weights(weighting: str, mu: float, at_rank: Tensor, rows: slice, cols: slice) -> Tensor:
    """``[1, rows, cols]`` discount part of the weights for ranks ``i`` (rows) and ``j`` (cols).

    It depends on the ranks only, not on the list, so it is built once per block for the batch.
    """
    i = torch.arange(rows.start, rows.stop, device=at_rank.device)[:, None]
    j = torch.arange(cols.start, cols.stop, device=at_rank.device)[None, :]
    w = torch.zeros((), dtype=at_rank.dtype, device=at_rank.device)
    if weighting != "lambdarank":
        # δ_ij = |D(|i − j|) − D(|i − j| + 1)|, 0 on the diagonal: one gather from the table of
        # δ by gap (two gathers with shifted indices miscompile under Inductor's dynamic shapes).
        deltas = torch.cat([w[None], (at_rank[:-1] - at_rank[1:]).abs()])
        w = deltas[(i - j).abs()]
        w = w * mu if weighting == "ndcg_loss2pp" else w
    if weighting != "ndcg_loss2":
        w = w + (at_rank[i] - at_rank[j]).abs()
    return w[None]


@names_arguments
def lambda_loss(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff = None,
    *,
    mask: Tensor | None = None,
    indexes: Tensor | None = None,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    weighting: Weighting = DEFAULT_WEIGHTING,
    sigma: float = DEFAULT_SIGMA,
    mu: float = DEFAULT_MU,
    empty: LossEmpty = DEFAULT_LOSS_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    impl: PairImpl = DEFAULT_IMPL,
    validate: bool = True,
) -> Tensor:
    r"""LambdaLoss (Wang et al., "The LambdaLoss Framework for Ranking Metric Optimization", CIKM 2018).

    Per list, over the pairs :math:`rel_i > rel_j` of real items whose current ranks
    :math:`r_i, r_j` (by score) are both :math:`\le k`:

    .. math:: L = -\sum_{i,j} w_{ij} \log_2 \sigma\big(\sigma_s (s_i - s_j)\big),
              \qquad G_i = \frac{\mathrm{gain}(rel_i)}{\mathrm{IDCG@k}},\quad D(r) = \mathrm{discount}(r)

    with the weighting schemes of the paper (``|·|`` absolute values):

    * ``"lambdarank"``: :math:`w_{ij} = |G_i - G_j|\,|D(r_i) - D(r_j)|`
    * ``"ndcg_loss2"``: :math:`w_{ij} = |G_i - G_j|\,\delta_{ij}`,
      :math:`\delta_{ij} = |D(|r_i - r_j|) - D(|r_i - r_j| + 1)|`
    * ``"ndcg_loss2pp"`` (NDCG-Loss2++, the paper's best): :math:`\mu\,w^{\rm Loss2} + w^{\rm LambdaRank}`
    * ``"ndcg_loss1"``: :math:`w_{ij} = G_i\,D(r_i)`, over every ordered pair of real items in
      the top k (``i = j`` included), as the paper's NDCG-Loss1
    * ``"none"``: :math:`w_{ij} = 1` (RankNet's loss in bits, summed)

    or any other weight of :mod:`torch_ndcg.pair_weights` (a name or a function).

    ``D`` is ``discount`` (``1/log2(1 + r)`` by default) and IDCG@k is the metric's exact one.
    With ``gain="exp2"`` and ``reduction="sum"`` this is allRank's ``lambdaLoss`` (``k``,
    ``sigma``, ``mu`` alike), except that allRank clamps the sigmoid at 1e-10 (its gradient
    vanishes beyond a score gap of ~23/σ; here it does not). sentence-transformers'
    ``LambdaLoss`` (``k=None``) is this with ``gain="exp2"`` and ``reduction="sum"`` divided
    by the batch's number of pairs (every scheme's pairs as here; ``NDCGLoss1Scheme``: the
    squares of the lists' lengths); with a cutoff it keeps the pairs with either item in the
    top k, this loss those with both.

    Args:
        scores, relevance, k, indexes, mask, gain, discount, validate: as in :func:`torch_ndcg.ndcg`
            (``k`` is one cutoff or ``None``).
        weighting: one of the schemes above, another name of
            :data:`torch_ndcg.pair_weights.NAMED` or a function of a
            :class:`torch_ndcg.pair_weights.Pairs`.
        sigma: σ_s > 0, the slope of the logistic.
        mu: μ ≥ 0, the weight of NDCG-Loss2 in NDCG-Loss2++.
        empty: a list with nothing relevant (IDCG = 0), fewer than two real items or no pair of
            different labels: ``"skip"`` (default), ``"zero"``, ``"keep"`` (its sum, 0) or ``"error"``.
        reduction: over lists: ``"mean"`` (default), ``"sum"`` (allRank's) or ``"none"``.
        impl: as in :func:`torch_ndcg.ranknet_loss`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores = torch.tensor([[0.0, 2.0, 1.0]], requires_grad=True)
        >>> loss = tn.lambda_loss(scores, torch.tensor([[2, 0, 1]]), k=3)
        >>> round(loss.item(), 4)
        9.8962
        >>> loss.backward(); bool(scores.grad[0, 0] < 0 < scores.grad[0, 1])
        True
    """
    if indexes is not None:  # flat items: the same lists, grouped by length (losses/layout.py)
        return flat_call(lambda_loss, locals())
    LambdaLossOptions(
        k=k, gain=gain, discount=discount, weighting=weighting, sigma=sigma, mu=mu, impl=impl, empty=empty,
        reduction=reduction, validate=validate,
    )  # checks every option, before any work
    lists = common.prepare(scores, relevance, k, mask, gain, discount, validate)
    check_scale("sigma", sigma, lists.scores.dtype)
    check_scale("mu", mu, lists.scores.dtype)
    # In score order the ranks are positions: a cutoff keeps only the first k columns.
    order = score_order(lists.scores, lists.valid)
    depth = lists.length if lists.cutoff is None else min(lists.cutoff, lists.length)
    top = order[:, :depth]
    valid = lists.valid.gather(-1, top)
    gains = lists.gains.gather(-1, top)
    every = False
    if isinstance(weighting, str) and weighting in SCHEMES:
        terms = _scheme_terms(weighting, float(mu), lists, gains, valid, depth, discount)
    else:
        weight = pair_weights.resolve(weighting, float(mu))
        items = weight_items(lists, relevance, top, discount, in_score_order=True)
        every = pair_weights.every_pair(weight)
        keys = (valid,) if every else pair_keys(gains, valid)
        terms = weighted_terms(weight, items, keys, None, F.softplus, torch.sigmoid)
    # σ scales the N scores once, and the change to bits the B sums, not every pair.
    nats = pair_sum(lists.scores.gather(-1, top) * float(sigma), terms, impl)
    values = nats / math.log(2)
    is_empty = common.nothing_to_rank(lists)
    if not every:  # (every pair of real items: a list with a relevant one has pairs)
        is_empty = is_empty | (pair_counts(lists) == 0)
    return common.finish_loss(values, is_empty, lists.batch_shape, empty, reduction)


def _scheme_terms(
    weighting: str, mu: float, lists: common.LossLists, gains: Tensor, valid: Tensor, depth: int, discount: d.Discount
) -> PairTerms:
    """One of :data:`SCHEMES` on the lists' top ``depth`` items in score order (``gains`` and
    ``valid`` taken in that order): the discount part of every weight is one ``[block, depth]``
    matrix for the whole batch."""
    high, low = pair_keys(gains, valid)
    if weighting != "none":
        # |G_i − G_j| over the preferred pairs is relu(G_i − G_j), with padding never below.
        idcg = torch.where(lists.idcg == 0, torch.ones_like(lists.idcg), lists.idcg)[:, None]
        high, low = gains.masked_fill(~valid, 0.0) / idcg, gains.masked_fill(~valid, torch.inf) / idcg
        at_rank = d.discounts(depth + 1, discount, lists.scores.dtype, lists.scores.device)  # D(1) … D(depth + 1)

    def weight(rows: slice, cols: slice, high: Tensor, low: Tensor) -> Tensor:
        if weighting == "none":
            return preferred(high, low, rows, cols).to(high.dtype)
        gain_gap = (high[:, rows, None] - low[:, None, cols]).clamp(min=0)
        return gain_gap * rank_weights(weighting, mu, at_rank, rows, cols)

    return PairTerms(weight, (high, low), F.softplus, torch.sigmoid)
