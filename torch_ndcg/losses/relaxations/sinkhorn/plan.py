"""Which lists the kernel Sinkhorn processes together: groups of similar length, and where a
group's lists sit in the batch.

Lists are sorted by decreasing length and cut into contiguous groups, each as wide as its
longest list and at most :data:`GROUP_ELEMENTS` kernel elements (cache-sized): a ragged batch
then costs about ``Σ nᵢ²`` rather than ``B · max(n)²``.
"""

from __future__ import annotations

import functools
import math

from torch import Tensor

# Kernel elements per group: about 1 MiB in float32, so that a group's kernel, re-read by every
# half-step, stays in a CPU's L2 cache.
GROUP_ELEMENTS = 2**18
# What one more group costs, in kernel elements: its fixed per-step operations cost about as
# much as products over this many elements.
GROUP_OVERHEAD_ELEMENTS = 2**15


def plan(lengths: list[int], budget: int = 0) -> list[tuple[int, int, int]]:
    """Groups ``(first, stop, width)`` of lists sorted by decreasing length, each as wide as its
    first list and at most ``budget`` kernel elements, chosen to minimise
    ``Σ_groups (size · width² + GROUP_OVERHEAD_ELEMENTS)``: the products' work plus, per group,
    about what its fixed per-step cost is worth. Lists of length 0 get no group.
    """
    return list(_plan(tuple(lengths), budget or GROUP_ELEMENTS, GROUP_OVERHEAD_ELEMENTS))


@functools.lru_cache(maxsize=4)  # forward and backward plan the same batch
def _plan(lengths: tuple[int, ...], budget: int, overhead: int) -> tuple[tuple[int, int, int], ...]:
    """:func:`plan` as an exact dynamic programme over the boundaries between runs of equal length
    (a group gains nothing by splitting a run unless the budget makes it, and then it is cut into
    equal chunks). A group that starts at an earlier run than ``q`` costs at least
    ``best[q] + size · width'²`` (its lists before ``q`` cost at least ``best[q]``): once that is
    no better than the best so far, no earlier start is."""
    count = sum(1 for n in lengths if n > 0)
    starts = [i for i in range(count) if i == 0 or lengths[i] != lengths[i - 1]] + [count]
    squares = [lengths[first] ** 2 for first in starts[:-1]]
    best, cut = [0] + [0] * (len(starts) - 1), [0] * len(starts)
    for k in range(1, len(starts)):
        stop, best_k, cut_k = starts[k], math.inf, 0
        for q in range(k - 1, -1, -1):
            size = stop - starts[q]
            work = size * squares[q]
            chunks = 1 if work <= budget else -(-size // max(1, budget // squares[q]))
            cost = best[q] + work + chunks * overhead
            if cost < best_k:
                best_k, cut_k = cost, q
            if q and best[q] + size * squares[q - 1] >= best_k:
                break
        best[k], cut[k] = best_k, cut_k
    groups: list[tuple[int, int, int]] = []
    k = len(starts) - 1
    while k > 0:
        first, stop = starts[cut[k]], starts[k]
        chunks = -(-(stop - first) // max(1, budget // (lengths[first] ** 2)))
        bounds = [first + (stop - first) * c // chunks for c in range(chunks + 1)]
        groups[:0] = [(lo, hi, lengths[lo]) for lo, hi in zip(bounds, bounds[1:])]
        k = cut[k]
    return tuple(groups)


class Place:
    """Where a group's lists sit in a batch whose real items come first in every row: rows
    ``first:stop`` of the length order (``order``, or the batch order itself when it is already
    by decreasing length), the first ``width`` items."""

    def __init__(self, first: int, stop: int, width: int, order: Tensor | None):
        self.first, self.stop, self.width = first, stop, width
        self.lists = None if order is None else order[first:stop]

    def take_lists(self, t: Tensor) -> Tensor:
        """The group's rows of ``t`` (any trailing shape)."""
        return t[self.first : self.stop] if self.lists is None else t[self.lists]

    def take(self, t: Tensor) -> Tensor:
        """The group's ``[b, width]`` block of a ``[B, N]`` tensor."""
        return self.take_lists(t)[:, : self.width]

    def take_steps(self, t: Tensor) -> Tensor:
        """The group's ``[steps, b, width]`` block of a ``[steps, B, N]`` tensor (a copy)."""
        rows = t[:, self.first : self.stop] if self.lists is None else t[:, self.lists]
        return rows[:, :, : self.width].contiguous()

    def put_rows(self, target: Tensor, values: Tensor) -> None:
        """Writes the group's whole rows ``values [b, ...]`` into ``target``."""
        target[slice(self.first, self.stop) if self.lists is None else self.lists] = values

    def take_square(self, t: Tensor) -> Tensor:
        """The group's ``[b, width, width]`` block of a ``[B, N, N]`` tensor (a copy)."""
        return self.take_lists(t)[:, : self.width, : self.width].contiguous()

    def put_square(self, target: Tensor, values: Tensor) -> None:
        """Writes the group's ``[b, width, width]`` values into ``[B, N, N]`` ``target``."""
        rows = slice(self.first, self.stop) if self.lists is None else self.lists
        target[rows, : self.width, : self.width] = values

    def put(self, target: Tensor, values: Tensor) -> None:
        """Writes the group's per-list ``[b]`` or per-item ``[b, width]`` values into ``target``."""
        rows = slice(self.first, self.stop) if self.lists is None else self.lists
        if values.dim() == 1:
            target[rows] = values
        else:
            target[rows, : self.width] = values

    def put_steps(self, target: Tensor, values: Tensor) -> None:
        """Writes the group's ``[steps, b, width]`` values into ``[steps, B, N]`` ``target``."""
        rows = slice(self.first, self.stop) if self.lists is None else self.lists
        target[: values.shape[0], rows, : self.width] = values
