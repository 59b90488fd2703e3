r"""Each query's top ``k`` items of a catalogue of embeddings, without a ``[queries × items]`` matrix.

:func:`top_k` scores the catalogue a chunk of items at a time (``queries @ chunk.T``), keeps each
chunk's top ``k`` and merges them into the running top ``k``: memory O(B·k + B·chunk + chunk·D)
whatever the catalogue's size. Its ids feed the ranked metrics (:func:`torch_ndcg.ranked.ndcg`,
the ``Ranked*`` metric classes), which score them against each query's ground truth.
"""


from typing import NamedTuple

import torch
from torch import Tensor

from .validation import check_ids, check_pad_id, check_positive, check_tensor, names_arguments

DEFAULT_CHUNK_SIZE = 4096


class TopK(NamedTuple):
    """``[B, k]`` scores (best first) and the items' row indices; ``pad_id`` and ``-inf`` where fewer
    than ``k`` items were left after the exclusions."""

    scores: Tensor
    ids: Tensor


@names_arguments
@torch.no_grad()
def top_k(
    queries: Tensor,
    items: Tensor,
    k: int,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    exclude: Tensor | None = None,
    pad_id: int = -1,
) -> TopK:
    r"""The ``k`` items of largest ``⟨query, item⟩`` for each query, scanning ``items`` in chunks.

    .. math:: \mathrm{top}_k\{\,j : \langle q_b, v_j\rangle\,\}, \quad j \notin \mathrm{exclude}_b

    Ids are row indices into ``items``. Equal scores come in an unspecified order (as
    ``torch.topk``'s). No gradient is recorded: this is evaluation.

    Args:
        queries: ``[B, D]`` query embeddings.
        items: ``[N, D]`` item embeddings.
        k: how many items per query (fewer columns when ``N < k``).
        chunk_size: items scored at once; memory is O(B·k + B·chunk_size + chunk_size·D).
        exclude: ``[B, S]`` item indices never to return for each query (the items a user has
            already seen), padded with ``pad_id``.
        pad_id: the padding id of ``exclude`` and of the result.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> items = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
        >>> found = tn.retrieval.top_k(torch.tensor([[1.0, 0.2]]), items, 2, exclude=torch.tensor([[0]]))
        >>> found.ids
        tensor([[2, 1]])
        >>> tn.ranked.ndcg(found.ids, torch.tensor([[1]]), k=2)
        tensor(0.6309)
    """
    check_tensor("queries", queries)
    check_tensor("items", items)
    if queries.dim() != 2 or items.dim() != 2 or queries.shape[1] != items.shape[1]:
        raise ValueError(
            f"queries must be [B, D] and items [N, D] with the same D, got {tuple(queries.shape)} and {tuple(items.shape)}"
        )
    if not queries.is_floating_point() or not items.is_floating_point():
        raise TypeError(f"queries and items must be floating point embeddings, got {queries.dtype} and {items.dtype}")
    check_positive("k", k, integer=True)
    check_positive("chunk_size", chunk_size, integer=True)
    pad_id = check_pad_id(pad_id)
    if exclude is not None:
        check_tensor("exclude", exclude)
        check_ids("exclude", exclude)
        if exclude.dim() != 2 or exclude.shape[0] != queries.shape[0]:
            raise ValueError(f"exclude must be [B, S] (B = {queries.shape[0]}) item indices, got {tuple(exclude.shape)}")
    dtype = torch.promote_types(queries.dtype, items.dtype)
    queries = queries.to(dtype)
    batch = queries.shape[0]
    best = queries.new_empty((batch, 0))
    best_ids = torch.empty((batch, 0), dtype=torch.long, device=queries.device)
    rows = torch.arange(batch, device=queries.device)[:, None]
    for start in range(0, items.shape[0], chunk_size):
        chunk = items[start : start + chunk_size].to(dtype)
        scores = queries @ chunk.T
        if exclude is not None:
            local = exclude - start
            inside = (local >= 0) & (local < chunk.shape[0]) & (exclude != pad_id)
            scores[rows.expand_as(local)[inside], local[inside]] = -torch.inf
        values, indices = scores.topk(min(k, chunk.shape[0]), dim=1)
        merged = torch.cat((best, values), 1)
        merged_ids = torch.cat((best_ids, indices + start), 1)
        best, order = merged.topk(min(k, merged.shape[1]), dim=1)
        best_ids = merged_ids.gather(1, order)
        del scores  # before the next chunk's scores are made: one [B, chunk] block alive, not two
    return TopK(best, best_ids.masked_fill(best == -torch.inf, pad_id))
