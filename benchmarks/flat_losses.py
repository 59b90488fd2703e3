"""Flat-losses table: skewed lists as flat items (``indexes=``) vs padded rows vs one call per list.

``python -m benchmarks flat_losses [--quick]``. One batch of one long list (4,000 items)
and many two-item lists (2,000), forward + backward of NeuralNDCG and LambdaLoss with default
options, in three forms: flat items with ``indexes=`` (the lists grouped by length), the padded
``[Q, max n]`` rows with a mask, and each list as its own ``[1, n]`` call, their times and peak
memories added up. Every case runs in a fresh process (``--quick``: in this one); after one
warm-up call, its peak memory is the growth of the resident set's high-water mark over the
resident set (as in the ``losses`` table), with glibc's mmap threshold fixed
(:data:`ALLOCATOR_ENV`) so that freed blocks leave the resident set. ``[1, n]`` calls add up
the long list's call and the two-item call times the number of two-item lists. A padded case that does not finish within a minute is stopped and its time
estimated from the flat time and the padded/real pair count (``Q·max n² / Σ n²``), which is what
a path costing per padded pair spends.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import torch

from benchmarks import child_env
from torch import Tensor

import torch_ndcg as tn

from .losses import _peak_now, _peak_start

LOSSES = {"NeuralNDCG": tn.neural_ndcg_loss, "LambdaLoss": tn.lambda_loss}
PADDED_LIMIT_S = 60
# glibc's allocator otherwise raises its mmap threshold as blocks are freed and then keeps later
# large blocks resident after free, so a case's high-water mark would depend on what ran before
# (its warm-up call). A fixed threshold returns every large block to the system when freed: the
# resident set follows the live tensors, and its high-water mark their peak.
ALLOCATOR_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"}


def sizes(quick: bool) -> list[int]:
    """The list lengths of the batch: one long list and many two-item lists."""
    return [200] + [2] * 50 if quick else [4000] + [2] * 2000


def flat_batch(lengths: list[int]) -> tuple[Tensor, Tensor, Tensor]:
    """float32 scores, labels 0–4 and query ids of the lists' items, shuffled together."""
    gen = torch.Generator().manual_seed(0)
    indexes = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    indexes = indexes[torch.randperm(indexes.shape[0], generator=gen)]
    return torch.randn(indexes.shape[0], generator=gen), torch.randint(0, 5, indexes.shape, generator=gen), indexes


def _padded(scores: Tensor, relevance: Tensor, indexes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    order = torch.sort(indexes, stable=True).indices
    counts = torch.bincount(indexes)
    width, first = int(counts.max()), torch.cumsum(counts, 0) - counts
    slot = indexes[order] * width + torch.arange(order.shape[0]) - first[indexes[order]]
    rows = (counts.shape[0], width)
    mask = torch.zeros(rows[0] * width, dtype=torch.bool).index_fill_(0, slot, True).view(rows)

    def pad(values: Tensor) -> Tensor:
        return values.new_zeros(rows[0] * width).index_copy_(0, slot, values[order]).view(rows)

    return pad(scores), pad(relevance), mask


def case(loss: str, layout: str, length: int, repeats: int, quick: bool) -> dict[str, float]:
    """Median forward+backward seconds (after one warm-up call) and peak MiB of one form:
    ``flat``, ``padded``, or ``one`` (a single ``[1, length]`` list)."""
    scores, relevance, indexes = flat_batch(sizes(quick))
    options: dict[str, object] = {}
    if layout == "flat":
        options["indexes"] = indexes
    elif layout == "padded":
        scores, relevance, options["mask"] = _padded(scores, relevance, indexes)
    else:
        scores, relevance = torch.randn(1, length), torch.randint(0, 5, (1, length))
    scores.requires_grad_()

    def step() -> float:
        scores.grad = None
        start = time.perf_counter()
        LOSSES[loss](scores, relevance, **options).backward()
        return time.perf_counter() - start

    step()  # one-time costs (loading the compiled loops, first allocations) stay out of both columns
    base = _peak_start()
    times = sorted(step() for _ in range(repeats))
    return {"seconds": times[len(times) // 2], "peak_mib": _peak_now() - base}


def _fresh(loss: str, layout: str, length: int, repeats: int, quick: bool, timeout: float | None = None):
    """:func:`case` in a new process on one thread (in this one with ``quick``); ``None`` when it
    ran past ``timeout``."""
    if quick:
        return case(loss, layout, length, repeats, quick)
    command = [sys.executable, "-m", "benchmarks.flat_losses", "--case", loss, layout, str(length), str(repeats)]
    try:
        done = subprocess.run(command + (["--quick"] if quick else []), capture_output=True, text=True, check=True,
                              timeout=timeout, env=child_env(ALLOCATOR_ENV))  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def memory_ratio(peak: float, reference: float) -> str:
    """``peak / reference`` for the table; "—" where the reference peak is below the 0.1 MiB the
    table shows, since a ratio to an unmeasurable growth says nothing."""
    return "—" if reference < 0.05 else f"{peak / reference:.2f}"


def table(quick: bool) -> None:
    lengths = sizes(quick)
    longest, count = max(lengths), len(lengths)
    shorts = [n for n in lengths if n != longest]
    repeats = 1 if quick else 3
    print(f"\nflat losses on cpu (1 thread): one {longest}-item list + {len(shorts)} two-item lists, float32, "
          "labels 0–4, forward+backward, default options (NeuralNDCG impl='auto', 50 Sinkhorn iterations; "
          "LambdaLoss ndcg_loss2pp, impl='auto');")  # fmt: skip
    print(f"time = median of {repeats} after a warm-up call; peak = growth of VmHWM over those calls "
          "(glibc mmap threshold fixed at 64 KiB), "
          f"{'in process' if quick else 'in a fresh process per case'}; "
          f"[1, n] calls: the {longest}-item call + {len(shorts)} × one two-item call, times and peaks added up")
    print(f"{'loss':<11} {'form':<18} {'seconds':>10} {'peak MiB':>9}  {'time / [1,n]':>12} {'mem / [1,n]':>11}")
    for loss in LOSSES:
        one_long = _fresh(loss, "one", longest, repeats, quick)
        one_short = _fresh(loss, "one", 2, max(repeats, 50), quick)
        calls = {"seconds": one_long["seconds"] + len(shorts) * one_short["seconds"],
                 "peak_mib": one_long["peak_mib"] + len(shorts) * one_short["peak_mib"]}  # fmt: skip
        flat = _fresh(loss, "flat", 0, repeats, quick)
        # The warm-up and every repeat may take up to the limit, and the process's start one more.
        padded = _fresh(loss, "padded", 0, repeats, quick, timeout=PADDED_LIMIT_S * (repeats + 2))
        for form, result in (("[1, n] calls", calls), ("flat (indexes=)", flat), ("padded [Q, max n]", padded)):
            if result is None:
                estimate = flat["seconds"] * count * longest**2 / sum(n * n for n in lengths)
                print(f"{loss:<11} {form:<18} a call takes over {PADDED_LIMIT_S} s: est. {estimate:,.0f} s "
                      f"({count} × {longest}² padded pairs at the flat rate)")  # fmt: skip
                continue
            print(f"{loss:<11} {form:<18} {result['seconds']:10.3f} {result['peak_mib']:9.1f}  "
                  f"{result['seconds'] / calls['seconds']:12.2f} {memory_ratio(result['peak_mib'], calls['peak_mib']):>11}")


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks flat_losses")
    parser.add_argument("--case", nargs=4, metavar=("LOSS", "LAYOUT", "LENGTH", "REPEATS"))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.case:
        loss, layout, length, repeats = args.case
        print(json.dumps(case(loss, layout, int(length), int(repeats), quick or args.quick)))
        return
    table(quick or args.quick)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
