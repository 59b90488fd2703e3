"""Values and gradients equal allRank 1.4.3's, from the committed reference (allrank_reference/).

allRank's conventions map onto named options: label −1 → ``mask``, ``gain="exp2"``,
``empty="keep"`` (allRank skips no list), ``reduction="sum"`` for lambdaLoss and ``"mean"`` for
listNet/listMLE. allRank's rankNet averages over every pair of the whole batch; ours averages
per list, so it is compared list by list (a batch of one) and, for the batch, as the
pair-count-weighted mean of our per-list values. allRank's approxNDCGLoss is −ApproxNDCG with
``alpha = 1/τ``, no cutoff, and a list with nothing relevant counted as 0 (``empty="zero"``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn

REFERENCE = json.loads((Path(__file__).parent / "allrank_reference" / "losses.json").read_text())
SCHEMES = {None: "none", "lambdaRank_scheme": "lambdarank", "ndcgLoss2_scheme": "ndcg_loss2", "ndcgLoss2PP_scheme": "ndcg_loss2pp"}
TOL = {"atol": 1e-5, "rtol": 1e-5}


def _inputs(case):
    batch = REFERENCE["batches"][case["batch"]]
    labels = torch.tensor(batch["labels"], dtype=torch.float64)
    mask = labels != REFERENCE["padding"]
    return torch.tensor(batch["scores"], dtype=torch.float64), labels.clamp(min=0), mask


def _ours(case):
    """Our loss as a function of (scores, reduction), with allRank's conventions."""
    _, labels, mask = _inputs(case)
    if case["loss"] == "listNet":
        return lambda s, reduction: tn.listnet_loss(s, labels, mask=mask, empty="keep", reduction=reduction)
    if case["loss"] == "listMLE":
        return lambda s, reduction: tn.listmle_loss(s, labels, mask=mask, empty="keep", reduction=reduction)
    if case["loss"] == "rankNet":
        return lambda s, reduction: tn.ranknet_loss(s, labels, mask=mask, reduction=reduction)
    o = case["options"]
    if case["loss"] == "approxNDCG":
        return lambda s, reduction: -tn.approx_ndcg(
            s, labels, mask=mask, gain="exp2", temperature=1 / o["alpha"], empty="zero", reduction=reduction
        )
    return lambda s, reduction: tn.lambda_loss(
        s, labels, o["k"], mask=mask, gain="exp2", weighting=SCHEMES[o["weighing_scheme"]], sigma=o["sigma"],
        mu=o["mu"], empty="keep", reduction=reduction,
    )  # fmt: skip


def _case_id(case):
    o = case["options"]
    if case["loss"] == "approxNDCG":
        return f"approxNDCG-{case['batch']}-alpha{o['alpha']}"
    extra = f"-{SCHEMES[o['weighing_scheme']]}-k{o['k']}-s{o['sigma']}-mu{o['mu']}" if o else ""
    return f"{case['loss']}-{case['batch']}{extra}"


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=_case_id)
def test_each_list_alone_matches_allrank(case):
    scores, _, _ = _inputs(case)
    loss = _ours(case)
    x = scores.clone().requires_grad_()
    values = loss(x, "none")
    values.nansum().backward()  # lists are independent: row b of the gradient is list b's own
    expected = torch.tensor(case["list_values"], dtype=torch.float64)
    torch.testing.assert_close(values, expected, equal_nan=True, **TOL)
    for b, grad in enumerate(case["list_grads"]):
        if math.isnan(case["list_values"][b]):  # allRank's rankNet on a list without pairs: 0/0
            assert torch.all(x.grad[b] == 0)
        else:
            torch.testing.assert_close(x.grad[b], torch.tensor(grad, dtype=torch.float64), **TOL)


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=_case_id)
def test_whole_batch_matches_allrank(case):
    scores, labels, mask = _inputs(case)
    loss = _ours(case)
    x = scores.clone().requires_grad_()
    if case["loss"] == "rankNet":
        better = (labels[:, :, None] > labels[:, None, :]) & mask[:, :, None] & mask[:, None, :]
        pairs = better.sum((-2, -1)).double()
        value = (loss(x, "none").nan_to_num() * pairs).sum() / pairs.sum()
    else:
        value = loss(x, "sum" if case["loss"] == "lambdaLoss" else "mean")
    value.backward()
    torch.testing.assert_close(value, torch.tensor(case["batch_value"], dtype=torch.float64), **TOL)
    torch.testing.assert_close(x.grad, torch.tensor(case["batch_grad"], dtype=torch.float64), **TOL)


@pytest.mark.parametrize("case", [c for c in REFERENCE["cases"] if c["loss"] == "approxNDCG"], ids=_case_id)
@pytest.mark.parametrize("impl", ["dense", "streaming"])
def test_approx_ndcg_matches_allrank_on_every_implementation(case, impl):
    scores, labels, mask = _inputs(case)
    x = scores.clone().requires_grad_()
    tau = 1 / case["options"]["alpha"]
    value = -tn.approx_ndcg(x, labels, mask=mask, gain="exp2", temperature=tau, empty="zero", impl=impl)
    value.backward()
    torch.testing.assert_close(value, torch.tensor(case["batch_value"], dtype=torch.float64), **TOL)
    torch.testing.assert_close(x.grad, torch.tensor(case["batch_grad"], dtype=torch.float64), **TOL)
