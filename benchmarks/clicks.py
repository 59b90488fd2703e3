"""Click losses table: forward+backward time of each IPS loss against its label-based twin.

``python -m benchmarks clicks [--quick] [--rounds R]``, one CPU thread, float32, 64 lists of 100
items: the twin on graded labels 0–4, the IPS loss on PBM clicks (η = 1) with their propensities,
both with the default options and ``validate=True``. Each round times every loss once, in turn
(interleaved, so a change of machine load hits all of them); the table gives the medians and
their ratio (IPS / label).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

import torch_ndcg as tn
from torch_ndcg.clicks import ips_approx_ndcg_loss, ips_lambda_loss, ips_neural_ndcg_loss, ips_softmax_loss, pbm_clicks

PAIRS: dict[str, tuple[Callable, Callable]] = {
    "softmax cross-entropy": (tn.softmax_loss, ips_softmax_loss),
    "NeuralNDCG": (tn.neural_ndcg_loss, ips_neural_ndcg_loss),
    "ApproxNDCG": (tn.approx_ndcg_loss, ips_approx_ndcg_loss),
    "LambdaLoss": (tn.lambda_loss, ips_lambda_loss),
}


def _time(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main(quick: bool = False, argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks clicks")
    parser.add_argument("--rounds", type=int, default=3 if quick else 30)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    batch, length = (4, 8) if quick else (64, 100)
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 5, (batch, length), generator=g)
    target = pbm_clicks(labels, torch.arange(1, length + 1).expand(batch, length), generator=g)
    base = torch.randn(batch, length, generator=g)

    def runner(loss: Callable, y) -> Callable[[], None]:
        def run() -> None:
            scores = base.clone().requires_grad_(True)
            loss(scores, y).backward()
        return run

    runs = {name: (runner(label, labels), runner(ips, target)) for name, (label, ips) in PAIRS.items()}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in PAIRS}
    for run_label, run_ips in runs.values():  # warm-up
        run_label(), run_ips()
    for _ in range(args.rounds):
        for name, (run_label, run_ips) in runs.items():
            times[name][0].append(_time(run_label))
            times[name][1].append(_time(run_ips))
    print(f"{batch} lists x {length} items, float32, 1 thread, median of {args.rounds} rounds (forward + backward)")
    print("| loss | labels (ms) | IPS on clicks (ms) | IPS / labels |\n|---|---|---|---|")
    medians = {}
    for name, (label_times, ips_times) in times.items():
        label_ms, ips_ms = 1e3 * statistics.median(label_times), 1e3 * statistics.median(ips_times)
        medians[name] = (label_ms, ips_ms)
        print(f"| {name} | {label_ms:.3f} | {ips_ms:.3f} | {ips_ms / label_ms:.2f}x |")
    return medians


if __name__ == "__main__":
    main()
