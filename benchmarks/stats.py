"""Pairwise significance tests of many systems: ``torch_ndcg.stats.compare`` against ranx.

``python -m benchmarks stats [--quick] [--runs 20] [--topics 250] [--measures 4] [--permutations 10000] [--tools ...]``

The case: per-query values of 20 runs × 250 topics × 4 measures (beta-distributed, each run
shifted a little, a fifth of the values rounded to tenths so ties and zero differences occur),
every pair of runs compared on every measure (190 pairs × 4 = 760 tests), Holm-corrected over
the pairs of each measure. Timed: Fisher's randomisation test with 10,000 permutations, and
the paired t-test. ranx (where installed) gets the same values through the function its
``compare()`` calls after evaluating the runs, ``compute_statistical_significance``: the
statistics alone for both, no evaluation. Each timing is the best of three after one untimed
warm-up call (ranx compiles with numba on its first call).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

from torch_ndcg.stats import compare

REPEATS = 3


def make_values(runs: int, topics: int, measures: int, seed: int = 0) -> np.ndarray:
    """``[measures, runs, topics]`` per-query values in [0, 1] with ties and zero differences."""
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, size=(measures, 1, topics))
    values = np.clip(base + rng.normal(0, 0.1, size=(measures, runs, topics)) + 0.01 * np.arange(runs)[:, None], 0, 1)
    rounded = rng.random(values.shape) < 0.2
    return np.where(rounded, np.round(values, 1), values)


def best_of(function: Callable[[], object]) -> float:
    function()  # warm-up: imports, numba compilation
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def ours(values: np.ndarray, test: str, permutations: int) -> Callable[[], object]:
    table = torch.from_numpy(values)
    return lambda: compare(table, test=test, correction="holm", permutations=permutations, seed=0)


def ranx_call(values: np.ndarray, test: str, permutations: int) -> Callable[[], object] | None:
    try:
        from ranx.statistical_tests import compute_statistical_significance
    except ImportError:
        return None
    names = [f"run_{i + 1}" for i in range(values.shape[1])]
    scores = {name: {f"m{m}": values[m, r] for m in range(values.shape[0])} for r, name in enumerate(names)}
    stat_test = "fisher" if test == "randomisation" else "student"
    return lambda: compute_statistical_significance(names, scores, stat_test=stat_test, n_permutations=permutations)


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks stats", description=__doc__)
    parser.add_argument("--runs", type=int, default=4 if quick else 20)
    parser.add_argument("--topics", type=int, default=30 if quick else 250)
    parser.add_argument("--measures", type=int, default=2 if quick else 4)
    parser.add_argument("--permutations", type=int, default=200 if quick else 10_000)
    parser.add_argument("--tools", nargs="+", default=["torch_ndcg", "ranx"], choices=["torch_ndcg", "ranx"])
    args = parser.parse_args(argv)
    values = make_values(args.runs, args.topics, args.measures)
    pairs = args.runs * (args.runs - 1) // 2
    print(f"{args.runs} runs × {args.topics} topics × {args.measures} measures: {pairs * args.measures} paired tests, "
          f"Holm over the {pairs} pairs of each measure; torch {torch.__version__}, {torch.get_num_threads()} threads")
    rows = []
    for test in ("randomisation", "t-test"):
        for tool in args.tools:
            call = ours(values, test, args.permutations) if tool == "torch_ndcg" else \
                ranx_call(values, test, args.permutations)
            if call is None:
                print(f"| {test} | {tool} | not installed |")
                continue
            seconds = best_of(call)
            rows.append({"test": test, "tool": tool, "seconds": seconds})
            detail = f"{args.permutations:,} permutations" if test == "randomisation" else ""
            print(f"| {test} | {tool} | {seconds:.3f} s | {detail} |")
    return rows


if __name__ == "__main__":
    main()
