"""Standard-losses table: forward+backward time of ListNet, ListMLE, RankNet, LambdaLoss (and the
losses allRank lacks) against allRank 1.4.3 side by side, and the pairwise losses' peak memory
on long lists. Part of ``python -m benchmarks losses``.

allRank is an optional benchmark dependency (not installed with torch_ndcg): when
``allrank.models.losses`` imports, its losses are timed in the same run on the same inputs,
otherwise the column says "not installed". Inputs follow allRank's conventions (label −1 =
padding, exp2 gains for LambdaLoss) so both sides compute the same numbers.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import types
from collections.abc import Callable
from typing import Any

import torch

from benchmarks import child_env

import torch_ndcg as tn

PADDING = -1.0
SIZES = [(64, 100), (32, 512)]
MEMORY_SIZE = (4, 4096)
REPEATS = 5
SAMPLE_SECONDS = 0.05


def ours(package: Any = tn) -> dict[str, Callable[..., torch.Tensor]]:
    """Each loss with allRank's conventions: label −1 → mask, allRank's reduction and gain;
    ``package``: torch_ndcg, or an earlier revision of it (``benchmarks.revisions``)."""

    def masked(loss: Callable[..., torch.Tensor], **options: Any) -> Callable[..., torch.Tensor]:
        return lambda s, y: loss(s, y.clamp(min=0), mask=y != PADDING, **options)

    return {
        "ListNet": masked(package.listnet_loss, empty="keep"),
        "ListMLE": masked(package.listmle_loss, empty="keep"),
        "RankNet": masked(package.ranknet_loss),
        "LambdaLoss": masked(package.lambda_loss, gain="exp2", weighting="ndcg_loss2pp", empty="keep", reduction="sum"),
        "Softmax CE": masked(package.softmax_loss, empty="keep"),
        "Pairwise hinge": masked(package.pairwise_hinge_loss),
        # 1 − NDCG against allRank's −NDCG: the same gradient; no cutoff, τ = 1/alpha = 1.
        "ApproxNDCG": masked(package.approx_ndcg_loss, gain="exp2", empty="zero"),
    }


def floors() -> dict[str, Callable[..., torch.Tensor]]:
    """The bare formula of the listwise losses: its own few operations, no padding, no checks, no
    ``empty``. No eager implementation can beat it by much, so its speed-up over allRank bounds
    what a target on these losses can ask of eager PyTorch at these sizes."""

    def listnet(s: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -(torch.softmax(y, -1) * torch.log_softmax(s, -1)).sum(-1).mean()

    def listmle(s: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        ordered = s.gather(-1, y.argsort(dim=-1, descending=True, stable=True))
        top = ordered.detach().amax(-1, keepdim=True)  # (logcumsumexp is several times slower on CPU)
        suffix = (ordered - top).exp().flip(-1).cumsum(-1).flip(-1).log() + top
        return (suffix - ordered).sum(-1).mean()

    return {"ListNet": listnet, "ListMLE": listmle}


def one_op(s: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """One fused torch operation forward and backward, ``F.cross_entropy`` with soft targets (the
    labels as given): what any loss costs at the least, so its speed-up over an allRank loss bounds
    what a target can ask of an eager implementation of that loss."""
    return torch.nn.functional.cross_entropy(s, y)


ONE_OP_ROWS = ("ListNet", "Softmax CE")  # ListMLE sorts as well: its bare formula is its bound


def allrank_losses() -> Any:
    """allRank's ``allrank.models.losses`` package, or ``None`` when allRank is not installed.

    The package imports the dataset loader (torchvision, scikit-learn) and the model utilities
    (gcsfs) for two names only, the padding label and the device: stubbed here.
    """
    loader = types.ModuleType("allrank.data.dataset_loading")
    loader.PADDED_Y_VALUE = -1
    model_utils = types.ModuleType("allrank.models.model_utils")
    model_utils.get_torch_device = lambda: torch.device("cpu")
    stubs = {"allrank.data.dataset_loading": loader, "allrank.models.model_utils": model_utils}
    for name, module in stubs.items():
        sys.modules.setdefault(name, module)
    try:
        from allrank.models import losses
    except ImportError:
        for name, module in stubs.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        return None
    return losses


def allrank() -> dict[str, Callable[..., torch.Tensor]] | None:
    losses = allrank_losses()
    if losses is None:
        return None
    return {
        "ListNet": losses.listNet,
        "ListMLE": losses.listMLE,
        "RankNet": losses.rankNet,
        "LambdaLoss": lambda s, y: losses.lambdaLoss(s, y, weighing_scheme="ndcgLoss2PP_scheme"),
        "Softmax CE": losses.binary_listNet,  # labels over their sum: softmax CE, whatever the labels
        "ApproxNDCG": losses.approxNDCGLoss,
    }


def inputs(batch: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 scores and labels 0–4, the second half of the lists padded over their last quarter."""
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=gen)
    labels = torch.randint(0, 5, (batch, length), generator=gen).float()
    labels[batch // 2 :, length - length // 4 :] = PADDING
    return scores, labels


def seconds(
    losses: list[Callable[..., torch.Tensor]], batch: int, length: int, sample_seconds: float = SAMPLE_SECONDS
) -> list[float]:
    """Median forward+backward seconds of each loss over ``REPEATS`` rounds, the losses sampled in
    turn within each round (a slow spell of a shared machine hits them alike), after one warm-up
    call each; a sample averages as many calls as fill ``sample_seconds`` (one call when a call is
    longer), since a single sub-millisecond call mostly measures the machine's noise."""
    scores, labels = inputs(batch, length)
    scores.requires_grad_()

    def calls(loss: Callable[..., torch.Tensor], count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            scores.grad = None
            loss(scores, labels).backward()
        return (time.perf_counter() - start) / count

    counts = [max(1, int(sample_seconds / calls(loss, 1))) for loss in losses]
    rounds = [[calls(loss, count) for loss, count in zip(losses, counts)] for _ in range(REPEATS)]
    return [sorted(column)[REPEATS // 2] for column in zip(*rounds)]


def _peak_mib() -> float:
    """This process's peak resident memory. Linux: ``VmHWM``, which starts afresh at ``exec``;
    ``ru_maxrss`` would also carry the peak of the parent that spawned the process."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def peak_memory(loss: str, batch: int, length: int) -> dict[str, float]:
    """Forward+backward seconds, peak-memory growth (MiB) over the baseline after set-up, and
    the whole process's peak (torch included), an upper bound that allocator reuse cannot hide."""
    scores, labels = inputs(batch, length)
    scores.requires_grad_()
    base = _peak_mib()
    start = time.perf_counter()
    ours()[loss](scores, labels).backward()
    elapsed = time.perf_counter() - start
    peak = _peak_mib()
    return {"seconds": elapsed, "peak_mib": peak - base, "process_mib": peak}


def _fresh_process(loss: str, batch: int, length: int) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.ranking_losses", "--memory", loss, str(batch), str(length)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env())
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(quick: bool = False) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        theirs = allrank()
        sizes = [(4, 16), (2, 32)] if quick else SIZES
        sample = 1e-3 if quick else SAMPLE_SECONDS
        version = "not installed" if theirs is None else _allrank_version()
        print(f"\nstandard losses on cpu (1 thread): forward+backward ms per call, median of {REPEATS} samples of")
        print(f"~{sample:g} s (or one call) after a warm-up; the label -1 -> mask conversion is timed on our side;")
        print(f"allRank {version}; allRank's conventions on both sides (label -1 = padding, exp2 gain and")
        print("reduction='sum' for LambdaLoss NDCG-Loss2++, k=None; the others reduce by mean; Softmax CE is")
        print("allRank's binary_listNet, labels over their sum; ApproxNDCG: exp2 gain, no cutoff, τ = 1, lists with")
        print("nothing relevant count 0, as allRank's approxNDCGLoss); 'bare formula' = the loss's own few ops")
        print("(no padding, no checks, no empty); 'one torch op' = F.cross_entropy(scores, labels), one fused op:")
        print("what any loss costs at the least, so its speed-up bounds what eager PyTorch can reach")
        print(f"{'loss':<15} {'B':>3} {'N':>5}  {'torch_ndcg ms':>13} {'allRank ms':>13} {'speed-up':>9}")
        rows = []  # (label, loss, the allRank loss it is compared with)
        for name, loss in ours().items():
            rows.append((name, loss, name))
            if name in floors():
                rows.append(("  bare formula", floors()[name], name))
            if name in ONE_OP_ROWS:
                rows.append(("  one torch op", one_op, name))
        for name, loss, of in rows:
            for batch, length in sizes:
                if theirs is None or of not in theirs:
                    (mine,) = seconds([loss], batch, length, sample)
                    other, ratio = ("not installed" if theirs is None else "no such loss"), ""
                else:
                    mine, t = seconds([loss, theirs[of]], batch, length, sample)
                    other, ratio = f"{1e3 * t:.3f}", f"{t / mine:8.1f}x"
                print(f"{name:<15} {batch:>3} {length:>5}  {1e3 * mine:13.3f} {other:>13} {ratio:>9}")
        batch, length = (2, 64) if quick else MEMORY_SIZE
        print(f"\npairwise losses on long lists (B={batch}, N={length}, streaming over [B, block, N] slabs):")
        print("peak memory = peak RSS (VmHWM) growth over the baseline after set-up, " + ("in process" if quick else "in a fresh process per loss") + "; one forward+backward")
        print(f"{'loss':<15} {'seconds':>8} {'growth MiB':>10} {'process peak MiB':>16}")
        for name in ("RankNet", "Pairwise hinge", "LambdaLoss"):
            got = peak_memory(name, batch, length) if quick else _fresh_process(name, batch, length)
            print(f"{name:<15} {got['seconds']:8.2f} {got['peak_mib']:10.1f} {got['process_mib']:16.1f}")
    finally:
        torch.set_num_threads(threads)


def _allrank_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("allrank")
    except PackageNotFoundError:
        return "(version unknown)"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ranking_losses")
    parser.add_argument("--memory", nargs=3, metavar=("LOSS", "B", "N"))
    args = parser.parse_args()
    if args.memory:
        torch.set_num_threads(1)
        loss, batch, length = args.memory
        print(json.dumps(peak_memory(loss, int(batch), int(length))))
    else:
        table()
