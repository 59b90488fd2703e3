"""Generated qrels and runs for the TREC tests, written as files and as pytrec_eval's dicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from torch_ndcg.trec import evaluation
from torch_ndcg.trec import measures as m

#: Every measure this package computes, in pytrec_eval's spelling (its output keys use "_").
MEASURES = (
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "P.1,3,5,10",
    "recall.1,3,5,10", "ndcg", "ndcg_cut.1,3,5,10", "map_cut.1,3,5,10", "success.1,3,5,10",
)
#: iprec_at_recall's default levels: pytrec_eval-terrier 0.5.11 (trec_eval 9) turns level p into
#: int(p·R + 0.9) relevant documents, trec_eval 10 (this package) into round(p·R), so the two are
#: compared at trec_eval 9's counts through interpolated_precision (see iprec_at_trec_eval_9_counts).
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


_cases = 0


def random_case(rng: np.random.Generator, queries: int = 12, docs: int = 40) -> tuple[Qrels, Run]:
    """Qrels and a run with what trips evaluators up: heavy score ties, unjudged and negatively
    judged documents, graded labels, queries without a relevant document, queries only in the
    run or only in the qrels, and docnos whose byte order is not their numeric order.

    Query ids differ from case to case: trec_eval caches the last query it evaluated by its id
    alone, so a second pytrec_eval evaluator that started with that id would read stale data.
    """
    global _cases
    _cases += 1
    names = [f"d{i}" for i in range(docs)] + [str(i) for i in range(docs // 2)] + ["D9", "d", "é-x"]
    qrels: Qrels = {}
    run: Run = {}
    for q in range(queries):
        qid = f"{_cases}q{q}" if q % 5 else f"{_cases}.{q}"  # "1.10" sorts before "1.2"
        pool = rng.choice(len(names), size=rng.integers(1, len(names)), replace=False)
        judged = pool[: rng.integers(0, min(len(pool), 15) + 1)]
        if q % 7 != 3:  # some queries only in the run
            qrels[qid] = {names[i]: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for i in judged}
            if all(rel < 0 for rel in qrels[qid].values()):
                # Only negative judgements leave trec_eval's per-query level counts unset (stale from
                # the previous query: pytrec_eval hangs or answers at random); one 0 avoids that.
                qrels[qid][names[pool[0]]] = 0
        if q % 6 != 4:  # some queries only in the qrels
            retrieved = pool[: rng.integers(1, len(pool) + 1)]
            levels = rng.integers(1, 4)  # few distinct scores: many ties
            run[qid] = {names[i]: float(rng.integers(0, levels)) / 2 for i in retrieved}
    return qrels, run


def write_qrels(path: Path, qrels: Qrels) -> Path:
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()),
                    encoding="utf-8")
    return path


def write_run(path: Path, run: Run, tag: str = "tag", rng: np.random.Generator | None = None) -> Path:
    lines = [f"{q} Q0 {d} 1 {s!r} {tag}\n" for q, docs in run.items() for d, s in docs.items()]
    if rng is not None:  # lines in no particular order, queries interleaved
        lines = [lines[i] for i in rng.permutation(len(lines))]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def iprec_at_trec_eval_9_counts(qrels: Path, run: Path, level: int) -> dict[str, torch.Tensor]:
    """``iprec_at_recall_0.00`` … ``_1.00`` per evaluated query, each level p standing for
    int(p·R + 0.9) relevant documents as in trec_eval 9: what pytrec_eval-terrier prints."""
    rows, judged = evaluation._judged(evaluation.read_qrels(qrels), evaluation.read_run(run), level, False, "linear")
    relevant = judged.relevant_judged.squeeze(-1).tolist()
    counts = torch.tensor([[float(int(p * r + 0.9)) for p in LEVELS] for r in relevant], dtype=torch.float64)
    values = m.interpolated_precision(judged, counts.view(-1, len(LEVELS)))
    return {f"iprec_at_recall_{p:.2f}": column for p, column in zip(LEVELS, values.unbind(-1))}
