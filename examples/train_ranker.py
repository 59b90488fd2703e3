"""Train a learning-to-rank model end to end with NeuralNDCG (or another loss) and report NDCG@k.

    python examples/train_ranker.py                                  # configs/default.json
    python examples/train_ranker.py --config configs/compare.json    # every loss, one table
    python examples/train_ranker.py --config configs/letor.json --data MSLR-WEB10K/Fold1
    python examples/train_ranker.py --config configs/letor.json --data lambdarank --save-model model --save-scores test.scores
    python examples/train_ranker.py --set loss=listnet --set epochs=5

An MLP scores every item of a query from its (standardised) features. Training minimises the
chosen loss over padded ``[B, N, F]`` batches; after each epoch the validation NDCG@{1,5,10} is
measured with :class:`torch_ndcg.metrics.NDCG`, the best epoch (by validation NDCG@``monitor_k``)
is kept, training stops early when it stops improving, and the best model is scored on the test
split. A random scorer's NDCG is printed next to it as the floor, and the validation curve is
saved as a PNG named after the run. Every NDCG, of the metrics and of the NDCG losses, uses the
config's ``gain`` and ``empty`` rule, and every table says which. ``--save-model`` keeps the
model for ``examples/predict.py``; ``--save-scores`` writes one test score per line of the test file.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import torch
from torch import Tensor, nn

import torch_ndcg as tn
from torch_ndcg.data import RankingDataset, read_letor_fold, synthetic_letor
from torch_ndcg.stats import bootstrap_interval, cohens_dz, holm, paired_t_test

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ranker_config import EMPTY_RULES, LOSSES, Config, load_config, make_config  # noqa: E402

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.json"
Scorer = Callable[[Tensor], Tensor]


# --- losses ------------------------------------------------------------------------------------
# Each takes scores [B, N], relevance [B, N], mask [B, N] and the config; padding never counts.
# The NDCG losses use the config's gain and empty rule, as the metrics do; ListNet and
# pointwise regression see the raw labels.


def pointwise_loss(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    """Mean squared error between each score and its label (regression, no ranking at all)."""
    return ((scores - relevance) ** 2)[mask].mean()


def neural_ndcg(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    return tn.neural_ndcg_loss(scores, relevance, config.loss_k, mask=mask, gain=config.gain, empty=config.empty,
                               temperature=config.temperature, sinkhorn_iters=config.sinkhorn_iters)


def approx_ndcg(scores: Tensor, relevance: Tensor, mask: Tensor, config: Config) -> Tensor:
    return tn.approx_ndcg_loss(scores, relevance, config.loss_k, mask=mask, gain=config.gain, empty=config.empty,
                               temperature=config.temperature)


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
    """The synthetic default or the files of a fold folder, as ``train``, ``vali``, ``test``.

    A folder without a validation file gives up ``vali_fraction`` of its training queries
    (drawn with ``seed``) to validation, and says so.
    """
    if config.data == "synthetic":
        return synthetic_letor(
            tuple(config.synthetic_queries),
            num_features=config.synthetic_features,
            list_length=tuple(config.synthetic_list_length),
            length_median=config.synthetic_length_median,
            noise=config.synthetic_noise,
            seed=config.seed,
        )
    splits = read_letor_fold(config.data)
    if "vali" not in splits:
        train = splits["train"]
        count = round(config.vali_fraction * len(train))
        if not 1 <= count < len(train):
            raise ValueError(f"{config.data} has no validation file and {len(train)} training queries: too few to "
                             f"split off vali_fraction={config.vali_fraction} of them")
        order = torch.randperm(len(train), generator=torch.Generator().manual_seed(config.seed)).tolist()
        splits["train"], splits["vali"] = train.select(sorted(order[count:])), train.select(sorted(order[:count]))
        print(f"no validation file in {config.data}: validating on {count} of its {len(train)} training queries "
              f"(vali_fraction={config.vali_fraction}, drawn with seed {config.seed}), training on the other {len(train) - count}")
    return {name: splits[name] for name in ("train", "vali", "test")}


class MLPScorer(nn.Module):
    """``[B, N, F]`` raw features → ``[B, N]`` scores, the same network applied to every item.

    The features are standardised inside the model (``mean`` and ``std`` of the training split,
    kept as buffers), so a saved model scores raw features from a file as they are.
    """

    def __init__(self, num_features: int, hidden: list[int], dropout: float = 0.0,
                 mean: Tensor | None = None, std: Tensor | None = None):
        super().__init__()
        self.register_buffer("mean", torch.zeros(num_features) if mean is None else mean.clone())
        self.register_buffer("std", torch.ones(num_features) if std is None else std.clone())
        layers: list[nn.Module] = []
        width = num_features
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU(), nn.Dropout(dropout)]
            width = size
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    @property
    def num_features(self) -> int:
        return self.mean.shape[0]

    def forward(self, features: Tensor) -> Tensor:
        return self.net((features - self.mean) / self.std).squeeze(-1)


def new_model(train_set: RankingDataset, config: Config) -> MLPScorer:
    mean, std = train_set.feature_stats() if config.standardize else (None, None)
    return MLPScorer(train_set.num_features, config.hidden, config.dropout, mean, std)


def save_model(model: MLPScorer, config: Config, directory: Path) -> None:
    """``model.pt`` (weights and standardisation) and ``config.json`` (every key) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), directory / "model.pt")
    (directory / "config.json").write_text(json.dumps(dataclasses.asdict(config), indent=2) + "\n")


def load_model(directory: str | Path) -> tuple[MLPScorer, Config]:
    """The model and config written by :func:`save_model`, ready to score (eval mode)."""
    directory = Path(directory)
    missing = [name for name in ("model.pt", "config.json") if not (directory / name).is_file()]
    if missing:
        raise ValueError(f"{directory} is not a saved model (--save-model DIR): missing {', '.join(missing)}")
    config_path, model_path = directory / "config.json", directory / "model.pt"
    try:
        settings = json.loads(config_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{config_path}: not the JSON that --save-model writes ({error})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{config_path}: expected a JSON object of config keys, got a {type(settings).__name__}")
    try:
        config = make_config(settings, dict.fromkeys(settings, str(config_path)))
    except TypeError as error:
        raise ValueError(str(error)) from None
    try:
        state = torch.load(model_path, weights_only=True)
    except Exception as error:  # noqa: BLE001 (whatever the bytes provoke: UnpicklingError, RuntimeError, KeyError…)
        raise ValueError(f"{model_path}: not a model saved by --save-model ({type(error).__name__}: "
                         f"{_one_line(error)})") from None
    mean = state.get("mean") if isinstance(state, dict) else None
    if not isinstance(mean, Tensor) or mean.dim() != 1:
        got = f"a {type(state).__name__}" if not isinstance(state, dict) else "no 1-D 'mean' tensor"
        raise ValueError(f"{model_path}: expected a model's state (a dict with a 1-D 'mean' tensor), got {got}")
    model = MLPScorer(mean.shape[0], config.hidden, config.dropout)
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        # load_state_dict's message: a header, then one line per mismatch.
        details = [line.strip() for line in str(error).splitlines()[1:] if line.strip()] or [_one_line(error)]
        more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
        raise ValueError(f"{model_path} does not match {config_path}: {details[0]}{more}") from None
    return model.eval(), config


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def item_scores(scorer: Scorer, dataset: RankingDataset) -> Tensor:
    """One score per item, ``[items]``, in the dataset's order (query after query)."""
    with torch.no_grad():
        return torch.cat([scorer(features)[mask] for features, _, mask in dataset.batches(256)])


def write_scores(scorer: Scorer, dataset: RankingDataset, path: Path) -> None:
    """One score per line, in the source file's line order (LightGBM / XGBoost's convention)."""
    scores = item_scores(scorer, dataset)
    if dataset.rows is not None:
        scores = dataset.in_file_order(scores)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{value:.9g}\n" for value in scores.tolist()))


def evaluate(scorer: Scorer, dataset: RankingDataset, config: Config) -> dict[str, float]:
    """Mean NDCG@k over the queries of ``dataset``, one entry per k of ``config.eval_k``."""
    metric = ndcg_metric(config)
    with torch.no_grad():
        for features, relevance, mask in dataset.batches(max(config.batch_size, 256)):
            metric.update(scorer(features), relevance, mask=mask)
    return {key: float(value) for key, value in metric.compute().items()}


def per_query_ndcg(scorer: Scorer, dataset: RankingDataset, config: Config) -> Tensor:
    """``[queries]`` NDCG@monitor_k of every query of ``dataset`` in its order (NaN: skipped as empty)."""
    with torch.no_grad():
        return torch.cat([tn.ndcg(scorer(features), relevance, config.monitor_k, mask=mask, gain=config.gain,
                                  empty=config.empty, reduction="none").double()
                          for features, relevance, mask in dataset.batches(256)])


def print_significance(runs: list[dict], config: Config) -> None:
    """Each loss's test NDCG@monitor_k: its mean with a 95% bootstrap interval over the test queries,
    and a paired t-test against the loss with the best mean (Holm-corrected over those tests)."""
    values = torch.stack([r["test_per_query"] for r in runs])
    values = values[:, ~values.isnan().any(0)]  # queries an empty rule skipped have no value to pair
    if values.shape[1] < 2:
        print("too few test queries for intervals and paired tests")
        return
    interval = bootstrap_interval(values, generator=torch.Generator().manual_seed(config.seed))
    best = int(interval.mean.argmax())
    others = [i for i in range(len(runs)) if i != best]
    pvalues = torch.full((len(runs),), float("nan"), dtype=torch.float64)
    pvalues[others] = holm(paired_t_test(values[others], values[best].expand(len(others), -1)).pvalue)
    effects = cohens_dz(values, values[best].expand_as(values))
    monitor = f"ndcg@{config.monitor_k}"
    print(f"\ntest {monitor} over {values.shape[1]} queries: mean, 95% percentile bootstrap interval (9,999 "
          f"resamples), and a paired t-test against the best loss, {runs[best]['loss']} (Holm-corrected):")
    rows = []
    for i, r in enumerate(runs):
        versus = ["best", "-", "-"] if i == best else [f"{float(values[i].mean() - values[best].mean()):+.4f}",
                                                      f"{float(pvalues[i]):.3g}", f"{float(effects[i]):+.2f}"]
        rows.append([r["loss"], f"{float(interval.mean[i]):.4f}",
                     f"[{float(interval.low[i]):.4f}, {float(interval.high[i]):.4f}]", *versus])
    print_table(["loss", f"test {monitor}", "95% interval", "vs best", "p", "d_z"], rows)


def ndcg_metric(config: Config):
    """The stateful metric class; without torchmetrics, the functional form accumulated here."""
    try:
        from torch_ndcg.metrics import NDCG
    except ImportError:
        return _FunctionalNDCG(config)
    return NDCG(k=tuple(config.eval_k), gain=config.gain, empty=config.empty)


class _FunctionalNDCG:
    def __init__(self, config: Config):
        self.config, self.ks, self.values = config, config.eval_k, []

    def update(self, scores: Tensor, relevance: Tensor, *, mask: Tensor) -> None:
        self.values.append(tn.ndcg(scores, relevance, self.ks, mask=mask, gain=self.config.gain,
                                   empty=self.config.empty, reduction="none"))

    def compute(self) -> dict[str, Tensor]:
        means = torch.cat(self.values).nanmean(dim=0)  # NaN marks a skipped query
        return {f"ndcg@{k}": value for k, value in zip(self.ks, means)}


def conventions(config: Config) -> str:
    return f"NDCG with {config.gain} gain, log2 discount, tied scores averaged, queries with no relevant item {EMPTY_RULES[config.empty]}"


def empty_rules_line(scorer: Scorer, dataset: RankingDataset, config: Config) -> str:
    """NDCG@monitor_k of ``dataset`` under each empty-query rule, as peers report it differently."""
    with torch.no_grad():
        values = torch.cat([tn.ndcg(scorer(features), relevance, config.monitor_k, mask=mask, gain=config.gain,
                                    empty="skip", reduction="none") for features, relevance, mask in dataset.batches(256)])
    empty = int(values.isnan().sum())
    as_one, skipped, as_zero = values.nan_to_num(1.0).mean(), values.nanmean(), values.nan_to_num(0.0).mean()
    return (f"test ndcg@{config.monitor_k} ({config.gain} gain) with the {empty} of {len(values)} queries that have "
            f"no relevant item counted as 1 / skipped / counted as 0: {as_one:.4f} / {skipped:.4f} / {as_zero:.4f}")


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
    model = new_model(train_set, config)
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
        "test_per_query": per_query_ndcg(model, splits["test"], config),
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


def run_name(config: Config) -> str:
    """``<config name>-<data>``, e.g. ``letor-MSLR-WEB10K_Fold1``: outputs of different runs differ."""
    data = "synthetic" if config.data == "synthetic" else "_".join(Path(config.data).resolve().parts[-2:])
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{config.name}-{data}")


def unused_path(directory: Path, stem: str, suffix: str) -> Path:
    """``directory/stem.suffix``, or ``stem-2``, ``stem-3``, … when taken: nothing is overwritten."""
    path, number = directory / f"{stem}{suffix}", 2
    while path.exists():
        path, number = directory / f"{stem}-{number}{suffix}", number + 1
    return path


def plot_name(config: Config) -> str:
    """``<config>-<data>-<loss>``, or ``…-compare`` for ``--compare``: the file says what it shows."""
    return f"{run_name(config)}-{'compare' if config.compare else config.loss}"


def best_epoch(history: list[dict[str, float]], key: str) -> int:
    """The first epoch with the highest ``key``: the one whose model training keeps."""
    values = [h[key] for h in history]
    return values.index(max(values))


def save_plot(runs: list[dict], random_vali: dict[str, float], config: Config) -> Path | None:
    """Validation NDCG per epoch, best epoch marked: every cutoff for one loss, NDCG@monitor_k per loss when comparing.

    When comparing, the y axis spans the trained epochs' values only, so curves a few thousandths
    apart stay apart; the untrained model's and the random scorer's values are given in the title.
    """
    try:
        import matplotlib
        import matplotlib.ticker

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed, so no plot was saved (pip install matplotlib)")
        return None
    monitor = f"ndcg@{config.monitor_k}"
    fig, ax = plt.subplots(figsize=(8, 5))
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    if config.compare:
        trained = []
        for i, run in enumerate(runs):
            epochs = list(range(1, len(run["history"])))
            values = [h[monitor] for h in run["history"][1:]]
            if not values:
                continue
            best = best_epoch(run["history"], monitor)
            line, = ax.plot(epochs, values, linestyle=styles[i % len(styles)], marker=markers[i % len(markers)],
                            markersize=4, label=f"{run['loss']} (best {run['history'][best][monitor]:.4f}, epoch {best})")
            if best > 0:
                ax.plot([best], [run["history"][best][monitor]], marker="*", markersize=16, color=line.get_color(),
                        markeredgecolor="black", linestyle="none")
            trained += values
        if trained:
            low, high = min(trained), max(trained)
            pad = max(0.05 * (high - low), 0.002)
            ax.set_ylim(low - pad, high + pad)
            if low <= random_vali[monitor] <= high:
                ax.axhline(random_vali[monitor], color="grey", linestyle="--", label="random scorer")
        untrained = runs[0]["history"][0][monitor]
        ax.set_ylabel(f"validation {monitor}")
        detail = f"★ best epoch; untrained model {untrained:.4f}, random scorer {random_vali[monitor]:.4f}"
    else:
        (run,) = runs
        best = best_epoch(run["history"], monitor)
        for i, key in enumerate(run["history"][0]):
            ax.plot(range(len(run["history"])), [h[key] for h in run["history"]], marker=markers[i % len(markers)],
                    markersize=4, label=key)
        ax.axhline(random_vali[monitor], color="grey", linestyle="--", label=f"random scorer ({monitor})")
        ax.axvline(best, color="black", linestyle=":", label=f"best epoch by {monitor}: {best}")
        ax.set_ylabel("validation NDCG")
        detail = f"loss {run['loss']}"
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("epoch" if config.compare else "epoch (0: untrained)")
    ax.set_title(f"{plot_name(config)}: validation NDCG per epoch\n{conventions(config)}\n{detail}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    Path(config.output_dir).mkdir(parents=True, exist_ok=True)
    path = unused_path(Path(config.output_dir), plot_name(config), ".png")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="JSON config (default: %(default)s)")
    parser.add_argument("--data", help="a folder of train/vali/test files: LETOR (train.txt[.gz], vali, test), "
                        "train and test only, or LightGBM / XGBoost (<name>.train + .query / .group); overrides 'data'")
    parser.add_argument("--compare", action="store_true", help="train every loss in 'losses' and print one table")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (repeatable)")
    parser.add_argument("--save-model", metavar="DIR", help="write the trained model (weights, standardisation, config) to DIR")
    parser.add_argument("--save-scores", metavar="FILE", help="write one test score per line, in the test file's line order")
    args = parser.parse_args(argv)
    overrides = list(args.set)
    if args.data:
        overrides.append(f"data={json.dumps(args.data)}")  # quoted: a path such as 2024 stays a string
    if args.compare:
        overrides.append("compare=true")
    try:
        config = load_config(args.config, overrides)
        outputs = check_outputs(args.save_model, args.save_scores, config)
        splits = load_data(config)
    except (ValueError, TypeError, OSError) as error:
        parser.error(str(error))

    threads = torch.get_num_threads()
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    try:
        result = run(config, splits)
    finally:
        torch.set_num_threads(threads)  # main() may run inside a bigger process (tests, notebooks)
    model = result["runs"][0]["model"]
    if outputs["model"] is not None:
        save_model(model, config, outputs["model"])
        print(f"saved the model to {outputs['model']} (score a file with: python examples/predict.py {outputs['model']} FILE --out SCORES)")
    if outputs["scores"] is not None:
        write_scores(model, splits["test"], outputs["scores"])
        print(f"saved {len(splits['test'].relevance)} test scores to {outputs['scores']}, one per line of the test file")
    return result


def check_outputs(save_model: str | None, save_scores: str | None, config: Config) -> dict[str, Path | None]:
    """Refuse, before any training, outputs that would overwrite something or cannot be written."""
    if config.compare and (save_model or save_scores):
        raise ValueError("--save-model and --save-scores keep one trained model; they do not combine with --compare")
    model = Path(save_model) if save_model else None
    scores = Path(save_scores) if save_scores else None
    if model is not None and model.exists() and (not model.is_dir() or any(model.iterdir())):
        raise ValueError(f"--save-model {model}: already exists and is not an empty folder; choose a new one")
    if scores is not None and scores.exists():
        raise ValueError(f"--save-scores {scores}: already exists; choose a new file name")
    return {"model": model, "scores": scores}


def run(config: Config, splits: dict[str, RankingDataset]) -> dict:
    """Random-scorer floor, training of one loss (or each of ``config.losses``), tables and plot."""
    monitor = f"ndcg@{config.monitor_k}"
    print(f"run {run_name(config)}, data: {config.data}")
    print(f"metrics: {conventions(config)}")
    for name, ds in splits.items():
        print(f"  {name:<5} {ds}")
    random_vali = evaluate(random_scorer(config.seed), splits["vali"], config)
    random_test = evaluate(random_scorer(config.seed + 1), splits["test"], config)
    print(f"random scorer: vali {monitor} {random_vali[monitor]:.4f}")

    losses = config.losses if config.compare else [config.loss]
    runs = [train(loss, splits, config) for loss in losses]

    keys = list(random_test)
    print()
    print(f"{conventions(config)}; columns name the cutoff k:")
    if config.compare:
        header = ["loss", "epochs", "s/epoch", f"best vali {monitor}", *(f"test {k}" for k in keys)]
        rows = [[r["loss"], str(r["epochs"]), f"{r['seconds'] / max(r['epochs'], 1):.2f}", f"{r['best_vali']:.4f}",
                 *(f"{r['test'][k]:.4f}" for k in keys)] for r in runs]
        rows.append(["random", "-", "-", f"{random_vali[monitor]:.4f}", *(f"{random_test[k]:.4f}" for k in keys)])
        print_table(header, rows)
        print_significance(runs, config)
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
        print(f"{run['loss']} {empty_rules_line(run['model'], splits['test'], config)}")
    plot = save_plot(runs, random_vali, config) if config.plot else None
    if plot is not None:
        print(f"saved the validation curve to {plot}")
    return {"config": config, "runs": runs, "random_vali": random_vali, "random_test": random_test, "plot": plot}


if __name__ == "__main__":
    main()
