"""Train rankers from simulated clicks (naive, IPS, DLA) and compare them with a ranker trained on labels.

    python examples/train_from_clicks.py                          # synthetic LETOR set, seed 0
    python examples/train_from_clicks.py --seeds 0 1 2            # the table of examples/README.md
    python examples/train_from_clicks.py --data MQ2008/Fold1      # a LETOR or LightGBM fold folder

``--data`` names a fold folder, or a fold inside the LETOR data folder (``--letor-dir``, else the
environment variable ``TORCH_NDCG_LETOR``, else ``../shared/data/letor`` next to the repository):
as a folder there, or inside one of its ``.tar.gz`` archives (read into a temporary folder, never
into the repository).

1. A *full-information* ranker is trained on every training label (the chosen loss, ``exp2``
   gains), the ceiling.
2. A *logging* ranker is trained on a small share of the labelled training queries; its
   rankings of the training queries are what users see.
3. ``--sessions`` sessions per training query are simulated with a position-based click model
   (examination ``(1/rank)^η``, click probabilities ``ε⁻ + (ε⁺ − ε⁻)(2^y − 1)/(2^{y_max} − 1)``,
   ``y_max`` the data's top grade: the largest training label, or ``--max-label``). Each
   session swaps the items at rank 1 and a random rank ``k`` with probability 1/2 (Joachims et al.
   2017's intervention), so the propensities can be *estimated* from these same clicks: the
   ratios of clicks at ranks ``k`` and 1 per ``k`` (``propensities_from_swaps``), smoothed by a
   power law ``k^-η̂`` fitted to them (least squares in log space), since deep ranks get few
   clicks.
4. Three rankers learn from the clicks alone, with the IPS form of the chosen loss (``--loss``:
   ``ips_softmax_loss`` or ``ips_lambda_loss``; propensities floored at ``--clip``): *naive*
   (every propensity 1), *IPS* (the estimated propensities) and *DLA* (propensities learnt
   jointly with the ranker, ``DualLearning``; the swaps are not used).

Every ranker keeps its best epoch on the validation queries: the full-information ranker by
their NDCG@10 (labels), the click rankers by the IPS-estimated DCG@10 (``ips_dcg``) of the
validation queries' own simulated clicks, each with its own propensities: no label is read.
Test NDCG@10 (``exp2`` gain, test queries with no relevant item skipped) is measured on the true
labels for every ranker.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

import torch_ndcg as tn
from torch_ndcg.clicks import Clicks, DualLearning, ips_lambda_loss, ips_softmax_loss, logged_ranks, pbm_clicks
from torch_ndcg.clicks import ips_dcg, propensities_from_swaps, swap_intervention
from torch_ndcg.data import RankingDataset, read_letor_fold, synthetic_letor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_ranker import MLPScorer  # noqa: E402

CUTOFF = 10
DEFAULT_LETOR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "letor"
# Each loss family as (the label loss, its IPS form on clicks).
LOSSES = {
    "softmax": (lambda s, y, mask: tn.softmax_loss(s, y, mask=mask, gain="exp2"), ips_softmax_loss),
    "lambda": (lambda s, y, mask: tn.lambda_loss(s, y, mask=mask, gain="exp2"), ips_lambda_loss),
}


@dataclass(frozen=True)
class Padded:
    """Every query of a split as one padded batch."""

    features: Tensor  # [Q, N, F]
    relevance: Tensor  # [Q, N]
    mask: Tensor  # [Q, N]

    @classmethod
    def of(cls, dataset: RankingDataset) -> Padded:
        return cls(*next(dataset.batches(len(dataset))))


@dataclass(frozen=True)
class ClickLog:
    """The simulated sessions of the training queries: ``[Q, S, N]`` clicks and shown ranks."""

    clicks: Tensor
    ranks: Tensor
    estimated: Tensor  # [N] propensities of ranks 1..N estimated from the swaps

    def target(self, rows: Tensor, propensities) -> Clicks:
        """The sessions of the queries ``rows`` as one ``[B, N]`` target: each item's mean clicks
        over its sessions, with the propensity that gives its mean IPS weight, ``mean c / mean(c/p)``
        (a common rank in every session: that rank's propensity). Exact for a loss linear in the
        weights; ``propensities(ranks)`` gives the propensities of the shown ranks."""
        clicks = self.clicks[rows]
        mean_clicks = clicks.mean(1)
        mean_weights = (clicks / propensities(self.ranks[rows])).mean(1)
        return Clicks(mean_clicks, torch.where(mean_weights > 0, mean_clicks / mean_weights, 1.0))


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="synthetic",
                        help="'synthetic', a LETOR / LightGBM fold folder, or a fold under --letor-dir (MQ2008/Fold1)")
    parser.add_argument("--letor-dir", default=None,
                        help=f"the LETOR data folder (default: $TORCH_NDCG_LETOR, else {DEFAULT_LETOR})")
    parser.add_argument("--max-label", type=float, default=None,
                        help="the top grade y_max of the click model (default: the largest training label)")
    parser.add_argument("--queries", type=int, nargs=3, default=[600, 200, 200], metavar=("TRAIN", "VALI", "TEST"),
                        help="synthetic set sizes")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="one row per seed, then the mean")
    parser.add_argument("--sessions", type=int, default=100, help="simulated sessions per training query")
    parser.add_argument("--eta", type=float, default=1.0, help="η of the position bias (1/rank)^η")
    parser.add_argument("--noise", type=float, nargs=2, default=[0.1, 1.0], metavar=("EPS_MINUS", "EPS_PLUS"))
    parser.add_argument("--logging-share", type=float, default=0.01,
                        help="share of the labelled training queries the logging ranker learns from")
    parser.add_argument("--logging-epochs", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64])
    parser.add_argument("--loss", choices=sorted(LOSSES), default="softmax",
                        help="the loss family of every ranker: softmax cross-entropy or LambdaLoss (NDCG-Loss2++)")
    parser.add_argument("--clip", type=float, default=0.1,
                        help="propensity floor of the IPS losses and metric (weights ≤ 1/clip; 0 for none)")
    parser.add_argument("--self-normalised", action="store_true", help="the self-normalised IPS loss")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the script runs")
    args = parser.parse_args(argv)
    args.clip = args.clip or None
    if args.quick:
        args.queries, args.sessions, args.epochs, args.hidden = [60, 10, 20], 10, 2, [8]
    return args


def fold_folder(name: str, letor: Path, scratch: str) -> Path:
    """The folder of the fold ``name``: ``name`` itself or ``letor/name`` when either is a folder,
    else its files extracted into ``scratch`` from the ``.tar.gz`` archive under ``letor`` that
    holds them."""
    for candidate in (Path(name), letor / name):
        if candidate.is_dir():
            return candidate
    prefix = name.strip("/") + "/"
    for archive in sorted(letor.glob("*.tar.gz")):
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.startswith(prefix)
                       and "/" not in m.name[len(prefix):]]  # fmt: skip
            if members:
                tar.extractall(scratch, members=members, filter="data")
                return Path(scratch) / prefix
    raise SystemExit(f"--data {name}: neither a folder nor a fold under {letor} (as a folder or in a .tar.gz); "
                     f"give the folder, or the LETOR data folder with --letor-dir or TORCH_NDCG_LETOR")  # fmt: skip


def load(args: argparse.Namespace, seed: int) -> tuple[RankingDataset, RankingDataset, RankingDataset]:
    """Train, validation and test splits; a fold without a validation file gives up a fifth of its
    training queries (drawn with ``seed``)."""
    if args.data == "synthetic":
        splits = synthetic_letor(tuple(args.queries), seed=seed)
    else:
        splits = read_letor_fold(args.fold)
    if "vali" not in splits:
        train = splits["train"]
        order = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed)).tolist()
        count = max(1, len(train) // 5)
        splits["train"], splits["vali"] = train.select(sorted(order[count:])), train.select(sorted(order[:count]))
    return splits["train"], splits["vali"], splits["test"]


def test_ndcg(model: nn.Module, test: Padded) -> float:
    with torch.no_grad():
        return tn.ndcg(model(test.features), test.relevance, CUTOFF, mask=test.mask, gain="exp2", empty="skip").item()


def fit(model: nn.Module, data: Padded, step, epochs: int, args: argparse.Namespace, seed: int,
        extra: list[nn.Parameter] = (), select=None) -> nn.Module:  # fmt: skip
    """``epochs`` passes of Adam over shuffled batches; ``step(scores, rows)`` is the loss of the
    batch of query numbers ``rows`` (``extra``: parameters trained alongside, as DLA's). With
    ``select(model)`` (a validation score, higher is better) the best epoch's model is kept."""
    optimiser = torch.optim.Adam([*model.parameters(), *extra], lr=args.lr)
    generator = torch.Generator().manual_seed(seed)
    queries = data.features.shape[0]
    best, best_state = -math.inf, None
    for _ in range(epochs):
        model.train()
        for rows in torch.randperm(queries, generator=generator).split(args.batch_size):
            loss = step(model(data.features[rows]), rows)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        if select is not None:
            model.eval()
            with torch.no_grad():
                score = select(model)
            if score > best:
                best, best_state = score, copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    return model.eval()


def new_model(train: RankingDataset, args: argparse.Namespace, seed: int) -> MLPScorer:
    torch.manual_seed(seed)
    return MLPScorer(train.num_features, args.hidden, 0.0, *train.feature_stats())


def simulate(scores: Tensor, data: Padded, max_label: float, args: argparse.Namespace, seed: int) -> ClickLog:
    """``args.sessions`` PBM sessions of each training query on the logging ranker's ranking, each
    with rank 1 swapped with a random rank with probability 1/2."""
    generator = torch.Generator().manual_seed(seed)
    queries, width = data.mask.shape
    sessions = args.sessions
    logged = logged_ranks(scores, mask=data.mask)
    ranks = logged[:, None, :].expand(queries, sessions, width).reshape(-1, width)
    mask = data.mask[:, None, :].expand(queries, sessions, width).reshape(-1, width)
    shown, partner = swap_intervention(ranks, max_rank=width, mask=mask, generator=generator)
    labels = data.relevance[:, None, :].expand(queries, sessions, width).reshape(-1, width)
    target = pbm_clicks(labels, shown, eta=args.eta, noise=tuple(args.noise), max_label=max_label, mask=mask,
                        generator=generator)  # fmt: skip
    estimated = power_law(propensities_from_swaps(target.clicks, shown, partner, max_rank=width))
    view = (queries, sessions, width)
    return ClickLog(target.clicks.view(view), shown.view(view), estimated)


def power_law(ratios: Tensor) -> Tensor:
    """``k^-η̂`` for ranks ``1..len(ratios)``, η̂ fitted to the swap estimates ``θ_k/θ_1`` by least
    squares on ``log θ_k = −η log k`` (ranks whose estimate is 0 or undefined left out)."""
    k = torch.arange(1, ratios.shape[0] + 1, dtype=torch.float64)
    usable = torch.isfinite(ratios) & (ratios > 0) & (k > 1)
    x, y = k[usable].log(), ratios[usable].log()
    eta = -(x * y).sum() / (x * x).sum() if usable.any() else torch.tensor(0.0, dtype=torch.float64)
    return k.pow(-eta).to(torch.float32)


def top_grade(args: argparse.Namespace, train: Padded) -> float:
    """The click model's ``y_max``: ``--max-label``, else the largest training label (a set graded
    0–2 must not be clicked as if 2 were the middle of a 0–4 scale)."""
    if args.max_label is not None:
        return args.max_label
    return float(train.relevance[train.mask].max())


def run(args: argparse.Namespace, seed: int) -> dict[str, float]:
    train_set, vali_set, test_set = load(args, seed)
    train, vali, test = Padded.of(train_set), Padded.of(vali_set), Padded.of(test_set)
    results: dict[str, float] = {}
    label_loss, ips_loss = LOSSES[args.loss]
    max_label = top_grade(args, train)

    def labels_step(data: Padded):
        return lambda scores, rows: label_loss(scores, data.relevance[rows], data.mask[rows])

    full = fit(new_model(train_set, args, seed), train, labels_step(train), args.epochs, args, seed,
               select=lambda model: test_ndcg(model, vali))  # fmt: skip
    results["full information (labels)"] = test_ndcg(full, test)

    share = max(1, round(args.logging_share * len(train_set)))
    chosen = torch.randperm(len(train_set), generator=torch.Generator().manual_seed(seed + 1))[:share].sort().values
    few = Padded(train.features[chosen], train.relevance[chosen], train.mask[chosen])
    logger = fit(new_model(train_set, args, seed), few, labels_step(few), args.logging_epochs, args, seed)
    results[f"logging ranker ({share} labelled queries)"] = test_ndcg(logger, test)

    with torch.no_grad():
        log = simulate(logger(train.features), train, max_label, args, seed)
        vali_log = simulate(logger(vali.features), vali, max_label, args, seed + 2)
    sessions, mask = log.clicks.shape[1], train.mask[:, None, :]
    every_vali = torch.arange(vali.mask.shape[0])

    def clicks_select(propensities):
        """Model selection from the validation queries' clicks alone: IPS-estimated DCG@10."""
        return lambda model: ips_dcg(model(vali.features), vali_log.target(every_vali, propensities), CUTOFF,
                                     mask=vali.mask, clip=args.clip).item()  # fmt: skip

    def clicks_step(propensities):
        def step(scores: Tensor, rows: Tensor) -> Tensor:
            return ips_loss(scores, log.target(rows, propensities), mask=train.mask[rows], clip=args.clip,
                            self_normalised=args.self_normalised)  # fmt: skip
        return step

    ones = lambda r: torch.ones(r.shape)  # noqa: E731
    naive = fit(new_model(train_set, args, seed), train, clicks_step(ones), args.epochs, args, seed,
                select=clicks_select(ones))  # fmt: skip
    results["naive (clicks as labels)"] = test_ndcg(naive, test)

    estimated = log.estimated
    swaps = lambda r: estimated[r - 1]  # noqa: E731
    ips = fit(new_model(train_set, args, seed), train, clicks_step(swaps), args.epochs, args, seed,
              select=clicks_select(swaps))  # fmt: skip
    results["IPS (swap-estimated propensities)"] = test_ndcg(ips, test)

    dla = DualLearning(max_rank=train.mask.shape[1])
    ranker_step = clicks_step(dla.propensities)

    def dla_step(scores: Tensor, rows: Tensor) -> Tensor:  # the ranker's IPS loss and the propensity model's
        expanded = scores[:, None, :].expand(-1, sessions, -1)
        shape = (-1, expanded.shape[-1])
        propensity_loss = dla.loss(expanded.reshape(shape), log.clicks[rows].reshape(shape),
                                   log.ranks[rows].reshape(shape), mask=mask[rows].expand_as(expanded).reshape(shape))  # fmt: skip
        return ranker_step(scores, rows) + propensity_loss

    dual = fit(new_model(train_set, args, seed), train, dla_step, args.epochs, args, seed, extra=[dla.logits],
               select=clicks_select(dla.propensities))  # fmt: skip
    results["DLA (learnt propensities)"] = test_ndcg(dual, test)
    results["_eta_swaps"] = -math.log(float(estimated[1])) / math.log(2) if estimated.shape[0] > 1 else float("nan")
    results["_max_label"] = max_label
    results["_eta_dla"] = -float(dla.logits.detach()[1] - dla.logits.detach()[0]) / math.log(2)
    return results


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    torch.set_num_threads(1)
    rows, started = [], time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        if args.data != "synthetic":
            letor = Path(args.letor_dir or os.environ.get("TORCH_NDCG_LETOR") or DEFAULT_LETOR)
            args.fold = fold_folder(args.data, letor, scratch)
        for seed in args.seeds:
            begin = time.perf_counter()
            rows.append(run(args, seed))
            print(f"seed {seed}: {time.perf_counter() - begin:.0f} s; estimated η: swaps {rows[-1]['_eta_swaps']:.2f}, "
                  f"DLA (rank 2 vs 1) {rows[-1]['_eta_dla']:.2f}, true {args.eta}")  # fmt: skip
    names = [name for name in rows[0] if not name.startswith("_")]
    full = [row[names[0]] for row in rows]
    print(f"\ntest NDCG@{CUTOFF} on the true labels (exp2 gain, queries without a relevant item skipped); "
          f"clicks: PBM η={args.eta}, ε⁻={args.noise[0]}, ε⁺={args.noise[1]}, y_max={rows[0]['_max_label']:g}, "
          f"{args.sessions} sessions per training query; data: {args.data}")  # fmt: skip
    header = ["ranker", *[f"seed {s}" for s in args.seeds], "mean", "% of full information"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    summary = {}
    for name in names:
        values = [row[name] for row in rows]
        mean = sum(values) / len(values)
        share = 100 * sum(v / f for v, f in zip(values, full)) / len(values)
        summary[name] = {"values": values, "mean": mean, "share_of_full": share}
        print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in values) + f" | {mean:.4f} | {share:.1f}% |")
    print(f"\n{time.perf_counter() - started:.0f} s in all")
    return summary


if __name__ == "__main__":
    main()
