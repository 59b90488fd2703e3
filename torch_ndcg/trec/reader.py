"""Streaming readers for TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Files are read in blocks (plain or gzip, by the ``.gz`` suffix), so a 7-million-line run never
becomes a list of 7 million Python lines. Query ids and docnos become integer ids once per file,
numbered in **byte order** (C's ``strcmp``, the order trec_eval sorts and breaks score ties by),
never by first appearance.

Conventions, as trec_eval reads files:

* Blank lines and lines whose first non-blank character is ``#`` are skipped.
* Runs: the ``Q0`` and ``rank`` columns are ignored (ranks come from the scores), and so is
  anything after the tag; the score is read as float64; the run's tag is the tag of its last
  line (trec_eval's ``runid``).
* Qrels: the relevance is an integer (trec_eval reads it with ``atol``); a negative value is a
  judged, non-relevant document.

Refused with a ``ValueError`` naming ``path:line`` and the field (trec_eval would truncate,
ignore or silently read 0): a line with fewer fields than the format has (or, in qrels, more), a score that
is not a number or is NaN, a relevance that is not an integer, a byte 0 anywhere, and the same
docno twice in one query (of a run or of the qrels: trec_eval stops with "duplicate docs").
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

RUN_FIELDS = ("qid", "Q0", "docno", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docno", "rel")
_BLOCK = 1 << 25  # bytes read at a time: 32 MiB, about 600,000 run lines
_MARK = b"\x00"  # stands for a line end among the tokens of a block (a byte 0 is refused in files)


@dataclass(frozen=True)
class Qrels:
    """Judgements, one entry per (query, docno), with ids in byte order."""

    path: str
    qids: np.ndarray  # [Q] bytes (numpy "S"), sorted by strcmp
    query: np.ndarray  # [n] int64 index into qids
    docnos: np.ndarray  # [D] bytes, sorted by strcmp
    doc: np.ndarray  # [n] int64 index into docnos
    relevance: np.ndarray  # [n] int64 judged value


@dataclass(frozen=True)
class Run:
    """A ranking, one entry per (query, docno), with ids in byte order; entries stay in file order."""

    path: str
    qids: np.ndarray  # [Q] bytes, sorted by strcmp
    query: np.ndarray  # [n] int64 index into qids
    docnos: np.ndarray  # [D] bytes, sorted by strcmp: a larger id is a larger docno
    doc: np.ndarray  # [n] int64 index into docnos
    score: np.ndarray  # [n] float64
    tag: str  # the tag of the run's last line

    def flat(self) -> tuple["torch.Tensor", "torch.Tensor", "torch.Tensor"]:  # noqa: F821
        """``(score [n] float64, doc [n] long, query [n] long)``: the library's flat layout
        (``indexes`` = query) in file order; ``doc`` breaks score ties as trec_eval does (larger first)."""
        import torch

        return torch.from_numpy(self.score), torch.from_numpy(self.doc), torch.from_numpy(self.query)


def _open(path: str | os.PathLike) -> object:
    name = os.fspath(path)
    if not isinstance(name, str):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb")


def _blocks(path: str | os.PathLike) -> Iterator[tuple[bytes, int]]:
    """Whole lines, a block at a time, each with the 1-based number of its first line."""
    line = 1
    rest = b""
    with _open(path) as file:
        while True:
            chunk = file.read(_BLOCK)
            if not chunk:
                break
            chunk = rest + chunk
            end = chunk.rfind(b"\n") + 1
            if end == 0:
                rest = chunk
                continue
            rest = chunk[end:]
            yield chunk[:end], line
            line += chunk.count(b"\n", 0, end)
    if rest:
        yield rest + b"\n", line


def _fail(path: object, line: int, message: str) -> ValueError:
    return ValueError(f"{os.fspath(path)}:{line}: {message}")


def _slow_block(path: object, block: bytes, first: int, names: tuple[str, ...], extra: bool) -> list[list]:
    """Line by line, for a block the fast path cannot take: comments, blank lines or a bad line."""
    columns: list[list] = [[] for _ in names] + [[]]
    for offset, text in enumerate(block.split(b"\n")[:-1]):
        fields = text.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        number = first + offset
        if b"\x00" in text:
            raise _fail(path, number, "contains a byte 0")
        if len(fields) < len(names) or (len(fields) > len(names) and not extra):
            where = f"field {len(fields) + 1} ({names[len(fields)]}) is missing" if len(fields) < len(names) else (
                f"{len(fields) - len(names)} field(s) after field {len(names)} ({names[-1]})"
            )
            raise _fail(path, number, f"expected {len(names)} fields ({' '.join(names)}), got {len(fields)}: {where}")
        for column, value in zip(columns[:-1], fields):
            column.append(value)
        columns[-1].append(number)
    return columns


def _fast_block(block: bytes, first: int, width: int) -> list | None:
    """Columns of a block where every line has exactly ``width`` fields, or None."""
    if _MARK in block:
        return None
    tokens = block.replace(b"\n", b" \x00 ").split()
    lines = len(tokens) // (width + 1)
    if len(tokens) != lines * (width + 1) or tokens[width :: width + 1].count(_MARK) != lines:
        return None
    columns = [tokens[i :: width + 1] for i in range(width)]
    qids = np.array(columns[0])
    if qids.size and (qids.view(np.uint8).reshape(qids.size, -1)[:, 0] == ord("#")).any():
        return None  # a comment line that happens to have `width` fields
    return [qids, *columns[1:], np.arange(first, first + lines, dtype=np.int64)]


def _read(path: str | os.PathLike, names: tuple[str, ...], keep: tuple[int, ...]) -> list[np.ndarray]:
    """The columns ``keep`` (plus line numbers) of a whitespace-separated file, as arrays."""
    parts: list[list] = [[] for _ in keep] + [[]]
    for block, first in _blocks(path):
        columns = _fast_block(block, first, len(names))
        if columns is None:
            columns = _slow_block(path, block, first, names, extra=names is RUN_FIELDS)
        for part, index in zip(parts, (*keep, -1)):
            part.append(columns[index])
    if not parts[-1] or sum(len(p) for p in parts[-1]) == 0:
        raise ValueError(f"{os.fspath(path)}: no {names[0]} lines (an empty file?)")
    return parts


def _numbers(path: object, values: list, lines: np.ndarray, name: str, field: int, kind: type) -> np.ndarray:
    """Parse a column of byte strings; on failure find the first bad line for the message."""
    text = np.array(values) if not isinstance(values, np.ndarray) else values
    try:
        parsed = text.astype(np.float64 if kind is float else np.int64)
    except (ValueError, OverflowError):
        parsed = None
    if kind is float and parsed is not None:
        bad = np.flatnonzero(np.isnan(parsed))
        if bad.size == 0:
            return parsed
        raise _fail(path, int(lines[bad[0]]), f"field {field} ({name}) is NaN; scores must be ordered numbers")
    if parsed is not None:
        return parsed
    for value, line in zip(text.tolist(), lines.tolist()):
        try:
            np.array([value]).astype(np.float64 if kind is float else np.int64)
        except (ValueError, OverflowError):
            expected = "a number" if kind is float else "an integer"
            raise _fail(path, line, f"field {field} ({name}) must be {expected}, got {value!r}") from None
    raise AssertionError("unreachable: a column failed to parse but no value did")


def _ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique byte strings in strcmp order and each value's index.

    numpy pads "S" values with byte 0, which sorts first, as strcmp's terminator does; values of
    at most 8 bytes compare as big-endian integers, which numpy sorts several times faster.
    """
    if values.dtype.itemsize <= 8:
        wide = values.astype("S8").view(">u8")
        unique, index = np.unique(wide, return_inverse=True)
        return unique.view("S8").astype(values.dtype), index.astype(np.int64)
    unique, index = np.unique(values, return_inverse=True)
    return unique, index.astype(np.int64)


def _query_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`_ids`, for a column that comes in runs of equal values (one query after another)."""
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    unique, index = _ids(values[starts])
    return unique, np.repeat(index, np.diff(np.append(starts, values.size)))


def _check_unique(path: object, query: np.ndarray, doc: np.ndarray, docs: int, lines: np.ndarray,
                  docnos: np.ndarray) -> None:
    key = query * docs + doc
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    first, second = lines[order[same]], lines[order[same + 1]]
    at = int(np.argmin(second))
    docno = docnos[doc[order[same[at] + 1]]].decode("utf-8", "backslashreplace")
    raise _fail(path, int(second[at]), f"field 3 (docno) {docno!r} repeats line {int(first[at])} of the same query")


def _concat(parts: list) -> np.ndarray:
    arrays = [p if isinstance(p, np.ndarray) else np.array(p) for p in parts if len(p)]
    return np.concatenate(arrays) if len(arrays) > 1 else arrays[0]


def read_run(path: str | os.PathLike) -> Run:
    """Read a TREC run file (``qid Q0 docno rank score tag`` per line; ``.gz`` is decompressed).

    Example:
        >>> import torch_ndcg.trec as trec
        >>> run = trec.read_run("tests/trec/data/small.run")
        >>> run.qids.tolist(), run.score[:2].tolist(), run.tag
        ([b'q1', b'q2'], [2.5, 1.0], 'demo')
    """
    qid, docno, score, tag, lines = _read(path, RUN_FIELDS, (0, 2, 4, 5))
    lines = _concat(lines)
    qids, query = _query_ids(_concat(qid))
    docnos, doc = _ids(_concat(docno))
    scores = np.concatenate([_numbers(path, s, l, "score", 5, float) for s, l in zip(score, _split_like(lines, score))])
    _check_unique(path, query, doc, len(docnos), lines, docnos)
    last = next(t for t in reversed(tag) if len(t))
    return Run(os.fspath(path), qids, query, docnos, doc, scores, last[-1].decode("utf-8", "backslashreplace"))


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a TREC qrels file (``qid iter docno rel`` per line; ``.gz`` is decompressed).

    Example:
        >>> import torch_ndcg.trec as trec
        >>> qrels = trec.read_qrels("tests/trec/data/small.qrels")
        >>> qrels.qids.tolist(), qrels.relevance.tolist()
        ([b'q1', b'q2', b'q3'], [2, 0, 1, 1, 1])
    """
    qid, docno, rel, lines = _read(path, QRELS_FIELDS, (0, 2, 3))
    lines = _concat(lines)
    qids, query = _ids(_concat(qid))
    docnos, doc = _ids(_concat(docno))
    relevance = np.concatenate([_numbers(path, r, l, "rel", 4, int) for r, l in zip(rel, _split_like(lines, rel))])
    _check_unique(path, query, doc, len(docnos), lines, docnos)
    return Qrels(os.fspath(path), qids, query, docnos, doc, relevance)


def _split_like(lines: np.ndarray, parts: list) -> list[np.ndarray]:
    """The line numbers of each block, to name the line of a bad value."""
    return np.split(lines, np.cumsum([len(p) for p in parts])[:-1])
