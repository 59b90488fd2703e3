r"""Triton kernels for ApproxNDCG's approximate ranks (Qin, Liu & Li 2010) and their gradient.

.. math::
    \pi_i = 1 + v_i \sum_{j \ne i} v_j\, \sigma\!\left(\frac{s_j - s_i}{\tau}\right),\qquad
    \frac{\partial L}{\partial s_k} = \frac{v_k}{\tau} \sum_{j \ne k} v_j\,
        \sigma'\!\left(\frac{s_j - s_k}{\tau}\right) \left(\bar\pi_j - \bar\pi_k\right)

with ``v`` the validity mask and :math:`\bar\pi = \partial L / \partial \pi`. (σ' is even, so
the two places where :math:`s_k` enters, as the row item and as a column item, combine into one
sum.) Masked items get rank 1 and exactly zero gradient. Each program owns a block of rows of
one list and sweeps the list in column blocks, so no N × N tile ever leaves registers; ``N`` is
a runtime argument and ragged edges are masked, so one compiled kernel serves every length.
Compute is float32 (float64 for float64 scores); half-precision scores are widened on load.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import Tensor

from .launch import blocks, flat_lists


@triton.jit
def _sigmoid_and_slope(z):
    # exp(-|z|) never overflows, so large |z| gives exactly 0 or 1 without inf/inf.
    e = tl.exp(-tl.abs(z))
    inv = 1.0 / (1.0 + e)
    return tl.where(z >= 0, inv, e * inv), e * inv * inv


@triton.jit(do_not_specialize=["n"])
def _ranks_forward(s_ptr, v_ptr, out_ptr, n, inv_tau, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * n
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = out_ptr.dtype.element_ty
    s_i = tl.load(s_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    v_i = tl.load(v_ptr + row + i, mask=i < n, other=0.0).to(dtype)
    total = tl.zeros([BLOCK_I], dtype=dtype)
    for start in range(0, n, BLOCK_J):
        j = start + tl.arange(0, BLOCK_J)
        s_j = tl.load(s_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        v_j = tl.load(v_ptr + row + j, mask=j < n, other=0.0).to(dtype)
        sig, _ = _sigmoid_and_slope((s_j[None, :] - s_i[:, None]) * inv_tau)
        weight = tl.where(i[:, None] != j[None, :], v_j[None, :], 0.0)
        total += tl.sum(sig * weight, axis=1)
    tl.store(out_ptr + row + i, 1.0 + v_i * total, mask=i < n)


@triton.jit(do_not_specialize=["n"])
def _ranks_backward(
    s_ptr, v_ptr, g_ptr, out_ptr, n, inv_tau, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64) * n
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    dtype = out_ptr.dtype.element_ty
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


def _launch(kernel, tensors: list[Tensor], out: Tensor, inv_tau: float, block: tuple[int, int] | None):
    rows, n = out.shape
    block_i, block_j = block or blocks(n)
    kernel[(rows, triton.cdiv(n, block_i))](*tensors, out, n, inv_tau, BLOCK_I=block_i, BLOCK_J=block_j)
    return out


class _ApproxRanks(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores: Tensor, valid: Tensor, temperature: float, block):  # type: ignore[override]
        s, v, dtype = flat_lists(scores, valid)
        ctx.save_for_backward(s, v)
        ctx.meta = (temperature, block, scores.shape, scores.dtype)
        out = torch.empty(s.shape, dtype=dtype, device=s.device)
        return _launch(_ranks_forward, [s, v], out, 1.0 / temperature, block).view(scores.shape)

    @staticmethod
    def backward(ctx, grad: Tensor):  # type: ignore[override]
        s, v = ctx.saved_tensors
        temperature, block, shape, scores_dtype = ctx.meta
        g = grad.reshape(s.shape).to(v.dtype).contiguous()
        out = torch.empty_like(g)
        ds = _launch(_ranks_backward, [s, v, g], out, 1.0 / temperature, block)
        return ds.view(shape).to(scores_dtype), None, None, None


def approx_ranks(
    scores: Tensor, valid: Tensor, temperature: float, *, block: tuple[int, int] | None = None
) -> Tensor:
    r"""Approximate ranks :math:`\pi` of every item of ``[..., N]`` lists (rank 1 = top).

    Args:
        scores: ``[..., N]`` float scores (float16/bfloat16/float32/float64).
        valid: ``[..., N]`` bool or 0/1 mask of real items.
        temperature: τ > 0 of the sigmoid.
        block: ``(rows, columns)`` tile, powers of two ≥ 16; ``None`` picks by ``N``.

    Returns:
        ``[..., N]`` ranks in float32 (float64 for float64 scores), 1 at masked items;
        differentiable in ``scores``.

    Example:
        >>> r = approx_ranks(torch.tensor([[2.0, 1.0, 0.0]]), torch.ones(1, 3, dtype=torch.bool), 0.01)
        >>> r.round()  # doctest: +SKIP
        tensor([[1., 2., 3.]])
    """
    return _ApproxRanks.apply(scores, valid, temperature, block)
