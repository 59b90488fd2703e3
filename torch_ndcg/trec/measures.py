"""trec_eval's measures computed by the library's metric engine: the one module that calls into it.

A run is evaluated from its **sparse slots**: only the retrieved documents that are judged
relevant (a positive gain, or relevance ≥ the threshold) change any measure here, so each becomes
one slot of :class:`~torch_ndcg.rank_statistics.RankStatistics` at its true 0-based rank; every
other rank holds a zero-gain non-relevant document and adds nothing (bpref alone needs to know
which of those are judged non-relevant: each slot carries how many of them rank above it, so
they need no slots of their own). :class:`Judged` answers the
engine's :class:`~torch_ndcg.engine.RankedQueries` questions, so
:func:`~torch_ndcg.engine.evaluate` with the engine's metric table gives trec_eval's numbers; a
dense ``[Q, 1000]`` ranked list would spend its time on the zero slots.

Done here because the engine has no equivalent: per-query cutoffs (``Rprec`` cuts at each
query's R), the ideal DCG from the qrels' gains (``ndcg``'s ideal uses every judged relevant document,
retrieved or not), and ``bpref`` and ``iprec_at_recall``, which the engine does not define.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .. import definitions as d
from .. import engine
from ..engine import Metric
from ..rank_statistics import RankStatistics, hit_probability

#: trec_eval's smallest per-query AP inside gm_map's logarithm.
MIN_GEO_MEAN = 1e-5


@dataclass(frozen=True)
class Ideal:
    """The judged documents with a positive gain, sorted by (row, gain descending)."""

    row: Tensor  # [J] long query row
    position: Tensor  # [J] float64 0-based rank in the query's ideal order
    gain: Tensor  # [J] float64
    grade: Tensor  # [J] float64 judged value


@dataclass(frozen=True)
class Lines:
    """Every retrieved document of the evaluated queries, sorted by (row, rank) (all float64 but ``row``)."""

    row: Tensor  # [L] long
    position: Tensor  # [L] 0-based rank
    judged: Tensor  # [L] 1.0 where the qrels list the document for the query


@dataclass(frozen=True)
class Judged:
    """One evaluated run, as sparse slots over ``rows`` queries (all float64): the sparse answer
    to :class:`~torch_ndcg.engine.RankedQueries`. Cutoffs are floats here (``inf`` = the whole run)."""

    rows: int
    row: Tensor  # [T] long, query row of each slot, slots sorted by (row, rank)
    ranks: RankStatistics  # [T] one retrieved relevant document per slot, position = 0-based rank
    relevant_judged: Tensor  # [rows, 1] R: judged documents with relevance ≥ the threshold
    retrieved: Tensor  # [rows, 1] documents the run retrieved for the query
    ideal_gains: Ideal  # every judged document with a positive gain, in each query's ideal order
    nonrelevant_judged: Tensor  # [rows, 1] N: judged documents with 0 ≤ relevance < the threshold
    nonrelevant_above: Tensor  # [T] retrieved judged non-relevant documents ranked above each slot
    grade: Tensor  # [T] judged value of each slot
    lines: Lines | None = None  # every retrieved document, when a measure needs the unjudged ones

    def sums(self, terms: Tensor, cutoffs: tuple[float, ...]) -> Tensor:
        """``[rows, C]``: each query's sum of ``terms`` over its slots ranked above each cutoff."""
        limit = torch.tensor(cutoffs, dtype=torch.float64, device=terms.device)
        inside = (self.ranks.position.unsqueeze(-1) < limit).to(terms.dtype)
        out = terms.new_zeros(self.rows, len(cutoffs))
        return out.index_add_(0, self.row, terms.unsqueeze(-1) * inside)

    def discounts(self, discount: d.Discount, cutoffs: tuple[float, ...]) -> Tensor:
        return d.log2_discount(self.ranks.position + 1)

    def ideal(self, discount: d.Discount, cutoffs: tuple[float, ...]) -> Tensor:
        # trec_eval's ideal ranks every judged document of the query, retrieved or not; summed
        # sparsely, so one query with many judged documents costs its own documents only.
        ideal = self.ideal_gains
        limit = torch.tensor(cutoffs, dtype=torch.float64, device=ideal.gain.device)
        inside = (ideal.position.unsqueeze(-1) < limit).to(ideal.gain.dtype)
        terms = ideal.gain * d.log2_discount(ideal.position + 1)
        out = ideal.gain.new_zeros(self.rows, len(cutoffs))
        return out.index_add_(0, ideal.row, terms.unsqueeze(-1) * inside)

    def relevant(self) -> Tensor:
        return self.relevant_judged

    def listed(self) -> Tensor:
        return self.retrieved


def judged(
    rows: int, row: Tensor, position: Tensor, gain: Tensor, hit: Tensor,
    relevant: Tensor, retrieved: Tensor, ideal: Ideal, nonrelevant: Tensor, nonrelevant_above: Tensor,
    grade: Tensor, lines: Lines | None = None,
) -> Judged:
    """Build the slots of sorted ``(row, position)`` pairs; ``hit`` is 1.0 where relevance ≥ threshold."""
    starts = torch.searchsorted(row, torch.arange(rows, device=row.device))
    hits_so_far = torch.cumsum(hit, 0)
    before_row = torch.cat([hits_so_far.new_zeros(1), hits_so_far])[starts]
    ones = torch.ones_like(position)
    ranks = RankStatistics(
        position=position,
        group_gain=gain,
        group_size=ones,
        group_hits=hit,
        group_start=position,
        hits_before=hits_so_far - hit - before_row[row],
    )
    return Judged(rows, row, ranks, relevant, retrieved, ideal, nonrelevant, nonrelevant_above, grade, lines)


def gains(relevance: Tensor, gain: d.Gain) -> Tensor:
    """The library's gain of each judged value (float64); values ≤ 0 gain nothing, as in trec_eval."""
    relevance = relevance.to(torch.float64)
    return torch.where(relevance > 0, d.gains(relevance.clamp(min=0), gain, torch.float64), 0.0)


# trec_eval's map and map_cut divide AP@k by R, not by min(R, k) as the engine's default AP does.
_AP_OVER_R = engine.AVERAGE_PRECISION.configured(ap_normaliser="r")


def _evaluate(metric: Metric, j: Judged, cutoffs: tuple[float, ...]) -> Tensor:
    return engine.evaluate(metric, j, cutoffs, discount="log2", empty="zero")


def ndcg(j: Judged, cutoffs: tuple[float, ...]) -> Tensor:
    """``[rows, C]`` NDCG@k (``inf`` = the whole run); the ideal ranks every judged document."""
    return _evaluate(engine.NDCG, j, cutoffs)


def precision(j: Judged, cutoffs: tuple[int, ...]) -> Tensor:
    """P@k: relevant documents in the top k over k (k even past the end of the run)."""
    return _evaluate(engine.PRECISION, j, cutoffs)


def recall(j: Judged, cutoffs: tuple[int, ...]) -> Tensor:
    """recall@k: relevant documents in the top k over R (0 when R = 0)."""
    return _evaluate(engine.RECALL, j, cutoffs)


def average_precision(j: Judged, cutoffs: tuple[float, ...]) -> Tensor:
    """AP over the top k divided by R, as trec_eval's ``map`` and ``map_cut`` (not min(R, k))."""
    return _evaluate(_AP_OVER_R, j, cutoffs)


def _first_hit(j: Judged) -> Tensor:
    """``[T]`` 1.0 at the first relevant slot of each query.

    With one document per slot (no tie groups) the engine's ``first_hit_probability`` is exactly
    this; its lgamma form cost a third of the evaluation time of a 7 M-line run.
    """
    return j.ranks.group_hits * (j.ranks.hits_before == 0)


def success(j: Judged, cutoffs: tuple[int, ...]) -> Tensor:
    """success@k: 1 if a relevant document is in the top k."""
    return j.sums(_first_hit(j), cutoffs)


def reciprocal_rank(j: Judged) -> Tensor:
    """``[rows]``: 1 / rank of the first relevant document (0 if none retrieved)."""
    return j.sums(_first_hit(j) / (j.ranks.position + 1), (float("inf"),)).squeeze(-1)


def r_precision(j: Judged) -> Tensor:
    """``[rows]``: precision at rank R, each query cut at its own R (0 when R = 0)."""
    cut = j.relevant_judged.squeeze(-1)[j.row]
    terms = hit_probability(j.ranks) * (j.ranks.position < cut)
    found = torch.zeros(j.rows, dtype=terms.dtype, device=terms.device).index_add_(0, j.row, terms)
    return found / j.relevant_judged.squeeze(-1).clamp(min=1)


def relevant_retrieved(j: Judged) -> Tensor:
    """``[rows]``: relevant documents retrieved anywhere in the run."""
    return j.sums(hit_probability(j.ranks), (float("inf"),)).squeeze(-1)


def bpref(j: Judged) -> Tensor:
    """``[rows]`` bpref = (1/R) Σ_r (1 − min(n_r, R) / min(N, R)) over the retrieved relevant r.

    n_r counts the judged non-relevant documents retrieved above r, N those judged for the query
    (0 ≤ relevance < the threshold); unjudged documents (and negative judgements) are skipped,
    and a relevant document with nothing non-relevant above counts 1. 0 when R = 0.
    Buckley & Voorhees, "Retrieval Evaluation with Incomplete Information", SIGIR 2004.
    """
    relevant = j.relevant_judged.squeeze(-1)
    nonrelevant = j.nonrelevant_above
    cap = torch.minimum(j.nonrelevant_judged.squeeze(-1), relevant)[j.row]
    # nonrelevant > 0 implies cap ≥ 1 here, so the clamp only guards the terms where() discards.
    term = torch.where(nonrelevant > 0, 1 - torch.minimum(nonrelevant, relevant[j.row]) / cap.clamp(min=1), 1.0)
    total = j.sums(term * j.ranks.group_hits, (float("inf"),)).squeeze(-1)
    return total / relevant.clamp(min=1)


def interpolated_precision(j: Judged, counts: Tensor) -> Tensor:
    """``[rows, C]``: the best precision at or below the ``counts[:, c]``-th relevant document.

    iprec(c) = max over k ≥ max(c, 1) of k / rank_k, rank_k the 1-based rank of the k-th relevant
    retrieved document (precision only peaks at relevant documents); 0 when fewer than c are
    retrieved, or none.
    """
    hit = j.ranks.group_hits > 0
    row = j.row[hit]
    best = _suffix_max((j.ranks.hits_before[hit] + 1) / (j.ranks.position[hit] + 1), row)
    found = torch.bincount(row, minlength=j.rows)
    first = torch.cumsum(found, 0) - found
    last = max(best.numel() - 1, 0)
    best = torch.cat([best, best.new_zeros(1)])  # something to gather when no query has a hit
    columns = []
    # One column at a time: [rows] tensors stay under torch's threading grain, which on a busy
    # two-core machine made each [rows, C] operation wait on the other core.
    for count in counts.unbind(-1):
        at = (first + count.clamp(min=1).long() - 1).clamp(max=last)
        columns.append(torch.where((count <= found) & (found > 0), best[at], 0.0))
    return torch.stack(columns, -1)


def _suffix_max(values: Tensor, row: Tensor) -> Tensor:
    """Each value's max with the later values of its row (``row`` sorted), by doubling steps."""
    best = values.clone()
    step = 1
    while step < best.numel():
        same = row[step:] == row[:-step]
        if not bool(same.any()):
            break
        best[:-step] = torch.where(same, torch.maximum(best[:-step], best[step:]), best[:-step])
        step *= 2
    return best


def iprec_at_recall(j: Judged, levels: tuple[float, ...]) -> Tensor:
    """``[rows, C]`` interpolated precision at each recall level (trec_eval's ``iprec_at_recall``).

    A level p stands for c = round(p · R) relevant documents, halves away from zero as C's
    ``lround`` (trec_eval 10's rule; trec_eval 9, and so pytrec_eval-terrier 0.5.11, truncates
    p · R + 0.9), then :func:`interpolated_precision`. Example: R = 3, p = 0.4 → c = 1 (9: 2).
    """
    relevant = j.relevant_judged.squeeze(-1)
    counts = []
    for level in levels:
        scaled = level * relevant
        whole = scaled.floor()
        counts.append(whole + (scaled - whole >= 0.5))
    return interpolated_precision(j, torch.stack(counts, -1))
