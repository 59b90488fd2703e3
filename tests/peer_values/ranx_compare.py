"""Reference reports from ranx's ``compare()`` for the TREC files of tests/trec/data and a generated
run set (written beside this script, in ``ranx_runs/``). ranx (numba) is too heavy for CI, so this
script is run by hand and its output, ``ranx_compare.json``, is committed.

Run (ranx 0.3.21 was used):
    pip install ranx "torch==<the installed version>"
    python tests/peer_values/ranx_compare.py > tests/peer_values/ranx_compare.json
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from importlib.metadata import version

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "trec", "data")
GENERATED = os.path.join(HERE, "ranx_runs")
#: ranx's names, and trec_eval's for the same measure (both: linear gain, relevant = judged ≥ 1).
MEASURES = {"precision@10": "P_10", "ndcg@10": "ndcg_cut_10", "map": "map", "mrr": "recip_rank"}
THRESHOLD = 0.01  # ranx's default max_p
PERMUTATIONS = 1000  # ranx's default n_permutations


def write_generated_runs(runs: int = 5, queries: int = 40, documents: int = 25, seed: int = 0) -> list[str]:
    """Qrels (grades 0–2) and ``runs`` runs of distinct scores, each a little better than the one
    before, so that some pairs differ significantly and some do not."""
    rng = np.random.default_rng(seed)
    os.makedirs(GENERATED, exist_ok=True)
    grades = rng.choice([0, 0, 0, 1, 1, 2], size=(queries, documents))
    with open(os.path.join(GENERATED, "qrels"), "w") as out:
        for q in range(queries):
            for doc in range(documents):
                out.write(f"{100 + q} 0 doc{doc:03d} {grades[q, doc]}\n")
    paths = []
    for r in range(runs):
        path = os.path.join(GENERATED, f"run{r + 1}")
        with open(path, "w") as out:
            for q in range(queries):
                noise = rng.normal(0, 1, documents)
                scores = 0.25 * r * grades[q] + noise
                order = np.argsort(-scores)
                for rank, doc in enumerate(order):
                    out.write(f"{100 + q} Q0 doc{doc:03d} {rank + 1} {scores[doc]:.6f} system{r + 1}\n")
        paths.append(path)
    return paths


def report(qrels_path: str, run_paths: list[str], names: list[str], stat_test: str) -> dict:
    from ranx import Qrels, Run, compare

    qrels = Qrels.from_file(qrels_path, kind="trec")
    runs = []
    for path, name in zip(run_paths, names):
        # trec_eval ignores text after a run line's sixth field (results.test has some); ranx refuses it.
        with open(path) as source, tempfile.NamedTemporaryFile("w", suffix=".run", delete=False) as clean:
            clean.writelines(" ".join(line.split()[:6]) + "\n" for line in source if line.strip())
        run = Run.from_file(clean.name, kind="trec")
        os.unlink(clean.name)
        run.name = name
        runs.append(run)
    result = compare(qrels, runs, list(MEASURES), stat_test=stat_test, n_permutations=PERMUTATIONS,
                     max_p=THRESHOLD, random_seed=42, make_comparable=True)
    data = result.to_dict()
    return {
        "qrels": os.path.relpath(qrels_path, HERE),
        "runs": [os.path.relpath(p, HERE) for p in run_paths],
        "names": names,
        "stat_test": stat_test,
        "means": {name: {MEASURES[m]: data[name]["scores"][m] for m in MEASURES} for name in names},
        "pvalues": {a: {b: {MEASURES[m]: data[a]["comparisons"][b][m] for m in MEASURES}
                        for b in names if b != a} for a in names},
        "table": result.to_table(),
    }


def main() -> None:
    warnings.simplefilter("ignore")

    generated = write_generated_runs()
    cases = []
    for stat_test in ("student", "fisher"):
        cases.append(report(os.path.join(DATA, "qrels.test"), [os.path.join(DATA, "results.test"),
                                                              os.path.join(DATA, "results.trunc")],
                            ["results.test", "results.trunc"], stat_test))
        cases.append(report(os.path.join(GENERATED, "qrels"), generated,
                            [os.path.basename(p) for p in generated], stat_test))
    json.dump({"ranx": version("ranx"), "threshold": THRESHOLD, "permutations": PERMUTATIONS, "measures": MEASURES,
               "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
