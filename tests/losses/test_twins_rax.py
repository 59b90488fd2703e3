"""The twin losses against rax 0.4.0's ``approx_t12n`` and ``bound_t12n`` (values committed by
tests/peer_values/rax_t12n.py), per list, within 1e-5.

The options that reproduce rax's conventions: ``cutoff="midway"`` (rax cuts between the relaxed
ranks of the items ranked k and k + 1), ``threshold=1`` (rax: label ≥ 1 is relevant),
``gain="exp2"`` for DCG/NDCG, ``adaptive_k=True`` for precision (rax divides by its soft count
of retrieved items), ``ap_normaliser="r"`` (rax's AP@k divides by every relevant item) and
``empty="zero"`` (rax gives a list with nothing relevant 0). rax's cutoff ignores the mask
(padding takes places among its top k), so k = 10 is compared on unpadded lists only
(see the script).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn

REFERENCE = json.loads((Path(__file__).parents[1] / "peer_values" / "rax_t12n.json").read_text())
LOSSES = {
    "mrr": (tn.mrr_loss, {"threshold": 1.0, "empty": "zero"}),
    "average_precision": (tn.average_precision_loss, {"threshold": 1.0, "ap_normaliser": "r", "empty": "zero"}),
    "recall": (tn.recall_loss, {"threshold": 1.0, "empty": "zero"}),
    "precision": (tn.precision_loss, {"threshold": 1.0, "adaptive_k": True, "empty": "zero"}),
    "dcg": (tn.dcg_loss, {"gain": "exp2"}),
    "ndcg": (tn.ndcg_loss, {"gain": "exp2", "empty": "zero"}),
}


def _relaxation(name: str, temperature: str) -> object:
    if name == "approx":
        return tn.ApproxRanks(temperature=float(temperature), cutoff="midway")
    return tn.BoundRanks(cutoff="midway")


CASES = [(lists, key) for lists in ("padded", "full") for key in sorted(REFERENCE[lists]["values"])]


@pytest.mark.parametrize(("lists", "key"), CASES)
def test_twin_equals_rax_per_list(lists: str, key: str) -> None:
    relaxation, temperature, metric, k = key.split("|")
    loss, options = LOSSES[metric]
    data = REFERENCE[lists]
    scores = torch.tensor(data["scores"], dtype=torch.float64)
    labels = torch.tensor(data["labels"], dtype=torch.float64)
    mask = torch.tensor(data["where"])
    per_list = loss(
        scores, labels, None if k == "None" else int(k), mask=mask, reduction="none",
        relaxation=_relaxation(relaxation, temperature), **options,
    )  # fmt: skip
    value = -per_list if metric == "dcg" else 1 - per_list
    torch.testing.assert_close(value, torch.tensor(data["values"][key], dtype=torch.float64), rtol=0, atol=1e-5)
