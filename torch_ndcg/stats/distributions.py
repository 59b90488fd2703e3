"""The null distributions the significance tests need, in float64 torch (no scipy at run time).

* :func:`student_t_two_sided` — two-sided tail of Student's t, from the regularized incomplete
  beta function: P(|T_ν| ≥ t) = I_{ν/(ν+t²)}(ν/2, 1/2), evaluated by its continued fraction
  (Abramowitz & Stegun 26.5.8) with the modified Lentz method.
  The beta function's logarithm comes from Stirling's series where the arguments are large
  (:func:`log_beta`), so the tail keeps its relative precision at any degrees of freedom.
* :func:`normal_two_sided` — two-sided tail of the standard normal, erfc(|z|/√2): relatively
  precise down to the smallest float64 (2·Φ(−|z|) from ``ndtr`` rounds 1 − Φ(|z|) to 0 for
  |z| > 8.3).
* :func:`signed_rank_pmf` — the exact null distribution of Wilcoxon's signed-rank sum W⁺ for n
  untied, non-zero differences: each rank i enters W⁺ with probability 1/2, independently.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import Tensor

_TINY = 1e-300
_EPSILON = 1e-16
_MAX_TERMS = 10_000


def _beta_continued_fraction(a: Tensor, b: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """The continued fraction of I_x(a, b)·B(a, b)·a / (x^a (1-x)^b), converging for x < (a+1)/(a+b+2);
    ``y`` = 1 − x."""
    one = torch.ones_like(x)
    c = one.clone()
    # 1 − (a+b)·x/(a+1), written so that no two numbers near 1 are subtracted: near the
    # convergence limit (large a, x near 1: Student's t at large df) that difference is tiny.
    d = ((1 - b) + (a + b) * y) / (a + 1)
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


_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)
#: Above this argument, Stirling's series to x⁻⁷ is exact in float64 (its next term, 691/(360360 x¹¹), is
#: below 1e-16 of the series' leading 1/(12x)).
_STIRLING_FROM = 10.0


def _stirling_remainder(x: Tensor) -> Tensor:
    """δ(x) = lgamma(x) − ((x − ½)·log x − x + ½·log 2π), by its series 1/(12x) − 1/(360x³) + …"""
    inverse = 1 / x
    square = inverse * inverse
    return inverse * (1 / 12 - square * (1 / 360 - square * (1 / 1260 - square / 1680)))


def log_beta(a: Tensor, b: Tensor) -> Tensor:
    """log B(a, b) = lgamma(a) + lgamma(b) − lgamma(a + b), elementwise in float64.

    For a large argument the three lgamma terms are large and nearly cancel (lgamma(5e5) ≈ 6e6,
    so float64 keeps only about 1e-10 of their difference). There, with b the smaller argument
    and a ≥ 10, Stirling's series gives the difference without the cancellation:
    lgamma(a) − lgamma(a + b) = −(a − ½)·log1p(b/a) − b·log(a + b) + b + δ(a) − δ(a + b).
    """
    a, b = torch.broadcast_tensors(torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64))
    small, large = torch.minimum(a, b), torch.maximum(a, b)
    direct = torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b)
    stirling_ok = large >= _STIRLING_FROM
    safe = torch.where(stirling_ok, large, torch.full_like(large, _STIRLING_FROM))
    ratio = (-(safe - 0.5) * torch.log1p(small / safe) - small * torch.log(safe + small) + small
             + _stirling_remainder(safe) - _stirling_remainder(safe + small))
    return torch.where(stirling_ok, torch.lgamma(small) + ratio, direct)


def regularized_beta(a: Tensor, b: Tensor, x: Tensor, one_minus_x: Tensor | None = None) -> Tensor:
    """I_x(a, b), the regularized incomplete beta function, elementwise in float64.

    ``one_minus_x`` may be given when 1 − x is known more accurately than by subtraction (it is
    for Student's t, whose x = ν/(ν+t²) is close to 1 for small t).
    """
    a, b, x = (torch.as_tensor(v, dtype=torch.float64) for v in (a, b, x))
    a, b, x = torch.broadcast_tensors(a, b, x)
    y = 1 - x if one_minus_x is None else torch.as_tensor(one_minus_x, dtype=torch.float64).expand_as(x)
    # log1p of the smaller of x and 1 − x: log of a number near 1 keeps its precision.
    log_x = torch.where(x > 0.5, torch.log1p(-y), torch.log(x))
    log_y = torch.where(y > 0.5, torch.log1p(-x), torch.log(y))
    log_front = a * log_x + b * log_y - log_beta(a, b)
    front = torch.exp(log_front)
    direct = x < (a + 1) / (a + b + 2)
    # The fraction converges fast on one side of the mean; the other side uses I_x(a,b) = 1 − I_{1−x}(b,a).
    xa, xb = torch.where(direct, x, y), torch.where(direct, y, x)
    ya, yb = torch.where(direct, a, b), torch.where(direct, b, a)
    fraction = _beta_continued_fraction(ya, yb, xa.clamp(min=0, max=1), xb.clamp(min=0, max=1))
    tail = front * fraction / ya
    value = torch.where(direct, tail, 1 - tail)
    value = torch.where(x <= 0, torch.zeros_like(value), value)
    return torch.where(y <= 0, torch.ones_like(value), value)


#: From this many degrees of freedom on, the t tail comes from its expansion in 1/ν (Fisher 1925):
#: the continued fraction's terms there are differences of numbers within 1/ν of each other and lose
#: about ν·1e-16 of their value, while the expansion's first neglected term, about t⁸/(32ν²) of the
#: tail, stays below 1e-7 for every t whose tail a float64 holds (|t| < 39).
EXPANSION_FROM = 1e9


def student_t_two_sided(t: Tensor, df: Tensor) -> Tensor:
    r"""P(|T_df| ≥ |t|) for Student's t with ``df`` degrees of freedom (NaN stays NaN; |t| = ∞ gives 0).

    Below :data:`EXPANSION_FROM` degrees of freedom, I_{ν/(ν+t²)}(ν/2, 1/2); from there on, the
    density's expansion f_ν(t) = φ(t)(1 + (t⁴ − 2t² − 1)/(4ν) + O(ν⁻²)) integrated over the tail:

    .. math:: P(|T_\nu| \ge t) = \operatorname{erfc}(t/\sqrt2) + 2\varphi(t)\,\frac{t^3 + t}{4\nu} + O(\nu^{-2})
    """
    t = torch.as_tensor(t, dtype=torch.float64)
    df = torch.as_tensor(df, dtype=torch.float64)
    t, df = torch.broadcast_tensors(t, df)
    t2 = t * t
    finite = torch.isfinite(t2)
    t2_safe = torch.where(finite, t2, torch.zeros_like(t2))
    x = df / (df + t2_safe)
    large = df >= EXPANSION_FROM
    df_beta = torch.where(large, torch.ones_like(df), df)  # (those rows take the expansion)
    p = regularized_beta(df_beta / 2, torch.full_like(df, 0.5), torch.where(large, torch.ones_like(x), x),
                         torch.where(large, torch.zeros_like(x), t2_safe / (df + t2_safe)))
    size = t2_safe.sqrt()
    density = torch.exp(-t2_safe / 2) / math.sqrt(2 * math.pi)
    expansion = torch.special.erfc(size / math.sqrt(2)) + 2 * density * (size * t2_safe + size) / (4 * df)
    p = torch.where(large, expansion, p)
    p = torch.where(finite, p, torch.zeros_like(p))
    return torch.where(torch.isnan(t), t, p)


def normal_two_sided(z: Tensor) -> Tensor:
    """P(|Z| ≥ |z|) = erfc(|z|/√2) for a standard normal Z (relatively precise down to 1e-308)."""
    z = torch.as_tensor(z, dtype=torch.float64)
    return torch.special.erfc(z.abs() / math.sqrt(2)).clamp(max=1)


@functools.lru_cache(maxsize=64)
def _signed_rank_pmf(n: int) -> np.ndarray:
    # Counts of the sign vectors giving each W⁺, then one division by 2ⁿ: the counts stay below
    # 2ⁿ, inside float64's range for n < 1024, and each is a sum of positive terms (relative error
    # about n·1e-16, no cancellation).
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    top = 0
    for rank in range(1, n + 1):  # W⁺ gains ``rank`` or not
        top += rank
        counts[rank: top + 1] += counts[: top + 1 - rank]  # (numpy copies the overlapping right side first)
    pmf = np.ldexp(counts, -n)
    pmf.setflags(write=False)
    return pmf


def signed_rank_pmf(n: int) -> Tensor:
    """``[n(n+1)/2 + 1]`` float64: P(W⁺ = w) for w = 0, 1, …, under the null of n untied non-zero differences."""
    return torch.from_numpy(_signed_rank_pmf(int(n)).copy())
