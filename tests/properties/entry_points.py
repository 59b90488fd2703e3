"""Every public entry point, as a recipe that draws hostile inputs and calls it.

A recipe returns a :class:`Case`: how to call the entry point (with ``validate`` where it has
one), which argument names an error may cite, and optionally a second route to the same value
(another layout, or the functional form of a class). ``test_public_contract.py`` checks every
case against one contract. A new public entry point joins by adding a recipe to ``ENTRY_POINTS``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from hypothesis import strategies as st
from hostile import (
    ADAPTIVE_K,
    ALLOW_UNRETRIEVED,
    AP_NORMALISERS,
    CUTOFFS,
    DISCOUNTS,
    EMPTIES,
    GAINS,
    REDUCTIONS,
    SHORT_LISTS,
    THRESHOLDS,
    TIES,
    list_shapes,
    masks,
    values,
    weights,
)

import torch_ndcg as tn
from torch_ndcg.data import RankingDataset, pad_batch

SCORED = ["ndcg", "dcg", "cg", "mrr", "precision", "recall", "hit_rate", "average_precision"]
RANKED = ["ndcg", "dcg", "mrr", "precision", "recall", "hit_rate", "average_precision"]
METRIC_OPTIONS = (
    "k", "mask", "indexes", "gain", "discount", "ties", "empty", "reduction", "validate",
    "weights", "sample_weight", "threshold", "ap_normaliser", "adaptive_k", "allow_unretrieved",
    "short_list",
)
GRADED = ("ndcg", "dcg", "cg")


@dataclass
class Case:
    """One drawn call of an entry point."""

    call: Callable[[bool], object]  # validate -> result (entry points without validate ignore it)
    arguments: tuple[str, ...]  # what an error message must name one of
    has_validate: bool = True
    nan_allowed: bool = False  # per-query values of skipped queries are NaN
    other_route: Callable[[], object] | None = None  # the same value another way (only if the call succeeds)
    differentiable: bool = False  # the result is a loss: its gradient must be finite too


def _options(draw: st.DrawFn) -> dict:
    return dict(
        gain=draw(GAINS), discount=draw(DISCOUNTS), ties=draw(TIES), empty=draw(EMPTIES), reduction=draw(REDUCTIONS)
    )


def _metric_options(name: str, options: dict, draw: st.DrawFn) -> dict:
    """Options a metric takes, plus (sometimes) one it refuses."""
    keep = dict(options)
    keep.update(threshold=draw(THRESHOLDS), ap_normaliser=draw(AP_NORMALISERS), adaptive_k=draw(ADAPTIVE_K),
                short_list=draw(SHORT_LISTS))
    refused = draw(st.booleans())
    if name not in GRADED and not refused:
        keep.pop("gain")
    if name not in ("ndcg", "dcg") and not refused:
        keep.pop("discount")
    if name in ("dcg", "cg") and not refused:
        keep.pop("empty")
    if name in GRADED and not refused:
        keep.pop("threshold")
    if name != "average_precision" and not refused:
        keep.pop("ap_normaliser")
    if name != "precision" and not refused:
        keep.pop("adaptive_k")
    if name != "ndcg" and not refused:
        keep.pop("short_list")
    return keep


def scored_metric(name: str) -> Callable[[st.DataObject], Case]:
    def recipe(data: st.DataObject) -> Case:
        draw = data.draw
        fn = getattr(tn, name)
        shape = draw(list_shapes())
        scores = draw(values(shape, hostile=draw(st.booleans())))
        relevance = draw(values(shape, hostile=draw(st.booleans()), low=0.0))
        mask = draw(masks(shape))
        k = draw(CUTOFFS)
        options = _metric_options(name, _options(draw), draw)
        indexes = None
        if draw(st.booleans()) and len(shape) >= 1:  # the flat layout
            scores, relevance = scores.reshape(-1), relevance.reshape(-1)
            mask = None if mask is None or mask.shape != shape else mask.reshape(-1)
            count = scores.shape[0]
            indexes = draw(st.sampled_from(["ids", "ids", "float", "short"]))
            ids = torch.tensor(draw(st.lists(st.integers(-3, 3), min_size=count, max_size=count)), dtype=torch.long)
            indexes = {"ids": ids, "float": ids.float(), "short": ids[: max(count - 1, 0)]}[indexes]
        options["allow_unretrieved"] = draw(ALLOW_UNRETRIEVED)
        if name in GRADED or draw(st.booleans()):
            options["weights"] = draw(weights(tuple(scores.shape)))
        if draw(st.booleans()):
            queries = (len(torch.unique(indexes)),) if isinstance(indexes, torch.Tensor) else tuple(scores.shape[:-1])
            options["sample_weight"] = draw(weights(queries))

        def call(validate: bool) -> object:
            return fn(scores, relevance, k, indexes=indexes, mask=mask, validate=validate, **options)

        other = None
        if indexes is None and len(shape) == 2 and shape[0] > 0 and mask is not None and mask.dtype == torch.bool and bool(mask.any(-1).all()):
            # The same queries as flat items with query ids: one value per row, in row order.
            rows = torch.arange(shape[0]).unsqueeze(-1).expand(shape)
            per_query = {**options, "reduction": "none"}
            per_query.pop("sample_weight", None)
            item_weights = per_query.pop("weights", None)

            def other() -> object:
                flat_weights = item_weights[mask] if isinstance(item_weights, torch.Tensor) else item_weights
                flat = fn(scores[mask], relevance[mask], k, indexes=rows[mask], weights=flat_weights, **per_query)
                return flat, fn(scores, relevance, k, mask=mask, weights=item_weights, **per_query)

        return Case(
            call, ("scores", "relevance", *METRIC_OPTIONS),
            nan_allowed=options.get("empty") == "skip" and options.get("reduction") == "none",
            other_route=other,
        )

    return recipe


def ordered_pair_accuracy(data: st.DataObject) -> Case:
    draw = data.draw
    shape = draw(list_shapes())
    scores = draw(values(shape, hostile=draw(st.booleans())))
    relevance = draw(values(shape, hostile=draw(st.booleans()), low=0.0))
    mask = draw(masks(shape))
    options = {key: value for key, value in _options(draw).items() if key in ("ties", "empty", "reduction")}
    if draw(st.booleans()):
        options["sample_weight"] = draw(weights(tuple(scores.shape[:-1])))
    indexes = None
    if draw(st.booleans()) and len(shape) >= 1:  # the flat layout, one query per row
        rows = torch.arange(scores.numel()).reshape(shape) // max(shape[-1], 1)
        scores, relevance, indexes = scores.reshape(-1), relevance.reshape(-1), rows.reshape(-1)
        mask = mask.reshape(-1) if isinstance(mask, torch.Tensor) and mask.shape == shape else mask
    return Case(
        lambda validate: tn.ordered_pair_accuracy(scores, relevance, indexes=indexes, mask=mask, validate=validate, **options),
        ("scores", "relevance", "indexes", "mask", "ties", "empty", "reduction", "sample_weight", "validate"),
        nan_allowed=options["empty"] == "skip" and options["reduction"] == "none",
    )


def idcg(data: st.DataObject) -> Case:
    draw = data.draw
    shape = draw(list_shapes())
    relevance = draw(values(shape, hostile=draw(st.booleans()), low=0.0))
    mask, k = draw(masks(shape)), draw(CUTOFFS)
    options = {key: value for key, value in _options(draw).items() if key in ("gain", "discount", "reduction")}
    return Case(lambda validate: tn.idcg(relevance, k, mask=mask, validate=validate, **options),
                ("relevance", "k", "mask", "gain", "discount", "reduction"))


@st.composite
def _ids(draw: st.DrawFn, rows: int, width: int) -> object:
    kind = draw(st.sampled_from(["ids", "ids", "ids", "float", "scalar"]))
    numbers = draw(st.lists(st.integers(-1, 6), min_size=rows * width, max_size=rows * width))
    ids = torch.tensor(numbers, dtype=torch.long).reshape(rows, width)
    return {"ids": ids, "float": ids.float(), "scalar": torch.tensor(3)}[kind]


def ranked_metric(name: str) -> Callable[[st.DataObject], Case]:
    def recipe(data: st.DataObject) -> Case:
        draw = data.draw
        fn = getattr(tn.ranked, name)
        rows = draw(st.integers(1, 3))
        ranked_ids = draw(_ids(rows, draw(st.integers(0, 5))))
        width = draw(st.integers(0, 4))
        target_ids = draw(_ids(draw(st.sampled_from([rows, rows, rows + 1])), width))
        relevance = None
        if draw(st.booleans()) and isinstance(target_ids, torch.Tensor) and target_ids.dim() == 2:
            relevance = draw(values(tuple(target_ids.shape), hostile=draw(st.booleans()), low=0.0))
        k, pad_id = draw(CUTOFFS), draw(st.sampled_from([-1, -1, 0, True, "x", 1.5]))
        options = _metric_options(name, _options(draw), draw)
        options.pop("ties")
        if name in GRADED or draw(st.booleans()):
            options["weights"] = draw(weights(tuple(target_ids.shape)))
        if draw(st.booleans()):
            options["sample_weight"] = draw(weights(tuple(ranked_ids.shape[:-1])))
        return Case(
            lambda validate: fn(ranked_ids, target_ids, relevance, k, pad_id=pad_id, validate=validate, **options),
            ("ranked_ids", "target_ids", "target_relevance", "k", "pad_id", *METRIC_OPTIONS),
            nan_allowed=options.get("empty") == "skip" and options.get("reduction") == "none",
        )

    return recipe


def from_lists(data: st.DataObject) -> Case:
    draw = data.draw
    item = st.one_of(st.integers(0, 5), st.sampled_from(["a", "b", "c"]))
    predicted = draw(st.lists(st.lists(item, max_size=4), max_size=3))
    truth_kind = st.one_of(
        st.dictionaries(item, st.sampled_from([0.0, 1.0, 2.5, "high"]), max_size=3),
        st.lists(item, max_size=3),
        st.just("abc"),
    )
    truths = draw(st.lists(truth_kind, min_size=len(predicted), max_size=len(predicted) + draw(st.integers(0, 1))))
    if draw(st.booleans()) and predicted and all(isinstance(i, int) for row in predicted for i in row) and len({len(r) for r in predicted}) == 1:
        predicted = torch.tensor(predicted)

    def call(validate: bool) -> object:
        ranked, target, relevance = tn.from_lists(predicted, truths)
        return tn.ranked.ndcg(ranked, target, relevance)

    return Case(call, ("predict_lists", "ground_truths", "ids", "relevances"), has_validate=False)


# The options most losses take: a loss draws those of them it has.
_SHARED_LOSS_OPTIONS = {
    "empty": st.sampled_from(["skip", "zero", "one", "keep", "nan"]),
    "reduction": st.sampled_from(["mean", "sum", "none", "avg"]),
}
_GAIN = {"gain": st.sampled_from(["linear", "exp2", "cubic"])}
_NDCG = {**_GAIN, "discount": st.sampled_from(["log2", "ln"])}
_IMPL = {"impl": st.sampled_from(["auto", "dense", "streaming", "gpu"])}
_APPROX_IMPL = {"impl": st.sampled_from(["auto", "dense", "streaming", "sorted", "gpu"])}
_POSITIVE = st.sampled_from([1.0, 0.1, 0.0, -1.0, float("nan"), float("inf"), "1"])
_SCALED = st.sampled_from(["auto", 1.0, 0.1, 0.0, -1.0, float("nan"), float("inf"), "1", "Auto"])
# The pair weights beyond the paper's schemes, and the metric options they read (a keyword k).
_PAIR_WEIGHTS = ["dcg2", "ndcg_loss1", "label_difference", tn.pair_weights.dcg2, lambda pairs: pairs.rank_i]
_WEIGHTED = {
    **_NDCG, "weighting": st.sampled_from(["none", "ndcg3", *_PAIR_WEIGHTS]), "k": st.sampled_from([None, 1, 3, 0, (1, 2)]),
}
_STOCHASTIC = {"stochastic": st.booleans(), "log_scores": st.sampled_from([False, True, 1])}

# name: (function, module class or None, whether it takes k, its own option strategies)
LOSSES = {
    "neural_ndcg_loss": (
        tn.neural_ndcg_loss, tn.NeuralNDCGLoss, True, {**_NDCG, **_IMPL, **_STOCHASTIC, "temperature": _POSITIVE}
    ),
    "approx_ndcg_loss": (tn.approx_ndcg_loss, tn.ApproxNDCGLoss, True, {**_NDCG, **_APPROX_IMPL, "temperature": _POSITIVE}),
    "neuralsort_ndcg_loss": (tn.neuralsort_ndcg_loss, tn.NeuralSortNDCGLoss, True, {**_NDCG, "temperature": _SCALED}),
    "neuralsort_ndcg": (tn.neuralsort_ndcg, None, True, {**_NDCG, "temperature": _SCALED}),
    "neural_ndcg": (tn.neural_ndcg, None, True, {**_NDCG, **_STOCHASTIC, "temperature": _POSITIVE}),
    "approx_ndcg": (tn.approx_ndcg, None, True, {**_NDCG, "temperature": _POSITIVE}),
    "lambda_loss": (tn.lambda_loss, tn.LambdaLoss, True, {
        **_NDCG, **_IMPL, "sigma": _POSITIVE, "mu": _POSITIVE,
        "weighting": st.sampled_from(["ndcg_loss2pp", "ndcg_loss2", "lambdarank", "none", "ndcg3", *_PAIR_WEIGHTS]),
    }),
    "listnet_loss": (tn.listnet_loss, tn.ListNetLoss, False, dict(_GAIN)),
    "softmax_loss": (tn.softmax_loss, tn.SoftmaxLoss, False, dict(_GAIN)),
    "listmle_loss": (tn.listmle_loss, tn.ListMLELoss, False, {
        "weighting": st.sampled_from(["none", "plistmle", "lambdarank", tn.position_weights.plistmle, lambda i, n: i]),
    }),
    "ranknet_loss": (tn.ranknet_loss, tn.RankNetLoss, False, {**_IMPL, **_WEIGHTED, "sigma": _POSITIVE}),
    "pairwise_hinge_loss": (tn.pairwise_hinge_loss, tn.PairwiseHingeLoss, False, {**_IMPL, **_WEIGHTED, "margin": _POSITIVE}),
}
# Every metric's twin, with a drawn relaxation (DCG's and RBP's have no ``empty``: they call no list empty).
_RELAXATION = {"relaxation": st.sampled_from(
    ["approx", "bound", "neuralsort", "sinkhorn", "sigmoid", tn.ApproxRanks(temperature=0.5, cutoff="midway")]
)}  # fmt: skip
_BINARY = {**_RELAXATION, "threshold": THRESHOLDS}
_PERSISTENCE = st.sampled_from([0.8, 0.5, 0.0, 1.0, -0.1, float("nan"), "0.8"])
LOSSES.update({
    "ndcg_loss": (tn.ndcg_loss, tn.NDCGLoss, True, {**_NDCG, **_RELAXATION}),
    "dcg_loss": (tn.dcg_loss, tn.DCGLoss, True, {**_NDCG, **_RELAXATION}),
    "mrr_loss": (tn.mrr_loss, tn.MRRLoss, True, dict(_BINARY)),
    "precision_loss": (tn.precision_loss, tn.PrecisionLoss, True, {**_BINARY, "adaptive_k": ADAPTIVE_K}),
    "recall_loss": (tn.recall_loss, tn.RecallLoss, True, dict(_BINARY)),
    "hit_rate_loss": (tn.hit_rate_loss, tn.HitRateLoss, True, dict(_BINARY)),
    "average_precision_loss": (
        tn.average_precision_loss, tn.AveragePrecisionLoss, True, {**_BINARY, "ap_normaliser": AP_NORMALISERS}
    ),
    "rbp_loss": (tn.rbp_loss, tn.RBPLoss, True, {**_BINARY, "persistence": _PERSISTENCE}),
})


def loss(name: str) -> Callable[[st.DataObject], Case]:
    fn, module, takes_k, own = LOSSES[name]
    takes = inspect.signature(fn).parameters

    def recipe(data: st.DataObject) -> Case:
        draw = data.draw
        shape = draw(list_shapes())
        scores = draw(values(shape, hostile=draw(st.booleans())))
        if scores.is_floating_point():
            scores = scores.detach().requires_grad_(True)
        relevance = draw(values(shape, hostile=draw(st.booleans()), low=0.0))
        mask = draw(masks(shape))
        k = (draw(st.sampled_from([None, 1, 3, 0, (1, 2), "2"])),) if takes_k else ()
        shared = {option: strategy for option, strategy in _SHARED_LOSS_OPTIONS.items() if option in takes}
        options = {option: draw(strategy) for option, strategy in {**shared, **own}.items()}
        as_module = module is not None and draw(st.booleans())

        def call(validate: bool) -> object:
            # The stochastic variant samples noise: both calls of a case must draw the same.
            seeded = {"generator": torch.Generator().manual_seed(0)} if options.get("stochastic") is True else {}
            if as_module:
                return module(*k, validate=validate, **options, **seeded)(scores, relevance, mask=mask)
            return fn(scores, relevance, *k, mask=mask, validate=validate, **options, **seeded)

        return Case(
            call, ("scores", "relevance", "k", "mask", "validate", *options),
            nan_allowed=options.get("empty") == "skip" and options["reduction"] == "none", differentiable=True,
        )

    return recipe


def metric_class(data: st.DataObject) -> Case:
    """A TorchMetrics class built with drawn options, one drawn update, then compute()."""
    pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
    draw = data.draw
    name = draw(st.sampled_from(SCORED[:2] + SCORED[3:]))
    cls = {"ndcg": "NDCG", "dcg": "DCG", "mrr": "MRR", "precision": "Precision", "recall": "Recall",
           "hit_rate": "HitRate", "average_precision": "AveragePrecision"}[name]
    options = _metric_options(name, _options(draw), draw)
    options.pop("reduction")
    options["aggregation"] = draw(st.sampled_from(["mean", "mean", "median", "min", "max", "avg", lambda v, dim=None: v.sum()]))
    options["ignore_index"] = draw(st.sampled_from([None, None, -1, 0, 1.5]))
    options["allow_unretrieved"] = draw(ALLOW_UNRETRIEVED)
    k = draw(CUTOFFS)
    shape = draw(list_shapes())
    scores = draw(values(shape, hostile=draw(st.booleans())))
    relevance = draw(values(shape, hostile=draw(st.booleans()), low=0.0))
    mask = draw(masks(shape))
    flat = draw(st.booleans()) and len(shape) >= 1
    indexes = None
    if flat:
        scores, relevance = scores.reshape(-1), relevance.reshape(-1)
        mask = None
        indexes = torch.tensor(draw(st.lists(st.integers(0, 2), min_size=scores.shape[0], max_size=scores.shape[0])))

    per_batch = {}
    if draw(st.booleans()):
        per_batch["weights"] = draw(weights(tuple(scores.shape)))
    if draw(st.booleans()):
        per_batch["sample_weight"] = draw(weights(tuple(scores.shape[:-1])))

    def call(validate: bool) -> object:
        metric = getattr(tn.metrics, cls)(k, validate=validate, **options)
        metric.update(scores, relevance, mask=mask, indexes=indexes, **per_batch)
        return metric.compute()

    def functional() -> object:
        # Only the mean has a functional counterpart; ignore_index is the mask it stands for.
        plain = {key: value for key, value in options.items() if key not in ("aggregation", "ignore_index")}
        kept = mask
        if options["ignore_index"] is not None:
            kept = relevance != options["ignore_index"] if mask is None else mask & (relevance != options["ignore_index"])
        value = getattr(tn, name)(scores, relevance, k, mask=kept, indexes=indexes, **plain, **per_batch)
        result = call(True)  # one value per cutoff: a scalar, or a dict in cutoff order
        return (torch.stack(list(result.values())) if isinstance(result, dict) else result), value

    comparable = scores.numel() and options["aggregation"] == "mean"
    return Case(
        call, ("scores", "relevance", "aggregation", "ignore_index", *METRIC_OPTIONS),
        other_route=functional if comparable else None,
    )


def data_helpers(data: st.DataObject) -> Case:
    """pad_batch and RankingDataset on drawn queries: ragged, mismatched, 1-D, non-finite."""
    draw = data.draw
    queries = []
    for _ in range(draw(st.integers(0, 3))):
        n = draw(st.integers(0, 4))
        width = draw(st.sampled_from([3, 3, 2]))
        features = torch.randn(n, width) if draw(st.integers(0, 5)) else torch.randn(n)
        labels = draw(values((draw(st.sampled_from([n, n, n + 1])),), hostile=draw(st.booleans()), low=0.0))
        queries.append((features, labels))
    which = draw(st.sampled_from(["pad_batch", "dataset"]))

    def call(validate: bool) -> object:
        if which == "pad_batch":
            return pad_batch(queries)
        dataset = RankingDataset.from_queries(queries)
        return [dataset[i] for i in range(-len(dataset), len(dataset))]

    return Case(call, ("queries", "features", "labels", "relevance"), has_validate=False)


SAMPLED_LOSSES = {
    "sampled_softmax_loss": {"temperature": _POSITIVE},
    "bpr_loss": {},
    "gbce_loss": {"catalogue_size": st.sampled_from([100, 3, 0, 2.5]), "calibration": st.sampled_from([0.75, 0.0, 1.0, 2.0])},
    "sampled_ndcg_loss": {"k": st.sampled_from([None, 1, 3, 0, (1, 2)]), "temperature": _POSITIVE, **_NDCG},
}
_SAMPLED_FIELDS = ("lists", "positive_scores", "negative_scores", "negative_log_q", "positive_log_q",
                   "positive_mask", "negative_mask", "positive_relevance")  # fmt: skip


def sampled_loss(data: st.DataObject) -> Case:
    """A ``tn.sampled`` loss on drawn lists: hostile scores, shapes that may not fit, masks of any
    kind, log q that may be probabilities or NaN, and drawn options."""
    draw = data.draw
    name = draw(st.sampled_from(sorted(SAMPLED_LOSSES)))
    batch, count, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 5))
    positive_shape = draw(st.sampled_from([(batch, count), (batch,), (batch + 1,), ()]))
    negative_shape = draw(st.sampled_from([(batch, m), (m,), (batch + 1, m), (batch, 0)]))
    positives = draw(values(positive_shape, hostile=draw(st.booleans())))
    negatives = draw(values(negative_shape, hostile=draw(st.booleans())))
    leaves = [t.detach().requires_grad_(True) if t.is_floating_point() else t for t in (positives, negatives)]
    log_q = draw(st.sampled_from([None, "log", "probabilities", "nan", "wrong shape"]))
    negative_log_q = {
        None: None, "log": torch.full(negative_shape[-1:], -2.0), "probabilities": torch.full(negative_shape[-1:], 0.3),
        "nan": torch.full(negative_shape[-1:], math.nan), "wrong shape": torch.zeros(m + 1),
    }[log_q]  # fmt: skip
    lists = tn.sampled.SampledLists(
        leaves[0], leaves[1], negative_log_q=negative_log_q,
        positive_mask=draw(masks(positive_shape)), negative_mask=draw(masks(negative_shape)),
        positive_relevance=draw(st.sampled_from([None, draw(values(positive_shape, hostile=False))])),
    )  # fmt: skip
    options = {option: draw(strategy) for option, strategy in SAMPLED_LOSSES[name].items()}
    options["reduction"] = draw(st.sampled_from(["mean", "sum", "none", "avg"]))
    fn = getattr(tn.sampled, name)
    return Case(
        lambda validate: fn(lists, validate=validate, **options), (*_SAMPLED_FIELDS, "validate", *options),
        nan_allowed=options["reduction"] == "none", differentiable=True,
    )


ENTRY_POINTS: dict[str, Callable[[st.DataObject], Case]] = {
    **{f"tn.{name}": scored_metric(name) for name in SCORED},
    "tn.idcg": idcg,
    "tn.ordered_pair_accuracy": ordered_pair_accuracy,
    **{f"tn.ranked.{name}": ranked_metric(name) for name in RANKED},
    "tn.from_lists": from_lists,
    **{f"tn.{name}": loss(name) for name in LOSSES},
    "tn.sampled losses": sampled_loss,
    "tn.metrics classes": metric_class,
    "torch_ndcg.data": data_helpers,
}
