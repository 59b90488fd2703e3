"""Peak memory growth of a piece of code, measured in a fresh Python process.

The child runs ``setup`` (imports, inputs), notes its resident set, resets the kernel's peak
(``/proc/self/clear_refs``), runs ``code`` and reports the peak resident set (``VmHWM``) minus
that baseline. Its address space is capped a few GiB above the baseline, so code whose memory
does not follow the data fails with a MemoryError instead of taking a shared machine's memory.

glibc's malloc raises its mmap threshold as large blocks are freed, after which freed blocks stay
in the heap and a run's resident peak carries spikes of tens of MiB that depend on the order of
frees, not on the code. The child pins the threshold (``MALLOC_MMAP_THRESHOLD_``), so every block
of 128 KiB or more is mapped and returned on free, and the peak is the same run after run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import resource, sys
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
exec(compile(sys.argv[1], "<setup>", "exec"))
size = status("VmSize")
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[3]), resource.RLIM_INFINITY))
base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
exec(compile(sys.argv[2], "<code>", "exec"))
print("PEAK", status("VmHWM") - base)
"""


def available() -> bool:
    return sys.platform == "linux" and os.access("/proc/self/clear_refs", os.W_OK)


def peak_growth(setup: str, code: str, *, cap: int = 3 << 30, timeout: float = 120) -> int:
    """Bytes the resident set grew by while ``code`` ran (``cap``: the address space allowed on top)."""
    if not available():
        pytest.skip("peak memory needs Linux's /proc/self/clear_refs")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "MALLOC_MMAP_THRESHOLD_": str(128 << 10)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, setup, code, str(cap)], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split("PEAK")[-1])
