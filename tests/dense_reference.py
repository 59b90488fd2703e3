"""Brute-force oracle for the dense metrics: textbook formulas on explicit orderings.

Pure Python, one list at a time, independent of the package's slot machinery: a metric of a
fixed ordering is the textbook sum, and a tie mode is an explicit set of orderings (every
ordering of the tied items for ``ties="average"``, exactly one ordering otherwise).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import pytest
import torch

# The conftest's ``cuda`` marker, restated: ``from conftest import cuda`` is ambiguous once a
# test subfolder has a conftest.py of its own (tests/examples/ does).
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
DEVICES = ["cpu", pytest.param("cuda", marks=[cuda, pytest.mark.cuda])]

METRICS = ("ndcg", "dcg", "cg", "mrr", "precision", "recall", "hit_rate", "average_precision")


def linear(rel: float) -> float:
    return rel


def exp2(rel: float) -> float:
    return 2.0**rel - 1.0


def log2_discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


def dcg_of(ranked: Sequence[float], k: int | None, gain: Callable[[float], float] = linear) -> float:
    """DCG@k of labels already in rank order (k=None or k > len = the whole list)."""
    top = ranked if k is None else ranked[:k]
    return sum(gain(r) * log2_discount(i + 1) for i, r in enumerate(top))


def metric_of(
    name: str,
    ranked: Sequence[float],
    k: int | None,
    gain: Callable[[float], float] = linear,
) -> float:
    """One metric of one fixed ordering; queries with nothing relevant score 0 (empty="zero")."""
    n = len(ranked)
    top = list(ranked if k is None else ranked[:k])
    relevant = sum(r > 0 for r in ranked)
    hits = [r > 0 for r in top]
    if name == "dcg":
        return dcg_of(ranked, k, gain)
    if name == "ndcg":
        ideal = dcg_of(sorted(ranked, key=gain, reverse=True), k, gain)
        return dcg_of(ranked, k, gain) / ideal if ideal > 0 else 0.0
    if name == "cg":
        return sum(gain(r) for r in top)
    if name == "mrr":
        return next((1.0 / (i + 1) for i, h in enumerate(hits) if h), 0.0)
    if name == "precision":
        return sum(hits) / (n if k is None else k)
    if name == "recall":
        return sum(hits) / relevant if relevant else 0.0
    if name == "hit_rate":
        return float(any(hits))
    if name == "average_precision":
        if not relevant:
            return 0.0
        total = sum(sum(hits[: i + 1]) / (i + 1) for i, h in enumerate(hits) if h)
        return total / (relevant if k is None else min(relevant, k))
    raise ValueError(name)


def orderings(scores: Sequence[float], relevance: Sequence[float], ties: str) -> list[list[float]]:
    """The label sequences a tie mode ranks by (several only for ``ties="average"``)."""
    n = len(scores)
    if ties == "first":
        keys = [(-scores[i], i) for i in range(n)]
    elif ties == "worst":
        keys = [(-scores[i], relevance[i], i) for i in range(n)]
    elif ties == "best":
        keys = [(-scores[i], -relevance[i], i) for i in range(n)]
    elif ties == "average":
        groups = [
            [relevance[i] for i in range(n) if scores[i] == value]
            for value in sorted(set(scores), reverse=True)
        ]
        return [
            [r for part in choice for r in part]
            for choice in itertools.product(*(list(itertools.permutations(g)) for g in groups))
        ]
    else:
        raise ValueError(ties)
    return [[relevance[i] for i in sorted(range(n), key=lambda i: keys[i])]]


def brute_force(
    name: str,
    scores: Sequence[float],
    relevance: Sequence[float],
    k: int | None,
    *,
    ties: str = "average",
    gain: Callable[[float], float] = linear,
) -> float:
    """Mean of the metric over the orderings of ``ties`` (exact for "average" on small lists)."""
    values = [metric_of(name, ranked, k, gain) for ranked in orderings(scores, relevance, ties)]
    return sum(values) / len(values)


def tie_range(
    name: str, scores: Sequence[float], relevance: Sequence[float], k: int | None
) -> tuple[float, float]:
    """(min, max) of the metric over every ordering of the tied items."""
    values = [metric_of(name, ranked, k) for ranked in orderings(scores, relevance, "average")]
    return min(values), max(values)
