"""Percentile bootstrap confidence intervals of a mean over queries, vectorised over leading axes."""


from typing import NamedTuple

import torch
from torch import Tensor

from .checks import check_count, check_generator, check_open_unit, per_query_values

__all__ = ["Interval", "bootstrap_interval"]


class Interval(NamedTuple):
    """The mean over queries and its confidence interval, each shaped as the values' leading axes."""

    mean: Tensor
    low: Tensor
    high: Tensor


def bootstrap_interval(
    values: Tensor,
    *,
    confidence: float = 0.95,
    resamples: int = 9_999,
    generator: torch.Generator | None = None,
) -> Interval:
    r"""Percentile bootstrap interval of the mean of ``values`` over its last (query) axis.

    Draws ``resamples`` samples of the n queries with replacement (the same draws for every
    leading index, so intervals of several systems or measures come from the same resampled
    query sets), takes each sample's mean, and returns the (1 − c)/2 and (1 + c)/2 quantiles of
    those means, linearly interpolated (``scipy.stats.bootstrap(..., method="percentile")`` with
    its default quantiles; Efron & Tibshirani 1993, ch. 13). For a paired comparison pass the
    per-query differences ``a − b``.

    Assumes the queries are an independent sample from the population of queries the interval
    speaks about; with few queries (n ≲ 20) the percentile interval is too narrow. Ties and
    zeros need no handling. The interval is random: seed ``generator`` to repeat it; its end
    points vary between seeds by about the bootstrap standard error over √resamples.

    Args:
        values: ``[..., Q]`` finite per-query values (float64 inside; a NaN or infinity is a
            ``ValueError``); ``[0, Q]`` gives empty results.
        confidence: the interval's coverage c, in (0, 1); default 0.95.
        resamples: how many bootstrap samples, a positive int; default 9,999 (scipy's).
        generator: the ``torch.Generator`` drawing the samples; ``None`` uses torch's global one.

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import bootstrap_interval
        >>> values = torch.tensor([0.2, 0.4, 0.5, 0.7, 0.9])
        >>> interval = bootstrap_interval(values, generator=torch.Generator().manual_seed(0))
        >>> round(float(interval.mean), 2), float(interval.low) < 0.54 < float(interval.high)
        (0.54, True)
    """
    x = per_query_values("values", values)
    if x.shape[-1] < 1:
        raise ValueError("values must hold at least one query")
    check_open_unit("confidence", confidence)
    check_count("resamples", resamples)
    check_generator(generator)
    n = x.shape[-1]
    shape = x.shape[:-1]
    if x.numel() == 0:  # no row to resample: empty results, as the tests give for [0, Q]
        return Interval(x.mean(-1), x.new_empty(shape), x.new_empty(shape))
    flat = x.reshape(-1, n)
    means = []
    # Each resample as counts of every query: a [rows, Q] × [Q, B] product gives all the means.
    chunk = max(1, min(resamples, (1 << 22) // max(n, flat.shape[0])))
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        picks = torch.randint(0, n, (size, n), generator=generator, device="cpu")
        counts = torch.zeros(size, n, dtype=torch.float64).scatter_add_(1, picks, torch.ones(size, n,
                                                                                              dtype=torch.float64))
        means.append(flat @ counts.to(x.device).T / n)
    distribution = torch.cat(means, -1)
    tail = (1 - confidence) / 2
    bounds = torch.quantile(distribution, torch.tensor([tail, 1 - tail], dtype=torch.float64, device=x.device), dim=-1)
    return Interval(x.mean(-1), bounds[0].reshape(shape), bounds[1].reshape(shape))
