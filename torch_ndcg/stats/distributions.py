"""The null distributions the significance tests need, in float64 torch (no scipy at run time).

* :func:`student_t_two_sided` — two-sided tail of Student's t, from the regularized incomplete
  beta function: P(|T_ν| ≥ t) = I_{ν/(ν+t²)}(ν/2, 1/2), evaluated by its continued fraction
  (Abramowitz & Stegun 26.5.8) with the modified Lentz method.
* :func:`normal_two_sided` — two-sided tail of the standard normal, from ``torch.special.ndtr``.
* :func:`signed_rank_pmf` — the exact null distribution of Wilcoxon's signed-rank sum W⁺ for n
  untied, non-zero differences: each rank i enters W⁺ with probability 1/2, independently.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from torch import Tensor

_TINY = 1e-300
_EPSILON = 1e-16
_MAX_TERMS = 10_000


def _beta_continued_fraction(a: Tensor, b: Tensor, x: Tensor) -> Tensor:
    """The continued fraction of I_x(a, b)·B(a, b)·a / (x^a (1-x)^b), converging for x < (a+1)/(a+b+2)."""
    one = torch.ones_like(x)
    c = one.clone()
    d = 1 - (a + b) * x / (a + 1)
    d = torch.where(d.abs() < _TINY, torch.full_like(d, _TINY), d)
    d = 1 / d
    h = d.clone()
    done = torch.zeros_like(x, dtype=torch.bool)
    for m in range(1, _MAX_TERMS):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = torch.where(d.abs() < _TINY, torch.full_like(d, _TINY), d)
            c = 1 + numerator / c
            c = torch.where(c.abs() < _TINY, torch.full_like(c, _TINY), c)
            d = 1 / d
            step = d * c
            h = torch.where(done, h, h * step)
        done = done | ((step - 1).abs() < _EPSILON)
        if bool(done.all()):
            break
    return h


def regularized_beta(a: Tensor, b: Tensor, x: Tensor, one_minus_x: Tensor | None = None) -> Tensor:
    """I_x(a, b), the regularized incomplete beta function, elementwise in float64.

    ``one_minus_x`` may be given when 1 − x is known more accurately than by subtraction (it is
    for Student's t, whose x = ν/(ν+t²) is close to 1 for small t).
    """
    a, b, x = (torch.as_tensor(v, dtype=torch.float64) for v in (a, b, x))
    a, b, x = torch.broadcast_tensors(a, b, x)
    y = 1 - x if one_minus_x is None else torch.as_tensor(one_minus_x, dtype=torch.float64).expand_as(x)
    log_front = a * torch.log(x) + b * torch.log(y) - (torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b))
    front = torch.exp(log_front)
    direct = x < (a + 1) / (a + b + 2)
    # The fraction converges fast on one side of the mean; the other side uses I_x(a,b) = 1 − I_{1−x}(b,a).
    xa = torch.where(direct, x, y)
    ya, yb = torch.where(direct, a, b), torch.where(direct, b, a)
    safe = xa.clamp(min=0, max=1)
    fraction = _beta_continued_fraction(ya, yb, safe)
    tail = front * fraction / ya
    value = torch.where(direct, tail, 1 - tail)
    value = torch.where(x <= 0, torch.zeros_like(value), value)
    return torch.where(y <= 0, torch.ones_like(value), value)


def student_t_two_sided(t: Tensor, df: Tensor) -> Tensor:
    """P(|T_df| ≥ |t|) for Student's t with ``df`` degrees of freedom (NaN stays NaN; |t| = ∞ gives 0)."""
    t = torch.as_tensor(t, dtype=torch.float64)
    df = torch.as_tensor(df, dtype=torch.float64)
    t2 = t * t
    finite = torch.isfinite(t2)
    t2_safe = torch.where(finite, t2, torch.zeros_like(t2))
    x = df / (df + t2_safe)
    p = regularized_beta(df / 2, torch.full_like(df, 0.5), x, t2_safe / (df + t2_safe))
    p = torch.where(finite, p, torch.zeros_like(p))
    return torch.where(torch.isnan(t), t, p)


def normal_two_sided(z: Tensor) -> Tensor:
    """P(|Z| ≥ |z|) for a standard normal Z, clipped to 1."""
    z = torch.as_tensor(z, dtype=torch.float64)
    return (2 * torch.special.ndtr(-z.abs())).clamp(max=1)


@functools.lru_cache(maxsize=64)
def _signed_rank_pmf(n: int) -> np.ndarray:
    pmf = np.ones(1)
    for rank in range(1, n + 1):  # W⁺ gains ``rank`` with probability 1/2
        grown = np.zeros(pmf.size + rank)
        grown[: pmf.size] += pmf
        grown[rank:] += pmf
        pmf = grown / 2
    pmf.setflags(write=False)
    return pmf


def signed_rank_pmf(n: int) -> Tensor:
    """``[n(n+1)/2 + 1]`` float64: P(W⁺ = w) for w = 0, 1, …, under the null of n untied non-zero differences."""
    return torch.from_numpy(_signed_rank_pmf(int(n)).copy())
