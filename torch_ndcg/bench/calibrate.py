"""Measure NeuralNDCG's kernel and streaming paths and fit the cost model that ``impl="auto"`` uses.

``python -m torch_ndcg.bench calibrate [--quick]`` times forward+backward of both paths over list
sizes, for 1 thread and for the machine's default thread count, and prints the fitted
:class:`torch_ndcg.losses.cost_model.Cost` lines to paste into ``cost_model.MEASURED``:

    seconds per Sinkhorn iteration ≈ per_call · calls + per_element · elements

(kernel: calls = groups of :func:`~torch_ndcg.losses.sinkhorn_kernel.plan`, elements = their
``Σ b·w²``; streaming: one call, elements = ``B·N²``). The fit weighs every size by its own time
(relative least squares), so short lists count as much as long ones.
"""

from __future__ import annotations

import datetime
import os
import platform
import time

import torch

import torch_ndcg as tn
from torch_ndcg.losses import cost_model

ITERS = 10
SIZES = [(64, 8), (64, 27), (32, 64), (64, 100), (16, 256), (4, 512)]
QUICK_SIZES = [(4, 8), (2, 32)]


def _seconds(impl: str, batch: int, length: int, repeats: int) -> float:
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=gen).requires_grad_()
    relevance = torch.randint(0, 5, (batch, length), generator=gen)
    def run() -> None:
        tn.neural_ndcg_loss(scores, relevance, 10, gain="exp2", impl=impl, sinkhorn_iters=ITERS).backward()

    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def fit(rows: list[tuple[float, float, float]]) -> cost_model.Cost:
    """Relative least squares of ``seconds ≈ per_call · calls + per_element · elements`` over
    ``(calls, elements, seconds)`` rows, coefficients kept ≥ 0."""
    a = torch.tensor([[calls / s, elements / s] for calls, elements, s in rows], dtype=torch.float64)
    coef = torch.linalg.lstsq(a, torch.ones(len(rows), 1, dtype=torch.float64)).solution[:, 0].clamp(min=0)
    return cost_model.Cost(per_call=float(coef[0]), per_element=float(coef[1]))


def calibrate(threads: int, sizes: list[tuple[int, int]], repeats: int) -> dict[str, cost_model.Cost]:
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    rows: dict[str, list[tuple[float, float, float]]] = {"kernel": [], "streaming": []}
    for batch, length in sizes:
        for impl in rows:
            calls, elements = cost_model.work(impl, [length] * batch, length)
            rows[impl].append((calls, elements, _seconds(impl, batch, length, repeats) / ITERS))
    torch.set_num_threads(previous)
    return {impl: fit(impl_rows) for impl, impl_rows in rows.items()}


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    sizes, repeats = (QUICK_SIZES, 1) if quick else (SIZES, 3)
    cpu = platform.processor() or platform.machine()
    print(f"# fitted {datetime.date.today()} on {cpu}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"sizes (B, N) {sizes}, {ITERS} Sinkhorn iterations, forward+backward, float32")  # fmt: skip
    for threads in sorted({1, torch.get_num_threads()}):
        for impl, cost in calibrate(threads, sizes, repeats).items():
            cells = f"per_call={cost.per_call:.3e}, per_element={cost.per_element:.3e}"
            print(f'("cpu", {threads}, "{impl}"): Cost({cells}),')
