"""Value checks as registered operators: a validating call compiles, and exports, as one graph.

A value check reads tensors on the host; under ``torch.compile`` such a read is a graph break,
and under ``torch.export`` an error. :func:`register_check` wraps a check in a registered
operator, which the compiler keeps as one opaque call (it sees only a fake implementation), so
the check still runs on the real tensors and raises the same ``ValueError`` (or warning) as
eager, and the graph has no break.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

# Defined with torch.library.Library rather than custom_op: a kernel with no autograd formula
# of its own (its inputs need no gradient) is called without custom_op's Python wrappers,
# which cost several times the checks on a small batch.
_LIBRARY = torch.library.Library("torch_ndcg", "FRAGMENT")


def register_check(name: str, arguments: str, check: Callable[..., None]) -> Callable[..., Tensor]:
    """Register ``torch_ndcg::<name>(<arguments>) -> Tensor``, which runs ``check`` on its arguments
    (the first a tensor) and returns a zero of the first's dtype, and return the function that
    calls it: ``tensor`` once ``check(tensor, *arguments)`` passes; under ``torch.compile``, the
    tensor plus the operator's zero: the same values and gradient, and a graph that cannot run
    without the check (the operator sees no tensor that needs a gradient)."""
    _LIBRARY.define(f"{name}({arguments}) -> Tensor")

    def kernel(first: Tensor, *rest: Any) -> Tensor:
        check(first, *rest)
        return first.new_zeros(())

    def fake(first: Tensor, *rest: Any) -> Tensor:
        return first.new_empty(())

    def batched(info: Any, in_dims: tuple[int | None, ...], *arguments: Any) -> tuple[Tensor, None]:
        # Under vmap: the operator once per batch entry, so each is checked as a call of its own.
        for index in range(info.batch_size):
            operator(*(a if dim is None else a.select(dim, index) for a, dim in zip(arguments, in_dims)))
        return arguments[0].new_zeros(()), None

    torch.library.impl(_LIBRARY, name, "CompositeExplicitAutograd")(kernel)
    torch.library.register_fake(f"torch_ndcg::{name}", fake, lib=_LIBRARY)
    operator = getattr(torch.ops.torch_ndcg, name)
    torch.library.register_vmap(f"torch_ndcg::{name}", batched, lib=_LIBRARY)

    def checked(tensor: Tensor, *rest: Any) -> Tensor:
        # Under a torch.func transform (grad, vmap, …) the wrapped tensors cannot be read; the
        # operator's kernel reads the plain ones beneath (vmap runs it once per batch entry).
        if torch.compiler.is_compiling() or torch._C._are_functorch_transforms_active():
            # Every tensor detached: the check's zero has no gradient, and a relevance that
            # requires grad must not reach an operator without an autograd formula.
            return tensor + operator(*(a.detach() if isinstance(a, Tensor) else a for a in (tensor, *rest)))
        check(tensor, *rest)
        return tensor

    return checked
