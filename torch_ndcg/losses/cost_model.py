"""Measured costs of NeuralNDCG's kernel and streaming paths: how ``impl="auto"`` chooses.

Each path's time per Sinkhorn iteration (forward + backward) is modelled as

.. math:: t \\approx c_\\text{call} \\cdot \\text{calls} + c_\\text{element} \\cdot \\text{elements}

with the kernel path's calls = its groups of lists (:func:`.sinkhorn_kernel.plan`) and elements =
their ``Σ b·w²`` (ragged batches cost about ``Σ nᵢ²``), and the streaming path's one call over
``B·N²`` padded elements. The coefficients are fitted per device type and thread count by
``python -m torch_ndcg.bench calibrate``; :data:`MEASURED` holds its output.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import sinkhorn_kernel


@dataclass(frozen=True)
class Cost:
    per_call: float  # seconds per iteration and call (a kernel group; the one streaming call)
    per_element: float  # seconds per iteration and N² element


# `python -m torch_ndcg.bench calibrate` on 2026-11-24: Intel Xeon (x86_64, AVX-512), 2 cores shared
# with other jobs (so the fit is rough), torch 2.13.0+cpu, the kernel path's loops compiled
# (:mod:`.native`; the fit of 2026-11-23, before them, had a kernel per_element of 2.1e-9 on one
# thread, still a tenth of streaming's); (device type, threads, impl) → Cost.
# No CUDA entry: no GPU was measured, and there "auto" keeps the kernel path whenever it fits.
MEASURED: dict[tuple[str, int, str], Cost] = {
    ("cpu", 1, "kernel"): Cost(per_call=1.425e-04, per_element=7.603e-10),
    ("cpu", 1, "streaming"): Cost(per_call=5.937e-04, per_element=2.127e-08),
    ("cpu", 2, "kernel"): Cost(per_call=1.257e-04, per_element=6.934e-10),
    ("cpu", 2, "streaming"): Cost(per_call=4.918e-04, per_element=1.104e-08),
}


def work(impl: str, lengths: list[int], width: int) -> tuple[int, int]:
    """``(calls, elements)`` of one iteration of ``impl`` on lists of these real ``lengths``
    padded to ``width``."""
    if impl == "kernel":
        groups = sinkhorn_kernel.plan(sorted(lengths, reverse=True))
        return len(groups), sum((stop - first) * w * w for first, stop, w in groups)
    return 1, len(lengths) * width * width


def costs_for(device: torch.device, threads: int) -> dict[str, Cost] | None:
    """The measured costs of this device type at the nearest measured thread count, or ``None``."""
    counts = sorted({t for kind, t, _ in MEASURED if kind == device.type}, key=lambda t: (abs(t - threads), t))
    if not counts:
        return None
    return {impl: cost for (kind, t, impl), cost in MEASURED.items() if kind == device.type and t == counts[0]}


def cheaper(costs: dict[str, Cost], lengths: list[int], width: int) -> str:
    """``"kernel"`` or ``"streaming"``, whichever the model says is faster for these lists."""
    estimates = {}
    for impl in ("kernel", "streaming"):
        calls, elements = work(impl, lengths, width)
        estimates[impl] = costs[impl].per_call * calls + costs[impl].per_element * elements
    return min(estimates, key=lambda impl: (estimates[impl], impl != "kernel"))
