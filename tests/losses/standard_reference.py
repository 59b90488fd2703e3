"""Plain-Python oracles of the standard ranking losses, one list at a time, straight from the papers."""

from __future__ import annotations

import math


def _log_softmax(x: list[float]) -> list[float]:
    top = max(x)
    norm = top + math.log(sum(math.exp(v - top) for v in x))
    return [v - norm for v in x]


def listnet(s, g):
    if not s:
        return 0.0
    target = [math.exp(v) for v in _log_softmax(g)]
    return -sum(t * p for t, p in zip(target, _log_softmax(s)))


def softmax(s, g):
    total = sum(g)
    if not s or total == 0:
        return 0.0
    return -sum(v / total * p for v, p in zip(g, _log_softmax(s)))


def listmle(s, g):
    order = sorted(range(len(s)), key=lambda i: -g[i])  # stable: ties by index
    ranked = [s[i] for i in order]
    return sum(-_log_softmax(ranked[i:])[0] for i in range(len(ranked)))


def _pairs(g):
    return [(i, j) for i in range(len(g)) for j in range(len(g)) if g[i] > g[j]]


def ranknet(s, g, sigma=1.0):
    pairs = _pairs(g)
    return sum(math.log1p(math.exp(-sigma * (s[i] - s[j]))) for i, j in pairs) / max(len(pairs), 1)


def hinge(s, g, margin=1.0):
    pairs = _pairs(g)
    return sum(max(0.0, margin - (s[i] - s[j])) for i, j in pairs) / max(len(pairs), 1)


def lambda_loss(s, g, k=None, weighting="ndcg_loss2pp", sigma=1.0, mu=10.0, discount=lambda r: 1 / math.log2(1 + r)):
    """``g`` are gains; ranks by decreasing score, ties by index; IDCG@k from the sorted gains."""
    order = sorted(range(len(s)), key=lambda i: -s[i])
    rank = {item: position + 1 for position, item in enumerate(order)}
    depth = len(s) if k is None else min(k, len(s))
    idcg = sum(v * discount(r + 1) for r, v in enumerate(sorted(g, reverse=True)[:depth]))
    big_g = [v / idcg if idcg > 0 else 0.0 for v in g]
    total = 0.0
    for i, j in _pairs(g):
        if rank[i] > depth or rank[j] > depth:
            continue
        gap = abs(rank[i] - rank[j])
        loss2 = abs(big_g[i] - big_g[j]) * abs(discount(gap) - discount(gap + 1))
        lambdarank = abs(big_g[i] - big_g[j]) * abs(discount(rank[i]) - discount(rank[j]))
        w = {"none": 1.0, "lambdarank": lambdarank, "ndcg_loss2": loss2, "ndcg_loss2pp": mu * loss2 + lambdarank}[weighting]
        total += -w * math.log2(1 / (1 + math.exp(-sigma * (s[i] - s[j]))))
    return total
