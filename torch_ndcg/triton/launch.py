"""Launch helpers shared by the kernels: tile sizes from N, and flattening ``[..., N]`` inputs."""

from __future__ import annotations

import torch
from torch import Tensor


def blocks(n: int) -> tuple[int, int]:
    """(row, column) tile for lists of length ``n``.

    Bucketed so that only a handful of variants is ever compiled (never one per N): small
    lists get a 16-wide tile so masking wastes little; long lists 64 × 64, which keeps a tile
    of float32 partial results in registers.
    """
    if n <= 16:
        return 16, 16
    if n <= 32:
        return 32, 32
    return 64, 64


def flat_lists(scores: Tensor, *per_item: Tensor) -> tuple[Tensor, ...]:
    """``[..., N]`` tensors → contiguous ``[R, N]``, plus the compute dtype.

    Compute is float32 unless the scores are float64. Half-precision scores stay as they are
    (the kernels widen them on load, saving a copy); the other inputs are converted.
    """
    dtype = torch.float64 if scores.dtype == torch.float64 else torch.float32
    n = scores.shape[-1]
    flat = [t.reshape(-1, n).to(dtype).contiguous() for t in per_item]
    return (scores.reshape(-1, n).contiguous(), *flat, dtype)
