"""Smoke test: the significance benchmark runs on tiny sizes (ranx left out: numba compiles for long)."""

from benchmarks import stats as stats_bench


def test_stats_benchmark_quick_runs(capsys):
    rows = stats_bench.main(quick=True, argv=["--tools", "torch_ndcg"])
    out = capsys.readouterr().out
    assert [(row["test"], row["tool"]) for row in rows] == [("randomisation", "torch_ndcg"), ("t-test", "torch_ndcg")]
    assert all(row["seconds"] > 0 for row in rows)
    assert "4 runs × 30 topics × 2 measures: 12 paired tests" in out
