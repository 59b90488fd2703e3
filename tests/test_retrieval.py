"""``tn.retrieval.top_k``: the chunked scan returns the dense ``topk`` for every chunk size, never an
excluded item, feeds the ranked metrics to the dense metrics' values, and its peak memory does
not grow with the catalogue."""

from __future__ import annotations

import pytest
import torch
from peak_memory import peak_growth

import torch_ndcg as tn


def _embeddings(batch=5, items=23, dim=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch, dim, dtype=torch.float64, generator=gen), torch.randn(items, dim, dtype=torch.float64, generator=gen)


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 23, 100])
@pytest.mark.parametrize("k", [1, 5, 23, 30])
def test_chunked_scan_is_the_dense_top_k(chunk_size, k):
    queries, items = _embeddings()
    found = tn.retrieval.top_k(queries, items, k, chunk_size=chunk_size)
    dense = (queries @ items.T).topk(min(k, 23), dim=1)
    torch.testing.assert_close(found.scores, dense.values)
    assert torch.equal(found.ids, dense.indices)


def test_excluded_items_are_never_returned_and_short_lists_are_padded():
    queries, items = _embeddings(items=6)
    exclude = torch.tensor([[0, 1, 2, -1], [5, 5, -1, -1], [-1, -1, -1, -1], [0, 1, 2, 3], [4, 0, 2, 1]])
    found = tn.retrieval.top_k(queries, items, 4, chunk_size=2, exclude=exclude)
    scores = queries @ items.T
    for b in range(5):
        seen = {int(i) for i in exclude[b] if i >= 0}
        ranked = [i for i in scores[b].argsort(descending=True).tolist() if i not in seen][:4]
        assert found.ids[b].tolist() == ranked + [-1] * (4 - len(ranked))
    assert torch.all(found.scores[found.ids == -1] == -torch.inf)


def test_its_ids_give_the_ranked_metrics_the_dense_metrics_values():
    queries, items = _embeddings(batch=8, items=40, seed=1)
    gen = torch.Generator().manual_seed(2)
    targets = torch.stack([torch.randperm(40, generator=gen)[:3] for _ in range(8)])
    relevance = torch.zeros(8, 40).scatter_(1, targets, 1.0)
    found = tn.retrieval.top_k(queries, items, 10, chunk_size=6)
    expected = tn.ndcg(queries @ items.T, relevance, 10)
    torch.testing.assert_close(tn.ranked.ndcg(found.ids, targets, k=10), expected.float())
    metrics = pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]") and tn.metrics
    metric = metrics.RankedNDCG(k=10)
    for rows in (slice(0, 3), slice(3, 8)):
        metric.update(found.ids[rows], targets[rows])
    torch.testing.assert_close(metric.compute(), expected.float())


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda q, i: tn.retrieval.top_k(q, i[:, :3], 2), "same D"),
        (lambda q, i: tn.retrieval.top_k(q, i, 0), "k must be"),
        (lambda q, i: tn.retrieval.top_k(q, i, 2, chunk_size=0), "chunk_size"),
        (lambda q, i: tn.retrieval.top_k(q, i, 2, exclude=torch.zeros(5, 2)), "exclude"),
        (lambda q, i: tn.retrieval.top_k(q, i, 2, exclude=torch.zeros(4, 2, dtype=torch.long)), "exclude"),
        (lambda q, i: tn.retrieval.top_k(q.long(), i, 2), "floating point"),
    ],
)
def test_bad_arguments_are_refused_naming_them(call, match):
    queries, items = _embeddings()
    with pytest.raises((ValueError, TypeError), match=match):
        call(queries, items)


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_catalogue():
    setup = (
        "import torch, torch_ndcg as tn; torch.manual_seed(0)\n"
        "queries = torch.randn(500, 64); items = torch.randn({n}, 64)\n"
    )
    code = "tn.retrieval.top_k(queries, items, 10, chunk_size=4096)"
    # The allocator's own high-water mark settles after some hundred chunks: compare past that.
    small = peak_growth(setup.format(n=800_000), code)
    large = peak_growth(setup.format(n=1_600_000), code)
    # One chunk's [500 × 4096] scores are 8 MiB; a dense [500 × 1,600,000] matrix is 3 GiB.
    assert large < small + 8 * 2**20, (small, large)
    assert large < 64 * 2**20, large
