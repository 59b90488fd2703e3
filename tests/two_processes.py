"""Run a test's ``worker(rank, port)`` in two gloo processes on this machine (CPU)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn(worker: Callable[[int, int], None], processes: int = 2) -> None:
    """``worker(rank, port)`` in ``processes`` processes, joined; a worker's error fails the caller."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    mp.spawn(worker, args=(free_port(),), nprocs=processes, join=True)
