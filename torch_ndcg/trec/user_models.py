"""ERR, RBP (with its residual) and Judged@k of TREC runs: user-model measures and judgement coverage.

Each takes sparse, row-sorted entries of the evaluated queries (``row``, 0-based ``position`` in
the ranking) as float64 tensors and returns ``[rows, C]`` or ``[rows]`` values.

* ERR@k (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009), as gdeval computes it (and so
  ir_measures' ``ERR@k``): a user reads down the ranking and stops at rank i, satisfied, with
  probability R_i = (2^g_i − 1) / 2^4, grade g_i capped at 4 (gdeval's largest); negative and
  unjudged grades count 0. ERR@k = Σ_{i≤k} (R_i / i) Π_{j<i} (1 − R_j).
* nERR@k: ERR@k divided by the ERR@k of the ideal ranking (every judged document of the
  query, retrieved or not, by grade descending); 0 when the query has no positive grade.
* RBP(p) (Moffat & Zobel, TOIS 2008): (1 − p) Σ_i p^{i−1} [document i is relevant] over the
  whole run, relevant meaning judged ≥ the relevance level (ir_measures' ``RBP(rel=L, p=p)``).
* RBP's residual: how much RBP could still grow if every unjudged document were relevant:
  (1 − p) Σ_{i ≤ n, i unjudged} p^{i−1} + p^n for a run of n documents (the second term
  stands for the documents below the run). A document is judged when the qrels list it for the
  query, whatever its value.
* Judged@k (ir_measures'): the fraction of the top min(k, n) documents that the qrels list for
  the query; 0 for an empty run.
"""

from __future__ import annotations

import torch
from torch import Tensor

#: gdeval's largest grade: larger ones are capped to it.
MAX_GRADE = 4


def _stop_probability(grade: Tensor) -> Tensor:
    capped = grade.clamp(min=0, max=MAX_GRADE)
    return (torch.exp2(capped) - 1) / 2**MAX_GRADE


def _exclusive_row_sum(values: Tensor, row: Tensor, rows: int) -> Tensor:
    """Each entry's sum of the earlier entries of its row (entries sorted by row)."""
    running = torch.cumsum(values, 0) - values
    starts = torch.searchsorted(row, torch.arange(rows, device=row.device))
    before_row = torch.cat([running, running.new_zeros(1)])[starts.clamp(max=running.numel())]
    return running - before_row[row]


def expected_reciprocal_rank(
    row: Tensor, position: Tensor, grade: Tensor, rows: int, cutoffs: tuple[float, ...]
) -> Tensor:
    """``[rows, C]`` ERR@k of entries sorted by (row, position); ``grade`` the judged value."""
    stop = _stop_probability(grade)
    # log(1 − R) is finite: R ≤ 15/16. Documents with R = 0 leave the product unchanged.
    reach = torch.exp(_exclusive_row_sum(torch.log1p(-stop), row, rows))
    terms = stop * reach / (position + 1)
    limit = torch.tensor(cutoffs, dtype=torch.float64, device=terms.device)
    inside = (position.unsqueeze(-1) < limit).to(terms.dtype)
    return terms.new_zeros(rows, len(cutoffs)).index_add_(0, row, terms.unsqueeze(-1) * inside)


def normalised_err(
    row: Tensor, position: Tensor, grade: Tensor, ideal_row: Tensor, ideal_grade: Tensor, rows: int,
    cutoffs: tuple[float, ...],
) -> Tensor:
    """``[rows, C]`` nERR@k: ERR@k over the ERR@k of the judged grades sorted descending (``ideal_row``
    sorted, ``ideal_grade`` descending within each row); 0 where the ideal is 0."""
    err = expected_reciprocal_rank(row, position, grade, rows, cutoffs)
    starts = torch.searchsorted(ideal_row, torch.arange(rows, device=ideal_row.device))
    ideal_position = (torch.arange(ideal_row.numel(), device=ideal_row.device) - starts[ideal_row]).to(torch.float64)
    ideal = expected_reciprocal_rank(ideal_row, ideal_position, ideal_grade, rows, cutoffs)
    return torch.where(ideal > 0, err / ideal.clamp(min=torch.finfo(torch.float64).tiny), 0.0)


def rank_biased_precision(row: Tensor, position: Tensor, hit: Tensor, rows: int, persistence: tuple[float, ...]) -> Tensor:
    """``[rows, C]`` RBP(p) for each persistence p: ``hit`` 1.0 where the document is relevant."""
    p = torch.tensor(persistence, dtype=torch.float64, device=hit.device)
    terms = hit.unsqueeze(-1) * (1 - p) * p ** position.unsqueeze(-1)
    return terms.new_zeros(rows, len(persistence)).index_add_(0, row, terms)


def rbp_residual(
    row: Tensor, position: Tensor, judged: Tensor, retrieved: Tensor, rows: int, persistence: tuple[float, ...]
) -> Tensor:
    """``[rows, C]`` RBP's residual for each p, from every retrieved document (``judged`` 1.0 where
    the qrels list it) and ``retrieved`` ``[rows]`` documents per query."""
    p = torch.tensor(persistence, dtype=torch.float64, device=judged.device)
    terms = (1 - judged).unsqueeze(-1) * (1 - p) * p ** position.unsqueeze(-1)
    unjudged = terms.new_zeros(rows, len(persistence)).index_add_(0, row, terms)
    return unjudged + p ** retrieved.unsqueeze(-1)


def judged_at(row: Tensor, position: Tensor, judged: Tensor, retrieved: Tensor, rows: int,
              cutoffs: tuple[float, ...]) -> Tensor:
    """``[rows, C]`` Judged@k: judged documents among the top min(k, retrieved), over that number."""
    limit = torch.tensor(cutoffs, dtype=torch.float64, device=judged.device)
    inside = (position.unsqueeze(-1) < limit).to(torch.float64)
    found = judged.new_zeros(rows, len(cutoffs)).index_add_(0, row, judged.unsqueeze(-1) * inside)
    depth = torch.minimum(retrieved.unsqueeze(-1), limit)
    return torch.where(depth > 0, found / depth.clamp(min=1), 0.0)
