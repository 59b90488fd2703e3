"""Streaming readers for TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Files are read in blocks (plain or gzip, by the ``.gz`` suffix), so a 7-million-line run never
becomes a list of 7 million Python lines. Query ids and docnos become integer ids once per file,
numbered in **byte order** (C's ``strcmp``, the order trec_eval sorts and breaks score ties by),
never by first appearance.

Conventions, as trec_eval reads files:

* Fields are separated by C's ``isspace`` bytes only (space, ``\t``, ``\n``, ``\v``, ``\f``,
  ``\r``), in runs and qrels alike: any other byte, non-ASCII ones included, is part of an id.
  Ids stay raw bytes here (``qids``, ``docnos``); where they come back as ``str`` (an
  :class:`~torch_ndcg.trec.Evaluation`'s ``qids`` and ``runid``) they are decoded from UTF-8,
  bytes that are not UTF-8 through ``surrogateescape`` (``str.encode("utf-8", "surrogateescape")``
  gives the file's bytes back).
* Blank lines and lines whose first non-blank character is ``#`` are skipped.
* Runs: the ``Q0`` and ``rank`` columns are ignored (ranks come from the scores), and so is
  anything after the tag; the score is read as float64 and must be a whole C decimal number
  (``[+-]digits[.digits][e[+-]digits]``, or ``inf``/``infinity``); the run's tag is the tag of
  its last line (trec_eval's ``runid``).
* Qrels: the relevance is an integer, ``[+-]digits`` (trec_eval reads it with ``atol``); a
  negative value is a judged, non-relevant document.
* Memory follows the file's size, whatever the length of its lines: ids are kept in fixed-width
  byte columns only while the longest is close to the typical one, else as Python bytes.

Refused with a ``ValueError`` naming ``path:line`` and the field (trec_eval would truncate,
ignore or silently read 0): a line with fewer fields than the format has (or, in qrels, more), a score that
is not a number in that syntax or is NaN, a relevance that is not an integer in that syntax
(``1_000``, ``0x10``, ``1.5`` as a relevance: trec_eval's ``atof``/``atol`` would read a prefix,
Python would read ``1_000`` as 1000), a byte 0 anywhere, a line longer than 1 MiB, and the same
docno twice in one query (of a run or of the qrels: trec_eval stops with "duplicate docs").
"""

from __future__ import annotations

import gzip
import io
import os
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

RUN_FIELDS = ("qid", "Q0", "docno", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docno", "rel")
_BLOCK = 1 << 25  # bytes read at a time: 32 MiB, about 600,000 run lines
_MARK = b"\x00"  # stands for a line end among the tokens of a block (a byte 0 is refused in files)
_COMMENT = re.compile(rb"(?m)^[ \t\r\v\f]*#")
_LONGEST_LINE = 1 << 20  # bytes: longer is not a qrels or run line (a binary file, a missing newline)
# Bytes that numpy's parser (reading latin-1) takes for whitespace and C's isspace does not.
_NOT_C_SPACE = re.compile(rb"[\x1c-\x1f\x85\xa0]")
# What a C decimal number may hold: the full grammar is then Python's float()/int() of the
# field, which reads these characters as strtod/strtol do; "_" (Python only) is not among them.
_NUMBER_BYTES = {float: b"0123456789+-.eEinftyaINFTYA", int: b"0123456789+-"}


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
    lines_per_query: np.ndarray  # [Q] int64 number of entries of each query

    def flat(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(score [n] float64, doc [n] long, query [n] long)``: the library's flat layout
        (``indexes`` = query) in file order; ``doc`` breaks score ties as trec_eval does (larger first)."""
        return torch.from_numpy(self.score), torch.from_numpy(self.doc), torch.from_numpy(self.query)

    def ranked(self) -> torch.Tensor:
        """``[Q, K]`` doc ids of each query in trec_eval's order (score descending, then docno
        descending), padded with -1: the ranked form's layout (``tn.ranked.ndcg``'s ``ranked_ids``).

        Example:
            >>> read_run("tests/trec/data/small.run").ranked()
            tensor([[ 0,  3,  1],
                    [ 4,  2, -1]])
        """
        order = np.lexsort((-self.doc, -self.score, self.query))
        counts = self.lines_per_query
        column = np.arange(order.size) - np.repeat(np.cumsum(counts) - counts, counts)
        out = np.full((self.qids.size, max(int(counts.max(initial=0)), 1)), -1, dtype=np.int64)
        out[self.query[order], column] = self.doc[order]
        return torch.from_numpy(out)


def _open(path: str | os.PathLike) -> object:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    name = os.fspath(path)
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
                if len(rest) > _LONGEST_LINE:
                    raise _too_long(path, line)
                continue
            rest = chunk[end:]
            _check_line_lengths(path, chunk[:end], line)
            yield chunk[:end], line
            line += chunk.count(b"\n", 0, end)
    if rest:
        _check_line_lengths(path, rest + b"\n", line)
        yield rest + b"\n", line


def _too_long(path: object, line: int) -> ValueError:
    return _fail(path, line, f"line longer than {_LONGEST_LINE} bytes: not a qrels or run line "
                             "(a binary file, or lines not ended by \\n?)")


def _check_line_lengths(path: object, block: bytes, first: int) -> None:
    if len(block) <= _LONGEST_LINE:
        return
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == ord("\n"))
    lengths = np.diff(ends, prepend=-1)
    if lengths.max() > _LONGEST_LINE:
        raise _too_long(path, first + int(np.argmax(lengths > _LONGEST_LINE)))


def _fail(path: object, line: int, message: str) -> ValueError:
    return ValueError(f"{os.fspath(path)}:{line}: {message}")


Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bytes]  # qid, docno, value, line, last field


def _slow_block(path: object, block: bytes, first: int, names: tuple[str, ...], value: int, kind: type) -> Columns:
    """Line by line, for a block the fast paths cannot take: comments, blank lines or a bad line."""
    extra = names is RUN_FIELDS  # trec_eval ignores whatever follows a run line's tag
    columns: list[list] = [[] for _ in names]
    numbers: list[int] = []
    for offset, text in enumerate(block.split(b"\n")[:-1]):
        fields = text.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        number = first + offset
        if _MARK in text:
            raise _fail(path, number, "contains a byte 0")
        if len(fields) < len(names) or (len(fields) > len(names) and not extra):
            where = f"field {len(fields) + 1} ({names[len(fields)]}) is missing" if len(fields) < len(names) else (
                f"{len(fields) - len(names)} field(s) after field {len(names)} ({names[-1]})"
            )
            raise _fail(path, number, f"expected {len(names)} fields ({' '.join(names)}), got {len(fields)}: {where}")
        for column, field in zip(columns, fields):
            column.append(field)
        numbers.append(number)
    lines = np.array(numbers, dtype=np.int64)
    return _arrays(path, columns[0], columns[2], columns[value], lines, names, value, kind, columns[-1][-1:])


def _arrays(path: object, qid: list, docno: list, values: list, lines: np.ndarray, names: tuple[str, ...],
            value: int, kind: type, last: list) -> Columns:
    return (_text(qid), _text(docno), _numbers(path, values, lines, names[value], value + 1, kind), lines,
            last[0] if last else b"")


def _split_block(path: object, block: bytes, first: int, names: tuple[str, ...], value: int, kind: type
                 ) -> Columns | None:
    """A block where every line has exactly the format's fields, split at once; else None."""
    width = len(names)
    if _MARK in block or (b"#" in block and _COMMENT.search(block)):
        return None
    tokens = block.replace(b"\n", b" \x00 ").split()
    lines = len(tokens) // (width + 1)
    # Every line mark where a line of `width` fields ends, and nowhere else: a blank or short
    # line shifts the stride, and the slow path (which names the line) must read this block.
    if len(tokens) != lines * (width + 1) or tokens[width :: width + 1].count(_MARK) != lines:
        return None
    if tokens.count(_MARK) != lines:
        return None
    numbers = np.arange(first, first + lines, dtype=np.int64)
    column = lambda i: tokens[i :: width + 1]  # noqa: E731
    return _arrays(path, column(0), column(2), column(value), numbers, names, value, kind, tokens[-2:-1])


def _run_block(path: object, block: bytes, first: int, names: tuple[str, ...], value: int, kind: type
               ) -> Columns | None:
    """A run block of at least six fields a line, by numpy's C parser (several times faster than
    splitting into Python objects); else what :func:`_split_block` makes of it."""
    if _MARK in block or (b"#" in block and _COMMENT.search(block)):
        return None
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == ord("\n"))
    longest = int(np.diff(ends, prepend=-1).max())
    # numpy's columns are as wide as the longest line: only where that costs about the block's
    # size; and it splits at bytes that are not C whitespace (in ids such as "Россия").
    if not _fits_columns(longest, ends.size, len(block)) or _NOT_C_SPACE.search(block):
        return _split_block(path, block, first, names, value, kind)
    text = f"S{longest}"
    dtype = [("qid", text), ("docno", text), ("score", np.float64), ("tag", "S1")]
    try:
        with warnings.catch_warnings():  # a block of blank lines: the slow path skips them
            warnings.simplefilter("ignore", UserWarning)
            table = np.loadtxt(io.BytesIO(block), dtype=dtype, usecols=(0, 2, 4, 5), comments=None,
                               encoding="latin-1", ndmin=1)
    except ValueError:
        return None
    if table.size != ends.size or np.isnan(table["score"]).any():
        return None  # blank lines (numpy skips them, so line numbers would shift) or a NaN
    last = block[block.rfind(b"\n", 0, -1) + 1 :].split()[5]
    numbers = np.arange(first, first + ends.size, dtype=np.int64)
    return _narrow(table["qid"]), _narrow(table["docno"]), np.ascontiguousarray(table["score"]), numbers, last


def _fits_columns(width: int, count: int, size: int) -> bool:
    """Whether ``count`` values in a fixed-width column of ``width`` bytes cost about ``size``
    bytes (twice, and a little slack) rather than following one outlying value."""
    return width * count <= 2 * size + (1 << 16)


def _narrow(values: np.ndarray) -> np.ndarray:
    """The same byte strings in the narrowest "S" type that holds them."""
    return values.astype(f"S{max(int(np.char.str_len(values).max(initial=1)), 1)}")


def _text(values: list) -> np.ndarray:
    """Byte strings as a fixed-width "S" column, or as Python bytes (dtype object) where one
    long value would make the column cost far more than the values."""
    width = max(map(len, values), default=1)
    if not _fits_columns(width, len(values), sum(map(len, values))):
        column = np.empty(len(values), dtype=object)
        column[:] = values
        return column
    # Giving numpy the width skips its own pass over the values to find it.
    return np.array(values, dtype=f"S{width}")


def _read(path: str | os.PathLike, names: tuple[str, ...], value: int, kind: type, fast: Callable) -> Columns:
    """``(qid, docno, value, line)`` columns of a whitespace-separated file, and its last line's last field."""
    parts = []
    for block, first in _blocks(path):
        columns = fast(path, block, first, names, value, kind)
        if columns is None:
            columns = _slow_block(path, block, first, names, value, kind)
        if columns[3].size:
            parts.append(columns)
    if not parts:
        raise ValueError(f"{os.fspath(path)}: no {' '.join(names)} lines (an empty file?)")
    qid, docno, values, lines = (_join(c) if len(parts) > 1 else c[0] for c in list(zip(*parts))[:4])
    return qid, docno, values, lines, parts[-1][4]


def _join(columns: tuple[np.ndarray, ...]) -> np.ndarray:
    """The blocks' columns as one; text columns become Python bytes where the widest block's
    width would cost far more than the blocks' own columns."""
    if all(c.dtype.kind != "S" for c in columns):
        return np.concatenate(columns)
    count = sum(c.size for c in columns)
    width = max(c.dtype.itemsize for c in columns if c.dtype.kind == "S")
    fixed = all(c.dtype.kind == "S" for c in columns)
    if fixed and _fits_columns(width, count, sum(c.nbytes for c in columns)):
        return np.concatenate(columns)
    return np.concatenate([c.astype(object) for c in columns])


def _numbers(path: object, values: list, lines: np.ndarray, name: str, field: int, kind: type) -> np.ndarray:
    """Parse a column of byte strings as C numbers; on failure find the first bad line for the message."""
    dtype = np.float64 if kind is float else np.int64
    try:
        if b"".join(values).translate(None, _NUMBER_BYTES[kind]):
            raise ValueError("a byte that is not part of a C number")
        parsed = np.array(values, dtype=dtype)
    except (ValueError, OverflowError):
        for value, line in zip(values, lines.tolist()):
            try:
                if value.translate(None, _NUMBER_BYTES[kind]):
                    raise ValueError(value)
                np.array([value], dtype=dtype)
            except (ValueError, OverflowError):
                expected = "a number" if kind is float else "an integer"
                raise _fail(path, line, f"field {field} ({name}) must be {expected}, got {value!r}") from None
        raise
    if kind is float:
        bad = np.flatnonzero(np.isnan(parsed))
        if bad.size:
            raise _fail(path, int(lines[bad[0]]), f"field {field} ({name}) is NaN; scores must be ordered numbers")
    return parsed


def _ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique byte strings in strcmp order and each value's index.

    numpy pads "S" values with byte 0, which sorts first, as strcmp's terminator does; values of
    at most 8 bytes compare as big-endian integers, which numpy sorts several times faster.
    Python bytes (an object column) compare as strcmp does too (a byte 0 is refused in files).
    """
    if values.dtype.kind == "S" and values.dtype.itemsize <= 8:
        wide = values.astype("S8").view(">u8")
        unique, index = np.unique(wide, return_inverse=True)
        return unique.view("S8").astype(values.dtype), index.astype(np.int64)
    unique, index = np.unique(values, return_inverse=True)
    return unique, index.astype(np.int64)


def _query_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As :func:`_ids`, for a column that comes in runs of equal values (one query after another);
    also the number of values of each id."""
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    unique, index = _ids(values[starts])
    lengths = np.diff(np.append(starts, values.size))
    return unique, np.repeat(index, lengths), np.bincount(index, weights=lengths, minlength=unique.size).astype(np.int64)


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


def read_run(path: str | os.PathLike) -> Run:
    """Read a TREC run file (``qid Q0 docno rank score tag`` per line; ``.gz`` is decompressed).

    Example:
        >>> import torch_ndcg.trec as trec
        >>> run = trec.read_run("tests/trec/data/small.run")
        >>> run.qids.tolist(), run.score[:2].tolist(), run.tag
        ([b'q1', b'q2'], [2.5, 1.0], 'demo')
    """
    qid, docno, score, lines, tag = _read(path, RUN_FIELDS, 4, float, _run_block)
    qids, query, lines_per_query = _query_ids(qid)
    docnos, doc = _ids(docno)
    _check_unique(path, query, doc, len(docnos), lines, docnos)
    return Run(os.fspath(path), qids, query, docnos, doc, score, tag.decode("utf-8", "surrogateescape"),
               lines_per_query)


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a TREC qrels file (``qid iter docno rel`` per line; ``.gz`` is decompressed).

    Example:
        >>> import torch_ndcg.trec as trec
        >>> qrels = trec.read_qrels("tests/trec/data/small.qrels")
        >>> qrels.qids.tolist(), qrels.relevance.tolist()
        ([b'q1', b'q2', b'q3'], [2, 0, 1, 1, 1])
    """
    qid, docno, relevance, lines, _ = _read(path, QRELS_FIELDS, 3, int, _split_block)
    qids, query, _ = _query_ids(qid)
    docnos, doc = _ids(docno)
    _check_unique(path, query, doc, len(docnos), lines, docnos)
    return Qrels(os.fspath(path), qids, query, docnos, doc, relevance)
