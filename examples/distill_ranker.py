"""Distil a ranker: a large teacher trained on labels, a small student trained only on its scores.

    python examples/distill_ranker.py                    # distil with distill_listnet_loss
    python examples/distill_ranker.py --loss all         # one distilled student per distillation loss
    python examples/distill_ranker.py --loss adr_mse --temperature 0.5

On the synthetic LETOR set (:func:`torch_ndcg.data.synthetic_letor`), three scorers are trained
with the same optimiser, epochs and model selection (the epoch with the best validation
NDCG@10): the teacher, a wide MLP trained on the graded labels; the distilled student, a small
MLP that never sees a label, only the teacher's scores of the training items; and a label
student, the same small MLP trained on the labels. The table gives each one's test NDCG@10.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable

import torch
from torch import Tensor, nn

import torch_ndcg as tn
from torch_ndcg.data import RankingDataset, synthetic_letor

CUTOFF = 10
GAIN = "exp2"
CONVENTIONS = (f"NDCG@{CUTOFF}: {GAIN} gain (2^label − 1), log2 discount, tied scores averaged, "
               "test queries with no relevant item skipped")

# Each takes the student's scores, the teacher's scores and the mask.
DISTILL_LOSSES: dict[str, Callable[..., Tensor]] = {
    "listnet": lambda s, t, mask, temperature: tn.distill_listnet_loss(s, t, mask=mask, temperature=temperature),
    "listmle": lambda s, t, mask, temperature: tn.distill_listmle_loss(s, t, mask=mask),
    "ranknet": lambda s, t, mask, temperature: tn.distill_ranknet_loss(s, t, mask=mask, temperature=temperature),
    "margin_mse": lambda s, t, mask, temperature: tn.margin_mse_loss(s, t, mask=mask),
    "adr_mse": lambda s, t, mask, temperature: tn.adr_mse_loss(s, t, mask=mask, temperature=temperature),
}
LOSS_NAMES = {"listnet": "distill_listnet_loss", "listmle": "distill_listmle_loss",
              "ranknet": "distill_ranknet_loss", "margin_mse": "margin_mse_loss", "adr_mse": "adr_mse_loss"}


def mlp(num_features: int, hidden: list[int]) -> nn.Module:
    layers: list[nn.Module] = []
    width = num_features
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers, nn.Flatten(-2))


def parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_ndcg(model: nn.Module, dataset: RankingDataset) -> tuple[float, int, int]:
    """Mean NDCG@10 over the queries that have a relevant item, that count, and all queries."""
    model.eval()
    with torch.no_grad():
        values = torch.cat([
            tn.ndcg(model(features), relevance, CUTOFF, mask=mask, gain=GAIN, empty="skip", reduction="none")
            for features, relevance, mask in dataset.batches(256)
        ])
    model.train()
    return values.nanmean().item(), int(values.isfinite().sum()), len(values)


def train(model: nn.Module, splits: dict[str, RankingDataset], target: Callable[[Tensor, Tensor], Tensor],
          loss: Callable[[Tensor, Tensor, Tensor], Tensor], args: argparse.Namespace, seed: int) -> nn.Module:
    """Adam for ``args.epochs`` epochs on ``loss(scores, target(features, relevance), mask)``;
    returns the epoch with the best validation NDCG@10."""
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(seed)
    best, best_state = -1.0, copy.deepcopy(model.state_dict())
    for _ in range(args.epochs):
        for features, relevance, mask in splits["train"].batches(args.batch_size, shuffle=True, generator=generator):
            optimiser.zero_grad()
            loss(model(features), target(features, relevance), mask).backward()
            optimiser.step()
        score = test_ndcg(model, splits["vali"])[0]
        if score > best:
            best, best_state = score, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return model


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loss", choices=[*DISTILL_LOSSES, "all"], default="listnet",
                        help="the distillation loss of the student (all: one student per loss)")
    parser.add_argument("--temperature", type=float, default=1.0, help="T of the losses that have one")
    parser.add_argument("--queries", type=int, nargs=3, default=[600, 200, 200], metavar=("TRAIN", "VALI", "TEST"))
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--teacher-hidden", type=int, nargs="+", default=[128, 128])
    parser.add_argument("--student-hidden", type=int, nargs="+", default=[32])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    start = time.perf_counter()
    raw = synthetic_letor(tuple(args.queries), num_features=args.features, seed=args.seed)
    mean, std = raw["train"].feature_stats()
    splits = {name: split.standardized(mean, std) for name, split in raw.items()}
    labels = lambda features, relevance: relevance  # noqa: E731
    label_loss = lambda scores, relevance, mask: tn.listnet_loss(scores, relevance, mask=mask)  # noqa: E731

    torch.manual_seed(args.seed)
    teacher = train(mlp(args.features, args.teacher_hidden), splits, labels, label_loss, args, args.seed)
    teacher.eval()

    def teacher_scores(features: Tensor, relevance: Tensor) -> Tensor:
        with torch.no_grad():
            return teacher(features)

    rows = [("teacher", teacher, "labels (listnet_loss)")]
    for name in DISTILL_LOSSES if args.loss == "all" else [args.loss]:
        torch.manual_seed(args.seed + 1)
        loss = lambda s, t, mask, name=name: DISTILL_LOSSES[name](s, t, mask, args.temperature)  # noqa: E731
        student = train(mlp(args.features, args.student_hidden), splits, teacher_scores, loss, args, args.seed + 1)
        rows.append((f"distilled student ({name})", student, f"teacher scores only ({LOSS_NAMES[name]})"))
    torch.manual_seed(args.seed + 1)
    label_student = train(mlp(args.features, args.student_hidden), splits, labels, label_loss, args, args.seed + 1)
    rows.append(("label student", label_student, "labels (listnet_loss)"))
    seconds = time.perf_counter() - start

    results = {}
    teacher_value = test_ndcg(teacher, splits["test"])[0]
    print(CONVENTIONS)
    header = f"| {'model':<36} | {'MLP':<16} | {'params':>7} | {'trained on':<42} | {'test NDCG@10':>12} | {'of teacher':>10} |"
    print(header)
    print("|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|")
    for name, model, source in rows:
        value, counted, total = test_ndcg(model, splits["test"])
        hidden = args.teacher_hidden if model is teacher else args.student_hidden
        shape = "-".join(map(str, [args.features, *hidden, 1]))
        print(f"| {name:<36} | {shape:<16} | {parameters(model):>7} | {source:<42} | {value:>12.4f} | "
              f"{value / teacher_value:>9.1%} |")
        results[name] = value
    print(f"{counted} of {total} test queries have a relevant item; trained in {seconds:.1f} s "
          f"on {torch.get_num_threads()} thread(s)")
    return {"ndcg@10": results, "seconds": seconds, "test_queries": (counted, total)}


if __name__ == "__main__":
    main()
