"""How the losses' own autograd Functions meet ``torch.func`` (``grad``, ``jacrev``, ``vmap``).

Every custom Function of the losses (the streaming sums, ListMLE's Plackett–Luce sum, the
kernel Sinkhorn's eager route) maps a batch of independent lists ``[B, ...]`` to per-list results,
so ``vmap`` over it needs no new formula: the vmapped axis folds into the list axis, the
Function runs once on ``V·B`` lists of plain tensors (where host reads, NumPy and compiled loops
still work), and its results unfold back to ``[V, B, ...]`` (:func:`vmap_over_lists`).

Under ``grad`` and ``jacrev`` torch.func runs a Function's forward on plain tensors and its
backward with ``create_graph=True``, so each backward then returns its differentiable dense
form, exactly as under ``torch.autograd.grad(..., create_graph=True)``: same values, gradients
that nest (``grad`` of ``grad``) and that ``vmap`` can batch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor


def transforms_active() -> bool:
    """Whether a ``torch.func`` transform (``grad``, ``vmap``, ``jacrev``, …) is running: its
    wrapped tensors have no storage, so no value of them can be read on the host."""
    return torch._C._are_functorch_transforms_active()


def vmap_active() -> bool:
    """Whether a ``torch.func.vmap`` runs at some level: its batched tensors cannot be read on
    the host at all (``grad``'s wrapped tensors can)."""
    if not transforms_active():
        return False
    from torch._C._functorch import TransformType
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters

    return any(interpreter.key() == TransformType.Vmap for interpreter in retrieve_all_functorch_interpreters())


def check_gain_readable(gain: object, validate: bool) -> None:
    """A callable ``gain`` with ``validate=True`` has its values checked on the host (a named
    gain's checks run in a registered operator instead), which ``vmap`` cannot: refused, naming
    the ways out, rather than a raw error from deep inside."""
    if validate and callable(gain) and vmap_active():
        raise ValueError(
            "validate=True checks the values of a callable gain on the host, which torch.func.vmap cannot read; "
            "pass validate=False (the inputs' values are then not checked) or a named gain ('linear', 'exp2')"
        )


def batched(tensor: object) -> bool:
    """Whether ``tensor`` is batched by a ``vmap`` (at any level beneath other transforms)."""
    functorch = torch._C._functorch
    while isinstance(tensor, Tensor) and functorch.is_functorch_wrapped_tensor(tensor):
        if functorch.is_batchedtensor(tensor):
            return True
        tensor = functorch.get_unwrapped(tensor)
    return False


def vmap_over_lists(
    apply: Callable[..., Any], info: Any, in_dims: Sequence[int | None], args: Sequence[Any],
    list_dims: int | Sequence[int] = 0,
) -> tuple[Any, Any]:
    """An autograd Function's ``vmap`` rule, for a Function of independent lists: every tensor
    argument has its lists on dim 0, and tensor output ``o`` has them on ``list_dims[o]`` (one int:
    all).

    The vmapped axis (``in_dims``, or a broadcast for an argument it does not batch) moves in
    front of the lists and folds into them; ``apply`` runs on ``V·B`` lists; each output unfolds
    to ``[V, …]`` at its list dim. Returns ``(outputs, out_dims)`` as torch.func expects.
    """
    size = info.batch_size
    folded = []
    for arg, dim in zip(args, in_dims):
        if isinstance(arg, Tensor):
            arg = arg.expand(size, *arg.shape) if dim is None else arg.movedim(dim, 0)
            arg = arg.reshape(size * arg.shape[1], *arg.shape[2:])
        folded.append(arg)
    outputs = apply(*folded)
    single = isinstance(outputs, Tensor)
    outputs = (outputs,) if single else tuple(outputs)
    dims = (list_dims,) * len(outputs) if isinstance(list_dims, int) else tuple(list_dims)
    # An output's list dim holds V times its own count (which may be 0: nothing kept per list);
    # an output that is no tensor (a flag) is the same for every list.
    unfolded = tuple(
        output.unflatten(dim, (size, output.shape[dim] // size)) if isinstance(output, Tensor) else output
        for output, dim in zip(outputs, dims)
    )
    dims = tuple(dim if isinstance(output, Tensor) else None for output, dim in zip(outputs, dims))
    return (unfolded[0], dims[0]) if single else (unfolded, dims)


class ListsFunction(torch.autograd.Function):
    """The base of the losses' autograd Functions: ``torch.autograd.Function`` with the same
    ``apply``, minus a cost that a small batch feels.

    A Function with ``setup_context`` (which torch.func needs) pays, in ``Function.apply``, an
    ``inspect.signature`` of its ``forward`` on every call, to fill in default arguments: on a
    small batch, a cost of the order of a listwise loss's own forward. These Functions' ``forward``
    take no default (checked when the class is made), so outside torch.func ``apply`` goes
    straight to autograd's own, which runs ``forward`` and ``setup_context`` alike; under a
    transform, or with a tensor a finished transform left wrapped, ``Function.apply`` runs as is.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        defaults = [
            name for name, parameter in inspect.signature(cls.forward).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        ]
        if defaults:
            raise TypeError(f"{cls.__name__}.forward must take no default argument, got defaults for {defaults}")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        if transforms_active() or any(
            isinstance(arg, Tensor) and torch._C._functorch.is_functorch_wrapped_tensor(arg) for arg in args
        ):
            return super().apply(*args)
        return super(torch.autograd.Function, cls).apply(*args)
