"""Train a two-tower retriever with in-batch negatives shared across processes, and evaluate it by
a chunked top-k over the catalogue.

    torchrun --nproc_per_node 2 examples/two_tower_retrieval.py                 # synthetic, 2 CPU processes
    torchrun --nproc_per_node 2 examples/two_tower_retrieval.py --data ml-100k --cache /tmp/recbole
    python examples/two_tower_retrieval.py --quick                              # one process, seconds

A user tower and an item tower (an embedding, a linear layer, L2 normalisation) score a pair by
their cosine. Each step takes a global batch of (user, item) training pairs; each process gets
its ``--batch-size`` of them and ``tn.sampled.in_batch_softmax_loss(..., gather_negatives=True)``
scores every user against every process's items (``world × batch-size`` candidates), with the
item's in-batch popularity subtracted (the logQ correction; ``--no-logq`` to leave it out) and a
repeated item left out as an accidental hit. DDP averages the gradients, so the processes
together train exactly as one process with the whole global batch.

Evaluation embeds the whole catalogue once and asks ``tn.retrieval.top_k`` for each user's top
10 (items seen in training, and for test in validation, excluded), in chunks of ``--chunk-size``
items: no ``[users × items]`` matrix is made. ``tn.ranked.ndcg`` scores those ids against the
held-out items; the users are shared out across the processes and the sums all-reduced. The
run keeps its best validation epoch and reports its test NDCG@10 and Recall@10.

Data as in ``recommend_full_catalog.py`` (the same split: each user's latest 10% to test, the
10% before to validation): its synthetic stand-in, ``ml-100k`` (read out of RecBole's wheel), or
a ratings file.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import Tensor, nn

import torch_ndcg as tn
from recommend_full_catalog import load
from torch_ndcg.data import CatalogueSplits

K = 10


class Tower(nn.Module):
    """An id's embedding, a linear layer, then L2 normalisation (cosine scores)."""

    def __init__(self, count: int, dim: int):
        super().__init__()
        self.embedding = nn.Embedding(count, dim)
        self.linear = nn.Linear(dim, dim)
        nn.init.normal_(self.embedding.weight, std=0.1)

    def forward(self, ids: Tensor) -> Tensor:
        return nn.functional.normalize(self.linear(self.embedding(ids)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, users: int, items: int, dim: int):
        super().__init__()
        self.users, self.items = Tower(users, dim), Tower(items, dim)

    def forward(self, users: Tensor, items: Tensor) -> tuple[Tensor, Tensor]:
        return self.users(users), self.items(items)


def padded_ids(rows: Tensor) -> Tensor:
    """``[B, n_items]`` bool rows → ``[B, S]`` item ids, padded with -1."""
    counts = rows.sum(-1)
    ids = torch.full((rows.shape[0], max(int(counts.max()), 1)), -1, dtype=torch.long)
    users, items = rows.nonzero(as_tuple=True)
    starts = torch.cumsum(counts, 0) - counts
    ids[users, torch.arange(len(users)) - starts[users]] = items
    return ids


@torch.no_grad()
def evaluate(model: TwoTower, splits: CatalogueSplits, split: str, chunk_size: int) -> dict[str, float]:
    """NDCG@10 and Recall@10 over the users with held-out items in ``split``, this process's share
    of them, summed over the processes."""
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    users = splits.users(split)[rank::world]
    items = model.items(torch.arange(splits.n_items))
    found = tn.retrieval.top_k(model.users(users), items, K, chunk_size=chunk_size,
                               exclude=padded_ids(splits.seen(split, users)))  # fmt: skip
    targets = padded_ids(splits.relevance(split, users) > 0)
    totals = torch.tensor([
        tn.ranked.ndcg(found.ids, targets, k=K, reduction="sum").item(),
        tn.ranked.recall(found.ids, targets, k=K, reduction="sum").item(),
        float(len(users)),
    ], dtype=torch.float64)  # fmt: skip
    if dist.is_initialized():
        dist.all_reduce(totals)
    return {"ndcg": float(totals[0] / totals[2]), "recall": float(totals[1] / totals[2])}


def train(args: argparse.Namespace, splits: CatalogueSplits) -> dict:
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    torch.manual_seed(args.seed)  # the same initial towers on every process (DDP also broadcasts them)
    model = TwoTower(splits.n_users, splits.n_items, args.dim)
    trained = nn.parallel.DistributedDataParallel(model) if dist.is_initialized() else model
    optimiser = torch.optim.Adam(trained.parameters(), lr=args.lr)
    users, items = (splits.relevance("train", torch.arange(splits.n_users)) > 0).nonzero(as_tuple=True)
    counts = splits.item_counts("train").double()
    log_q = (counts / counts.sum()).clamp(min=1e-12).log().float()  # the chance that a training pair has the item
    gen = torch.Generator().manual_seed(args.seed)  # the same shuffle on every process
    step = world * args.batch_size
    history, best, best_state = [], -1.0, None
    for _ in range(args.epochs):
        order = torch.randperm(len(users), generator=gen)
        for start in range(0, len(order) - step + 1, step):  # whole global batches: every process gets batch-size pairs
            mine = order[start + rank * args.batch_size : start + (rank + 1) * args.batch_size]
            queries, embedded = trained(users[mine], items[mine])
            loss = tn.sampled.in_batch_softmax_loss(
                queries, embedded, item_ids=items[mine], log_q=None if args.no_logq else log_q[items[mine]],
                temperature=args.temperature, gather_negatives=True,
            )  # fmt: skip
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        history.append(evaluate(model, splits, "validation", args.chunk_size)["ndcg"])
        if history[-1] > best:
            best, best_state = history[-1], {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    return {"validation": history, "test": evaluate(model, splits, "test", args.chunk_size)}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="synthetic", help="'synthetic', 'ml-100k', or a u.data / ratings.csv / .inter file")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "torch_ndcg")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=256, help="pairs per process and step")
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--temperature", type=float, default=0.1)
    parser.add_argument("--no-logq", action="store_true", help="leave out the in-batch popularity correction")
    parser.add_argument("--chunk-size", type=int, default=512, help="items scored at once in the evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny synthetic data, 2 epochs")
    args = parser.parse_args(argv)
    for option in ("epochs", "batch_size", "dim", "chunk_size"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be ≥ 1")
    if args.quick:
        args.epochs, args.batch_size = 2, 32
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    torch.set_num_threads(1)
    distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    if distributed:
        dist.init_process_group("gloo")
    try:
        name, log = load(args.data, args.cache, args.quick)
        splits = log.split(test=0.1, validation=0.1)
        start = time.perf_counter()
        result = train(args, splits)
        if not distributed or dist.get_rank() == 0:
            world = dist.get_world_size() if distributed else 1
            print(f"data: {name}: {splits}")
            print(f"{world} process(es) × {args.batch_size} pairs per step, τ = {args.temperature}, "
                  f"{'no logQ' if args.no_logq else 'logQ'}; {args.epochs} epochs in {time.perf_counter() - start:.0f} s")  # fmt: skip
            print("validation NDCG@10 per epoch: " + " ".join(f"{v:.4f}" for v in result["validation"]))
            print(f"test at the best validation epoch: NDCG@{K} {result['test']['ndcg']:.4f}, "
                  f"Recall@{K} {result['test']['recall']:.4f}")  # fmt: skip
        if distributed:  # both processes leave together: gloo aborts one torn down while its peer still talks
            dist.barrier()
        return result
    finally:
        if distributed:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
