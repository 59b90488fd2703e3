"""The options the metrics share: their accepted values, their types, defaults and one documentation.

The options every metric shares are declared once, as the typed keyword groups
:class:`Definition` (what a metric measures: the metric classes take it at construction) and
:class:`MetricOptions` (that, plus what one call reduces). The public functions take them as
``**options: Unpack[MetricOptions]`` (PEP 692), so type checkers and IDEs check each name and
type, and adding a shared option means editing one class, one default and one doc here.
Every public metric's docstring takes its option list from :data:`OPTION_DOCS` (through
:func:`describe`), so an option is explained once, and the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypedDict

from torch import Tensor

from . import definitions as d

Ties = Literal["average", "first", "worst", "best"]
Empty = Literal["zero", "one", "skip", "error"]
Reduction = Literal["mean", "sum", "none"]
ApNormaliser = Literal["min_r_k", "r", "found"]

TIES: tuple[str, ...] = ("average", "first", "worst", "best")
EMPTY: tuple[str, ...] = ("zero", "one", "skip", "error")
REDUCTIONS: tuple[str, ...] = ("mean", "sum", "none")
AP_NORMALISERS: tuple[str, ...] = ("min_r_k", "r", "found")  # the first is the default
Aggregation = Literal["mean", "median", "min", "max"] | Callable[..., Tensor]


class Definition(TypedDict, total=False):
    """What a metric measures; each option is explained in :data:`OPTION_DOCS`, its default is in
    :data:`DEFAULTS`."""

    gain: d.Gain
    discount: d.Discount
    threshold: float | None
    ap_normaliser: ApNormaliser
    adaptive_k: bool
    empty: Empty
    validate: bool


class MetricOptions(Definition, total=False):
    """The keyword options of every public metric function: the :class:`Definition`, the per-item
    ``weights`` and how the per-query values are reduced."""

    weights: Tensor | None
    reduction: Reduction
    sample_weight: Tensor | None


class MetricClassOptions(Definition, total=False):
    """The keyword options of the metric classes: the :class:`Definition`, ``aggregation``, and
    :class:`torchmetrics.Metric`'s own keyword arguments (passed on to it)."""

    aggregation: Aggregation
    compute_on_cpu: bool
    dist_sync_on_step: bool
    process_group: Any
    dist_sync_fn: Callable[..., Any] | None
    distributed_available_fn: Callable[[], bool] | None
    sync_on_compute: bool
    compute_with_cache: bool


LossEmpty = Literal["skip", "zero", "keep", "error"]
Impl = Literal["auto", "dense", "streaming", "triton"]
NeuralImpl = Literal["auto", "dense", "streaming", "triton", "kernel"]
PairImpl = Literal["auto", "dense", "streaming"]


class NDCGLossOptions(TypedDict, total=False):
    """The keyword options of the smooth NDCG losses and LambdaLoss: the metric's ``gain``,
    ``discount``, ``empty`` and ``reduction``, and ``validate``
    (defaults in :data:`LOSS_DEFAULTS`)."""

    gain: d.Gain
    discount: d.Discount
    empty: Empty
    reduction: Reduction
    validate: bool


class ListLossOptions(TypedDict, total=False):
    """The keyword options every standard ranking loss shares (defaults in :data:`LOSS_DEFAULTS`)."""

    empty: LossEmpty
    reduction: Reduction
    validate: bool


class GainLossOptions(ListLossOptions, total=False):
    """A standard loss whose target is built from the labels' gains (ListNet, softmax cross-entropy)."""

    gain: d.Gain


class PairLossOptions(ListLossOptions, total=False):
    """A pairwise loss, dense or streamed over blocks of pairs."""

    impl: PairImpl


class LambdaLossOptions(PairLossOptions, GainLossOptions, total=False):
    """LambdaLoss: a pairwise loss weighted by the metric's gains and discounts."""

    discount: d.Discount


DEFAULTS: dict[str, Any] = {
    "gain": "linear",
    "discount": "log2",
    "threshold": None,
    "ap_normaliser": AP_NORMALISERS[0],
    "adaptive_k": False,
    "empty": "zero",
    "validate": True,
    "weights": None,
    "reduction": "mean",
    "sample_weight": None,
    "aggregation": "mean",
}


LOSS_DEFAULTS: dict[str, Any] = {
    "gain": "linear",
    "discount": "log2",
    "empty": "skip",
    "reduction": "mean",
    "impl": "auto",
    "validate": True,
}


def settle(owner: str, given: Mapping[str, Any], accepted: type, defaults: Mapping[str, Any] = DEFAULTS) -> dict[str, Any]:
    """``given`` keyword options checked against the typed group ``accepted``, defaults filled in.

    A name outside the group is a ``TypeError``, as Python raises for an unknown keyword argument.
    Options without a default here (torchmetrics' own) are kept only when given.
    """
    names = accepted.__optional_keys__ | accepted.__required_keys__  # type: ignore[attr-defined]
    unknown = sorted(set(given) - names)
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
    return {name: given[name] if name in given else defaults[name] for name in names if name in given or name in defaults}

OPTION_DOCS: dict[str, str] = {
    "scores": "``[..., N]`` model scores, higher ranks first (integer scores rank as exact float64 "
    "values); with ``indexes``, flat ``[T]`` scores of every item.",
    "relevance": "labels ≥ 0 (bool, int or float) of the scores' shape.",
    "k": "cutoff: ``None`` or a value above the list's length means the whole list; a sequence "
    "such as ``(1, 5, 10)`` adds a trailing dimension with one value per cutoff.",
    "indexes": "``[T]`` integer query id of every item (the flat layout of torchmetrics' retrieval "
    "metrics): queries in any order and of any size; ``reduction=\"none\"`` then gives one value per "
    "distinct id, in ascending id order. ``None``: every row of ``[..., N]`` is one query.",
    "mask": "bool of the scores' shape, ``True`` for real items; padding may sit anywhere "
    "(with ``indexes``: the items to keep).",
    "gain": "``\"linear\"`` (``rel``), ``\"exp2\"`` (``2**rel - 1``) or a callable of the labels "
    "(see :mod:`torch_ndcg.definitions`).",
    "discount": "``\"log2\"`` (``1/log2(rank + 1)``) or a callable of the 1-based rank.",
    "ties": "``\"average\"``: the expected value over every ordering of tied scores (as "
    "scikit-learn); ``\"first\"``: the earlier item first; ``\"worst\"``/``\"best\"``: tied items by "
    "ascending/descending relevance.",
    "empty": "the value of a query with nothing relevant (its ideal is 0): ``\"zero\"``, ``\"one\"``, "
    "``\"skip\"`` (left out of the mean; NaN with ``reduction=\"none\"``) or ``\"error\"``.",
    "reduction": "``\"mean\"`` over queries, ``\"sum\"``, or ``\"none\"`` (one value per query).",
    "weights": "per-item weights ≥ 0 of the scores' shape (rax's ``weights``, on its DCG and NDCG): "
    "each item's gain is multiplied by its weight, and the ideal ranking sorts by weighted gain. "
    "``None``: every weight is 1.",
    "sample_weight": "per-query weights ≥ 0 for the mean over queries (scikit-learn's "
    "``sample_weight``): the query shape ``[...]``, or with ``indexes`` ``[Q]``, one per distinct id "
    "in ascending id order. ``reduction=\"mean\"`` gives ``Σ w·v / Σ w`` over the queries not "
    "skipped (0 when that weight is 0), ``\"sum\"`` gives ``Σ w·v``; ``\"none\"`` refuses it.",
    "threshold": "an item counts as relevant when its label is ≥ ``threshold`` (trec_eval's ``-l`` "
    "relevance level; rax counts labels ≥ 1): a finite number > 0. ``None``: labels > 0.",
    "ap_normaliser": "what AP@k divides by: ``\"min_r_k\"`` min(R, k), R = the relevant items of "
    "the query (R when ``k=None``, trec_eval's AP); ``\"r\"`` R at every k (trec_eval's "
    "``map_cut``); ``\"found\"`` the relevant items ranked within the top k (torchmetrics' "
    "``RetrievalMAP(top_k=k)``; their expected number under tied scores with ``ties=\"average\"``).",
    "adaptive_k": "``True``: precision@k divides by min(k, the list's length) (torchmetrics' "
    "``adaptive_k``); ``False``: by k even for shorter lists (trec_eval's P@k).",
    "allow_unretrieved": "``True``: a ``-inf`` score marks an item that was not retrieved (rax's "
    "convention): it is never ranked and gains nothing, but still counts in the ideal DCG and in R "
    "(recall, AP), and not in the list's length (precision with ``k=None`` or ``adaptive_k``). "
    "``False`` (default): ``-inf`` is refused like NaN; padding belongs in ``mask``.",
    "validate": "check values (NaN scores, negative labels, exp2 overflow); ``False`` skips those "
    "checks, so on CUDA nothing waits for the device (for compiled or graph-captured code). "
    "Results on valid input are the same either way.",
    "ranked_ids": "``[..., K]`` integer item ids, best first, padded with ``pad_id``.",
    "target_ids": "``[..., M]`` integer ids of the ground truth, padded with ``pad_id``; an id may "
    "appear once per row.",
    "target_relevance": "``[..., M]`` labels ≥ 0 of ``target_ids``; ``None`` = implicit feedback, "
    "every target has relevance 1.",
    "pad_id": "the id that marks padding in both id tensors.",
}


def describe(names: tuple[str, ...], *, indent: str = "    ") -> str:
    """The ``Args:`` section of a docstring for the options ``names``, from :data:`OPTION_DOCS`
    and :data:`DEFAULTS`."""
    lines = ["Args:"]
    for name in names:
        default = f" Default: ``{DEFAULTS[name]!r}``." if name in DEFAULTS else ""
        lines.append(f"{indent}{name}: {OPTION_DOCS[name]}{default}")
    return "\n".join(lines)


def metric_doc(summary: str, names: tuple[str, ...], returns: str, example: str) -> str:
    """A public metric's docstring: its summary and formula, the options ``names``, what it returns,
    and a runnable example (indented doctest lines)."""
    return "\n\n".join([summary, describe(names), f"Returns:\n    {returns}", f"Example:\n{example}"])
