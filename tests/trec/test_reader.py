"""Reading qrels and runs: byte-order ids, gzip, streaming blocks, and errors that name path:line:field."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from torch_ndcg.trec import reader, read_qrels, read_run
import peak_memory

DATA = Path(__file__).parent / "data"


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_ids_follow_byte_order_not_first_appearance(tmp_path):
    run = read_run(_write(tmp_path / "r", "2 Q0 b10 1 1 t\n10 Q0 b9 2 1 t\n2 Q0 B 3 1 t\n"))
    assert run.qids.tolist() == [b"10", b"2"] and run.query.tolist() == [1, 0, 1]
    assert run.docnos.tolist() == [b"B", b"b10", b"b9"] and run.doc.tolist() == [1, 2, 0]
    assert run.lines_per_query.tolist() == [1, 2]


def test_long_docnos_sort_by_bytes_too(tmp_path):
    run = read_run(_write(tmp_path / "r", "q Q0 clueweb-0001-b 1 1 t\nq Q0 clueweb-0001 1 1 t\nq Q0 é 1 1 t\n"))
    assert run.docnos.tolist() == [b"clueweb-0001", b"clueweb-0001-b", "é".encode()]


def test_gzip_comments_blank_lines_and_extra_run_fields(tmp_path):
    text = "# a comment\nq1 Q0 d1 1 2.5 tag\n\n  # indented comment\nq1 Q0 d2 2 -1e3 tag trailing junk\nq2\tQ0\td1\t1\tinf\tlast\n"
    plain = read_run(_write(tmp_path / "r", text))
    with gzip.open(tmp_path / "r.gz", "wt") as out:
        out.write(text)
    packed = read_run(tmp_path / "r.gz")
    for run in (plain, packed):
        assert run.score.tolist() == [2.5, -1000.0, float("inf")] and run.tag == "last"
        assert run.docnos.tolist() == [b"d1", b"d2"]


@pytest.mark.parametrize("block", [64, 100, 1 << 25])
def test_blocks_keep_line_numbers(tmp_path, monkeypatch, block):
    monkeypatch.setattr(reader, "_BLOCK", block)
    lines = [f"q{i % 3} Q0 d{i} {i} {i / 7:.3f} tag\n" for i in range(200)]
    lines[150] = "q0 Q0 d150 150 oops tag\n"
    path = _write(tmp_path / "r", "# header\n" + "".join(lines))
    with pytest.raises(ValueError, match=r"r:152: field 5 \(score\) must be a number, got b'oops'"):
        read_run(path)
    lines[150] = "q0 Q0 d150 150 1.5 tag\n"
    run = read_run(_write(path, "".join(lines)))
    assert run.score.size == 200 and run.score[150] == 1.5 and run.doc.size == 200


@pytest.mark.parametrize(
    "read, text, message",
    [
        (read_run, "q Q0 d 1 2.0\n", r":1: expected 6 fields .*field 6 \(tag\) is missing"),
        (read_run, "q Q0 d 1 2.0 t\nq Q0\n", r":2: expected 6 fields .*field 3 \(docno\) is missing"),
        (read_run, "q Q0 d 1 abc t\n", r":1: field 5 \(score\) must be a number, got b'abc'"),
        (read_run, "q Q0 d 1 nan t\n", r":1: field 5 \(score\) is NaN"),
        (read_run, "q Q0 d 1 1 t\nq Q0 e 2 1 t\nq Q0 d 3 1 t\n", r":3: field 3 \(docno\) 'd' repeats line 1 of the same query"),
        (read_run, "q Q0 d\x00 1 1 t\n", r":1: contains a byte 0"),
        (read_run, "", r"no qid Q0 docno rank score tag lines"),
        (read_qrels, "q 0 d 1 extra\n", r":1: expected 4 fields .*1 field\(s\) after field 4 \(rel\)"),
        (read_qrels, "q 0 d\n", r":1: expected 4 fields .*field 4 \(rel\) is missing"),
        (read_qrels, "q 0 d 1.5\n", r":1: field 4 \(rel\) must be an integer, got b'1.5'"),
        (read_qrels, "q 0 d 1\nq 0 d 2\n", r":2: field 3 \(docno\) 'd' repeats line 1"),
    ],
)
def test_bad_lines_name_path_line_and_field(tmp_path, read, text, message):
    with pytest.raises(ValueError, match=message):
        read(_write(tmp_path / "bad.txt", text))


def test_same_docno_in_two_queries_is_fine(tmp_path):
    qrels = read_qrels(_write(tmp_path / "q", "a 0 d 1\nb 0 d -1\n"))
    assert qrels.relevance.tolist() == [1, -1] and qrels.doc.tolist() == [0, 0]


def test_paths_must_be_paths():
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        read_run(3)
    with pytest.raises(FileNotFoundError):
        read_qrels(DATA / "missing.qrels")


def test_flat_layout(tmp_path):
    score, doc, query = read_run(DATA / "small.run").flat()
    assert score.dtype.is_floating_point and score.tolist() == [2.5, 1.0, 1.0, 3.0, 2.0]
    assert query.tolist() == [0, 0, 0, 1, 1] and np.array_equal(doc.numpy(), read_run(DATA / "small.run").doc)


def test_ranked_layout_is_trec_evals_order(tmp_path):
    rng = np.random.default_rng(3)
    lines, expected = [], {}
    for q in ["q2", "q10", "q1"]:
        docs = {f"d{rng.integers(0, 30)}": float(rng.integers(0, 3)) for _ in range(rng.integers(1, 12))}
        lines += [f"{q} Q0 {d} 0 {s} t\n" for d, s in docs.items()]
        expected[q.encode()] = sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)
    run = read_run(_write(tmp_path / "r", "".join(rng.permutation(lines))))
    ranked = run.ranked()
    for row, qid in zip(ranked.tolist(), run.qids.tolist()):
        assert [run.docnos[i].decode() for i in row if i >= 0] == expected[qid]


def test_a_short_line_after_blank_lines_is_refused(tmp_path):
    # Blank lines once made a one-field line pass as a whole qrels line in the fast splitter.
    path = tmp_path / "short.qrels"
    path.write_bytes(b"\n\n\n1\n")
    with pytest.raises(ValueError, match=r"short.qrels:4: expected 4 fields"):
        read_qrels(path)


def test_ids_split_only_at_c_whitespace(tmp_path, monkeypatch):
    # numpy's parser, reading latin-1, took 0xA0, 0x85 and 0x1C-0x1F for whitespace: "Россия"
    # holds 0xA0 (Р is D0 A0) and was cut in two, so the rank was read as the score.
    text = "q\u03a01 Q0 Россия 1 2.5 run\nq\u03a01 Q0 Франция 2 1.0 run\nq\xe02 Q0 a\x1cb\x85c 1 3 run\n"
    for block in (1 << 25, 40):
        monkeypatch.setattr(reader, "_BLOCK", block)
        run = read_run(_write(tmp_path / "r", text))
        assert [run.qids[q].decode() for q in run.query] == ["q\u03a01", "q\u03a01", "q\xe02"]
        assert [run.docnos[d].decode() for d in run.doc] == ["Россия", "Франция", "a\x1cb\x85c"]
        assert run.score.tolist() == [2.5, 1.0, 3.0]
    qrels = read_qrels(_write(tmp_path / "q", "q\u03a01 0 Россия 1\nq\u03a01\v0\fФранция\r0\n"))
    assert [qrels.docnos[d].decode() for d in qrels.doc] == ["Россия", "Франция"]


@pytest.mark.parametrize(
    "read, text, message",
    [
        (read_run, "q Q0 d 1 1_000 t\n", r":1: field 5 \(score\) must be a number, got b'1_000'"),
        (read_run, "q Q0 d 1 2.5 t\nq Q0 e 2 0x10 t\n", r":2: field 5 \(score\) must be a number, got b'0x10'"),
        (read_run, "q Q0 d 1 \u0661 t\n", r":1: field 5 \(score\) must be a number"),
        (read_qrels, "q 0 d 1_0\n", r":1: field 4 \(rel\) must be an integer, got b'1_0'"),
        (read_qrels, "q 0 d 1\nq 0 e +1_1\n", r":2: field 4 \(rel\) must be an integer, got b'\+1_1'"),
    ],
)
def test_python_only_number_syntax_is_refused(tmp_path, read, text, message):
    # Python reads "1_000" as 1000; trec_eval's atof/atol read 1. Neither reading is safe to guess.
    with pytest.raises(ValueError, match=message):
        read(_write(tmp_path / "bad.txt", text))


def test_c_number_syntax_is_read(tmp_path):
    run = read_run(_write(tmp_path / "r", "q Q0 a 1 +1 t\nq Q0 b 1 .5 t\nq Q0 c 1 1. t\nq Q0 d 1 -1E+2 t\n"
                                          "q Q0 e 1 Infinity t\nq Q0 f 1 -inf t\nq Q0 g 1 007 t\n"))
    assert run.score.tolist() == [1.0, 0.5, 1.0, -100.0, float("inf"), float("-inf"), 7.0]
    assert read_qrels(_write(tmp_path / "q", "q 0 a +1\nq 0 b -2\nq 0 c 007\n")).relevance.tolist() == [1, -2, 7]


def test_one_long_line_costs_its_own_bytes(tmp_path):
    # Columns as wide as the longest line made 60,000 ordinary lines and one 40 kB docno take GiBs.
    lines = [f"q{i % 50} Q0 doc{i} {i} {1 / (i + 1)!r} run\n" for i in range(2000)]
    long_docno = "x" * 100_000
    path = _write(tmp_path / "r", "".join(lines[:1000]) + f"q1 Q0 {long_docno} 1 0.5 run\n" + "".join(lines[1000:]))
    run = read_run(path)
    assert run.docnos.dtype == object and long_docno.encode() in run.docnos.tolist()
    assert run.score.size == 2001 and run.score[1000] == 0.5
    # The same ids as a file of ordinary lines gives.
    short = read_run(_write(tmp_path / "s", "".join(lines)))
    assert set(short.docnos.tolist()) == set(run.docnos.tolist()) - {long_docno.encode()}


@pytest.mark.parametrize("block", [1 << 16, 1 << 25])
def test_a_line_over_a_mebibyte_is_refused_by_line(tmp_path, monkeypatch, block):
    monkeypatch.setattr(reader, "_BLOCK", block)
    with pytest.raises(ValueError, match=r"r:3: line longer than 1048576 bytes"):
        read_run(_write(tmp_path / "r", "q Q0 a 1 1 t\nq Q0 b 1 1 t\nq Q0 " + "c" * (2 << 20) + " 1 1 t\n"))
    with pytest.raises(ValueError, match=r"r:2: line longer than 1048576 bytes"):  # no newline at all
        read_qrels(_write(tmp_path / "r", "q 0 a 1\n" + "z" * (3 << 20)))


def test_reading_a_run_with_one_long_line_follows_the_files_size(tmp_path):
    path = tmp_path / "r"
    with open(path, "w") as out:
        for i in range(60_000):  # about 2.3 MiB
            out.write(f"q{i % 50} Q0 doc{i} {i} {1 / (i + 1)!r} run\n")
        out.write("q1 Q0 " + "x" * 40_000 + " 1 0.5 run\n")
    growth = peak_memory.peak_growth("import torch_ndcg.trec as trec", f"trec.read_run({str(path)!r})")
    assert growth < 256 << 20, f"{growth / 2**20:.0f} MiB"
