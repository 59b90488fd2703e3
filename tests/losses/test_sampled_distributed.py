"""Two DDP processes (gloo, CPU) sharing in-batch negatives through ``gather_negatives``: the mean
of the ranks' losses and every parameter's gradient equal one process with both ranks' batches."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from two_processes import spawn

from torch_ndcg.losses.sampled import gather_negatives, in_batch_softmax_loss

WORLD, BATCH, FEATURES, DIM = 2, 5, 4, 3


def towers() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.ModuleDict(
        {"query": torch.nn.Linear(FEATURES, DIM), "item": torch.nn.Sequential(torch.nn.Linear(FEATURES, DIM), torch.nn.Tanh())}
    ).double()


class TwoTower(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.towers = towers()

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.towers["query"](users), self.towers["item"](items)


def data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Both ranks' batches (rank r holds rows r·B … (r+1)·B − 1): users, their positive items,
    the items' ids (one id repeated across the ranks: an accidental hit) and log q."""
    gen = torch.Generator().manual_seed(1)
    users = torch.randn(WORLD * BATCH, FEATURES, dtype=torch.float64, generator=gen)
    items = torch.randn(WORLD * BATCH, FEATURES, dtype=torch.float64, generator=gen)
    ids = torch.arange(WORLD * BATCH)
    ids[BATCH + 1] = ids[2]
    items[BATCH + 1] = items[2]
    log_q = torch.log(torch.rand(WORLD * BATCH, dtype=torch.float64, generator=gen) / (WORLD * BATCH))
    return users, items, ids, log_q


def loss_of(model: torch.nn.Module, rows: slice, gather: bool) -> torch.Tensor:
    users, items, ids, log_q = data()
    queries, embedded = model(users[rows], items[rows])
    return in_batch_softmax_loss(queries, embedded, item_ids=ids[rows], log_q=log_q[rows],
                                 temperature=0.5, gather_negatives=gather)  # fmt: skip


def worker(rank: int, port: int) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    try:
        reference = TwoTower()
        expected = loss_of(reference, slice(None), gather=False)
        expected.backward()
        model = torch.nn.parallel.DistributedDataParallel(TwoTower())
        loss = loss_of(model, slice(rank * BATCH, (rank + 1) * BATCH), gather=True)
        loss.backward()  # DDP averages the ranks' gradients
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        torch.testing.assert_close(mean / WORLD, expected.detach(), rtol=0, atol=1e-6)
        for (name, got), want in zip(model.module.named_parameters(), reference.parameters()):
            torch.testing.assert_close(got.grad, want.grad, rtol=0, atol=1e-6, msg=f"gradient of {name}")
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_two_ranks_with_gathered_negatives_equal_one_process_with_both_batches() -> None:
    spawn(worker, WORLD)


def test_outside_distributed_gathering_is_the_identity() -> None:
    items = torch.randn(3, 2)
    assert gather_negatives(items) is items
    with pytest.raises(TypeError, match="local"):
        gather_negatives(torch.tensor(1.0))
