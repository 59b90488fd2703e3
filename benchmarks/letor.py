"""Every loss of the library on the LETOR folds, beside LightGBM LambdaMART, under the LETOR protocol.

    python -m benchmarks letor --data ../shared/data/letor --dataset mq2008 [--out runs] [--quick]

Protocol, per fold (five for MQ2008 and OHSUMED; the MSLR sample is one fold, a smoke test):

- scorers: a linear model and an MLP (one hidden layer of ``MLP_HIDDEN`` ReLU units) on the raw
  features, trained with Adam on padded batches of ``BATCH_QUERIES`` training queries (queries
  without a relevant document are left out: no loss learns from them);
- losses: every entry of :data:`LOSSES` (a new loss joins with one line);
- the peer: LightGBM LambdaMART (``lightgbm.LGBMRanker``), when installed;
- tuning: every point of the method's grid (:data:`GRID`, :data:`LIGHTGBM_GRID`) trains with seed 0,
  stopping when the validation NDCG@10 has not improved for ``patience`` epochs (the best epoch
  is kept); the point with the best validation NDCG@10 (the library's default convention)
  trains again with the other seeds;
- scoring: every test query, under the library's default convention (linear gain, 1/log2(rank+1),
  ties averaged, no relevant document = 0) and under the LETOR 4.0 tool's
  (:data:`torch_ndcg.conventions.LETOR`; OHSUMED is LETOR 3.0, scored by the 4.0 tool's rules).

Reported: NDCG@1, 3, 5, 10 and MAP, the mean over folds of each fold's seed mean, ± the standard
deviation over folds; a paired t-test of every method against the best (highest mean NDCG@10)
on the per-query seed means of all test queries that have a relevant document, Holm-adjusted
over the methods. Written to ``--out/<dataset>/``: ``results.md``, ``results.json`` (every fold and
seed), ``ndcg_at_k.png`` and ``scores/<method>/FoldK.seedS.txt``, one score per line of the fold's
``test.txt`` in file order, as the LETOR tool (Eval-Score-4.0) reads them.

The runs are independent tasks, each on one torch thread, spread over ``--workers`` processes;
every task is seeded, so the same command gives the same table whatever the number of workers.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import math
import multiprocessing
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

import torch_ndcg as tn
from torch_ndcg.conventions import LETOR
from torch_ndcg.data import RankingDataset, pad_batch
from torch_ndcg.stats import holm, paired_t_test

from . import letor_data

# The losses compared: name -> loss(scores [B, N], relevance [B, N], mask [B, N]). The NDCG losses
# aim at NDCG@10, the tuning target; every other option is the library's default.
LOSSES: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "NeuralNDCG": lambda s, r, m: tn.neural_ndcg_loss(s, r, 10, mask=m, validate=False),
    "NeuralSort NDCG": lambda s, r, m: tn.neuralsort_ndcg_loss(s, r, 10, mask=m, validate=False),
    "ApproxNDCG": lambda s, r, m: tn.approx_ndcg_loss(s, r, 10, mask=m, validate=False),
    "LambdaLoss": lambda s, r, m: tn.lambda_loss(s, r, 10, mask=m, validate=False),
    "ListNet": lambda s, r, m: tn.listnet_loss(s, r, mask=m, validate=False),
    "ListMLE": lambda s, r, m: tn.listmle_loss(s, r, mask=m, validate=False),
    "softmax": lambda s, r, m: tn.softmax_loss(s, r, mask=m, validate=False),
    "RankNet": lambda s, r, m: tn.ranknet_loss(s, r, mask=m, validate=False),
    "hinge": lambda s, r, m: tn.pairwise_hinge_loss(s, r, mask=m, validate=False),
}
# The smooth twins (metric x relaxation) that `python -m benchmarks letor_twins` compares, by name:
# "ApproxMRR@10" is tn.mrr_loss(k=10, relaxation="approx"), "NeuralSort AP" average_precision_loss
# over the whole list with relaxation="neuralsort".
TWIN_METRICS = {"NDCG": tn.ndcg_loss, "MRR": tn.mrr_loss, "AP": tn.average_precision_loss, "Recall": tn.recall_loss}
TWIN_RELAXATIONS = {"Approx": "approx", "NeuralSort ": "neuralsort"}
TWIN_CUTOFFS = (None, 5, 10)


def twin_name(relaxation: str, metric: str, k: int | None) -> str:
    return f"{relaxation}{metric}" + ("" if k is None else f"@{k}")


def _twin(loss: Callable, relaxation: str, k: int | None) -> Callable[[Tensor, Tensor, Tensor], Tensor]:
    return lambda s, r, m: loss(s, r, k, mask=m, relaxation=relaxation, validate=False)


TWINS = {
    twin_name(label, metric, k): _twin(loss, relaxation, k)
    for (label, relaxation), (metric, loss), k in itertools.product(TWIN_RELAXATIONS.items(), TWIN_METRICS.items(), TWIN_CUTOFFS)
}  # fmt: skip

# The metrics a run can be tuned (validation) and judged (test) on, per query, under the library's
# default convention: name -> metric(scores, relevance, indexes) -> [Q].
TARGETS: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "NDCG@10": lambda s, r, q: tn.ndcg(s, r, 10, indexes=q, reduction="none"),
    "MRR@10": lambda s, r, q: tn.mrr(s, r, 10, indexes=q, reduction="none"),
    "MAP": lambda s, r, q: tn.average_precision(s, r, indexes=q, reduction="none"),
    "Recall@5": lambda s, r, q: tn.recall(s, r, 5, indexes=q, reduction="none"),
    "Recall@10": lambda s, r, q: tn.recall(s, r, 10, indexes=q, reduction="none"),
}
SCORERS = ("linear", "mlp")
MLP_HIDDEN = 64
BATCH_QUERIES = 32
PEER = "LightGBM LambdaMART"
# The tuning grids (8 points each), the usual best first so that a smaller --grid-points keeps it.
GRID = [dict(lr=lr, weight_decay=wd) for wd, lr in itertools.product((0.0, 1e-4), (3e-3, 1e-2, 1e-3, 3e-2))]
LIGHTGBM_GRID = [
    dict(learning_rate=lr, num_leaves=leaves, min_child_samples=child)
    for child, lr, leaves in itertools.product((20, 50), (0.1, 0.05), (31, 15))
]
CUTOFFS = (1, 3, 5, 10)
COLUMNS = (*(f"NDCG@{k}" for k in CUTOFFS), "MAP")
CONVENTIONS = ("default", "letor")
PLOT_CUTOFFS = tuple(range(1, 11))
PLOT_METHODS = 5


@dataclass(frozen=True)
class Budget:
    """How long each method trains and how many runs there are."""

    folds: tuple[int, ...]
    seeds: tuple[int, ...] = (0, 1, 2)
    max_epochs: int = 40
    patience: int = 5
    grid_points: int = len(GRID)  # the first this many points of each grid
    lightgbm_trees: int = 500
    lightgbm_patience: int = 30


def budget_for(dataset: str, quick: bool) -> Budget:
    folds = letor_data.folds_of(dataset)
    if quick:  # one fold, two grid points, a few epochs: checks that everything runs
        return Budget(folds=folds[:1], seeds=(0, 1), max_epochs=4, patience=2, grid_points=2,
                      lightgbm_trees=40, lightgbm_patience=10)  # fmt: skip
    return Budget(folds=folds)


# --- one training run -------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    fold: int
    method: str  # a loss of LOSSES, or PEER
    scorer: str  # "linear", "mlp", or "trees" for the peer
    point: int  # index into the method's grid
    seed: int
    target: str = "NDCG@10"  # the validation metric (a key of TARGETS) that stops and tunes it


def scorer_model(scorer: str, features: int) -> torch.nn.Module:
    if scorer == "linear":
        return torch.nn.Linear(features, 1)
    return torch.nn.Sequential(torch.nn.Linear(features, MLP_HIDDEN), torch.nn.ReLU(), torch.nn.Linear(MLP_HIDDEN, 1))


def query_index(ds: RankingDataset) -> Tensor:
    """The query position of every item of ``ds`` (its flat ``indexes``)."""
    return torch.repeat_interleave(torch.arange(len(ds)), ds.list_lengths)


def has_relevant(ds: RankingDataset) -> Tensor:
    """``[Q]`` whether each query has a relevant document."""
    hits = torch.zeros(len(ds)).index_add_(0, query_index(ds), (ds.relevance > 0).float())
    return hits > 0


def padded(ds: RankingDataset, queries: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    return pad_batch([ds[int(q)] for q in queries])


def validation_value(scores: Tensor, ds: RankingDataset, target: str) -> float:
    """The mean of ``target`` (a key of :data:`TARGETS`) over the queries of ``ds``."""
    return float(TARGETS[target](scores, ds.relevance, query_index(ds)).mean())


def train_neural(splits: dict[str, RankingDataset], task: Task, budget: Budget) -> tuple[float, int, np.ndarray]:
    """Train one scorer with one loss; returns the best validation value of the task's target, the
    epochs run and the test scores (in the dataset's query-grouped order) of the best epoch."""
    torch.manual_seed(task.seed)
    generator = torch.Generator().manual_seed(task.seed)
    train, vali, test = splits["train"], splits["vali"], splits["test"]
    point = GRID[task.point]
    model = scorer_model(task.scorer, train.num_features)
    optimiser = torch.optim.Adam(model.parameters(), lr=point["lr"], weight_decay=point["weight_decay"])
    loss_fn = LOSSES[task.method] if task.method in LOSSES else TWINS[task.method]
    learnable = torch.nonzero(has_relevant(train)).squeeze(-1)
    best, best_state, stale, epochs = -math.inf, None, 0, 0
    for epoch in range(budget.max_epochs):
        epochs = epoch + 1
        model.train()
        order = learnable[torch.randperm(len(learnable), generator=generator)]
        for start in range(0, len(order), BATCH_QUERIES):
            features, relevance, mask = padded(train, order[start : start + BATCH_QUERIES])
            loss = loss_fn(model(features).squeeze(-1), relevance, mask)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        model.eval()
        with torch.no_grad():
            value = validation_value(model(vali.features).squeeze(-1), vali, task.target)
        if value > best:
            best, stale = value, 0
            best_state = {name: tensor.clone() for name, tensor in model.state_dict().items()}
        else:
            stale += 1
            if stale >= budget.patience:
                break
    model.load_state_dict(best_state)
    with torch.no_grad():
        scores = model(test.features).squeeze(-1)
    return best, epochs, scores.double().numpy()


def train_lightgbm(splits: dict[str, RankingDataset], task: Task, budget: Budget) -> tuple[float, int, np.ndarray]:
    """LambdaMART with early stopping on LightGBM's validation NDCG@10; the validation value
    returned is the library's (default convention) of the task's target."""
    import lightgbm

    def part(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ds = splits[name]
        return ds.features.numpy(), ds.relevance.numpy(), ds.list_lengths.numpy()

    (x, y, group), (vx, vy, vgroup) = part("train"), part("vali")
    # LightGBM 4.7 renamed eval_set to eval_X / eval_y; older versions know only eval_set.
    renamed = "eval_X" in inspect.signature(lightgbm.LGBMRanker.fit).parameters
    validation = {"eval_X": (vx,), "eval_y": (vy,)} if renamed else {"eval_set": [(vx, vy)]}
    model = lightgbm.LGBMRanker(
        objective="lambdarank", n_estimators=budget.lightgbm_trees, subsample=0.9, subsample_freq=1,
        colsample_bytree=0.9, random_state=task.seed, n_jobs=1, deterministic=True, force_row_wise=True,
        verbose=-1, **LIGHTGBM_GRID[task.point],
    )  # fmt: skip
    model.fit(x, y, group=group, eval_group=[vgroup], eval_at=[10], **validation,
              callbacks=[lightgbm.early_stopping(budget.lightgbm_patience, verbose=False)])  # fmt: skip
    vali = validation_value(torch.from_numpy(model.predict(vx)), splits["vali"], task.target)
    return vali, int(model.best_iteration_ or budget.lightgbm_trees), model.predict(splits["test"].features.numpy())


# --- running the tasks ------------------------------------------------------------------------

_FOLDS: dict[int, dict[str, RankingDataset]] = {}
_BUDGET: Budget | None = None


def _start_worker(folds: dict[int, dict[str, RankingDataset]], budget: Budget) -> None:
    global _BUDGET
    torch.set_num_threads(1)
    _FOLDS.update(folds)
    _BUDGET = budget


def _run(task: Task) -> tuple[Task, float, int, np.ndarray, float]:
    start = time.perf_counter()
    train = train_lightgbm if task.method == PEER else train_neural
    vali, epochs, scores = train(_FOLDS[task.fold], task, _BUDGET)
    return task, vali, epochs, scores.astype(np.float64), time.perf_counter() - start


def run_tasks(tasks: Sequence[Task], folds, budget: Budget, workers: int) -> dict[Task, tuple]:
    """Every task's (validation value, epochs, test scores, seconds); the same whatever ``workers``."""
    if workers <= 1:
        _start_worker(folds, budget)
        return {result[0]: result[1:] for result in map(_run, tasks)}
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, initializer=_start_worker, initargs=(folds, budget)) as pool:
        return {result[0]: result[1:] for result in pool.imap_unordered(_run, tasks)}


def methods(with_peer: bool) -> list[tuple[str, str]]:
    """(method, scorer) pairs compared, in table order."""
    pairs = [(loss, scorer) for loss in LOSSES for scorer in SCORERS]
    return pairs + ([(PEER, "trees")] if with_peer else [])


def method_name(method: str, scorer: str) -> str:
    return method if scorer == "trees" else f"{method} ({scorer})"


def grid_of(method: str) -> list[dict]:
    return LIGHTGBM_GRID if method == PEER else GRID


def tune_and_run(folds, budget: Budget, with_peer: bool, workers: int, *, pairs: Sequence[tuple[str, str]] | None = None,
                 target: str = "NDCG@10") -> dict:  # fmt: skip
    """Per (method, scorer, fold): the chosen grid point, and per seed the test scores; every run
    stops early and is tuned on the validation ``target``. ``pairs``: the (method, scorer) pairs,
    by default :func:`methods`."""
    pairs = methods(with_peer) if pairs is None else pairs
    first = budget.seeds[0]
    tuning = [Task(f, m, s, p, first, target) for f in budget.folds for m, s in pairs for p in range(budget.grid_points)]
    tuned = run_tasks(tuning, folds, budget, workers)
    chosen = {}
    for fold, (method, scorer) in itertools.product(budget.folds, pairs):
        trials = [Task(fold, method, scorer, p, first, target) for p in range(budget.grid_points)]
        chosen[fold, method, scorer] = max(trials, key=lambda t: (tuned[t][0], -t.point))  # ties: earlier point
    again = [replace(task, seed=seed) for task in chosen.values() for seed in budget.seeds[1:]]
    runs = {**tuned, **run_tasks(again, folds, budget, workers)}
    out = {}
    for (fold, method, scorer), task in chosen.items():
        out[method, scorer, fold] = {
            "point": task.point,
            "validation": {seed: runs[replace(task, seed=seed)][0] for seed in budget.seeds},
            "epochs": {seed: runs[replace(task, seed=seed)][1] for seed in budget.seeds},
            "scores": {seed: runs[replace(task, seed=seed)][2] for seed in budget.seeds},
        }
    seconds = sum(result[3] for result in runs.values())
    return {"runs": out, "task_seconds": seconds, "tasks": len(runs)}


# --- scoring and the report -------------------------------------------------------------------


def per_query(scores: np.ndarray, test: RankingDataset, convention: str, cutoffs=CUTOFFS) -> np.ndarray:
    """``[Q, len(cutoffs) + 1]`` per-query NDCG@cutoffs and AP (over the whole list) of ``scores``."""
    s, r, q = torch.from_numpy(scores), test.relevance.double(), query_index(test)
    ndcg_options = dict(LETOR["ndcg"]) if convention == "letor" else {}
    ap_options = dict(LETOR["average_precision"]) if convention == "letor" else {}
    ndcg = tn.ndcg(s, r, cutoffs, indexes=q, reduction="none", **ndcg_options)
    ap = tn.average_precision(s, r, indexes=q, reduction="none", **ap_options)
    return torch.cat([ndcg, ap.unsqueeze(-1)], dim=-1).numpy()


def summarise(runs: dict, folds, budget: Budget, with_peer: bool) -> dict:
    """Means, stds over folds, the paired tests against the best, and NDCG@1..10 for the plot."""
    table = {}
    for method, scorer in methods(with_peer):
        name = method_name(method, scorer)
        entry = {"method": method, "scorer": scorer, "folds": {}}
        for convention in CONVENTIONS:
            fold_means, queries = [], []
            for fold in budget.folds:
                test = folds[fold]["test"]
                values = np.stack([per_query(runs[method, scorer, fold]["scores"][seed], test, convention)
                                   for seed in budget.seeds])  # fmt: skip
                seed_mean = values.mean(axis=0)  # [Q, columns]
                fold_means.append(seed_mean.mean(axis=0))
                queries.append(seed_mean[has_relevant(test).numpy()])
                entry["folds"].setdefault(fold, {})[convention] = {
                    str(seed): dict(zip(COLUMNS, values[i].mean(axis=0).tolist())) for i, seed in enumerate(budget.seeds)
                }
            fold_means = np.stack(fold_means)
            entry[convention] = {
                "mean": dict(zip(COLUMNS, fold_means.mean(axis=0).tolist())),
                "std": dict(zip(COLUMNS, fold_means.std(axis=0, ddof=1).tolist() if len(fold_means) > 1 else [0.0] * len(COLUMNS))),
            }  # fmt: skip
            entry.setdefault("_queries", {})[convention] = np.concatenate(queries)
        curve = []
        for convention in CONVENTIONS:
            per_fold = [np.mean([per_query(runs[method, scorer, fold]["scores"][seed], folds[fold]["test"], convention,
                                           PLOT_CUTOFFS)[:, :-1].mean(axis=0) for seed in budget.seeds], axis=0)
                        for fold in budget.folds]  # fmt: skip
            curve.append(np.mean(per_fold, axis=0).tolist())
        entry["ndcg_at_k"] = dict(zip(CONVENTIONS, curve))
        entry["grid_points"] = {str(fold): runs[method, scorer, fold]["point"] for fold in budget.folds}
        entry["epochs"] = {str(fold): runs[method, scorer, fold]["epochs"] for fold in budget.folds}
        table[name] = entry
    for convention in CONVENTIONS:
        significance(table, convention)
    for entry in table.values():
        entry.pop("_queries")
    return table


def significance(table: dict, convention: str) -> None:
    """Paired t-tests of every method against the best on each column, Holm-adjusted over methods."""
    for c, column in enumerate(COLUMNS):
        best = max(table, key=lambda name: table[name][convention]["mean"][column])
        others = [name for name in table if name != best]
        base = torch.from_numpy(table[best]["_queries"][convention][:, c])
        values = [torch.from_numpy(table[name]["_queries"][convention][:, c]) for name in others]
        # A method whose every query ties with the best's has no difference to test: the t-test's
        # p is undefined there (0 / 0, NaN as in scipy), and the honest answer is 1.
        raw = torch.tensor([1.0 if torch.equal(base, other) else float(paired_t_test(base, other).pvalue)
                            for other in values], dtype=torch.float64)  # fmt: skip
        adjusted = holm(raw) if len(others) else raw
        for name, p in zip(others, adjusted.tolist()):
            table[name].setdefault("p_vs_best", {}).setdefault(convention, {})[column] = None if math.isnan(p) else p
        table[best].setdefault("p_vs_best", {}).setdefault(convention, {})[column] = None
        table[best].setdefault("best_in", {}).setdefault(convention, []).append(column)


def markdown(table: dict, header: dict) -> str:
    lines = [f"# LETOR benchmark: {header['dataset']}", "", f"Command: `{header['command']}`  ",
             f"Date: {header['date']}; machine: {header['machine']}; wall time {header['wall_seconds']:.0f} s "
             f"({header['tasks']} training runs, {header['task_seconds']:.0f} s of task time, {header['workers']} workers)  ",
             f"Protocol: folds {header['folds']}, seeds {header['seeds']}; " + header["grid"], ""]  # fmt: skip
    for convention, title in (("default", "library default convention (linear gain, 1/log2(rank+1), ties averaged)"),
                              ("letor", "LETOR 4.0 tool convention (conventions.LETOR)")):  # fmt: skip
        lines += [f"## {title}", "",
                  "Mean over folds of the seed means ± std over folds. p: paired t-test against the best on "
                  "NDCG@10 (per-query seed means, test queries with a relevant document), Holm-adjusted.", "",
                  "| method | " + " | ".join(COLUMNS) + " | p (NDCG@10) |", "|---" * (len(COLUMNS) + 2) + "|"]  # fmt: skip
        order = sorted(table, key=lambda name: -table[name][convention]["mean"]["NDCG@10"])
        for name in order:
            entry = table[name]
            cells = [f"{entry[convention]['mean'][c]:.4f} ± {entry[convention]['std'][c]:.4f}" for c in COLUMNS]
            p = entry["p_vs_best"][convention]["NDCG@10"]
            shown = "best" if p is None and "NDCG@10" in entry.get("best_in", {}).get(convention, []) else (
                "n/a" if p is None else f"{p:.3g}" + (" *" if p < 0.05 else ""))
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {shown} |")
        lines.append("")
    lines.append("`*`: significantly below the best at 0.05 after Holm's correction.")
    return "\n".join(lines) + "\n"


def parse_markdown(text: str) -> dict[str, dict[str, dict[str, float]]]:
    """``{section title: {method: {column: mean}}}`` from :func:`markdown`'s tables."""
    sections: dict[str, dict[str, dict[str, float]]] = {}
    title = ""
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:]
            sections[title] = {}
        elif line.startswith("| ") and not line.startswith("| method") and title:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            sections[title][cells[0]] = {c: float(v.split("±")[0]) for c, v in zip(COLUMNS, cells[1:])}
    return sections


def plot(table: dict, path: Path, dataset: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for axis, convention in zip(axes, CONVENTIONS):
        top = sorted(table, key=lambda name: -table[name][convention]["mean"]["NDCG@10"])[:PLOT_METHODS]
        for name in top:
            axis.plot(PLOT_CUTOFFS, table[name]["ndcg_at_k"][convention], marker="o", label=name)
        axis.set(title=f"{dataset}: {convention} convention", xlabel="k", ylabel="NDCG@k", xticks=PLOT_CUTOFFS)
        axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def score_file(folder: Path, name: str, fold: int, seed: int) -> Path:
    return folder / name.replace(" ", "_").replace("(", "").replace(")", "") / f"Fold{fold}.seed{seed}.txt"


def write_scores(runs: dict, folds, budget: Budget, with_peer: bool, folder: Path) -> None:
    """One file per method, fold and seed: a score per line of the fold's test file, in file order."""
    for (method, scorer), fold in itertools.product(methods(with_peer), budget.folds):
        test = folds[fold]["test"]
        for seed, scores in runs[method, scorer, fold]["scores"].items():
            in_file = test.in_file_order(torch.from_numpy(scores)) if test.rows is not None else torch.from_numpy(scores)
            target = score_file(folder, method_name(method, scorer), fold, seed)
            target.parent.mkdir(parents=True, exist_ok=True)
            # repr: the shortest text that reads back as the same float64, so no ties appear or vanish
            target.write_text("".join(f"{v!r}\n" for v in in_file.tolist()))


def run(folds: dict[int, dict[str, RankingDataset]], budget: Budget, out: Path, *, dataset: str, command: str,
        workers: int, with_peer: bool) -> dict:  # fmt: skip
    """The whole benchmark on loaded ``folds``; writes the outputs into ``out`` and returns the table."""
    start = time.perf_counter()
    result = tune_and_run(folds, budget, with_peer, workers)
    table = summarise(result["runs"], folds, budget, with_peer)
    out.mkdir(parents=True, exist_ok=True)
    write_scores(result["runs"], folds, budget, with_peer, out / "scores")
    grid = (f"grid ({budget.grid_points} points, seed {budget.seeds[0]}, best validation NDCG@10 kept): "
            f"Adam lr x weight decay {GRID[: budget.grid_points]}; LightGBM {LIGHTGBM_GRID[: budget.grid_points]}; "
            f"at most {budget.max_epochs} epochs of {BATCH_QUERIES}-query batches, patience {budget.patience}; "
            f"LightGBM at most {budget.lightgbm_trees} trees, patience {budget.lightgbm_patience}")  # fmt: skip
    header = {
        "dataset": dataset, "command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average "
                   f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end",
        "wall_seconds": time.perf_counter() - start, "tasks": result["tasks"], "task_seconds": result["task_seconds"],
        "workers": workers, "folds": list(budget.folds), "seeds": list(budget.seeds), "grid": grid,
        "budget": asdict(budget),
    }  # fmt: skip
    (out / "results.md").write_text(markdown(table, header))
    (out / "results.json").write_text(json.dumps({"header": header, "methods": table}, indent=1, default=str))
    plot(table, out / "ndcg_at_k.png", dataset)
    return table


def main(quick: bool = False, argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks letor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", default=None, help=f"the folder of the LETOR tarballs (default: ${letor_data.ENVIRONMENT_VARIABLE}, "
                        "else ../shared/data/letor beside the repository)")  # fmt: skip
    parser.add_argument("--dataset", choices=sorted(letor_data.DATASETS), default="mq2008")
    parser.add_argument("--out", default="runs", help="output folder; results go to OUT/<dataset> (default: runs)")
    parser.add_argument("--workers", type=int, default=2, help="processes, one torch thread each (default: 2)")
    parser.add_argument("--no-peer", action="store_true", help="leave LightGBM out")
    smaller = parser.add_argument_group("a smaller budget than the default (the table then says so)")
    smaller.add_argument("--folds", type=int, nargs="+", help="the folds to run")
    smaller.add_argument("--seeds", type=int, nargs="+", help="the seeds; the first tunes")
    smaller.add_argument("--grid-points", type=int, help="the first this many points of each grid")
    smaller.add_argument("--max-epochs", type=int)
    smaller.add_argument("--patience", type=int)
    args = parser.parse_args(argv)
    budget = budget_for(args.dataset, quick)
    given = {"folds": args.folds, "seeds": args.seeds, "grid_points": args.grid_points,
             "max_epochs": args.max_epochs, "patience": args.patience}  # fmt: skip
    budget = replace(budget, **{name: tuple(v) if isinstance(v, list) else v for name, v in given.items() if v is not None})
    if not set(budget.folds) <= set(letor_data.folds_of(args.dataset)) or not budget.seeds:
        parser.error(f"--folds must be among {letor_data.folds_of(args.dataset)}, and --seeds not empty")
    if not 1 <= budget.grid_points <= min(len(GRID), len(LIGHTGBM_GRID)):
        parser.error(f"--grid-points must be between 1 and {min(len(GRID), len(LIGHTGBM_GRID))}")
    root = letor_data.data_root(args.data)
    folds = {fold: letor_data.read_fold(root, args.dataset, fold) for fold in budget.folds}
    with_peer = not args.no_peer
    if with_peer:
        try:
            import lightgbm  # noqa: F401
        except ImportError:
            print("lightgbm is not installed (pip install lightgbm, or the bench extra): no LightGBM row")
            with_peer = False
    command = "python -m benchmarks letor " + " ".join(["--quick"] * quick + list(argv or []))
    out = Path(args.out) / args.dataset
    table = run(folds, budget, out, dataset=args.dataset, command=command, workers=args.workers, with_peer=with_peer)
    print((out / "results.md").read_text())
    return table
