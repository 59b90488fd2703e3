"""The optional compiled loops of the kernel Sinkhorn (``scaling_chain.c``), built on first use.

NeuralNDCG's kernel path runs ~100 dependent half-steps forward and as many backward; on short
CPU lists each batched call costs more than its arithmetic. ``scaling_chain.c`` runs each chain
in one call, a list at a time in cache. It is compiled the first time a CPU chain runs, with the
system's C compiler (``$CC``, else ``cc``, ``gcc`` or ``clang``) for this machine's CPU, into a cache
folder (``$TORCH_NDCG_CACHE``, else ``$XDG_CACHE_HOME/torch_ndcg`` or ``~/.cache/torch_ndcg``),
and loaded with :mod:`ctypes`. Without a compiler (or with ``TORCH_NDCG_NATIVE=0``) the same
chains run as NumPy/torch calls: same values to float rounding, only slower.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy
import torch
from torch import Tensor

SOURCE = Path(__file__).with_name("scaling_chain.c")
# -march=native: the vector extension then uses the machine's widest registers (AVX-512 ran the
# 64 × 27 chain 3× faster than NumPy, plain x86-64 no faster than NumPy). The cache key holds the
# CPU's flags, so a cache folder shared between machines never loads another CPU's build.
FLAGS = ("-O3", "-march=native", "-shared", "-fPIC", "-std=gnu99")
PORTABLE_FLAGS = ("-O3", "-shared", "-fPIC", "-std=gnu99")  # for compilers without -march=native
_SUFFIX = {torch.float32: "f32", torch.float64: "f64"}

build_seconds: float | None = None
"""Seconds the last :func:`library` call spent compiling (``0.0`` when it found a cached build)."""


def _compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and (path := shutil.which(name)):
            return path
    return None


def _cache_dir() -> Path:
    if folder := os.environ.get("TORCH_NDCG_CACHE"):
        return Path(folder)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "torch_ndcg"


def _cpu_signature() -> str:
    """What the CPU can run: its flags line on Linux, else the platform's description."""
    try:
        with open("/proc/cpuinfo") as info:
            return next((line for line in info if line.startswith(("flags", "Features"))), "")
    except OSError:
        return platform.processor() + platform.machine()


def _build(compiler: str, folder: Path) -> Path | None:
    source = SOURCE.read_bytes()
    for flags in (FLAGS, PORTABLE_FLAGS):
        key = hashlib.sha256(b"\0".join([source, compiler.encode(), " ".join(flags).encode(),
                                         _cpu_signature().encode(), sys.platform.encode()])).hexdigest()[:16]  # fmt: skip
        target = folder / f"scaling_chain-{key}.so"
        if target.exists():
            return target
        folder.mkdir(parents=True, exist_ok=True)
        # Built under a temporary name and renamed: processes building at once never load half a file.
        handle, partial = tempfile.mkstemp(suffix=".so", dir=folder)
        os.close(handle)
        done = subprocess.run([compiler, *flags, str(SOURCE), "-o", partial], capture_output=True, timeout=120)
        if done.returncode == 0:
            os.replace(partial, target)
            return target
        os.unlink(partial)
    return None


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL | None:
    """The compiled chains, built on the first call; ``None`` where they cannot be built or loaded
    (no C compiler, a read-only cache folder, Windows) or ``TORCH_NDCG_NATIVE=0``."""
    global build_seconds
    compiler = _compiler()
    if os.environ.get("TORCH_NDCG_NATIVE", "1") == "0" or compiler is None or sys.platform == "win32":
        return None
    start = time.perf_counter()
    try:
        path = _build(compiler, _cache_dir())
        if path is None:
            return None
        lib = ctypes.CDLL(str(path))
    except (OSError, subprocess.SubprocessError):
        return None
    build_seconds = time.perf_counter() - start
    pointer, integer = ctypes.c_void_p, ctypes.c_int
    for suffix in _SUFFIX.values():
        getattr(lib, f"scalings_{suffix}").argtypes = [pointer] * 5 + [integer] * 3
        getattr(lib, f"walk_back_{suffix}").argtypes = [pointer] * 4 + [integer] * 3
    return lib


def usable(*tensors: Tensor) -> bool:
    """Whether the compiled chains can take these tensors: C-contiguous CPU float32/float64 of one
    dtype, and the library built."""
    first = tensors[0]
    return (
        first.device.type == "cpu"
        and first.dtype in _SUFFIX
        and all(t.dtype == first.dtype and t.device.type == "cpu" and t.is_contiguous() for t in tensors)
        and library() is not None
    )


def _kinds(kinds: list[int]) -> numpy.ndarray:
    return numpy.asarray(kinds, dtype=numpy.uint8)


def _call(name: str, dtype: torch.dtype, *args: object) -> None:
    if getattr(library(), f"{name}_{_SUFFIX[dtype]}")(*args) != 0:
        raise MemoryError(f"the compiled Sinkhorn chain could not allocate its scratch ({name})")


def scalings(history: Tensor, start: Tensor, right: tuple[Tensor, Tensor], kinds: list[int]) -> None:
    """``history[h] = 1 / (history[h − 1] @ right[kinds[h]])`` per list, ``history[−1] = start``;
    ``history [steps, b, w]``, ``start [b, w]``, ``right`` two ``[b, w, w]``."""
    steps, b, w = history.shape
    codes = _kinds(kinds[:steps])
    _call("scalings", history.dtype, history.data_ptr(), start.data_ptr(), right[0].data_ptr(),
          right[1].data_ptr(), codes.ctypes.data, steps, b, w)  # fmt: skip


def walk_back(rows: Tensor, m: tuple[Tensor, Tensor], kinds: list[int]) -> None:
    """``rows[h − 1] *= rows[h] @ m[kinds[h]]`` per list for ``h`` from the last row down to 1."""
    steps, b, w = rows.shape
    codes = _kinds(kinds[:steps])
    _call("walk_back", rows.dtype, rows.data_ptr(), m[0].data_ptr(), m[1].data_ptr(), codes.ctypes.data, steps, b, w)
