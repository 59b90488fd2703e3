"""Without a GPU, run every kernel test in Triton's CPU interpreter, in a fresh process."""

import os
import subprocess
import sys

import pytest
from kernel_setup import HERE, KERNEL_TESTS, kernels_run_here

pytest.importorskip("triton")


@pytest.mark.slow
@pytest.mark.skipif(kernels_run_here(), reason="the kernel tests run in this process (GPU or interpreter)")
def test_kernel_tests_pass_under_the_interpreter() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *map(str, KERNEL_TESTS)]
    result = subprocess.run(command, env=env, cwd=HERE.parent.parent, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout[-2000:]
