r"""The one input of every sampled loss: each query's positives and the negatives sampled for it.

A query ``b`` comes with

* ``positive_scores[b]``: the scores of its ``P`` positives (``[B]`` is ``P = 1``);
* ``negative_scores[b]``: the scores of ``m`` negatives drawn for it (``[B, m]``), or one set
  drawn for the whole batch (``[m]``, shared);
* ``negative_log_q``: for each negative, the log-probability ``log q_j`` that one draw of the
  sampler returns it (``[m]`` or ``[B, m]``; ``None``: no sampling correction);
* ``positive_log_q``: the same for the positives, when they too were drawn by the sampler (the
  in-batch layout, where a query's positive is an item of the batch); ``None``: not corrected;
* ``positive_mask`` / ``negative_mask``: ``True`` for a real positive / negative, ``False`` for
  padding, and for an *accidental hit* (a drawn negative that is a positive of the query), which
  must not be pushed down;
* ``positive_relevance``: the positives' labels, for the gains of :func:`sampled_ndcg_loss`
  (``None``: relevance 1).

The logQ correction (Bengio & Senécal 2008; Yi et al., RecSys 2019) replaces each corrected
score ``s_j`` by ``s_j − log(m·q_j)``: ``m·q_j`` is the expected number of times ``m`` draws
return item ``j``, so ``Σ_j exp(s_j − log(m·q_j))`` over the drawn negatives is an unbiased
estimate of ``Σ exp(s)`` over the whole catalogue. Subtract, never add: adding rewards the
sampler's favourites (popular items) twice.

``SampledLists`` is a ``NamedTuple``, so ``torch.compile``, ``torch.export`` and ``torch.func``
see its tensors. :meth:`SampledLists.from_table` and :meth:`SampledLists.in_batch` build it from
the two common layouts.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from ...registered_checks import register_check
from ...validation import check_ids, check_tensor


class SampledLists(NamedTuple):
    """Each query's positives and sampled negatives (module docstring: shapes and meaning).

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import SampledLists, sampled_softmax_loss
        >>> lists = SampledLists(torch.tensor([2.0, 1.0]), torch.tensor([[0.0, 1.0], [3.0, 0.0]]))
        >>> round(sampled_softmax_loss(lists).item(), 4)
        1.2887
    """

    positive_scores: Tensor
    negative_scores: Tensor
    negative_log_q: Tensor | None = None
    positive_log_q: Tensor | None = None
    positive_mask: Tensor | None = None
    negative_mask: Tensor | None = None
    positive_relevance: Tensor | None = None

    @staticmethod
    def from_table(
        scores: Tensor,
        *,
        log_q: Tensor | None = None,
        ids: Tensor | None = None,
        correct_positive: bool = False,
    ) -> SampledLists:
        """A ``[B, 1 + m]`` table: column 0 the positive, columns ``1..m`` the sampled negatives.

        Args:
            scores: ``[B, 1 + m]`` scores.
            log_q: ``[1 + m]`` or ``[B, 1 + m]`` log sampling probabilities of the table's
                items (column 0 used only with ``correct_positive``).
            ids: ``[B, 1 + m]`` item ids: a negative with the positive's id is an accidental hit.
            correct_positive: subtract ``log(m·q)`` from the positive too (Yi et al.'s in-batch
                rule, for a positive that was itself drawn by the sampler).

        Example:
            >>> import torch
            >>> lists = SampledLists.from_table(torch.zeros(2, 4), ids=torch.tensor([[5, 1, 5, 2], [3, 4, 6, 7]]))
            >>> lists.negative_mask
            tensor([[ True, False,  True],
                    [ True,  True,  True]])
        """
        check_tensor("scores", scores)
        if scores.dim() != 2 or scores.shape[1] < 2:
            raise ValueError(f"scores must be a [B, 1 + m] table with m ≥ 1 negatives, got shape {tuple(scores.shape)}")
        negative_mask = None
        if ids is not None:
            check_tensor("ids", ids)
            check_ids("ids", ids)
            if ids.shape != scores.shape:
                raise ValueError(f"ids must have the scores' shape {tuple(scores.shape)}, got {tuple(ids.shape)}")
            negative_mask = ids[:, 1:] != ids[:, :1]
        negative_log_q = positive_log_q = None
        if log_q is not None:
            check_tensor("log_q", log_q)
            if log_q.shape not in (scores.shape, scores.shape[1:]):
                raise ValueError(
                    f"log_q must have shape [1 + m] = {tuple(scores.shape[1:])} or the scores' {tuple(scores.shape)}, "
                    f"got {tuple(log_q.shape)}"
                )
            negative_log_q = log_q[..., 1:]
            if correct_positive:
                positive_log_q = log_q[..., 0].expand(scores.shape[0])
        return SampledLists(
            scores[:, 0], scores[:, 1:], negative_log_q=negative_log_q, positive_log_q=positive_log_q,
            negative_mask=negative_mask,
        )  # fmt: skip

    @staticmethod
    def in_batch(
        queries: Tensor,
        items: Tensor,
        *,
        item_ids: Tensor | None = None,
        log_q: Tensor | None = None,
        offset: int = 0,
    ) -> SampledLists:
        """In-batch negatives: query ``i`` of ``[B, D]`` ``queries`` has item ``offset + i`` of
        ``[B', D]`` ``items`` (``B' ≥ offset + B``) as its positive and every other item as a negative.

        Scores are dot products (normalise the embeddings first for cosine similarity). Every
        item is a column of ``negative_scores`` (``[B, B']``); the query's own positive is masked
        out there, and so is any item with the positive's id (``item_ids``, ``[B']``: the same
        item twice in a batch is an accidental hit, not a negative). ``log_q`` (``[B']``): the
        log-probability that one draw of the batch is each item (its in-batch popularity, Yi et
        al. 2019), subtracted from the positives' scores too, since they were drawn likewise.
        ``offset``: where this rank's items start in ``items`` gathered across ranks
        (:func:`gather_negatives`).

        Example:
            >>> import torch
            >>> q = torch.eye(2); lists = SampledLists.in_batch(q, q)
            >>> lists.positive_scores, lists.negative_mask
            (tensor([1., 1.]), tensor([[False,  True],
                    [ True, False]]))
        """
        check_tensor("queries", queries)
        check_tensor("items", items)
        if queries.dim() != 2 or items.dim() != 2 or queries.shape[1] != items.shape[1]:
            raise ValueError(
                f"queries must be [B, D] and items [B', D] with the same D, got {tuple(queries.shape)} and {tuple(items.shape)}"
            )
        batch = queries.shape[0]
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0 or offset + batch > items.shape[0]:
            raise ValueError(
                f"offset must be an int with 0 ≤ offset and offset + B ≤ B' (B = {batch}, B' = {items.shape[0]}), got {offset!r}"
            )
        scores = queries @ items.T
        columns = torch.arange(items.shape[0], device=items.device)
        positive_columns = torch.arange(offset, offset + batch, device=items.device)
        negative_mask = columns[None, :] != positive_columns[:, None]
        if item_ids is not None:
            check_tensor("item_ids", item_ids)
            check_ids("item_ids", item_ids)
            if item_ids.shape != items.shape[:1]:
                raise ValueError(f"item_ids must have shape [B'] = {tuple(items.shape[:1])}, got {tuple(item_ids.shape)}")
            negative_mask = item_ids[None, :] != item_ids[positive_columns][:, None]
        positive_log_q = None
        if log_q is not None:
            check_tensor("log_q", log_q)
            if log_q.shape != items.shape[:1]:
                raise ValueError(f"log_q must have shape [B'] = {tuple(items.shape[:1])}, got {tuple(log_q.shape)}")
            positive_log_q = log_q[positive_columns]
        positive_scores = scores.gather(1, positive_columns[:, None])[:, 0]
        return SampledLists(positive_scores, scores, negative_log_q=log_q, positive_log_q=positive_log_q,
                            negative_mask=negative_mask)  # fmt: skip


class Checked(NamedTuple):
    """:class:`SampledLists` checked and broadcast to ``[B, P]`` positives and ``[B, m]`` negatives,
    masks filled in, one float dtype; the logQ correction as log importance weights."""

    positives: Tensor  # [B, P] scores as given
    negatives: Tensor  # [B, m] (a shared [m] broadcast)
    positive_mask: Tensor  # [B, P] bool
    negative_mask: Tensor  # [B, m] bool
    relevance: Tensor  # [B, P] in the scores' dtype (1 where none was given)
    negative_log_weights: Tensor | None  # [B, m]: −log(m·q_j); None: no correction
    positive_log_weights: Tensor | None  # [B, P]: −log(m·q_p); None: no correction

    @property
    def count(self) -> int:
        """``m``, the number of draws per query."""
        return self.negatives.shape[-1]


def _check_shape(name: str, tensor: Tensor, allowed: tuple[torch.Size, ...]) -> None:
    check_tensor(name, tensor)
    if tensor.shape not in allowed:
        what = " or ".join(str(tuple(shape)) for shape in allowed)
        raise ValueError(f"{name} must have shape {what} (the scores' [B, P] or [B] / [B, m] or [m]), got {tuple(tensor.shape)}")


def _check_mask(name: str, mask: Tensor, allowed: tuple[torch.Size, ...]) -> None:
    _check_shape(name, mask, allowed)
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor (True = real, False = padding or accidental hit), got {mask.dtype}")


def _check_values(
    positives: Tensor, negatives: Tensor, negative_log_q: Tensor, positive_log_q: Tensor, positive_mask: Tensor,
    negative_mask: Tensor,
) -> None:
    """The real entries' values (padding and accidental hits may hold anything); every tensor
    ``[B, P]`` or ``[B, m]``, a log q of 0 where none was given."""
    for name, values, mask in (("positive_scores", positives, positive_mask), ("negative_scores", negatives, negative_mask)):
        if not bool(torch.where(mask, torch.isfinite(values), True).all()):
            raise ValueError(f"{name} must be finite where its mask is True (a NaN or ±inf score has no gradient to follow)")
    # 1/q must stay finite in the compute dtype: the importance weights 1/(m·q) of m draws sum to it.
    lowest = 1 - math.log(torch.finfo(positives.dtype).max)
    for name, log_q, mask in (("negative_log_q", negative_log_q, negative_mask), ("positive_log_q", positive_log_q, positive_mask)):
        if not bool(torch.where(mask, (log_q <= 0) & (log_q >= lowest), True).all()):
            real = log_q[mask & ~((log_q <= 0) & (log_q >= lowest))]
            raise ValueError(
                f"{name} must hold log-probabilities (≤ 0, and ≥ {lowest:.4g} so that 1/q is finite in "
                f"{positives.dtype}), got {real[0].item():.4g}; pass log(q), not q or −log(q)"
            )


#: ``positives`` once the lists' values pass :func:`_check_values` (see :func:`register_check`).
_validated = register_check(
    "check_sampled_lists",
    "Tensor positives, Tensor negatives, Tensor negative_log_q, Tensor positive_log_q, Tensor positive_mask, "
    "Tensor negative_mask",
    _check_values,
)


def check(lists: object, *, validate: bool) -> Checked:
    """Shapes, dtypes and (with ``validate``) values of ``lists``, once, at the loss's boundary."""
    if not isinstance(lists, SampledLists):
        raise TypeError(
            f"lists must be a SampledLists (SampledLists.from_table / SampledLists.in_batch build one), "
            f"got {type(lists).__name__}"
        )
    positives, negatives = lists.positive_scores, lists.negative_scores
    check_tensor("positive_scores", positives)
    check_tensor("negative_scores", negatives)
    for name, tensor in (("positive_scores", positives), ("negative_scores", negatives)):
        if not tensor.is_floating_point():
            raise TypeError(f"{name} must be a floating point tensor (the loss's gradient flows into it), got {tensor.dtype}")
    if positives.dim() not in (1, 2) or positives.shape[0] == 0:
        raise ValueError(f"positive_scores must be [B] or [B, P] with B ≥ 1, got {tuple(positives.shape)}")
    if positives.dim() == 1:
        positives = positives[:, None]
    batch, count = positives.shape
    if negatives.dim() not in (1, 2) or negatives.shape[-1] == 0 or (negatives.dim() == 2 and negatives.shape[0] != batch):
        raise ValueError(
            f"negative_scores must be [B, m] (B = {batch}) or a shared [m], with m ≥ 1, got {tuple(negatives.shape)}"
        )
    m = negatives.shape[-1]
    per_row, shared = torch.Size((batch, m)), torch.Size((m,))
    negative_shapes = (per_row, shared)
    positive_shapes = (torch.Size((batch, count)),) + ((torch.Size((batch,)),) if count == 1 else ())
    if lists.negative_log_q is not None:
        _check_shape("negative_log_q", lists.negative_log_q, negative_shapes)
    if lists.positive_log_q is not None:
        _check_shape("positive_log_q", lists.positive_log_q, positive_shapes)
    if lists.negative_mask is not None:
        _check_mask("negative_mask", lists.negative_mask, negative_shapes)
    if lists.positive_mask is not None:
        _check_mask("positive_mask", lists.positive_mask, positive_shapes)
    if lists.positive_relevance is not None:
        _check_shape("positive_relevance", lists.positive_relevance, positive_shapes)
    dtype = torch.float64 if torch.float64 in (positives.dtype, negatives.dtype) else torch.float32
    real = torch.ones((), dtype=torch.bool, device=positives.device)
    positive_mask = real.expand(batch, count) if lists.positive_mask is None else lists.positive_mask.reshape(batch, count)
    negative_mask = real.expand(batch, m) if lists.negative_mask is None else lists.negative_mask.expand(batch, m)
    zero = torch.zeros((), dtype=dtype, device=positives.device)
    negative_log_q = zero.expand(batch, m) if lists.negative_log_q is None else lists.negative_log_q.to(dtype).expand(batch, m)
    positive_log_q = zero.expand(batch, count) if lists.positive_log_q is None else lists.positive_log_q.to(dtype).reshape(batch, count)
    positives, negatives = positives.to(dtype), negatives.to(dtype).expand(batch, m)
    if validate:
        positives = _validated(positives, negatives.detach(), negative_log_q, positive_log_q, positive_mask, negative_mask)
    # where(), not a product: padding may hold NaN or inf; it gets a finite 0 and exactly zero gradient.
    positives = torch.where(positive_mask, positives, zero)
    negatives = torch.where(negative_mask, negatives, zero)
    log_m = math.log(m)
    negative_log_weights = positive_log_weights = None
    if lists.negative_log_q is not None:
        negative_log_weights = torch.where(negative_mask, negative_log_q + log_m, zero).neg()
    if lists.positive_log_q is not None:
        positive_log_weights = torch.where(positive_mask, positive_log_q + log_m, zero).neg()
    relevance = (
        torch.ones((), dtype=dtype, device=positives.device).expand(batch, count)
        if lists.positive_relevance is None
        else torch.where(positive_mask, lists.positive_relevance.to(dtype).reshape(batch, count), zero)
    )
    return Checked(positives, negatives, positive_mask, negative_mask, relevance, negative_log_weights, positive_log_weights)
