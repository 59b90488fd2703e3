"""Every metric's twin beside the NDCG twin of the same relaxation: forward+backward time.

``python -m benchmarks twins [--quick] [--repeats R]``. One CPU thread, float32, 10% of the items
relevant. Two tables:

* 64 × 100 lists, k = 10: each metric's twin (``tn.mrr_loss``, ``tn.recall_loss``, …) with the
  approximate ranks and with NeuralSort's rows, and its time over the NDCG twin's of the same
  relaxation (the ratio the twins are meant to keep within 1.3);
* one list of 100,000 items, k = 10: the NeuralSort twins over ``tn.neuralsort_ndcg_loss``
  (meant within 1.5), and the existing NDCG losses beside their twins.

The calls of a row are interleaved, each timed on fresh inputs, and the median of ``R`` repeats
is shown, so a loaded machine slows every column alike; still, rerun on an idle machine for
figures to quote.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import torch_ndcg as tn

TWINS = ["ndcg", "dcg", "mrr", "precision", "recall", "hit_rate", "average_precision", "rbp"]
K = 10


def _call(name: str, relaxation: object):
    loss = getattr(tn, f"{name}_loss")
    return lambda s, r: loss(s, r, K, relaxation=relaxation)


def _time(calls: dict, batch: int, length: int, repeats: int) -> dict[str, float]:
    """Median forward+backward ms of each call, interleaved over ``repeats`` rounds."""
    generator = torch.Generator().manual_seed(0)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for round_ in range(repeats + 1):
        for name, call in calls.items():
            scores = torch.randn(batch, length, generator=generator).requires_grad_()
            relevance = (torch.rand(batch, length, generator=generator) < 0.1).long()
            relevance[:, 0] = 1
            start = time.perf_counter()
            call(scores, relevance).backward()
            if round_:  # the first round warms up
                times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(values) for name, values in times.items()}


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks twins")
    parser.add_argument("--repeats", type=int, default=3 if quick else 9)
    args = parser.parse_args(argv or [])
    torch.set_num_threads(1)
    batch, length, long = (8, 50, 2_000) if quick else (64, 100, 100_000)
    print(f"# Twins, forward+backward ms (median of {args.repeats}), 1 thread, float32, k={K}")
    print(f"\n## {batch} x {length}: each twin over the NDCG twin of its relaxation")
    print("| metric | approx ms | × ndcg | neuralsort ms | × ndcg |")
    print("|---|---:|---:|---:|---:|")
    relaxations = {"approx": tn.ApproxRanks(), "neuralsort": tn.NeuralSortRows()}
    calls = {(name, r): _call(name, relaxation) for name in TWINS for r, relaxation in relaxations.items()}
    times = _time(calls, batch, length, args.repeats)
    for name in TWINS:
        cells = []
        for r in relaxations:
            ms = times[(name, r)]
            cells += [f"{ms:.2f}", f"{ms / times[('ndcg', r)]:.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")

    print(f"\n## 1 x {long:,}: the NeuralSort twins over neuralsort_ndcg_loss")
    print("| loss | ms | × neuralsort_ndcg_loss |")
    print("|---|---:|---:|")
    long_calls = {"neuralsort_ndcg_loss": lambda s, r: tn.neuralsort_ndcg_loss(s, r, K)}
    long_calls.update({f"{name}_loss (neuralsort)": _call(name, "neuralsort") for name in TWINS})
    long_calls["approx_ndcg_loss (sorted)"] = lambda s, r: tn.approx_ndcg_loss(s, r, K, impl="sorted")
    long_calls["ndcg_loss (approx sorted)"] = _call("ndcg", tn.ApproxRanks(impl="sorted"))
    long_times = _time(long_calls, 1, long, max(3, args.repeats // 3))
    for name, ms in long_times.items():
        print(f"| {name} | {ms:.2f} | {ms / long_times['neuralsort_ndcg_loss']:.2f} |")
