"""Order items by score along the last axis: the one ranking step every exact metric uses.

:func:`top_ranks` is the contract. Given float scores ``[..., N]`` it returns the top ``depth``
items of every list in rank order, with the keys that say which of them are tied. How it gets
there is its own business:

* On an accelerator, and for long CPU lists, it runs ``torch.topk`` (a full sort when ``depth``
  is the whole list) on integer keys that order exactly like the scores.
* Short float32 CPU lists (≤ 256 items, numpy ≥ 2 on x86-64 or 64-bit Arm) are sorted on the
  host with numpy instead. CPU ``topk`` copies every row into (value, index) pairs for a branchy
  ``nth_element`` (~1.4 µs per row of 200 items); numpy's SIMD sort (x86-simd-sort, Highway's
  VQSort on Arm) orders a whole ``[64, 200]`` batch of packed 64-bit keys in ~30 µs (measured
  on an AVX-512 x86 CPU; Arm is untested here). Beyond 256 items that sort leaves its
  sorting-network path and ``topk`` wins. A validation loop of small batches spends most of its
  time here (``python -m benchmarks metrics``).

The same contract covers what callers may need beyond plain scores: a secondary key that
breaks ties (``tie_break``), and items that are present but never ranked (score ``-inf``: they
come after every ranked item; the caller gives them no gain at a rank, and may still count them
in an ideal ranking). Per-item weights are a matter of gains, not of order.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

_KEY_DTYPE = {torch.float32: torch.int32, torch.float64: torch.int64}

# Integer keys speed up CPU topk by ~15-25 % on fresh data (64 × 200: 128 → 108 µs; 2,000 × 100:
# 1.15 → 0.86 ms), but on large batches each of their four elementwise passes is a fresh
# memory-bound allocation (10,000 × 1,000: 16 → 62 ms). Time topk on a new tensor each call:
# repeating one small tensor lets the CPU learn its branches and hides most of topk's cost.
_KEYS_PAY_OFF = 2**21

# The host path: numpy's vectorised sorts (numpy ≥ 2 on x86-64 and 64-bit Arm) on lists of at
# most _HOST_LENGTH items, in batches whose packed keys (16 bytes per item while sorting) stay small.
_SIMD_SORT = int(np.__version__.split(".")[0]) >= 2 and platform.machine().lower() in (
    "x86_64", "amd64", "aarch64", "arm64",
)
_HOST_LENGTH = 256
_HOST_ITEMS = 2**22
_LOW_WORD = 0xFFFFFFFF


def ordered_key(values: Tensor, *, nonnegative: bool = False) -> Tensor:
    """Integers that order, and compare equal, exactly as the floats ``values`` (no NaN).

    A float's bits read as a signed integer order non-negative floats correctly (so
    ``nonnegative=True`` is a free view); flipping the magnitude bits of negative ones reverses
    their order, and adding +0.0 first turns -0.0 into +0.0 so the two zeros stay tied.
    float32 gives int32 keys, float64 int64 keys.
    """
    if nonnegative:
        return values.view(_KEY_DTYPE[values.dtype])
    bits = (values + 0.0).view(_KEY_DTYPE[values.dtype])
    width = bits.element_size() * 8
    return bits ^ ((bits >> (width - 1)) & torch.iinfo(bits.dtype).max)


@dataclass(frozen=True)
class TopRanks:
    """The first ``depth`` ranks of every list.

    ``index`` says which item holds each rank; ``top_keys`` are those items' keys (equal keys =
    tied scores) in descending order; ``keys`` are every item's keys, for the tie group that
    straddles the cutoff. ``distinct`` is True when no two of the ranked items tie with each
    other or with the first unranked one (ties were absent, or ``tie_break`` broke them); False
    means ties are possible. ``whole_groups`` is True when ``index`` and ``top_keys`` go on past
    ``depth`` (in every row alike) until no tie group that reaches into the first ``depth`` ranks
    continues beyond them, so that ``keys`` need not be searched for the rest of the group that
    straddles the cutoff. ``group`` numbers the tie groups of each row in rank order (0, 1, …;
    tied items share a number), where the host found them along the way; ``None`` otherwise.
    """

    keys: Tensor  # [..., N]
    top_keys: Tensor  # [..., depth], or [..., W ≥ depth] with whole_groups
    index: Tensor  # [..., depth], or [..., W ≥ depth] with whole_groups
    distinct: bool
    whole_groups: bool = False
    group: Tensor | None = None  # int64, shaped like index


def top_ranks(
    scores: Tensor,
    depth: int,
    *,
    tie_break: Tensor | None = None,
    find_ties: bool = False,
) -> TopRanks:
    """Rank float ``scores [..., N]`` (no NaN; ``-inf`` = never ranked) into their first ``depth`` ranks.

    Args:
        scores: ``[..., N]`` float32 or float64 scores; higher ranks first.
        depth: how many ranks to fill, ``1 ≤ depth ≤ N``.
        tie_break: ``[..., N]`` floats that order tied scores (larger first), e.g. minus the
            item's position for "earlier first"; items tied in both come in an unspecified
            order (give them distinct values where that matters). ``None``: tied items come in
            an unspecified order and ``top_keys`` shows the ties.
        find_ties: also decide whether the ranked items are tie-free (``distinct``), which
            reads one value on the host (a device synchronisation on an accelerator); where
            the whole lists were sorted on the host anyway, also rank the rest of any tie group
            that straddles the cutoff (``whole_groups``).

    Example:
        >>> import torch
        >>> ranks = top_ranks(torch.tensor([[0.1, 0.9, 0.5]]), 2)
        >>> ranks.index
        tensor([[1, 2]])
    """
    length = scores.shape[-1]
    if find_ties and tie_break is None:
        array = _host_array(scores)
        if array is not None:
            return _host_ranks(scores.shape, array, depth)
    wanted = depth + (find_ties and tie_break is None and depth < length)  # a tie may cross the cutoff
    keys, top_keys, index = _top_keys(scores, wanted)
    if tie_break is not None:
        return TopRanks(keys, top_keys, _break_ties(keys, top_keys, index, tie_break), True)
    distinct = find_ties and not _has_neighbours_equal(top_keys)
    return TopRanks(keys, top_keys[..., :depth], index[..., :depth], distinct)


def top_values(values: Tensor, depth: int, *, nonnegative: bool = False) -> Tensor:
    """The ``depth`` largest of ``values [..., N]`` (no NaN) in descending order, without indices.

    ``nonnegative=True`` promises no negative values, whose bits then rank them for free.
    """
    array = _host_array(values)
    if array is not None:
        best = torch.from_numpy(np.sort(array, axis=-1)[..., : -depth - 1 : -1].copy())
        return best if values.dim() == 2 else best.reshape(*values.shape[:-1], depth)
    if nonnegative:
        return values.gather(-1, _top(ordered_key(values, nonnegative=True), depth)[1])
    return _top(values, depth)[0]


def _top(values: Tensor, depth: int) -> tuple[Tensor, Tensor]:
    """``torch.topk`` of the last axis (a full sort when ``depth`` is the whole axis)."""
    if depth == values.shape[-1]:
        return torch.sort(values, dim=-1, descending=True)
    return torch.topk(values, depth, dim=-1, largest=True, sorted=True)


def _top_keys(scores: Tensor, depth: int) -> tuple[Tensor, Tensor, Tensor]:
    """``(keys [..., N], top_keys [..., depth], index [..., depth])``, tied keys in any order."""
    array = _host_array(scores)
    if array is not None:
        return _host_top(scores.shape, array, depth)
    keys = ordered_key(scores) if scores.numel() < _KEYS_PAY_OFF else scores
    return (keys, *_top(keys, depth))


def _host_array(values: Tensor) -> np.ndarray | None:
    """``values`` as a numpy ``[L, N]`` view when they take the host path, else ``None``."""
    if not (
        _SIMD_SORT
        and values.dtype == torch.float32
        and values.is_cpu
        and values.shape[-1] <= _HOST_LENGTH
        and values.numel() <= _HOST_ITEMS
        and not torch.compiler.is_compiling()
    ):
        return None
    try:
        array = values.numpy(force=True)
    except RuntimeError:  # a functorch transform (vmap, grad) wraps the tensor: no host data
        return None
    return array if array.ndim == 2 else array.reshape(-1, array.shape[-1])


def _host_sort(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each list's ordered keys (:func:`ordered_key`'s transform), and the keys packed with the
    items' positions and sorted ascending.

    The key fills the high word and the position the low word, so one ascending SIMD sort of
    plain int64s, read backwards, is a descending argsort (tied items in decreasing position
    order), several times faster than numpy's argsort.
    """
    bits = (scores + np.float32(0.0)).view(np.int32)
    keys = bits >> 31
    keys &= 0x7FFFFFFF
    keys ^= bits
    packed = np.left_shift(keys, 32, dtype=np.int64)
    packed |= np.arange(keys.shape[-1], dtype=np.int64)
    packed.sort(axis=-1)
    return keys, packed


def _host_tensors(shape: torch.Size, *arrays: np.ndarray) -> tuple[Tensor, ...]:
    """``[L, *]`` arrays as tensors with the leading axes of ``shape``."""
    found = tuple(torch.from_numpy(array) for array in arrays)
    if len(shape) == 2:
        return found
    return tuple(part.reshape(*shape[:-1], part.shape[-1]) for part in found)


def _host_top(shape: torch.Size, scores: np.ndarray, depth: int) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`_top_keys` with one numpy sort of the whole batch (:func:`_host_sort`)."""
    keys, packed = _host_sort(scores)
    best = packed[:, : -depth - 1 : -1]
    return _host_tensors(shape, keys, (best >> 32).astype(np.int32), best & _LOW_WORD)


def _host_ranks(shape: torch.Size, scores: np.ndarray, depth: int) -> TopRanks:
    """:func:`top_ranks` with ``find_ties`` from one numpy sort of the whole batch.

    The sort orders whole lists, so whole groups cost one comparison: the ranks widen to the
    deepest row's count of items that score at least its rank-``depth`` item. The tie groups
    and ``distinct`` come from the same neighbour comparison, in numpy, which costs less than
    torch's calls on arrays this small.
    """
    keys, packed = _host_sort(scores)
    rows, length = packed.shape
    width = depth
    if depth < length and rows:
        # Items of key ≥ the rank-depth key form a suffix of each ascending row; argmax finds its start.
        at_cutoff = packed[:, length - depth : length - depth + 1] & ~np.int64(_LOW_WORD)
        width = length - int((packed >= at_cutoff).argmax(axis=-1).min())
    best = packed[:, : -width - 1 : -1]
    top_keys = (best >> 32).astype(np.int32)
    group = np.zeros(top_keys.shape, dtype=np.int64)
    np.cumsum(top_keys[:, 1:] != top_keys[:, :-1], axis=-1, out=group[:, 1:])
    distinct = width == depth and bool((group[:, -1] == depth - 1).all())
    found = _host_tensors(shape, keys, top_keys, best & _LOW_WORD, group)
    return TopRanks(*found[:3], distinct, whole_groups=True, group=found[3])


def _has_neighbours_equal(sorted_keys: Tensor) -> bool:
    """Whether two neighbours along the last axis of sorted keys are equal (synchronises)."""
    if sorted_keys.is_cpu:
        try:
            keys = sorted_keys.numpy(force=True)  # numpy's calls cost less than torch's on small arrays
        except RuntimeError:  # inside a functorch transform no value can be read: assume ties
            return True
        return bool((keys[..., 1:] == keys[..., :-1]).any())
    return bool((sorted_keys[..., 1:] == sorted_keys[..., :-1]).any())


def _break_ties(keys: Tensor, top_keys: Tensor, index: Tensor, tie_break: Tensor) -> Tensor:
    """``index`` reordered so that tied keys follow ``tie_break`` (descending)."""
    depth = index.shape[-1]
    # Order the selected items exactly: tie_break first, then a stable sort by key.
    by_priority = torch.sort(tie_break.gather(-1, index), dim=-1, descending=True, stable=True).indices
    index = index.gather(-1, by_priority)
    by_key = torch.sort(top_keys.gather(-1, by_priority), dim=-1, descending=True, stable=True).indices
    index = index.gather(-1, by_key)
    if depth < keys.shape[-1]:
        # Which members of the straddling tie group made the cut must follow tie_break, not
        # topk's arbitrary choice: take that group's members by tie_break instead.
        threshold = top_keys[..., -1:]
        above = (top_keys > threshold).sum(-1, keepdim=True)
        group_priority = torch.where(keys == threshold, tie_break, torch.full_like(tie_break, -torch.inf))
        group_index = _top(group_priority, depth)[1]
        position = torch.arange(depth, device=index.device).expand_as(index)
        from_group = group_index.gather(-1, (position - above).clamp(min=0))
        index = torch.where(position < above, index, from_group)
    return index
