"""Shared test settings: deterministic seeds and a bounded hypothesis profile for CI."""

import os

import pytest
import torch
from hypothesis import settings

settings.register_profile("ci", max_examples=40, deadline=None)
settings.register_profile("dev", max_examples=150, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One torch thread per worker process (pytest -n 2): two workers of two threads each on a
    # 2-core machine make small torch calls many times slower.
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
