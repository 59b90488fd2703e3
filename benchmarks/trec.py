"""TREC run evaluation: ``torch_ndcg.trec`` against ranx and pytrec_eval on an MS MARCO-sized run.

``python -m benchmarks trec [--quick] [--queries 7000] [--depth 1000] [--dir /tmp] [--tools ...]``

The case: a run of 7,000 queries × 1,000 documents (7 M lines, the size of an MS MARCO dev run)
and qrels with 1–3 judged documents per query (about 2; labels 0–2, mostly 1), about 80% of them
retrieved. Docnos are numbers from an 8.8 M collection (so byte order is not numeric order);
scores (gamma-distributed, plus 20 for a relevant document: recip_rank about 0.2, BM25's on
MS MARCO dev) have two decimals, so a query's 1,000 scores hold many ties, broken by docno as
trec_eval does. Lines of a query are shuffled: no tool receives a run already in rank order.

Measures (trec_eval names): ``ndcg_cut.10 recip_rank P.10 recall.100 map``; ranx's are
``ndcg@10 mrr precision@10 recall@100 map``. ``torch_ndcg.trec`` is also timed on trec_eval's
default set (what it prints without ``-m``), on its own: pytrec_eval's trec_eval 9 maps
iprec_at_recall's levels to other counts of relevant documents, and ranx has no iprec_at_recall.

Each tool reads the same files with its own reader (pytrec_eval's ``parse_qrel``/``parse_run``,
ranx's ``Qrels.from_file``/``Run.from_file``, ``trec.read_qrels``/``trec.read_run``), then
evaluates what it read: "evaluate" is that second step alone (sorting by score is part of it),
"end to end" is both. Every tool first reads and evaluates a tiny case (200 × 100) untimed, so
one-time costs (ranx's numba compilation, imports) stay out. Then each tool, ranx first, reads
the files once and evaluates them three times; the best of the three is its "evaluate" time
(the machine is shared and noisy). pytrec_eval builds its evaluator in every call; ranx gets
the Run it read each time (if ranx keeps a sorted copy from the first call, later calls profit). The "check" column is the largest difference of the five means from pytrec_eval's.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable

import numpy as np

MEASURES = ("ndcg_cut.10", "recip_rank", "P.10", "recall.100", "map")
RANX = ("ndcg@10", "mrr", "precision@10", "recall@100", "map")
PYTREC = ("ndcg_cut_10", "recip_rank", "P_10", "recall_100", "map")
REPEATS = 3  # evaluations timed per tool (best kept); reading is timed once
BOOST = 20.0  # added to a relevant document's score: recip_rank about 0.2, as BM25's on MS MARCO dev


def write_files(folder: str, queries: int, depth: int, seed: int = 0) -> tuple[str, str]:
    """Write (or reuse) the qrels and run files of the case; return their paths."""
    os.makedirs(folder, exist_ok=True)
    qrels_path = os.path.join(folder, f"bench_{queries}x{depth}_{seed}.qrels")
    run_path = os.path.join(folder, f"bench_{queries}x{depth}_{seed}.run")
    if os.path.exists(qrels_path) and os.path.exists(run_path):
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    collection = 8_800_000
    qrels_lines, run_parts = [], []
    for q in range(queries):
        docs = rng.permutation(np.unique(rng.integers(0, collection, size=depth + 50)))[:depth + 3]
        judged = docs[:rng.integers(1, 4)]
        labels = rng.choice([0, 1, 1, 1, 2], size=judged.size)
        qrels_lines += [f"{q} 0 {doc} {label}\n" for doc, label in zip(judged.tolist(), labels.tolist())]
        retrieved = docs[3:].copy()
        hit = rng.random(judged.size) < 0.8
        slots = rng.choice(depth, size=judged.size, replace=False)
        retrieved[slots[hit]] = judged[hit]
        scores = rng.gamma(2.0, 4.0, size=depth)
        scores[slots[hit]] += BOOST * (labels[hit] > 0)
        scores = np.round(scores, 2)
        rank = np.argsort(-scores, kind="stable")
        ranks = np.empty(depth, dtype=np.int64)
        ranks[rank] = np.arange(1, depth + 1)
        order = rng.permutation(depth)  # lines of a query in no particular order
        run_parts.append("".join(
            f"{q} Q0 {doc} {r} {s:.2f} bench\n"
            for doc, r, s in zip(retrieved[order].tolist(), ranks[order].tolist(), scores[order].tolist())
        ))
    with open(qrels_path + ".tmp", "w") as out:
        out.writelines(qrels_lines)
    with open(run_path + ".tmp", "w") as out:
        out.writelines(run_parts)
    os.replace(qrels_path + ".tmp", qrels_path)
    os.replace(run_path + ".tmp", run_path)
    return qrels_path, run_path


def _timed(fn: Callable[[], object], repeats: int = 1) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls, and the last call's value."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


Timing = tuple[float, float, dict[str, float], float | None]  # read, evaluate, means, default set


def _ranx(qrels_path: str, run_path: str) -> Timing:
    import ranx

    read, (qrels, run) = _timed(lambda: (ranx.Qrels.from_file(qrels_path, kind="trec"),
                                         ranx.Run.from_file(run_path, kind="trec")))
    seconds, values = _timed(lambda: ranx.evaluate(qrels, run, list(RANX)), REPEATS)
    return read, seconds, dict(zip(MEASURES, (float(values[name]) for name in RANX))), None


def _pytrec(qrels_path: str, run_path: str) -> Timing:
    import pytrec_eval

    def read() -> tuple[dict, dict]:
        with open(qrels_path) as q, open(run_path) as r:
            return pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)

    read_seconds, (qrels, run) = _timed(read)

    def evaluate() -> dict[str, dict[str, float]]:
        return pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)

    seconds, per_query = _timed(evaluate, REPEATS)
    means = {name: float(np.mean([values[key] for values in per_query.values()]))
             for name, key in zip(MEASURES, PYTREC)}
    return read_seconds, seconds, means, None


def _ours(qrels_path: str, run_path: str) -> Timing:
    from torch_ndcg import trec

    read, (qrels, run) = _timed(lambda: (trec.read_qrels(qrels_path), trec.read_run(run_path)))
    seconds, result = _timed(lambda: trec.evaluate(qrels, run, list(MEASURES)), REPEATS)
    default_set, _ = _timed(lambda: trec.evaluate(qrels, run), REPEATS)
    return read, seconds, dict(zip(MEASURES, (result.summary[name] for name in PYTREC))), default_set


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks trec", description=__doc__)
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--dir", default="/tmp", help="where the generated files are written (and reused)")
    parser.add_argument("--tools", default="ranx,pytrec_eval,torch_ndcg.trec",
                        help="comma-separated tools to time (torch_ndcg.trec always runs)")
    args = parser.parse_args(argv)
    queries, depth = (200, 100) if quick else (args.queries, args.depth)
    qrels_path, run_path = write_files(args.dir, queries, depth)
    warm = write_files(args.dir, 200, 100, seed=1)
    lines = queries * depth
    print(f"TREC run: {queries:,} queries x {depth:,} docs ({lines / 1e6:.1f} M lines), "
          f"measures {' '.join(MEASURES)}; seconds, evaluate = best of {REPEATS}")
    chosen = set(args.tools.split(",")) | {"torch_ndcg.trec"}
    tools = {name: fn for name, fn in {"ranx": _ranx, "pytrec_eval": _pytrec, "torch_ndcg.trec": _ours}.items()
             if name in chosen}
    results = {}
    for name, fn in tools.items():
        try:
            fn(*warm)
            results[name] = fn(qrels_path, run_path)
        except ImportError as error:
            print(f"{name}: not installed ({error})")
        gc.collect()
    reference = results.get("pytrec_eval", (0, 0, {}, None))[2]
    ours_eval = results["torch_ndcg.trec"][1]
    ours_total = sum(results["torch_ndcg.trec"][:2])
    default_set = results["torch_ndcg.trec"][3]
    print(f"| tool | read | evaluate | end to end | evaluate: ratio to torch_ndcg | end to end: ratio | check |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, (read, seconds, means, _) in results.items():
        check = "reference" if name == "pytrec_eval" else (
            f"max |Δ| {max(abs(means[m] - reference[m]) for m in MEASURES):.1e}" if reference else "")
        print(f"| {name} | {read:.2f} | {seconds:.3f} | {read + seconds:.2f} | "
              f"{seconds / ours_eval:.1f}x | {(read + seconds) / ours_total:.2f}x | {check} |")
    from torch_ndcg.trec.names import output_names, parse

    print(f"torch_ndcg.trec on trec_eval's default set (no -m: {len(output_names(parse(None)))} values, "
          f"bpref and iprec_at_recall included): evaluate {default_set:.3f} s (best of {REPEATS}), "
          f"{default_set / ours_eval:.2f}x its time for the five measures")


if __name__ == "__main__":
    main()
