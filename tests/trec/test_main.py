"""``python -m torch_ndcg.trec`` prints what trec_eval prints, for the measures this package has."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from torch_ndcg.trec.__main__ import main

DATA = Path(__file__).parent / "data"
EVERY = ["-m", "official", "-m", "recall", "-m", "ndcg", "-m", "ndcg_cut", "-m", "map_cut", "-m", "success"]


def _ours(capsys, argv: list[str]) -> list[str]:
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


def _expected(name: str, ours: list[str]) -> list[str]:
    """trec_eval's lines for the measures we print (it also prints measures this package lacks)."""
    measures = {line.split("\t")[0].strip() for line in ours}
    return [line for line in (DATA / name).read_text().splitlines() if line.split("\t")[0].strip() in measures]


def test_default_output_is_trec_evals_byte_for_byte(capsys):
    ours = _ours(capsys, [str(DATA / "qrels.test"), str(DATA / "results.test")])
    assert ours == (DATA / "out.test").read_text().splitlines()


@pytest.mark.parametrize(
    "flags, qrels, run, expected",
    [
        (["-q"], "qrels.test", "results.test", "out.test.aq"),
        (["-q", "-c"], "qrels.test", "results.trunc", "out.test.aqc"),
        (["-q", "-l2"], "qrels.rel_level", "results.test", "out.test.aql"),
    ],
)
def test_per_query_output_is_trec_evals_byte_for_byte(capsys, flags, qrels, run, expected):
    ours = _ours(capsys, [*flags, *EVERY, str(DATA / qrels), str(DATA / run)])
    assert len(ours) > 150 and {"bpref", "iprec_at_recall_0.30"} <= {line.split()[0] for line in ours}
    assert ours == _expected(expected, ours)


def test_several_runs_share_the_qrels_and_write_one_tsv(capsys, tmp_path):
    compressed = tmp_path / "results.test.gz"
    with open(DATA / "results.test", "rb") as plain, gzip.open(compressed, "wb") as out:
        shutil.copyfileobj(plain, out)
    table = tmp_path / "per_query.tsv"
    ours = _ours(capsys, ["-m", "ndcg_cut.5,10", "-m", "P.5", "--tsv", str(table),
                          str(DATA / "qrels.test"), str(DATA / "results.test"), str(compressed)])
    half = len(ours) // 2
    assert ours[:half] == ours[half:] and ours[0].startswith("P_5")
    rows = table.read_text().splitlines()
    assert rows[0] == "runid\tqid\tP_5\tndcg_cut_5\tndcg_cut_10"
    assert len(rows) == 1 + 2 * 3 and rows[1].startswith("STANDARD\t301\t")


def test_a_bad_file_exits_with_its_path_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 doc 1 2.5 tag\n301 Q0 doc2 1 x tag\n")
    with pytest.raises(SystemExit) as exit_:
        main([str(DATA / "qrels.test"), str(bad)])
    assert exit_.value.code == 2
    assert f"{bad}:2: field 5 (score) must be a number, got b'x'" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["missing/x.tsv", "."])
def test_a_bad_tsv_path_is_refused_before_evaluating(tmp_path, capsys, where):
    with pytest.raises(SystemExit) as exit_:
        main(["-m", "map", "--tsv", str(tmp_path / where), str(DATA / "qrels.test"), str(DATA / "results.test")])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and f"--tsv {tmp_path / where}" in err and "Traceback" not in err


def test_ids_are_printed_as_the_files_bytes(tmp_path, capfdbinary):
    (tmp_path / "q").write_bytes("q\xe9 0 Россия 1\nq\xe9 0 Франция 0\n".encode() + b"\xff 0 d 1\n")
    (tmp_path / "r").write_bytes("q\xe9 Q0 Россия 1 2.5 run\nq\xe9 Q0 Франция 2 1.0 run\n".encode() + b"\xff Q0 d 1 1 r\xfe\n")
    assert main(["-q", "-m", "P.1", "-m", "runid", "--tsv", str(tmp_path / "t.tsv"), str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    out = capfdbinary.readouterr().out
    assert "P_1                   \tq\xe9\t1.0000\n".encode() in out and b"P_1                   \t\xff\t1.0000\n" in out
    assert b"runid                 \tall\tr\xfe\n" in out and b"P_1                   \tall\t1.0000\n" in out
    assert b"\xff\t1.0" in (tmp_path / "t.tsv").read_bytes()
