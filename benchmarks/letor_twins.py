"""On the LETOR folds, does training on a metric's own smooth twin give a better test value of that
metric than training on NDCG's twin?

    python -m benchmarks letor_twins --data ../shared/data/letor --dataset mq2008 [--targets MRR@10 MAP Recall@5]

For each target metric and each relaxation (approximate ranks, ``relaxation="approx"``; NeuralSort's
top rows, ``"neuralsort"``) two losses are trained: the target's own twin (``tn.mrr_loss(k=10)``
for MRR@10, ``tn.average_precision_loss`` for MAP, ``tn.recall_loss(k=5)`` for Recall@5) and NDCG's
twin at the target's cutoff (``tn.ndcg_loss(k=10)`` for MRR@10, over the whole list for MAP).
Every other option is the library's default.

Protocol: the LETOR benchmark's (:mod:`benchmarks.letor`: the MLP scorer on the raw features, Adam
on 32-query batches, the same 8-point grid, every fold, seeds 0, 1, 2), with the *target* in place
of NDCG@10 both to stop each run early and to choose its grid point: each loss is tuned for the
number it is judged by. Test values are the target per query under the library's default
convention (binary relevance = label > 0 for MRR, MAP and recall; a query without a relevant
document scores 0).

Reported per target and relaxation: the mean over folds of each fold's seed mean ± the standard
deviation over folds, for both losses; their difference; and a paired t-test of the two on the
per-query seed means of every test query that has a relevant document. Written to
``--out/twins/<dataset>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from torch_ndcg.stats import paired_t_test

from . import letor, letor_data

DEFAULT_TARGETS = {"mq2008": ("MRR@10", "MAP", "Recall@5"), "ohsumed": ("MRR@10", "MAP", "Recall@10")}
OWN_METRIC = {"MRR@10": ("MRR", 10), "MAP": ("AP", None), "Recall@5": ("Recall", 5), "Recall@10": ("Recall", 10)}
SCORER = "mlp"


def contenders(target: str, relaxation: str) -> tuple[str, str]:
    """The names (keys of :data:`benchmarks.letor.TWINS`) of ``target``'s own twin and NDCG's twin."""
    metric, k = OWN_METRIC[target]
    return letor.twin_name(relaxation, metric, k), letor.twin_name(relaxation, "NDCG", k)


def test_values(scores: np.ndarray, test, target: str) -> np.ndarray:
    s, r = torch.from_numpy(scores), test.relevance.double()
    return letor.TARGETS[target](s, r, letor.query_index(test)).numpy()


def compare(folds, budget: letor.Budget, target: str, workers: int) -> tuple[list[dict], float, int]:
    """One row per relaxation (both losses' test ``target`` and the paired test between them), the
    task seconds and the number of training runs."""
    names = [name for relaxation in letor.TWIN_RELAXATIONS for name in contenders(target, relaxation)]
    result = letor.tune_and_run(folds, budget, False, workers, pairs=[(name, SCORER) for name in names], target=target)
    runs = result["runs"]
    summary = {}
    for name in names:
        fold_means, queries = [], []
        for fold in budget.folds:
            test = folds[fold]["test"]
            seed_mean = np.mean([test_values(runs[name, SCORER, fold]["scores"][seed], test, target)
                                 for seed in budget.seeds], axis=0)  # fmt: skip
            fold_means.append(seed_mean.mean())
            queries.append(seed_mean[letor.has_relevant(test).numpy()])
        summary[name] = {
            "mean": float(np.mean(fold_means)), "std": float(np.std(fold_means, ddof=1)) if len(fold_means) > 1 else 0.0,
            "folds": [float(v) for v in fold_means], "queries": np.concatenate(queries),
            "points": {str(f): runs[name, SCORER, f]["point"] for f in budget.folds},
            "epochs": {str(f): runs[name, SCORER, f]["epochs"] for f in budget.folds},
        }  # fmt: skip
    rows = []
    for relaxation in letor.TWIN_RELAXATIONS:
        names = contenders(target, relaxation)
        own, ndcg = (summary[name] for name in names)
        same = np.array_equal(own["queries"], ndcg["queries"])
        p = 1.0 if same else float(paired_t_test(torch.from_numpy(own["queries"]), torch.from_numpy(ndcg["queries"])).pvalue)
        rows.append({
            "target": target, "relaxation": relaxation.strip(), "own": names[0], "ndcg": names[1], "p": p,
            **{f"{side}_{key}": value[key] for side, value in (("own", own), ("ndcg", ndcg))
               for key in ("mean", "std", "folds", "points", "epochs")},
        })  # fmt: skip
    return rows, result["task_seconds"], result["tasks"]


def markdown(rows: list[dict], header: dict) -> str:
    lines = [f"# Own twin against NDCG's twin: {header['dataset']}", "", f"Command: `{header['command']}`  ",
             f"Date: {header['date']}; machine: {header['machine']}; wall time {header['wall_seconds']:.0f} s "
             f"({header['tasks']} training runs, {header['task_seconds']:.0f} s of task time, {header['workers']} workers)  ",
             f"Protocol: MLP scorer, folds {header['folds']}, seeds {header['seeds']}, {header['grid_points']} grid points, "
             f"at most {header['max_epochs']} epochs, patience {header['patience']}; each run stopped and tuned on the "
             "validation target; library default convention", "",
             "Test value of the target: mean over folds of the seed means ± std over folds; p: paired t-test "
             "own vs NDCG twin (per-query seed means, test queries with a relevant document).", "",
             "| target | relaxation | own twin | NDCG twin | own − NDCG | p |", "|---|---|---|---|---|---|"]  # fmt: skip
    for row in rows:
        lines.append(
            f"| {row['target']} | {row['relaxation']} | {row['own']}: {row['own_mean']:.4f} ± {row['own_std']:.4f} | "
            f"{row['ndcg']}: {row['ndcg_mean']:.4f} ± {row['ndcg_std']:.4f} | {row['own_mean'] - row['ndcg_mean']:+.4f} | "
            f"{row['p']:.3g}{' *' if row['p'] < 0.05 else ''} |"
        )
    lines += ["", "`*`: the two differ at 0.05 (one test per row, no correction)."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks letor_twins", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", default=None, help=f"the folder of the LETOR tarballs (default: ${letor_data.ENVIRONMENT_VARIABLE}, "
                        "else ../shared/data/letor beside the repository)")  # fmt: skip
    parser.add_argument("--dataset", choices=sorted(DEFAULT_TARGETS), default="mq2008")
    parser.add_argument("--targets", nargs="+", choices=sorted(OWN_METRIC), help="default: MRR@10, MAP and Recall@5 "
                        "on MQ2008, Recall@10 in place of Recall@5 on OHSUMED")  # fmt: skip
    parser.add_argument("--out", default="runs", help="output folder; results go to OUT/twins/ (default: runs)")
    parser.add_argument("--workers", type=int, default=2, help="processes, one torch thread each (default: 2)")
    parser.add_argument("--folds", type=int, nargs="+", help="the folds to run (default: all)")
    args = parser.parse_args(argv)
    budget = letor.budget_for(args.dataset, quick)
    if args.folds:
        if not set(args.folds) <= set(budget.folds):
            parser.error(f"--folds must be among {budget.folds}")
        budget = replace(budget, folds=tuple(args.folds))
    targets = args.targets or DEFAULT_TARGETS[args.dataset]
    root = letor_data.data_root(args.data)
    folds = {fold: letor_data.read_fold(root, args.dataset, fold) for fold in budget.folds}
    start, rows, task_seconds, tasks = time.perf_counter(), [], 0.0, 0
    for target in targets:
        found, seconds, count = compare(folds, budget, target, args.workers)
        rows, task_seconds, tasks = rows + found, task_seconds + seconds, tasks + count
    command = "python -m benchmarks letor_twins " + " ".join(["--quick"] * quick + list(argv or []))
    header = {
        "dataset": args.dataset, "command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average "
                   f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end",
        "wall_seconds": time.perf_counter() - start, "tasks": tasks, "task_seconds": task_seconds,
        "workers": args.workers, "folds": list(budget.folds), "seeds": list(budget.seeds),
        "grid_points": budget.grid_points, "max_epochs": budget.max_epochs, "patience": budget.patience,
    }  # fmt: skip
    out = Path(args.out) / "twins"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.dataset}.md").write_text(markdown(rows, header))
    (out / f"{args.dataset}.json").write_text(json.dumps({"header": header, "rows": rows}, indent=1))
    print((out / f"{args.dataset}.md").read_text())
    return rows
