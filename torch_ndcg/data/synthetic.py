"""A synthetic learning-to-rank data set that behaves like web search data and needs no download.

Each item has Gaussian features with a per-query shift (queries differ, as real queries do). A
hidden teacher, a random two-layer tanh network, scores every item; a per-query offset and
Gaussian noise are added, and the result is cut into graded labels 0–4 at fixed quantiles, so
most items are irrelevant (label 0) and few are perfect (label 4), and some queries have no
relevant item at all. A scorer can learn the teacher from the features, but never perfectly
(the noise is unexplainable), which leaves room between a random and a trained ranker.
"""

from __future__ import annotations

import torch

from .batching import RankingDataset

# Share of items at or below each grade 0..3; grade 4 gets the rest. Close to MSLR-WEB10K's
# skew (about half 0, a third 1, a few percent 3 and 4).
LABEL_QUANTILES = (0.55, 0.85, 0.95, 0.985)
SPLIT_NAMES = ("train", "vali", "test")
# Standard deviation of log(list length) when lengths are log-normal: a long tail like web search
# lists, where most queries have a few dozen candidates and a few have hundreds.
LOG_LENGTH_SPREAD = 0.9


def synthetic_letor(
    num_queries: tuple[int, int, int] = (600, 200, 200),
    *,
    num_features: int = 32,
    list_length: tuple[int, int] = (10, 50),
    length_median: int | None = None,
    noise: float = 0.5,
    hidden: int = 32,
    seed: int = 0,
) -> dict[str, RankingDataset]:
    """Train / validation / test splits from one hidden teacher, deterministic by ``seed``.

    Args:
        num_queries: queries in the ``train``, ``vali`` and ``test`` splits.
        num_features: ``F``, features per item.
        list_length: ``(min, max)`` items per query, drawn uniformly unless ``length_median`` is given.
        length_median: draw lengths log-normally instead, ``round(median · e^{0.9 Z})`` with
            ``Z ~ N(0, 1)``, clipped to ``list_length``: MSLR-like batches, most lists short and a
            few long (``list_length=(2, 240), length_median=30`` is what the losses benchmark uses).
        noise: standard deviation of the label noise, relative to the teacher's (about 1).
        hidden: width of the teacher network.
        seed: the same seed gives the same data, split for split.

    Returns:
        ``{"train": ..., "vali": ..., "test": ...}`` of :class:`RankingDataset`.

    Example:
        >>> splits = synthetic_letor((8, 2, 2), num_features=4, list_length=(5, 10))
        >>> sorted(splits), splits["train"].num_features
        (['test', 'train', 'vali'], 4)
    """
    _check_counts("num_queries", num_queries, 3)
    _check_counts("list_length", list_length, 2)
    low, high = list_length
    if low > high:
        raise ValueError(f"list_length must be (min, max) with min ≤ max, got {list_length}")
    if length_median is not None and (
        isinstance(length_median, bool) or not isinstance(length_median, int) or not low <= length_median <= high
    ):
        raise ValueError(f"length_median must be None or an int within list_length {list_length}, got {length_median!r}")
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0:
        raise ValueError(f"noise must be a number ≥ 0, got {noise!r}")
    for name, value in (("num_features", num_features), ("hidden", hidden)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int ≥ 1, got {value!r}")

    gen = torch.Generator().manual_seed(seed)
    w1 = torch.randn(num_features, hidden, generator=gen) / num_features**0.5
    b1 = 0.5 * torch.randn(hidden, generator=gen)
    w2 = torch.randn(hidden, generator=gen) / hidden**0.5

    total = sum(num_queries)
    if length_median is None:
        lengths = torch.randint(low, high + 1, (total,), generator=gen)
    else:
        spread = LOG_LENGTH_SPREAD * torch.randn(total, generator=gen, dtype=torch.float64)
        lengths = (length_median * spread.exp()).round().clamp(low, high).long()
    query = torch.repeat_interleave(torch.arange(total), lengths)
    shift = 0.5 * torch.randn(total, num_features, generator=gen)
    features = torch.randn(len(query), num_features, generator=gen) + shift[query]
    teacher = torch.tanh(features @ w1 + b1) @ w2
    teacher = (teacher - teacher.mean()) / teacher.std()
    offset = 0.5 * torch.randn(total, generator=gen)
    target = teacher + offset[query] + noise * torch.randn(len(query), generator=gen)
    cuts = torch.quantile(target, torch.tensor(LABEL_QUANTILES))
    labels = torch.bucketize(target, cuts).to(torch.float32)

    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
    splits = {}
    first = 0
    for name, count in zip(SPLIT_NAMES, num_queries):
        lo, hi = int(offsets[first]), int(offsets[first + count])
        splits[name] = RankingDataset(
            features[lo:hi], labels[lo:hi], offsets[first : first + count + 1] - lo, [str(q) for q in range(first, first + count)]
        )
        first += count
    return splits


def _check_counts(name: str, value: object, size: int) -> None:
    if (
        not isinstance(value, (tuple, list))
        or len(value) != size
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)
    ):
        raise ValueError(f"{name} must be {size} ints ≥ 1, got {value!r}")
