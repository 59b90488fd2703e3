"""Long lists: forward+backward time and peak memory of the long-list smooth NDCG@10 losses.

``python -m benchmarks long_lists [--quick]``. One CPU thread, float32, NDCG@10, 5% of the items
relevant: one list of 10,000 and of 100,000 items, and a batch of 64 × 16,384, for
``neuralsort_ndcg_loss`` (NeuralSort's top rows, ``temperature="auto"``) and ApproxNDCG's
``impl="sorted"`` (τ = 1), beside softmax cross-entropy and LambdaLoss@10 as context. Each case
runs in a fresh process: the inputs are made and one warm-up call runs, then the resident set's
high-water mark is reset (Linux ``VmHWM``), the timed calls run, and the peak memory is the
growth of that mark over the resident set at the reset, so it counts what the loss needs
beyond its inputs. Time is the median of the timed calls. ``--quick`` runs tiny sizes in this
process, to check that the benchmark works.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import torch

import torch_ndcg as tn
from benchmarks import child_env
from torch_ndcg.losses.backends import describe

from .losses import _peak_now, _peak_start

K = 10
LOSSES = {
    "softmax": lambda s, r: tn.softmax_loss(s, r),
    "LambdaLoss@10": lambda s, r: tn.lambda_loss(s, r, k=K),
    "NeuralSort@10": lambda s, r: tn.neuralsort_ndcg_loss(s, r, k=K),
    "Approx sorted@10": lambda s, r: tn.approx_ndcg_loss(s, r, k=K, impl="sorted"),
}
LONG_LOSSES = ("NeuralSort@10", "Approx sorted@10")
SHAPES = [(1, 10_000), (1, 100_000), (64, 16_384)]
QUICK_SHAPES = [(1, 1_000), (1, 10_000), (4, 512)]
# What the long-list losses are designed to meet (one CPU thread).
TARGETS = "one 100,000-item list ≤ 100 ms and ≤ 64 MiB beyond the inputs; 64 × 16,384 ≤ 2 s; t(100k)/t(10k) ≤ 15"


def measure(loss: str, batch: int, length: int, repeats: int) -> dict[str, float]:
    """Median forward+backward ms of ``repeats`` warm calls, and the peak MiB beyond the inputs."""
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=generator).requires_grad_()
    relevance = (torch.rand(batch, length, generator=generator) < 0.05).long()
    relevance[:, 0] = 1  # every list has something to rank

    def step() -> None:
        scores.grad = None
        LOSSES[loss](scores, relevance).backward()

    step()  # warm-up: first-call costs (and their memory) are not the loss's
    scores.grad = None
    base = _peak_start()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return {"ms": 1e3 * sorted(times)[len(times) // 2], "peak_mib": _peak_now() - base}


def _fresh_process(loss: str, batch: int, length: int, repeats: int) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.long_lists", "--case", loss, str(batch), str(length), str(repeats)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env({"OMP_NUM_THREADS": "1"}))
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(quick: bool) -> dict[tuple[str, int, int], dict[str, float]]:
    shapes = QUICK_SHAPES if quick else SHAPES
    print(describe(1, shapes[1][1], k=K))
    print(f"\nLong lists, one CPU thread, float32, NDCG@{K}, 5% relevant; forward+backward, median of warm calls; "
          "peak = memory beyond the inputs (VmHWM growth" + (", in process)" if quick else ", a fresh process per case)"))  # fmt: skip
    print(f"targets of the long-list losses: {TARGETS}")
    header = "".join(f" {f'{b} x {n:,}':>24}" for b, n in shapes)
    print(f"{'loss':<17}{header} {'t(' + str(shapes[1][1] // 1000) + 'k)/t(' + str(shapes[0][1] // 1000) + 'k)':>14}")
    print(f"{'':<17}" + "".join(f" {'ms':>11} {'MiB':>12}" for _ in shapes))
    results = {}
    for loss in LOSSES:
        cells = []
        for batch, length in shapes:
            repeats = 1 if quick else (3 if batch * length > 100_000 else 7)
            result = measure(loss, batch, length, repeats) if quick else _fresh_process(loss, batch, length, repeats)
            results[(loss, batch, length)] = result
            cells.append(f" {result['ms']:11.2f} {result['peak_mib']:12.1f}")
        ratio = results[(loss, *shapes[1])]["ms"] / results[(loss, *shapes[0])]["ms"]
        print(f"{loss:<17}{''.join(cells)} {ratio:14.1f}")
    return results


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks long_lists")
    parser.add_argument("--case", nargs=4, metavar=("LOSS", "B", "N", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.case:
        loss, batch, length, repeats = args.case
        print(json.dumps(measure(loss, int(batch), int(length), int(repeats))))
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        table(quick)
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
