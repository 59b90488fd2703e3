"""NeuralNDCG equals allRank 1.4.3's own ``neuralNDCG`` (committed values; see allrank_reference/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn

REFERENCE = json.loads((Path(__file__).parent / "allrank_reference" / "neural.json").read_text())["cases"]
# allRank stops Sinkhorn once every row and column sum is within 1e-6 of 1 (at most 50 iterations).
RUNS = [("dense", None), ("streaming", None), ("kernel", None), ("kernel", 1e-6)]


@pytest.mark.parametrize(("impl", "tol"), RUNS)
@pytest.mark.parametrize("case", REFERENCE, ids=[case["name"] for case in REFERENCE])
def test_value_and_gradient_equal_allranks(case, impl, tol):
    scores = torch.tensor(case["scores"], requires_grad=True)
    labels = torch.tensor(case["labels"])
    mask = labels != -1  # allRank's padding label
    loss = tn.neural_ndcg_loss(
        scores, labels.clamp(min=0), case["k"], mask=mask, gain="exp2", temperature=case["temperature"],
        sinkhorn_iters=50, impl=impl, tol=tol,
    )  # fmt: skip
    loss.backward()
    # allRank's loss is −mean NDCG, this one 1 − mean NDCG: equal gradients, values 1 apart.
    assert abs((loss.item() - 1.0) - case["loss"]) <= 2e-4
    torch.testing.assert_close(scores.grad, torch.tensor(case["grad"]), atol=2e-4, rtol=0)
    assert scores.grad.abs().max() > 1e-3  # not two vanishing gradients
