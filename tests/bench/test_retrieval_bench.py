"""The catalogue-scale evaluation benchmark runs end to end at tiny sizes, prints its table, and
its baseline finds the same items as ``tn.retrieval.top_k``."""

import torch

from benchmarks import retrieval

import torch_ndcg as tn


def test_retrieval_benchmark_quick(capsys):
    results = retrieval.table(quick=True)
    out = capsys.readouterr().out
    assert "target:" in out
    rows = [line for line in out.splitlines() if line.startswith(tuple(retrieval.SEARCHES))]
    assert [row[:20].strip() for row in rows] == list(retrieval.SEARCHES)
    assert all(result["s"] > 0 for result in results.values())


def test_the_baseline_finds_the_same_items():
    queries, items = torch.randn(7, retrieval.DIM), torch.randn(3 * retrieval.CHUNK + 5, retrieval.DIM)
    found = tn.retrieval.top_k(queries, items, retrieval.K, chunk_size=retrieval.CHUNK)
    assert torch.equal(retrieval.plain(queries, items), found.ids)
