"""Reference values of rax's metric transformations, ``approx_t12n`` and ``bound_t12n``, of MRR, AP,
recall, precision, DCG and NDCG, per list (``reduce_fn=None``), for the twin losses' parity test
(tests/losses/test_twins_rax.py). jax is too heavy for CI, so this script is run by hand and its
output, ``rax_t12n.json`` beside it, is committed.

Run (rax 0.4.0 with jax 0.5.3 were used: newer jax lacks the jax.util that rax 0.4.0 calls):
    python3 -m venv /work/venvs/rax && /work/venvs/rax/bin/pip install rax==0.4.0 jax==0.5.3 jaxlib==0.5.3 numpy
    /work/venvs/rax/bin/python tests/peer_values/rax_t12n.py > tests/peer_values/rax_t12n.json
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

import jax
import numpy as np
import rax

jax.config.update("jax_enable_x64", True)

METRICS = {
    "mrr": rax.mrr_metric,
    "average_precision": rax.ap_metric,
    "recall": rax.recall_metric,
    "precision": rax.precision_metric,
    "dcg": rax.dcg_metric,
    "ndcg": rax.ndcg_metric,
}
TRANSFORMATIONS = {"approx": rax.approx_t12n, "bound": rax.bound_t12n}
TEMPERATURES = (1.0, 0.25)  # approx_t12n's; bound_t12n has none
CUTOFFS = (None, 10)


def lists(seed: int, padded: bool, rows: int = 10, length: int = 16) -> dict:
    """Distinct scores, labels 0–3 (rax counts label ≥ 1 as relevant), one list with nothing
    relevant; ``padded``: lists of 5 to 16 items (some at most k = 10 long). Padding has label 0:
    rax's AP counts a relevant padded item as ranked first.

    rax's cutoff (``approx_cutoff`` inside ``_retrieved_items``) is called without the mask, so
    there a padded item (relaxed rank 1) takes one of the first k places and a list of at most k
    real items is still cut: the test compares k = 10 on the unpadded lists only."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(rows, length))
    labels = rng.choice([0.0, 0.0, 0.0, 1.0, 2.0, 3.0], size=(rows, length))
    lengths = rng.integers(5, length + 1, size=rows) if padded else np.full(rows, length)
    lengths[:2] = (length, 8 if padded else length)
    where = np.arange(length)[None, :] < lengths[:, None]
    labels[~where] = 0.0
    labels[2] = 0.0
    return {"scores": scores, "labels": labels, "where": where}


def main() -> None:
    output = {"rax": version("rax"), "jax": version("jax")}
    for name, padded in (("padded", True), ("full", False)):
        data = lists(0, padded)
        scores, labels, where = (jax.numpy.asarray(data[key]) for key in ("scores", "labels", "where"))
        values = {}
        for relaxation, transform in TRANSFORMATIONS.items():
            for temperature in TEMPERATURES if relaxation == "approx" else (None,):
                for metric, fn in METRICS.items():
                    loss = transform(fn) if temperature is None else transform(fn, temperature=temperature)
                    for k in CUTOFFS if not padded else (None,):
                        # The transformations return minus the smooth metric.
                        value = -loss(scores, labels, where=where, topn=k, reduce_fn=None)
                        values[f"{relaxation}|{temperature}|{metric}|{k}"] = np.asarray(value).tolist()
        output[name] = {key: data[key].tolist() for key in ("scores", "labels", "where")} | {"values": values}
    json.dump(output, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
