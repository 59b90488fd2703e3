"""The half-step loops of the kernel Sinkhorn, and which code runs them.

A half-step multiplies each list's scaling vector by its kernel (or the kernel's transpose):
at 27 items that is ~1 µs of arithmetic for 64 lists, and a batched BLAS product spends several
more calling BLAS once per list. So on CPU, lists up to :data:`HOST_MAX_WIDTH` items run every
half-step of a group in one call of the compiled loops (``torch_ndcg._sinkhorn_loops``, built
when the package is installed, optional), or, where they were not built, one NumPy product per
half-step. Longer lists, and every other device, run torch products. All compute the same
products; only the order of each sum's terms differs (rounding), and the compiled loops give
the same bits on every machine (:func:`compiled_code` says whether they run).
"""

from __future__ import annotations

import numpy
import torch
from torch import Tensor

try:
    from .... import _sinkhorn_loops as _compiled

    _MISSING = ""
except ImportError as error:  # not built at install (no C compiler there): NumPy runs the loops
    _compiled = None
    _MISSING = str(error)

# Lists up to this long loop on the host on CPU. Not longer: OpenBLAS (NumPy's BLAS) threads a
# matrix–vector product of 96² elements or more, ignoring torch.set_num_threads, and the torch
# products of longer lists cost little more than their arithmetic.
HOST_MAX_WIDTH = 95


def compiled_code() -> str:
    """What runs the CPU loops of short lists: the compiled module, or why NumPy does."""
    if _compiled is not None:
        return f"{_compiled.__name__} (C, built at install; CPU lists of at most {HOST_MAX_WIDTH} items)"
    return f"none: torch_ndcg._sinkhorn_loops was not built at install ({_MISSING}); NumPy runs its loops"


def on_host(t: Tensor) -> bool:
    """Whether ``t``'s lists (``[..., w]``) loop on the host: CPU and at most HOST_MAX_WIDTH items."""
    return t.device.type == "cpu" and t.shape[-1] <= HOST_MAX_WIDTH


def _arrays(*tensors: Tensor) -> list[numpy.ndarray]:
    return [t.detach().numpy() for t in tensors]


def scalings(history: Tensor, start: Tensor, right: tuple[Tensor, Tensor], kinds: list[int]) -> None:
    """``history[h] = 1 / (x · right[kinds[h]])`` row by row, ``x`` = ``start`` for ``h = 0`` and
    ``history[h − 1]`` after: ``history [S, B, w]``, ``start [B, w]``, ``right`` two ``[B, w, w]``
    contiguous tensors of one dtype."""
    if on_host(history) and _compiled is not None:
        _compiled.scalings(*_arrays(history, start, *right), bytes(kinds))
        return
    if on_host(history):
        mats = _arrays(*right)
        given = start.numpy()[:, None, :]
        # The rows and matrices are listed before the loop: an index per step costs about as
        # much as the step's reciprocal at these sizes.
        for row, mat in zip(history.numpy()[:, :, None, :], [mats[kind] for kind in kinds]):
            given = numpy.reciprocal(numpy.matmul(given, mat, out=row), out=row)
        return
    given = start[:, None, :]
    for row, mat in zip(history[:, :, None, :].unbind(0), [right[kind] for kind in kinds]):
        given = torch.bmm(given, mat, out=row).reciprocal_()


def step(right: tuple[Tensor, Tensor], kind: int, given: Tensor) -> Tensor:
    """One half-step, ``1 / (given · right[kind])`` ``[B, w]``: :func:`scalings` for one step, so
    a run checked step by step gives the same bits as an unchecked one."""
    out = torch.empty((1, *given.shape), dtype=given.dtype, device=given.device)
    scalings(out, given, right, [kind])
    return out[0]


def walk_back(pq: Tensor, m: tuple[Tensor, Tensor], kinds: list[int]) -> None:
    """``pq[h − 1] *= pq[h] · m[kinds[h]]`` for ``h`` from the last row of ``pq [S, B, w]`` down to 1."""
    if on_host(pq) and _compiled is not None:
        _compiled.walk_back(*_arrays(pq, *m), bytes(kinds[: len(pq)]))
        return
    if on_host(pq):
        rows, mats = list(pq.numpy()[:, :, None, :]), _arrays(*m)
        product = numpy.empty_like(rows[0])
        for lower, upper, kind in zip(rows[-2::-1], rows[:0:-1], kinds[len(rows) - 1 : 0 : -1]):
            numpy.multiply(lower, numpy.matmul(upper, mats[kind], out=product), out=lower)
        return
    rows, product = pq[:, :, None, :].unbind(0), torch.empty_like(pq[0])[:, None, :]
    for lower, upper, kind in zip(rows[-2::-1], rows[:0:-1], kinds[len(rows) - 1 : 0 : -1]):
        lower.mul_(torch.bmm(upper, m[kind], out=product))
