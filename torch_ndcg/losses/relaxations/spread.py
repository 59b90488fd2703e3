r"""The temperature of a relaxation that scales with its list: :math:`\tau = \mathrm{std}(s)\,\sqrt n`
over the ``n`` real scores of each list, the same relaxation at every finite score scale.

The relaxation depends on the scores only through :math:`s / \tau`, so each list is first
divided by a power of two ``u`` near its largest magnitude (exact: no score changes but its
exponent) and τ is computed from the quotients. The spread, the sums of the relaxation and their
gradients then stay within a few units at any scale, where in the scores' own units the variance
overflows float32 beyond a standard deviation of about 1.8e19 and underflows below about 1e-19.
Dividing by a power of two commutes with every rounding (short of subnormal numbers), so at
ordinary scales values and gradients are, bit for bit, those of the scores themselves.

A list whose real scores all tie (a zero-initialised model gives such lists) has no scale:
every τ gives it the same uniform rows and the same value, and only its gradient's size, which
is proportional to 1/τ, depends on τ. It gets the rule at unit spread, τ = √n, so that its
gradient has the size a unit-spread list's has, not the 1/τ of a τ near 0.
"""

from __future__ import annotations

import torch
from torch import Tensor


def unit_spread(scores: Tensor, valid: Tensor) -> tuple[Tensor, Tensor]:
    r"""``(scores / u, τ / u)`` for ``temperature="auto"``: ``u`` ``[B, 1]`` a power of two per list
    (no gradient), ``τ = std(s)·√n`` (population standard deviation over the ``n`` real items,
    without gradient), or ``τ = √n`` (``u = 1``) for a list whose real scores all tie. The first
    is differentiable in ``scores`` (autograd divides the gradient by ``u``, exactly)."""
    s = scores.detach()
    high = torch.where(valid, s, -torch.inf).amax(-1, keepdim=True)
    low = torch.where(valid, s, torch.inf).amin(-1, keepdim=True)
    spread = high > low  # False: every real score ties, or the list has fewer than two
    largest = torch.where(spread, torch.maximum(high.abs(), low.abs()), torch.ones_like(high))
    unit = torch.exp2(torch.floor(torch.log2(largest)))  # at most largest: quotients below 2 in magnitude
    unit = torch.where(spread, unit, torch.ones_like(unit))
    z = s / unit
    v = valid.to(s.dtype)
    n = v.sum(-1, keepdim=True)
    mean = (z * v).sum(-1, keepdim=True) / n.clamp(min=1)
    variance = (((z - mean) * v) ** 2).sum(-1, keepdim=True) / n.clamp(min=1)
    tau = torch.where(spread, variance * n, n.clamp(min=1)).sqrt()
    return scores / unit, tau
