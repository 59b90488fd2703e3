"""Score saved test scores and LightGBM LambdaMART on the same split with scikit-learn's NDCG.

    python examples/train_ranker.py --config configs/letor.json --data DIR --save-scores ours.scores
    python examples/compare_lightgbm.py --data DIR --scores ours.scores

The split is the one ``train_ranker.py`` uses for ``--data DIR`` with the same config (including
the validation queries it carves from train when DIR has no validation file). LightGBM
(``pip install lightgbm``; needed by this script only) trains ``LGBMRanker`` on the raw features
of the training split with early stopping on the validation split, once per seed. Every score
file is then judged by one function, :func:`sklearn_ndcg`: scikit-learn's ``ndcg_score`` per test
query with exp2 gain (``2**label - 1``), averaged over the queries that have a relevant item.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ranker_config import load_config  # noqa: E402
from train_ranker import DEFAULT_CONFIG, load_data, print_table  # noqa: E402

from torch_ndcg.data import RankingDataset  # noqa: E402

LETOR_CONFIG = DEFAULT_CONFIG.with_name("letor.json")


def sklearn_ndcg(scores: np.ndarray, test: RankingDataset, k: int) -> float:
    """Mean scikit-learn NDCG@k (exp2 gain, ties averaged) of ``scores [items]`` in the dataset's
    order, over the queries that have a relevant item (the others are skipped)."""
    from sklearn.metrics import ndcg_score

    values = []
    bounds = test.offsets.tolist()
    for start, stop in zip(bounds, bounds[1:]):
        gains = 2.0 ** test.relevance[start:stop].double().numpy() - 1
        if gains.sum() == 0:
            continue
        if stop - start == 1:
            values.append(1.0)  # scikit-learn refuses one-item lists; the only order is ideal
            continue
        values.append(ndcg_score(gains[None], scores[None, start:stop], k=k))
    return float(np.mean(values))


def lightgbm_scores(splits: dict[str, RankingDataset], seed: int) -> tuple[np.ndarray, int]:
    """Test scores of LambdaMART with early stopping on the validation NDCG@10, and its rounds."""
    import lightgbm

    def part(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ds = splits[name]
        return ds.features.numpy(), ds.relevance.numpy(), ds.list_lengths.numpy()

    x, y, group = part("train")
    vx, vy, vgroup = part("vali")
    model = lightgbm.LGBMRanker(objective="lambdarank", n_estimators=500, learning_rate=0.05, num_leaves=31,
                                subsample=0.9, subsample_freq=1, colsample_bytree=0.9, random_state=seed,
                                n_jobs=1, verbose=-1)
    # LightGBM 4.7 renamed eval_set to eval_X / eval_y; older versions know only eval_set.
    renamed = "eval_X" in inspect.signature(model.fit).parameters
    validation = {"eval_X": (vx,), "eval_y": (vy,)} if renamed else {"eval_set": [(vx, vy)]}
    model.fit(x, y, group=group, eval_group=[vgroup], eval_at=[10], **validation,
              callbacks=[lightgbm.early_stopping(50, verbose=False)])
    return model.predict(splits["test"].features.numpy()), model.best_iteration_


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the folder given to train_ranker.py --data")
    parser.add_argument("--config", default=str(LETOR_CONFIG), help="the config of the run (default: %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="the run's --set overrides (e.g. seed=1, which also draws the validation queries)")
    parser.add_argument("--scores", nargs="*", default=[], help="score files (one per test line) to judge")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="LightGBM seeds (default: 0 1 2)")
    parser.add_argument("--k", type=int, default=10, help="NDCG cutoff (default: %(default)s)")
    args = parser.parse_args(argv)
    config = load_config(args.config, [*args.set, f"data={json.dumps(args.data)}"])
    splits = load_data(config)
    test = splits["test"]
    results: dict[str, float] = {}
    rows = []
    for path in args.scores:
        in_file_order = np.loadtxt(path, dtype=np.float64, ndmin=1)
        if in_file_order.shape != (len(test.relevance),):
            parser.error(f"{path} holds {in_file_order.size} scores; the test file has {len(test.relevance)} items")
        results[path] = sklearn_ndcg(in_file_order[test.rows.numpy()], test, args.k)
        rows.append([path, f"{results[path]:.4f}", "-"])
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        print("lightgbm is not installed, so there is no LightGBM column (pip install lightgbm)")
    else:
        values = []
        for seed in args.seeds:
            start = time.perf_counter()
            scores, rounds = lightgbm_scores(splits, seed)
            values.append(sklearn_ndcg(scores, test, args.k))
            rows.append([f"LightGBM LambdaMART, seed {seed} ({rounds} trees)", f"{values[-1]:.4f}",
                         f"{time.perf_counter() - start:.1f}"])
        results["lightgbm"] = float(np.mean(values))
        rows.append([f"LightGBM LambdaMART, mean of seeds {args.seeds}", f"{results['lightgbm']:.4f}", "-"])
    print(f"test NDCG@{args.k} by sklearn.metrics.ndcg_score: exp2 gain (2**label - 1), ties averaged, "
          f"queries with no relevant item skipped; {len(test)} test queries")
    print_table(["scores", f"NDCG@{args.k}", "LightGBM seconds"], rows)
    return results


if __name__ == "__main__":
    main()
