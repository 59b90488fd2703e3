"""Read learning-to-rank files in the LETOR / SVMlight format into a :class:`RankingDataset`.

One line per item::

    <label> qid:<query id> <feature id>:<value> <feature id>:<value> ... # optional comment

as used by MSLR-WEB10K/30K, Yahoo! LTR, Istella and MQ2007/2008. Feature ids start at 1 and
may be sparse (a missing feature is 0). The lines of one query need not be adjacent: items
are grouped by query id, queries in order of first appearance, items in file order.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import torch

from .batching import RankingDataset

_CHUNK_ROWS = 4096
SPLITS = ("train", "vali", "test")


class _DenseRows:
    """Row-major float32 storage that grows by fixed chunks and widens when a new feature id appears.

    Parsed values go straight into dense float32 blocks, so memory holds one copy of the numbers
    (never the text, never a Python object per value).
    """

    def __init__(self, width: int):
        self.width = width
        self.chunks: list[np.ndarray] = []
        self.filled = _CHUNK_ROWS  # forces a fresh chunk on the first row

    def append(self, columns: list[int], values: list[float]) -> None:
        if self.filled == _CHUNK_ROWS:
            self.chunks.append(np.zeros((_CHUNK_ROWS, self.width), dtype=np.float32))
            self.filled = 0
        if columns:
            needed = max(columns) + 1
            if needed > self.width:
                self.width = needed
                self.chunks[-1] = _widen(self.chunks[-1], needed)
            self.chunks[-1][self.filled, columns] = values
        self.filled += 1

    def finish(self) -> np.ndarray:
        if not self.chunks:
            return np.zeros((0, self.width), dtype=np.float32)
        self.chunks[-1] = self.chunks[-1][: self.filled]
        return np.concatenate([_widen(c, self.width) for c in self.chunks])


def _widen(block: np.ndarray, width: int) -> np.ndarray:
    return block if block.shape[1] == width else np.pad(block, ((0, 0), (0, width - block.shape[1])))


def _open(path: Path):
    # Only the part before '#' is parsed, so undecodable bytes in comments must not stop the read.
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_letor(path: str | os.PathLike, *, num_features: int | None = None) -> RankingDataset:
    """Read one LETOR / SVMlight file (plain or ``.gz``), streaming it line by line.

    Args:
        path: the file.
        num_features: feature count ``F``; ``None`` infers it as the largest feature id seen.
            A feature id above a given ``num_features`` is an error.

    Returns:
        a :class:`RankingDataset` whose features are ``[items, F]`` float32.

    Raises:
        ValueError: naming the file and line of a malformed line (no ``qid:``, a bad label,
            a ``id:value`` pair that does not parse, a feature id < 1 or repeated, a
            non-finite value), or when the file holds no item.

    Example:
        >>> ds = read_letor("MSLR-WEB10K/Fold1/train.txt")  # doctest: +SKIP
        >>> features, relevance, mask = next(ds.batches(32))  # doctest: +SKIP
    """
    if num_features is not None and (isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1):
        raise ValueError(f"num_features must be an int ≥ 1 or None, got {num_features!r}")
    path = Path(path)
    rows = _DenseRows(num_features or 0)
    labels: list[float] = []
    line_numbers: list[int] = []
    query_codes: list[int] = []
    codes: dict[str, int] = {}
    with _open(path) as lines:
        for lineno, line in enumerate(lines, start=1):
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            label, qid, columns, values = _parse(tokens, num_features, path, lineno)
            rows.append(columns, values)
            labels.append(label)
            line_numbers.append(lineno)
            query_codes.append(codes.setdefault(qid, len(codes)))
    if not labels:
        raise ValueError(f"{path}: no items found (every line is empty or a comment)")
    features = rows.finish()
    finite = np.isfinite(features).all(axis=1)
    if not finite.all():
        lineno = line_numbers[int(np.argmin(finite))]
        raise ValueError(f"{path}:{lineno}: feature values must be finite (found NaN or inf)")
    # A stable sort groups each query's items and keeps their file order.
    order = np.argsort(np.asarray(query_codes), kind="stable")
    counts = np.bincount(np.asarray(query_codes), minlength=len(codes))
    offsets = np.concatenate([[0], np.cumsum(counts)])
    return RankingDataset(
        torch.from_numpy(features[order]),
        torch.tensor(labels, dtype=torch.float32)[torch.from_numpy(order)],
        torch.from_numpy(offsets),
        list(codes),
    )


def _parse(tokens: list[str], num_features: int | None, path: Path, lineno: int) -> tuple[float, str, list[int], list[float]]:
    where = f"{path}:{lineno}"
    try:
        label = float(tokens[0])
    except ValueError:
        raise ValueError(f"{where}: the label must be a number, got {tokens[0]!r}") from None
    if not label >= 0 or label == float("inf"):
        raise ValueError(f"{where}: the label must be a finite number ≥ 0, got {tokens[0]!r}")
    if len(tokens) < 2 or not tokens[1].startswith("qid:") or len(tokens[1]) == 4:
        found = tokens[1] if len(tokens) > 1 else "end of line"
        raise ValueError(f"{where}: expected 'qid:<id>' after the label, got {found!r}")
    columns: list[int] = []
    values: list[float] = []
    for token in tokens[2:]:
        key, sep, value = token.partition(":")
        try:
            if not sep:
                raise ValueError
            feature_id = int(key)
            number = float(value)
        except ValueError:
            raise ValueError(f"{where}: expected '<feature id>:<value>', got {token!r}") from None
        if feature_id < 1 or (num_features is not None and feature_id > num_features):
            bound = f"between 1 and num_features={num_features}" if num_features is not None else "≥ 1"
            raise ValueError(f"{where}: feature id must be {bound}, got {feature_id}")
        columns.append(feature_id - 1)
        values.append(number)
    if len(set(columns)) != len(columns):
        raise ValueError(f"{where}: a feature id appears twice on one line")
    return label, tokens[1][4:], columns, values


def read_letor_fold(directory: str | os.PathLike, *, num_features: int | None = None) -> dict[str, RankingDataset]:
    """Read ``train.txt``, ``vali.txt`` and ``test.txt`` of a fold (e.g. ``MSLR-WEB10K/Fold1``).

    The three splits are padded to one feature count (the largest id seen in any of them when
    ``num_features`` is ``None``), so a model trained on one split accepts the others.
    """
    directory = Path(directory)
    missing = [s for s in SPLITS if not (directory / f"{s}.txt").is_file()]
    if missing:
        raise ValueError(f"{directory} must contain train.txt, vali.txt and test.txt; missing: {', '.join(missing)}")
    splits = {s: read_letor(directory / f"{s}.txt", num_features=num_features) for s in SPLITS}
    width = max(ds.num_features for ds in splits.values())
    return {name: ds.with_num_features(width) for name, ds in splits.items()}
