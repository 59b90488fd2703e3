"""Smoke test: the metric-class benchmark runs end to end at tiny sizes and its cases agree."""

import re

import pytest

from benchmarks import metrics

pytest.importorskip("torchmetrics", reason="the benchmarked classes need torch-ndcg[metrics]")
from torch_ndcg.metrics import PENDING_ITEMS  # noqa: E402  (needs torchmetrics)


def test_quick_run_prints_the_table_and_every_case_reports_the_same_value(capsys) -> None:
    metrics.main(quick=True, argv=[])
    out = capsys.readouterr().out
    starts = ("torch_ndcg NDCG", "  the same", "torchmetrics Retrieval")
    rows = [line for line in out.splitlines() if line.startswith(starts)]
    assert len(rows) == 4
    values = {re.split(r"\s+", row.strip())[-1] for row in rows}
    assert len(values) == 1  # dense, flat and torchmetrics give the same NDCG@10
    dense_row = next(row for row in rows if row.startswith("torch_ndcg NDCG(k=10), dense"))
    assert " 16 B " in dense_row  # after compute: a sum and a count
    (dense_states,) = [line for line in out.splitlines() if line.strip().startswith("dense ")]
    states = [int(size.replace(",", "")) for size in re.findall(r"n=\d+: ([\d,]+) B", dense_states)]
    waiting = PENDING_ITEMS * (4 + 8)  # float32 scores and int64 labels of the rows not yet evaluated
    assert len(states) == 2 and all(16 <= size <= 16 + waiting for size in states)  # bounded
    assert "target, tie-heavy loop vs torchmetrics" in out
    tie_values = {line.split("value ")[1] for line in out.splitlines() if "µs per batch" in line}
    assert len(tie_values) == 1  # ours and torchmetrics agree on the tie-heavy batches
