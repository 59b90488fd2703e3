"""Smoke test: the TREC benchmark runs end to end on tiny files and agrees with pytrec_eval."""

import re

from benchmarks import trec as trec_bench


def test_trec_benchmark_quick_runs_and_agrees(capsys, tmp_path):
    # ranx compiles with numba for about a minute: the smoke test leaves it out.
    trec_bench.main(quick=True, argv=["--dir", str(tmp_path), "--tools", "pytrec_eval"])
    out = capsys.readouterr().out
    ours = next(line for line in out.splitlines() if line.startswith("| torch_ndcg.trec"))
    assert "| pytrec_eval |" in out and "reference" in out
    assert re.search(r"default set \(no -m: 30 values.*evaluate \d+\.\d+ s", out)
    assert float(re.search(r"max \|Δ\| (\S+) \|", ours).group(1)) <= 1e-9
