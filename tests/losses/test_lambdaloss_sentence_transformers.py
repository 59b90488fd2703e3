"""``lambda_loss`` against sentence-transformers' ``LambdaLoss`` on graded labels, from the
committed values and gradients of ``sentence_transformers_reference/losses.json`` (float64,
within 1e-6).

Their options reproduced: gain ``2^label − 1`` (``gain="exp2"``), ``k=None``, ``log₂`` and σ = 1
(this loss's), the scheme by name (``NDCGLoss1Scheme`` is ``weighting="ndcg_loss1"``, over every
ordered pair of real items, ``i = j`` included; ``NDCGLoss2Scheme`` is ``"ndcg_loss2"``, over the
pairs ``rel_i > rel_j``), and their one mean over the pairs of the whole batch:
``reduction="sum"`` divided by that number of pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn

REFERENCE = json.loads((Path(__file__).resolve().parent / "sentence_transformers_reference" / "losses.json").read_text())
CASES = [case for case in REFERENCE["cases"] if case["st_loss"] == "LambdaLoss" and "weighting" in case["ours"]]


def _pairs(relevance: torch.Tensor, mask: torch.Tensor, every: bool) -> torch.Tensor:
    real = mask[:, :, None] & mask[:, None, :]
    return (real if every else real & (relevance[:, :, None] > relevance[:, None, :])).sum()


def test_reference_covers_ndcg_loss1():
    assert {case["ours"]["weighting"] for case in CASES} == {"ndcg_loss1", "ndcg_loss2"}
    assert any(len(set(case["lengths"])) > 1 for case in CASES)  # ragged lists too


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_lambda_loss_equals_sentence_transformers(case):
    scores = torch.tensor(case["scores"], dtype=torch.float64)
    grades = torch.tensor(case["teacher_scores"], dtype=torch.float64)
    lengths = torch.tensor(case["lengths"])
    mask = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
    scores = torch.where(mask, scores, 1e3).requires_grad_(True)  # junk at the padding must not matter
    grades = torch.where(mask, grades, 7.0)
    total = tn.lambda_loss(scores, grades, mask=mask, reduction="sum", **case["ours"])
    value = total / _pairs(grades, mask, case["ours"]["weighting"] == "ndcg_loss1")
    value.backward()
    expected_grad = torch.tensor(case["grad"], dtype=torch.float64)
    torch.testing.assert_close(value.detach(), torch.tensor(case["value"], dtype=torch.float64), rtol=0, atol=1e-6)
    torch.testing.assert_close(scores.grad, expected_grad, rtol=0, atol=1e-6)
