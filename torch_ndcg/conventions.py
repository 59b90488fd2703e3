"""The conventions that change a ranking number, how to choose them, and how to get each peer's number.

This module holds documentation only. Each option's exact values and default are in the
docstring of every function that takes it (``help(tn.ndcg)``); this page says what each
convention decides, and where the peers (scikit-learn, trec_eval, torchmetrics, rax, allRank)
differ.

## The options, in words

Every option is keyword-only. Gain, discount and cutoff are defined once
(:mod:`torch_ndcg.definitions`) and shared by the metrics and the losses, so the number a loss
optimises is the number a metric reports. A metric refuses an option it has no use for
(``tn.mrr(scores, relevance, gain="exp2")`` is a ``ValueError``) rather than ignoring it, and a
misspelled option is a ``TypeError``.

| option | what it decides |
| --- | --- |
| ``k`` | the cutoff: an int, ``None`` (the whole list; so does a ``k`` longer than the list), or a sequence such as ``(1, 5, 10)``: one output column per cutoff, in one pass |
| ``gain`` | a label's gain: ``"linear"`` (rel), ``"exp2"`` (2^rel − 1), or a callable giving finite gains ≥ 0 |
| ``discount`` | a rank's discount: ``"log2"`` (1 / log2(rank + 1), ranks from 1), or a callable of the rank |
| ``ties`` | tied scores: ``"average"`` (the exact expectation over all orders of the tied items), ``"first"`` (lower index first), ``"worst"`` / ``"best"`` (tied items by ascending / descending relevance) |
| ``empty`` | a query whose ideal DCG is 0 (nothing relevant, or every item masked): ``"zero"``, ``"one"``, ``"skip"`` (left out of the mean; NaN with ``reduction="none"``) or ``"error"``. The losses also take ``"keep"`` (compute the formula anyway) |
| ``mask`` | bool, ``True`` for a real item; masked items are neither ranked nor in the ideal ranking; padding may sit anywhere |
| ``indexes`` | flat 1-D inputs: the query id of every item (torchmetrics' layout); one value per distinct id, ascending |
| ``reduction`` | ``"mean"`` over queries, ``"sum"``, or ``"none"`` |
| ``sample_weight`` | per-query weights in the mean or sum |
| ``weights`` | DCG, NDCG, CG: per-item weights; an item adds gain × weight, and the ideal ranking orders by weighted gain (rax's ``weights``) |
| ``threshold`` | MRR, precision, recall, hit rate, AP: relevant means label ≥ threshold (by default label > 0) |
| ``ap_normaliser`` | AP@k divides by ``"min_r_k"`` min(R, k), ``"r"`` R, or ``"found"`` the relevant items in the top k |
| ``adaptive_k`` | precision@k of a list shorter than k divides by its length instead of k |
| ``allow_unretrieved`` | a ``-inf`` score marks an item never retrieved: it stays in the ideal ranking and in R |
| ``aggregation``, ``ignore_index`` | metric classes: how per-query values combine (``"mean"`` keeps a constant-size state; median, min, max or a callable keep every value), and a label value to leave out |
| ``validate`` | check values (NaN or infinite scores, negative or NaN labels, exp2 overflow). ``False`` skips the checks and never synchronises with a CUDA device, for compiled or graph-captured code; on valid input both give the same numbers |

The output is float32 (float64 if an input is float64); half-precision inputs accumulate in
float32; integer scores rank as exact float64 values and bool scores as 0/1. Bad input raises a
``ValueError`` or ``TypeError`` naming the argument.

## Against the peers

| | torch_ndcg | scikit-learn ``ndcg_score`` | torchmetrics ``RetrievalNormalizedDCG`` | trec_eval ``ndcg_cut`` | rax ``ndcg_metric`` | allRank ``ndcg`` |
| --- | --- | --- | --- | --- | --- | --- |
| gain | ``"linear"`` by default; ``"exp2"``, callable | linear | linear | linear (the judged label) | 2^rel − 1 | 2^rel − 1 |
| discount | 1/log2(rank+1) | 1/log2(rank+1) | 1/log2(rank+1) | 1/log2(rank+1) | 1/log2(rank+1) | 1/log2(rank+1) |
| tied scores | exact average (default), first, worst, best | average (``ignore_ties=False``) | average | broken by document id (descending) | broken by position | broken by sort order |
| nothing relevant | ``empty=``: zero (default), one, skip, error | 0 | 0 (classes: ``empty_target_action``) | 0 | 0 | 1 (``filler_value``) |
| padding | ``mask``, anywhere | none (equal-length rows) | flat rows + ``indexes`` | none (run files) | ``where`` mask | label −1 |
| per-item weights | ``weights=`` | — | — | — | ``weights`` | — |
| per-query weights | ``sample_weight=`` | ``sample_weight`` | — | — | — | — |
| relevant, for MRR / P / R / AP | label > 0; ``threshold=t``: label ≥ t | — | binary targets | label ≥ ``-l`` (1) | label ≥ 1 | — |
| AP@k divides by | ``ap_normaliser=``: min(R, k) (default), R, found | — | relevant found in the top k | R (``map_cut``) | R | — |
| P@k of a list shorter than k | ÷ k; ``adaptive_k=True``: ÷ length | — | ``adaptive_k`` | ÷ k | ÷ min(k, length) | — |
| combining queries (classes) | ``aggregation=`` mean (constant state), median, min, max, callable | mean | ``aggregation`` | mean | mean | — |

``ties="average"`` equals scikit-learn's ``ignore_ties=False`` and torchmetrics (to 1e-12 and
1e-6 in the tests); for MRR, hit rate and AP it is the exact expectation over tied orders
(McSherry & Najork, ECIR 2008). torchmetrics' MRR, precision, recall and AP treat items scored
≤ 0 as not retrieved, whereas this library ranks every unmasked item. With ``gain="exp2"``,
labels whose DCG could overflow are refused (about 127 − log2 N in float32); pass float64
relevance for larger labels.

More conventions, each decided and tested:

- **A one-item list** scores NDCG 1.0 when its item is relevant (torchmetrics agrees;
  scikit-learn refuses such lists), and is empty (``empty`` decides) when it is not.
- **DCG has no ``empty``**: it has no normaliser, so a list with nothing relevant has DCG 0 and
  counts as 0 in the mean. rax leaves fully masked lists out of its mean: take
  ``reduction="none"`` and average over the rows where ``mask.any(-1)``.
- **Ranked lists** (:mod:`torch_ndcg.ranked`): truth items never recommended still count in the
  ideal DCG; a repeated id counts at its first position only; a user with relevant items and no
  recommendations scores 0, never "empty", so returning nothing for hard users never helps.
- **The metric classes**: ``compute()`` before any ``update()`` warns and returns 0; a flat
  ``update()`` without items warns and adds nothing.

## Getting a peer's number

Each line is checked against the peer itself in the tests (rax through committed values and the
script that made them):

- scikit-learn ``ndcg_score(y_true, y_score, k=k, sample_weight=w)``:
  ``tn.ndcg(scores, relevance, k, sample_weight=w)``.
- torchmetrics ``RetrievalMAP(top_k=k)``:
  ``tn.average_precision(scores, target, k, indexes=indexes, ap_normaliser="found")``;
  ``RetrievalPrecision(top_k=k, adaptive_k=True)``:
  ``tn.precision(scores, target, k, indexes=indexes, adaptive_k=True)``.
- trec_eval ``-l L`` with ``recip_rank``, ``P_k``, ``recall_k``, ``map``, ``map_cut_k``:
  ``threshold=L`` (for ``map_cut_k`` also ``ap_normaliser="r"``), with distinct scores. For
  trec_eval's exact output, use :mod:`torch_ndcg.trec`.
- rax ``ndcg_metric(scores, labels, topn=k, weights=w)``:
  ``tn.ndcg(scores, labels, k, gain="exp2", weights=w)``; rax's ``mrr_metric``,
  ``recall_metric``, ``precision_metric``, ``ap_metric``: ``threshold=1``, with
  ``adaptive_k=True`` for precision and ``ap_normaliser="r"`` for AP; where rax gets ``-inf``
  scores, add ``allow_unretrieved=True``. rax ``opa_metric``: ``tn.ordered_pair_accuracy``.
- allRank ``neuralNDCG(y_pred, y_true, k=k)``: 1 +
  ``tn.neural_ndcg_loss(scores, relevance, k, mask=y_true != -1, gain="exp2", empty="zero")``.
  allRank's other losses: label −1 → ``mask``, ``gain="exp2"``, ``empty="keep"``, and
  ``reduction="sum"`` for ``lambda_loss``.

## The losses' defaults against allRank's

| | torch_ndcg | allRank 1.4.3 | why |
| --- | --- | --- | --- |
| padding | ``mask=`` (any position) | label −1 | labels stay free |
| lists with nothing to rank | skipped (``empty="skip"``) | computed | they carry no ranking signal; ``empty="keep"`` matches allRank |
| gain | ``"linear"`` | 2^rel − 1 | the metric's default, so the loss bounds the NDCG reported beside it |
| LambdaLoss reduction | mean over lists | sum over the batch | a scale that does not grow with the batch |
| RankNet averaging | per list, then over lists | over all pairs of the batch | each query counts once, as in the NDCG mean |
| ListMLE ties | index order, or ``generator=`` | torch's global RNG | reproducible without touching the global RNG |

## The LETOR evaluation tool

:data:`LETOR` holds, per metric, the options that give the numbers of the LETOR 4.0 evaluation
tool (``Eval-Score-4.0.pl``), so results can sit beside published LETOR tables:
``tn.ndcg(scores, labels, (1, 3, 5, 10), **LETOR["ndcg"])``,
``tn.precision(scores, labels, 10, **LETOR["precision"])``,
``tn.average_precision(scores, labels, **LETOR["average_precision"])`` (MAP: AP over the whole
list). The metric classes take the same options. The tool's rules, and the option that gives each:

- gain 2^rel − 1: ``gain="exp2"``;
- discount 1 at ranks 1 and 2, then 1/log2(rank): ``discount=letor_discount``;
- ties in file order (a stable sort): ``ties="first"``, with the items in file order (as
  :func:`torch_ndcg.data.read_letor` keeps them);
- a query with nothing relevant scores 0 and is still averaged: ``empty="zero"``;
- NDCG@k of a list with fewer than k documents is 0: ``short_list="zero"``;
- P@k divides by k, missing positions count as non-relevant (the default), labels ≥ 1 relevant.

The rules are those of the LETOR 4.0 tool (MQ2007/MQ2008). The LETOR 3.0 sets (OHSUMED) came
with their own evaluation script; this preset applies the 4.0 tool's rules to them too, so a
LETOR 3.0 number here is the 4.0 tool's, not necessarily the 3.0 script's.

Example: the same scores under three conventions.

>>> import torch, torch_ndcg as tn
>>> scores = torch.tensor([[0.9, 0.9, 0.1], [0.5, 0.4, 0.3]])
>>> relevance = torch.tensor([[0, 2, 1], [0, 0, 0]])
>>> tn.ndcg(scores, relevance, reduction="none")  # tie averaged; nothing relevant: 0
tensor([0.8100, 0.0000])
>>> tn.ndcg(scores, relevance, ties="first", empty="skip", reduction="none")
tensor([0.6697,    nan])
>>> tn.ndcg(scores, relevance, gain="exp2", empty="one")
tensor(0.9057)
>>> from torch_ndcg.conventions import LETOR
>>> tn.ndcg(scores, relevance, (1, 3, 5), **LETOR["ndcg"], reduction="none")  # 3 items: @5 is 0
tensor([[0.0000, 0.9077, 0.0000],
        [0.0000, 0.0000, 0.0000]])
"""

from collections.abc import Mapping
from types import MappingProxyType

from .definitions import letor_discount

__all__ = ["LETOR"]

_LETOR_RANKING = {"ties": "first", "empty": "zero"}
LETOR: Mapping[str, Mapping[str, object]] = MappingProxyType({
    "ndcg": MappingProxyType({"gain": "exp2", "discount": letor_discount, "short_list": "zero", **_LETOR_RANKING}),
    "precision": MappingProxyType(dict(_LETOR_RANKING)),
    "average_precision": MappingProxyType(dict(_LETOR_RANKING)),
})
"""Options of each metric (``"ndcg"``, ``"precision"``, ``"average_precision"``) that give the
LETOR 4.0 evaluation tool's numbers; see the section above."""
