"""Property-based layer for torch_ndcg.trec: generated runs agree with pytrec_eval; hostile files and
arguments give a ValueError/TypeError that names the file, line and field (or the argument)."""

from __future__ import annotations

import itertools
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


TOKENS = st.sampled_from(["q1", "Q0", "d1", "d2", "1", "2.5", "-3", "1e400", "nan", "inf", "x", "#", "é", "0x1",
                          "1_0", "", "\t", "\x00", "\x0b", "\r"])
LINES = st.lists(st.lists(TOKENS, max_size=8).map(" ".join), max_size=12).map(lambda lines: "\n".join(lines))


def _reference(text: str, value: int, kind: type) -> list[tuple[bytes, bytes, float]]:
    """(qid, docno, value) of each line as trec_eval's grammar defines them, read the slow, obvious way."""
    lines = [line.split() for line in text.encode().split(b"\n")]
    return [(f[0], f[2], kind(f[value])) for f in lines if f and not f[0].startswith(b"#")]


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
