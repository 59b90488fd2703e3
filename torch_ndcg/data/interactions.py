"""User–item interactions split by time per user, served as full-catalogue rows one batch at a time.

A recommender scores every item of the catalogue for a user and is judged on the items the user
interacted with later. :class:`Interactions` holds the interaction log (user, item, rating,
time) with ids remapped to ``0..n-1``; :meth:`Interactions.split` cuts each user's history by
time into train / validation / test; :class:`CatalogueSplits` keeps the three parts as sparse
per-user lists (memory proportional to the interactions) and builds dense ``[B, n_items]``
relevance rows and already-seen masks only for the users of one batch.

>>> import numpy as np
>>> log = Interactions.from_arrays(users=[7, 7, 7, 9, 9, 9], items=[1, 2, 3, 2, 3, 4], timestamps=[1, 2, 3, 1, 2, 3])
>>> splits = log.split(test=1, validation=1)
>>> users, relevance, seen = next(splits.batches("test", 8))
>>> relevance.tolist(), seen.tolist()  # item ids 1..4 became columns 0..3
([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]], [[True, True, False, False], [False, True, True, False]])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

SPLITS = ("train", "validation", "test")


def _check_held_out(name: str, value: int | float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be an int ≥ 0 (interactions per user) or a float in [0, 1) (a share), got {value!r}")
    if isinstance(value, int) and value < 0:
        raise ValueError(f"{name} as a count must be ≥ 0, got {value}")
    if isinstance(value, float) and not 0.0 <= value < 1.0:
        raise ValueError(f"{name} as a share must be in [0, 1), got {value}")


def _held_out_counts(value: int | float, lengths: np.ndarray) -> np.ndarray:
    if isinstance(value, int):
        return np.full_like(lengths, value)
    return np.floor(value * lengths + 0.5).astype(lengths.dtype)  # round half up: 0.1 of 25 is 3


def _id_order(ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """For ids given in first-appearance order: the sorted position of each (numeric order when
    every id is an integer, else text order) and the ids in that order."""
    try:
        keys: list[object] = [int(i) for i in ids]
    except ValueError:
        keys = list(ids)
    order = sorted(range(len(ids)), key=keys.__getitem__)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    return rank, [ids[i] for i in order]


@dataclass(frozen=True)
class Interactions:
    """An interaction log with users and items remapped to ``0..n_users-1`` and ``0..n_items-1``.

    Codes follow the order of the original ids (numeric order when every id is an integer, else
    text order), so the same file always gives the same columns. ``user_ids[c]`` and
    ``item_ids[c]`` are the original ids (as text) of code ``c``.

    Attributes:
        users, items: ``[m]`` int64 codes, one per interaction, in file order.
        ratings: ``[m]`` float32 (1.0 where the source has no rating).
        timestamps: ``[m]`` float64 (the position in the file where the source has no time).
        user_ids, item_ids: the original id of each code.
    """

    users: np.ndarray
    items: np.ndarray
    ratings: np.ndarray
    timestamps: np.ndarray
    user_ids: list[str]
    item_ids: list[str]

    @classmethod
    def from_arrays(
        cls,
        *,
        users: Sequence[object] | np.ndarray,
        items: Sequence[object] | np.ndarray,
        ratings: Sequence[float] | np.ndarray | None = None,
        timestamps: Sequence[float] | np.ndarray | None = None,
    ) -> Interactions:
        """An interaction log from per-interaction user and item ids (any hashable ids), ratings
        (default 1.0) and times (default: the position in the arrays).

        Ids are kept as text (``str(id)``); two different ids that read the same as text, such
        as ``1`` and ``"1"``, are refused, naming them, rather than merged into one user or item."""
        m = len(users)
        if len(items) != m or m == 0:
            raise ValueError(f"users and items must be non-empty and of one length, got {m} and {len(items)}")
        ratings = np.ones(m, np.float32) if ratings is None else np.asarray(ratings, dtype=np.float32)
        timestamps = np.arange(m, dtype=np.float64) if timestamps is None else np.asarray(timestamps, dtype=np.float64)
        for name, values in (("ratings", ratings), ("timestamps", timestamps)):
            if values.shape != (m,):
                raise ValueError(f"{name} must have one value per interaction ({m}), got shape {values.shape}")
            if not np.isfinite(values).all():
                raise ValueError(f"{name} must be finite")
        user_codes, user_ids = _codes("users", users)
        item_codes, item_ids = _codes("items", items)
        return cls.from_codes(users=user_codes, items=item_codes, ratings=ratings, timestamps=timestamps,
                              user_ids=user_ids, item_ids=item_ids)

    @classmethod
    def from_codes(
        cls,
        *,
        users: np.ndarray,
        items: np.ndarray,
        ratings: np.ndarray,
        timestamps: np.ndarray,
        user_ids: list[str],
        item_ids: list[str],
    ) -> Interactions:
        """The log from codes numbered in first-appearance order (``user_ids[c]`` is code ``c``'s
        id), renumbered so that codes follow the order of the ids."""
        user_rank, user_ids = _id_order(user_ids)
        item_rank, item_ids = _id_order(item_ids)
        return cls(user_rank[users], item_rank[items], ratings, timestamps, user_ids, item_ids)

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    def __len__(self) -> int:
        return len(self.users)

    def __repr__(self) -> str:
        return f"Interactions({len(self)} interactions, {self.n_users} users, {self.n_items} items)"

    def split(self, *, test: int | float = 0.1, validation: int | float = 0.1) -> CatalogueSplits:
        """Split each user's history by time: the latest interactions to test, the ones just
        before them to validation, the rest to train.

        The rule, per user with ``n`` interactions ordered by time (ties keep file order):

        * ``test`` and ``validation`` are counts (an int: leave-last-out is ``test=1,
          validation=1``) or shares of ``n`` (a float in [0, 1), rounded half up: 0.1 of 25 is 3);
        * the last ``n_test`` interactions go to test, the ``n_validation`` before them to
          validation, the rest to train;
        * a user with too few interactions to keep at least one in train keeps all of them in
          train (and is then evaluated in neither held-out split);
        * an item the user interacted with more than once counts once, at its latest time.

        No user's future leaks into their own training history; different users' histories
        overlap in time, as in the usual per-user protocol.
        """
        _check_held_out("test", test)
        _check_held_out("validation", validation)
        if isinstance(test, float) and isinstance(validation, float) and test + validation >= 1.0:
            raise ValueError(f"test + validation shares must be < 1, got {test} + {validation}")
        # Latest interaction per (user, item): sort by user, time, file order, keep each pair's last.
        order = np.lexsort((np.arange(len(self)), self.timestamps, self.users))
        pair = self.users[order] * self.n_items + self.items[order]
        _, last_from_end = np.unique(pair[::-1], return_index=True)
        keep = np.sort(len(order) - 1 - last_from_end)
        order = order[keep]
        users = self.users[order]
        lengths = np.bincount(users, minlength=self.n_users)
        n_test = _held_out_counts(test, lengths)
        n_validation = _held_out_counts(validation, lengths)
        too_few = n_test + n_validation >= lengths
        n_test[too_few] = 0
        n_validation[too_few] = 0
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        # Position counted back from the user's latest interaction: 0 is the latest.
        from_end = (starts + lengths)[users] - 1 - np.arange(len(users))
        part = np.where(from_end < n_test[users], 2, np.where(from_end < (n_test + n_validation)[users], 1, 0))
        parts = {}
        for code, name in enumerate(SPLITS):
            chosen = order[part == code]
            parts[name] = _UserLists.build(self.users[chosen], self.items[chosen], self.ratings[chosen], self.n_users)
        return CatalogueSplits(parts, self.n_items)


@dataclass(frozen=True)
class _UserLists:
    """One split as compressed sparse rows: user ``u``'s items are ``items[indptr[u]:indptr[u+1]]``."""

    indptr: Tensor  # [n_users + 1] int64
    items: Tensor  # [m] int64
    ratings: Tensor  # [m] float32

    @classmethod
    def build(cls, users: np.ndarray, items: np.ndarray, ratings: np.ndarray, n_users: int) -> _UserLists:
        order = np.argsort(users, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(users, minlength=n_users))])
        return cls(torch.from_numpy(indptr.astype(np.int64)), torch.from_numpy(items[order].astype(np.int64)),
                   torch.from_numpy(ratings[order].astype(np.float32)))

    def lengths(self) -> Tensor:
        return self.indptr[1:] - self.indptr[:-1]

    def scatter(self, users: Tensor, rows: Tensor, values: str) -> None:
        """Write the batch's items into ``rows [B, n_items]``: 1, or the rating (``values="rating"``)."""
        starts, lengths = self.indptr[users], self.lengths()[users]
        row = torch.repeat_interleave(torch.arange(len(users)), lengths)
        # Each entry's index into items: its row's start plus its offset within the row.
        offsets = torch.arange(len(row)) - torch.repeat_interleave(lengths.cumsum(0) - lengths, lengths)
        index = torch.repeat_interleave(starts, lengths) + offsets
        cols = self.items[index]
        if values == "rating":
            rows[row, cols] = self.ratings[index].to(rows.dtype)
        else:
            rows[row, cols] = 1


class CatalogueSplits:
    """Train, validation and test interactions of every user, as full-catalogue rows on demand.

    Relevance rows are dense ``[B, n_items]`` and built per batch only; the splits themselves are
    sparse (memory proportional to the interactions). For the held-out splits, the already-seen
    mask marks the items of the earlier splits (train for validation; train and validation for
    test), which a recommender does not recommend again and a fair evaluation leaves out.

    Attributes:
        n_users, n_items: the catalogue's size (every user and item of the log, in every split).
    """

    def __init__(self, parts: dict[str, _UserLists], n_items: int):
        self._parts = parts
        self.n_users = len(parts["train"].indptr) - 1
        self.n_items = n_items

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name} {len(self._parts[name].items)}" for name in SPLITS)
        return f"CatalogueSplits({self.n_users} users, {self.n_items} items; interactions: {sizes})"

    def _part(self, split: str) -> _UserLists:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return self._parts[split]

    def interactions(self, split: str) -> int:
        """How many (user, item) interactions ``split`` holds."""
        return len(self._part(split).items)

    def users(self, split: str) -> Tensor:
        """The user codes with at least one interaction in ``split``, ascending (``[U]`` int64)."""
        return torch.nonzero(self._part(split).lengths() > 0).flatten()

    def item_counts(self, split: str = "train") -> Tensor:
        """``[n_items]`` int64: how many users interacted with each item in ``split`` (popularity)."""
        return torch.bincount(self._part(split).items, minlength=self.n_items)

    def relevance(self, split: str, users: Tensor, *, values: str = "binary") -> Tensor:
        """``[B, n_items]`` float32 rows of ``users``' interactions in ``split``.

        ``values="binary"``: 1 for an interaction, 0 otherwise (implicit feedback);
        ``values="rating"``: the rating (graded relevance), 0 where there is none.
        """
        if values not in ("binary", "rating"):
            raise ValueError(f"values must be 'binary' or 'rating', got {values!r}")
        users = self._checked_users(users)
        rows = torch.zeros(len(users), self.n_items)
        self._part(split).scatter(users, rows, values)
        return rows

    def seen(self, split: str, users: Tensor) -> Tensor:
        """``[B, n_items]`` bool: the items ``users`` had before ``split`` (none before train)."""
        self._part(split)  # checks the name
        users = self._checked_users(users)
        rows = torch.zeros(len(users), self.n_items, dtype=torch.bool)
        for earlier in SPLITS[: SPLITS.index(split)]:
            self._parts[earlier].scatter(users, rows, "binary")
        return rows

    def batches(
        self,
        split: str,
        batch_size: int,
        *,
        values: str = "binary",
        shuffle: bool = False,
        generator: torch.Generator | None = None,
    ) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
        """Yield ``(users [B], relevance [B, n_items], seen [B, n_items])`` over the users with at
        least one interaction in ``split`` (:meth:`relevance` and :meth:`seen` of each batch)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int ≥ 1, got {batch_size!r}")
        users = self.users(split)
        if shuffle:
            users = users[torch.randperm(len(users), generator=generator)]
        for start in range(0, len(users), batch_size):
            chosen = users[start : start + batch_size]
            yield chosen, self.relevance(split, chosen, values=values), self.seen(split, chosen)

    def _checked_users(self, users: Tensor | Sequence[int]) -> Tensor:
        users = torch.as_tensor(users)
        if users.dim() != 1 or users.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"users must be a 1-D integer tensor of user codes, got {users.dtype} {tuple(users.shape)}")
        if len(users) and not (0 <= int(users.min()) and int(users.max()) < self.n_users):
            raise ValueError(f"user codes must be in [0, {self.n_users}), got {int(users.min())}..{int(users.max())}")
        return users.long()


def _codes(name: str, ids: Sequence[object] | np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per-interaction codes in first-appearance order and the text of each code's id; two unequal
    ids with one text (``1`` and ``"1"``) are refused, naming them."""
    codes: dict[str, int] = {}
    originals: dict[str, object] = {}
    out = np.empty(len(ids), dtype=np.int64)
    for position, value in enumerate(ids):
        text = str(value)
        code = codes.setdefault(text, len(codes))
        first = originals.setdefault(text, value)
        # int 1 and numpy's int64(1) are one id in two types; "1" and 1 are two ids.
        if type(first) is not type(value) and first != value:
            raise ValueError(f"{name} holds the ids {first!r} and {value!r}, which read the same as text ({text!r}): "
                             "give every id in one type")
        out[position] = code
    return out, list(codes)

