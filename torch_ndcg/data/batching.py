"""Queries of different lengths, stored flat, served as padded ``[B, N, F]`` batches with a mask.

A :class:`RankingDataset` keeps every item of every query in one ``[items, F]`` tensor plus
query offsets, so a million-document LETOR fold costs one allocation, not one per query.
Batches pad at the tail of each list; ``mask`` is ``True`` for real items, which is the layout
every metric and loss of :mod:`torch_ndcg` takes.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import torch
from torch import Tensor


# The functional form keeps the field types as objects (this module's annotations are strings),
# so documentation tools can resolve them.
Batch = NamedTuple("Batch", [("features", Tensor), ("relevance", Tensor), ("mask", Tensor)])
Batch.__doc__ = """``features [B, N, F]`` float32, ``relevance [B, N]`` float32, ``mask [B, N]`` bool."""


def pad_batch(
    queries: Sequence[tuple[Tensor, Tensor]],
    *,
    max_items: int | None = None,
    generator: torch.Generator | None = None,
) -> Batch:
    """Stack ``(features [n_i, F], relevance [n_i])`` queries into one padded :class:`Batch`.

    Usable as a ``torch.utils.data.DataLoader`` ``collate_fn``. With ``max_items``, a longer
    query keeps a random subset of ``max_items`` items (in their original order), which bounds
    the ``O(N²)`` cost of sorting-based losses on long LETOR lists; use it for training only,
    since evaluating a subset changes the metric.
    """
    if len(queries) == 0:
        raise ValueError("queries is empty: pad_batch needs at least one query")
    if max_items is not None and (isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1):
        raise ValueError(f"max_items must be an int ≥ 1 or None, got {max_items!r}")
    for row, (x, y) in enumerate(queries):
        _check_query("queries", row, x, y)
    kept = [_subsample(x, y, max_items, generator) for x, y in queries]
    width = max(y.shape[0] for _, y in kept)
    num_features = kept[0][0].shape[1]
    features = torch.zeros(len(kept), width, num_features, dtype=torch.float32)
    relevance = torch.zeros(len(kept), width, dtype=torch.float32)
    mask = torch.zeros(len(kept), width, dtype=torch.bool)
    for row, (x, y) in enumerate(kept):
        if x.shape[1] != num_features:
            raise ValueError(f"queries[{row}] has {x.shape[1]} features, queries[0] has {num_features}")
        n = y.shape[0]
        features[row, :n] = x
        relevance[row, :n] = y
        mask[row, :n] = True
    return Batch(features, relevance, mask)


def _check_query(name: str, row: int, x: Tensor, y: Tensor) -> None:
    """One ``(features [n, F], relevance [n])`` pair of a list of queries, checked before any copy."""
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError(f"{name}[{row}] must be a pair of tensors (features, relevance), got {type(x).__name__}, {type(y).__name__}")
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(
            f"{name}[{row}] must be features [n, F] and relevance [n], got {tuple(x.shape)} and {tuple(y.shape)}"
        )
    if y.shape[0] == 0:
        raise ValueError(f"{name}[{row}] has no items: every query needs at least one")
    if y.is_floating_point() and not bool(torch.isfinite(y).all()):
        raise ValueError(f"{name}[{row}] has NaN or infinite relevance labels")


def _subsample(
    x: Tensor, y: Tensor, max_items: int | None, generator: torch.Generator | None
) -> tuple[Tensor, Tensor]:
    if max_items is None or y.shape[0] <= max_items:
        return x, y
    keep = torch.randperm(y.shape[0], generator=generator)[:max_items].sort().values
    return x[keep], y[keep]


class RankingDataset:
    """A set of queries, each a list of items with features and a graded relevance label.

    Args:
        features: ``[items, F]`` float features of all items, query after query.
        relevance: ``[items]`` labels ≥ 0.
        offsets: ``[Q + 1]`` increasing item offsets; query ``q`` is ``offsets[q]:offsets[q+1]``
            and must hold at least one item.
        qids: optional query ids (default ``"0"``, ``"1"``, …).
        rows: optional ``[items]`` position of each item in its source file (counting item lines
            only), set by :func:`~torch_ndcg.data.read_letor`, whose grouping by query reorders
            a file with interleaved queries; :meth:`in_file_order` undoes it.

    Example:
        >>> ds = RankingDataset.from_queries([(torch.randn(3, 2), torch.tensor([0., 2., 1.])),
        ...                                   (torch.randn(5, 2), torch.zeros(5))])
        >>> features, relevance, mask = next(ds.batches(2))
        >>> features.shape, mask.sum(dim=1).tolist()
        (torch.Size([2, 5, 2]), [3, 5])
    """

    def __init__(
        self,
        features: Tensor,
        relevance: Tensor,
        offsets: Tensor,
        qids: Sequence[str] | None = None,
        *,
        rows: Tensor | None = None,
    ):
        if features.ndim != 2 or relevance.ndim != 1 or features.shape[0] != relevance.shape[0]:
            raise ValueError(
                "features must be [items, F] and relevance [items], got "
                f"{tuple(features.shape)} and {tuple(relevance.shape)}"
            )
        offsets = torch.as_tensor(offsets, dtype=torch.int64)
        if offsets.ndim != 1 or offsets.numel() < 2 or int(offsets[0]) != 0 or int(offsets[-1]) != features.shape[0]:
            raise ValueError(f"offsets must run from 0 to {features.shape[0]} (the item count), got {offsets.tolist()}")
        if bool((offsets[1:] <= offsets[:-1]).any()):
            raise ValueError("offsets must be strictly increasing: every query needs at least one item")
        if not bool(torch.isfinite(relevance).all()) or bool((relevance < 0).any()):
            raise ValueError("relevance labels must be finite and ≥ 0 (no NaN, no inf)")
        self.features = features.to(torch.float32)
        self.relevance = relevance.to(torch.float32)
        self.offsets = offsets
        self._bounds = offsets.tolist()  # Python ints: slicing per query stays cheap.
        self.qids = [str(q) for q in qids] if qids is not None else [str(q) for q in range(len(self))]
        if len(self.qids) != len(self):
            raise ValueError(f"got {len(self.qids)} qids for {len(self)} queries")
        if rows is not None:
            rows = torch.as_tensor(rows, dtype=torch.int64)
            if rows.shape != (features.shape[0],):
                raise ValueError(f"rows must be [items] = [{features.shape[0]}], got {tuple(rows.shape)}")
        self.rows = rows

    @classmethod
    def from_queries(cls, queries: Sequence[tuple[Tensor, Tensor]], qids: Sequence[str] | None = None) -> RankingDataset:
        """Build from ``(features [n_i, F], relevance [n_i])`` pairs."""
        if len(queries) == 0:
            raise ValueError("queries is empty: a RankingDataset needs at least one query")
        queries = [(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)) for x, y in queries]
        for row, (x, y) in enumerate(queries):
            _check_query("queries", row, x, y)
            if x.shape[1] != queries[0][0].shape[1]:
                raise ValueError(f"queries[{row}] has {x.shape[1]} features, queries[0] has {queries[0][0].shape[1]}")
        lengths = torch.tensor([y.shape[0] for _, y in queries])
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
        features = torch.cat([x for x, _ in queries])
        relevance = torch.cat([y for _, y in queries])
        return cls(features, relevance, offsets, qids)

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        """Query ``index`` as ``(features [n, F], relevance [n])``; negative indices count from the end."""
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"query index {index} is out of range for {len(self)} queries")
        index %= len(self)
        start, stop = self._bounds[index], self._bounds[index + 1]
        return self.features[start:stop], self.relevance[start:stop]

    @property
    def num_features(self) -> int:
        return self.features.shape[1]

    @property
    def list_lengths(self) -> Tensor:
        return self.offsets[1:] - self.offsets[:-1]

    def __repr__(self) -> str:
        lengths = self.list_lengths
        return (
            f"RankingDataset({len(self)} queries, {self.features.shape[0]} items, {self.num_features} features, "
            f"list length {int(lengths.min())}–{int(lengths.max())})"
        )

    def feature_stats(self) -> tuple[Tensor, Tensor]:
        """Per-feature mean and standard deviation over all items (std 0 is reported as 1)."""
        mean = self.features.mean(dim=0)
        std = self.features.std(dim=0, unbiased=False)
        return mean, torch.where(std > 0, std, torch.ones_like(std))

    def standardized(self, mean: Tensor, std: Tensor) -> RankingDataset:
        """A copy with features ``(x - mean) / std``; fit ``mean, std`` on the training split only."""
        return RankingDataset((self.features - mean) / std, self.relevance, self.offsets, self.qids, rows=self.rows)

    def with_num_features(self, num_features: int) -> RankingDataset:
        """A copy padded with zero features up to ``num_features`` columns (sparse files may disagree)."""
        missing = num_features - self.num_features
        if missing < 0:
            raise ValueError(f"num_features={num_features} is below the {self.num_features} features present")
        if missing == 0:
            return self
        zeros = self.features.new_zeros(self.features.shape[0], missing)
        return RankingDataset(torch.cat([self.features, zeros], dim=1), self.relevance, self.offsets, self.qids, rows=self.rows)

    def select(self, queries: Sequence[int]) -> RankingDataset:
        """A new dataset of the given queries, in the given order (e.g. to split off a validation set)."""
        chosen = [operator.index(q) for q in queries]
        if not chosen or any(not 0 <= q < len(self) for q in chosen):
            raise ValueError(f"queries must be a non-empty list of query indices in [0, {len(self)}), got {list(queries)[:10]}")
        items = torch.cat([torch.arange(self._bounds[q], self._bounds[q + 1]) for q in chosen])
        lengths = self.list_lengths[chosen]
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
        rows = None if self.rows is None else self.rows[items]
        return RankingDataset(self.features[items], self.relevance[items], offsets, [self.qids[q] for q in chosen], rows=rows)

    def in_file_order(self, values: Tensor) -> Tensor:
        """Per-item ``values [items]`` (in this dataset's query-grouped order) put back in file order.

        Item ``i`` of the result belongs to the ``i``-th item line of the source file, which is
        how LightGBM, XGBoost and most evaluators expect one score per line.
        """
        if self.rows is None:
            raise ValueError("this dataset was not read from a file (rows is None), so it has no file order")
        if values.shape != self.rows.shape:
            raise ValueError(f"values must be [items] = [{self.rows.shape[0]}], got {tuple(values.shape)}")
        if not torch.equal(self.rows.sort().values, torch.arange(len(self.rows))):
            raise ValueError("rows do not cover a whole file (a subset of its queries?), so there is no file order")
        ordered = torch.empty_like(values)
        ordered[self.rows] = values
        return ordered

    def batches(
        self,
        batch_size: int,
        *,
        shuffle: bool = False,
        generator: torch.Generator | None = None,
        max_items: int | None = None,
    ) -> Iterator[Batch]:
        """Yield padded batches of ``batch_size`` queries (the last one may be smaller)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int ≥ 1, got {batch_size!r}")
        order = torch.randperm(len(self), generator=generator).tolist() if shuffle else range(len(self))
        for start in range(0, len(self), batch_size):
            chosen = [self[i] for i in order[start : start + batch_size]]
            yield pad_batch(chosen, max_items=max_items, generator=generator)
