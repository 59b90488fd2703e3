"""The pair weights inside the pairwise losses equal rax 0.4.0's lambdaweights, per list, on
padded lists (reference values made by ``tests/peer_values/rax_pairs/make_values.py``).

Conventions matched: rax's gain is ``2**label − 1`` (``gain="exp2"``), its ``topn`` is ``k``,
``normalize=True`` divides by the exact IDCG@k as this library always does, and its DCG weights
are scaled up by the padded list length ``N`` (``dcg``, ``dcg2``; not ``labeldiff``), which this
library does not do: the test multiplies by ``N``. rax's mean over its pairs is the losses' mean
over their pairs (``rel_i > rel_j``, both real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn

VALUES = json.loads((Path(__file__).resolve().parents[1] / "peer_values" / "rax_pairs" / "values.json").read_text())
LOSSES = {"pairwise_logistic_loss": tn.ranknet_loss, "pairwise_hinge_loss": tn.pairwise_hinge_loss}
WEIGHTS = {"labeldiff": "label_difference", "dcg": "lambdarank", "dcg2": "dcg2"}


@pytest.mark.parametrize("case", VALUES["cases"], ids=lambda c: f"{c['loss']}-{c['lambdaweight']}-topn{c['topn']}")
def test_pair_weights_equal_rax_lambdaweights_per_list(case):
    inputs = VALUES["inputs"]
    scores = torch.tensor(inputs["scores"], dtype=torch.float64)
    labels = torch.tensor(inputs["labels"], dtype=torch.float64)
    where = torch.tensor(inputs["where"])
    ours = LOSSES[case["loss"]](
        scores, labels, mask=where, weighting=WEIGHTS[case["lambdaweight"]], k=case["topn"], gain="exp2",
        reduction="none",
    )
    scale = 1 if case["lambdaweight"] == "labeldiff" else scores.shape[-1]
    theirs = torch.tensor(case["sum"], dtype=torch.float64) / torch.tensor(VALUES["pairs"], dtype=torch.float64)
    torch.testing.assert_close(ours * scale, theirs, rtol=1e-5, atol=1e-5)
