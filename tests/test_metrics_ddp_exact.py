"""Metric classes stay exact under DistributedSampler: with an id per query, every query counts once.

Two processes (gloo, CPU) draw 101 queries through ``DistributedSampler``, which repeats one
query so that both ranks get 51; with ``query_ids=`` (dense rows) or ``indexes=`` (flat items)
``compute()`` equals the single-process value, without ids the repeated query counts twice.
"""

from __future__ import annotations

import os
import warnings

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DistributedSampler

import torch_ndcg as tn

pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
from torch_ndcg import exact_ddp, metrics as M  # noqa: E402
from two_processes import free_port  # noqa: E402

WORLD = 2
QUERIES, ITEMS = 101, 12
K = (1, 5, None)


def data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """101 ragged queries; query 0 (the one the sampler repeats) ranks its only relevant item last."""
    generator = torch.Generator().manual_seed(3)
    scores = torch.randn(QUERIES, ITEMS, generator=generator)
    relevance = torch.randint(0, 4, (QUERIES, ITEMS), generator=generator)
    relevance[7] = 0  # one query with nothing relevant
    mask = torch.arange(ITEMS) < torch.randint(1, ITEMS + 1, (QUERIES, 1), generator=generator)
    mask[0] = True
    relevance[0] = 0
    relevance[0, scores[0].argmin()] = 1
    return scores, relevance, mask


def sampled(rank: int) -> list[int]:
    return list(DistributedSampler(range(QUERIES), num_replicas=WORLD, rank=rank, shuffle=False))


def batches(indices: list[int], size: int) -> list[list[int]]:
    return [indices[i : i + size] for i in range(0, len(indices), size)]


def check(result: torch.Tensor | dict, expected: torch.Tensor, what: str) -> None:
    values = torch.stack(list(result.values())) if isinstance(result, dict) else result
    torch.testing.assert_close(values, expected, rtol=1e-6, atol=1e-6,
                               msg=lambda text: f"rank {dist.get_rank()}, {what}: {text}")  # fmt: skip


def dense_cases(rank: int) -> None:
    scores, relevance, mask = data()
    ids = torch.arange(QUERIES) + 500
    mine = sampled(rank)
    assert len(mine) == 51 and (rank == 0 or mine[-1] == 0)  # query 0 is on both ranks
    for empty in ("zero", "skip"):
        expected = tn.ndcg(scores, relevance, K, mask=mask, empty=empty)
        exact, plain = M.NDCG(k=K, empty=empty), M.NDCG(k=K, empty=empty)
        for part in batches(mine, 8 if rank == 0 else 20):  # uneven: 7 batches on rank 0, 3 on rank 1
            exact.update(scores[part], relevance[part], mask=mask[part], query_ids=ids[part])
            plain.update(scores[part], relevance[part], mask=mask[part])
        check(exact.compute(), expected, f"dense with query_ids, empty={empty}")
        check(exact.compute(), expected, "computed again: the local state came back after the sync")
        counted_twice = torch.stack(list(plain.compute().values()))
        assert (counted_twice - expected).abs().max() > 1e-3, "without ids the repeated query counts twice"
    median = M.MRR(k=K, aggregation="median", empty="skip")
    for part in batches(mine, 16):
        median.update(scores[part], relevance[part], mask=mask[part], query_ids=ids[part])
    values = tn.mrr(scores, relevance, K, mask=mask, empty="skip", reduction="none")
    check(median.compute(), torch.stack([v[~v.isnan()].median() for v in values.unbind(-1)]), "median")
    idle = M.NDCG(k=K)
    if rank == 0:  # rank 1 sees no batch at all
        for part in batches(list(range(QUERIES)), 30):
            idle.update(scores[part], relevance[part], mask=mask[part], query_ids=ids[part])
    check(idle.compute(), tn.ndcg(scores, relevance, K, mask=mask), "dense with query_ids, rank 1 idle")


def flat_cases(rank: int) -> None:
    scores, relevance, mask = data()
    ids = (torch.arange(QUERIES) * 3 - 100).unsqueeze(-1).expand_as(scores)
    mine = torch.tensor(sampled(rank))
    s, r, i = (t[mine][mask[mine]] for t in (scores, relevance, ids))
    shuffled = torch.randperm(s.shape[0], generator=torch.Generator().manual_seed(rank))
    s, r, i = s[shuffled], r[shuffled], i[shuffled]
    expected = tn.ndcg(scores, relevance, K, mask=mask)
    metric = M.NDCG(k=K)
    size = 97 if rank == 0 else 250  # batches cut queries in two; uneven batch counts
    for start in range(0, s.shape[0], size):
        part = slice(start, start + size)
        metric.update(s[part], r[part], indexes=i[part])
    check(metric.compute(), expected, "flat with indexes")
    idle = M.NDCG(k=K)
    if rank == 1:  # rank 0 sees no batch at all
        everything = mask.nonzero(as_tuple=True)
        idle.update(scores[everything], relevance[everything], indexes=ids[everything])
    check(idle.compute(), expected, "flat, rank 0 idle")


def disagreement_cases(rank: int) -> None:
    scores, relevance, mask = data()
    metric = M.NDCG(k=5)
    query = 2 if rank == 0 else 3  # different data under the same id
    metric.update(scores[[query]], relevance[[query]], query_ids=torch.tensor([41]))
    with pytest.raises(ValueError, match="query id 41"):
        metric.compute()
    split = M.NDCG(k=5)  # one flat query, half on each rank; both halves score 1.0, the whole does not
    if rank == 0:
        half = (torch.tensor([3.0, 2.0, 1.0]), torch.tensor([2, 0, 0]))
    else:
        half = (torch.tensor([3.0, 2.0]), torch.tensor([1, 0]))
    split.update(*half, indexes=torch.full((half[0].shape[0],), 17))
    with pytest.raises(ValueError, match="query id 17 is seen with different items"):
        split.compute()
    failing = M.NDCG(k=5, gain="exp2")
    labels = torch.full((4,), 5000) if rank == 1 else torch.tensor([1, 0, 2, 0])  # 2**5000 overflows
    failing.update(torch.randn(4), labels, indexes=torch.tensor([rank, rank, rank, rank]))
    with pytest.raises(ValueError):  # raised on both ranks, neither waits for the other
        failing.compute()


def worker(rank: int, port: int) -> None:
    warnings.filterwarnings("ignore", message="The ``compute`` method")  # the idle rank's warning
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    try:
        for case in (dense_cases, flat_cases, disagreement_cases):
            case(rank)
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_two_ranks_count_each_query_once() -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD, join=True)


# One process: the same rules without a sampler.


def test_query_ids_count_each_query_once():
    scores, relevance, mask = data()
    ids = torch.arange(QUERIES)
    metric = M.NDCG(k=K)
    metric.update(scores[:60], relevance[:60], mask=mask[:60], query_ids=ids[:60])
    metric.update(scores[40:], relevance[40:], mask=mask[40:], query_ids=ids[40:])  # 20 queries again
    torch.testing.assert_close(torch.stack(list(metric.compute().values())), tn.ndcg(scores, relevance, K, mask=mask))


def test_rows_with_and_without_ids_mix():
    scores, relevance, mask = data()
    metric = M.NDCG(k=5)
    metric.update(scores[:50], relevance[:50], mask=mask[:50])
    metric.update(scores[50:], relevance[50:], mask=mask[50:], query_ids=torch.arange(50, QUERIES))
    metric.update(scores[50:60], relevance[50:60], mask=mask[50:60], query_ids=torch.arange(50, 60))
    torch.testing.assert_close(metric.compute(), tn.ndcg(scores, relevance, 5, mask=mask))


def test_flat_ids_and_dense_ids_are_one_key_space():
    scores, relevance, _ = data()
    metric = M.NDCG(k=5)
    metric.update(scores[:3], relevance[:3], query_ids=torch.tensor([10, 11, 12]))
    metric.update(scores[2], relevance[2], indexes=torch.full((ITEMS,), 12))  # query 12 again, flat
    torch.testing.assert_close(metric.compute(), tn.ndcg(scores[:3], relevance[:3], 5))


def test_disagreeing_values_name_the_id():
    scores, relevance, _ = data()
    metric = M.NDCG(k=5)
    metric.update(scores[:2], relevance[:2], query_ids=torch.tensor([8, 9]))
    metric.update(scores[2:3], relevance[2:3], query_ids=torch.tensor([9]))
    with pytest.raises(ValueError, match="query id 9 "):
        metric.compute()


def test_an_id_seen_with_other_items_is_refused_even_when_the_values_agree():
    metric = M.NDCG(k=5)
    metric.update(torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[2, 0, 0]]), query_ids=torch.tensor([9]))
    metric.update(torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[1, 0, 0]]), query_ids=torch.tensor([9]))
    with pytest.raises(ValueError, match="query id 9 is seen with different items .3 items each, with different"):
        metric.compute()  # both rows score 1.0
    metric = M.NDCG(k=5)
    metric.update(torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[2, 0, 0]]), query_ids=torch.tensor([9]))
    metric.update(torch.tensor([[3.0, 2.0, 1.0, 0.0]]), torch.tensor([[2, 0, 0, 0]]), query_ids=torch.tensor([9]))
    with pytest.raises(ValueError, match="query id 9 is seen with different items .3 and 4 items"):
        metric.compute()


def test_a_repeat_counts_once_padded_or_not_and_in_either_form():
    # The same query: three real items, labels in another order, padded, flat, or in float64.
    metric = M.NDCG(k=2)
    metric.update(torch.tensor([[0.1, 0.9, 0.5]]), torch.tensor([[0, 2, 1]]), query_ids=torch.tensor([3]))
    metric.update(torch.tensor([[0.9, 0.5, 0.1, 7.0]]), torch.tensor([[2.0, 1.0, 0.0, 3.0]], dtype=torch.float64),
                  mask=torch.tensor([[True, True, True, False]]), query_ids=torch.tensor([3]))  # fmt: skip
    metric.update(torch.tensor([0.5, 0.1, 0.9]), torch.tensor([1, 0, 2]), indexes=torch.tensor([3, 3, 3]))
    assert metric.compute().item() == pytest.approx(1.0)


def test_bad_query_ids_are_refused():
    scores, relevance, _ = data()
    metric = M.NDCG(k=5)
    with pytest.raises(ValueError, match="one id per row"):
        metric.update(scores[:3], relevance[:3], query_ids=torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="query_ids"):
        metric.update(scores[:2], relevance[:2], query_ids=torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="sample_weight"):
        metric.update(scores[:2], relevance[:2], query_ids=torch.tensor([1, 2]), sample_weight=torch.ones(2))
    with pytest.raises(ValueError, match="indexes"):
        metric.update(scores[0], relevance[0], indexes=torch.zeros(ITEMS, dtype=torch.long), query_ids=torch.tensor([1]))


def test_state_is_per_query():
    scores, relevance, _ = data()
    metric = M.NDCG(k=K)
    metric.update(scores, relevance, query_ids=torch.arange(QUERIES))
    values, ids, contents = exact_ddp.kept(metric)
    kept = sum(t.numel() * t.element_size() for t in (*values, *ids, *contents))
    # a float64 value per cutoff, an int64 id, item count and label checksum per query
    assert kept == QUERIES * (8 * len(K) + 24)


def test_differently_configured_metrics_do_not_share_kept_values():
    """MetricCollection shares the states of metrics whose states agree after a first batch:
    NDCG@1 and NDCG@5 both give 1 on this one, and not later."""
    from torchmetrics import MetricCollection

    scores, relevance, _ = data()
    collection = MetricCollection({"at1": M.NDCG(k=1), "at5": M.NDCG(k=5)})
    collection.update(torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[2, 1, 0]]), query_ids=torch.tensor([0]))
    collection.update(scores[:20], relevance[:20], query_ids=torch.arange(1, 21))
    result = collection.compute()
    for name, k in (("at1", 1), ("at5", 5)):
        later = tn.ndcg(scores[:20], relevance[:20], k, reduction="none")
        torch.testing.assert_close(result[name], torch.cat([later.new_ones(1), later]).mean())


def test_rows_that_ignore_index_empties_drop_their_query_ids_too() -> None:
    scores = torch.tensor([[0.9, 0.1], [0.5, 0.4], [0.2, 0.7]])
    relevance = torch.tensor([[1, 0], [-100, -100], [0, 1]])
    metric = tn.metrics.NDCG(ignore_index=-100)
    metric.update(scores, relevance, query_ids=torch.tensor([4, 5, 6]))
    metric.update(scores[[0]], relevance[[0]], query_ids=torch.tensor([4]))  # a repeat counts once
    assert metric.compute().item() == pytest.approx(1.0)
