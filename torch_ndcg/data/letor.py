"""Read learning-to-rank files in the LETOR / SVMlight format into a :class:`RankingDataset`.

One line per item::

    <label> qid:<query id> <feature id>:<value> <feature id>:<value> ... # optional comment

as used by MSLR-WEB10K/30K, Yahoo! LTR, Istella and MQ2007/2008. Feature ids start at 1 and
may be sparse (a missing feature is 0). The lines of one query need not be adjacent: items
are grouped by query id, queries in order of first appearance, items in file order.
LightGBM and XGBoost keep the queries in a side file of query sizes instead (``groups=``).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import torch

from .batching import RankingDataset

_CHUNK_VALUES = 1 << 20  # floats per storage block (4 MiB); a block holds this many // width rows
# The widest feature matrix inferred from the ids alone: a stray id such as 10**8 must not make
# the reader allocate gigabytes for a file of a few lines. A given num_features has no such cap.
MAX_INFERRED_FEATURES = 1 << 16
SPLITS = ("train", "vali", "test")


class _DenseRows:
    """Row-major float32 storage that grows by blocks of about ``_CHUNK_VALUES`` floats.

    Parsed values go straight into dense float32 blocks, so memory holds one copy of the numbers
    (never the text, never a Python object per value). A new, larger feature id closes the
    current block and later blocks are that wide; older blocks are widened once, at the end, so
    memory stays proportional to the items read times the final width.
    """

    def __init__(self, width: int):
        self.width = width
        self.chunks: list[np.ndarray] = []
        self.filled = 0

    def append(self, columns: list[int], values: list[float]) -> None:
        needed = max(columns) + 1 if columns else 0
        if needed > self.width:
            self.width = needed
            self._close()
        if not self.chunks or self.filled == self.chunks[-1].shape[0]:
            rows = max(1, _CHUNK_VALUES // max(self.width, 1))
            self.chunks.append(np.zeros((rows, self.width), dtype=np.float32))
            self.filled = 0
        if columns:
            self.chunks[-1][self.filled, columns] = values
        self.filled += 1

    def _close(self) -> None:
        if self.chunks:
            self.chunks[-1] = self.chunks[-1][: self.filled]
            self.filled = self.chunks[-1].shape[0]

    def finish(self) -> np.ndarray:
        self._close()
        if not self.chunks:
            return np.zeros((0, self.width), dtype=np.float32)
        return np.concatenate([_widen(c, self.width) for c in self.chunks])


def _widen(block: np.ndarray, width: int) -> np.ndarray:
    return block if block.shape[1] == width else np.pad(block, ((0, 0), (0, width - block.shape[1])))


def _open(path: Path):
    # Only the part before '#' is parsed, so undecodable bytes in comments must not stop the read.
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_letor(
    path: str | os.PathLike,
    *,
    num_features: int | None = None,
    groups: str | os.PathLike | None = None,
) -> RankingDataset:
    """Read one LETOR / SVMlight file (plain or ``.gz``), streaming it line by line.

    Args:
        path: the file.
        num_features: feature count ``F``; ``None`` infers it as the largest feature id seen
            (at most ``MAX_INFERRED_FEATURES``; a larger id is an error naming its line, since
            the features are stored dense). A feature id above a given ``num_features`` is an error.
        groups: a LightGBM ``.query`` / XGBoost ``.group`` file: one query size per line, the
            queries' lines consecutive in ``path``. Lines then need no ``qid:`` (one, if present,
            is ignored: the sizes decide) and queries are named ``"0"``, ``"1"``, ….

    Returns:
        a :class:`RankingDataset` whose features are ``[items, F]`` float32, grouped by query
        (queries in order of first appearance, items in file order); its ``rows`` give each
        item's position among the file's item lines, so ``ds.in_file_order(values)`` returns
        per-item values one per line of the file.

    Raises:
        ValueError: naming the file and line of a malformed line (no ``qid:``, a bad label,
            a ``id:value`` pair that does not parse, a feature id < 1 or repeated, a
            non-finite value), when the file holds no item, or when the sizes in ``groups``
            do not add up to the file's item lines.

    Example:
        >>> ds = read_letor("MSLR-WEB10K/Fold1/train.txt")  # doctest: +SKIP
        >>> features, relevance, mask = next(ds.batches(32))  # doctest: +SKIP
        >>> ds = read_letor("rank.train", groups="rank.train.query")  # doctest: +SKIP
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
            label, qid, columns, values = _parse(tokens, num_features, groups is None, path, lineno)
            rows.append(columns, values)
            labels.append(label)
            line_numbers.append(lineno)
            if groups is None:
                query_codes.append(codes.setdefault(qid, len(codes)))
    if not labels:
        raise ValueError(f"{path}: no items found (every line is empty or a comment)")
    features = rows.finish()
    finite = np.isfinite(features).all(axis=1)
    if not finite.all():
        lineno = line_numbers[int(np.argmin(finite))]
        raise ValueError(f"{path}:{lineno}: feature values must be finite (found NaN or inf)")
    if groups is not None:
        counts = _read_sizes(Path(groups), len(labels), path)
        order = np.arange(len(labels))
        qids = [str(q) for q in range(len(counts))]
    else:
        # A stable sort groups each query's items and keeps their file order.
        order = np.argsort(np.asarray(query_codes), kind="stable")
        counts = np.bincount(np.asarray(query_codes), minlength=len(codes))
        qids = list(codes)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    return RankingDataset(
        torch.from_numpy(features[order]),
        torch.tensor(labels, dtype=torch.float32)[torch.from_numpy(order)],
        torch.from_numpy(offsets),
        qids,
        rows=torch.from_numpy(order),
    )


def _read_sizes(groups: Path, items: int, path: Path) -> np.ndarray:
    sizes = []
    with _open(groups) as lines:
        for lineno, line in enumerate(lines, start=1):
            text = line.strip()
            if not text:
                continue
            if not text.isdigit() or int(text) < 1:
                raise ValueError(f"{groups}:{lineno}: expected one query size (an int ≥ 1) per line, got {text!r}")
            sizes.append(int(text))
    if sum(sizes) != items:
        raise ValueError(f"{groups}: the query sizes add up to {sum(sizes)} items, but {path} holds {items} item lines")
    return np.asarray(sizes)


def _parse(
    tokens: list[str], num_features: int | None, need_qid: bool, path: Path, lineno: int
) -> tuple[float, str, list[int], list[float]]:
    where = f"{path}:{lineno}"
    try:
        label = float(tokens[0])
    except ValueError:
        raise ValueError(f"{where}: the label must be a number, got {tokens[0]!r}") from None
    if not label >= 0 or label == float("inf"):
        raise ValueError(f"{where}: the label must be a finite number ≥ 0, got {tokens[0]!r}")
    has_qid = len(tokens) > 1 and tokens[1].startswith("qid:")
    if need_qid and (not has_qid or len(tokens[1]) == 4):
        found = tokens[1] if len(tokens) > 1 else "end of line"
        raise ValueError(
            f"{where}: expected 'qid:<id>' after the label, got {found!r} "
            "(for a file without qid, give its LightGBM .query / XGBoost .group file of query sizes as groups=)"
        )
    columns: list[int] = []
    values: list[float] = []
    for token in tokens[2 if has_qid else 1 :]:
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
        if num_features is None and feature_id > MAX_INFERRED_FEATURES:
            raise ValueError(
                f"{where}: feature id {feature_id} is above {MAX_INFERRED_FEATURES}, the widest feature matrix "
                "inferred from the ids (features are stored dense: items × largest id floats); "
                "pass num_features= if the data really has that many features"
            )
        columns.append(feature_id - 1)
        values.append(number)
    if len(set(columns)) != len(columns):
        raise ValueError(f"{where}: a feature id appears twice on one line")
    return label, tokens[1][4:] if has_qid else "", columns, values


# Names of each split's file, in order of preference: a LETOR fold, then LightGBM / XGBoost
# layouts (``<name>.train`` with ``<name>.train.query`` or ``.group``).
_SPLIT_NAMES = {
    "train": ("train.txt", "train.txt.gz", "*.train.txt", "*.train"),
    "vali": ("vali.txt", "vali.txt.gz", "*.vali.txt", "*.valid.txt", "*.vali", "*.valid"),
    "test": ("test.txt", "test.txt.gz", "*.test.txt", "*.test"),
}
_GROUP_SUFFIXES = (".query", ".group")


def find_fold_files(directory: str | os.PathLike) -> dict[str, tuple[Path, Path | None]]:
    """``{split: (file, group file or None)}`` for the splits found in ``directory``.

    A split is ``<split>.txt`` or ``<split>.txt.gz`` (LETOR: MSLR-WEB10K/30K, Istella, MQ2007/2008),
    ``<name>.<split>.txt`` (Yahoo!'s ``set1.train.txt``, ``set1.valid.txt``), or ``<name>.<split>`` with an optional ``<name>.<split>.query`` (LightGBM) or
    ``.group`` (XGBoost) file of query sizes. ``vali`` may be absent; ``train`` and ``test`` may not.
    """
    directory = Path(directory)
    if not directory.exists():
        raise ValueError(f"{directory} does not exist")
    if not directory.is_dir():
        raise ValueError(f"{directory} is a file; give the folder that holds the train and test files")
    found: dict[str, tuple[Path, Path | None]] = {}
    for split, patterns in _SPLIT_NAMES.items():
        for pattern in patterns:
            matches = sorted(p for p in directory.glob(pattern) if p.is_file())
            if len(matches) > 1:
                raise ValueError(f"{directory}: several {split} files ({', '.join(p.name for p in matches)}); keep one")
            if matches:
                file = matches[0]
                groups = [file.with_name(file.name + s) for s in _GROUP_SUFFIXES]
                found[split] = (file, next((g for g in groups if g.is_file()), None))
                break
    missing = [s for s in ("train", "test") if s not in found]
    if missing:
        raise ValueError(
            f"{directory} must hold a train and a test file (train.txt[.gz], vali.txt[.gz], test.txt[.gz], "
            f"or LightGBM / XGBoost's <name>.train, <name>.test with .query / .group files); missing: {', '.join(missing)}"
        )
    return found


def read_letor_fold(directory: str | os.PathLike, *, num_features: int | None = None) -> dict[str, RankingDataset]:
    """Read the ``train``, ``vali`` (when present) and ``test`` splits of a fold directory.

    The files are found by :func:`find_fold_files` (e.g. ``MSLR-WEB10K/Fold1`` or LightGBM's
    ``examples/lambdarank``). The splits are padded to one feature count (the largest id seen
    in any of them when ``num_features`` is ``None``), so a model trained on one split accepts
    the others.
    """
    files = find_fold_files(directory)
    splits = {s: read_letor(file, num_features=num_features, groups=groups) for s, (file, groups) in files.items()}
    width = max(ds.num_features for ds in splits.values())
    return {name: ds.with_num_features(width) for name, ds in splits.items()}
