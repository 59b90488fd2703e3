"""Stateful NDCG@10 in a validation loop: our metric classes against torchmetrics' RetrievalNormalizedDCG.

``python -m benchmarks metrics [--quick] [--batches 1000] [--tm-batches 100] [--repeat 5]``

A loop of ``--batches`` batches of 64 queries × 200 items (graded labels 0–4, about 30% non-zero)
calls ``update`` on every batch and ``compute`` once. Cases: our ``NDCG(k=10)`` on dense
``[64, 200]`` batches, the same class on the flat ``indexes`` form, and torchmetrics
``RetrievalNormalizedDCG(top_k=10)`` on the flat form. ``validate=False`` shows the cost of the
value checks (NaN scores, negative labels), which read the data on every batch.

*Wall time* is measured side by side: one process runs every case once per round, for
``--repeat`` rounds, and reports each case's best round, so a slow spell of a shared machine
hits all cases alike. *Memory* is measured in a fresh subprocess per case, so that it is the
case's own:

* *state*: bytes held by the metric's state tensors after the loop and its ``compute`` (torchmetrics'
  lists too);
* *peak RSS Δ*: the process' peak resident memory after the loop minus its peak before the loop
  (Linux's VmHWM, else ``getrusage``; the batches are generated before the baseline).

torchmetrics is slow, so it runs ``--tm-batches`` batches and its time and memory are scaled
linearly to ``--batches`` (marked "extrapolated"); its compute loops over queries in Python, so
both grow linearly in the number of queries. The batches cycle through a pool of distinct
batches whose size divides every run length, so every case reports the same mean (the "value"
column checks that the cases agree); fresh batches matter, since sorting one batch over and
over lets the CPU learn its branches. The dense form's state is also shown after 10, 100 and
1,000 batches: beyond the rows that wait to be evaluated together (at most
``torch_ndcg.metrics.PENDING_ITEMS`` items), it must not grow.

Last, the tie-heavy loop: ``--tie-batches`` dense batches whose scores are rounded to 0.1 (so most
of the top 10 share a tie group), ``NDCG(k=10)`` against torchmetrics'
``RetrievalNormalizedDCG(top_k=10)`` on every batch (no extrapolation), one thread, interleaved.
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

from benchmarks import child_env

CASES = ("dense", "dense-unchecked", "flat", "torchmetrics")


def _pool(size: int, queries: int, items: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    pool = []
    for _ in range(size):
        scores = torch.rand(queries, items, generator=generator)
        labels = torch.randint(1, 5, (queries, items), generator=generator)
        labels = labels * (torch.rand(queries, items, generator=generator) < 0.3)
        pool.append((scores, labels))
    return pool


def _state_bytes(metric: object) -> int:
    total = 0
    for name in metric._defaults:  # the names of a torchmetrics Metric's states
        value = getattr(metric, name)
        for tensor in value if isinstance(value, list) else [value]:
            total += tensor.numel() * tensor.element_size()
    return total


def _peak_rss() -> int:
    """This process' peak resident memory in bytes.

    Linux's VmHWM belongs to the process image; ``ru_maxrss`` is a fallback elsewhere, but a
    child inherits its parent's value as a floor, so the main process runs the memory
    subprocesses before its own loops grow it.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _metric(case: str) -> object:
    if case == "torchmetrics":
        from torchmetrics.retrieval import RetrievalNormalizedDCG

        return RetrievalNormalizedDCG(top_k=10)
    from torch_ndcg.metrics import NDCG

    return NDCG(k=10, validate=case != "dense-unchecked")


def _loop(case: str, metric: object, pool: list, batches: int, checkpoint=None) -> float:
    """``batches`` updates and one compute; returns the value. ``checkpoint(n)`` runs after update n."""
    queries, items = pool[0][0].shape
    ids = torch.arange(queries).unsqueeze(-1).expand(queries, items).reshape(-1)
    metric.reset()
    for step in range(batches):
        scores, labels = pool[step % len(pool)]
        if case.startswith("dense"):
            metric.update(scores, labels)
        else:
            metric.update(scores.reshape(-1), labels.reshape(-1), indexes=ids + step * queries)
        if checkpoint is not None:
            checkpoint(step + 1)
    return float(metric.compute())


def _warm(case: str, metric: object, pool: list) -> None:
    """First calls allocate caches and load kernels: neither the loop's time nor its memory."""
    warm_up = metric.clone()
    _loop(case, warm_up, pool[:1], 1)
    del warm_up


def _timings(args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """Every case once per round, ``--repeat`` rounds in one process: (best seconds, value) per case."""
    pool = _pool(args.pool, args.queries, args.items)
    metrics = {case: _metric(case) for case in CASES}
    for case, metric in metrics.items():
        _warm(case, metric, pool)
    best = {case: (float("inf"), float("nan")) for case in CASES}
    for _ in range(args.repeat):
        for case, metric in metrics.items():
            batches = args.tm_batches if case == "torchmetrics" else args.batches
            start = time.perf_counter()
            value = _loop(case, metric, pool, batches)
            seconds = time.perf_counter() - start
            best[case] = (min(best[case][0], seconds), value)
    return best


def _memory(case: str, batches: int, pool_size: int, queries: int, items: int) -> dict:
    """Run one case's loop once; return its state and peak RSS growth after 10, 100, … batches."""
    pool = _pool(pool_size, queries, items)
    metric = _metric(case)
    _warm(case, metric, pool)
    checkpoints = {n for n in (10, 100, 1000) if n <= batches} | {batches}
    memory: dict[int, tuple[int, int]] = {}
    baseline = _peak_rss()

    def checkpoint(n: int) -> None:
        if n in checkpoints:
            memory[n] = (_state_bytes(metric), _peak_rss() - baseline)

    _loop(case, metric, pool, batches, checkpoint)
    return {"memory": memory, "final": _state_bytes(metric), "peak": _peak_rss() - baseline}


def _run_memory(case: str, batches: int, args: argparse.Namespace) -> dict:
    if args.inline:
        return _memory(case, batches, args.pool, args.queries, args.items)
    command = [
        sys.executable, "-m", "benchmarks.metrics", "--worker", case, "--batches", str(batches),
        "--pool", str(args.pool), "--queries", str(args.queries), "--items", str(args.items),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env())
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["memory"] = {int(n): tuple(v) for n, v in result["memory"].items()}
    return result


def _mib(n: float) -> str:
    return f"{n / 2**20:,.2f} MiB" if n >= 2**17 else f"{n:,.0f} B"


def _tie_heavy_pool(size: int, queries: int, items: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Batches whose scores are rounded to 0.1 (about 11 distinct values per list: most of the top
    10 share a tie group), labels 0–4 with about 30% non-zero."""
    generator = torch.Generator().manual_seed(1)
    pool = []
    for _ in range(size):
        scores = (torch.rand(queries, items, generator=generator) * 10).round() / 10
        labels = torch.randint(1, 5, (queries, items), generator=generator)
        pool.append((scores, labels * (torch.rand(queries, items, generator=generator) < 0.3)))
    return pool


def _tie_heavy_bar(batches: int, rounds: int, queries: int, items: int) -> None:
    """``NDCG(k=10)`` over ``batches`` tie-heavy dense batches against torchmetrics'
    ``RetrievalNormalizedDCG(top_k=10)`` on the same batches (flat), one thread, interleaved rounds,
    each case's median; prints the ratio and the target (never asserted)."""
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    from torch_ndcg.metrics import NDCG

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pool = _tie_heavy_pool(batches, queries, items)
        cases = {"torch_ndcg NDCG(k=10), dense": ("dense", NDCG(k=10)),
                 "torchmetrics RetrievalNormalizedDCG(top_k=10)": ("flat", RetrievalNormalizedDCG(top_k=10))}  # fmt: skip
        for form, metric in cases.values():
            _warm(form, metric, pool)
        times: dict[str, list[float]] = {name: [] for name in cases}
        values: dict[str, float] = {}
        for _ in range(rounds):
            for name, (form, metric) in cases.items():
                start = time.perf_counter()
                values[name] = _loop(form, metric, pool, batches)
                times[name].append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
    print(f"\nTie-heavy loop: {batches} batches × {queries} × {items} (scores rounded to 0.1, labels 0–4, ~30% "
          f"non-zero), NDCG@10 (linear gain, log2 discount, ties averaged, empty queries 0), update per batch + "
          f"one compute, 1 thread, median of {rounds} interleaved rounds, load average {os.getloadavg()[0]:.1f}:")
    medians = {name: sorted(t)[len(t) // 2] for name, t in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:<46} {seconds:>8.3f} s  {seconds / batches * 1e6:>9.1f} µs per batch   value {values[name]:.6f}")
    ours, theirs = medians.values()
    ratio = theirs / ours
    print(f"target, tie-heavy loop vs torchmetrics: {ratio:.1f}× faster (target ≥ 50×) {'met' if ratio >= 50 else 'MISSED'}")


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks metrics")
    parser.add_argument("--batches", type=int, default=20 if quick else 1000)
    parser.add_argument("--tm-batches", type=int, default=5 if quick else 100)
    parser.add_argument("--pool", type=int, default=5 if quick else 25, help="distinct batches cycled")
    parser.add_argument("--queries", type=int, default=8 if quick else 64)
    parser.add_argument("--items", type=int, default=50 if quick else 200)
    parser.add_argument("--repeat", type=int, default=1 if quick else 5, help="timing rounds; each case's best")
    parser.add_argument("--tie-batches", type=int, default=4 if quick else 200, help="batches of the tie-heavy loop")
    parser.add_argument("--tie-rounds", type=int, default=1 if quick else 5, help="rounds of the tie-heavy loop")
    parser.add_argument("--inline", action="store_true", default=quick,
                        help="measure memory in this process too (default with --quick): faster, memory mixed")
    args = parser.parse_args(argv or [])
    if args.batches % args.pool or args.tm_batches % args.pool:
        parser.error("--pool must divide --batches and --tm-batches (so that every case has the same mean)")

    memory = {case: _run_memory(case, args.tm_batches if case == "torchmetrics" else args.batches, args)
              for case in CASES}
    timings = _timings(args)
    scale = args.batches / args.tm_batches
    tm_seconds = timings["torchmetrics"][0] * scale
    print(f"NDCG@10 validation loop: {args.batches} batches × {args.queries} queries × {args.items} items, "
          f"update per batch + one compute; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"torchmetrics ran {args.tm_batches} batches; its time and memory are extrapolated ×{scale:g}. "
          f"Wall time: each case's best of {args.repeat} interleaved rounds.")
    header = (f"{'case':<40} {'wall (s)':>10} {'vs torchmetrics':>16} {'state after loop':>17} "
              f"{'peak RSS Δ':>12} {'value':>8}")
    print(header)
    print("-" * len(header))
    names = {
        "dense": "torch_ndcg NDCG(k=10), dense [B, N]",
        "dense-unchecked": "  the same, validate=False",
        "flat": "torch_ndcg NDCG(k=10), flat + indexes",
        "torchmetrics": "torchmetrics RetrievalNormalizedDCG(10)*",
    }
    for case in CASES:
        factor = scale if case == "torchmetrics" else 1.0
        seconds, value = timings[case]
        seconds *= factor
        r = memory[case]
        state = r["final"] * factor
        print(f"{names[case]:<40} {seconds:>10.3f} {tm_seconds / seconds:>15.1f}× {_mib(state):>17} "
              f"{_mib(r['peak'] * factor):>12} {value:>8.5f}")
    print("* extrapolated linearly from the batches it ran")
    print()
    from torch_ndcg.metrics import PENDING_ITEMS

    print("state bytes / peak RSS Δ after n batches (bounded in n = constant memory; the dense form's "
          f"state includes the rows that wait to be evaluated together, at most {PENDING_ITEMS:,} items):")
    for case in ("dense", "flat"):
        rows = sorted(memory[case]["memory"].items())
        cells = ", ".join(f"n={n}: {_mib(state)} / {_mib(peak)}" for n, (state, peak) in rows)
        print(f"  {case:<6} {cells}")
    _tie_heavy_bar(args.tie_batches, args.tie_rounds, args.queries, args.items)


if __name__ == "__main__":
    worker = argparse.ArgumentParser()
    worker.add_argument("--worker", choices=CASES, required=True)
    worker.add_argument("--batches", type=int, required=True)
    worker.add_argument("--pool", type=int, required=True)
    worker.add_argument("--queries", type=int, required=True)
    worker.add_argument("--items", type=int, required=True)
    w = worker.parse_args()
    print(json.dumps(_memory(w.worker, w.batches, w.pool, w.queries, w.items)))
