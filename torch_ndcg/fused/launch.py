"""Launch helpers shared by the kernels: one program per (list, block of rows)."""

from __future__ import annotations

import torch
import triton
from torch import Tensor


def tile_shape(n: int) -> tuple[int, int]:
    """(row, column) tile for lists of length ``n``.

    Bucketed so that only a handful of variants is ever compiled (never one per N): short
    lists get a narrow tile so masking wastes little; long lists 64 × 64, a tile of float32
    partial results that stays in registers.
    """
    if n <= 16:
        return 16, 16
    if n <= 32:
        return 32, 32
    return 64, 64


def compute_dtype(x: Tensor) -> torch.dtype:
    """float32 compute (float64 for float64 inputs); half precision is widened on load."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def launch(kernel, rows: int, cols: int, *args, block: tuple[int, int] | None = None, **constexprs) -> None:
    """Run ``kernel`` on a ``[lists, ceil(rows / BLOCK_I)]`` grid; the first arg fixes ``lists``.

    ``rows`` and ``cols`` go to the kernel as runtime arguments, so every length reuses the
    same compiled kernel and ragged edges are masked inside it.
    """
    block_i, block_j = block or tile_shape(max(rows, cols))
    grid = (args[0].shape[0], triton.cdiv(rows, block_i))
    kernel[grid](*args, rows, cols, BLOCK_I=block_i, BLOCK_J=block_j, **constexprs)


def contiguous(*tensors: Tensor) -> list[Tensor]:
    return [t.contiguous() for t in tensors]
