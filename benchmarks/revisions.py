"""Revisions table: losses of this tree against those of an earlier commit, timed side by side in one
process, and against allRank where it is installed.

``python -m benchmarks revisions --base 890aadd [--rounds 40] [--losses ...] [--shapes 64x100 ...]``:
the listwise losses by default; ``--losses NeuralNDCG@10 ApproxNDCG@10 "NeuralSort NDCG@10"``
times the smooth NDCG losses, at each ``--shapes`` batch × length. The commit's package is exported
with ``git archive`` into a temporary folder and imported under another name (its sources'
``torch_ndcg`` renamed, so that its registered operators get their own namespace, its compiled
loops built as an install builds them); both then run
on the same inputs as the standard-losses table (64 × 100, one thread), sampled in turn within
each round, so a slow spell of a shared machine hits both alike. The ratio ``this / base``
compares the two trees; on a loaded machine only the ratio means anything.
"""

from __future__ import annotations

import argparse
import importlib
import io
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

import torch

import torch_ndcg as tn

from . import ranking_losses

ROOT = Path(__file__).resolve().parents[1]
LOSSES = ("ListMLE", "ListNet", "Softmax CE")
# The smooth NDCG losses at NDCG@10, with the listwise table's padding (label −1 → mask).
SMOOTH = {
    "NeuralNDCG@10": "neural_ndcg_loss",
    "ApproxNDCG@10": "approx_ndcg_loss",
    "NeuralSort NDCG@10": "neuralsort_ndcg_loss",
}


def losses_of(package: ModuleType) -> dict:
    """Every loss the table can time, from ``package`` (this tree's torch_ndcg or the base's)."""
    def smooth(name: str):
        loss = getattr(package, name)
        return lambda s, y: loss(s, y.clamp(min=0), k=10, mask=y != ranking_losses.PADDING)

    return {**ranking_losses.ours(package), **{label: smooth(name) for label, name in SMOOTH.items()}}


def import_revision(revision: str, folder: Path) -> ModuleType:
    """``torch_ndcg`` as of ``revision``, imported as ``torch_ndcg_<hash>`` from ``folder``."""
    commit = subprocess.run(["git", "rev-parse", "--short", revision], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    name = f"torch_ndcg_{commit}"
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    source = folder / "source"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data")
    # Its compiled loops too, as an install builds them: without them its NeuralNDCG would run the
    # NumPy fallback and the ratio would compare two builds, not two trees.
    if (source / "setup.py").is_file():
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=source, capture_output=True)
    package = folder / name
    (source / "torch_ndcg").rename(package)
    for source in package.rglob("*.py"):
        source.write_text(re.sub(r"\btorch_ndcg\b", name, source.read_text(encoding="utf-8")), encoding="utf-8")
    sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def table(base: ModuleType, rounds: int, losses: tuple[str, ...], batch: int, length: int) -> None:
    theirs = ranking_losses.allrank() or {}
    ours, before = losses_of(tn), losses_of(base)
    cases = [(loss, side) for loss in losses for side in ("this", "base", "allRank") if side != "allRank" or loss in theirs]
    functions = {"this": ours, "base": before, "allRank": theirs}
    times = {case: [] for case in cases}
    for _ in range(rounds):
        for case, value in zip(cases, ranking_losses.seconds([functions[side][loss] for loss, side in cases], batch, length)):
            times[case].append(value)
    median = {case: statistics.median(values) * 1e3 for case, values in times.items()}
    print(f"\nlosses at {batch} x {length}, cpu, 1 thread: forward+backward ms, median of {rounds} rounds")
    print(f"(each the median of {ranking_losses.REPEATS} interleaved samples); base = {base.__name__}; this/base is the")
    built = {side: "NumPy" if package.backends()["compiled_code"].startswith("none") else "C"
             for side, package in (("this", tn), ("base", base))}  # fmt: skip
    print(f"median of the rounds' ratios; NeuralNDCG's loops: this {built['this']}, base {built['base']}")
    print(f"{'loss':<19} {'this ms':>8} {'base ms':>8} {'this/base':>10} {'allRank ms':>11} {'speed-up':>9}")
    for loss in losses:
        ratio = statistics.median(a / b for a, b in zip(times[(loss, "this")], times[(loss, "base")]))
        this, against = median[(loss, "this")], median.get((loss, "allRank"))
        allrank = "not installed" if against is None else f"{against:11.3f} {against / this:8.2f}x"
        print(f"{loss:<19} {this:8.3f} {median[(loss, 'base')]:8.3f} {ratio:10.3f} {allrank}")


def _shape(text: str) -> tuple[int, int]:
    batch, _, length = text.partition("x")
    if not (batch.isdigit() and length.isdigit() and int(batch) > 0 and int(length) > 1):
        raise argparse.ArgumentTypeError(f"a shape is BATCHxLENGTH, such as 64x100, got {text!r}")
    return int(batch), int(length)


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks revisions", description=__doc__)
    parser.add_argument("--base", default="HEAD", help="the commit to compare with (default: HEAD)")
    parser.add_argument("--rounds", type=int, default=2 if quick else 20)
    parser.add_argument("--losses", nargs="+", choices=(*LOSSES, *SMOOTH), default=list(LOSSES))
    parser.add_argument("--shapes", nargs="+", type=_shape, default=[(64, 100)], help="BATCHxLENGTH (default 64x100)")
    args = parser.parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as folder:
            base = import_revision(args.base, Path(folder))
            for batch, length in args.shapes:
                table(base, args.rounds, tuple(args.losses), batch, length)
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":
    main()
