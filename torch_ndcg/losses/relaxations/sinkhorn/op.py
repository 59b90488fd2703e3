r"""The kernel Sinkhorn as registered PyTorch operators, so that autograd, ``torch.compile``,
FakeTensor tracing and ``torch.export`` each see one op.

``torch_ndcg::sinkhorn_dcg(values, lengths, rank_weight, gains, tau, iters, transposed, tol)
-> (dcg, history, kernels, record)``

* ``values`` ``[B, N]`` float: list ``b``'s scores are ``values[b, :lengths[b]]`` (compact: real
  items first; what follows is padding and is never read, whatever it holds);
* ``lengths`` ``[B]`` int64; ``rank_weight`` ``[B, N]`` the weight of each rank (discount × cutoff);
  ``gains`` ``[B, N]`` the gain of each item, in ``values``' order;
* ``dcg`` ``[B]`` the smooth DCG :math:`\sum_i w_i \sum_j P_{ij} g_j` of NeuralNDCG (with the
  plain or ``transposed`` Sinkhorn of ``iters`` iterations at temperature ``tau``, stopping early
  once every sum is within ``tol`` of 1 when ``tol`` is given), 0 for an empty list;
  ``history``, ``kernels`` and ``record`` are what the backward needs (not differentiable).

A flat layout (items of all lists in one vector with their list's index) reaches it by
scattering into the compact ``[B, N]`` block. The op is differentiable in ``values`` only. Its
backward is ``torch_ndcg::sinkhorn_dcg_backward``; under ``create_graph=True`` the backward
instead differentiates the dense reference (:mod:`.dense`) rebuilt from the saved
values, so second derivatives are dense's (at dense's memory). Under autocast, half-precision
inputs run in float32 (the scalings need its range). One implementation (:mod:`.kernel`)
serves CPU and CUDA.

An eager call on plain tensors (no compiler, export, FakeTensor or other dispatch mode or
autocast) reaches the same forward and backward through a ``torch.autograd.Function`` instead:
the operator's Python dispatch layers cost more than the loss's arithmetic on short lists.
Values and gradients are the same code's, so the two routes agree to the bit. Calls under a
torch.func transform (``grad``, ``jacrev``, ``vmap``) take that route too
(:mod:`...transforms`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor
from torch.utils._python_dispatch import _get_current_dispatch_mode as _current_dispatch_mode

from . import kernel
from ...common import SortRelaxation, second_order
from ...transforms import ListsFunction, transforms_active, vmap_over_lists
from .dense import dense_dcg


@torch.library.custom_op("torch_ndcg::sinkhorn_dcg", mutates_args=(), device_types=("cpu", "cuda"))
def sinkhorn_dcg(
    values: Tensor, lengths: Tensor, rank_weight: Tensor, gains: Tensor, tau: float, iters: int, transposed: bool,
    tol: float | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    return kernel.forward(values, lengths, rank_weight, gains, tau, iters, transposed, tol)


@sinkhorn_dcg.register_fake
def _(values, lengths, rank_weight, gains, tau, iters, transposed, tol):
    batch, width = values.shape
    history = values.new_empty(kernel.steps(iters, transposed), batch, width)
    kept = batch if kernel.keeps_kernel(width, iters, transposed) else 0
    kernels = values.new_empty(kept, width, width)
    return values.new_empty(batch), history, kernels, lengths.new_empty(batch, 3, dtype=torch.int64)


@torch.library.custom_op("torch_ndcg::sinkhorn_dcg_backward", mutates_args=(), device_types=("cpu", "cuda"))
def sinkhorn_dcg_backward(
    grad_dcg: Tensor, values: Tensor, lengths: Tensor, rank_weight: Tensor, gains: Tensor, history: Tensor,
    kernels: Tensor, record: Tensor, tau: float, iters: int, transposed: bool, tol: float | None,
) -> Tensor:
    return kernel.backward(
        grad_dcg, values, lengths, rank_weight, gains, history, kernels, record, tau, iters, transposed, tol
    )


@sinkhorn_dcg_backward.register_fake
def _(grad_dcg, values, lengths, rank_weight, gains, history, kernels, record, tau, iters, transposed, tol):
    return torch.empty_like(values)


def _setup_context(ctx, inputs, output) -> None:
    values, lengths, rank_weight, gains, tau, iters, transposed, tol = inputs
    _, history, kernels, record = output
    ctx.save_for_backward(values, lengths, rank_weight, gains, history, kernels, record)
    ctx.options = (tau, iters, transposed, tol)


def _backward(ctx, grad_dcg, _grad_history, _grad_kernels, _grad_record):
    if grad_dcg is None:
        return (None,) * 8
    return _gradient(ctx, grad_dcg, torch.ops.torch_ndcg.sinkhorn_dcg_backward), None, None, None, None, None, None, None


def _gradient(ctx, grad_dcg: Tensor, backward: Callable[..., Tensor]) -> Tensor:
    """The gradient with respect to ``values`` from what ``ctx`` saved: ``backward`` (the
    backward operator, or :func:`.kernel.backward` itself), or under
    ``create_graph=True`` the dense reference's differentiable gradient."""
    values, lengths, rank_weight, gains, history, kernels, record = ctx.saved_tensors
    tau, iters, transposed, tol = ctx.options
    if torch.is_grad_enabled():  # create_graph=True (and torch.func): a gradient that is itself differentiable
        if tol is not None:
            raise ValueError(
                "impl='kernel' with tol (early stopping) has no second derivative (create_graph=True), and "
                "torch.func's grad, jacrev and vjp always ask for one; leave tol=None, or use impl='dense'"
            )
        valid = torch.arange(values.shape[-1], device=values.device)[None, :] < lengths[:, None]
        relaxation = SortRelaxation(valid, rank_weight, gains, tau, iters, transposed)
        return second_order(
            lambda x: dense_dcg(torch.where(valid, x, torch.zeros_like(x)), relaxation), values, grad_dcg
        )
    return backward(grad_dcg, values, lengths, rank_weight, gains, history, kernels, record, tau, iters, transposed, tol)


sinkhorn_dcg.register_autograd(_backward, setup_context=_setup_context)
for _device in ("cpu", "cuda"):
    sinkhorn_dcg.register_autocast(_device, torch.float32)


class _Eager(ListsFunction):
    """:func:`sinkhorn_dcg`'s value and gradient for plain eager calls (see the module docstring)."""

    @staticmethod
    def forward(values, lengths, rank_weight, gains, tau, iters, transposed, tol):
        return kernel.forward(values, lengths, rank_weight, gains, tau, iters, transposed, tol)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _setup_context(ctx, inputs, output)
        ctx.mark_non_differentiable(*output[1:])
        ctx.set_materialize_grads(False)

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(_Eager.apply, info, in_dims, args, list_dims=(0, 1, 0, 0))  # history: [steps, B, N]

    @staticmethod
    def backward(ctx, grad_dcg, *_):
        if grad_dcg is None:
            return (None,) * 8
        return _gradient(ctx, grad_dcg, kernel.backward), None, None, None, None, None, None, None


def _plain_eager(*tensors: Tensor) -> bool:
    """Whether a call sees plain tensors in eager mode, where :class:`_Eager` may stand in for
    the operator: not compiling or exporting, no tensor subclass (FakeTensor, …), no dispatch
    mode, no functorch transform, no autocast on the tensors' device."""
    if torch.compiler.is_compiling() or getattr(torch.compiler, "is_exporting", lambda: False)():
        return False
    if any(type(t) is not Tensor for t in tensors) or _current_dispatch_mode() is not None:
        return False
    if transforms_active():
        return False
    device = tensors[0].device.type
    if device not in ("cpu", "cuda"):  # the operator's own devices; others (meta, …) get its fake
        return False
    try:
        return not torch.is_autocast_enabled(device)
    except TypeError:  # torch before 2.4: one flag per device kind
        return not (torch.is_autocast_cpu_enabled() if device == "cpu" else torch.is_autocast_enabled())


def kernel_dcg(scores: Tensor, relaxation: SortRelaxation, tol: float | None = None) -> Tensor:
    """Smooth DCG ``[B]`` of ``scores [B, N]`` (real items where ``relaxation.valid``) through
    :func:`sinkhorn_dcg`: the lists are compacted first (a differentiable gather)."""
    r = relaxation
    lengths = r.valid.sum(-1)
    order = torch.argsort((~r.valid).to(torch.int8), dim=-1, stable=True)  # real items first
    values = scores.gather(-1, order)
    args = (values, lengths, r.rank_weight, r.gains.gather(-1, order), r.tau, r.iters, r.transposed, tol)
    dcg, *_ = (_Eager.apply if _under_torch_func() or _plain_eager(*args[:4]) else sinkhorn_dcg)(*args)
    return dcg


def _under_torch_func() -> bool:
    """Whether a torch.func transform runs (and no compiler): then :class:`_Eager` stands in for
    the operator, whose generated autograd Function lacks the ``setup_context`` that torch.func
    needs; :class:`_Eager` runs on the plain tensors beneath the transform's wrappers."""
    compiling = torch.compiler.is_compiling() or getattr(torch.compiler, "is_exporting", lambda: False)()
    return transforms_active() and not compiling
