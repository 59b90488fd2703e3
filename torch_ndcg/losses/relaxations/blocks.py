r"""The O(N²) work of the streaming losses, as six primitives over ``[B, N]`` vectors.

Everything quadratic in the list length happens here, one bounded block of an implicit
``[B, N, N]`` matrix at a time; callers only ever hold ``[B, N]`` vectors. The streaming
losses call the primitives on an ``ops`` object (default :class:`TorchBlocks`); a fused GPU
kernel (:mod:`torch_ndcg.fused`) replaces them by passing any object or module with the same functions. Every
argument and result is a ``[B, N]`` tensor (one row per list) in one floating dtype unless said
otherwise; ``-inf`` in ``z`` means "this column does not exist".

Sinkhorn half-step (NeuralSort's log-kernel is an outer product plus a column term, so a
block is rebuilt from vectors rather than stored):

* ``lse_outer(x, y, z, h=None) -> (f, m)``
      ``f_i = log Σ_j exp(x_i y_j + z_j)``; with ``h``, also the softmax-weighted mean
      ``m_i = Σ_j W_ij h_j`` where ``W_ij = exp(x_i y_j + z_j − f_i)``. A row with no existing
      column has ``f_i = −inf`` and ``m_i = 0``.
* ``lse_outer_backward(x, y, z, f, grad_f, mean=None) -> (gx, gy, gz)``, ``mean`` a
      :class:`WeightedMean` ``(h, m, grad_m)`` when the forward computed ``m``:
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

:class:`TorchBlocks` works in blocks of at most :data:`BLOCK_BYTES` bytes (whole lists at a time
when they fit, else row slices of one list), in two buffers it reuses from call to call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

# ~4 MiB blocks: large enough that per-op overhead vanishes, small enough to stay in cache (measured
# fastest of 1–32 MiB on a 2-core CPU), and the peak memory stays independent of B·N².
BLOCK_BYTES = 4 * 2**20


def blocks(batch: int, rows: int, cols: int, itemsize: int) -> list[tuple[slice, slice]]:
    """(list slice, row slice) pairs covering a ``[batch, rows, cols]`` matrix in bounded blocks."""
    per_list = rows * cols * itemsize
    if per_list <= BLOCK_BYTES:
        step = max(1, BLOCK_BYTES // max(per_list, 1))
        return [(slice(b, min(b + step, batch)), slice(0, rows)) for b in range(0, batch, step)]
    step = max(1, BLOCK_BYTES // (cols * itemsize))
    return [(slice(b, b + 1), slice(i, min(i + step, rows))) for b in range(batch) for i in range(0, rows, step)]


def _column_sums(weights: Tensor, left: Tensor) -> Tensor:
    """``Σ_i left[i, k] · weights[i, j]`` → ``[b, k, cols]`` (a short-wide GEMM: fast on CPU BLAS)."""
    return torch.bmm(left.transpose(1, 2), weights)


class WeightedMean(NamedTuple):
    """The weighted mean ``m`` that ``lse_outer`` computed with ``h``, and its gradient: given
    together to ``lse_outer_backward`` (all three or none)."""

    h: Tensor
    m: Tensor
    grad_m: Tensor


class TorchBlocks:
    """The primitives in PyTorch ops, on any device. One instance per loss call (not thread-safe).

    Its two block buffers are allocated once and reused by every call: a fresh multi-MiB tensor
    per block costs page faults, and freed ones fragment the CPU heap (peak RSS grows).
    """

    def __init__(self) -> None:
        self._buffers: list[Tensor | None] = [None, None]

    def release(self) -> None:
        if not torch.compiler.is_compiling():  # a traced graph keeps no buffers (see _blocks)
            self._buffers = [None, None]

    def _blocks(self, like: Tensor, rows: int, cols: int) -> list[tuple[slice, slice, Tensor, Tensor]]:
        """The blocks of ``[B, rows, cols]``, each with two ``[b, i, cols]`` views of the buffers."""
        plan = blocks(like.shape[0], rows, cols, like.element_size())
        # A list and ``or [0]``, not a generator with ``default=``: torch.compile traces this.
        numel = max([(b.stop - b.start) * (i.stop - i.start) for b, i in plan] or [0]) * cols
        if torch.compiler.is_compiling():
            # A traced graph may not mutate this object (the autograd.Function would not be one
            # op), and the compiler plans its own buffers: fresh ones, not kept.
            buffers = [torch.empty(numel, dtype=like.dtype, device=like.device) for _ in self._buffers]
        else:
            for k, buffer in enumerate(self._buffers):
                if buffer is None or buffer.numel() < numel or buffer.dtype != like.dtype or buffer.device != like.device:
                    self._buffers[k] = torch.empty(numel, dtype=like.dtype, device=like.device)
            buffers = self._buffers
        out = []
        for b, i in plan:
            shape = (b.stop - b.start, i.stop - i.start, cols)
            size = shape[0] * shape[1] * cols
            out.append((b, i, *(buffer[:size].view(shape) for buffer in buffers)))
        return out

    def lse_outer(self, x: Tensor, y: Tensor, z: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        f = torch.empty_like(x)
        m = None if h is None else torch.empty_like(x)
        for b, i, first, second in self._blocks(x, x.shape[1], y.shape[1]):
            block = torch.addcmul(z[b, None, :], x[b, i, None], y[b, None, :], out=first)
            top = block.amax(-1)
            # log_softmax is one fused, vectorised pass; its row maximum is top − f exactly.
            log_w = torch.log_softmax(block, -1, out=second)
            f[b, i] = torch.where(top == -torch.inf, top, top - log_w.amax(-1))
            if h is not None:
                mean = log_w.exp_().mul_(h[b, None, :]).sum(-1)
                m[b, i] = torch.where(top == -torch.inf, torch.zeros_like(mean), mean)
        return f, m

    def lse_outer_backward(
        self, x: Tensor, y: Tensor, z: Tensor, f: Tensor, grad_f: Tensor, mean: WeightedMean | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        gx, gy, gz = torch.zeros_like(x), torch.zeros_like(y), torch.zeros_like(z)
        # The weights are recomputed as a softmax (fused, exact normaliser), so f is unused here.
        # A finite floor for missing columns keeps rows without any column NaN-free; such rows,
        # like rows the caller dropped, carry zero gradient.
        z = z.clamp(min=torch.finfo(z.dtype).min)
        h, m, grad_m = (None, None, None) if mean is None else mean
        if grad_m is None:
            alpha = grad_f
            left = torch.stack([alpha, alpha * x], dim=-1)
        else:
            alpha = grad_f - grad_m * m
            left = torch.stack([alpha, alpha * x, grad_m, grad_m * x], dim=-1)
        for b, i, first, second in self._blocks(x, x.shape[1], y.shape[1]):
            block = torch.addcmul(z[b, None, :], x[b, i, None], y[b, None, :], out=first)
            weights = torch.softmax(block, -1, out=second)
            cols = _column_sums(weights, left[b, i])
            gz[b] += cols[:, 0]
            gy[b] += cols[:, 1]
            weighted = weights.mul_(y[b, None, :])
            gx[b, i] = alpha[b, i] * weighted.sum(-1)
            if grad_m is not None:
                gz[b] += h[b] * cols[:, 2]
                gy[b] += h[b] * cols[:, 3]
                gx[b, i] += grad_m[b, i] * weighted.mul_(h[b, None, :]).sum(-1)
        return gx, gy, gz

    def _pairwise(self, s: Tensor, left: Tensor, pair: Callable[[Tensor], Tensor]) -> Tensor:
        """``out_j = Σ_i left[i, k] · pair(s_i − s_j)`` → ``[B, k, N]``.

        ``pair`` works in place on the block of differences. The pair functions used here are
        even or odd, so this column form also gives the row sums ``Σ_j pair(s_j − s_i) w_j``.
        """
        out = torch.zeros(s.shape[0], left.shape[-1], s.shape[1], dtype=s.dtype, device=s.device)
        for b, i, first, _ in self._blocks(s, s.shape[1], s.shape[1]):
            diff = torch.sub(s[b, i, None], s[b, None, :], out=first)
            out[b] += _column_sums(pair(diff), left[b, i])
        return out

    def abs_diff_sum(self, s: Tensor, valid: Tensor) -> Tensor:
        return self._pairwise(s, valid[..., None], Tensor.abs_)[:, 0]

    def abs_diff_sum_backward(self, s: Tensor, valid: Tensor, grad_a: Tensor) -> Tensor:
        # The column form sums sign(s_i − s_k) = −sign(s_k − s_i): flip the sign.
        sums = self._pairwise(s, torch.stack([valid, valid * grad_a], dim=-1), Tensor.sign_)
        return -(grad_a * sums[:, 0] + sums[:, 1])

    def approx_ranks(self, s: Tensor, valid: Tensor, tau: float) -> Tensor:
        # Column form: item j's rank sums σ((s_i − s_j)/τ) over the other items i.
        total = self._pairwise(s, valid[..., None], lambda d: d.div_(tau).sigmoid_())[:, 0]
        # The j = i term is σ(0) = 1/2 for a real item: remove it rather than mask the diagonal.
        return 1.0 + valid * (total - 0.5 * valid)

    def approx_ranks_backward(self, s: Tensor, valid: Tensor, tau: float, grad_pi: Tensor) -> Tensor:
        def slope(d: Tensor) -> Tensor:
            sig = d.div_(tau).sigmoid_()
            return sig.sub_(sig.square())  # σ' = σ(1 − σ), even

        sums = self._pairwise(s, torch.stack([valid * grad_pi, valid], dim=-1), slope)
        return valid / tau * (sums[:, 0] - grad_pi * sums[:, 1])
