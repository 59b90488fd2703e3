"""Smoke test: the eval benchmark runs end to end on tiny sizes and every reference agrees with us."""

import pytest

from benchmarks import eval as eval_bench

pytest.importorskip("torchmetrics", reason="the benchmark's reference, in the dev extra")


def test_eval_benchmark_quick_runs_and_agrees(capsys):
    eval_bench.main(quick=True, argv=[])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "×" in line and ("torch_ndcg" in line or "torchmetrics" in line or "scikit" in line)]
    assert len(rows) >= 10  # 2 cases × (dense, grouped twice, torchmetrics, scikit-learn)
    assert "FAIL" not in out
    assert out.count(" ok |Δ|") >= 10
    # the cost of one default call, side by side with validate=False and the topk lower bound
    assert "target at 64 × 100, default call / topk lower bound" in out
    assert "target at 64 × 100, default call / validate=False" in out
    values = [line.split("value ")[1] for line in out.splitlines() if line.startswith("  tn.ndcg")]
    assert len(values) == 2 and values[0] == values[1]  # validate=False changes no value
