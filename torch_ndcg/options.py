"""Every option of the metrics and losses: its choices and its default, each stated once, and one
documentation of every argument.

A choice option is a ``Literal`` type; its tuple of choices is derived from that type
(``TIES = get_args(Ties)``) and its default is a named constant that every public signature uses
(``ties: Ties = DEFAULT_TIES``), so adding a choice or changing a default is one edit here.
Options are checked once, where a public function or class receives them; the layers below
trust them. :func:`document` writes a public function's ``Args:`` section from its own
signature and :data:`ARGUMENT_DOCS`, so each argument is explained once and every default shown
is the one the signature has.
"""

from __future__ import annotations

import inspect
import textwrap
import types
import typing
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar, get_args

from torch import Tensor

Ties = Literal["average", "first", "worst", "best"]
Empty = Literal["zero", "one", "skip", "error"]
Reduction = Literal["mean", "sum", "none"]
ApNormaliser = Literal["min_r_k", "r", "found"]
ShortList = Literal["whole", "zero"]  # NDCG@k of a list shorter than k
# The standard ranking losses (ListNet, ListMLE, pairwise, LambdaLoss) are not 1 − NDCG, so their
# ``empty`` speaks of the loss: "zero" counts an empty list as loss 0, "keep" evaluates the formula
# on it anyway (what allRank does), "skip" and "error" as for the metrics.
LossEmpty = Literal["skip", "zero", "keep", "error"]
Impl = Literal["auto", "dense", "streaming", "triton", "sorted"]  # ApproxNDCG's
NeuralImpl = Literal["auto", "dense", "streaming", "triton", "kernel"]
PairImpl = Literal["auto", "dense", "streaming"]
# The pair weights by name (torch_ndcg.pair_weights; a function of its signature is taken too).
WeightingName = Literal["ndcg_loss2pp", "ndcg_loss2", "lambdarank", "none", "ndcg_loss1", "dcg2", "label_difference"]
Weighting = WeightingName | Callable[..., Tensor]  # LambdaLoss's weighting: a scheme of the paper by default
PairWeighting = Weighting  # RankNet's and the pairwise hinge's: every pair alike by default
# ListMLE's position weights by name (torch_ndcg.position_weights; a function of its signature too).
ListMLEWeightingName = Literal["none", "plistmle"]
ListMLEWeighting = ListMLEWeightingName | Callable[..., Tensor]
MarginPairs = Literal["all", "first"]  # MarginMSE's pairs: every pair of a list, or the first item's
AggregationName = Literal["mean", "median", "min", "max"]
Aggregation = AggregationName | Callable[..., Tensor]

TIES: tuple[str, ...] = get_args(Ties)
EMPTY: tuple[str, ...] = get_args(Empty)
REDUCTIONS: tuple[str, ...] = get_args(Reduction)
AP_NORMALISERS: tuple[str, ...] = get_args(ApNormaliser)
SHORT_LISTS: tuple[str, ...] = get_args(ShortList)
LOSS_EMPTY: tuple[str, ...] = get_args(LossEmpty)
IMPLS: tuple[str, ...] = get_args(Impl)
NEURAL_IMPLS: tuple[str, ...] = get_args(NeuralImpl)
PAIR_IMPLS: tuple[str, ...] = get_args(PairImpl)
WEIGHTINGS: tuple[str, ...] = get_args(WeightingName)
LISTMLE_WEIGHTINGS: tuple[str, ...] = get_args(ListMLEWeightingName)
MARGIN_PAIRS: tuple[str, ...] = get_args(MarginPairs)
AGGREGATIONS: tuple[str, ...] = get_args(AggregationName)

DEFAULT_GAIN: Literal["linear"] = "linear"
DEFAULT_DISCOUNT: Literal["log2"] = "log2"
DEFAULT_TIES: Ties = "average"
DEFAULT_EMPTY: Empty = "zero"
DEFAULT_REDUCTION: Reduction = "mean"
DEFAULT_AP_NORMALISER: ApNormaliser = "min_r_k"
DEFAULT_SHORT_LIST: ShortList = "whole"
DEFAULT_AGGREGATION: AggregationName = "mean"
DEFAULT_LOSS_EMPTY: LossEmpty = "skip"
DEFAULT_IMPL: Literal["auto"] = "auto"
DEFAULT_WEIGHTING: WeightingName = "ndcg_loss2pp"
DEFAULT_PAIR_WEIGHTING: WeightingName = "none"
DEFAULT_LISTMLE_WEIGHTING: ListMLEWeightingName = "none"
DEFAULT_MARGIN_PAIRS: MarginPairs = "all"
# Ordered-pair accuracy counts a tied pair as wrongly ordered, as rax does.
DEFAULT_PAIR_TIES: Ties = "worst"


ARGUMENT_DOCS: dict[str, str] = {
    "scores": "``[..., N]`` model scores, higher ranks first (integer scores rank as exact float64 "
    "values); with ``indexes``, flat ``[T]`` scores of every item.",
    "relevance": "labels ≥ 0 (bool, int or float) of the scores' shape (for ``idcg``: ``[..., N]``).",
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
    "short_list": "NDCG@k of a list with fewer than k items: ``\"whole\"`` its NDCG over the whole "
    "list; ``\"zero\"`` 0, as the LETOR 4.0 evaluation tool (Eval-Score-4.0) counts the positions "
    "beyond the list's end. A query with nothing relevant takes its value from ``empty`` either way.",
    "adaptive_k": "``True``: precision@k divides by min(k, the list's length) (torchmetrics' "
    "``adaptive_k``); ``False``: by k even for shorter lists (trec_eval's P@k).",
    "allow_unretrieved": "``True``: a ``-inf`` score marks an item that was not retrieved (rax's "
    "convention): it is never ranked and gains nothing, but still counts in the ideal DCG and in R "
    "(recall, AP), and not in the list's length (precision with ``k=None`` or ``adaptive_k``). "
    "``False``: ``-inf`` is refused like NaN; padding belongs in ``mask``.",
    "validate": "check values (NaN scores, negative labels, exp2 overflow); ``False`` skips those "
    "checks, so on CUDA nothing waits for the device (for compiled or graph-captured code). "
    "Results on valid input are the same either way.",
    "ranked_ids": "``[..., K]`` integer item ids, best first, padded with ``pad_id``.",
    "target_ids": "``[..., M]`` integer ids of the ground truth, padded with ``pad_id``; an id may "
    "appear once per row.",
    "target_relevance": "``[..., M]`` labels ≥ 0 of ``target_ids``; ``None`` = implicit feedback, "
    "every target has relevance 1.",
    "pad_id": "the id that marks padding in both id tensors.",
    "persistence": "RBP's p in [0, 1): the probability that the user reads on to the next rank.",
}

F = TypeVar("F", bound=Callable[..., Any])

DOC_WIDTH = 96  # assembled docstring lines: help() indents them by 4, for a 100-column terminal


def describe(function: Callable[..., Any], *, indent: str = "    ") -> str:
    """The ``Args:`` section of ``function``'s docstring: each parameter's documentation from
    :data:`ARGUMENT_DOCS` and its default from the signature."""
    lines = ["Args:"]
    for name, parameter in inspect.signature(function).parameters.items():
        default = "" if parameter.default is parameter.empty else f" Default: ``{parameter.default!r}``."
        lines.append(textwrap.fill(
            f"{name}: {ARGUMENT_DOCS[name]}{default}", width=DOC_WIDTH, initial_indent=indent,
            subsequent_indent=2 * indent, break_long_words=False, break_on_hyphens=False,
        ))  # fmt: skip
    return "\n".join(lines)


class _Shown:
    """An annotation as a reader writes it (``int | Sequence[int] | None``, ``'mean' | 'sum'``):
    ``inspect`` and pdoc print an annotation object by its ``repr``, without quotes."""

    __slots__ = ("text",)

    def __init__(self, annotation: object) -> None:
        self.text = _written(annotation)

    def __repr__(self) -> str:
        return self.text


def _written(annotation: object) -> str:
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None) or annotation is None:
        return "None"
    if origin is Literal:
        return " | ".join(repr(value) for value in arguments)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_written(argument) for argument in arguments)
    if origin is not None and getattr(origin, "__name__", "") == "Callable":
        return "Callable"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_written(argument) for argument in arguments)}]"
    return getattr(annotation, "__name__", str(annotation))


def readable_signature(function: F, *, keep: Iterable[str] | None = None) -> F:
    """``function`` (or a class) with its signature's annotations evaluated, so that ``help()`` and
    the API reference show ``int | Sequence[int] | None`` rather than the source's private alias
    ``'d.Cutoff'``; ``keep`` limits the parameters shown to those names (and ``**kwargs``)."""
    signature = inspect.signature(function)
    source = inspect.unwrap(function.__init__ if isinstance(function, type) else function)
    namespace = getattr(source, "__globals__", {})

    def shown(annotation: object) -> object:
        if not isinstance(annotation, str):
            return annotation if annotation is inspect.Parameter.empty else _Shown(annotation)
        try:
            return _Shown(eval(annotation, namespace))  # noqa: S307 (the library's own annotations)
        except Exception:  # a name only a type checker sees (TYPE_CHECKING imports): keep the text
            return annotation

    parameters = [
        parameter.replace(annotation=shown(parameter.annotation))
        for name, parameter in signature.parameters.items()
        if keep is None or name in keep or parameter.kind is parameter.VAR_KEYWORD
    ]
    returns = inspect.Signature.empty if isinstance(function, type) else shown(signature.return_annotation)
    function.__signature__ = signature.replace(parameters=parameters, return_annotation=returns)  # type: ignore[attr-defined]
    return function


def document(returns: str) -> Callable[[F], F]:
    """Complete a public metric's docstring (summary, formula, then ``Example:``) with its
    ``Args:`` section (:func:`describe`) and ``returns``, placed before the example."""

    def complete(function: F) -> F:
        doc = inspect.cleandoc(function.__doc__ or "")
        summary, example = doc.split("\nExample:\n", 1)
        returned = textwrap.fill(returns, width=DOC_WIDTH, initial_indent="    ", subsequent_indent="    ")
        sections = [summary.rstrip(), describe(function), f"Returns:\n{returned}", f"Example:\n{example}"]
        function.__doc__ = "\n\n".join(sections)
        return function

    return complete


def moved(module: str, names: dict[str, tuple[str, Callable[[], object]]]) -> Callable[[str], object]:
    """A module ``__getattr__`` that still answers the old ``names`` (``old: (new, value)``), with a
    ``DeprecationWarning`` that says where each now lives; they go in the next release."""

    def __getattr__(name: str) -> object:
        if name in names:
            new, value = names[name]
            warnings.warn(f"{module}.{name} is deprecated; use {new}", DeprecationWarning, stacklevel=2)
            return value()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


__getattr__ = moved(
    __name__,
    {
        "OPTION_DOCS": ("torch_ndcg.options.ARGUMENT_DOCS", lambda: ARGUMENT_DOCS),
        "DEFAULTS": ("the DEFAULT_* constants of torch_ndcg.options, or inspect.signature(tn.ndcg)", lambda: {
            "gain": DEFAULT_GAIN, "discount": DEFAULT_DISCOUNT, "threshold": None,
            "ap_normaliser": DEFAULT_AP_NORMALISER, "adaptive_k": False, "empty": DEFAULT_EMPTY, "validate": True,
            "weights": None, "reduction": DEFAULT_REDUCTION, "sample_weight": None,
            "aggregation": DEFAULT_AGGREGATION,
        }),
        "LOSS_DEFAULTS": ("the DEFAULT_* constants of torch_ndcg.options, or inspect.signature(tn.neural_ndcg)", lambda: {
            "gain": DEFAULT_GAIN, "discount": DEFAULT_DISCOUNT, "empty": DEFAULT_LOSS_EMPTY,
            "reduction": DEFAULT_REDUCTION, "impl": DEFAULT_IMPL, "validate": True,
        }),
    },
)  # fmt: skip
