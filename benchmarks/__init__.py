"""Benchmarks of torch_ndcg, kept beside the package (not installed with it).

``python -m benchmarks {eval,losses,metrics,gpu,trec,flat_losses,distill}`` from the repository root;
each prints one table measured in one run. Their optional peers are in the ``bench`` extra.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a benchmark's worker process (``python -m benchmarks.…``),
    with the repository root on ``PYTHONPATH`` so the worker finds this folder from any directory."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env
