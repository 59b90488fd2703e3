"""The LETOR folds from the shared tarballs: where they are, unpacked once outside the repository.

The data is licensed for research use and is never copied into the repository: the tarballs are
read from ``$TORCH_NDCG_LETOR`` (default ``../shared/data/letor`` beside the repository root) and
unpacked into the system's temporary folder, once per tarball.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from pathlib import Path

import torch

from torch_ndcg.data import RankingDataset, read_letor, read_letor_fold

ENVIRONMENT_VARIABLE = "TORCH_NDCG_LETOR"
DEFAULT_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "letor"
FOLDS = (1, 2, 3, 4, 5)
# dataset: (tarball, folder of fold k inside it)
DATASETS = {
    "mq2008": ("mq2008_folds.tar.gz", "MQ2008/Fold{k}"),
    "ohsumed": ("ohsumed_folds.tar.gz", "OHSUMED/QueryLevelNorm/Fold{k}"),
    "mslr": ("mslr_web10k_fold1_5k_sample.tar.gz", "MSLR-WEB10K-sample/Fold1"),
}
# The MSLR sample is the first 5,000 lines of Fold1's train and test files: one fold, and its last
# query of each file may be cut short.
MSLR_FILES = {"train": "msn1.fold1.train.5k.txt", "test": "msn1.fold1.test.5k.txt"}
MSLR_VALIDATION_EVERY = 5  # every fifth training query of the sample validates


def data_root(given: str | os.PathLike | None = None) -> Path:
    """The folder of the tarballs: ``given``, else ``$TORCH_NDCG_LETOR``, else ``../shared/data/letor``."""
    return Path(given or os.environ.get(ENVIRONMENT_VARIABLE) or DEFAULT_ROOT)


def tarball(root: Path, dataset: str) -> Path:
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {tuple(DATASETS)}, got {dataset!r}")
    return root / DATASETS[dataset][0]


def unpacked(root: Path, dataset: str) -> Path:
    """The folder the dataset's tarball unpacks into (unpacked on the first call)."""
    archive = tarball(root, dataset)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive} not found; set {ENVIRONMENT_VARIABLE} to the folder of the LETOR tarballs")
    stat = archive.stat()
    target = Path(tempfile.gettempdir()) / "torch_ndcg_letor" / f"{archive.name}-{stat.st_size}-{int(stat.st_mtime)}"
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(dir=target.parent))
        with tarfile.open(archive) as tar:
            tar.extractall(partial, filter="data")
        try:
            partial.rename(target)
        except OSError:  # another process unpacked it meanwhile
            shutil.rmtree(partial, ignore_errors=True)
    return target


def fold_folder(root: Path, dataset: str, fold: int) -> Path:
    return unpacked(root, dataset) / DATASETS[dataset][1].format(k=fold)


def folds_of(dataset: str) -> tuple[int, ...]:
    return (1,) if dataset == "mslr" else FOLDS


def read_fold(root: Path, dataset: str, fold: int) -> dict[str, RankingDataset]:
    """``{"train", "vali", "test"}`` of one fold; for the MSLR sample, its two files without their
    last (possibly cut) query, and every fifth training query as validation."""
    folder = fold_folder(root, dataset, fold)
    if dataset != "mslr":
        return read_letor_fold(folder)
    train, test = (without_last_query(read_letor(folder / MSLR_FILES[s], num_features=136)) for s in ("train", "test"))
    queries = torch.arange(len(train))
    vali = queries % MSLR_VALIDATION_EVERY == 0
    return {"train": subset(train, queries[~vali]), "vali": subset(train, queries[vali]), "test": test}


def subset(ds: RankingDataset, queries: torch.Tensor) -> RankingDataset:
    """The queries ``queries`` (positions, ascending) of ``ds``, items in their order."""
    starts, lengths = ds.offsets[queries], ds.list_lengths[queries]
    items = torch.cat([torch.arange(int(s), int(s) + int(n)) for s, n in zip(starts, lengths)])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    return RankingDataset(ds.features[items], ds.relevance[items], offsets, [ds.qids[int(q)] for q in queries])


def without_last_query(ds: RankingDataset) -> RankingDataset:
    return subset(ds, torch.arange(len(ds) - 1))
