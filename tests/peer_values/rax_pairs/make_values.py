"""Reference values from rax's pairwise losses with its lambdaweights, per list, for
``tests/losses/test_pair_weights_rax.py``. jax is too heavy for CI, so this script is run by hand
and its output, ``values.json`` beside it, is committed.

Run (rax 0.4.0, jax 0.10.2 were used):
    python3 -m venv /work/venvs/raxpairs && /work/venvs/raxpairs/bin/pip install rax==0.4.0 jax jaxlib numpy
    /work/venvs/raxpairs/bin/python tests/peer_values/rax_pairs/make_values.py

Each case is rax's loss with ``reduce_fn=None`` (one value per ordered pair, 0 outside rax's
pairs ``label_i > label_j`` of valid items), summed per list, and the number of those pairs per
list, so that the test compares rax's per-list mean over its pairs.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jax
import numpy as np
import rax

jax.config.update("jax_enable_x64", True)

OUT = Path(__file__).resolve().parent / "values.json"


def lists(seed: int, rows: int = 8, length: int = 16) -> dict:
    """Distinct scores, integer labels 0–4, padding anywhere (every list keeps a pair)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(rows, length))
    labels = rng.integers(0, 5, size=(rows, length)).astype(np.float64)
    labels[:, 0], labels[:, 1] = 4.0, 0.0
    where = rng.random((rows, length)) < 0.8
    where[:, :2] = True
    return {"scores": scores, "labels": labels, "where": where}


def main() -> None:
    data = lists(0)
    s, y, m = data["scores"], data["labels"], data["where"]
    pairs = ((y[:, :, None] > y[:, None, :]) & m[:, :, None] & m[:, None, :]).sum((-2, -1))
    weights = {"labeldiff": (rax.labeldiff_lambdaweight, (None,))}
    weights["dcg"] = (functools.partial(rax.dcg_lambdaweight, normalize=True), (None, 5, 10))
    weights["dcg2"] = (functools.partial(rax.dcg2_lambdaweight, normalize=True), (None, 5, 10))
    cases = []
    for loss_name, loss in (("pairwise_logistic_loss", rax.pairwise_logistic_loss),
                            ("pairwise_hinge_loss", rax.pairwise_hinge_loss)):
        for weight_name, (weight, cutoffs) in weights.items():
            for topn in cutoffs:
                fn = weight if topn is None else functools.partial(weight, topn=topn)
                per_pair = np.asarray(loss(s, y, where=m, lambdaweight_fn=fn, reduce_fn=None))
                cases.append({
                    "loss": loss_name, "lambdaweight": weight_name, "topn": topn,
                    "sum": per_pair.reshape(s.shape[0], -1).sum(-1).tolist(),
                })
    out = {
        "inputs": {key: value.tolist() for key, value in data.items()},
        "pairs": pairs.tolist(),
        "cases": cases,
        "versions": {"rax": rax.__version__, "jax": jax.__version__},
    }
    OUT.write_text(json.dumps(out) + "\n")
    print(f"{len(cases)} cases from rax {rax.__version__} -> {OUT}")


if __name__ == "__main__":
    main()
