"""Losses table: forward+backward time and peak memory of NeuralNDCG and ApproxNDCG, dense vs streaming.

``python -m torch_ndcg.bench losses [--quick]``. On CPU every case runs in a fresh subprocess and
its peak memory is the growth of the process's maximum resident set size (``ru_maxrss``) over
the baseline taken after imports and input creation. On CUDA the same table is measured in
process with ``torch.cuda.max_memory_allocated``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import torch

import torch_ndcg as tn

from . import ranking_losses

SINKHORN_ITERS = 50
DENSE_LIMIT_BYTES = 16 * 2**30
LOSSES = {"NeuralNDCG": tn.neural_ndcg_loss, "ApproxNDCG": tn.approx_ndcg_loss}


def _dense_bytes(loss: str, batch: int, length: int) -> int:
    """Rough float32 footprint of the dense path: autograd keeps ~2 N×N tensors per half-step."""
    matrices = 2 * (2 * SINKHORN_ITERS + 2) + 4 if loss == "NeuralNDCG" else 6
    return matrices * batch * length * length * 4


def _cases(quick: bool) -> list[tuple[str, str, int, int]]:
    sizes = [(2, 16), (2, 32)] if quick else [(32, 128), (32, 512), (32, 2048)]
    cases = [(loss, impl, b, n) for loss in LOSSES for b, n in sizes for impl in ("dense", "streaming")]
    return cases + [(loss, "streaming", 2 if quick else 4, 64 if quick else 4096) for loss in LOSSES]


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(loss: str, impl: str, batch: int, length: int, device: str, iters: int) -> dict[str, float]:
    """Median forward+backward seconds over the repeats and the peak memory (MiB) of the case."""
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=gen).to(device).requires_grad_()
    relevance = torch.randint(0, 5, (batch, length), generator=gen).to(device)
    options = {"sinkhorn_iters": iters} if loss == "NeuralNDCG" else {}
    repeats = 3 if batch * length * length <= 32 * 128 * 128 else 1
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = _rss_mib()
    times = []
    for _ in range(repeats):
        scores.grad = None
        start = time.perf_counter()
        LOSSES[loss](scores, relevance, impl=impl, **options).backward()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20 if device == "cuda" else _rss_mib() - base
    return {"seconds": sorted(times)[len(times) // 2], "peak_mib": peak}


def _fresh_process(loss: str, impl: str, batch: int, length: int, iters: int) -> dict[str, float]:
    command = [sys.executable, "-m", "torch_ndcg.bench.losses", "--case", loss, impl, str(batch), str(length), str(iters)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ.copy())
    return json.loads(done.stdout.strip().splitlines()[-1])


def _table(device: str, quick: bool) -> None:
    iters = 3 if quick else SINKHORN_ITERS
    memory = (
        "torch.cuda.max_memory_allocated growth"
        if device == "cuda"
        else ("ru_maxrss growth, in process" if quick else "ru_maxrss growth in a fresh process per case")
    )
    print(f"\nlosses on {device} ({torch.get_num_threads()} threads), NeuralNDCG with {iters} Sinkhorn iterations;")
    print(f"time = forward+backward (median of 3 when B·N² ≤ 32·128², else 1 run); peak memory = {memory}")
    print(f"{'loss':<11} {'B':>3} {'N':>5}  {'dense s':>9} {'dense MiB':>10}  {'stream s':>9} {'stream MiB':>10}  "
          f"{'time ratio':>10} {'mem ratio':>9}")  # fmt: skip
    results: dict[tuple[str, str, int, int], dict[str, float] | str] = {}
    for loss, impl, batch, length in _cases(quick):
        if impl == "dense" and _dense_bytes(loss, batch, length) > DENSE_LIMIT_BYTES:
            results[(loss, impl, batch, length)] = f"skipped (~{_dense_bytes(loss, batch, length) / 2**30:.0f} GiB)"
        elif device == "cuda" or quick:
            results[(loss, impl, batch, length)] = measure(loss, impl, batch, length, device, iters)
        else:
            results[(loss, impl, batch, length)] = _fresh_process(loss, impl, batch, length, iters)
    rows = sorted({(loss, b, n) for loss, _, b, n in results}, key=lambda r: (list(LOSSES).index(r[0]), r[2]))
    for loss, batch, length in rows:
        dense = results.get((loss, "dense", batch, length), "not run")
        stream = results[(loss, "streaming", batch, length)]
        left = (
            f"{dense['seconds']:9.3f} {dense['peak_mib']:10.1f}" if isinstance(dense, dict) else f"{dense:>20}"
        )
        line = f"{loss:<11} {batch:>3} {length:>5}  {left}  {stream['seconds']:9.3f} {stream['peak_mib']:10.1f}"
        if isinstance(dense, dict):
            line += f"  {stream['seconds'] / dense['seconds']:10.2f} {stream['peak_mib'] / max(dense['peak_mib'], 1e-9):9.3f}"
        print(line)


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m torch_ndcg.bench losses")
    parser.add_argument("--case", nargs=5, metavar=("LOSS", "IMPL", "B", "N", "ITERS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.case:
        loss, impl, batch, length, iters = args.case
        print(json.dumps(measure(loss, impl, int(batch), int(length), "cpu", int(iters))))
        return
    _table("cpu", quick)
    ranking_losses.table(quick)
    if torch.cuda.is_available():
        _table("cuda", quick)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
