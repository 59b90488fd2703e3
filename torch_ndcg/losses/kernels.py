r"""The O(N²) work of the streaming losses, as a few plain functions over ``[B, N]`` vectors.

Everything quadratic in the list length happens here, one bounded block of an implicit
``[B, N, N]`` matrix at a time; callers only ever hold ``[B, N]`` vectors. A fused GPU kernel
(issue 5) can replace any of these functions behind the same signature. Every argument and
result is a ``[B, N]`` tensor (one row per list) unless said otherwise; ``-inf`` in ``z`` means
"this column does not exist".

Sinkhorn half-step (NeuralSort's log-kernel is an outer product plus a column term, so a
block is rebuilt from vectors rather than stored):

* ``lse_outer(x, y, z, h=None) -> (f, m)``
      ``f_i = log Σ_j exp(x_i y_j + z_j)``; with ``h``, also the softmax-weighted mean
      ``m_i = Σ_j W_ij h_j`` where ``W_ij = exp(x_i y_j + z_j − f_i)``. A row with no existing
      column has ``f_i = −inf`` and ``m_i = 0``.
* ``lse_outer_backward(x, y, z, f, grad_f, h=None, m=None, grad_m=None) -> (gx, gy, gz)``
      gradients of ``Σ_i grad_f_i f_i + grad_m_i m_i`` with respect to ``x``, ``y`` and ``z``.
      With ``G_ij = W_ij (α_i + grad_m_i h_j)`` and ``α = grad_f − grad_m m``:
      ``gz_j = Σ_i G_ij``, ``gy_j = Σ_i G_ij x_i``, ``gx_i = Σ_j G_ij y_j``.
      Rows with ``f_i = ±inf`` have ``W_i· = 0`` (a caller marks dropped rows with ``f = +inf``).

NeuralSort's column term and its gradient:

* ``abs_diff_sum(s, valid) -> A``: ``A_j = Σ_m valid_m |s_j − s_m|``.
* ``abs_diff_sum_backward(s, valid, grad_a) -> gs``:
      ``gs_k = Σ_m valid_m (grad_a_k + grad_a_m) sign(s_k − s_m)`` (``sign(0) = 0``, as autograd's
      ``abs``).

ApproxNDCG's approximate ranks (``valid`` is 0/1 in the scores' dtype):

* ``approx_ranks(s, valid, tau) -> π``: ``π_i = 1 + v_i Σ_{j≠i} v_j σ((s_j − s_i)/τ)``.
* ``approx_ranks_backward(s, valid, tau, grad_pi) -> gs``:
      ``gs_k = (v_k/τ) Σ_j v_j σ'((s_j − s_k)/τ)(grad_pi_j − grad_pi_k)`` (σ' is even, and the
      ``j = k`` term vanishes, so the diagonal needs no special case).

Blocks hold at most :data:`BLOCK_BYTES` bytes: whole lists at a time when they fit, else row
slices of one list.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import Tensor

# ~16 MiB blocks: large enough that per-op overhead vanishes, small enough to stay cache-friendly
# and to keep the peak memory independent of B·N².
BLOCK_BYTES = 16 * 2**20


def blocks(batch: int, rows: int, cols: int, itemsize: int) -> Iterator[tuple[slice, slice]]:
    """(list slice, row slice) pairs covering a ``[batch, rows, cols]`` matrix in bounded blocks."""
    per_list = rows * cols * itemsize
    if per_list <= BLOCK_BYTES:
        step = max(1, BLOCK_BYTES // max(per_list, 1))
        for b in range(0, batch, step):
            yield slice(b, b + step), slice(None)
        return
    step = max(1, BLOCK_BYTES // (cols * itemsize))
    for b in range(batch):
        for i in range(0, rows, step):
            yield slice(b, b + 1), slice(i, i + step)


def _outer_block(x: Tensor, y: Tensor, z: Tensor, b: slice, i: slice) -> Tensor:
    """The log-kernel block ``x_i y_j + z_j`` for lists ``b`` and rows ``i`` (a fresh tensor)."""
    return torch.addcmul(z[b, None, :], x[b, i, None], y[b, None, :])


def lse_outer(x: Tensor, y: Tensor, z: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    f = torch.empty_like(x)
    m = None if h is None else torch.empty_like(x)
    ones_h = None if h is None else torch.stack([torch.ones_like(h), h], dim=-1)
    for b, i in blocks(x.shape[0], x.shape[1], y.shape[1], x.element_size()):
        block = _outer_block(x, y, z, b, i)
        top = block.amax(-1, keepdim=True)
        top = top.masked_fill(top == -torch.inf, 0.0)  # a row without columns: exp(-inf) = 0
        block.sub_(top).exp_()
        if ones_h is None:
            total = block.sum(-1)
        else:
            sums = torch.bmm(block, ones_h[b])
            total = sums[..., 0]
            m[b, i] = sums[..., 1] / total.clamp(min=torch.finfo(total.dtype).tiny)
        f[b, i] = top.squeeze(-1) + total.log()
    return f, m


def lse_outer_backward(
    x: Tensor,
    y: Tensor,
    z: Tensor,
    f: Tensor,
    grad_f: Tensor,
    h: Tensor | None = None,
    m: Tensor | None = None,
    grad_m: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    gx, gy, gz = torch.zeros_like(x), torch.zeros_like(y), torch.zeros_like(z)
    # Rows whose f is -inf have no column at all; +inf makes their weights exactly 0, not NaN.
    f = f.masked_fill(f == -torch.inf, torch.inf)
    if grad_m is None:
        alpha = grad_f
        left = torch.stack([alpha, alpha * x], dim=-1)
        right = y[..., None]
    else:
        alpha = grad_f - grad_m * m
        left = torch.stack([alpha, alpha * x, grad_m, grad_m * x], dim=-1)
        right = torch.stack([y, h * y], dim=-1)
    for b, i in blocks(x.shape[0], x.shape[1], y.shape[1], x.element_size()):
        weights = _outer_block(x, y, z, b, i).sub_(f[b, i, None]).exp_()
        cols = torch.bmm(weights.transpose(1, 2), left[b, i])
        rows = torch.bmm(weights, right[b])
        if grad_m is None:
            gz[b] += cols[..., 0]
            gy[b] += cols[..., 1]
            gx[b, i] = alpha[b, i] * rows[..., 0]
        else:
            gz[b] += cols[..., 0] + h[b] * cols[..., 2]
            gy[b] += cols[..., 1] + h[b] * cols[..., 3]
            gx[b, i] = alpha[b, i] * rows[..., 0] + grad_m[b, i] * rows[..., 1]
    return gx, gy, gz


def abs_diff_sum(s: Tensor, valid: Tensor) -> Tensor:
    out = torch.empty_like(s)
    for b, i in blocks(s.shape[0], s.shape[1], s.shape[1], s.element_size()):
        block = (s[b, i, None] - s[b, None, :]).abs_()
        out[b, i] = torch.bmm(block, valid[b, :, None]).squeeze(-1)
    return out


def abs_diff_sum_backward(s: Tensor, valid: Tensor, grad_a: Tensor) -> Tensor:
    out = torch.empty_like(s)
    right = torch.stack([valid, valid * grad_a], dim=-1)
    for b, i in blocks(s.shape[0], s.shape[1], s.shape[1], s.element_size()):
        signs = (s[b, i, None] - s[b, None, :]).sign_()
        sums = torch.bmm(signs, right[b])
        out[b, i] = grad_a[b, i] * sums[..., 0] + sums[..., 1]
    return out


def _pair_block(s: Tensor, tau: float, b: slice, i: slice) -> Tensor:
    """``σ((s_j − s_i)/τ)`` for lists ``b``, rows ``i`` and every column ``j``."""
    return (s[b, None, :] - s[b, i, None]).div_(tau).sigmoid_()


def approx_ranks(s: Tensor, valid: Tensor, tau: float) -> Tensor:
    out = torch.empty_like(s)
    for b, i in blocks(s.shape[0], s.shape[1], s.shape[1], s.element_size()):
        total = torch.bmm(_pair_block(s, tau, b, i), valid[b, :, None]).squeeze(-1)
        # The j = i term is σ(0) = 1/2 for a real item: remove it rather than mask the diagonal.
        out[b, i] = 1.0 + valid[b, i] * (total - 0.5 * valid[b, i])
    return out


def approx_ranks_backward(s: Tensor, valid: Tensor, tau: float, grad_pi: Tensor) -> Tensor:
    out = torch.empty_like(s)
    right = torch.stack([valid * grad_pi, valid], dim=-1)
    for b, i in blocks(s.shape[0], s.shape[1], s.shape[1], s.element_size()):
        sig = _pair_block(s, tau, b, i)
        slope = sig.sub_(sig.square())  # σ' = σ(1 − σ), in place
        sums = torch.bmm(slope, right[b])
        out[b, i] = valid[b, i] / tau * (sums[..., 0] - grad_pi[b, i] * sums[..., 1])
    return out
