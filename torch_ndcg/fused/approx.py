r"""Triton kernels for ApproxNDCG's approximate ranks (Qin, Liu & Li 2010) and their gradient.

Same contract as :func:`torch_ndcg.losses.relaxations.blocks.approx_ranks` and ``approx_ranks_backward``
(``[B, N]`` tensors, ``valid`` 0/1 in the scores' dtype):

.. math::
    \pi_i = 1 + v_i \sum_{j \ne i} v_j\, \sigma\!\left(\frac{s_j - s_i}{\tau}\right),\qquad
    \frac{\partial L}{\partial s_k} = \frac{v_k}{\tau} \sum_{j \ne k} v_j\,
        \sigma'\!\left(\frac{s_j - s_k}{\tau}\right) \left(\bar\pi_j - \bar\pi_k\right)

with :math:`\bar\pi = \partial L / \partial \pi` (σ' is even, so the two places where
:math:`s_k` enters, as the row item and as a column item, combine into one sum). Each program
owns a block of rows of one list and sweeps the list in column blocks, so no N × N tile ever
leaves registers.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import Tensor

from .launch import compute_dtype, contiguous, launch


@triton.jit
def _sigmoid_and_slope(z):
    # exp(-|z|) never overflows, so large |z| gives exactly 0 or 1 without inf/inf.
    e = tl.exp(-tl.abs(z))
    inv = 1.0 / (1.0 + e)
    return tl.where(z >= 0, inv, e * inv), e * inv * inv


@triton.jit(do_not_specialize=["n", "n_cols"])
def _ranks_forward(s_ptr, v_ptr, out_ptr, inv_tau_ptr, n, n_cols, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * n
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = out_ptr.dtype.element_ty
    inv_tau = tl.load(inv_tau_ptr)
    s_i = tl.load(s_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    v_i = tl.load(v_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    total = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n, BLOCK_J):
        j = start + tl.arange(0, BLOCK_J)
        s_j = tl.load(s_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        v_j = tl.load(v_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        sig, _ = _sigmoid_and_slope((s_j[None, :] - s_i[:, None]) * inv_tau)
        total += tl.sum(sig * tl.where(i[:, None] != j[None, :], v_j[None, :], 0.0), axis=1)
    tl.store(out_ptr + row + i, 1.0 + v_i * total, mask=i < n)


@triton.jit(do_not_specialize=["n", "n_cols"])
def _ranks_backward(
    s_ptr, v_ptr, g_ptr, out_ptr, inv_tau_ptr, n, n_cols, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64) * n
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = out_ptr.dtype.element_ty
    inv_tau = tl.load(inv_tau_ptr)
    s_i = tl.load(s_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    v_i = tl.load(v_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    g_i = tl.load(g_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    weighted = tl.zeros([BLOCK_I], dtype=dtype)
    plain = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n, BLOCK_J):
        j = start + tl.arange(0, BLOCK_J)
        s_j = tl.load(s_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        v_j = tl.load(v_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        g_j = tl.load(g_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        _, slope = _sigmoid_and_slope((s_j[None, :] - s_i[:, None]) * inv_tau)
        slope = slope * tl.where(i[:, None] != j[None, :], v_j[None, :], 0.0)
        weighted += tl.sum(slope * g_j[None, :], axis=1)
        plain += tl.sum(slope, axis=1)
    tl.store(out_ptr + row + i, v_i * inv_tau * (weighted - g_i * plain), mask=i < n)


def _inv_tau(tau: float, out: Tensor) -> Tensor:
    # A tensor, not a Python float: Triton passes Python floats as float32, too coarse for float64.
    return torch.full((1,), 1.0 / tau, dtype=out.dtype, device=out.device)


def approx_ranks(s: Tensor, valid: Tensor, tau: float, *, block: tuple[int, int] | None = None) -> Tensor:
    """``[B, N]`` approximate ranks π (1 at masked items), in float32 (float64 for float64 ``s``)."""
    s, valid = contiguous(s, valid)
    out = torch.empty(s.shape, dtype=compute_dtype(s), device=s.device)
    launch(_ranks_forward, s.shape[1], s.shape[1], s, valid, out, _inv_tau(tau, out), block=block)
    return out


def approx_ranks_backward(
    s: Tensor, valid: Tensor, tau: float, grad_pi: Tensor, *, block: tuple[int, int] | None = None
) -> Tensor:
    """``[B, N]`` gradient of ``Σ grad_pi · π`` with respect to ``s`` (0 at masked items)."""
    s, valid, grad_pi = contiguous(s, valid, grad_pi)
    out = torch.empty(s.shape, dtype=compute_dtype(s), device=s.device)
    launch(_ranks_backward, s.shape[1], s.shape[1], s, valid, grad_pi, out, _inv_tau(tau, out), block=block)
    return out
