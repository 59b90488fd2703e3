"""Evaluate a TREC run against qrels with trec_eval's conventions, returning tensors.

Conventions (trec_eval 9's, checked against pytrec_eval and trec_eval's own test outputs):

* Each query's run is ordered by score (float64, descending), ties broken by docno in
  **descending** byte order (``strcmp``); the file's rank column is ignored.
* A document is relevant when its judged value is ≥ ``relevance_level`` (``-l``, default 1):
  this drives P, recall, map, map_cut, recip_rank, Rprec, success and R. NDCG ignores the
  threshold: its gain is the judged value (``gain="linear"``) for values > 0; judged values ≤ 0
  and unjudged documents gain nothing, and the ideal DCG ranks *every* judged document of the
  query, retrieved or not. ``gain="exp2"`` (``2**rel - 1``) is the library's alternative.
* Queries evaluated: those in both the run and the qrels; with ``complete=True`` (``-c``) every
  query of the qrels, a query absent from the run scoring 0 (its R still counts in ``num_rel``).
  A query of the run absent from the qrels is ignored.
* A query with no relevant document scores 0 on every measure.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from . import measures as m
from .names import COUNTS, Measures, output_names, parse
from .reader import Qrels, Run, read_qrels, read_run

#: Above this many relevant retrieved documents in one query, ranks come from one sort of the run
#: rather than from comparing every document with each relevant one (cost O(n·J), cheaper for small J).
COUNT_UP_TO = 48
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Evaluation:
    """Per-query values (``[Q]`` float64 tensors, queries in ``qids`` order) and trec_eval's ``all`` line."""

    runid: str
    qids: list[str]  # evaluated queries, in strcmp order
    per_query: dict[str, Tensor]  # trec_eval's name ("P_10") -> [Q]
    summary: dict[str, float | int | str]  # name -> the "all" value (runid, num_q, means, sums of counts)


def evaluate(
    qrels: Qrels | str | os.PathLike,
    run: Run | str | os.PathLike,
    measures: list[str] | str | None = None,
    *,
    relevance_level: int = 1,
    complete: bool = False,
    gain: str = "linear",
    device: torch.device | str | None = None,
) -> Evaluation:
    """Score one run as ``trec_eval [-c] [-l LEVEL] -m ... QRELS RUN`` does.

    Args:
        qrels: :class:`~torch_ndcg.trec.reader.Qrels` (read once, share it across runs) or a path.
        run: :class:`~torch_ndcg.trec.reader.Run` or a path.
        measures: trec_eval ``-m`` names, e.g. ``["ndcg_cut.5,10", "P.10", "map"]``; ``None`` is
            trec_eval's default set (less bpref and iprec_at_recall).
        relevance_level: judged value from which a document is relevant (``-l``), an int ≥ 0.
        complete: average over every query of the qrels (``-c``), missing ones scoring 0.
        gain: ``"linear"`` (trec_eval: gain = judged value) or ``"exp2"`` (``2**rel - 1``).
        device: where the evaluation runs (the run's arrays are moved there).

    Example:
        >>> import torch_ndcg.trec as trec
        >>> result = trec.evaluate("tests/trec/data/small.qrels", "tests/trec/data/small.run",
        ...                        ["ndcg_cut.3", "P.2", "recip_rank"])
        >>> result.qids, result.per_query["P_2"].tolist()
        (['q1', 'q2'], [0.5, 0.5])
        >>> {name: round(value, 4) for name, value in result.summary.items()}
        {'recip_rank': 0.75, 'P_2': 0.5, 'ndcg_cut_3': 0.7906}
    """
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) or relevance_level < 0:
        raise ValueError(f"relevance_level must be an int ≥ 0, got {relevance_level!r}")
    if not isinstance(complete, bool):
        raise TypeError(f"complete must be a bool, got {complete!r}")
    if gain not in ("linear", "exp2"):
        raise ValueError(f"gain must be 'linear' (trec_eval) or 'exp2', got {gain!r}")
    wanted = parse(measures)
    qrels = qrels if isinstance(qrels, Qrels) else _typed(qrels, "qrels", read_qrels)
    run = run if isinstance(run, Run) else _typed(run, "run", read_run)
    rows, judged = _judged(qrels, run, relevance_level, complete, gain, torch.device(device or "cpu"))
    per_query = _compute(wanted, judged)
    qids = [q.decode("utf-8", "backslashreplace") for q in qrels.qids[rows].tolist()]
    return Evaluation(run.tag, qids, per_query, _summary(wanted, per_query, run.tag, len(qids)))


def _typed(value: object, name: str, reader: object) -> object:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path or what read_{name} returns, got {type(value).__name__}")
    return reader(value)


def _lookup(vocabulary: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of each value in a sorted vocabulary, -1 where absent."""
    if vocabulary.size == 0:
        return np.full(values.shape, -1, dtype=np.int64)
    at = np.searchsorted(vocabulary, values).clip(max=vocabulary.size - 1)
    return np.where(vocabulary[at] == values, at, -1).astype(np.int64)


def _judged(qrels: Qrels, run: Run, level: int, complete: bool, gain: str, device: torch.device
            ) -> tuple[np.ndarray, m.Judged]:
    """The evaluated qrels queries (rows) and the run's relevant retrieved documents as sparse slots."""
    qrels_of_run_query = _lookup(qrels.qids, run.qids)
    if complete:
        rows = np.arange(qrels.qids.size)
    else:
        rows = np.unique(qrels_of_run_query[qrels_of_run_query >= 0])
    row_of_qrels_query = np.full(qrels.qids.size + 1, -1, dtype=np.int64)  # [-1] stays -1
    row_of_qrels_query[rows] = np.arange(rows.size)
    row_of_run_query = row_of_qrels_query[qrels_of_run_query]

    # The qrels in the run's ids: judged documents of evaluated queries.
    q_row = row_of_qrels_query[qrels.query]
    keep = q_row >= 0
    q_row, q_rel, q_doc = q_row[keep], qrels.relevance[keep], _lookup(run.docnos, qrels.docnos)[qrels.doc[keep]]
    n_rows = rows.size
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device)  # noqa: E731
    q_gain = m.gains(t(q_rel), gain)
    q_hit = t(q_rel >= level).to(torch.float64)
    relevant = torch.zeros(n_rows, dtype=torch.float64, device=device).index_add_(0, t(q_row), q_hit)
    ideal = _ideal(t(q_row), q_gain, n_rows)

    # Retrieved judged documents that gain or count: their query row, document, value.
    useful = ((q_gain > 0) | (q_hit > 0)).cpu().numpy() & (q_doc >= 0)
    key_rows, key_docs, key_rel = q_row[useful], q_doc[useful], q_rel[useful]
    docs = max(run.docnos.size, 1)
    qkey = key_rows * docs + key_docs
    order = np.argsort(qkey)
    qkey, key_rel = qkey[order], key_rel[order]

    row = t(row_of_run_query)[t(run.query)]  # [n] query row of every run line, -1 if not evaluated
    doc, score = t(run.doc), t(run.score)
    retrieved = torch.bincount(row[row >= 0], minlength=n_rows).to(torch.float64)
    is_judged = torch.zeros(docs, dtype=torch.bool, device=device)
    is_judged[t(key_docs)] = True
    candidate = torch.nonzero(is_judged[doc] & (row >= 0)).squeeze(-1)
    ckey = row[candidate] * docs + doc[candidate]
    qkey_t = t(qkey)
    at = torch.searchsorted(qkey_t, ckey).clamp(max=max(qkey.size - 1, 0))
    found = qkey_t[at] == ckey if qkey.size else torch.zeros_like(ckey, dtype=torch.bool)
    entry, rel = candidate[found], t(key_rel)[at[found]]

    # Slots in rank order within each query: row ascending, score descending, docno descending.
    s_row, s_score, s_doc = row[entry], score[entry], doc[entry]
    order = torch.from_numpy(np.lexsort((-s_doc.cpu().numpy(), -s_score.cpu().numpy(), s_row.cpu().numpy()))).to(device)
    entry, rel, s_row = entry[order], rel[order], s_row[order]
    position = _positions(row, score, doc, entry, n_rows).to(torch.float64)
    slot_gain = m.gains(rel, gain)
    slot_hit = (rel >= level).to(torch.float64)
    judged = m.judged(n_rows, s_row, position, slot_gain, slot_hit, relevant.unsqueeze(-1),
                      retrieved.unsqueeze(-1), ideal)
    return rows, judged


def _ideal(row: Tensor, gain: Tensor, n_rows: int) -> Tensor:
    """``[rows, M]`` positive gains of each query's judged documents, largest first, 0-padded."""
    positive = gain > 0
    row, gain = row[positive], gain[positive]
    order = torch.from_numpy(np.lexsort((-gain.cpu().numpy(), row.cpu().numpy()))).to(row.device)
    row, gain = row[order], gain[order]
    counts = torch.bincount(row, minlength=n_rows)
    width = int(counts.max()) if row.numel() else 0
    starts = torch.cumsum(counts, 0) - counts
    column = torch.arange(row.numel(), device=row.device) - starts[row]
    ideal = torch.zeros(n_rows, max(width, 1), dtype=torch.float64, device=row.device)
    ideal[row, column] = gain
    return ideal


def _positions(row: Tensor, score: Tensor, doc: Tensor, entry: Tensor, n_rows: int) -> Tensor:
    """0-based rank of each slot (the run lines ``entry``, sorted by row, score desc, doc desc).

    A run line ranks above a slot when its score is higher, or equal with a larger docno. Lines
    below a query's lowest slot rank above none, so they are dropped first.
    """
    s_row, s_score, s_doc = row[entry], score[entry], doc[entry]
    counts = torch.bincount(s_row, minlength=n_rows)
    starts = torch.cumsum(counts, 0) - counts
    column = torch.arange(s_row.numel(), device=row.device) - starts[s_row]
    width = int(counts.max()) if s_row.numel() else 0
    if width == 0:
        return column
    lowest = torch.full((n_rows + 1,), math.inf, dtype=torch.float64, device=row.device)  # [-1]: not evaluated
    lowest.scatter_reduce_(0, s_row, s_score, reduce="amin")
    lines = torch.nonzero(score >= lowest[row]).squeeze(-1)
    if width > COUNT_UP_TO:
        return _positions_by_sort(row, score, doc, lines, entry)
    table_score = torch.full((n_rows, width), math.inf, dtype=torch.float64, device=row.device)
    table_doc = torch.zeros((n_rows, width), dtype=torch.long, device=row.device)
    table_score[s_row, column] = s_score
    table_doc[s_row, column] = s_doc
    above = torch.zeros((n_rows, width), dtype=torch.long, device=row.device)
    for chunk in torch.split(lines, _CHUNK):
        r, s, dd = row[chunk], score[chunk].unsqueeze(-1), doc[chunk].unsqueeze(-1)
        ts, td = table_score[r], table_doc[r]
        beats = (s > ts) | ((s == ts) & (dd > td))
        above.index_add_(0, r, beats.to(torch.long))
    return above[s_row, column]


def _positions_by_sort(row: Tensor, score: Tensor, doc: Tensor, lines: Tensor, entry: Tensor) -> Tensor:
    """As :func:`_positions`, by sorting the kept lines of every query (for many slots per query)."""
    r, s, dd = (x[lines].cpu().numpy() for x in (row, score, doc))
    order = np.lexsort((-dd, -s, r))
    r_sorted = r[order]
    first = np.searchsorted(r_sorted, r_sorted, side="left")
    rank = np.full(row.numel(), -1, dtype=np.int64)
    rank[lines.cpu().numpy()[order]] = np.arange(order.size) - first
    return torch.from_numpy(rank[entry.cpu().numpy()]).to(row.device)


def _compute(wanted: Measures, j: m.Judged) -> dict[str, Tensor]:
    values: dict[str, Tensor] = {}

    def put(family: str, table: Tensor) -> None:
        for k, column in zip(wanted[family], table.unbind(-1)):
            values[f"{family}_{k}"] = column

    inf = float("inf")
    for family, cutoffs in wanted.items():
        if family in ("runid", "num_q"):
            continue
        if family == "num_ret":
            values[family] = j.retrieved.squeeze(-1)
        elif family == "num_rel":
            values[family] = j.relevant.squeeze(-1)
        elif family == "num_rel_ret":
            values[family] = m.relevant_retrieved(j)
        elif family in ("map", "gm_map"):
            values[family] = m.average_precision(j, (inf,)).squeeze(-1)
        elif family == "Rprec":
            values[family] = m.r_precision(j)
        elif family == "recip_rank":
            values[family] = m.reciprocal_rank(j)
        elif family == "ndcg":
            values[family] = m.ndcg(j, (inf,)).squeeze(-1)
        elif family == "ndcg_cut":
            put(family, m.ndcg(j, cutoffs))
        elif family == "P":
            put(family, m.precision(j, cutoffs))
        elif family == "recall":
            put(family, m.recall(j, cutoffs))
        elif family == "map_cut":
            put(family, m.average_precision(j, cutoffs))
        elif family == "success":
            put(family, m.success(j, cutoffs))
    return {name: values[name] for name in output_names(wanted) if name in values}


def _summary(wanted: Measures, per_query: dict[str, Tensor], runid: str, num_q: int) -> dict[str, float | int | str]:
    summary: dict[str, float | int | str] = {}
    if "runid" in wanted:
        summary["runid"] = runid
    if "num_q" in wanted:
        summary["num_q"] = num_q
    for name, values in per_query.items():
        if name in COUNTS:
            summary[name] = int(values.sum().round())
        elif name == "gm_map":
            logs = torch.log(values.clamp(min=m.MIN_GEO_MEAN))
            summary[name] = math.exp(float(logs.mean())) if num_q else 0.0
        else:
            summary[name] = float(values.mean()) if num_q else 0.0
    return summary
