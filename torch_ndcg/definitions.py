"""The one definition of gain, discount and cutoff that every metric and loss uses.

A metric at cutoff ``k`` sums ``gain(rel) * discount(rank)`` over the first ``k`` ranks
(1-based). Losses import the same functions, so the smooth surrogate optimises the number
that the exact metric reports.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Union

import torch
from torch import Tensor

GainFn = Callable[[Tensor], Tensor]
DiscountFn = Callable[[Tensor], Tensor]
Gain = Union[str, GainFn]
Discount = Union[str, DiscountFn]
Cutoff = Union[int, Sequence[int], None]
Cutoffs = tuple[Union[int, None], ...]  # resolved: one entry per cutoff, None = the whole list

_LN2 = math.log(2.0)


def linear_gain(relevance: Tensor) -> Tensor:
    """``gain(rel) = rel`` (the default of scikit-learn, torchmetrics and trec_eval).

    Example:
        >>> import torch
        >>> linear_gain(torch.tensor([0.0, 1.0, 3.0]))
        tensor([0., 1., 3.])
    """
    return relevance


def exp2_gain(relevance: Tensor) -> Tensor:
    """``gain(rel) = 2**rel - 1`` (Burges et al. 2005), via ``expm1`` so small labels keep precision.

    Example:
        >>> import torch
        >>> exp2_gain(torch.tensor([0.0, 1.0, 3.0]))
        tensor([0., 1., 7.])
    """
    return torch.expm1(relevance * _LN2)


def log2_discount(rank: Tensor) -> Tensor:
    """``discount(rank) = 1 / log2(rank + 1)`` for 1-based ranks (real-valued ranks allowed).

    Example:
        >>> import torch
        >>> log2_discount(torch.tensor([1.0, 3.0]))
        tensor([1.0000, 0.5000])
    """
    return 1.0 / torch.log2(rank + 1.0)


def letor_discount(rank: Tensor) -> Tensor:
    """``discount(rank) = 1 / log2(max(rank, 2))``: 1 at ranks 1 and 2, then ``1 / log2(rank)``, the
    discount of the LETOR 4.0 evaluation tool (Eval-Score-4.0; Qin & Liu 2013, arXiv:1306.2597).

    Example:
        >>> import torch
        >>> letor_discount(torch.tensor([1.0, 2.0, 4.0]))
        tensor([1.0000, 1.0000, 0.5000])
    """
    return 1.0 / torch.log2(rank.clamp(min=2.0))


_GAINS: dict[str, GainFn] = {"linear": linear_gain, "exp2": exp2_gain}
_DISCOUNTS: dict[str, DiscountFn] = {"log2": log2_discount}


def is_relevant(relevance: Tensor, threshold: float | None) -> Tensor:
    """Which items the binary metrics (MRR, precision, recall, hit rate, AP) count as relevant:
    ``relevance > 0``, or with a ``threshold`` ``relevance ≥ threshold`` (trec_eval's ``-l``
    relevance level; rax counts ``label ≥ 1``).

    Example:
        >>> import torch
        >>> is_relevant(torch.tensor([0.0, 0.5, 1.0, 2.0]), 1.0)
        tensor([False, False,  True,  True])
    """
    return relevance > 0 if threshold is None else relevance >= threshold


def _named(option: str, value: object, named: dict[str, Callable[[Tensor], Tensor]]) -> Callable[[Tensor], Tensor]:
    if callable(value):
        return value
    if isinstance(value, str) and value in named:
        return named[value]
    raise ValueError(f"{option} must be one of {sorted(named)} or a callable, got {value!r}")


def resolve_gain(gain: Gain) -> GainFn:
    """Return the gain function named by ``gain`` (``"linear"``, ``"exp2"``) or ``gain`` itself."""
    return _named("gain", gain, _GAINS)


def resolve_discount(discount: Discount) -> DiscountFn:
    """Return the discount function named by ``discount`` (``"log2"``) or ``discount`` itself."""
    return _named("discount", discount, _DISCOUNTS)


def compute_dtype(*tensors: object) -> torch.dtype:
    """float64 if any input is float64, else float32 (half precision accumulates in float32);
    what is not a tensor (None, or a bad argument that its own check refuses) counts for nothing."""
    if any(isinstance(t, Tensor) and t.dtype == torch.float64 for t in tensors):
        return torch.float64
    return torch.float32


def gains(relevance: Tensor, gain: Gain, dtype: torch.dtype) -> Tensor:
    """Gain of every item, in ``dtype``; masked items must be zeroed by the caller.

    Raises ValueError when ``gain="exp2"`` would overflow ``dtype`` (rather than return inf).
    Checking needs the labels' maximum, so it runs only when the caller validates values.
    """
    fn = resolve_gain(gain)
    values = fn(relevance if relevance.dtype == dtype else relevance.to(dtype))
    if not isinstance(values, Tensor) or values.shape != relevance.shape:
        raise ValueError(
            f"gain callable must return a tensor of the relevance's shape {tuple(relevance.shape)}"
        )
    return values if values.dtype == dtype else values.to(dtype)


def exp2_label_limit(dtype: torch.dtype, length: int) -> int:
    """The largest label whose ``exp2`` gains keep the DCG of a list of ``length`` items finite
    in ``dtype`` (see :func:`check_exp2_range`)."""
    return math.frexp(torch.finfo(dtype).max)[1] - 1 - math.ceil(math.log2(max(length, 1)))


def check_exp2_range(
    relevance: Tensor, gain: Gain, dtype: torch.dtype, length: int | Tensor | None = None
) -> None:
    """Refuse labels whose exp2 gains would overflow a DCG in ``dtype`` (synchronises with the device).

    A DCG adds at most ``length`` gains with discounts ≤ 1, so every sum stays finite while
    ``length * 2**rel`` does: labels up to ``max_exponent - 1 - ceil(log2(length))`` (124 for a
    float32 list of 5 items). ``length`` is the list length (by default the last dimension), or
    a tensor of each label's own list length (flat queries of different sizes).
    """
    if gain != "exp2" or relevance.numel() == 0:
        return
    if isinstance(length, Tensor):
        max_exponent = math.frexp(torch.finfo(dtype).max)[1]  # 128 for float32, 1024 for float64
        limits = max_exponent - 1 - torch.ceil(torch.log2(length.clamp(min=1).to(torch.float64)))
        over = relevance.to(torch.float64) > limits
        if bool(over.any()):
            first = int(over.nonzero()[0, 0])
            n, limit = int(length[first]), int(limits[first])
        else:
            return
    else:
        n = max(relevance.shape[-1] if length is None else length, 1)
        limit = exp2_label_limit(dtype, n)
        if not bool((relevance.to(torch.float64) > limit).any()):
            return
    raise ValueError(
        f"relevance labels above {limit} overflow gain='exp2' in {dtype} for lists of {n} "
        "items; pass float64 relevance (labels up to about 1000) or use gain='linear'"
    )


def discounts(depth: int, discount: Discount, dtype: torch.dtype, device: torch.device) -> Tensor:
    """``discount(rank)`` for ranks ``1..depth`` as a ``[depth]`` tensor (never modify it in place:
    the built-in ones are cached, since every metric call needs them)."""
    # Not cached under a torch.func transform: a tensor made there may be one of its wrappers,
    # which would outlive the transform in the cache.
    transformed = torch._C._are_functorch_transforms_active()
    if isinstance(discount, str) and not torch.compiler.is_compiling() and not transformed:
        return _builtin_discounts(depth, discount, dtype, device)
    return _discounts(depth, discount, dtype, device)


@functools.lru_cache(maxsize=256)
def _builtin_discounts(depth: int, discount: str, dtype: torch.dtype, device: torch.device) -> Tensor:
    # A normal tensor even if first asked for under inference_mode: losses reuse it in autograd.
    with torch.inference_mode(False):
        return _discounts(depth, discount, dtype, device)


def _discounts(depth: int, discount: Discount, dtype: torch.dtype, device: torch.device) -> Tensor:
    fn = resolve_discount(discount)
    ranks = torch.arange(1, depth + 1, dtype=dtype, device=device)
    values = fn(ranks)
    if not isinstance(values, Tensor) or values.shape != ranks.shape:
        raise ValueError("discount callable must map a rank tensor to a tensor of the same shape")
    return values.to(dtype)


def resolve_cutoffs(k: Cutoff) -> tuple[tuple[int | None, ...], bool]:
    """Normalise ``k`` to a tuple of cutoffs and whether the caller asked for several.

    ``None`` means the whole list. Every int must be ≥ 1; ``bool`` is refused because
    ``k=True`` is almost always a typo.
    """

    def one(value: object) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"k must be an int ≥ 1, None, or a sequence of those, got {value!r}")
        if value < 1:
            raise ValueError(f"k must be ≥ 1 (or None for the whole list), got {value}")
        return value

    if k is None or isinstance(k, int):
        return (one(k),), False
    if isinstance(k, Tensor):
        hint = " (a bool tensor there is probably a mask: pass it as mask=...)" if k.dtype == torch.bool else ""
        raise TypeError(f"k must be an int ≥ 1, None, or a sequence of those, got a tensor{hint}")
    if isinstance(k, (str, bytes)) or not isinstance(k, Sequence):
        raise TypeError(f"k must be an int ≥ 1, None, or a sequence of those, got {k!r}")
    if len(k) == 0:
        raise ValueError("k must not be an empty sequence")
    return tuple(one(v) for v in k), True


def clip_cutoff(k: int | None, length: int) -> int:
    """A cutoff larger than the list (or ``None``) means the whole list."""
    return length if k is None else min(k, length)


def sum_to_cutoffs(terms: Tensor, cutoffs: Cutoffs) -> Tensor:
    """``[..., D]`` per-rank terms → ``[..., C]`` sums over the first ``k`` ranks, one per cutoff."""
    totals = torch.cumsum(terms, dim=-1)
    index = [clip_cutoff(k, terms.shape[-1]) - 1 for k in cutoffs]
    if len(index) == 1:
        return totals.narrow(-1, index[0], 1)
    if terms.device.type == "cpu":  # index_select, not advanced indexing: the latter is several times slower
        return totals.index_select(-1, torch.tensor(index))
    # Elsewhere an index tensor built from a list is a host-to-device copy, which waits for the device.
    return torch.cat([totals.narrow(-1, i, 1) for i in index], dim=-1)
