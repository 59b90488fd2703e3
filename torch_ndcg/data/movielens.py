"""Read MovieLens-style interaction files (ml-100k ``u.data``, ml-latest ``ratings.csv``, RecBole
``.inter``) into an :class:`~torch_ndcg.data.interactions.Interactions` log.

The three layouts, one interaction per line:

* ``"udata"``: ml-100k's ``u.data``, no header, ``user item rating timestamp`` separated by tabs
  (or any whitespace);
* ``"csv"``: ml-latest / ml-25m ``ratings.csv``, a header line naming ``userId,movieId`` and,
  optionally, ``rating`` and ``timestamp``, in any order;
* ``"inter"``: RecBole's atomic files, tab-separated, a header of typed fields such as
  ``user_id:token item_id:token rating:float timestamp:float``; ``user_id`` and ``item_id`` are
  required, ``rating`` and ``timestamp`` optional, other fields are ignored.

A missing rating is 1.0 (implicit feedback); a missing timestamp is the line's position in the
file, so a split "by time" then follows file order. The data sets themselves are not shipped:
GroupLens's terms apply (https://grouplens.org/datasets/movielens/).
"""

from __future__ import annotations

import codecs
import math
import os
from array import array
from pathlib import Path

import numpy as np

from .interactions import Interactions

FORMATS = ("udata", "csv", "inter")
# The columns each layout names in its header: user, item, rating, timestamp.
_COLUMNS = {"csv": ("userId", "movieId", "rating", "timestamp"), "inter": ("user_id", "item_id", "rating", "timestamp")}


def _guess_format(path: Path) -> str:
    if path.name.endswith(".inter"):
        return "inter"
    if path.name.endswith(".csv"):
        return "csv"
    return "udata"


def _header_columns(fmt: str, line: str, path: Path) -> tuple[str | None, list[int | None], int]:
    """The separator, the column of user, item, rating and timestamp (``None`` if absent), and the
    number of fields every line must have, from the header line."""
    separator = "," if fmt == "csv" else "\t"
    fields = [f.strip() for f in line.rstrip("\r\n").split(separator)]
    names = [f.split(":", 1)[0] for f in fields] if fmt == "inter" else fields
    wanted = _COLUMNS[fmt]
    columns = [names.index(name) if name in names else None for name in wanted]
    missing = [name for name, column in zip(wanted[:2], columns[:2]) if column is None]
    if missing:
        raise ValueError(f"{path}:1: the header must name the columns {wanted[0]!r} and {wanted[1]!r} "
                         f"(missing {', '.join(map(repr, missing))}), got {line.strip()!r}")
    return separator, columns, len(fields)


# Ratings are stored as float32: a finite number beyond its range would be stored as inf.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _number(text: str, what: str, where: str, largest: float = math.inf) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: the {what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: the {what} must be finite, got {text!r}")
    if abs(value) > largest:
        raise ValueError(f"{where}: the {what} must be at most {largest:.6g} in magnitude (it is stored as "
                         f"float32), got {text!r}")
    return value


def _undecodable_line(path: Path, encoding: str) -> str:
    """The first line of ``path`` that is not valid ``encoding`` (the text reader reports only a
    byte offset within a buffer, not the line)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    with open(path, "rb") as raw:
        for lineno, line in enumerate(raw, start=1):
            try:
                decoder.decode(line)
            except UnicodeDecodeError as error:
                return f"{path}:{lineno}: not valid {encoding} ({error.reason} at byte {error.start} of the line)"
    return f"{path}: not valid {encoding} at its end"


def read_interactions(path: str | os.PathLike, *, format: str | None = None, encoding: str = "utf-8") -> Interactions:
    """Read one MovieLens-style interaction file, streaming it line by line.

    Args:
        path: the file.
        format: ``"udata"``, ``"csv"`` or ``"inter"`` (see the module's docstring); ``None`` (the
            default) picks ``"inter"`` for a name ending in ``.inter``, ``"csv"`` for ``.csv``
            and ``"udata"`` otherwise.
        encoding: the file's text encoding (default ``"utf-8"``). Ids are decoded exactly: a line
            that is not valid in this encoding is refused, never patched, since two ids differing
            only in the undecodable bytes would otherwise become one user or item. A file in a
            single-byte legacy encoding reads with ``encoding="latin-1"``.

    Returns:
        an :class:`~torch_ndcg.data.interactions.Interactions` log: user and item ids remapped
        to ``0..n-1`` in the order of the original ids. Memory holds the interactions' numbers
        and the distinct ids, never the text.

    Raises:
        ValueError: naming the file and line of a malformed line (a wrong number of fields, an
            empty id, a rating or timestamp that is not a finite number, a rating beyond
            float32's range, bytes that are not valid ``encoding``), a header without the user
            and item columns, a file with no interaction, or an unknown ``encoding``.

    Example:
        >>> log = read_interactions("ml-100k/u.data")  # doctest: +SKIP
        >>> splits = log.split(test=0.1, validation=0.1)  # doctest: +SKIP
        >>> users, relevance, seen = next(splits.batches("test", 256))  # doctest: +SKIP
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS} or None, got {format!r}")
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ValueError(f"encoding must be a text encoding Python knows, such as 'utf-8' or 'latin-1', "
                         f"got {encoding!r}") from None
    path = Path(path)
    fmt = format or _guess_format(path)
    user_codes: dict[str, int] = {}
    item_codes: dict[str, int] = {}
    users, items, ratings, times = array("q"), array("q"), array("f"), array("d")
    separator: str | None = None
    columns: list[int | None] = [0, 1, 2, 3]
    width = 4
    try:
        with open(path, encoding=encoding) as lines:
            for lineno, line in enumerate(lines, start=1):
                if lineno == 1 and fmt != "udata":
                    separator, columns, width = _header_columns(fmt, line, path)
                    continue
                if not line.strip():
                    continue
                fields = line.rstrip("\r\n").split(separator)
                where = f"{path}:{lineno}"
                if len(fields) != width:
                    raise ValueError(f"{where}: expected {width} fields in the {fmt!r} layout, got {len(fields)}: "
                                     f"{line.strip()!r}")
                user, item = fields[columns[0]].strip(), fields[columns[1]].strip()
                if not user or not item:
                    raise ValueError(f"{where}: the user and item ids must not be empty")
                users.append(user_codes.setdefault(user, len(user_codes)))
                items.append(item_codes.setdefault(item, len(item_codes)))
                ratings.append(1.0 if columns[2] is None else _number(fields[columns[2]], "rating", where, _FLOAT32_MAX))
                times.append(lineno if columns[3] is None else _number(fields[columns[3]], "timestamp", where))
    except UnicodeDecodeError:
        raise ValueError(_undecodable_line(path, encoding)) from None
    if not users:
        raise ValueError(f"{path}: no interactions found")
    return Interactions.from_codes(
        users=np.frombuffer(users, dtype=np.int64), items=np.frombuffer(items, dtype=np.int64),
        ratings=np.frombuffer(ratings, dtype=np.float32), timestamps=np.frombuffer(times, dtype=np.float64),
        user_ids=list(user_codes), item_ids=list(item_codes),
    )
