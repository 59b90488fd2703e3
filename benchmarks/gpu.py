"""CUDA: smooth losses (dense, streaming PyTorch, Triton) and the exact NDCG@10, measured in one run.

``python -m benchmarks gpu [--quick] [--batch 64] [--sizes 256,1024,4096,16384]
[--iters 50] [--repeats 5] [--bandwidth-gbs 3350] [--profile]``

Losses table: one forward+backward of ``neural_ndcg_loss`` (``--iters`` Sinkhorn iterations)
and ``approx_ndcg_loss`` on ``[batch, N]`` float32 scores, for each implementation. Time is
the median of ``--repeats`` calls after one warm-up call (Triton compiles there), taken with
CUDA events; a case whose first call takes over ``--slow-seconds`` is timed once. Memory is
``torch.cuda.max_memory_allocated`` during the call minus what was allocated before it (the
inputs). Dense is skipped at sizes above the first one where it ran out of memory, and any
implementation whose time at the previous size, scaled by N², predicts more than
``--skip-seconds`` is not run: its cell shows that estimate as ``~N s``. Ratios are speed-ups of
Triton: streaming time / Triton time and dense time / Triton time.

Exact-metric table: ``tn.ndcg(scores, labels, k=10)`` on ``[B, N]`` float32 scores and int64
labels, with and without value validation; "bytes/s" counts one read of the inputs, the least
any implementation must move, as a fraction of ``--bandwidth-gbs`` (H100 SXM: 3350 GB/s).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

import torch_ndcg as tn

IMPLS = ("dense", "streaming", "triton")


def _timed(fn: Callable[[], object], repeats: int, slow_seconds: float) -> tuple[float, int]:
    """Median seconds of ``fn`` after a warm-up call, and the peak bytes one call allocates."""
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    if time.perf_counter() - start > slow_seconds:
        repeats = 1
    times = []
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(repeats):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(begin.elapsed_time(end) / 1e3)
    return statistics.median(times), torch.cuda.max_memory_allocated() - base


def _loss_step(loss: str, impl: str, scores: torch.Tensor, labels: torch.Tensor, iters: int) -> Callable[[], None]:
    def step() -> None:
        scores.grad = None
        if loss == "NeuralNDCG":
            value = tn.neural_ndcg_loss(scores, labels, sinkhorn_iters=iters, impl=impl)
        else:
            value = tn.approx_ndcg_loss(scores, labels, impl=impl)
        value.backward()

    return step


def _fmt_time(seconds: float | None, estimate: float | None = None) -> str:
    if seconds is None:
        return "—" if estimate is None else f"~{estimate:,.0f} s"
    return f"{seconds * 1e3:,.2f}"


def _fmt_mib(nbytes: int | None) -> str:
    return "—" if nbytes is None else f"{nbytes / 2**20:,.1f}"


def _ratio(num: float | None, den: float | None) -> str:
    return "—" if num is None or den is None else f"{num / den:,.1f}×"


def losses_table(args: argparse.Namespace) -> None:
    print(f"Losses, forward+backward, B = {args.batch}, float32, NeuralNDCG with {args.iters} Sinkhorn iterations")
    header = (f"{'loss':<11} {'N':>6} | " + " | ".join(f"{impl + ' ms':>13} {'MiB':>9}" for impl in IMPLS)
              + f" | {'stream/triton':>13} {'dense/triton':>12}")
    print(header)
    print("-" * len(header))
    for loss in ("NeuralNDCG", "ApproxNDCG"):
        dense_fits = True
        last: dict[str, tuple[int, float]] = {}  # impl -> (N, seconds) of its last measured size
        for n in args.sizes:
            generator = torch.Generator(device="cuda").manual_seed(0)
            scores = torch.randn(args.batch, n, device="cuda", generator=generator).requires_grad_(True)
            labels = torch.randint(0, 5, (args.batch, n), device="cuda", generator=generator)
            row: dict[str, tuple[float | None, int | None]] = {}
            estimates: dict[str, float] = {}
            for impl in IMPLS:
                if impl == "dense" and not dense_fits:
                    row[impl] = (None, None)
                    continue
                if impl in last:  # the pairwise work grows as N²
                    estimate = last[impl][1] * (n / last[impl][0]) ** 2
                    if estimate > args.skip_seconds:
                        estimates[impl] = estimate  # shown instead of a time: the case was not run
                        row[impl] = (None, None)
                        continue
                try:
                    row[impl] = _timed(_loss_step(loss, impl, scores, labels, args.iters), args.repeats, args.slow_seconds)
                except torch.cuda.OutOfMemoryError:
                    row[impl] = (None, None)
                    dense_fits = dense_fits and impl != "dense"
                if row[impl][0] is not None:
                    last[impl] = (n, row[impl][0])
                scores.grad = None
                torch.cuda.empty_cache()  # after the except block, which frees the failed graph
            cells = " | ".join(f"{_fmt_time(row[i][0], estimates.get(i)):>13} {_fmt_mib(row[i][1]):>9}" for i in IMPLS)
            triton = row["triton"][0]
            print(f"{loss:<11} {n:>6} | {cells} | {_ratio(row['streaming'][0], triton):>13} "
                  f"{_ratio(row['dense'][0], triton):>12}")
            del scores, labels
            torch.cuda.empty_cache()
    print("— : not run (out of memory, or dense above a size where it ran out of memory); "
          f"~N s: not run, its time at the previous size scaled by N² predicts over {args.skip_seconds:g} s")


def metric_table(args: argparse.Namespace) -> None:
    print(f"\nExact NDCG@10 (tn.ndcg, k=10), float32 scores, int64 labels; bandwidth {args.bandwidth_gbs:g} GB/s")
    header = f"{'B × N':>16} {'validate':>9} {'ms':>9} {'GB/s':>9} {'of peak':>8}"
    print(header)
    print("-" * len(header))
    for batch, n in args.metric_shapes:
        generator = torch.Generator(device="cuda").manual_seed(0)
        scores = torch.rand(batch, n, device="cuda", generator=generator)
        labels = torch.randint(0, 5, (batch, n), device="cuda", generator=generator)
        moved = scores.nbytes + labels.nbytes
        for validate in (True, False):
            seconds, _ = _timed(lambda: tn.ndcg(scores, labels, k=10, validate=validate), args.repeats, args.slow_seconds)
            rate = moved / seconds / 1e9
            print(f"{f'{batch:,} × {n:,}':>16} {str(validate):>9} {seconds * 1e3:>9.3f} {rate:>9.1f} "
                  f"{rate / args.bandwidth_gbs:>8.1%}")
        if args.profile:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                tn.ndcg(scores, labels, k=10, validate=False)
                torch.cuda.synchronize()
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks gpu")
    parser.add_argument("--batch", type=int, default=4 if quick else 64)
    parser.add_argument("--sizes", type=_ints, default=[64, 256] if quick else [256, 1024, 4096, 16384])
    parser.add_argument("--iters", type=int, default=5 if quick else 50)
    parser.add_argument("--repeats", type=int, default=1 if quick else 5)
    parser.add_argument("--slow-seconds", type=float, default=2.0, help="time a case once if its warm-up took longer")
    parser.add_argument("--skip-seconds", type=float, default=30.0,
                        help="do not run a case whose N²-scaled estimate from the previous size is longer")
    parser.add_argument("--bandwidth-gbs", type=float, default=3350.0, help="the device's memory bandwidth, GB/s")
    parser.add_argument("--profile", action="store_true", help="print the CUDA kernels of one exact-metric call")
    args = parser.parse_args(argv or [])
    args.metric_shapes = [(100, 1000), (1000, 100)] if quick else [(10_000, 1_000), (100_000, 100)]
    if not torch.cuda.is_available():
        print("The gpu table needs a CUDA device (torch.cuda.is_available() is False here); nothing was measured.")
        return
    from torch_ndcg import fused as fused_kernels

    if not fused_kernels.importable():
        print("Triton is not installed: the Triton columns need it (pip install triton).")
        return
    import triton

    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
          f"{time.strftime('%Y-%m-%d')}")
    losses_table(args)
    metric_table(args)


if __name__ == "__main__":
    main()
