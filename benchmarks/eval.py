"""Exact NDCG@10: this library's dense and flat layouts against torchmetrics and scikit-learn.

``python -m benchmarks eval [--quick] [--repeats 7] [--ref-items 500000] [--bandwidth-gbs 3350] [--threads N]``

Two cases, Q queries × N items: 2,000 × 100 and 10,000 × 1,000. Labels are graded 0–4 with
about 30% non-zero; scores are rounded to two decimals, so ties are common and every
implementation averages over them (``ties="average"``, scikit-learn's ``ignore_ties=False``,
torchmetrics' default). Every implementation computes Mean NDCG@10 over the queries:

* ``tn.ndcg`` on ``[Q, N]`` tensors (dense layout);
* ``tn.ndcg(..., indexes=...)`` on flat ``[Q·N]`` scores, labels and query indexes (flat layout),
  once in query-major order (each query contiguous, as a flattened batch is: the flat layout
  then views it as ``[Q, N]`` and runs the dense kernels) and once with the items shuffled (the
  general sort-and-segment path);
* each of those again with ``validate=False``, which must be no slower (it skips the value
  checks and changes nothing else on CPU), and the dense layout on tie-free scores
  (``torch.randn``), where ranking skips the tie groups, with and without ``validate``;
* torchmetrics ``RetrievalNormalizedDCG(top_k=10)``: ``update`` on the flat form, then ``compute``;
* scikit-learn ``ndcg_score(labels, scores, k=10)`` on ``[Q, N]`` NumPy arrays.

Times are medians over ``--repeats`` rounds after one warm-up; each round runs every CPU
implementation in turn (twice, timing the second run, so that each finds warm caches), so a
slow spell of a shared machine hits them all alike and the ratios stay comparable. The
references loop over
queries in Python, so they run on the first ``--ref-items // N`` queries only (all of them at
2,000 × 100) and their time is scaled linearly to Q queries (marked ``*``). The "check" column
compares each reference value with ours on the very queries the reference ran on (|Δ| ≤ 1e-5
passes), so the table also shows that the numbers agree. On CUDA the two torch_ndcg forms are
timed on the GPU as well, with the bytes of scores and labels (and indexes for the flat layout)
read once divided by the time, as a fraction of ``--bandwidth-gbs`` (3,350 GB/s: H100 SXM).

Last, the cost of one default call: ``tn.ndcg(scores, labels, 10)`` on a 64 × 100 batch with
one thread, against the same call with ``validate=False`` and against a six-line ``topk`` NDCG@10
that ignores ties and checks nothing (a lower bound on what any call costs), interleaved, each
cycling through the same 16 distinct batches (and, for comparison, on one batch repeated).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

import torch_ndcg as tn

K = 10
TIE_FREE = "tie-free scores"  # row names: which rows use other data, which skip the checks
UNCHECKED = "validate=False"
TOLERANCE = 1e-5


@dataclass
class Row:
    case: str
    name: str
    seconds: float
    extrapolated: bool = False
    check: str = ""
    bandwidth: str = ""


def _data(queries: int, items: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    scores = (torch.rand(queries, items, generator=generator) * 100).round() / 100
    labels = torch.randint(1, 5, (queries, items), generator=generator).float()
    labels = labels * (torch.rand(queries, items, generator=generator) < 0.3)
    return scores, labels


def _timed(fn: Callable[[], object], device: torch.device) -> tuple[float, object]:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    value = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start, value


def _median_seconds(
    fns: dict[str, Callable[[], object]], rounds: int, device: torch.device
) -> dict[str, tuple[float, object]]:
    """Median seconds and value of each function over ``rounds`` rounds of all of them in turn.

    In its turn each function runs twice and the second run is timed: the first warms the caches
    and the allocator after the previous function, as a loop calling one metric would find them.
    """
    values = {name: _timed(fn, device)[1] for name, fn in fns.items()}  # warm-up: allocations, kernels
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            times[name].append(_timed(fn, device)[0])
    return {name: (statistics.median(times[name]), values[name]) for name in fns}


def _flat(scores: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    queries, items = scores.shape
    indexes = torch.arange(queries, device=scores.device).repeat_interleave(items)
    return scores.reshape(-1), labels.reshape(-1), indexes


def _torchmetrics(scores: torch.Tensor, labels: torch.Tensor) -> float:
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    metric = RetrievalNormalizedDCG(top_k=K)
    metric.update(*_flat(scores, labels))
    return float(metric.compute())


def _sklearn(scores: torch.Tensor, labels: torch.Tensor) -> float:
    from sklearn.metrics import ndcg_score

    return float(ndcg_score(labels.numpy(), scores.numpy(), k=K))


def _check(reference: float, ours: float) -> str:
    delta = abs(reference - ours)
    return f"{'ok' if delta <= TOLERANCE else 'FAIL'} |Δ|={delta:.0e}"


def _ours(scores: torch.Tensor, labels: torch.Tensor) -> dict[str, Callable[[], torch.Tensor]]:
    flat = _flat(scores, labels)
    generator = torch.Generator().manual_seed(1)
    shuffle = torch.randperm(flat[0].shape[0], generator=generator).to(scores.device)
    shuffled = [tensor[shuffle] for tensor in flat]
    tie_free = torch.randn(scores.shape, generator=torch.Generator().manual_seed(0)).to(scores.device)
    forms = {
        "torch_ndcg ndcg (dense)": lambda **options: tn.ndcg(scores, labels, K, **options),
        "torch_ndcg ndcg, flat indexes, query-major order": lambda **options: tn.ndcg(
            *flat[:2], K, indexes=flat[2], **options
        ),
        "torch_ndcg ndcg, flat indexes, shuffled order": lambda **options: tn.ndcg(
            *shuffled[:2], K, indexes=shuffled[2], **options
        ),
        f"torch_ndcg ndcg (dense), {TIE_FREE}": lambda **options: tn.ndcg(tie_free, labels, K, **options),
    }
    runs = {}
    for name, form in forms.items():
        runs[name] = form
        runs[f"{name}, {UNCHECKED}"] = lambda form=form: form(validate=False)
    return runs



def _case(queries: int, items: int, args: argparse.Namespace) -> list[Row]:
    case = f"{queries:,} × {items:,}"
    scores, labels = _data(queries, items)
    cpu = torch.device("cpu")
    subset = max(1, min(queries, args.ref_items // items))
    sub_scores, sub_labels = scores[:subset], labels[:subset]
    scale = queries / subset
    ours = _ours(scores, labels)
    reference_fns = {
        f"torchmetrics RetrievalNormalizedDCG(top_k={K})": _torchmetrics,
        f"scikit-learn ndcg_score(k={K})": _sklearn,
    }
    references = {name: (lambda fn=fn: fn(sub_scores, sub_labels)) for name, fn in reference_fns.items()}
    timings = _median_seconds({**ours, **references}, args.repeats, cpu)

    rows = [Row(case, f"{name}, cpu", timings[name][0]) for name in ours]
    ours_value = {name: float(timings[name][1]) for name in ours}
    # Ours on the very queries the references ran on, in every form (tie-free scores are other data).
    mine = [float(f()) for name, f in _ours(sub_scores, sub_labels).items() if TIE_FREE not in name]
    for name in references:
        seconds, value = timings[name]
        check = _check(value, max(mine, key=lambda m: abs(m - value)))
        if subset < queries:
            check += f" ({subset:,} queries)"
        rows.append(Row(case, name, seconds * scale, subset < queries, check))
    for row, name in zip(rows, ours):
        if UNCHECKED in name:  # the same value as with validate=True, to the bit
            same = ours_value[name] == ours_value[name.replace(f", {UNCHECKED}", "")]
            row.check = "= validate=True" if same else "FAIL: differs from validate=True"
        elif subset == queries and TIE_FREE not in name:
            worst = max((float(timings[r][1]) for r in references), key=lambda r: abs(r - ours_value[name]))
            row.check = _check(worst, ours_value[name])

    if torch.cuda.is_available():
        gpu = torch.device("cuda")
        gpu_scores, gpu_labels = scores.to(gpu), labels.to(gpu)
        gpu_timings = _median_seconds(_ours(gpu_scores, gpu_labels), args.repeats, gpu)
        for name, (seconds, value) in gpu_timings.items():
            read = scores.nbytes + labels.nbytes + (queries * items * 8 if "flat" in name else 0)
            achieved = read / seconds / 1e9
            rows.append(
                Row(
                    case,
                    f"{name}, {torch.cuda.get_device_name(gpu)}",
                    seconds,
                    check=_check(ours_value[name], float(value)) + " vs cpu",
                    bandwidth=f"{achieved:,.0f} GB/s = {achieved / args.bandwidth_gbs:.1%}",
                )
            )
    return rows


def _print(rows: list[Row], args: argparse.Namespace) -> None:
    print(f"Mean NDCG@{K}, graded labels 0–4 (~30% non-zero), scores rounded to 0.01 (ties averaged); "
          f"median of {args.repeats} interleaved rounds after a warm-up; "
          f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, "
          f"load average {os.getloadavg()[0]:.1f} (other processes slow the CPU rows)")
    header = (f"{'case':<14} {'implementation':<62} {'time (ms)':>11} {'vs torchmetrics':>16} "
              f"{'vs sklearn':>11}  {'check':<32} {'GPU bandwidth':<20}")
    print(header)
    print("-" * len(header))
    for case in dict.fromkeys(row.case for row in rows):
        group = [row for row in rows if row.case == case]
        tm = next(row.seconds for row in group if row.name.startswith("torchmetrics"))
        sk = next(row.seconds for row in group if row.name.startswith("scikit-learn"))
        for row in group:
            time_ms = f"{row.seconds * 1e3:,.2f}{'*' if row.extrapolated else ' '}"
            print(f"{row.case:<14} {row.name:<62} {time_ms:>11} {tm / row.seconds:>15.1f}× "
                  f"{sk / row.seconds:>10.1f}×  {row.check:<32} {row.bandwidth:<20}")
    print("* reference run on a subset of the queries and scaled linearly to all of them (see check column)")


def _bars(rows: list[Row]) -> None:
    """The CPU speed targets at 2,000 × 100 (met or missed, never asserted: this is not a test)."""
    group = {row.name: row.seconds for row in rows if row.case == "2,000 × 100"}
    if not group:
        return
    tm = next(s for n, s in group.items() if n.startswith("torchmetrics"))
    sk = next(s for n, s in group.items() if n.startswith("scikit-learn"))
    dense = group["torch_ndcg ndcg (dense), cpu"]
    flat = group["torch_ndcg ndcg, flat indexes, query-major order, cpu"]
    shuffled = group["torch_ndcg ndcg, flat indexes, shuffled order, cpu"]
    for label, ratio, target in (
        ("dense vs torchmetrics", tm / dense, 100),
        ("dense vs scikit-learn", sk / dense, 20),
        ("flat (query-major) vs torchmetrics", tm / flat, 50),
        ("flat (shuffled) vs torchmetrics", tm / shuffled, 50),
    ):
        print(f"target at 2,000 × 100, {label}: {ratio:.0f}× (target ≥ {target}×) {'met' if ratio >= target else 'MISSED'}")
    # validate=False must never be slower (noise aside): it only skips the value checks.
    for case in dict.fromkeys(row.case for row in rows):
        times = {row.name: row.seconds for row in rows if row.case == case}
        ratios = [
            times[name.replace(f", {UNCHECKED}", "")] / seconds
            for name, seconds in times.items() if UNCHECKED in name and name.endswith(", cpu")
        ]
        print(f"{case}: validate=True time / validate=False time, per form: "
              + ", ".join(f"{ratio:.2f}" for ratio in ratios) + " (≥ 1 within noise)")


def _topk_lower_bound(scores: torch.Tensor, labels: torch.Tensor, k: int) -> torch.Tensor:
    """Mean NDCG@k in six lines of ``topk`` that ignore ties (an arbitrary tied item is taken) and
    check nothing: what a call costs without the library's guarantees."""
    top = scores.topk(k, dim=-1).indices
    discounts = 1.0 / torch.log2(torch.arange(2, k + 2, dtype=scores.dtype))
    dcg = (labels.gather(-1, top) * discounts).sum(-1)
    ideal = (labels.topk(k, dim=-1).values * discounts).sum(-1)
    return torch.where(ideal > 0, dcg / ideal, 0.0).mean()


CALL = (64, 100)  # one small batch: what a call costs besides the arithmetic
CALL_POOL = 16  # distinct batches the call cycles through, as a loop over batches would


def _call_cost(rounds: int) -> None:
    """The default ``tn.ndcg`` call on one small batch, one thread, against ``validate=False`` and the
    ``topk`` lower bound, interleaved; prints the ratios and the targets (never asserted).

    Each function cycles through the same ``CALL_POOL`` distinct batches: called on one tensor over
    and over, CPU ``topk`` learns that tensor's branches and runs about three times faster than on
    the next batch of a loop, which no real loop sees. That figure is printed too, beside it.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pool = [_data(*CALL, seed=seed) for seed in range(CALL_POOL)]
        timings = {}
        for label, batches in (("fresh", pool), ("repeated", pool[:1])):
            cycles = [itertools.cycle(batches) for _ in range(3)]
            fns = {
                "tn.ndcg(scores, labels, 10)": lambda c=cycles[0]: tn.ndcg(*next(c), K),
                "tn.ndcg(..., validate=False)": lambda c=cycles[1]: tn.ndcg(*next(c), K, validate=False),
                f"six-line topk NDCG@{K} (ties ignored)": lambda c=cycles[2]: _topk_lower_bound(*next(c), K),
            }
            timings[label] = _median_seconds(fns, rounds, torch.device("cpu"))
    finally:
        torch.set_num_threads(threads)
    print(f"\nOne call at {CALL[0]} × {CALL[1]}, NDCG@{K} (linear gain, log2 discount, ties averaged, empty "
          f"queries 0), 1 thread, median of {rounds} interleaved rounds, load average {os.getloadavg()[0]:.1f}; "
          f"each function cycles through {CALL_POOL} distinct batches (value: the first batch's):")
    for name, (seconds, value) in timings["fresh"].items():
        print(f"  {name:<40} {seconds * 1e6:>9.1f} µs   value {float(value):.6f}")
    (default, _), (unchecked, _), (bound, _) = timings["fresh"].values()
    for label, ratio, target in (("default call / topk lower bound", default / bound, 2.5),
                              ("default call / validate=False", default / unchecked, 1.2)):  # fmt: skip
        print(f"target at {CALL[0]} × {CALL[1]}, {label}: {ratio:.2f}× (target ≤ {target}×) {'met' if ratio <= target else 'MISSED'}")
    (default, _), (_, _), (bound, _) = timings["repeated"].values()
    print(f"The same on one batch repeated (topk learns its branches; no loop over batches sees this): "
          f"default {default * 1e6:.1f} µs, topk {bound * 1e6:.1f} µs, ratio {default / bound:.2f}×")


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks eval")
    parser.add_argument("--repeats", type=int, default=3 if quick else 7, help="timed rounds of every implementation")
    parser.add_argument("--ref-items", type=int, default=500_000,
                        help="the references run on the first ref-items // N queries and are scaled up")
    parser.add_argument("--bandwidth-gbs", type=float, default=3350.0,
                        help="the GPU's memory bandwidth in GB/s (3,350: H100 SXM)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's choice; 1 avoids stalls on a busy machine)")
    args = parser.parse_args(argv or [])
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    cases = [(50, 20), (200, 100)] if quick else [(2_000, 100), (10_000, 1_000)]
    rows = [row for queries, items in cases for row in _case(queries, items, args)]
    _print(rows, args)
    _bars(rows)
    _call_cost(20 if quick else 200)


if __name__ == "__main__":
    main()
