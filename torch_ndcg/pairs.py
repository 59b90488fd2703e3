"""Ordered-pair accuracy: the share of pairs with different labels that the scores order correctly."""

from __future__ import annotations

import torch
from torch import Tensor

from . import dense, flat
from .aggregation import apply_empty, reduce_queries
from .options import (
    DEFAULT_EMPTY,
    DEFAULT_PAIR_TIES,
    DEFAULT_REDUCTION,
    EMPTY,
    REDUCTIONS,
    TIES,
    Empty,
    Reduction,
    Ties,
    document,
)
from .validation import check_flag, check_option, names_arguments


@names_arguments
@document(
    "float32 tensor (float64 if an input is float64): a scalar, or ``[...]`` per query with "
    "``reduction=\"none\"``."
)
def ordered_pair_accuracy(
    scores: Tensor,
    relevance: Tensor,
    *,
    indexes: Tensor | None = None,
    mask: Tensor | None = None,
    ties: Ties = DEFAULT_PAIR_TIES,
    empty: Empty = DEFAULT_EMPTY,
    reduction: Reduction = DEFAULT_REDUCTION,
    sample_weight: Tensor | None = None,
    validate: bool = True,
) -> Tensor:
    r"""Ordered-pair accuracy (rax's ``opa_metric``): over the pairs of one list with
    :math:`rel_i > rel_j`, the share that the scores order the same way.

    .. math:: \mathrm{OPA} = \frac{\sum_{i,j} [rel_i > rel_j]\,[s_i > s_j]}{\sum_{i,j} [rel_i > rel_j]}

    There is no cutoff. A pair of tied scores counts as ordered wrongly by default (``ties="worst"``,
    rax's semantics); ``"best"`` counts it right, ``"average"`` half right (the expectation over both
    orders), ``"first"`` right when the more relevant item comes first in the input. A list without
    a pair of different labels is what ``empty`` decides (rax gives it 0, as ``empty="zero"``).
    Each list costs ``[N, N]`` memory: every pair is compared at once (a dense batch ``[B, N, N]``;
    the flat form pads each query to at most twice its own length, so its cost follows Σ nᵢ²).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.ordered_pair_accuracy(torch.tensor([0.9, 0.8, 0.8]), torch.tensor([0, 1, 2]))
        tensor(0.)
        >>> tn.ordered_pair_accuracy(torch.tensor([0.9, 0.8, 0.8]), torch.tensor([0, 1, 2]), ties="average")
        tensor(0.1667)
    """
    check_option("ties", ties, TIES)
    check_option("empty", empty, EMPTY)
    check_option("reduction", reduction, REDUCTIONS)
    check_flag("validate", validate)
    if indexes is not None:
        scores, relevance, indexes, _ = flat.select(scores, relevance, indexes, mask)
        right, count = _flat_pair_counts(scores, relevance, indexes, ties, validate)
    else:
        right, count = _pair_counts(scores, relevance, mask, ties, validate)
    values = apply_empty((right / count).unsqueeze(-1), (count == 0).unsqueeze(-1), empty)
    return reduce_queries(values, False, reduction, sample_weight, validate)


def _pair_counts(scores: Tensor, relevance: Tensor, mask: Tensor | None, ties: str, validate: bool
                 ) -> tuple[Tensor, Tensor]:
    """Per list of ``[..., N]``: the pairs ordered right (ties credited as ``ties`` says) and the
    pairs with different labels; ``[..., N, N]`` memory."""
    lists = dense.prepare(scores, relevance, mask, "linear", validate)
    real = lists.scores > -torch.inf  # (only padding has a -inf score here)
    pairs = (lists.relevance.unsqueeze(-1) > lists.relevance.unsqueeze(-2)) & real.unsqueeze(-1) & real.unsqueeze(-2)
    higher = lists.scores.unsqueeze(-1) - lists.scores.unsqueeze(-2)
    tied = {"worst": 0.0, "best": 1.0, "average": 0.5}.get(ties)
    if tied is None:  # "first": the earlier item of a tied pair ranks first
        n = lists.length
        earlier = torch.ones(n, n, dtype=torch.bool, device=real.device).triu(1)
        credit = torch.where(higher > 0, 1.0, torch.where((higher == 0) & earlier, 1.0, 0.0))
    else:
        credit = torch.where(higher > 0, 1.0, torch.where(higher == 0, tied, 0.0))
    count = pairs.sum((-2, -1)).to(lists.dtype)
    right = torch.where(pairs, credit.to(lists.dtype), 0.0).sum((-2, -1))
    return right, count


def _flat_pair_counts(scores: Tensor, relevance: Tensor, indexes: Tensor, ties: str, validate: bool
                      ) -> tuple[Tensor, Tensor]:
    """:func:`_pair_counts` of each query (ascending ``indexes``), with memory that follows
    Σ nᵢ² rather than queries × the longest²: queries of n items in (2ᵇ⁻¹, 2ᵇ] are padded
    together, to at most twice their length."""
    queries, query, size = torch.unique(indexes, return_inverse=True, return_counts=True)
    bucket = torch.log2(size.to(torch.float64)).ceil().long()
    right = count = None
    for b in torch.unique(bucket).tolist():
        members = torch.nonzero(bucket == b).squeeze(-1)
        items = bucket[query] == b
        rows = flat.as_rows(scores[items], relevance[items], query[items], always=True)
        part_right, part_count = _pair_counts(rows.scores, rows.relevance, rows.mask, ties, validate)
        if right is None:
            right = part_right.new_zeros(queries.shape[0])
            count = part_count.new_zeros(queries.shape[0])
        right.index_copy_(0, members, part_right)
        count.index_copy_(0, members, part_count)
    assert right is not None and count is not None, "flat.select refuses a batch without items"
    return right, count

