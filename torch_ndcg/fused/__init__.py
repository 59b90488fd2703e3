"""Fused GPU kernels (written in Triton) for the smooth losses' O(N²) pairwise work, loaded only when needed.

``import torch_ndcg`` never imports Triton: the kernel modules (:mod:`.approx`,
:mod:`.sinkhorn`) are imported on the first call that runs a kernel, and only after
:func:`require` has checked that the tensor can use them. Triton kernels run on CUDA tensors,
or on CPU tensors in Triton's interpreter, which the CPU tests use: ``TRITON_INTERPRET=1``
must be set before Triton is first imported (anything may import it: lightning does, via
``torch._dynamo``), so set it in the environment of the process.
"""

from __future__ import annotations

import os
from types import ModuleType

from torch import Tensor

INSTALL_HINT = "pip install triton (Linux x86_64 with a CUDA GPU), or, in a clone of torch_ndcg: pip install '.[triton]'"


def interpreting() -> bool:
    """Whether Triton kernels run in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def importable() -> bool:
    """Whether the real Triton package imports (cheap after the first call: modules are cached)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def available(tensor: Tensor) -> bool:
    """Whether ``impl="triton"`` can run on ``tensor`` (``impl="auto"`` picks it for CUDA tensors only)."""
    return (tensor.is_cuda or interpreting()) and importable()


def require(tensor: Tensor, name: str = "scores") -> None:
    """Raise the error that explains why ``impl="triton"`` cannot run on ``tensor``."""
    if not importable():
        raise ImportError(f'impl="triton" needs the triton package, which is not installed: {INSTALL_HINT}')
    if not (tensor.is_cuda or interpreting()):
        raise ValueError(
            f'impl="triton" needs CUDA tensors, got {name} on {tensor.device}; move the inputs to a '
            'GPU, use impl="streaming" on CPU, or set TRITON_INTERPRET=1 (slow, for tests)'
        )


def kernels_for(tensor: Tensor, name: str = "scores") -> ModuleType:
    """The module of Triton block primitives (:mod:`.ops`) for ``tensor``, after :func:`require`.

    It has the functions, and signatures, of :mod:`torch_ndcg.losses.relaxations.blocks`.
    """
    require(tensor, name)
    from . import ops

    return ops
