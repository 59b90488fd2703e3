"""Losses table: forward+backward time and peak memory of NeuralNDCG and ApproxNDCG, dense vs streaming.

``python -m benchmarks losses [--quick]``. The first table, on one CPU thread, times
NeuralNDCG against allRank 1.4.3's own ``neuralNDCG`` (an optional benchmark dependency:
``pip install --no-deps allrank==1.4.3``; its two unused imports are stubbed) and ListNet, side by
side in one process. On CPU every case of the second table runs in a fresh subprocess and
its peak memory is the growth of the resident set's high-water mark (Linux ``VmHWM``, reset
after imports and input creation; ``ru_maxrss`` elsewhere) over the resident set at that point. On CUDA the same table is measured in
process with ``torch.cuda.max_memory_allocated``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

import torch

import torch_ndcg as tn
from benchmarks import child_env
from torch_ndcg.data import synthetic_letor
from torch_ndcg.losses.backends import describe

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


def _peak_start() -> float:
    """Reset the resident set's high-water mark and return the resident set, in MiB (Linux);
    elsewhere the process's peak so far (``ru_maxrss``), under which an earlier peak (imports)
    can hide a case's own: without the reset, most cases of the table read 0 MiB."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # resets VmHWM to the current resident set
        return _vm_mib("VmRSS")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _peak_now() -> float:
    try:
        return _vm_mib("VmHWM")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
        base = _peak_start()
    times = []
    for _ in range(repeats):
        scores.grad = None
        start = time.perf_counter()
        LOSSES[loss](scores, relevance, impl=impl, **options).backward()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20 if device == "cuda" else _peak_now() - base
    return {"seconds": sorted(times)[len(times) // 2], "peak_mib": peak}


def _in_fresh_process(*args: object, **env: str) -> Any:
    """``python -m benchmarks.losses *args`` in a new process (``env`` added to this one's):
    its last line of output, read as JSON."""
    command = [sys.executable, "-m", "benchmarks.losses", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env(env))
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fresh_process(loss: str, impl: str, batch: int, length: int, iters: int) -> dict[str, float]:
    return _in_fresh_process("--case", loss, impl, batch, length, iters)


def _table(device: str, quick: bool) -> None:
    iters = 3 if quick else SINKHORN_ITERS
    memory = (
        "torch.cuda.max_memory_allocated growth"
        if device == "cuda"
        else ("VmHWM growth, in process" if quick else "growth of the resident set's high-water mark (VmHWM, reset before the case) in a fresh process per case")
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


def allrank_neural_ndcg():
    """allRank 1.4.3's ``neuralNDCG``, or ``None`` when allRank is not installed."""
    package = ranking_losses.allrank_losses()
    return None if package is None else package.neuralNDCG


def _interleaved_medians_ms(steps: dict[str, object], rounds: int) -> dict[str, float]:
    """Median ms of each step over ``rounds`` rounds that run every step once, in turn (a load
    change on a shared machine then hits all of them alike); a warm-up round first."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for round_ in range(rounds + 1):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            if round_:
                times[name].append(time.perf_counter() - start)
    return {name: 1e3 * sorted(t)[len(t) // 2] for name, t in times.items()}


def _tight_loop_ms(step, calls: int, blocks: int = 5) -> float:
    """Median ms per call over ``blocks`` blocks of ``calls`` back-to-back calls, after one block."""
    times = []
    for block in range(blocks + 1):
        start = time.perf_counter()
        for _ in range(calls):
            step()
        if block:
            times.append((time.perf_counter() - start) / calls)
    return 1e3 * sorted(times)[len(times) // 2]


def _allrank_table(quick: bool) -> None:
    """NeuralNDCG forward+backward against allRank's own code and ListNet, one thread, one process."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    allrank = allrank_neural_ndcg()
    sizes = [(4, 8, 3), (4, 27, 3)] if quick else [(64, 27, 21), (64, 100, 5), (32, 512, 3)]
    bare_listnet = ranking_losses.floors()["ListNet"]  # ListNet's bare formula, exactly as printed below
    print("\nOne thread: NeuralNDCG vs allRank 1.4.3 neuralNDCG and ListNet, forward+backward, float32, "
          f"k=10, exp2 gain, τ=1, {SINKHORN_ITERS} Sinkhorn iterations; median ms of interleaved rounds")  # fmt: skip
    print("ListNet = -(softmax(relevance) * log_softmax(scores)).sum(-1).mean(); "
          "tol=1e-6 = allRank's own early stop")  # fmt: skip
    print(f"{'B':>3} {'N':>5} {'reps':>4}  {'allRank':>9} {'auto':>9} {'auto tol':>9} {'streaming':>9} "
          f"{'ListNet':>8}  {'allRank/auto':>12} {'auto/ListNet':>12}")  # fmt: skip
    for batch, length, repeats in sizes:
        gen = torch.Generator().manual_seed(0)
        scores = torch.randn(batch, length, generator=gen).requires_grad_()
        relevance = torch.randint(0, 5, (batch, length), generator=gen).float()

        def ours(**options):
            return lambda: tn.neural_ndcg_loss(scores, relevance, 10, gain="exp2", **options).backward()

        def listnet():
            bare_listnet(scores, relevance).backward()

        steps = {"auto": ours(), "tol": ours(tol=1e-6), "streaming": ours(impl="streaming"), "listnet": listnet}
        if allrank:
            steps["allrank"] = lambda: allrank(scores, relevance, k=10).backward()
        ms = _interleaved_medians_ms(steps, repeats)
        auto, tol, streaming, listnet_ms, theirs = (ms["auto"], ms["tol"], ms["streaming"], ms["listnet"],
                                                    ms.get("allrank"))  # fmt: skip
        ratio = f"{theirs / auto:11.1f}x" if theirs else f"{'':>12}"
        cell = f"{theirs:9.2f}" if theirs else f"{'-':>9}"
        print(f"{batch:>3} {length:>5} {repeats:>4}  {cell} {auto:9.2f} {tol:9.2f} {streaming:9.2f} "
              f"{listnet_ms:8.3f}  {ratio} {auto / listnet_ms:11.1f}x")  # fmt: skip
        if (batch, length) == sizes[0][:2]:  # now, while the steps' inputs are this size's
            hot = {name: _tight_loop_ms(step, calls) for name, step, calls in (
                ("auto", ours(), 10 if quick else 50), ("one", ours(sinkhorn_iters=1), 10 if quick else 50),
                ("listnet", listnet, 10 if quick else 500))}  # fmt: skip
            per_iteration = (hot["auto"] - hot["one"]) / (SINKHORN_ITERS - 1)
            tight = (f"{batch} x {length} in a tight loop (the same call back to back, caches hot): auto "
                     f"{hot['auto']:.2f} ms, auto with 1 Sinkhorn iteration {hot['one']:.2f} ms (the fixed cost "
                     f"of a call; each further iteration {per_iteration:.3f} ms), ListNet "
                     f"{hot['listnet']:.3f} ms; auto/ListNet {hot['auto'] / hot['listnet']:.1f}x, fixed cost/ListNet "
                     f"{hot['one'] / hot['listnet']:.1f}x")  # fmt: skip
    if allrank is None:
        print("allRank: not installed (pip install --no-deps allrank==1.4.3 to compare)")
    print(tight)
    torch.set_num_threads(threads)
    if quick:
        return
    print("peak memory of NeuralNDCG forward+backward, float32, 50 iterations: growth of the resident set's "
          "high-water mark (VmHWM, reset after the inputs are made) in a fresh process per case")  # fmt: skip
    for batch, length in ((32, 512), (4, 4096)):
        cells = [f"{impl} {_peak_in_fresh_process(impl, batch, length):.1f} MiB" for impl in ("kernel", "streaming")]
        kernel = batch * length**2 * 4 / 2**20
        print(f"  B={batch} N={length}: " + ", ".join(cells) + f"; one B·N² float32 kernel is {kernel:.0f} MiB")


def _masked_listnet(scores: torch.Tensor, relevance: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    smallest = torch.finfo(scores.dtype).min
    target = torch.softmax(relevance.masked_fill(~mask, smallest), -1)
    return -(target * torch.log_softmax(scores.masked_fill(~mask, smallest), -1)).sum(-1).mean()


# Scorers of the epoch table: the example's LETOR model (configs/letor.json and mslr_like.json:
# hidden [128, 64], dropout 0.1), the scorer users train, and a one-layer MLP whose epoch the
# loss dominates, so that a slower loss shows there first.
EPOCH_SCORERS = {"136-128-64-1, dropout 0.1 (configs/letor.json)": ([128, 64], 0.1), "136-64-1": ([64], 0.0)}


def _scorer(features: int, hidden: list[int], dropout: float) -> torch.nn.Module:
    layers: list[torch.nn.Module] = []
    width = features
    for size in hidden:
        layers += [torch.nn.Linear(width, size), torch.nn.ReLU(), torch.nn.Dropout(dropout)]
        width = size
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))


def _epoch_table(quick: bool) -> None:
    """One training epoch (MLP scorer, Adam) with NeuralNDCG and with ListNet, one thread,
    interleaved, on the batches ``configs/mslr_like.json`` gives the example: synthetic lists
    with MSLR-like lengths (log-normal, median 30, clipped to [2, 240]), 64 per batch."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    features, count, rounds = 136, (2 if quick else 20), (1 if quick else 5)
    train = synthetic_letor((64 * count, 1, 1), num_features=features, list_length=(2, 240), length_median=30)["train"]
    batches = list(train.batches(64, max_items=240))
    lengths = train.list_lengths.float()
    width = sum(batch.mask.shape[1] for batch in batches) / len(batches)

    def epoch(loss_fn, hidden: list[int], dropout: float) -> float:
        torch.manual_seed(0)
        model = _scorer(features, hidden, dropout)
        optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
        start = time.perf_counter()
        for x, y, mask in batches:
            optimiser.zero_grad()
            loss_fn(model(x).squeeze(-1), y, mask).backward()
            optimiser.step()
        return time.perf_counter() - start

    def neural(scores, relevance, mask):
        return tn.neural_ndcg_loss(scores, relevance, 10, mask=mask, gain="exp2")

    print(f"\nOne thread: one training epoch, {count} batches of 64 MSLR-like lists (lengths log-normal, median "
          f"{lengths.median():.0f}, mean {lengths.mean():.1f}, max {lengths.max():.0f}; padded width "
          f"{width:.0f} on average), {features} features, Adam; median of {rounds} interleaved epochs")  # fmt: skip
    print(f"with NeuralNDCG at k=10, exp2 gain, τ=1, {SINKHORN_ITERS} Sinkhorn iterations, impl='auto'; "
          "ListNet as above, masked")  # fmt: skip
    print(f"  {'scorer':<48} {'ListNet ms':>10} {'NeuralNDCG ms':>13} {'NeuralNDCG/ListNet':>18}")
    for name, (hidden, dropout) in EPOCH_SCORERS.items():
        steps = {
            "listnet": lambda: epoch(_masked_listnet, hidden, dropout),
            "neural": lambda: epoch(neural, hidden, dropout),
        }
        ms = _interleaved_medians_ms(steps, rounds)
        print(f"  {name:<48} {ms['listnet']:10.1f} {ms['neural']:13.1f} {ms['neural'] / ms['listnet']:17.2f}x")
    torch.set_num_threads(threads)


def _vm_mib(field: str) -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) / 1024


def peak_growth(impl: str, batch: int, length: int) -> float:
    """MiB the resident set's high-water mark grows by during one NeuralNDCG forward+backward (Linux)."""
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=gen).requires_grad_()
    relevance = torch.randint(0, 5, (batch, length), generator=gen).float()
    # A tiny call first: what the first call imports lazily (a registered operator's first call
    # imports torch._dynamo, ~140 MiB of modules) is an import, not the loss's memory.
    tn.neural_ndcg_loss(scores[:1, :4], relevance[:1, :4], impl=impl, sinkhorn_iters=1).backward()
    scores.grad = None
    base = _peak_start()
    tn.neural_ndcg_loss(scores, relevance, 10, gain="exp2", impl=impl, sinkhorn_iters=SINKHORN_ITERS).backward()
    return _peak_now() - base


def _peak_in_fresh_process(impl: str, batch: int, length: int) -> float:
    return float(_in_fresh_process("--peak", impl, batch, length))


COMPILED_LOSSES = {
    "NeuralNDCG": lambda s, r: tn.neural_ndcg_loss(s, r, 10, gain="exp2"),
    "ApproxNDCG": lambda s, r: tn.approx_ndcg_loss(s, r, 10, gain="exp2"),
    "ListNet": tn.listnet_loss,
    "ListMLE": tn.listmle_loss,
    "Softmax CE": tn.softmax_loss,
    "RankNet": tn.ranknet_loss,
    "LambdaLoss": lambda s, r: tn.lambda_loss(s, r, 10),
    "Pairwise hinge": tn.pairwise_hinge_loss,
}


def _compile_table(quick: bool) -> None:
    """``torch.compile(loss)`` (default backend, the loss's defaults) against the same loss eager,
    forward+backward, one thread, interleaved; compile time apart. Every loss compiles as one
    graph (its value checks are one registered operator), so ``fullgraph=True`` is asked. The
    last row compiles ListNet's bare three-operation formula: what ``torch.compile`` itself
    costs per call at this size, whatever the loss."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    batch, length, rounds = (4, 8, 2) if quick else (64, 100, 7)
    names = ["ListNet"] if quick else list(COMPILED_LOSSES)
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=gen).requires_grad_()
    relevance = torch.randint(0, 5, (batch, length), generator=gen).float()
    print(f"\nOne thread: torch.compile(loss, fullgraph=True) vs eager at {batch} x {length}, float32, "
          "forward+backward, the loss's defaults (validate=True; NeuralNDCG/ApproxNDCG/LambdaLoss k=10); "
          f"median ms of {rounds} interleaved rounds of 20 calls")  # fmt: skip
    print(f"  {'loss':<22} {'compile s':>9} {'eager ms':>9} {'compiled ms':>11} {'eager/compiled':>14}")
    bare = ranking_losses.floors()["ListNet"]
    rows = [(name, COMPILED_LOSSES[name]) for name in names] + [("bare ListNet formula", bare)]
    for name, loss in rows:
        torch._dynamo.reset()
        compiled = torch.compile(loss, fullgraph=True)
        start = time.perf_counter()
        compiled(scores, relevance).backward()
        compile_s = time.perf_counter() - start

        def many(fn):
            return lambda: [fn(scores, relevance).backward() for _ in range(20)]

        ms = _interleaved_medians_ms({"eager": many(loss), "compiled": many(compiled)}, rounds)
        eager, done = ms["eager"] / 20, ms["compiled"] / 20
        print(f"  {name:<22} {compile_s:9.1f} {eager:9.3f} {done:11.3f} {eager / done:13.2f}x")
    torch._dynamo.reset()
    torch.set_num_threads(threads)


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks losses")
    parser.add_argument("--case", nargs=5, metavar=("LOSS", "IMPL", "B", "N", "ITERS"), help=argparse.SUPPRESS)
    parser.add_argument("--peak", nargs=3, metavar=("IMPL", "B", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.peak:
        print(peak_growth(args.peak[0], int(args.peak[1]), int(args.peak[2])))
        return
    if args.case:
        loss, impl, batch, length, iters = args.case
        print(json.dumps(measure(loss, impl, int(batch), int(length), "cpu", int(iters))))
        return
    print(describe(64, 27))
    _allrank_table(quick)
    _compile_table(quick)
    _epoch_table(quick)
    _table("cpu", quick)
    ranking_losses.table(quick)
    if torch.cuda.is_available():
        _table("cuda", quick)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
