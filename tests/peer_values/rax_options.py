"""Reference values from rax for the options that follow rax (per-item weights, the label ≥ 1
threshold, unretrieved items, ordered-pair accuracy). jax is too heavy for CI, so this script
is run by hand and its output, ``rax_options.json`` beside it, is committed.

Run (rax 0.4.0, jax 0.10.2 were used):
    python -m venv /tmp/raxenv && /tmp/raxenv/bin/pip install rax "jax[cpu]" numpy
    /tmp/raxenv/bin/python tests/peer_values/rax_options.py > tests/peer_values/rax_options.json
"""

from __future__ import annotations

import json
import sys

import jax
import numpy as np
import rax

jax.config.update("jax_enable_x64", True)


def lists(seed: int, rows: int = 6, length: int = 7) -> dict:
    """Distinct scores, labels with fractions (so label ≥ 1 differs from label > 0), weights with
    zeros, some items masked, and some unretrieved (score -inf) in a copy of the scores."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(rows, length))
    labels = rng.choice([0.0, 0.0, 0.5, 1.0, 2.0, 3.0], size=(rows, length))
    weights = rng.choice([0.0, 0.5, 1.0, 2.0, 3.5], size=(rows, length))
    where = rng.random((rows, length)) < 0.85
    where[:, 0] = True
    unretrieved = scores.copy()
    unretrieved[rng.random((rows, length)) < 0.3] = -np.inf
    unretrieved[:, 0] = 0.0  # every list retrieves something
    ties = np.round(scores, 0)  # tied scores, for OPA
    return dict(scores=scores, labels=labels, weights=weights, where=where, unretrieved=unretrieved, ties=ties)


def per_list(metric, scores, labels, **options) -> list:
    return np.asarray(metric(scores, labels, reduce_fn=None, **options)).tolist()


def main() -> None:
    data = lists(0)
    s, y, w, m = data["scores"], data["labels"], data["weights"], data["where"]
    out: dict = {"inputs": {key: value.tolist() for key, value in data.items()}, "values": {}}
    values = out["values"]
    for topn in (None, 3):
        tag = "all" if topn is None else str(topn)
        for name, metric in (("mrr", rax.mrr_metric), ("precision", rax.precision_metric),
                             ("recall", rax.recall_metric), ("ap", rax.ap_metric)):
            values[f"{name}@{tag}"] = per_list(metric, s, y, where=m, topn=topn)
            values[f"{name}@{tag} unretrieved"] = per_list(metric, data["unretrieved"], y, where=m, topn=topn)
        for name, metric in (("dcg", rax.dcg_metric), ("ndcg", rax.ndcg_metric)):
            values[f"{name}@{tag} weights"] = per_list(metric, s, y, where=m, topn=topn, weights=w)
            values[f"{name}@{tag} unretrieved"] = per_list(metric, data["unretrieved"], y, where=m, topn=topn)
    values["opa"] = per_list(rax.opa_metric, s, y, where=m)
    values["opa ties"] = per_list(rax.opa_metric, data["ties"], y, where=m)
    out["versions"] = {"rax": rax.__version__, "jax": jax.__version__}
    json.dump(out, sys.stdout)  # -inf is written as -Infinity, which Python's json reads back


if __name__ == "__main__":
    main()
