"""Reference values and gradients of allRank 1.4.3's listNet, listMLE, rankNet, lambdaLoss and
approxNDCGLoss.

allRank pins an old numpy, so it is not a dev dependency; this script ran once in a scratch
environment and its output, ``losses.json`` beside it, is what the tests compare against:

    python3 -m venv /tmp/allrank && /tmp/allrank/bin/pip install torch==2.13.0
    /tmp/allrank/bin/pip install --no-deps allrank==1.4.3
    /tmp/allrank/bin/python tests/losses/allrank_reference/make_losses.py

Only the loss modules are imported; the two allRank modules they import for a constant and a
device helper (which pull in torchvision, google-cloud and more) are replaced by stubs.

Conventions (allRank's): label −1 marks padding, gains are ``2^rel − 1`` with log2 discounts,
float64 inputs. Every loss is evaluated on the whole batch and on each list alone (a batch of
one), with the gradient of the scores in both cases.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import torch

PADDING = -1.0


def _stub_allrank_imports() -> None:
    loading = types.ModuleType("allrank.data.dataset_loading")
    loading.PADDED_Y_VALUE = PADDING
    utils = types.ModuleType("allrank.models.model_utils")
    utils.get_torch_device = lambda: torch.device("cpu")
    metrics = types.ModuleType("allrank.models.metrics")
    metrics.dcg = None
    sys.modules.update({
        "allrank.data.dataset_loading": loading, "allrank.models.model_utils": utils, "allrank.models.metrics": metrics,
    })  # fmt: skip


def batches() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """``graded``: labels 0–4 with ties, padding, a list with nothing relevant and a single real
    item; ``distinct``: tie-free labels (allRank's listMLE breaks ties with the global RNG)."""
    gen = torch.Generator().manual_seed(13)
    scores = torch.randn(6, 9, generator=gen, dtype=torch.float64) * 2
    labels = torch.randint(0, 5, (6, 9), generator=gen).double()
    labels[0, 4] = labels[1, 7:] = labels[3, 0] = PADDING  # padding at the end and in the middle
    labels[2] = 0.0  # nothing relevant
    labels[4] = PADDING
    labels[4, 5] = 3.0  # a single real item
    distinct = torch.stack([torch.randperm(9, generator=gen) for _ in range(5)]).double() * 0.5
    distinct[0, 2] = distinct[1, 6:] = distinct[3, 0] = PADDING
    return {
        "graded": (scores, labels),
        "distinct": (torch.randn(5, 9, generator=gen, dtype=torch.float64) * 2, distinct),
    }


def _value_and_grad(loss, scores: torch.Tensor, labels: torch.Tensor) -> tuple[float, list]:
    x = scores.clone().requires_grad_()
    value = loss(x, labels.clone())
    value.backward()
    return value.item(), x.grad.tolist()


def evaluate(loss, scores: torch.Tensor, labels: torch.Tensor) -> dict:
    batch_value, batch_grad = _value_and_grad(loss, scores, labels)
    per_list = [_value_and_grad(loss, scores[b : b + 1], labels[b : b + 1]) for b in range(scores.shape[0])]
    return {
        "batch_value": batch_value,
        "batch_grad": batch_grad,
        "list_values": [value for value, _ in per_list],
        "list_grads": [grad[0] for _, grad in per_list],
    }


def main() -> None:
    _stub_allrank_imports()
    from allrank.models.losses.approxNDCG import approxNDCGLoss
    from allrank.models.losses.lambdaLoss import lambdaLoss
    from allrank.models.losses.listMLE import listMLE
    from allrank.models.losses.listNet import listNet
    from allrank.models.losses.rankNet import rankNet

    data = batches()
    cases = []
    for name, (scores, labels) in data.items():
        cases.append({"loss": "listNet", "batch": name, "options": {}, **evaluate(listNet, scores, labels)})
        cases.append({"loss": "rankNet", "batch": name, "options": {}, **evaluate(rankNet, scores, labels)})
        if name == "distinct":
            cases.append({"loss": "listMLE", "batch": name, "options": {}, **evaluate(listMLE, scores, labels)})
        for alpha in (1.0, 2.0):
            loss = lambda s, y, alpha=alpha: approxNDCGLoss(s, y, alpha=alpha)  # noqa: E731
            cases.append({"loss": "approxNDCG", "batch": name, "options": {"alpha": alpha}, **evaluate(loss, scores, labels)})
        for scheme in (None, "lambdaRank_scheme", "ndcgLoss2_scheme", "ndcgLoss2PP_scheme"):
            for k in (None, 3):
                for sigma, mu in ((1.0, 10.0), (2.5, 3.0)):
                    options = {"weighing_scheme": scheme, "k": k, "sigma": sigma, "mu": mu}
                    loss = lambda s, y, options=options: lambdaLoss(s, y, **options)  # noqa: E731
                    cases.append({"loss": "lambdaLoss", "batch": name, "options": options, **evaluate(loss, scores, labels)})
    out = {
        "made_by": "tests/losses/allrank_reference/make_losses.py with allrank==1.4.3, torch " + torch.__version__,
        "padding": PADDING,
        "batches": {name: {"scores": s.tolist(), "labels": y.tolist()} for name, (s, y) in data.items()},
        "cases": cases,
    }
    path = Path(__file__).with_name("losses.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
