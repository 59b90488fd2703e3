"""The distillation losses against sentence-transformers' cross-encoder losses, on the committed
values and gradients of ``sentence_transformers_reference/losses.json`` (float64, 1e-6).

Where the two conventions differ the test states the difference and checks it exactly:

* RankNetLoss uses hard pair targets (pairs with a larger teacher score), ``log₂`` and one mean
  over every pair of the batch; ``distill_ranknet_loss`` uses soft targets ``σ(Δt/T)`` (hard as
  ``T → 0``), ``ln`` and a mean per list, then over lists.
* ADRMSELoss averages over every item of the batch; ``adr_mse_loss`` per list, then over lists.
* ListMLELoss and PListMLELoss are compared with ``respect_input_order=False`` (their default
  reads the documents' input order as the target and ignores the labels' values); PListMLELoss
  adds 1e-10 to its weights' sum, far below the tolerance.
* LambdaLoss has no counterpart: it reads labels as grades (gain ``2^label − 1``, clamped at 0),
  so teacher logits below 0 give it nothing to learn from (its loss and gradient are 0).
* MarginMSELoss takes fixed-width ``(query, positive, negatives…)`` rows: ``pairs="first"``.
"""

import json
import math
from pathlib import Path

import pytest
import torch

import torch_ndcg as tn

REFERENCE = json.loads((Path(__file__).resolve().parent / "sentence_transformers_reference" / "losses.json").read_text())
CASES = REFERENCE["cases"]
TOL = 1e-6


def _inputs(case):
    scores = torch.tensor(case["scores"], dtype=torch.float64)
    teacher = torch.tensor(case["teacher_scores"], dtype=torch.float64)
    lengths = torch.tensor(case["lengths"])
    mask = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
    # Junk at the padding: it must not matter.
    scores = torch.where(mask, scores, 1e3).requires_grad_(True)
    teacher = torch.where(mask, teacher, torch.nan)
    return scores, teacher, mask


def _pair_counts(mask):
    n = mask.sum(-1).to(torch.float64)
    return n * (n - 1) / 2


def ours_in_st_convention(case, scores, teacher, mask):
    options = case["ours"]
    loss = case["st_loss"]
    if loss == "ListNetLoss":
        return tn.distill_listnet_loss(scores, teacher, mask=mask, **options)
    if loss in ("ListMLELoss", "PListMLELoss"):
        return tn.distill_listmle_loss(scores, teacher, mask=mask, **options)
    if loss == "MarginMSELoss":
        return tn.margin_mse_loss(scores, teacher, mask=mask, **options)
    if loss == "RankNetLoss":
        per_list = tn.distill_ranknet_loss(scores, teacher, mask=mask, reduction="none", **options)
        pairs = _pair_counts(mask)
        return (per_list * pairs).sum() / pairs.sum() / math.log(2)
    if loss == "ADRMSELoss":
        per_list = tn.adr_mse_loss(scores, teacher, mask=mask, reduction="none", **options)
        items = mask.sum(-1).to(torch.float64)
        return (per_list * items).sum() / items.sum()
    raise AssertionError(loss)


SHARED = [case for case in CASES if case["st_loss"] != "LambdaLoss"]


def test_reference_covers_every_shared_loss():
    assert {case["st_loss"] for case in SHARED} == {
        "ListNetLoss", "ListMLELoss", "PListMLELoss", "RankNetLoss", "ADRMSELoss", "MarginMSELoss"
    }
    assert REFERENCE["sentence_transformers"].split(".")[0] >= "5"


@pytest.mark.parametrize("case", SHARED, ids=[case["name"] for case in SHARED])
def test_value_and_gradient_match_sentence_transformers(case):
    scores, teacher, mask = _inputs(case)
    value = ours_in_st_convention(case, scores, teacher, mask)
    value.backward()
    assert abs(value.item() - case["value"]) <= TOL
    grad = torch.tensor(case["grad"], dtype=torch.float64)
    assert (scores.grad - grad).abs().max().item() <= TOL
    assert torch.all(scores.grad[~mask] == 0)


EQUAL_LENGTHS = [c for c in CASES if len(set(c["lengths"])) == 1 and c["st_loss"] in ("RankNetLoss", "ADRMSELoss")]


@pytest.mark.parametrize("case", EQUAL_LENGTHS, ids=[case["name"] for case in EQUAL_LENGTHS])
def test_equal_lengths_need_no_pooling(case):
    # With equal lengths (and no teacher ties) the batch-pooled mean is the mean of per-list means:
    # only RankNet's log base differs.
    scores, teacher, mask = _inputs(case)
    if case["st_loss"] == "RankNetLoss":
        value = tn.distill_ranknet_loss(scores, teacher, mask=mask, **case["ours"]) / math.log(2)
    else:
        value = tn.adr_mse_loss(scores, teacher, mask=mask, **case["ours"])
    assert abs(value.item() - case["value"]) <= TOL


RAGGED = [c for c in CASES if len(set(c["lengths"])) > 1 and c["st_loss"] in ("RankNetLoss", "ADRMSELoss")]


@pytest.mark.parametrize("case", RAGGED, ids=[case["name"] for case in RAGGED])
def test_ragged_lists_are_where_the_means_differ(case):
    # The documented difference is real: on lists of different lengths, our per-list mean is not
    # sentence-transformers' batch-pooled number (so the pooling above is needed, not cosmetic).
    scores, teacher, mask = _inputs(case)
    if case["st_loss"] == "RankNetLoss":
        value = tn.distill_ranknet_loss(scores, teacher, mask=mask, **case["ours"]) / math.log(2)
    else:
        value = tn.adr_mse_loss(scores, teacher, mask=mask, **case["ours"])
    assert abs(value.item() - case["value"]) > 1e-3


def test_margin_labels_as_scores_or_margins_are_one_case():
    by_name = {case["name"]: case for case in CASES}
    for name, case in by_name.items():
        if name.startswith("marginmse-scores-"):
            twin = by_name[name.replace("-scores-", "-margins-")]
            assert abs(case["value"] - twin["value"]) <= 1e-12


def test_ranknet_soft_targets_differ_from_hard_ones_at_a_warm_temperature():
    case = next(c for c in CASES if c["st_loss"] == "RankNetLoss")
    scores, teacher, mask = _inputs(case)
    warm = dict(case, ours={"temperature": 1.0})
    assert abs(ours_in_st_convention(warm, scores, teacher, mask).item() - case["value"]) > 1e-2


def test_lambdaloss_learns_nothing_from_negative_teacher_logits():
    (case,) = [c for c in CASES if c["name"] == "lambdaloss-negative-teacher"]
    assert max(max(row) for row in case["teacher_scores"]) < 0
    assert case["value"] == 0.0 and all(g == 0.0 for row in case["grad"] for g in row)
    scores, teacher, mask = _inputs(case)
    assert tn.distill_listnet_loss(scores, teacher, mask=mask).item() > 0.1  # a distillation loss does
