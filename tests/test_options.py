"""The peers' options, each against the peer's own function, in every form it applies to.

rax (jax is too heavy for CI): values committed in ``peer_values/rax_options.json`` by the script
beside them. trec_eval (pytrec_eval), torchmetrics and scikit-learn run live.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
import torch
from sklearn.metrics import ndcg_score
pytest.importorskip("torchmetrics", reason="a peer of the dev extra, and the metric classes need it")
from torchmetrics.retrieval import RetrievalMAP, RetrievalPrecision  # noqa: E402

import torch_ndcg as tn  # noqa: E402

RAX = json.loads((Path(__file__).parent / "peer_values" / "rax_options.json").read_text())
RAX_INPUTS = {key: torch.tensor(value, dtype=torch.float64) for key, value in RAX["inputs"].items()}
RAX_MASK = RAX_INPUTS["where"].bool()


def every_form(name: str, scores, relevance, k, mask=None, ranked: bool = True, **options) -> dict[str, torch.Tensor]:
    """Per-query values of metric ``name`` in the dense, flat and ranked forms of the same queries
    (rows of ``[B, N]``; each ranked list holds every unmasked item with a score above -inf, in
    score order; the others are targets it never recommended)."""
    mask = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask
    weights = options.pop("weights", None)
    weighted = {} if weights is None else {"weights": weights}  # a metric without weights takes none
    dense = getattr(tn, name)(scores, relevance, k, mask=mask, reduction="none", **weighted, **options)
    rows = torch.arange(scores.shape[0]).unsqueeze(-1).expand_as(scores)
    flat = getattr(tn, name)(
        scores[mask], relevance[mask], k, indexes=rows[mask], reduction="none",
        **({} if weights is None else {"weights": weights[mask]}), **options,
    )
    forms = {"dense": dense, "flat": flat}
    if ranked and hasattr(tn.ranked, name):
        options.pop("allow_unretrieved", None)  # the ranked layout never lists an unretrieved target
        order = scores.masked_fill(~mask, -torch.inf).argsort(dim=-1, descending=True, stable=True)
        listed = mask & (scores > -torch.inf)
        ranked_ids = torch.where(listed.gather(-1, order), order, -1)
        target_ids = torch.where(mask, torch.arange(scores.shape[-1]).expand_as(scores), -1)
        forms["ranked"] = getattr(tn.ranked, name)(
            ranked_ids, target_ids, relevance, k, reduction="none", **weighted, **options
        )
    return forms


def assert_forms_equal(forms: dict[str, torch.Tensor], expected, atol: float = 1e-6) -> None:
    expected = torch.as_tensor(np.asarray(expected, dtype=np.float64))
    for form, values in forms.items():
        torch.testing.assert_close(values.double(), expected, atol=atol, rtol=0, msg=lambda m: f"{form}: {m}")


# --- threshold: trec_eval's -l relevance level, rax's label >= 1 ------------------------------------

RAX_BINARY = {"mrr": "mrr", "recall": "recall"}


@pytest.mark.parametrize("topn", ["all", "3"])
@pytest.mark.parametrize("name", ["mrr", "recall", "precision", "average_precision"])
def test_threshold_matches_rax(name: str, topn: str) -> None:
    # rax counts label >= 1 as relevant; its precision divides by the retrieved items (adaptive_k)
    # and its AP by all relevant items R (ap_normaliser="r").
    k = None if topn == "all" else int(topn)
    own = {"precision": dict(adaptive_k=True), "average_precision": dict(ap_normaliser="r")}.get(name, {})
    rax_name = {"average_precision": "ap"}.get(name, name)
    forms = every_form(name, RAX_INPUTS["scores"], RAX_INPUTS["labels"], k, RAX_MASK, threshold=1, **own)
    assert_forms_equal(forms, RAX["values"][f"{rax_name}@{topn}"])


def _trec_eval(scores: torch.Tensor, labels: torch.Tensor, measures: set[str], **options) -> dict:
    qrel = {f"q{q}": {f"d{i}": int(label) for i, label in enumerate(row)} for q, row in enumerate(labels.tolist())}
    run = {f"q{q}": {f"d{i}": float(score) for i, score in enumerate(row)} for q, row in enumerate(scores.tolist())}
    return pytrec_eval.RelevanceEvaluator(qrel, measures, **options).evaluate(run)


def _trec_lists(seed: int, rows: int = 8, length: int = 9) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randperm(rows * length, generator=generator).reshape(rows, length).double()  # distinct
    labels = torch.randint(0, 4, (rows, length), generator=generator)
    labels[0] = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1, 0])  # nothing relevant at level 2
    return scores, labels


@pytest.mark.parametrize("level", [1, 2, 3])
def test_threshold_matches_trec_eval_relevance_level(level: int) -> None:
    scores, labels = _trec_lists(level)
    measures = {"recip_rank", "P_5", "recall_5", "map", "map_cut_5"}
    result = _trec_eval(scores, labels, measures, relevance_level=level)
    expected = {m: [result[f"q{q}"][m] for q in range(scores.shape[0])] for m in measures}
    options = dict(threshold=level)
    assert_forms_equal(every_form("mrr", scores, labels, None, **options), expected["recip_rank"])
    assert_forms_equal(every_form("precision", scores, labels, 5, **options), expected["P_5"])
    assert_forms_equal(every_form("recall", scores, labels, 5, **options), expected["recall_5"])
    assert_forms_equal(every_form("average_precision", scores, labels, None, **options), expected["map"])
    assert_forms_equal(
        every_form("average_precision", scores, labels, 5, ap_normaliser="r", **options), expected["map_cut_5"]
    )


def test_threshold_leaves_the_gain_alone() -> None:
    scores, labels = _trec_lists(0)
    with pytest.raises(TypeError, match="ndcg.. got an unexpected keyword argument 'threshold'"):
        tn.ndcg(scores, labels, threshold=2)
    with pytest.raises(ValueError, match="takes no threshold"):
        tn.metrics.NDCG(threshold=2)


@pytest.mark.parametrize("threshold", [0, -1, float("nan"), float("inf"), True, "1"])
def test_bad_threshold_is_refused(threshold: object) -> None:
    scores, labels = _trec_lists(0)
    with pytest.raises(ValueError, match="threshold"):
        tn.mrr(scores, labels, threshold=threshold)
    with pytest.raises(ValueError, match="threshold"):
        tn.ranked.recall(torch.tensor([[1, 2]]), torch.tensor([[2]]), threshold=threshold)


# --- ap_normaliser: min(R, k), trec_eval's map_cut (R), torchmetrics' RetrievalMAP(top_k) -------------


def _ragged(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Flat queries of 1 to 9 items, distinct scores, binary labels (torchmetrics takes no grades)."""
    generator = torch.Generator().manual_seed(seed)
    sizes = torch.randint(1, 10, (12,), generator=generator)
    indexes = torch.repeat_interleave(torch.arange(12), sizes)
    scores = torch.randperm(indexes.shape[0], generator=generator).float()
    labels = torch.rand(indexes.shape[0], generator=generator) < 0.35
    return scores, labels, indexes


def _torchmetrics(metric, scores, labels, indexes) -> torch.Tensor:
    metric.update(scores, labels, indexes=indexes)
    return metric.compute()


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("seed", [0, 1])
def test_ap_normaliser_found_matches_torchmetrics_top_k(k: int, seed: int) -> None:
    scores, labels, indexes = _ragged(seed)
    expected = _torchmetrics(RetrievalMAP(top_k=k), scores, labels, indexes)
    ours = tn.average_precision(scores, labels, k, indexes=indexes, ap_normaliser="found")
    torch.testing.assert_close(ours, expected, atol=1e-6, rtol=0)
    metric = tn.metrics.AveragePrecision(k, ap_normaliser="found")
    torch.testing.assert_close(_torchmetrics(metric, scores, labels, indexes), expected, atol=1e-6, rtol=0)
    if k > 1:  # the default, min(R, k), differs on this data (at k = 1 both are 1 for a hit)
        assert not torch.isclose(tn.average_precision(scores, labels, k, indexes=indexes), expected)


def test_ap_normaliser_found_counts_tied_items_in_expectation() -> None:
    # Two tied items at the cutoff, one relevant: each is ranked first with probability 1/2.
    scores, labels = torch.tensor([1.0, 1.0, 0.0]), torch.tensor([1, 0, 1])
    value = tn.average_precision(scores, labels, 1, ap_normaliser="found")
    torch.testing.assert_close(value, torch.tensor(0.5 / 0.5))


def test_ap_normaliser_is_refused_elsewhere_and_checked() -> None:
    scores, labels = _trec_lists(0)
    with pytest.raises(TypeError, match="precision.. got an unexpected keyword argument 'ap_normaliser'"):
        tn.precision(scores, labels, ap_normaliser="r")
    with pytest.raises(ValueError, match="ap_normaliser must be one of"):
        tn.average_precision(scores, labels, ap_normaliser="R")
    with pytest.raises(ValueError, match="ap_normaliser"):
        tn.metrics.AveragePrecision(ap_normaliser="all")


# --- adaptive_k: torchmetrics' RetrievalPrecision(adaptive_k=True) ---------------------------------


@pytest.mark.parametrize("k", [2, 5, 12])
def test_adaptive_k_matches_torchmetrics(k: int) -> None:
    scores, labels, indexes = _ragged(3)
    expected = _torchmetrics(RetrievalPrecision(top_k=k, adaptive_k=True), scores, labels, indexes)
    torch.testing.assert_close(
        tn.precision(scores, labels, k, indexes=indexes, adaptive_k=True), expected, atol=1e-6, rtol=0
    )
    metric = tn.metrics.Precision(k, adaptive_k=True)
    torch.testing.assert_close(_torchmetrics(metric, scores, labels, indexes), expected, atol=1e-6, rtol=0)
    plain = _torchmetrics(RetrievalPrecision(top_k=k), scores, labels, indexes)
    torch.testing.assert_close(tn.precision(scores, labels, k, indexes=indexes), plain, atol=1e-6, rtol=0)


def test_adaptive_k_in_every_form_divides_by_the_list_length() -> None:
    scores, labels = torch.tensor([[3.0, 2.0, 1.0, 0.0]]), torch.tensor([[1, 0, 1, 0]])
    mask = torch.tensor([[True, True, True, False]])
    assert_forms_equal(every_form("precision", scores, labels, 10, mask, adaptive_k=True), [2 / 3])
    assert_forms_equal(every_form("precision", scores, labels, 10, mask), [2 / 10])
    with pytest.raises(TypeError, match="recall.. got an unexpected keyword argument 'adaptive_k'"):
        tn.recall(scores, labels, adaptive_k=True)
    with pytest.raises(TypeError, match="adaptive_k"):
        tn.precision(scores, labels, adaptive_k="yes")


# --- short_list: the LETOR tool's NDCG@k of a list shorter than k ----------------------------------


def test_short_list_zero_scores_cutoffs_beyond_the_list_as_zero_in_every_form() -> None:
    scores = torch.tensor([[3.0, 2.0, 1.0, 0.0], [0.5, 0.4, 0.3, 0.2]])
    labels = torch.tensor([[1, 0, 2, 0], [0, 1, 0, 0]])
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    whole = every_form("ndcg", scores, labels, (1, 3, 4, 10), mask)["dense"]
    expected = whole.clone()
    expected[0, 2:] = 0  # the first list has 3 items: @4 and @10 are beyond it
    expected[1, 3] = 0
    assert_forms_equal(every_form("ndcg", scores, labels, (1, 3, 4, 10), mask, short_list="zero"), expected)
    metric = tn.metrics.NDCG((1, 3, 4, 10), short_list="zero")
    metric.update(scores, labels, mask=mask)
    torch.testing.assert_close(torch.stack(list(metric.compute().values())), expected.float().mean(0))
    # A query with nothing relevant keeps the value empty gives it.
    skipped = tn.ndcg(scores[1:].flip(-1) * 0, labels[1:] * 0, 10, short_list="zero", empty="one", reduction="none")
    assert skipped.tolist() == [1.0]


def test_short_list_is_checked_and_only_ndcg_takes_it() -> None:
    scores, labels = torch.tensor([[3.0, 2.0]]), torch.tensor([[1, 0]])
    with pytest.raises(ValueError, match=r"short_list must be one of \('whole', 'zero'\), got 'none'"):
        tn.ndcg(scores, labels, 3, short_list="none")
    with pytest.raises(ValueError, match="short_list must be one of"):
        tn.metrics.NDCG(3, short_list="none")
    with pytest.raises(TypeError, match="short_list"):
        tn.precision(scores, labels, 3, short_list="zero")
    with pytest.raises(ValueError, match="mrr takes no short_list option"):
        tn.metrics.MRR(short_list="zero")


# --- weights: rax's per-item weights on DCG and NDCG ------------------------------------------------


@pytest.mark.parametrize("topn", ["all", "3"])
@pytest.mark.parametrize("name", ["dcg", "ndcg"])
def test_item_weights_match_rax(name: str, topn: str) -> None:
    # rax's default gain is 2**label - 1; its ideal ranking sorts by weighted gain.
    k = None if topn == "all" else int(topn)
    forms = every_form(
        name, RAX_INPUTS["scores"], RAX_INPUTS["labels"], k, RAX_MASK, gain="exp2", weights=RAX_INPUTS["weights"]
    )
    assert_forms_equal(forms, RAX["values"][f"{name}@{topn} weights"])


def test_unit_weights_change_nothing_and_bad_weights_are_refused() -> None:
    scores, labels = _trec_lists(4)
    ones = torch.ones_like(scores)
    torch.testing.assert_close(tn.ndcg(scores, labels, 5, weights=ones), tn.ndcg(scores, labels, 5))
    for bad in (-ones, ones * float("nan"), ones * float("inf")):
        with pytest.raises(ValueError, match="weights must be finite and ≥ 0"):
            tn.ndcg(scores, labels, weights=bad)
    with pytest.raises(ValueError, match="weights must have shape"):
        tn.dcg(scores, labels, weights=ones[:, :3])
    huge = torch.full((2, 3), 3e38)
    with pytest.raises(ValueError, match="weights times the gains overflow"):
        tn.ndcg(torch.rand(2, 3), torch.ones(2, 3), weights=huge)
    with pytest.raises(ValueError, match="weights times the gains overflow"):
        tn.ndcg(torch.rand(6), torch.ones(6), indexes=torch.tensor([0, 0, 0, 1, 1, 1]), weights=huge.reshape(-1))
    with pytest.raises(TypeError, match="mrr.. got an unexpected keyword argument 'weights'"):
        tn.mrr(scores, labels, weights=ones)
    mask = torch.ones_like(scores, dtype=torch.bool)
    mask[:, -1] = False
    masked_nan = torch.where(mask, ones, float("nan"))  # padding's weight is never read
    torch.testing.assert_close(tn.ndcg(scores, labels, mask=mask, weights=masked_nan), tn.ndcg(scores, labels, mask=mask))


# --- sample_weight: scikit-learn's per-query weights in the mean ------------------------------------


@pytest.mark.parametrize("k", [None, 3])
def test_sample_weight_matches_scikit_learn(k: int | None) -> None:
    generator = torch.Generator().manual_seed(5)
    scores = torch.randint(0, 4, (9, 6), generator=generator).double()  # ties: both average them
    labels = torch.randint(0, 4, (9, 6), generator=generator).double()
    weight = torch.tensor([0.0, 1.0, 2.5, 0.5, 3.0, 1.0, 0.0, 4.0, 1.5], dtype=torch.float64)
    expected = ndcg_score(labels.numpy(), scores.numpy(), k=k, sample_weight=weight.numpy())
    rows = torch.arange(9).unsqueeze(-1).expand_as(scores)
    target = torch.arange(6).expand_as(scores)
    values = {
        "dense": tn.ndcg(scores, labels, k, sample_weight=weight),
        "flat": tn.ndcg(scores.reshape(-1), labels.reshape(-1), k, indexes=rows.reshape(-1), sample_weight=weight),
        "sum": tn.ndcg(scores, labels, k, sample_weight=weight, reduction="sum") / weight.sum(),
    }
    if k is None:  # a ranked list is one ordering; without ties it is the dense value
        distinct = scores + torch.arange(6) * 1e-3
        order = distinct.argsort(-1, descending=True)
        ranked = tn.ranked.ndcg(order, target, labels, sample_weight=weight)
        torch.testing.assert_close(ranked, tn.ndcg(distinct, labels, sample_weight=weight))
    for form, value in values.items():
        assert value.item() == pytest.approx(expected, abs=1e-12), form


def test_sample_weight_skips_with_the_query_and_is_checked() -> None:
    scores, labels = torch.tensor([[2.0, 1.0], [2.0, 1.0]]), torch.tensor([[0, 1], [0, 0]])
    weight = torch.tensor([1.0, 5.0])
    # The second query is skipped: its weight leaves the mean with it.
    assert tn.ndcg(scores, labels, sample_weight=weight, empty="skip").item() == pytest.approx(0.6309297535714575)
    assert tn.ndcg(scores, labels, sample_weight=weight).item() == pytest.approx(0.6309297535714575 / 6)
    assert tn.ndcg(scores, labels, sample_weight=torch.zeros(2)).item() == 0.0
    for bad in (torch.tensor([1.0, -1.0]), torch.tensor([1.0, float("nan")])):
        with pytest.raises(ValueError, match="sample_weight must be finite and ≥ 0"):
            tn.ndcg(scores, labels, sample_weight=bad)
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        tn.mrr(scores, labels, sample_weight=torch.ones(3))
    with pytest.raises(ValueError, match="sample_weight"):
        tn.mrr(scores, labels, sample_weight=weight, reduction="none")


def test_sample_weight_and_weights_in_the_classes_match_the_functional_form() -> None:
    generator = torch.Generator().manual_seed(6)
    scores, labels = torch.rand(2, 5, 6, generator=generator), torch.randint(0, 3, (2, 5, 6), generator=generator)
    item, query = torch.rand(2, 5, 6, generator=generator), torch.rand(2, 5, generator=generator)
    metric = tn.metrics.NDCG(k=(2, None), empty="skip")
    for batch in range(2):
        metric.update(scores[batch], labels[batch], weights=item[batch], sample_weight=query[batch])
    expected = tn.ndcg(scores, labels, (2, None), weights=item, sample_weight=query, empty="skip")
    torch.testing.assert_close(torch.stack(list(metric.compute().values())), expected)
    ranked = tn.metrics.RankedMRR(threshold=2)
    ids, target = scores[0].argsort(-1, descending=True), torch.arange(6).expand(5, 6)
    ranked.update(ids, target, labels[0], sample_weight=query[0])
    torch.testing.assert_close(
        ranked.compute(), tn.ranked.mrr(ids, target, labels[0], threshold=2, sample_weight=query[0])
    )
    with pytest.raises(ValueError, match="sample_weight"):
        metric.update(scores[0].reshape(-1), labels[0].reshape(-1), indexes=torch.zeros(30, dtype=torch.long),
                      sample_weight=query[0])
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        metric.update(scores[0], labels[0], sample_weight=query[0, :2])


# --- aggregation and ignore_index: torchmetrics' retrieval-metric options ---------------------------


def _third_quartile(values: torch.Tensor, dim=None) -> torch.Tensor:
    return values.quantile(0.75)


@pytest.mark.parametrize("aggregation", ["mean", "median", "min", "max", _third_quartile])
def test_aggregation_matches_torchmetrics(aggregation) -> None:
    from torchmetrics.retrieval import RetrievalMRR, RetrievalRecall

    scores, labels, indexes = _ragged(7)
    labels[indexes == 3] = False  # a query with nothing relevant: torchmetrics counts it as 0
    for ours, theirs in ((tn.metrics.MRR(aggregation=aggregation), RetrievalMRR(aggregation=aggregation)),
                         (tn.metrics.Recall(3, aggregation=aggregation), RetrievalRecall(top_k=3, aggregation=aggregation))):
        expected = _torchmetrics(theirs, scores, labels, indexes)
        torch.testing.assert_close(_torchmetrics(ours, scores, labels, indexes), expected, atol=1e-6, rtol=0)
    # The dense form keeps the same per-query values (equal-size queries as rows).
    rows, row_labels = scores[:40].reshape(8, 5), labels[:40].reshape(8, 5)
    dense = tn.metrics.MRR(aggregation=aggregation)
    dense.update(rows[:3], row_labels[:3])
    dense.update(rows[3:], row_labels[3:])
    values = tn.mrr(rows, row_labels, reduction="none")
    expected = tn.aggregation.resolve_aggregation(aggregation)(values, dim=None)
    torch.testing.assert_close(dense.compute(), expected)


def test_aggregation_skips_like_the_mean_and_is_checked() -> None:
    metric = tn.metrics.NDCG(k=(1, None), aggregation="min", empty="skip")
    metric.update(torch.tensor([[1.0, 2.0], [1.0, 2.0]]), torch.tensor([[0, 0], [1, 0]]))
    assert {key: value.item() for key, value in metric.compute().items()} == {"ndcg@1": 0.0, "ndcg": pytest.approx(0.6309, abs=1e-4)}
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert tn.metrics.MRR(aggregation="max").compute().item() == 0.0  # nothing seen
    with pytest.raises(ValueError, match="aggregation must be one of"):
        tn.metrics.MRR(aggregation="average")
    with pytest.raises(ValueError, match="sample_weight"):
        tn.metrics.MRR(aggregation="median").update(torch.rand(2, 3), torch.ones(2, 3), sample_weight=torch.ones(2))


def test_ignore_index_matches_torchmetrics() -> None:
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    scores, labels, indexes = _ragged(8)
    target = labels.long()
    target[::4] = -100  # ignored items
    expected = _torchmetrics(RetrievalNormalizedDCG(ignore_index=-100), scores, target, indexes)
    ours = _torchmetrics(tn.metrics.NDCG(ignore_index=-100), scores, target, indexes)
    torch.testing.assert_close(ours, expected, atol=1e-6, rtol=0)
    dense = tn.metrics.NDCG(ignore_index=-1)
    rows, row_target = scores[:40].reshape(8, 5), torch.where(target[:40] == -100, -1, target[:40]).reshape(8, 5)
    dense.update(rows, row_target)
    torch.testing.assert_close(dense.compute(), tn.ndcg(rows, row_target.clamp(min=0), mask=row_target != -1))
    with pytest.raises(TypeError, match="ignore_index"):
        tn.metrics.NDCG(ignore_index=-1.5)


# --- allow_unretrieved: rax's -inf scores -----------------------------------------------------------


@pytest.mark.parametrize("topn", ["all", "3"])
@pytest.mark.parametrize("name", ["mrr", "recall", "precision", "average_precision", "dcg", "ndcg"])
def test_unretrieved_items_match_rax(name: str, topn: str) -> None:
    k = None if topn == "all" else int(topn)
    own = {"precision": dict(adaptive_k=True), "average_precision": dict(ap_normaliser="r")}.get(name, {})
    own = {**own, **(dict(gain="exp2") if name in ("dcg", "ndcg") else dict(threshold=1))}
    rax_name = {"average_precision": "ap"}.get(name, name)
    # A ranked list cuts its k=None ideal at its own length, where rax keeps every target.
    forms = every_form(
        name, RAX_INPUTS["unretrieved"], RAX_INPUTS["labels"], k, RAX_MASK,
        ranked=not (name == "ndcg" and k is None), allow_unretrieved=True, **own,
    )
    assert_forms_equal(forms, RAX["values"][f"{rax_name}@{topn} unretrieved"])


def test_unretrieved_is_refused_by_default_and_in_the_classes_it_is_an_option() -> None:
    scores, labels = RAX_INPUTS["unretrieved"], RAX_INPUTS["labels"]
    with pytest.raises(ValueError, match="allow_unretrieved=True"):
        tn.ndcg(scores, labels)
    with pytest.raises(ValueError, match=r"NaN or \+inf"):
        tn.ndcg(torch.tensor([float("inf"), 1.0]), torch.tensor([1, 0]), allow_unretrieved=True)
    with pytest.raises(TypeError, match="allow_unretrieved"):
        tn.mrr(scores, labels, allow_unretrieved="yes")
    rows = torch.arange(6).unsqueeze(-1).expand_as(scores)
    for form in ("dense", "flat"):
        metric = tn.metrics.NDCG(3, allow_unretrieved=True)
        if form == "dense":
            metric.update(scores, labels, mask=RAX_MASK)
        else:
            metric.update(scores[RAX_MASK], labels[RAX_MASK], indexes=rows[RAX_MASK])
        expected = tn.ndcg(scores, labels, 3, mask=RAX_MASK, allow_unretrieved=True)
        torch.testing.assert_close(metric.compute(), expected.float(), msg=form)


# --- ordered_pair_accuracy: rax's opa_metric --------------------------------------------------------


@pytest.mark.parametrize("scores", ["scores", "ties"])
def test_ordered_pair_accuracy_matches_rax(scores: str) -> None:
    scores, labels = RAX_INPUTS[scores], RAX_INPUTS["labels"]
    expected = RAX["values"]["opa" if scores is RAX_INPUTS["scores"] else "opa ties"]
    rows = torch.arange(6).unsqueeze(-1).expand_as(scores)
    forms = {
        "dense": tn.ordered_pair_accuracy(scores, labels, mask=RAX_MASK, reduction="none"),
        "flat": tn.ordered_pair_accuracy(
            scores[RAX_MASK], labels[RAX_MASK], indexes=rows[RAX_MASK], reduction="none"
        ),
    }
    assert_forms_equal(forms, expected)


def test_ordered_pair_accuracy_ties() -> None:
    scores, labels = torch.tensor([[1.0, 1.0, 0.0]]), torch.tensor([[2, 1, 0]])
    expected = {"worst": 2 / 3, "best": 1.0, "average": 2.5 / 3, "first": 1.0}
    for ties, value in expected.items():
        assert tn.ordered_pair_accuracy(scores, labels, ties=ties).item() == pytest.approx(value), ties
    # "first": the input order decides; reversed, the tied pair is ordered wrongly
    flipped = tn.ordered_pair_accuracy(scores, torch.tensor([[1, 2, 0]]), ties="first")
    assert flipped.item() == pytest.approx(2 / 3)
    assert tn.ordered_pair_accuracy(scores, torch.ones(1, 3), empty="one").item() == 1.0
    with pytest.raises(ValueError, match="ties"):
        tn.ordered_pair_accuracy(scores, labels, ties="random")


# --- the flat layout's segment path (skewed query sizes, no padding) agrees with the rows -----------


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("average_precision", dict(ap_normaliser="found", threshold=2)),
        ("average_precision", dict(ap_normaliser="r")),
        ("precision", dict(adaptive_k=True, allow_unretrieved=True)),
        ("recall", dict(allow_unretrieved=True, threshold=1.5)),
        ("ndcg", dict(weights=True, allow_unretrieved=True)),
        ("mrr", dict(threshold=3)),
    ],
)
def test_skewed_flat_queries_take_the_segment_path_and_agree(name: str, options: dict) -> None:
    generator = torch.Generator().manual_seed(9)
    sizes = torch.tensor([40, 1, 2, 1, 3])  # padding to 40 would be far more than double
    indexes = torch.repeat_interleave(torch.arange(5), sizes)
    assert tn.flat.as_rows(torch.zeros(47), torch.zeros(47), indexes) is None
    scores = torch.randint(0, 6, (47,), generator=generator).double()  # ties
    scores[torch.rand(47, generator=generator) < 0.2] = -torch.inf
    relevance = torch.randint(0, 4, (47,), generator=generator).double()
    if not options.get("allow_unretrieved"):
        scores = scores.clamp(min=-1.0)
    weights = torch.rand(47, generator=generator).double() if options.get("weights") else None
    options = {**options, "weights": weights} if weights is not None else options
    flat = getattr(tn, name)(scores, relevance, 3, indexes=indexes, reduction="none", **options)
    for query in range(5):
        keep = indexes == query
        row = {**options, "weights": weights[keep]} if weights is not None else options
        alone = getattr(tn, name)(scores[keep], relevance[keep], 3, **row)
        torch.testing.assert_close(flat[query], alone, msg=f"query {query}")


# --- each option stated once: choices from its type, one default, one doc, in every signature ---

import inspect  # noqa: E402
import typing  # noqa: E402

from torch_ndcg import options as option_groups  # noqa: E402

SCORED = [tn.ndcg, tn.dcg, tn.cg, tn.mrr, tn.precision, tn.recall, tn.hit_rate, tn.average_precision]
RANKED = [getattr(tn.ranked, name) for name in tn.ranked.__all__ if name != "from_lists"]
PUBLIC_METRICS = [*SCORED, *RANKED, tn.idcg, tn.ordered_pair_accuracy]
SMOOTH = [tn.neural_ndcg, tn.neural_ndcg_loss, tn.approx_ndcg, tn.approx_ndcg_loss, tn.lambda_loss, tn.listnet_loss,
          tn.softmax_loss, tn.listmle_loss, tn.ranknet_loss, tn.pairwise_hinge_loss]  # fmt: skip


@pytest.mark.parametrize("function", PUBLIC_METRICS + SMOOTH, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_public_function_shows_each_option_with_its_default(function):
    assert inspect.isfunction(function)
    parameters = inspect.signature(function).parameters
    assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in parameters.values()), parameters
    options = [p for p in parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert "validate" in parameters and parameters["validate"].default is True
    for option in options:
        assert option.default is not option.empty, option.name
    text = str(inspect.signature(function))
    assert "validate: bool = True" in text


@pytest.mark.parametrize("function", PUBLIC_METRICS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_metric_documents_each_argument_with_the_signatures_default(function):
    doc = function.__doc__
    flowing = " ".join(doc.split())  # the Args lines are wrapped for a terminal
    for name, parameter in inspect.signature(function).parameters.items():
        assert f"    {name}: " in doc, name
        if parameter.default is not parameter.empty and function is not tn.idcg:
            documented = " ".join(f"{name}: {option_groups.ARGUMENT_DOCS[name]} Default: ``{parameter.default!r}``.".split())
            assert documented in flowing
    assert "Example:" in doc and ">>>" in doc


def test_choices_are_stated_once_by_their_type():
    for choices, kind in [
        (option_groups.TIES, option_groups.Ties), (option_groups.EMPTY, option_groups.Empty),
        (option_groups.REDUCTIONS, option_groups.Reduction), (option_groups.IMPLS, option_groups.Impl),
        (option_groups.NEURAL_IMPLS, option_groups.NeuralImpl), (option_groups.PAIR_IMPLS, option_groups.PairImpl),
        (option_groups.LOSS_EMPTY, option_groups.LossEmpty), (option_groups.WEIGHTINGS, option_groups.WeightingName),
    ]:  # fmt: skip
        assert choices == typing.get_args(kind)
    for name in ("settle", "MetricOptions", "Definition", "NDCGLossOptions"):
        assert not hasattr(option_groups, name), name
    # DEFAULTS and LOSS_DEFAULTS answer only through their deprecation (test_old_defaults_tables_…)
    assert "DEFAULTS" not in vars(option_groups) and "LOSS_DEFAULTS" not in vars(option_groups)


def test_every_signature_takes_the_named_default():
    for function in SCORED:
        parameters = inspect.signature(function).parameters
        assert parameters["ties"].default is option_groups.DEFAULT_TIES
        assert parameters["reduction"].default is option_groups.DEFAULT_REDUCTION
    assert inspect.signature(tn.ordered_pair_accuracy).parameters["ties"].default is option_groups.DEFAULT_PAIR_TIES
    for function in (tn.neural_ndcg_loss, tn.approx_ndcg, tn.NeuralNDCGLoss, tn.ApproxNDCGLoss, tn.NDCGLoss, tn.MRRLoss):
        assert inspect.signature(function).parameters["empty"].default is option_groups.DEFAULT_LOSS_EMPTY


def test_help_shows_the_options_and_k_is_third():
    import pydoc

    text = pydoc.render_doc(tn.ndcg, renderer=pydoc.plaintext)
    assert "ndcg(scores: Tensor, relevance: Tensor, k: int | Sequence[int] | None = None, *, indexes" in text
    shown = ("ties: 'average' | 'first' | 'worst' | 'best' = 'average'", "empty: 'zero' | 'one' | 'skip' | 'error' = 'zero'",
             "gain: str | Callable = 'linear'", "validate: bool = True", "Example:")  # fmt: skip
    for option in shown:
        assert option in text, option
    for function in SCORED:
        assert list(inspect.signature(function).parameters)[:3] == ["scores", "relevance", "k"]


TWIN_MODULES = [tn.NDCGLoss, tn.DCGLoss, tn.MRRLoss, tn.PrecisionLoss, tn.RecallLoss, tn.HitRateLoss,
                tn.AveragePrecisionLoss, tn.RBPLoss]  # fmt: skip


@pytest.mark.parametrize(
    "function", [*PUBLIC_METRICS, *SMOOTH, tn.NeuralNDCGLoss, tn.LambdaLoss, *TWIN_MODULES], ids=lambda f: f.__name__
)
def test_help_reads_in_a_terminal(function):
    """help() shows no private alias of the source (``'d.Cutoff'``) and wraps the assembled text."""
    import pydoc

    text = pydoc.render_doc(function, renderer=pydoc.plaintext)
    signature = str(inspect.signature(function))
    assert "d." not in signature.replace("'", " ").split("=")[0] and "'Tensor'" not in signature, signature
    own = inspect.getdoc(function) or ""
    assert own and max(len(line) for line in own.splitlines()) <= 120


def test_each_metric_class_shows_only_the_options_it_takes():
    pytest.importorskip("torchmetrics", reason="the metric classes need torchmetrics")
    shown = set(inspect.signature(tn.metrics.NDCG).parameters)
    assert {"k", "gain", "discount", "empty", "ties", "validate", "aggregation"} <= shown
    assert not shown & {"threshold", "ap_normaliser", "adaptive_k"}  # NDCG refuses them
    assert "adaptive_k" in inspect.signature(tn.metrics.Precision).parameters
    assert "ap_normaliser" in inspect.signature(tn.metrics.AveragePrecision).parameters
    with pytest.raises(ValueError, match="adaptive_k"):  # what the signature leaves out is refused
        tn.metrics.NDCG(adaptive_k=True)


@pytest.mark.parametrize("function", PUBLIC_METRICS + SMOOTH[:2], ids=lambda f: f.__name__)
def test_torchmetrics_names_are_a_type_error_naming_the_public_function_and_the_right_names(function):
    first, second = list(inspect.signature(function).parameters)[:2]
    with pytest.raises(TypeError, match=rf"{function.__name__}\(\) got an unexpected keyword argument 'preds'.*"
                                        rf"{function.__name__} takes {first} and {second}"):  # fmt: skip
        function(preds=torch.ones(3), target=torch.ones(3))


def test_a_type_error_inside_the_function_is_not_rewritten():
    with pytest.raises(TypeError, match="scores must be a torch.Tensor"):
        tn.ndcg([1.0, 2.0], torch.ones(2))


@pytest.mark.parametrize("function", SCORED + [tn.neural_ndcg_loss, tn.lambda_loss], ids=lambda f: f.__name__)
def test_a_bool_tensor_in_the_place_of_k_is_probably_a_mask(function):
    scores, relevance = torch.rand(2, 4), torch.ones(2, 4)
    with pytest.raises(TypeError, match="probably a mask: pass it as mask="):
        function(scores, relevance, torch.ones(2, 4, dtype=torch.bool))


@pytest.mark.parametrize(
    "call",
    [
        lambda: tn.ndcg(torch.ones(3), torch.ones(3), reduce="mean"),
        lambda: tn.ranked.ndcg(torch.ones(1, 2).long(), torch.ones(1, 2).long(), mask=None),
        lambda: tn.metrics.NDCG(k=3, reduction="sum"),
        lambda: tn.metrics.RankedNDCG(k=3, ties="first"),
    ],
)
def test_public_entry_points_refuse_unknown_option_names(call):
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        call()


def test_docstrings_state_each_default_once():
    assert "validate: " in tn.ranked.ndcg.__doc__
    assert "gain: ``\"linear\"`` (``rel``)" in tn.ndcg.__doc__
    assert "Default: ``'linear'``." in tn.ndcg.__doc__
    assert "Default: ``'zero'``." in tn.ranked.ndcg.__doc__


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("torch_ndcg.options", "OPTION_DOCS", "ARGUMENT_DOCS"),
        ("torch_ndcg.validation", "TIES", "torch_ndcg.options.TIES"),
        ("torch_ndcg.losses.common", "NEURAL_IMPLS", "torch_ndcg.options.NEURAL_IMPLS"),
        ("torch_ndcg.engine", "sum_to_cutoffs", "torch_ndcg.definitions.sum_to_cutoffs"),
    ],
)
def test_old_names_work_for_one_release_with_a_deprecation_warning(module, old, new):
    import importlib

    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(importlib.import_module(module), old)
    assert value is not None
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), "no_such_name")


def test_old_defaults_tables_still_answer_as_before():
    with pytest.warns(DeprecationWarning):
        defaults = option_groups.DEFAULTS
    assert defaults["gain"] == "linear" and defaults["empty"] == "zero" and defaults["reduction"] == "mean"
    with pytest.warns(DeprecationWarning):
        assert option_groups.LOSS_DEFAULTS["empty"] == "skip"
