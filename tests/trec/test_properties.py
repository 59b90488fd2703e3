"""Property-based layer for torch_ndcg.trec: generated runs agree with pytrec_eval; hostile files and
arguments give a ValueError/TypeError that names the file, line and field (or the argument)."""

from __future__ import annotations

import itertools
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from torch_ndcg import trec
from trec_files import MEASURES, iprec_at_trec_eval_9_counts, write_qrels, write_run

pytrec_eval = pytest.importorskip("pytrec_eval")

_case = itertools.count()  # fresh query ids per example: trec_eval caches the last query by id
DOCNOS = ["a", "b", "B", "a0", "a10", "a9", "ab", "é", "z" * 12, "0", "10", "9"]
# pytrec_eval rounds scores to float32 (trec_eval keeps doubles, as we do), so scores here are
# float32 values; test_evaluation checks the float64 ordering on its own.
SCORES = st.one_of(st.sampled_from([0.0, 0.5, 1.0, -2.0]), st.floats(-1e6, 1e6, allow_nan=False, width=32))


@st.composite
def cases(draw):
    prefix = f"h{next(_case)}-"
    queries = draw(st.lists(st.sampled_from(["1", "2", "10", "q"]), min_size=1, max_size=4, unique=True))
    qrels, run = {}, {}
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=10, unique=True))
        if draw(st.booleans()) or not run:
            run[prefix + q] = {d: draw(SCORES) for d in docs}
        judged = draw(st.dictionaries(st.sampled_from(DOCNOS), st.integers(-1, 3), min_size=1, max_size=6))
        if any(rel >= 0 for rel in judged.values()):  # see trec_files.random_case
            qrels[prefix + q] = judged
    if not set(qrels) & set(run):  # a run sharing no query with the qrels is refused
        qrels[next(iter(run))] = {"a": 1}
    return qrels, run


@given(cases(), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_generated_files_agree_with_pytrec_eval(case, level, seed):
    qrels, run = case
    with tempfile.TemporaryDirectory() as folder:
        rng = np.random.default_rng(seed)
        files = write_qrels(Path(folder) / "q", qrels), write_run(Path(folder) / "r", run, rng=rng)
        ours = trec.evaluate(*files, list(MEASURES), relevance_level=level)
        iprec = iprec_at_trec_eval_9_counts(*files, level)
    measures = {*MEASURES, "iprec_at_recall"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
    assert ours.qids == sorted(reference, key=lambda q: q.encode())
    for i, qid in enumerate(ours.qids):
        for name, values in [*ours.per_query.items(), *iprec.items()]:
            assert abs(float(values[i]) - reference[qid][name]) <= 1e-6, (qid, name)


#: Numbers as C reads them, and what only Python reads (``1_0``), or C reads differently (``0x1``).
NUMBERS = ["1", "2.5", "-3", "+4", ".5", "5.", "1e400", "-1E-2", "nan", "inf", "-Infinity", "007", "0x1", "1_0",
           "1_000.5", "1.5e", "\u0661", "\uff11", "1\xa0", "2\x85", "e5", "--1", "1.2.3"]
TOKENS = st.sampled_from(["q1", "Q0", "d1", "d2", "x", "#", "é", "Россия", "a\x1cb", "", "\t", "\x00", "\x0b", "\r",
                          "\x0c", *NUMBERS])
LINES = st.lists(st.lists(TOKENS, max_size=8).map(" ".join), max_size=12).map(lambda lines: "\n".join(lines))
_C_NUMBER = {float: re.compile(rb"[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|(?i:inf|infinity))"),
             int: re.compile(rb"[+-]?\d+")}


def _c_number(field: bytes, kind: type) -> float | int:
    """A whole field in C's decimal syntax (what strtod/strtol read to its end), else ValueError."""
    if not _C_NUMBER[kind].fullmatch(field):
        raise ValueError(field)
    return kind(field)


def _reference(text: str, value: int, kind: type) -> list[tuple[bytes, bytes, float]]:
    """(qid, docno, value) of each line as trec_eval's grammar defines them, read the slow, obvious way:
    fields split at C's isspace bytes only (``bytes.split()``)."""
    lines = [line.split() for line in text.encode().split(b"\n")]
    return [(f[0], f[2], _c_number(f[value], kind)) for f in lines if f and not f[0].startswith(b"#")]


@pytest.mark.parametrize("read, field", [(trec.read_run, "score"), (trec.read_qrels, "relevance")])
@given(text=LINES, trailing_newline=st.booleans())
def test_hostile_files_are_read_exactly_or_refused_by_line(read, field, text, trailing_newline):
    text += "\n" if trailing_newline else ""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hostile.txt"
        path.write_bytes(text.encode())
        try:
            table = read(path)
        except ValueError as error:
            assert str(error).startswith(f"{path}:") or str(error).startswith(f"{path}: no "), error
            return
    values = getattr(table, field).tolist()
    got = [(table.qids[q], table.docnos[d], v) for q, d, v in zip(table.query, table.doc, values)]
    assert got == (_reference(text, 4, float) if field == "score" else _reference(text, 3, int))


@pytest.mark.parametrize("read, kind, line", [(trec.read_run, float, "q Q0 d 1 {} t\n"), (trec.read_qrels, int, "q 0 d {}\n")])
@given(number=st.one_of(
    st.sampled_from(NUMBERS),
    st.from_regex(r"\A[+-]?[0-9_]{1,4}(\.[0-9_]{0,3})?([eE][+-]?[0-9_]{1,2})?\Z"),
    st.integers(-10**6, 10**6).map(str), st.floats(allow_nan=False).map(repr),
))
def test_numbers_are_read_in_c_syntax_or_refused_by_line(tmp_path_factory, read, kind, line, number):
    path = tmp_path_factory.mktemp("n") / "f"
    path.write_bytes(("q Q0 a 1 1 t\n" if kind is float else "q 0 a 1\n").encode() + line.format(number).encode())
    try:
        expected = _c_number(number.encode(), kind)
    except ValueError:
        expected = None
    if expected is None or expected != expected:  # not C's syntax, or NaN
        with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:2: field [45] "):
            read(path)
        return
    table = read(path)
    assert (table.score if kind is float else table.relevance).tolist()[1] == expected


# Any byte but C's whitespace and 0 (and "#" first, a comment) is part of an id, non-ASCII included.
ID_BYTES = st.binary(min_size=1, max_size=10).map(lambda b: bytes(c for c in b if c not in b" \t\n\v\f\r\x00"))
IDS = ID_BYTES.filter(lambda b: b and not b.startswith(b"#"))


@given(st.lists(st.tuples(IDS, IDS, st.integers(-3, 3)), min_size=1, max_size=30, unique_by=lambda t: t[:2]),
       st.sampled_from([b" ", b"\t", b" \x0b\x0c ", b"\r\t"]))
def test_random_byte_ids_are_read_as_they_were_written(lines, space):
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = Path(folder) / "q", Path(folder) / "r"
        qrels_path.write_bytes(b"".join(space.join([q, b"0", d, str(r).encode()]) + b"\n" for q, d, r in lines))
        run_path.write_bytes(b"".join(space.join([q, b"Q0", d, b"1", str(r).encode(), b"t\xff"]) + b"\n"
                                      for q, d, r in lines))
        qrels, run = trec.read_qrels(qrels_path), trec.read_run(run_path)
        result = trec.evaluate(qrels, run, ["num_ret", "runid"])
    for table, values in ((qrels, qrels.relevance), (run, run.score)):
        got = [(table.qids[q], table.docnos[d], v) for q, d, v in zip(table.query, table.doc, values.tolist())]
        assert got == lines
    assert [q.encode("utf-8", "surrogateescape") for q in result.qids] == sorted({q for q, _, _ in lines})
    assert result.runid == "t\udcff"


TEXT_IDS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=" \t\n\v\f\r\x00"),
                   min_size=1, max_size=6).filter(lambda t: not t.startswith("#"))


@given(st.dictionaries(TEXT_IDS, st.dictionaries(TEXT_IDS, st.tuples(st.integers(-1, 3), SCORES), min_size=1, max_size=6),
                       min_size=1, max_size=4))
def test_non_ascii_ids_agree_with_pytrec_eval(judged):
    prefix = f"u{next(_case)}-"  # see cases()
    qrels = {prefix + q: {d: rel for d, (rel, _) in docs.items()} for q, docs in judged.items()}
    run = {prefix + q: {d: score for d, (_, score) in docs.items()} for q, docs in judged.items()}
    qrels = {q: docs for q, docs in qrels.items() if any(rel >= 0 for rel in docs.values())}  # see trec_files
    if not qrels:
        return
    with tempfile.TemporaryDirectory() as folder:
        files = write_qrels(Path(folder) / "q", qrels), write_run(Path(folder) / "r", run)
        ours = trec.evaluate(*files, ["P.1,3", "map", "ndcg", "num_ret", "recip_rank"])
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"P.1,3", "map", "ndcg", "num_ret", "recip_rank"}).evaluate(run)
    assert ours.qids == sorted(reference, key=lambda q: q.encode())
    for i, qid in enumerate(ours.qids):
        for name, values in ours.per_query.items():
            assert abs(float(values[i]) - reference[qid][name]) <= 1e-6, (qid, name)


@given(st.lists(st.integers(1, 3), min_size=1, max_size=60), st.integers(200, 3000), st.integers(0, 2**32 - 1))
def test_skewed_list_sizes_agree_with_pytrec_eval(small, large, seed):
    """Many short queries and one long one (judged and retrieved), as the dense tables once padded
    every query to the longest; their memory is checked in test_evaluation and test_reader."""
    rng = np.random.default_rng(seed)
    prefix = f"s{next(_case)}-"
    sizes = {f"{prefix}{i}": n for i, n in enumerate(small)} | {f"{prefix}big": large}
    qrels = {q: {f"d{j}": int(rng.integers(0, 3)) for j in range(n)} for q, n in sizes.items()}
    run = {q: {f"d{j}": float(rng.integers(0, 50)) for j in range(0, n, 2 if n > 3 else 1)} for q, n in sizes.items()}
    with tempfile.TemporaryDirectory() as folder:
        files = write_qrels(Path(folder) / "q", qrels), write_run(Path(folder) / "r", run)
        ours = trec.evaluate(*files, ["ndcg", "ndcg_cut.5,1000", "map", "bpref", "P.10", "recall.1000"])
    measures = {"ndcg", "ndcg_cut.5,1000", "map", "bpref", "P.10", "recall.1000"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for i, qid in enumerate(ours.qids):
        for name, values in ours.per_query.items():
            assert abs(float(values[i]) - reference[qid][name]) <= 1e-6, (qid, name)


ARGUMENTS = st.fixed_dictionaries({}, optional={
    "measures": st.one_of(st.none(), st.text(max_size=12), st.lists(st.one_of(st.text(max_size=12), st.integers()))),
    "relevance_level": st.one_of(st.integers(-2, 3), st.floats(), st.booleans(), st.text(max_size=2)),
    "complete": st.one_of(st.booleans(), st.integers()),
    "gain": st.one_of(st.sampled_from(["linear", "exp2"]), st.text(max_size=5)),
})


@given(ARGUMENTS)
def test_hostile_arguments_give_value_or_type_errors(kwargs):
    data = Path(__file__).parent / "data"
    try:
        result = trec.evaluate(data / "small.qrels", data / "small.run", **kwargs)
    except (ValueError, TypeError) as error:
        assert str(error)
        return
    assert result.qids == (["q1", "q2", "q3"] if kwargs.get("complete") else ["q1", "q2"])
