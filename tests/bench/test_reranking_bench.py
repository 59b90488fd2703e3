"""Smoke test: the reranking benchmark runs on tiny sizes and both evaluators agree."""

import pytest

pytest.importorskip("sentence_transformers", reason="the benchmark's reference, in the sentence-transformers extra")

from benchmarks import reranking  # noqa: E402


def test_reranking_benchmark_quick_runs_and_agrees(capsys):
    reranking.main(quick=True, argv=[])
    out = capsys.readouterr().out
    assert "40 queries × 20 candidates" in out
    assert "sentence-transformers" in out and "torch_ndcg" in out
    assert "'base_ndcg@10'" in out and "'map'" in out
    assert out.rstrip().endswith("ok") and "FAIL" not in out
