"""Top-k selection along the last axis: the one step every exact metric ranks with.

On an accelerator, and for long CPU lists, this is ``torch.topk`` (or a full sort) on integer
keys. Short float32 CPU lists (up to 256 items, numpy ≥ 2) are sorted on the host with numpy
instead: CPU ``topk`` copies every row into (value, index) pairs for a branchy
``nth_element`` (~1.4 µs per row of 200 items), while numpy's SIMD sort (x86-simd-sort on
x86, Highway's VQSort on Arm) orders a whole ``[64, 200]`` batch of packed 64-bit keys in
~30 µs, the time of 20 rows of ``topk`` (measured on an AVX-512 x86 CPU; Arm is untested
here). Beyond 256 items that sort leaves its sorting-network path and ``topk`` (which switches
to a partial sort when ``64·k ≤ N``) wins. A validation loop of small batches spends most of
its time here (``python -m torch_ndcg.bench metrics``).
"""

from __future__ import annotations

import platform

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


def ordered_key(values: Tensor, *, nonnegative: bool = False) -> Tensor:
    """Integers that order, and compare equal, exactly as the floats ``values`` (no NaN).

    A float's bits read as a signed integer order non-negative floats correctly (so
    ``nonnegative=True`` is a free view); flipping the magnitude bits of negative ones reverses
    their order, and adding +0.0 first turns -0.0 into +0.0 so the two zeros stay tied.
    """
    if nonnegative:
        return values.view(_KEY_DTYPE[values.dtype])
    bits = (values + 0.0).view(_KEY_DTYPE[values.dtype])
    width = bits.element_size() * 8
    return bits ^ ((bits >> (width - 1)) & torch.iinfo(bits.dtype).max)


def top(values: Tensor, depth: int) -> tuple[Tensor, Tensor]:
    """The ``depth`` largest ``values`` along the last axis (descending) and their indices, with
    ``torch.topk`` (a full sort when ``depth`` is the whole axis). Equal values come in an
    unspecified order."""
    if depth == values.shape[-1]:
        return torch.sort(values, dim=-1, descending=True)
    return torch.topk(values, depth, dim=-1, largest=True, sorted=True)


def top_scores(
    scores: Tensor, depth: int, *, presorted: HostSort | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Rank float ``scores [..., N]``: ``(keys, top_keys, index)``.

    ``keys [..., N]`` order and compare exactly as the scores (-0.0 ties with +0.0; see
    :func:`ordered_key`; long lists keep the scores themselves), ``top_keys [..., depth]`` are
    the largest keys in descending order and ``index`` says where they sit. Tied keys come in
    an unspecified order. ``presorted`` is :func:`host_sort` of the same scores, when the
    caller already has it.
    """
    if presorted is None:
        presorted = host_sort(scores)
    if presorted is not None:
        return presorted.top(depth)
    keys = ordered_key(scores) if scores.numel() < _KEYS_PAY_OFF else scores
    return (keys, *top(keys, depth))


def top_values(values: Tensor, depth: int, *, nonnegative: bool = False) -> Tensor:
    """The ``depth`` largest of ``values [..., N]`` (no NaN) in descending order, without indices.

    ``nonnegative=True`` promises no negative values, whose bits then rank them for free.
    """
    if _on_host(values):
        return torch.from_numpy(_largest(values.numpy(force=True), depth).copy())
    if nonnegative:
        return values.gather(-1, top(ordered_key(values, nonnegative=True), depth)[1])
    return top(values, depth)[0]


def has_ties(top_keys: Tensor) -> bool:
    """Whether two neighbours along the last axis of sorted ``top_keys`` are equal (synchronises)."""
    if top_keys.device.type == "cpu" and not torch.compiler.is_compiling():
        return _has_neighbours_equal(top_keys.numpy(force=True))  # numpy's calls cost less than torch's
    return bool((top_keys[..., 1:] == top_keys[..., :-1]).any())


def _has_neighbours_equal(keys: np.ndarray) -> bool:
    return bool((keys[..., 1:] == keys[..., :-1]).any())


def _largest(values: np.ndarray, depth: int) -> np.ndarray:
    """The ``depth`` largest of ``values [..., N]`` in descending order (a view of a sorted copy)."""
    return np.sort(values, axis=-1)[..., : -depth - 1 : -1]


def _on_host(values: Tensor) -> bool:
    """Whether ``values`` may take the numpy path: a short float32 CPU list outside any tracing."""
    return (
        _SIMD_SORT
        and values.dtype == torch.float32
        and values.is_cpu
        and values.shape[-1] <= _HOST_LENGTH
        and values.numel() <= _HOST_ITEMS
        and not torch.compiler.is_compiling()
        and not torch._C._are_functorch_transforms_active()
    )


_POSITIONS = np.arange(0, dtype=np.int64)  # grown on demand; batches of every shape slice it


def _flat_positions(lists: int, length: int) -> np.ndarray:
    """``[lists, length]`` view of ``0, 1, 2, …``: one array of at most ``_HOST_ITEMS`` kept around."""
    global _POSITIONS
    if _POSITIONS.shape[0] < lists * length:
        _POSITIONS = np.arange(lists * length, dtype=np.int64)
    return _POSITIONS[: lists * length].reshape(lists, length)


_LOW_WORD = 0xFFFFFFFF


def host_sort(scores: Tensor) -> HostSort | None:
    """``scores`` to be sorted on the host when they take the numpy path (see the module notes), else ``None``."""
    return HostSort(scores) if _on_host(scores) else None


class HostSort:
    """Float32 ``scores [..., N]`` sorted per list with numpy, once (at the first question), for
    every question asked of them.

    Each list's ordered keys (:func:`ordered_key`'s transform) are packed with the items' flat
    positions (``list * N + item``): the key fills the high word and the position the low word,
    so one ascending SIMD sort of plain int64s, read backwards, is a descending argsort (tied
    items in decreasing position order), several times faster than numpy's argsort, and the
    positions index the flattened batch directly.
    """

    def __init__(self, scores: Tensor) -> None:
        self.scores = scores
        self.shape = scores.shape
        self._keys: np.ndarray | None = None  # [L, N]
        self._packed: np.ndarray | None = None  # [L, N], ascending

    def _sort(self) -> None:
        bits = (_as_lists(self.scores) + np.float32(0.0)).view(np.int32)
        keys = bits >> 31
        keys &= 0x7FFFFFFF
        keys ^= bits
        packed = np.left_shift(keys, 32, dtype=np.int64)
        packed |= _flat_positions(*keys.shape)
        packed.sort(axis=-1)
        self._keys, self._packed = keys, packed

    def _best(self, depth: int) -> np.ndarray:
        if self._packed is None:
            self._sort()
        return self._packed[:, : -depth - 1 : -1]

    def _shaped(self, array: np.ndarray, *leading: int) -> Tensor:
        tensor = torch.from_numpy(array)
        if len(self.shape) == 2:
            return tensor
        return tensor.reshape(*leading, *self.shape[:-1], array.shape[-1])

    def top(self, depth: int) -> tuple[Tensor, Tensor, Tensor]:
        """:func:`top_scores` of the sorted scores."""
        best = self._best(depth)
        index = (best & _LOW_WORD) % self.shape[-1]
        return (
            self._shaped(self._keys),
            self._shaped((best >> 32).astype(np.int32)),
            self._shaped(index),
        )

    def tie_free_gains(self, gains: Tensor, depth: int, *, ideal: bool) -> Tensor | None:
        """Gains of the top ``depth`` items in score order, when no two of a list's top ``depth + 1``
        scores tie (else ``None``: the caller needs tie groups).

        Returns ``[..., depth]``, or with ``ideal`` ``[2, ..., depth]`` whose second half is the
        ``depth`` largest gains in descending order, all in a few numpy calls.
        """
        # One more item than needed: a tie between the last slot and the next one crosses the cutoff.
        best = self._best(min(depth + 1, self.shape[-1]))
        if _has_neighbours_equal(best >> 32):
            return None
        values = _as_lists(gains)
        ordered = np.empty((1 + ideal, values.shape[0], depth), dtype=values.dtype)
        np.take(values, best[:, :depth] & _LOW_WORD, out=ordered[0])  # positions index the flat batch
        if ideal:
            ordered[1] = _largest(values, depth)
        result = self._shaped(ordered, 1 + ideal)
        return result if ideal else result[0]


def _as_lists(values: Tensor) -> np.ndarray:
    """A CPU tensor ``[..., N]`` as an ``[L, N]`` numpy array sharing its memory where it can."""
    array = values.numpy(force=True)
    return array if array.ndim == 2 else array.reshape(-1, array.shape[-1])
