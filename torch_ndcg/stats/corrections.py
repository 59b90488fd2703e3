"""Corrections of p-values for multiple comparisons, over the last axis (one family per row)."""

from __future__ import annotations

import torch
from torch import Tensor

from .checks import pvalue_table

__all__ = ["bonferroni", "holm"]

CORRECTIONS = ("none", "bonferroni", "holm")


def bonferroni(pvalues: Tensor) -> Tensor:
    r"""Bonferroni-adjusted p-values: :math:`\min(1, m\,p_i)` within each family of m tests (last axis).

    Controls the family-wise error rate under any dependence between the tests. NaN p-values
    stay NaN and do not count in m; a p-value outside [0, 1] is refused (``ValueError``).

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import bonferroni
        >>> bonferroni(torch.tensor([0.01, 0.02, 0.5]))
        tensor([0.0300, 0.0600, 1.0000], dtype=torch.float64)
    """
    p = pvalue_table(pvalues)
    m = (~torch.isnan(p)).sum(-1, keepdim=True)
    return (p * m).clamp(max=1)


def holm(pvalues: Tensor) -> Tensor:
    r"""Holm's step-down adjusted p-values within each family of m tests (last axis).

    With :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted
    :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1)\,p_{(j)})` (Holm 1979): uniformly
    more powerful than Bonferroni, with the same family-wise guarantee under any dependence.
    NaN p-values stay NaN and do not count in m; a p-value outside [0, 1] is refused (``ValueError``).

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import holm
        >>> holm(torch.tensor([0.01, 0.04, 0.03]))
        tensor([0.0300, 0.0600, 0.0600], dtype=torch.float64)
    """
    p = pvalue_table(pvalues)
    missing = torch.isnan(p)
    m = (~missing).sum(-1, keepdim=True)
    ordered, order = torch.sort(torch.where(missing, torch.full_like(p, 2.0), p), dim=-1, stable=True)
    step = torch.arange(p.shape[-1], dtype=torch.float64, device=p.device)
    scaled = ((m - step) * ordered).clamp(max=1)
    adjusted_sorted = torch.cummax(scaled, dim=-1).values
    adjusted = torch.empty_like(p).scatter_(-1, order, adjusted_sorted)
    return torch.where(missing, p, adjusted)
