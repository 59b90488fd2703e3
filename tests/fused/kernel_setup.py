"""Where the kernel tests run: on a GPU, or in Triton's interpreter (see conftest.py)."""

import os
from pathlib import Path

import torch

HERE = Path(__file__).parent
KERNEL_TESTS = sorted(HERE.glob("test_kernel_*.py"))
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def kernels_run_here() -> bool:
    return torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1"
