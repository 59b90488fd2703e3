r"""Triton kernels for NeuralNDCG's streaming Sinkhorn: the block primitives of
:mod:`torch_ndcg.losses.relaxations.blocks`, fused, behind the same signatures.

NeuralSort's log-kernel ``L_ij = r_i s_j + a_j`` (``r_i = (n + 1 − 2i)/τ``, ``a_j = −A_j/τ``) and
every Sinkhorn iterate ``L_ij + u_i + w_j`` are outer products plus vectors, so a program
rebuilds its tile of ``x_i y_j + z_j`` from three ``[N]`` vectors in registers, never reads or
writes an N × N matrix, and keeps the log-sum-exp *online* across column blocks (running
maximum, rescaled running sum), so one pass suffices. Each program owns one list's block of
rows; the column-indexed gradients are summed by a second kernel whose programs own blocks of
columns, so every sum has one writer and results are deterministic (no atomics).

Contracts (``[B, N]`` tensors; ``z = −inf`` marks a missing column; see the losses module):

* ``lse_outer(x, y, z, h=None) -> (f, m)``: ``f_i = log Σ_j exp(x_i y_j + z_j)``,
  ``m_i = Σ_j W_ij h_j`` with ``W_ij = exp(x_i y_j + z_j − f_i)``; a row without columns has
  ``f_i = −inf``, ``m_i = 0``.
* ``lse_outer_backward(x, y, z, f, grad_f, mean=None) -> (gx, gy, gz)``, ``mean = (h, m, grad_m)``, with
  ``G_ij = W_ij (α_i + grad_m_i h_j)``, ``α = grad_f − grad_m m``: ``gx_i = Σ_j G_ij y_j``,
  ``gy_j = Σ_i G_ij x_i``, ``gz_j = Σ_i G_ij``; rows with ``f_i = ±inf`` weigh nothing.
* ``abs_diff_sum(s, valid) -> A``, ``A_j = Σ_m v_m |s_j − s_m|``, and its backward
  ``gs_k = Σ_m v_m (grad_a_k + grad_a_m) sign(s_k − s_m)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import triton
import triton.language as tl
from torch import Tensor

from .launch import compute_dtype, contiguous, launch

if TYPE_CHECKING:  # the record of the interface these kernels implement (no import upwards at run time)
    from ..losses.relaxations.blocks import WeightedMean

@triton.jit(do_not_specialize=["n_rows", "n_cols"])
def _lse_outer(
    x_ptr, y_ptr, z_ptr, h_ptr, f_ptr, m_ptr, n_rows, n_cols,
    BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, HAS_H: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = f_ptr.dtype.element_ty
    x_i = tl.load(x_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype)
    top = tl.full([BLOCK_I], float("-inf"), dtype)
    total = tl.zeros([BLOCK_I], dtype=dtype)
    weighted = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n_cols, BLOCK_J):
        j = start + tl.arange(0, BLOCK_J)
        y_j = tl.load(y_ptr + b * n_cols + j, mask=j < n_cols, other=0.0).to(dtype)
        z_j = tl.load(z_ptr + b * n_cols + j, mask=j < n_cols, other=float("-inf")).to(dtype)
        t = x_i[:, None] * y_j[None, :] + z_j[None, :]
        new_top = tl.maximum(top, tl.max(t, axis=1))
        # Until a row meets an existing column its maximum is -inf: shift by 0 there, so that
        # exp(-inf - shift) is 0 and never exp(-inf + inf) = NaN.
        shift = tl.where(new_top == float("-inf"), 0.0, new_top)
        scale = tl.exp(top - shift)
        p = tl.exp(t - shift[:, None])
        total = total * scale + tl.sum(p, axis=1)
        if HAS_H:
            h_j = tl.load(h_ptr + b * n_cols + j, mask=j < n_cols, other=0.0).to(dtype)
            weighted = weighted * scale + tl.sum(p * h_j[None, :], axis=1)
        top = new_top
    some = total > 0
    safe = tl.where(some, total, 1.0)
    f = tl.where(some, tl.where(top == float("-inf"), 0.0, top) + tl.log(safe), float("-inf"))
    tl.store(f_ptr + b * n_rows + i, f, mask=i < n_rows)
    if HAS_H:
        tl.store(m_ptr + b * n_rows + i, tl.where(some, weighted / safe, 0.0), mask=i < n_rows)


@triton.jit(do_not_specialize=["n_rows", "n_cols"])
def _lse_outer_grad_rows(
    x_ptr, y_ptr, z_ptr, h_ptr, f_ptr, alpha_ptr, gm_ptr, gx_ptr, inv_ptr, n_rows, n_cols,
    BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, HAS_H: tl.constexpr,
):  # fmt: skip
    """``gx_i = α_i Σ_j W_ij y_j + grad_m_i Σ_j W_ij h_j y_j``, and each row's ``1 / Σ_j exp(t_ij − f_i)``.

    ``f`` rounds to about ``|f|·ε`` (``|f|`` reaches thousands on long lists), which would scale a
    whole row of ``exp(t − f)`` by ``1 ± |f|·ε``; the Sinkhorn backward amplifies such unnormalised
    rows, so the weights are renormalised by their own sum, as a softmax would be.
    """
    b = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = gx_ptr.dtype.element_ty
    x_i = tl.load(x_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype)
    f_i = tl.load(f_ptr + b * n_rows + i, mask=i < n_rows, other=float("inf")).to(dtype)
    ws = tl.zeros([BLOCK_I], dtype=dtype)
    wy = tl.zeros([BLOCK_I], dtype=dtype)
    why = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n_cols, BLOCK_J):
        j = start + tl.arange(0, BLOCK_J)
        y_j = tl.load(y_ptr + b * n_cols + j, mask=j < n_cols, other=0.0).to(dtype)
        z_j = tl.load(z_ptr + b * n_cols + j, mask=j < n_cols, other=float("-inf")).to(dtype)
        w = tl.exp(x_i[:, None] * y_j[None, :] + z_j[None, :] - f_i[:, None])
        ws += tl.sum(w, axis=1)
        wy += tl.sum(w * y_j[None, :], axis=1)
        if HAS_H:
            h_j = tl.load(h_ptr + b * n_cols + j, mask=j < n_cols, other=0.0).to(dtype)
            why += tl.sum(w * (h_j * y_j)[None, :], axis=1)
    inv = tl.where(ws > 0, 1.0 / tl.where(ws > 0, ws, 1.0), 0.0)  # rows without columns (f = +inf) weigh nothing
    gx = tl.load(alpha_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype) * wy
    if HAS_H:
        gx += tl.load(gm_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype) * why
    tl.store(gx_ptr + b * n_rows + i, gx * inv, mask=i < n_rows)
    tl.store(inv_ptr + b * n_rows + i, inv, mask=i < n_rows)


@triton.jit(do_not_specialize=["n_cols", "n_rows"])
def _lse_outer_grad_cols(
    x_ptr, y_ptr, z_ptr, h_ptr, f_ptr, inv_ptr, alpha_ptr, gm_ptr, gy_ptr, gz_ptr, n_cols, n_rows,
    BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, HAS_H: tl.constexpr,
):  # fmt: skip
    """``gz_j = Σ_i W_ij α_i + h_j Σ_i W_ij grad_m_i``, ``gy_j`` the same with an extra ``x_i``.

    Here a program owns a block of *columns* (``BLOCK_I`` of them) and sweeps the rows.
    """
    b = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = gz_ptr.dtype.element_ty
    y_j = tl.load(y_ptr + b * n_cols + j, mask=j < n_cols, other=0.0).to(dtype)
    z_j = tl.load(z_ptr + b * n_cols + j, mask=j < n_cols, other=float("-inf")).to(dtype)
    wa = tl.zeros([BLOCK_I], dtype=dtype)
    wax = tl.zeros([BLOCK_I], dtype=dtype)
    wg = tl.zeros([BLOCK_I], dtype=dtype)
    wgx = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n_rows, BLOCK_J):
        i = start + tl.arange(0, BLOCK_J)
        x_i = tl.load(x_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype)
        f_i = tl.load(f_ptr + b * n_rows + i, mask=i < n_rows, other=float("inf")).to(dtype)
        a_i = tl.load(alpha_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype)
        inv_i = tl.load(inv_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype)
        w = tl.exp(y_j[:, None] * x_i[None, :] + z_j[:, None] - f_i[None, :]) * inv_i[None, :]
        wa += tl.sum(w * a_i[None, :], axis=1)
        wax += tl.sum(w * (a_i * x_i)[None, :], axis=1)
        if HAS_H:
            g_i = tl.load(gm_ptr + b * n_rows + i, mask=i < n_rows, other=0.0).to(dtype)
            wg += tl.sum(w * g_i[None, :], axis=1)
            wgx += tl.sum(w * (g_i * x_i)[None, :], axis=1)
    if HAS_H:
        h_j = tl.load(h_ptr + b * n_cols + j, mask=j < n_cols, other=0.0).to(dtype)
        wa += h_j * wg
        wax += h_j * wgx
    tl.store(gz_ptr + b * n_cols + j, wa, mask=j < n_cols)
    tl.store(gy_ptr + b * n_cols + j, wax, mask=j < n_cols)


@triton.jit(do_not_specialize=["n", "n_cols"])
def _abs_diff_sum(
    s_ptr, v_ptr, g_ptr, out_ptr, n, n_cols, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, BACKWARD: tl.constexpr
):
    """Forward: ``Σ_m v_m |s_i − s_m|``; backward: ``Σ_m v_m (g_i + g_m) sign(s_i − s_m)``."""
    row = tl.program_id(0).to(tl.int64) * n
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = out_ptr.dtype.element_ty
    s_i = tl.load(s_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    signs = tl.zeros([BLOCK_I], dtype=dtype)
    total = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n, BLOCK_J):
        j = start + tl.arange(0, BLOCK_J)
        s_j = tl.load(s_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        v_j = tl.load(v_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        diff = s_i[:, None] - s_j[None, :]
        if BACKWARD:
            g_j = tl.load(g_ptr + row + j, mask=j < n, other=0.0).to(dtype)
            sign = tl.where(diff > 0, 1.0, 0.0) - tl.where(diff < 0, 1.0, 0.0)
            signs += tl.sum(sign * v_j[None, :], axis=1)
            total += tl.sum(sign * (v_j * g_j)[None, :], axis=1)
        else:
            total += tl.sum(tl.abs(diff) * v_j[None, :], axis=1)
    if BACKWARD:
        total += tl.load(g_ptr + row + i, mask=i < n, other=0.0).to(dtype) * signs
    tl.store(out_ptr + row + i, total, mask=i < n)


def _empty(like: Tensor) -> Tensor:
    return torch.empty(like.shape, dtype=compute_dtype(like), device=like.device)


def lse_outer(
    x: Tensor, y: Tensor, z: Tensor, h: Tensor | None = None, *, block: tuple[int, int] | None = None
) -> tuple[Tensor, Tensor | None]:
    x, y, z = contiguous(x, y, z)
    f = _empty(x)
    m = None if h is None else _empty(x)
    launch(
        _lse_outer, x.shape[1], y.shape[1], x, y, z, z if h is None else h.contiguous(), f,
        f if m is None else m, block=block, HAS_H=h is not None,
    )  # fmt: skip
    return f, m


def lse_outer_backward(
    x: Tensor, y: Tensor, z: Tensor, f: Tensor, grad_f: Tensor, mean: WeightedMean | None = None, *,
    block: tuple[int, int] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    h, m, grad_m = (None, None, None) if mean is None else mean
    # Rows whose f is -inf have no column at all; +inf makes their weights exactly 0, not NaN.
    f = f.masked_fill(f == -torch.inf, torch.inf)
    alpha = grad_f if grad_m is None else grad_f - grad_m * m
    has_h = grad_m is not None
    x, y, z, f, alpha = contiguous(x, y, z, f, alpha)
    h_, gm = (h.contiguous(), grad_m.contiguous()) if has_h else (z, alpha)
    gx, gy, gz, inv = _empty(x), _empty(y), _empty(y), _empty(x)
    rows, cols = x.shape[1], y.shape[1]
    launch(_lse_outer_grad_rows, rows, cols, x, y, z, h_, f, alpha, gm, gx, inv, block=block, HAS_H=has_h)
    launch(_lse_outer_grad_cols, cols, rows, x, y, z, h_, f, inv, alpha, gm, gy, gz, block=block, HAS_H=has_h)
    return gx, gy, gz


def abs_diff_sum(s: Tensor, valid: Tensor, *, block: tuple[int, int] | None = None) -> Tensor:
    s, valid = contiguous(s, valid)
    out = _empty(s)
    launch(_abs_diff_sum, s.shape[1], s.shape[1], s, valid, s, out, block=block, BACKWARD=False)
    return out


def abs_diff_sum_backward(
    s: Tensor, valid: Tensor, grad_a: Tensor, *, block: tuple[int, int] | None = None
) -> Tensor:
    s, valid, grad_a = contiguous(s, valid, grad_a)
    out = _empty(s)
    launch(_abs_diff_sum, s.shape[1], s.shape[1], s, valid, grad_a, out, block=block, BACKWARD=True)
    return out
