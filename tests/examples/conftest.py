"""Make the example scripts importable, so their ``main(argv)`` runs in-process (no interpreter start-up),
and write small learning-to-rank files in each layout the examples read."""

import gzip
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))


def letor_lines(queries: int, seed: int, *, qids: bool = True) -> tuple[list[str], list[int]]:
    """Item lines of ``queries`` queries (5 features, labels 0-2 that follow feature 1), queries
    interleaved as real files may have them, and the size of each query in line order."""
    gen = torch.Generator().manual_seed(seed)
    items = []
    for q in range(queries):
        for _ in range(int(torch.randint(3, 9, (1,), generator=gen))):
            x = torch.randn(5, generator=gen)
            label = int((x[0] > 0.5) + (x[0] > 1.2))
            items.append((q, f"{label} " + (f"qid:q{q} " if qids else "") + " ".join(
                f"{i + 1}:{v:.3f}" for i, v in enumerate(x.tolist()))))
    if not qids:  # the LightGBM / XGBoost layouts keep each query's lines together
        sizes = torch.bincount(torch.tensor([q for q, _ in items])).tolist()
        return [line for _, line in items], sizes
    order = torch.randperm(len(items), generator=gen).tolist()
    return [items[i][1] for i in order], []


@pytest.fixture
def write_fold():
    """``write_fold(folder, layout)`` writes train (12 queries), maybe vali (4), test (4) files."""

    def write(folder: Path, layout: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        splits = (("train", 12), ("test", 4)) if layout in ("train_test", "lightgbm") else (
            ("train", 12), ("vali", 4), ("test", 4))
        for number, (split, queries) in enumerate(splits):
            lines, sizes = letor_lines(queries, number, qids=layout not in ("lightgbm", "xgboost"))
            text = "# a comment line\n" + "\n".join(lines) + "\n"
            if layout == "gzip":
                with gzip.open(folder / f"{split}.txt.gz", "wt") as f:
                    f.write(text)
            elif layout in ("letor", "train_test"):
                (folder / f"{split}.txt").write_text(text)
            else:
                suffix = ".query" if layout == "lightgbm" else ".group"
                (folder / f"rank.{split}").write_text(text)
                (folder / f"rank.{split}{suffix}").write_text("\n".join(map(str, sizes)) + "\n")
        return folder

    return write
