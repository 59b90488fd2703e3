"""Train a learning-to-rank model end to end with NeuralNDCG (or another loss) and report NDCG@k.

    python examples/train_ranker.py                                  # configs/default.json
    python examples/train_ranker.py --config configs/compare.json    # every loss, one table
    python examples/train_ranker.py --config configs/letor.json --data MSLR-WEB10K/Fold1
    python examples/train_ranker.py --set loss=listnet --set epochs=5

An MLP scores every item of a query from its features. Training minimises the chosen loss over
padded ``[B, N, F]`` batches; after each epoch the validation NDCG@{1,5,10} is measured with
:class:`torch_ndcg.metrics.NDCG`, the best epoch (by validation NDCG@``monitor_k``) is kept,
training stops early when it stops improving, and the best model is scored on the test split.
A random scorer's NDCG is printed next to it as the floor, and the validation curve is saved
as a PNG. Queries without any relevant item are left out of every NDCG (``empty="skip"``).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import torch
from torch import Tensor, nn

import torch_ndcg as tn
from torch_ndcg.data import RankingDataset, read_letor_fold, synthetic_letor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ranker_config import LOSSES, Config, load_config  # noqa: E402

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.json"
Scorer = Callable[[Tensor], Tensor]


# --- losses ------------------------------------------------------------------------------------
# Each takes scores [B, N], relevance [B, N], mask [B, N] and the config; padding never counts.


def pointwise_loss(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    """Mean squared error between each score and its label (regression, no ranking at all)."""
    return ((scores - relevance) ** 2)[mask].mean()


def neural_ndcg(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    return tn.neural_ndcg_loss(scores, relevance, config.loss_k, mask=mask, temperature=config.temperature,
                               sinkhorn_iters=config.sinkhorn_iters)


def approx_ndcg(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    return tn.approx_ndcg_loss(scores, relevance, config.loss_k, mask=mask, temperature=config.temperature)


def lambda_loss(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    return tn.lambda_loss(scores, relevance, config.loss_k, mask=mask)  # NDCG-Loss2++


LOSS_FUNCTIONS = {
    "neural_ndcg": neural_ndcg,
    "approx_ndcg": approx_ndcg,
    "lambda_loss": lambda_loss,
    "listnet": lambda scores, relevance, mask, config: tn.listnet_loss(scores, relevance, mask=mask),
    "listmle": lambda scores, relevance, mask, config: tn.listmle_loss(scores, relevance, mask=mask),
    "ranknet": lambda scores, relevance, mask, config: tn.ranknet_loss(scores, relevance, mask=mask),
    "pointwise": pointwise_loss,
}
assert tuple(LOSS_FUNCTIONS) == LOSSES


# --- data, model, evaluation -------------------------------------------------------------------


def load_data(config: Config) -> dict[str, RankingDataset]:
    """The synthetic default or a LETOR fold, standardised with the training split's statistics."""
    if config.data == "synthetic":
        splits = synthetic_letor(
            tuple(config.synthetic_queries),
            num_features=config.synthetic_features,
            list_length=tuple(config.synthetic_list_length),
            noise=config.synthetic_noise,
            seed=config.seed,
        )
    else:
        splits = read_letor_fold(config.data)
    if config.standardize:
        mean, std = splits["train"].feature_stats()
        splits = {name: ds.standardized(mean, std) for name, ds in splits.items()}
    return splits


class MLPScorer(nn.Module):
    """``[B, N, F]`` features → ``[B, N]`` scores, the same network applied to every item."""

    def __init__(self, num_features: int, hidden: list[int], dropout: float = 0.0):
        super().__init__()
        layers: list[nn.Module] = []
        width = num_features
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU(), nn.Dropout(dropout)]
            width = size
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, features: Tensor) -> Tensor:
        return self.net(features).squeeze(-1)


def evaluate(scorer: Scorer, dataset: RankingDataset, config: Config) -> dict[str, float]:
    """Mean NDCG@k over the queries of ``dataset``, one entry per k of ``config.eval_k``."""
    metric = ndcg_metric(config.eval_k)
    with torch.no_grad():
        for features, relevance, mask in dataset.batches(max(config.batch_size, 256)):
            metric.update(scorer(features), relevance, mask=mask)
    return {key: float(value) for key, value in metric.compute().items()}


def ndcg_metric(ks: list[int]):
    """The stateful metric class; without torchmetrics, the functional form accumulated here."""
    try:
        from torch_ndcg.metrics import NDCG
    except ImportError:
        return _FunctionalNDCG(ks)
    return NDCG(k=tuple(ks), empty="skip")


class _FunctionalNDCG:
    def __init__(self, ks: list[int]):
        self.ks, self.values = ks, []

    def update(self, scores: Tensor, relevance: Tensor, *, mask: Tensor) -> None:
        self.values.append(tn.ndcg(scores, relevance, self.ks, mask=mask, empty="skip", reduction="none"))

    def compute(self) -> dict[str, Tensor]:
        means = torch.cat(self.values).nanmean(dim=0)
        return {f"ndcg@{k}": value for k, value in zip(self.ks, means)}


def random_scorer(seed: int) -> Scorer:
    generator = torch.Generator().manual_seed(seed)
    return lambda features: torch.rand(features.shape[:-1], generator=generator)


def progress(items: Iterable, total: int, label: str, enabled: bool) -> Iterator:
    """A one-line progress bar on stderr when it is a terminal (logs stay clean otherwise)."""
    if not (enabled and sys.stderr.isatty()):
        yield from items
        return
    start = time.perf_counter()
    for done, item in enumerate(items, start=1):
        yield item
        filled = 30 * done // total
        rate = done / max(time.perf_counter() - start, 1e-9)
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {rate:.1f} batch/s")
        sys.stderr.flush()
    sys.stderr.write("\r" + " " * (len(label) + 60) + "\r")


# --- training ----------------------------------------------------------------------------------


def train(loss: str, splits: dict[str, RankingDataset], config: Config) -> dict:
    """Train one model with ``loss``; return its validation history and test NDCG."""
    torch.manual_seed(config.seed)
    train_set = splits["train"]
    model = MLPScorer(train_set.num_features, config.hidden, config.dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    loss_fn = LOSS_FUNCTIONS[loss]
    shuffle = torch.Generator().manual_seed(config.seed)
    monitor = f"ndcg@{config.monitor_k}"
    num_batches = math.ceil(len(train_set) / config.batch_size)
    start = time.perf_counter()
    model.eval()
    history = [evaluate(model, splits["vali"], config)]  # epoch 0: the untrained model
    best, best_state, stale = history[0][monitor], copy.deepcopy(model.state_dict()), 0
    print(f"  {loss:<12} epoch   0  (untrained)     vali {_show(history[0])}", flush=True)
    for epoch in range(1, config.epochs + 1):
        model.train()
        total = 0.0
        batches = train_set.batches(config.batch_size, shuffle=True, generator=shuffle, max_items=config.max_items)
        for features, relevance, mask in progress(batches, num_batches, f"{loss} epoch {epoch}", config.progress):
            value = loss_fn(model(features), relevance, mask, config)
            optimizer.zero_grad()
            value.backward()
            optimizer.step()
            total += value.item()
        model.eval()
        scores = evaluate(model, splits["vali"], config)
        history.append(scores)
        improved = scores[monitor] > best
        if improved:
            best, best_state, stale = scores[monitor], copy.deepcopy(model.state_dict()), 0
        else:
            stale += 1
        print(f"  {loss:<12} epoch {epoch:>3}  loss {total / num_batches:8.4f}  vali {_show(scores)}"
              f"  {time.perf_counter() - start:6.1f}s{'  *' if improved else ''}", flush=True)
        if stale >= config.patience and epoch < config.epochs:
            print(f"  {loss:<12} early stop: no better vali {monitor} for {config.patience} epochs", flush=True)
            break
    model.load_state_dict(best_state)
    model.eval()
    return {
        "loss": loss,
        "history": history,
        "best_vali": best,
        "epochs": len(history) - 1,
        "seconds": time.perf_counter() - start,
        "test": evaluate(model, splits["test"], config),
        "model": model,
    }


# --- reporting ---------------------------------------------------------------------------------


def _show(scores: dict[str, float]) -> str:
    return "  ".join(f"{key} {value:.4f}" for key, value in scores.items())


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    line = lambda row: "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |"  # noqa: E731
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))


def save_plot(runs: list[dict], random_vali: dict[str, float], config: Config) -> Path | None:
    """Validation NDCG per epoch: every cutoff for one run, NDCG@monitor_k per loss when comparing."""
    try:
        import matplotlib
        import matplotlib.ticker

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed, so no plot was saved (pip install matplotlib)")
        return None
    monitor = f"ndcg@{config.monitor_k}"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for run in runs:
        keys = [monitor] if len(runs) > 1 else list(run["history"][0])
        for key in keys:
            label = run["loss"] if len(runs) > 1 else key
            ax.plot(range(len(run["history"])), [h[key] for h in run["history"]], marker="o", label=label)
    ax.axhline(random_vali[monitor], color="grey", linestyle="--", label=f"random scorer ({monitor})")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("epoch (0: untrained)")
    ax.set_ylabel("validation NDCG" if len(runs) == 1 else f"validation {monitor}")
    ax.set_title(f"{config.name}: validation NDCG per epoch")
    ax.grid(alpha=0.3)
    ax.legend()
    path = Path(config.output_dir) / f"{config.name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="JSON config (default: %(default)s)")
    parser.add_argument("--data", help="LETOR fold directory with train.txt, vali.txt, test.txt (overrides 'data')")
    parser.add_argument("--compare", action="store_true", help="train every loss in 'losses' and print one table")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (repeatable)")
    args = parser.parse_args(argv)
    overrides = list(args.set)
    if args.data:
        overrides.append(f"data={json.dumps(args.data)}")  # quoted: a path such as 2024 stays a string
    if args.compare:
        overrides.append("compare=true")
    try:
        config = load_config(args.config, overrides)
        splits = load_data(config)
    except (ValueError, TypeError, OSError) as error:
        parser.error(str(error))

    threads = torch.get_num_threads()
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    try:
        return run(config, splits)
    finally:
        torch.set_num_threads(threads)  # main() may run inside a bigger process (tests, notebooks)


def run(config: Config, splits: dict[str, RankingDataset]) -> dict:
    """Random-scorer floor, training of one loss (or each of ``config.losses``), tables and plot."""
    monitor = f"ndcg@{config.monitor_k}"
    print(f"data: {config.data}")
    for name, ds in splits.items():
        print(f"  {name:<5} {ds}")
    random_vali = evaluate(random_scorer(config.seed), splits["vali"], config)
    random_test = evaluate(random_scorer(config.seed + 1), splits["test"], config)
    print(f"random scorer: vali {monitor} {random_vali[monitor]:.4f}")

    losses = config.losses if config.compare else [config.loss]
    runs = [train(loss, splits, config) for loss in losses]

    keys = list(random_test)
    print()
    if config.compare:
        header = ["loss", "epochs", "s/epoch", f"best vali {monitor}", *(f"test {k}" for k in keys)]
        rows = [[r["loss"], str(r["epochs"]), f"{r['seconds'] / max(r['epochs'], 1):.2f}", f"{r['best_vali']:.4f}",
                 *(f"{r['test'][k]:.4f}" for k in keys)] for r in runs]
        rows.append(["random", "-", "-", f"{random_vali[monitor]:.4f}", *(f"{random_test[k]:.4f}" for k in keys)])
        print_table(header, rows)
    else:
        run = runs[0]
        best_epoch = max(run["history"], key=lambda h: h[monitor])
        print_table(
            ["", *keys],
            [[f"{run['loss']} vali (best epoch)", *(f"{best_epoch[k]:.4f}" for k in keys)],
             [f"{run['loss']} test", *(f"{run['test'][k]:.4f}" for k in keys)],
             ["random scorer vali", *(f"{random_vali[k]:.4f}" for k in keys)],
             ["random scorer test", *(f"{random_test[k]:.4f}" for k in keys)]],
        )
    for run in runs:
        print(f"validation {monitor}: {run['loss']} {run['best_vali']:.4f} vs random scorer {random_vali[monitor]:.4f}")
    plot = save_plot(runs, random_vali, config) if config.plot else None
    if plot is not None:
        print(f"saved the validation curve to {plot}")
    return {"config": config, "runs": runs, "random_vali": random_vali, "random_test": random_test, "plot": plot}


if __name__ == "__main__":
    main()
