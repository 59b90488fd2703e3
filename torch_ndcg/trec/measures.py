"""trec_eval's measures computed by the library's metric engine: the one module that calls into it.

A run is evaluated from its **sparse slots**: only the retrieved documents that are judged
relevant (a positive gain, or relevance ≥ the threshold) change any measure here, so each becomes
one slot of a :class:`~torch_ndcg.slots.Slots` at its true 0-based rank; every other rank holds
a zero-gain non-relevant document and adds nothing. The engine's per-slot terms
(:func:`~torch_ndcg.slots.expected_gain`, :func:`~torch_ndcg.slots.precision_term`, …), its
normalisers (:func:`~torch_ndcg.dense.binary_metric`) and its NDCG normalisation
(:func:`~torch_ndcg.reduction.normalise`) then give trec_eval's numbers; a dense ``[Q, 1000]``
ranked list would spend its time on the zero slots.

Done here because the engine has no equivalent: per-query cutoffs (``Rprec`` cuts at each
query's R), ``map_cut``'s normaliser (trec_eval divides AP@k by R, the engine by min(R, k)), and
the ideal DCG from the qrels' gains (``ndcg``'s ideal uses every judged relevant document,
retrieved or not).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .. import definitions as d
from ..dense import binary_metric
from ..reduction import normalise
from ..slots import Slots, expected_gain, hit_probability

#: trec_eval's smallest per-query AP inside gm_map's logarithm.
MIN_GEO_MEAN = 1e-5


@dataclass(frozen=True)
class Judged:
    """One evaluated run, as sparse slots over ``rows`` queries (all float64)."""

    rows: int
    row: Tensor  # [T] long, query row of each slot, slots sorted by (row, rank)
    slots: Slots  # [T] one retrieved relevant document per slot, position = 0-based rank
    relevant: Tensor  # [rows, 1] R: judged documents with relevance ≥ the threshold
    retrieved: Tensor  # [rows, 1] documents the run retrieved for the query
    ideal_gains: Tensor  # [rows, M] gains of all judged documents of the query, largest first, 0-padded


def judged(
    rows: int, row: Tensor, position: Tensor, gain: Tensor, hit: Tensor,
    relevant: Tensor, retrieved: Tensor, ideal_gains: Tensor,
) -> Judged:
    """Build the slots of sorted ``(row, position)`` pairs; ``hit`` is 1.0 where relevance ≥ threshold."""
    starts = torch.searchsorted(row, torch.arange(rows, device=row.device))
    hits_so_far = torch.cumsum(hit, 0)
    before_row = torch.cat([hits_so_far.new_zeros(1), hits_so_far])[starts]
    ones = torch.ones_like(position)
    slots = Slots(
        position=position,
        group_gain=gain,
        group_size=ones,
        group_hits=hit,
        group_start=position,
        hits_before=hits_so_far - hit - before_row[row],
    )
    return Judged(rows, row, slots, relevant, retrieved, ideal_gains)


def gains(relevance: Tensor, gain: d.Gain) -> Tensor:
    """The library's gain of each judged value (float64); values ≤ 0 gain nothing, as in trec_eval."""
    relevance = relevance.to(torch.float64)
    return torch.where(relevance > 0, d.gains(relevance.clamp(min=0), gain, torch.float64), 0.0)


def _sums(j: Judged, terms: Tensor, cutoffs: tuple[float, ...]) -> Tensor:
    """``[rows, C]``: each query's sum of ``terms`` over its slots ranked above each cutoff."""
    limit = torch.tensor(cutoffs, dtype=torch.float64, device=terms.device)
    inside = (j.slots.position.unsqueeze(-1) < limit).to(terms.dtype)
    out = terms.new_zeros(j.rows, len(cutoffs))
    return out.index_add_(0, j.row, terms.unsqueeze(-1) * inside)


def ndcg(j: Judged, cutoffs: tuple[float, ...]) -> Tensor:
    """``[rows, C]`` NDCG@k (``inf`` = the whole run); the ideal ranks every judged document."""
    discount = d.log2_discount(j.slots.position + 1)
    dcg = _sums(j, expected_gain(j.slots) * discount, cutoffs)
    width = j.ideal_gains.shape[-1]
    ideal = torch.cumsum(j.ideal_gains * d.discounts(width, "log2", torch.float64, j.ideal_gains.device), -1)
    ideal = torch.nn.functional.pad(ideal, (1, 0))
    at = torch.tensor([min(k, width) for k in cutoffs], device=ideal.device)
    return normalise(dcg, ideal.index_select(-1, at), "zero")


def _binary(name: str, j: Judged, cutoffs: tuple[float, ...], normalise_by: tuple[int | None, ...]) -> Tensor:
    values, _ = binary_metric(name, j.slots, normalise_by, j.relevant, j.retrieved,
                              sums=lambda terms: _sums(j, terms, cutoffs))
    return values


def precision(j: Judged, cutoffs: tuple[int, ...]) -> Tensor:
    """P@k: relevant documents in the top k over k (k even past the end of the run)."""
    return _binary("precision", j, cutoffs, cutoffs)


def recall(j: Judged, cutoffs: tuple[int, ...]) -> Tensor:
    """recall@k: relevant documents in the top k over R (0 when R = 0)."""
    return _binary("recall", j, cutoffs, cutoffs)


def average_precision(j: Judged, cutoffs: tuple[float, ...]) -> Tensor:
    """AP over the top k divided by R, as trec_eval's ``map`` and ``map_cut`` (not min(R, k))."""
    # A cutoff of None makes the engine divide by R; the sums still stop at each real cutoff.
    return _binary("average_precision", j, cutoffs, (None,) * len(cutoffs))


def _first_hit(j: Judged) -> Tensor:
    """``[T]`` 1.0 at the first relevant slot of each query.

    With one document per slot (no tie groups) the engine's ``first_hit_probability`` is exactly
    this; its lgamma form cost a third of the evaluation time of a 7 M-line run.
    """
    return j.slots.group_hits * (j.slots.hits_before == 0)


def success(j: Judged, cutoffs: tuple[int, ...]) -> Tensor:
    """success@k: 1 if a relevant document is in the top k."""
    return _sums(j, _first_hit(j), cutoffs)


def reciprocal_rank(j: Judged) -> Tensor:
    """``[rows]``: 1 / rank of the first relevant document (0 if none retrieved)."""
    return _sums(j, _first_hit(j) / (j.slots.position + 1), (float("inf"),)).squeeze(-1)


def r_precision(j: Judged) -> Tensor:
    """``[rows]``: precision at rank R, each query cut at its own R (0 when R = 0)."""
    cut = j.relevant.squeeze(-1)[j.row]
    terms = hit_probability(j.slots) * (j.slots.position < cut)
    found = torch.zeros(j.rows, dtype=terms.dtype, device=terms.device).index_add_(0, j.row, terms)
    return found / j.relevant.squeeze(-1).clamp(min=1)


def relevant_retrieved(j: Judged) -> Tensor:
    """``[rows]``: relevant documents retrieved anywhere in the run."""
    return _sums(j, hit_probability(j.slots), (float("inf"),)).squeeze(-1)
