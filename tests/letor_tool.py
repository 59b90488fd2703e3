"""An independent re-implementation of the LETOR 4.0 evaluation tool (Eval-Score-4.0.pl), in plain
Python from the tool's written rules, to check the library's LETOR preset against.

It reads a data file and a score file (one score per line of the data file, in file order) as
the tool does, and shares no code with the library. The rules: per query, documents sorted by
score descending with ties in file order; NDCG gain 2^rel − 1, discount 1 at positions 1 and 2
and 1/log2(p) after; NDCG 0 for a query with nothing relevant and for k beyond the query's
length; P@k counts labels ≥ 1 and divides by k; MAP is AP over the whole list, 0 without a
relevant document; every query is averaged.
"""

from __future__ import annotations

import math
from pathlib import Path

CUTOFFS = tuple(range(1, 11))


def read_queries(data: Path, scores: Path) -> list[list[tuple[int, float]]]:
    """Per query (in order of first appearance): (label, score) of its lines, in file order."""
    items = []
    for line in data.read_text().splitlines():
        tokens = line.split("#", 1)[0].split()
        if tokens:
            items.append((int(float(tokens[0])), tokens[1]))
    values = [float(v) for v in scores.read_text().split()]
    if len(values) != len(items):
        raise ValueError(f"{scores} has {len(values)} scores for the {len(items)} lines of {data}")
    queries: dict[str, list[tuple[int, float]]] = {}
    for (label, qid), score in zip(items, values):
        queries.setdefault(qid, []).append((label, score))
    return list(queries.values())


def _discount(position: int) -> float:
    return 1.0 if position <= 2 else 1.0 / math.log2(position)


def _dcg(labels: list[int], k: int) -> float:
    return sum((2**label - 1) * _discount(p) for p, label in enumerate(labels[:k], start=1))


def query_measures(documents: list[tuple[int, float]]) -> dict[str, float]:
    ranked = [label for label, _ in sorted(documents, key=lambda d: -d[1])]  # stable: file order on ties
    ideal = sorted(ranked, reverse=True)
    n, relevant = len(ranked), sum(label >= 1 for label in ranked)
    out = {}
    for k in CUTOFFS:
        best = _dcg(ideal, k)
        out[f"NDCG@{k}"] = 0.0 if k > n or best == 0 else _dcg(ranked, k) / best
        out[f"P@{k}"] = sum(label >= 1 for label in ranked[:k]) / k
    hits, precisions = 0, 0.0
    for p, label in enumerate(ranked, start=1):
        if label >= 1:
            hits += 1
            precisions += hits / p
    out["MAP"] = precisions / relevant if relevant else 0.0
    return out


def evaluate(data: Path, scores: Path) -> dict[str, float]:
    """The tool's means over every query of ``data`` of NDCG@1..10, P@1..10 and MAP."""
    per_query = [query_measures(q) for q in read_queries(data, scores)]
    return {name: sum(q[name] for q in per_query) / len(per_query) for name in per_query[0]}
