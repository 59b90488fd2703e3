"""Fixtures for the loss tests."""

from __future__ import annotations

import pytest
import torch

from torch_ndcg.losses import kernels


@pytest.fixture
def small_blocks(monkeypatch):
    """Tiny blocks, so the streaming primitives cross list and row boundaries on small inputs."""
    monkeypatch.setattr(kernels, "BLOCK_BYTES", 4 * 9 * 8)  # a few rows of one list
