"""Evaluate a TREC run against qrels with trec_eval's conventions, returning tensors.

Conventions (trec_eval 9's, checked against pytrec_eval, trec_eval's own test outputs and a build
of its current source):

* Each query's run is ordered by score (float64, descending), ties broken by docno in
  **descending** byte order (``strcmp``); the file's rank column is ignored.
* A document is relevant when its judged value is ≥ ``relevance_level`` (``-l``, default 1):
  this drives P, recall, map, map_cut, recip_rank, Rprec, success, iprec_at_recall and R;
  bpref's non-relevant documents are those judged 0 ≤ value < the level (a negative value is
  unjudged, as is a document missing from the qrels, and bpref skips both). NDCG ignores the
  threshold: its gain is the judged value (``gain="linear"``) for values > 0; judged values ≤ 0
  and unjudged documents gain nothing, and the ideal DCG ranks *every* judged document of the
  query, retrieved or not. ``gain="exp2"`` (``2**rel - 1``) is the library's alternative.
* Queries evaluated: those in both the run and the qrels; with ``complete=True`` (``-c``) every
  query of the qrels, a query absent from the run scoring 0 (its R still counts in ``num_rel``).
  A query of the run absent from the qrels is ignored.
* A query with no relevant document scores 0 on every measure. A run that shares no query with
  the qrels is refused (``ValueError``), as trec_eval refuses it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .. import definitions as d
from . import measures as m
from . import user_models as um
from .names import COUNTS, Measures, cutoff_name, output_names, parse
from .reader import Qrels, Run, read_qrels, read_run

#: Above this many relevant retrieved documents in one query, ranks come from one sort of the run
#: rather than from comparing every document with each relevant one (cost O(n·J), cheaper for small J).
COUNT_UP_TO = 48


@dataclass(frozen=True)
class Evaluation:
    """Per-query values (``[Q]`` float64 tensors, queries in ``qids`` order) and trec_eval's ``all`` line.

    ``runid`` and ``qids`` are the file's bytes decoded from UTF-8, bytes that are not UTF-8
    through ``surrogateescape`` (``qid.encode("utf-8", "surrogateescape")`` is the file's id)."""

    runid: str
    qids: list[str]  # evaluated queries, in strcmp order of their bytes
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
) -> Evaluation:
    """Score one run as ``trec_eval [-c] [-l LEVEL] -m ... QRELS RUN`` does.

    Args:
        qrels: :class:`~torch_ndcg.trec.reader.Qrels` (read once, share it across runs) or a path.
        run: :class:`~torch_ndcg.trec.reader.Run` or a path.
        measures: trec_eval ``-m`` names, e.g. ``["ndcg_cut.5,10", "P.10", "map"]``; ``None`` is
            trec_eval's default set.
        relevance_level: judged value from which a document is relevant (``-l``), an int ≥ 0.
        complete: average over every query of the qrels (``-c``), missing ones scoring 0.
        gain: ``"linear"`` (trec_eval: gain = judged value) or ``"exp2"`` (``2**rel - 1``).

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
    rows, judged = _judged(qrels, run, relevance_level, complete, gain, lines=bool(_NEED_LINES & set(wanted)))
    per_query = _compute(wanted, judged)
    qids = [q.decode("utf-8", "surrogateescape") for q in qrels.qids[rows].tolist()]
    return Evaluation(run.tag, qids, per_query, _summary(wanted, per_query, run.tag, len(qids)))


def _typed(value: object, name: str, reader: Callable[[str | os.PathLike], Qrels | Run]) -> Qrels | Run:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path or what read_{name} returns, got {type(value).__name__}")
    return reader(value)


def _lookup(vocabulary: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of each value in a sorted vocabulary, -1 where absent."""
    if vocabulary.size == 0:
        return np.full(values.shape, -1, dtype=np.int64)
    if vocabulary.dtype.kind == "O" or values.dtype.kind == "O":  # ids kept as Python bytes
        vocabulary, values = vocabulary.astype(object), values.astype(object)
        at = np.searchsorted(vocabulary, values).clip(max=vocabulary.size - 1)
        return np.where(vocabulary[at] == values, at, -1).astype(np.int64)
    # Searching with the vocabulary's own dtype: another width would make numpy copy it all.
    fits = np.char.str_len(values) <= vocabulary.dtype.itemsize
    values = values.astype(vocabulary.dtype)
    at = np.searchsorted(vocabulary, values).clip(max=vocabulary.size - 1)
    return np.where(fits & (vocabulary[at] == values), at, -1).astype(np.int64)


#: Families that look at every retrieved document, judged or not, rather than the relevant slots only.
_NEED_LINES = {"rbp_residual", "judged"}


def _judged(qrels: Qrels, run: Run, level: int, complete: bool, gain: str,
            lines: bool = False) -> tuple[np.ndarray, m.Judged]:
    """The evaluated qrels queries (rows) and the run's relevant retrieved documents as sparse slots.

    The passes over every run line are NumPy's (several times faster than torch's on CPU for
    gathers and ``nonzero``); only the slots, a few per query, reach the metric engine.
    """
    qrels_of_run_query = _lookup(qrels.qids, run.qids)
    rows = np.arange(qrels.qids.size) if complete else np.unique(qrels_of_run_query[qrels_of_run_query >= 0])
    if rows.size == 0:  # trec_eval stops here too, rather than report zeros
        raise ValueError(f"no query of run {run.path} is in qrels {qrels.path}; check that the files match")
    row_of_qrels_query = np.full(qrels.qids.size + 1, -1, dtype=np.int64)  # [-1] stays -1
    row_of_qrels_query[rows] = np.arange(rows.size)
    row_of_run_query = row_of_qrels_query[qrels_of_run_query]
    n_rows = rows.size

    # The qrels of evaluated queries, in the run's document ids (-1: never retrieved).
    keep = row_of_qrels_query[qrels.query] >= 0
    q_row = row_of_qrels_query[qrels.query[keep]]
    q_rel = qrels.relevance[keep]
    q_doc = _lookup(run.docnos, qrels.docnos)[qrels.doc[keep]]
    _check_exp2(qrels.path, q_row, q_rel, n_rows, gain)
    q_gain = m.gains(torch.from_numpy(q_rel), gain)
    q_hit = q_rel >= level
    q_miss = (q_rel >= 0) & ~q_hit  # judged non-relevant (negative values are unjudged to trec_eval)
    relevant = np.bincount(q_row, weights=q_hit, minlength=n_rows)
    nonrelevant = np.bincount(q_row, weights=q_miss, minlength=n_rows)
    ideal = _ideal(q_row, q_gain.numpy(), q_rel)
    retrieved = np.zeros(n_rows)
    evaluated = row_of_run_query >= 0
    retrieved[row_of_run_query[evaluated]] = run.lines_per_query[evaluated]

    # Run lines that are judged documents: those that gain or count become slots; the non-relevant
    # ones only count for bpref, how many rank above each slot.
    useful = ((q_gain.numpy() > 0) | q_hit | q_miss) & (q_doc >= 0)
    docs = max(run.docnos.size, 1)
    key = q_row[useful] * docs + q_doc[useful]
    order = np.argsort(key)
    key, key_rel = key[order], q_rel[useful][order]
    is_judged = np.zeros(docs, dtype=bool)
    is_judged[q_doc[useful]] = True
    candidate = np.flatnonzero(is_judged[run.doc])
    c_row = row_of_run_query[run.query[candidate]]
    c_key = c_row * docs + run.doc[candidate]  # negative where the query is not evaluated
    at = np.searchsorted(key, c_key).clip(max=max(key.size - 1, 0))
    found = key[at] == c_key if key.size else np.zeros(c_key.shape, dtype=bool)
    entry, rel, s_row = candidate[found], key_rel[at[found]], c_row[found]

    # Slots in rank order within each query: row ascending, score descending, docno descending.
    order = np.lexsort((-run.doc[entry], -run.score[entry], s_row))
    entry, rel, s_row = entry[order], rel[order], s_row[order]
    miss = (rel >= 0) & (rel < level)
    misses_so_far = np.cumsum(miss)
    misses_above = misses_so_far - miss - (misses_so_far - miss)[np.searchsorted(s_row, s_row)]
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
    s_gain = m.gains(t(rel), gain)
    slot = (rel >= level) | (s_gain.numpy() > 0)
    entry, rel, s_row, misses_above, s_gain = entry[slot], rel[slot], s_row[slot], misses_above[slot], s_gain[slot]
    position = _positions(run, row_of_run_query, entry, s_row, n_rows)
    every_line = None
    if lines:
        listed = q_doc >= 0
        every_line = _lines(run, row_of_run_query, np.sort(q_row[listed] * docs + q_doc[listed]), docs)
    judged = m.judged(
        n_rows, t(s_row), t(position).to(torch.float64), s_gain, t(rel >= level).to(torch.float64),
        t(relevant).unsqueeze(-1), t(retrieved).unsqueeze(-1), ideal,
        t(nonrelevant).unsqueeze(-1), t(misses_above).to(torch.float64), t(rel).to(torch.float64), every_line,
    )
    return rows, judged


def _lines(run: Run, row_of_run_query: np.ndarray, judged_keys: np.ndarray, docs: int) -> m.Lines:
    """Every retrieved document of the evaluated queries with its rank and whether it is judged
    (``judged_keys``: sorted ``row * docs + doc`` of the qrels' documents that the run knows)."""
    line_row = row_of_run_query[run.query]
    keep = np.flatnonzero(line_row >= 0)
    row, score, doc = line_row[keep], run.score[keep], run.doc[keep]
    order = np.lexsort((-doc, -score, row))
    row, doc = row[order], doc[order]
    position = np.arange(row.size) - np.searchsorted(row, row)
    key = row * docs + doc
    at = np.searchsorted(judged_keys, key).clip(max=max(judged_keys.size - 1, 0))
    judged = judged_keys[at] == key if judged_keys.size else np.zeros(key.shape, dtype=bool)
    return m.Lines(torch.from_numpy(row), torch.from_numpy(position).to(torch.float64),
                   torch.from_numpy(judged).to(torch.float64))


def _check_exp2(path: str, row: np.ndarray, relevance: np.ndarray, n_rows: int, gain: str) -> None:
    """The library's exp2 overflow rule, each query a list of its judged documents."""
    length = np.bincount(row, minlength=n_rows)[row]
    try:
        d.check_exp2_range(torch.from_numpy(relevance), gain, torch.float64, torch.from_numpy(length))
    except ValueError as error:
        reason = str(error).split(";")[0].replace("lists of", "a query of").replace("items", "judged documents")
        raise ValueError(f"{path}: {reason}; use gain='linear' (--gain linear)") from None


def _ideal(row: np.ndarray, gain: np.ndarray, grade: np.ndarray) -> m.Ideal:
    """The positive gains of each query's judged documents, largest first, with their ideal ranks."""
    positive = gain > 0
    row, gain, grade = row[positive], gain[positive], grade[positive]
    order = np.lexsort((-gain, row))
    row, gain, grade = row[order], gain[order], grade[order]
    position = np.arange(row.size) - np.searchsorted(row, row)
    return m.Ideal(torch.from_numpy(row), torch.from_numpy(position).to(torch.float64), torch.from_numpy(gain),
                   torch.from_numpy(np.ascontiguousarray(grade)).to(torch.float64))


def _positions(run: Run, row_of_run_query: np.ndarray, entry: np.ndarray, s_row: np.ndarray,
               n_rows: int) -> np.ndarray:
    """0-based rank of each slot (the run lines ``entry``, sorted by row, score desc, docno desc).

    A run line ranks above a slot when its score is higher, or equal with a larger docno. Lines
    below their query's lowest slot rank above none, so they are dropped first.
    """
    counts = np.bincount(s_row, minlength=n_rows)
    column = np.arange(s_row.size) - (np.cumsum(counts) - counts)[s_row]
    width = int(counts.max(initial=0))
    if width == 0:
        return column
    lowest = np.full(row_of_run_query.size, np.inf)
    np.minimum.at(lowest, run.query[entry], run.score[entry])
    lines = np.flatnonzero(run.score >= lowest[run.query])
    row, score, doc = row_of_run_query[run.query[lines]], run.score[lines], run.doc[lines]
    if width > COUNT_UP_TO:
        order = np.lexsort((-doc, -score, row))
        rank = np.empty(run.score.size, dtype=np.int64)
        rank[lines[order]] = np.arange(order.size) - np.searchsorted(row[order], row[order])
        return rank[entry]
    table_score = np.full((n_rows, width), np.inf)
    table_doc = np.zeros((n_rows, width), dtype=np.int64)
    table_score[s_row, column] = run.score[entry]
    table_doc[s_row, column] = run.doc[entry]
    above = np.zeros((n_rows, width), dtype=np.int64)
    for j in range(width):
        ts, td = table_score[row, j], table_doc[row, j]
        beats = (score > ts) | ((score == ts) & (doc > td))
        above[:, j] = np.bincount(row[beats], minlength=n_rows)
    return above[s_row, column]


def _compute(wanted: Measures, j: m.Judged) -> dict[str, Tensor]:
    values: dict[str, Tensor] = {}

    def put(family: str, table: Tensor) -> None:
        for k, column in zip(wanted[family], table.unbind(-1)):
            values[cutoff_name(family, k)] = column

    inf = float("inf")
    for family, cutoffs in wanted.items():
        if family in ("runid", "num_q"):
            continue
        if family == "num_ret":
            values[family] = j.retrieved.squeeze(-1)
        elif family == "num_rel":
            values[family] = j.relevant().squeeze(-1)
        elif family == "num_rel_ret":
            values[family] = m.relevant_retrieved(j)
        elif family == "map":
            values[family] = m.average_precision(j, (inf,)).squeeze(-1)
        elif family == "gm_map":  # per query the log, as pytrec_eval gives it; the "all" line exp(mean)
            values[family] = torch.log(m.average_precision(j, (inf,)).squeeze(-1).clamp(min=m.MIN_GEO_MEAN))
        elif family == "Rprec":
            values[family] = m.r_precision(j)
        elif family == "bpref":
            values[family] = m.bpref(j)
        elif family == "recip_rank":
            values[family] = m.reciprocal_rank(j)
        elif family == "iprec_at_recall":
            put(family, m.iprec_at_recall(j, cutoffs))
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
        elif family == "err_cut":
            put(family, um.expected_reciprocal_rank(j.row, j.ranks.position, j.grade, j.rows, cutoffs))
        elif family == "nerr_cut":
            put(family, um.normalised_err(j.row, j.ranks.position, j.grade, j.ideal_gains.row, j.ideal_gains.grade,
                                          j.rows, cutoffs))
        elif family == "rbp":
            put(family, um.rank_biased_precision(j.row, j.ranks.position, j.ranks.group_hits, j.rows, cutoffs))
        elif family == "rbp_residual":
            lines = j.lines
            put(family, um.rbp_residual(lines.row, lines.position, lines.judged, j.retrieved.squeeze(-1), j.rows,
                                        cutoffs))
        elif family == "judged":
            lines = j.lines
            put(family, um.judged_at(lines.row, lines.position, lines.judged, j.retrieved.squeeze(-1), j.rows,
                                     cutoffs))
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
            summary[name] = math.exp(float(values.mean())) if num_q else 0.0
        else:
            summary[name] = float(values.mean()) if num_q else 0.0
    return summary
