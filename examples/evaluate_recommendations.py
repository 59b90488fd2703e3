"""Score recommender top-k lists against held-out interactions with the ranked-list metrics.

    python examples/evaluate_recommendations.py
    python examples/evaluate_recommendations.py --users 2000 --items 1000 --k 20

Part 1 re-computes the worked examples of two NDCG tutorials (graded relevance and implicit
feedback) from Python lists of ids, next to the values those tutorials print. Part 2 builds a
synthetic implicit-feedback data set (users and items with hidden tastes), holds out a fifth of
each user's interactions, and compares three recommenders by NDCG@k, MRR and Recall@k of their
top-k lists: random, most-popular, and PureSVD (a low-rank reconstruction of the training
interactions; Cremonesi et al., "Performance of Recommender Algorithms on Top-N
Recommendation Tasks", RecSys 2010). Items a user interacted with in training are never
recommended to them again.
"""

from __future__ import annotations

import argparse

import torch
from torch import Tensor

import torch_ndcg as tn

# (name, recommended list, ground truth, k, NDCG the tutorial prints)
WORKED_EXAMPLES = [
    ("graded, list 1", ["A", "B", "C"], {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}, None, 0.6048882832133625),
    ("graded, list 2", ["D", "A", "C", "B", "E"], {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}, None, None),
    ("implicit, k=5", [6, 3, 8, 4, 5], {3, 4}, 5, 0.6509),
]
MEAN_OF_GRADED = 0.7356022113638424  # the tutorial's mean NDCG over the two graded lists


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for i, row in enumerate([header, *rows]):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def worked_examples() -> dict[str, float]:
    """The tutorials' lists through :func:`tn.from_lists` and the ranked metrics, one row each."""
    rows, values = [], {}
    for name, predicted, truth, k, expected in WORKED_EXAMPLES:
        ranked, target, relevance = tn.from_lists([predicted], [truth])
        ndcg = tn.ranked.ndcg(ranked, target, relevance, k=k).item()
        dcg = tn.ranked.dcg(ranked, target, relevance, k=k).item()
        mrr = tn.ranked.mrr(ranked, target, k=k).item()
        recall = tn.ranked.recall(ranked, target, relevance, k=k).item()
        values[name] = ndcg
        rows.append([name, str(predicted), f"{dcg:.4f}", f"{ndcg:.4f}", "-" if expected is None else f"{expected:.4f}",
                     f"{mrr:.4f}", f"{recall:.4f}"])
    mean = (values["graded, list 1"] + values["graded, list 2"]) / 2
    values["graded, mean"] = mean
    rows.append(["graded, mean", "both lists", "-", f"{mean:.4f}", f"{MEAN_OF_GRADED:.4f}", "-", "-"])
    print("Worked examples (k = the list's length unless given; linear gain, log2 discount):")
    print_table(["example", "recommended", "DCG", "NDCG", "tutorial NDCG", "MRR", "Recall"], rows)
    return values


def implicit_feedback(users: int, items: int, seed: int) -> tuple[Tensor, Tensor]:
    """Train and held-out ``[users, items]`` bool interactions from hidden low-rank tastes."""
    gen = torch.Generator().manual_seed(seed)
    tastes = torch.randn(users, 8, generator=gen) @ torch.randn(8, items, generator=gen) / 8**0.5
    popularity = torch.linspace(1.5, -1.5, items)  # a long tail: low item ids are popular
    # About 3% of all pairs are interactions, more for items close to the user's taste.
    logits = 1.5 * tastes + popularity - 4.0
    interacted = torch.rand(users, items, generator=gen) < torch.sigmoid(logits)
    held_out = interacted & (torch.rand(users, items, generator=gen) < 0.2)
    return interacted & ~held_out, held_out


def recommend(scores: Tensor, seen: Tensor, k: int) -> Tensor:
    """Top-``k`` item ids per user, never an item the user already has."""
    return scores.masked_fill(seen, -torch.inf).topk(k, dim=-1).indices


def padded_truth(held_out: Tensor) -> Tensor:
    """``[users, items]`` bool → ``[users, M]`` held-out item ids, padded with -1."""
    ids = torch.where(held_out, torch.arange(held_out.shape[1]), torch.full_like(held_out, -1, dtype=torch.long))
    return ids.sort(dim=-1, descending=True).values[:, : max(int(held_out.sum(dim=-1).max()), 1)]


def compare_recommenders(users: int, items: int, k: int, rank: int, seed: int) -> dict[str, dict[str, float]]:
    train, held_out = implicit_feedback(users, items, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    u, s, v = torch.svd_lowrank(train.float(), q=rank, niter=4, M=None)
    scorers = {
        "random": torch.rand(users, items, generator=gen),
        "most popular": train.float().sum(dim=0).expand(users, items),
        f"PureSVD (rank {rank})": (u * s) @ v.T,
    }
    target = padded_truth(held_out)
    # Users with nothing held out cannot be scored: left out of every mean (empty="skip").
    results = {}
    for name, scores in scorers.items():
        ranked = recommend(scores, train, k)
        results[name] = {
            f"NDCG@{k}": tn.ranked.ndcg(ranked, target, k=k, empty="skip").item(),
            "MRR": tn.ranked.mrr(ranked, target, k=k, empty="skip").item(),
            f"Recall@{k}": tn.ranked.recall(ranked, target, k=k, empty="skip").item(),
        }
    print(f"\n{users} users, {items} items, {int(train.sum())} training and {int(held_out.sum())} held-out "
          f"interactions; top-{k} lists:")
    keys = list(next(iter(results.values())))
    print_table(["recommender", *keys], [[name, *(f"{v[key]:.4f}" for key in keys)] for name, v in results.items()])
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--k", type=int, default=10, help="length of each recommended list")
    parser.add_argument("--rank", type=int, default=8, help="rank of the PureSVD recommender")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("users", "items", "k", "rank"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be ≥ 1")
    if args.k > args.items or args.rank > min(args.users, args.items):
        parser.error("--k must be ≤ --items and --rank ≤ min(--users, --items)")
    return {
        "worked": worked_examples(),
        "recommenders": compare_recommenders(args.users, args.items, args.k, args.rank, args.seed),
    }


if __name__ == "__main__":
    main()
