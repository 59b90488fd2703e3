"""Two processes (gloo, CPU) each update with their own shard; every rank's compute() is the union's value."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.distributed as dist
from two_processes import spawn

import torch_ndcg as tn

pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
from torch_ndcg import metrics as M  # noqa: E402
from torch_ndcg import ranked

WORLD = 2
SCORED = {
    M.NDCG: tn.ndcg, M.DCG: tn.dcg, M.MRR: tn.mrr, M.Precision: tn.precision, M.Recall: tn.recall,
    M.HitRate: tn.hit_rate, M.AveragePrecision: tn.average_precision,
}
K = (1, 5, None)
EMPTY_QUERIES = [3, 8]  # rank 1 holds only these: nothing relevant in them


def data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same 11 queries × 9 items (ties, graded labels, ragged lists) on every rank."""
    generator = torch.Generator().manual_seed(7)
    scores = torch.randint(0, 4, (11, 9), generator=generator).float()
    relevance = torch.randint(0, 3, (11, 9), generator=generator)
    relevance[EMPTY_QUERIES] = 0
    mask = torch.arange(9) < torch.randint(2, 10, (11, 1), generator=generator)
    return scores, relevance, mask


def options(cls: type, empty: str) -> dict:
    return {} if cls is M.DCG else {"empty": empty}


def check(result: torch.Tensor | dict, expected: torch.Tensor, what: str) -> None:
    values = torch.stack(list(result.values())) if isinstance(result, dict) else result
    torch.testing.assert_close(values, expected, msg=lambda text: f"rank {dist.get_rank()}, {what}: {text}")


def dense_case(rank: int) -> None:
    scores, relevance, mask = data()
    mine = EMPTY_QUERIES if rank == 1 else [q for q in range(11) if q not in EMPTY_QUERIES]
    for cls, function in SCORED.items():
        for empty in ("zero", "skip") if cls is not M.DCG else ("zero",):
            metric = cls(k=K, **options(cls, empty))
            for part in (mine[:4], mine[4:]):  # uneven: rank 0 has 4 + 5 queries, rank 1 has 2 + 0
                if part:
                    metric.update(scores[part], relevance[part], mask=mask[part])
            expected = function(scores, relevance, K, mask=mask, **options(cls, empty))
            check(metric.compute(), expected, f"dense {cls.__name__} empty={empty}")
    check(metric.compute(), expected, "computed again: the local state came back after the sync")
    # Rows still waiting at a sync are evaluated by their own rank; after compute the local state,
    # waiting rows included, comes back: later updates neither lose them nor count them twice.
    again = M.NDCG(k=5)
    again.update(scores[mine], relevance[mine], mask=mask[mine])
    again.compute()
    again.update(scores[mine[:2]], relevance[mine[:2]], mask=mask[mine[:2]])
    twice = [q for q in range(11) if q not in EMPTY_QUERIES][:2] + EMPTY_QUERIES  # each rank's mine[:2]
    union = list(range(11)) + twice
    check(again.compute(), tn.ndcg(scores[union], relevance[union], 5, mask=mask[union]), "updated after a compute")
    idle = M.NDCG(k=5)
    if rank == 0:
        idle.update(scores, relevance, mask=mask)
    check(idle.compute(), tn.ndcg(scores, relevance, 5, mask=mask), "dense, rank 1 saw no batch")


def flat_case(rank: int) -> None:
    scores, relevance, mask = data()
    ids = torch.arange(11).unsqueeze(-1).expand_as(scores) + 1000
    s, r, i = (t[mask] for t in (scores, relevance, ids))
    # Each query stays on one rank (a query split across ranks is not supported): rank 1 gets the
    # queries of even id, in batches that cut queries in two, which the rank joins again.
    on_rank_1 = i % 2 == 0
    mine = on_rank_1 if rank == 1 else ~on_rank_1
    for cls, function in SCORED.items():
        for empty in ("zero", "skip") if cls is not M.DCG else ("zero",):
            metric = cls(k=K, **options(cls, empty))
            rows = mine.nonzero().squeeze(-1)
            for part in (rows[:13], rows[13:]):
                metric.update(s[part], r[part], indexes=i[part])
            expected = function(scores, relevance, K, mask=mask, **options(cls, empty))
            check(metric.compute(), expected, f"flat {cls.__name__} empty={empty}")
    idle = M.Recall(k=3)
    if rank == 0:
        idle.update(s, r, indexes=i)
    check(idle.compute(), tn.recall(scores, relevance, 3, mask=mask), "flat, rank 1 saw no batch")


def ranked_case(rank: int) -> None:
    ranked_ids = torch.tensor([[4, 2, 9, -1], [1, 5, 3, 7], [8, 6, -1, -1], [2, 4, 6, 8]])
    target_ids = torch.tensor([[2, 4, 7], [3, -1, -1], [-1, -1, -1], [0, -1, -1]])
    target_relevance = torch.tensor([[2.0, 1.0, 3.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    mine = [2, 3] if rank == 1 else [0, 1]  # rank 1: one empty truth, one miss
    metric = M.RankedNDCG(k=(2, None), empty="skip")
    metric.update(ranked_ids[mine], target_ids[mine], target_relevance[mine])
    expected = ranked.ndcg(ranked_ids, target_ids, target_relevance, (2, None), empty="skip")
    check(metric.compute(), expected, "ranked")


def aggregation_case(rank: int) -> None:
    scores, relevance, mask = data()
    mine = list(range(6)) if rank == 0 else list(range(6, 11))
    values = tn.mrr(scores, relevance, K, mask=mask, empty="skip", reduction="none")
    metric = M.MRR(k=K, aggregation="median", empty="skip")
    metric.update(scores[mine], relevance[mine], mask=mask[mine])
    check(metric.compute(), torch.stack([v[~v.isnan()].median() for v in values.unbind(-1)]), "median")
    idle = M.NDCG(k=5, aggregation="max")
    if rank == 0:
        idle.update(scores, relevance, mask=mask)
    check(idle.compute(), tn.ndcg(scores, relevance, 5, mask=mask, reduction="none").max(), "max, rank 1 idle")
    weight = torch.arange(11, dtype=torch.float32)
    weighted = M.NDCG(k=K)
    weighted.update(scores[mine], relevance[mine], mask=mask[mine], sample_weight=weight[mine])
    check(weighted.compute(), tn.ndcg(scores, relevance, K, mask=mask, sample_weight=weight), "sample_weight")


def worker(rank: int, port: int) -> None:
    # the rank that sees no batch gets torchmetrics' "compute before update" warning: expected here
    warnings.filterwarnings("ignore", message="The ``compute`` method")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    try:
        dense_case(rank)
        flat_case(rank)
        ranked_case(rank)
        aggregation_case(rank)
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_two_ranks_compute_the_value_of_the_union() -> None:
    spawn(worker, WORLD)
