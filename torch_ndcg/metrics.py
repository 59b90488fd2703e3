"""Stateful ranking metrics for training loops: ``update`` per batch (on every rank), ``compute`` once.

Each class is a :class:`torchmetrics.Metric` (``pip install torchmetrics``) and runs the
same kernels as the functional forms, so ``NDCG(k=10)`` over many batches equals
:func:`torch_ndcg.ndcg` on the concatenated data. Three input forms:

* **dense** ``update(scores, relevance, mask=None)`` with ``[..., N]`` batches, one whole query
  per row: the state is a sum and a count per cutoff (summed across ranks), ``16 * len(k)``
  bytes whatever the number of batches. ``update`` checks a batch at once (a bad one raises
  there) and keeps a copy of its rows until :data:`PENDING_ITEMS` items wait; then it evaluates
  them together, since one call over many small batches costs less per row; ``compute()``, a
  distributed sync and every torchmetrics state operation (``merge_state``, ``set_dtype``, ``to``,
  ``state_dict``, pickling, ``forward``) evaluate what still waits, ``reset()`` drops it. Each row
  gets the value its own batch would give.
  Batches with ``weights``, ``sample_weight`` or ``query_ids``, a batch of ``PENDING_ITEMS`` items
  or more (without a copy), and a metric with a callable ``gain``/``discount`` or
  ``empty="error"`` are evaluated at their ``update``.
* **flat** ``update(scores, relevance, indexes=query_ids)``, torchmetrics' retrieval form, where
  one query may span batches: the rows are kept (20 bytes per item: a float64 score, so that
  ranking is exact as in the functional form, a label in the metric's dtype, float32 by
  default, and an int64 id) and the flat layout runs at ``compute()``, whose working memory comes on top (``python -m benchmarks metrics``
  measures both). Under DDP each rank evaluates its own rows at ``compute()`` and the ranks
  exchange per-query values and ids: an id seen on several ranks is one query repeated (as
  ``DistributedSampler`` repeats samples) and counts once. Keep each query's items on one rank
  (a query may span batches, not ranks) and use global query ids, not per-rank batch positions.
  One instance may take both forms: the mean then runs over the dense rows' queries and the
  flat rows' queries together.
* **exact DDP** ``update(scores, relevance, query_ids=ids)``: dense rows with one integer id per
  row keep a value per cutoff, an id, an item count and a checksum of the labels per query
  (``8 * len(k) + 24`` bytes), and ``compute()`` counts each id once, whichever rank saw it and
  however often; the same id with other items (count or labels), or with values that differ by
  more than 1e-6 (relative), is a ``ValueError`` naming it. Without ids, dense rows are
  summed as they come: ``DistributedSampler`` pads the dataset by repeating samples until every
  rank has as many, so those repeated queries count twice and the value depends on the world
  size (``drop_last=True`` drops samples instead). Pass ``query_ids``, or use a sampler that
  does not repeat, such as ``range(rank, len(dataset), world_size)`` as each rank's indices.
* **ranked** ``RankedNDCG`` … ``update(ranked_ids, target_ids, target_relevance=None)``: a
  recommended list against its ground truth (see :func:`torch_ndcg.ranked.ndcg`), with the
  same constant sum/count state as the dense form.

``k`` may be a sequence: ``NDCG(k=(1, 5, 10)).compute()`` returns
``{"ndcg@1": …, "ndcg@5": …, "ndcg@10": …}`` (ready for ``self.log_dict``); a single ``k``
returns a scalar tensor. ``torchmetrics.MetricCollection([NDCG(k=(1, 5, 10))], prefix="val/")``
names them ``"val/ndcg@1"``, …, so training and validation log under distinct keys. ``empty="skip"`` leaves queries with nothing relevant out of both the
sum and the count. A ``compute()`` that has seen no query (before any ``update``, after batches
``[0, N]`` only, or every query skipped by ``empty="skip"`` or ``ignore_index``) warns and
returns 0, a mean over nothing.

torchmetrics' ``aggregation``: ``"mean"`` (the default) keeps the constant sum/count state;
``"median"``, ``"min"``, ``"max"`` or a callable ``f(values, dim=None)`` need every per-query
value, so those keep 8 bytes per query and cutoff (gathered across ranks at ``compute()``).
``sample_weight`` (per dense or ranked batch) weighs the mean, so it needs ``"mean"``.
``set_dtype`` sets the dtype of the results; the states keep theirs (float64 sums and values,
int64 ids), so it changes no value.
``ignore_index`` (scored classes) leaves out items whose label equals it, as a mask would, and
a query left without an item is no query (as in torchmetrics, in the dense and flat forms alike).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Mapping, Sequence
import inspect
from typing import TYPE_CHECKING, Any, TypedDict

import torch
from torch import Tensor

if TYPE_CHECKING:  # (typing.Unpack is Python 3.11+; the annotations are never evaluated at run time)
    from typing_extensions import Unpack

from . import definitions as d
from . import dense, exact_ddp, functional, ranked
from .options import (
    AP_NORMALISERS,
    DEFAULT_AGGREGATION,
    DEFAULT_AP_NORMALISER,
    DEFAULT_DISCOUNT,
    DEFAULT_EMPTY,
    DEFAULT_GAIN,
    DEFAULT_PAIR_TIES,
    DEFAULT_SHORT_LIST,
    DEFAULT_TIES,
    EMPTY,
    SHORT_LISTS,
    TIES,
    Aggregation,
    ApNormaliser,
    Empty,
    ShortList,
    Ties,
    readable_signature,
)
from .aggregation import aggregate_columns, resolve_aggregation, weighted_sums
from .pairs import ordered_pair_accuracy
from .validation import (
    as_float_scores,
    check_flag,
    check_ids,
    check_mask,
    check_option,
    check_pad_id,
    check_relevance_dtype,
    check_relevance_values,
    check_same_shape,
    check_score_values,
    check_tensor,
    check_threshold,
    check_weights,
)

try:
    from torchmetrics import Metric
    from torchmetrics.utilities.data import dim_zero_cat
except ImportError as error:  # torchmetrics is an optional extra
    raise ImportError(
        "torch_ndcg.metrics needs torchmetrics; install it with: pip install torchmetrics "
        "(or, in a clone of torch_ndcg: pip install '.[metrics]')"
    ) from error

__all__ = [
    "DCG",
    "MRR",
    "NDCG",
    "OrderedPairAccuracy",
    "AveragePrecision",
    "HitRate",
    "Precision",
    "Recall",
    "RankedAveragePrecision",
    "RankedDCG",
    "RankedHitRate",
    "RankedMRR",
    "RankedNDCG",
    "RankedPrecision",
    "RankedRecall",
]

Result = Tensor | dict[str, Tensor]

# The states that hold dense rows waiting to be evaluated together (_ScoredMetric._defer).
_WAITING = ("pending_scores", "pending_relevance", "pending_mask")

#: How many items of dense batches a scored metric keeps before it evaluates them together: a
#: bound on its memory (1.5 MiB of float32 scores and int64 labels) that lets one call serve
#: many small batches.
PENDING_ITEMS = 2**17

# Callables seen as metric options, numbered in order of first sight. Kept alive, so a number
# never passes to another object (ids of freed objects are reused).
_CALLABLES: list[object] = []


def _callable_number(value: object) -> int:
    for number, seen in enumerate(_CALLABLES):
        if seen is value:
            return number
    _CALLABLES.append(value)
    return len(_CALLABLES) - 1


def _fingerprint(kind: str, cutoffs: tuple[int | None, ...], options: dict[str, Any]) -> str:
    """A short digest of a metric's configuration, equal only for provably equal options.

    ``MetricCollection`` shares the state of metrics whose states have equal names and values
    after the first batch ("compute groups"). Our states are results, not sufficient
    statistics: NDCG@5 and NDCG@10 that agree on one batch must not share state later, so the
    state names carry this digest. A callable option is the same only as itself (two partials
    of one function, or two lambdas on one line, may differ); it is described by its order of
    first sight, which is the same on every rank of a program that builds its metrics in the
    same order.
    """

    def describe(value: Any) -> str:
        return f"callable #{_callable_number(value)}" if callable(value) else repr(value)

    text = repr((kind, cutoffs, sorted((key, describe(value)) for key, value in options.items())))
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def _sum_and_count(values: Tensor) -> tuple[Tensor, Tensor]:
    """Per-cutoff sum and count of per-query values ``[..., C]``; NaN marks a skipped query."""
    flat = values.reshape(-1, values.shape[-1])
    return flat.nansum(0, dtype=torch.float64), (flat == flat).sum(0)  # NaN ≠ NaN


def _rows(state: list[Tensor] | Tensor) -> int:
    """Rows held by a list state (after a distributed sync it is one concatenated tensor)."""
    return sum(part.numel() for part in state) if isinstance(state, list) else state.numel()


def _with_dtypes_of(moved: list[Tensor] | Tensor, state: list[Tensor] | Tensor) -> list[Tensor] | Tensor:
    """A state after a function was applied to it (``moved``), with the dtypes it had before."""
    if isinstance(moved, Tensor):
        return moved if moved.dtype == state.dtype else state.to(moved.device)
    return [new if new.dtype == old.dtype else old.to(new.device) for new, old in zip(moved, state)]


class MetricKwargs(TypedDict, total=False):
    """:class:`torchmetrics.Metric`'s own keyword arguments, passed on to it."""

    compute_on_cpu: bool
    dist_sync_on_step: bool
    process_group: Any
    dist_sync_fn: Callable[..., Any] | None
    distributed_available_fn: Callable[[], bool] | None
    sync_on_compute: bool
    compute_with_cache: bool


_CLASS_OPTIONS = frozenset({"k", "aggregation", "ignore_index", "validate"})  # besides the function's own


class _Accumulated(Metric):
    """Mean of per-query values at each cutoff, kept as a sum and a count (summed across ranks);
    any other ``aggregation`` keeps every per-query value (8 bytes per query and cutoff)."""

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        function = cls.__dict__.get("_function")
        if function is not None:
            # help() and the API reference show the options this metric takes, not every option
            # of the shared constructor (the others are refused).
            readable_signature(cls, keep=set(inspect.signature(function).parameters) | _CLASS_OPTIONS)
        elif "__init__" in cls.__dict__:  # a class with a constructor of its own shows all of it
            readable_signature(cls)

    def __init__(
        self, function: Callable[..., Tensor], k: d.Cutoff, options: dict[str, Any], validate: bool,
        aggregation: Aggregation, **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - MetricKwargs.__optional_keys__)
        if unknown:  # (as Python says it, not as torchmetrics does)
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        super().__init__(**kwargs)
        self.cutoffs, self._many = d.resolve_cutoffs(k)
        self._function = function
        self._options = options
        self.validate = validate
        self._aggregate = None if aggregation == "mean" else resolve_aggregation(aggregation)
        tag = _fingerprint(type(self).__name__, self.cutoffs, {**options, "aggregation": aggregation})
        self._total, self._count, self._per_query = f"total_{tag}", f"count_{tag}", f"per_query_{tag}"
        self._tag = tag
        size = len(self.cutoffs)
        # float64 sum and count (the queries' total sample_weight; exact counts up to 2**53).
        self.add_state(self._total, torch.zeros(size, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state(self._count, torch.zeros(size, dtype=torch.float64), dist_reduce_fx="sum")
        if self._aggregate is not None:
            self.add_state(self._per_query, [], dist_reduce_fx="cat")

    def _accumulate(self, values: Tensor, sample_weight: Tensor | None = None) -> None:
        if self._aggregate is not None:
            if sample_weight is not None:
                raise ValueError('sample_weight weighs the mean: it needs aggregation="mean"')
            getattr(self, self._per_query).append(values.reshape(-1, values.shape[-1]).to(torch.float64))
            return
        if sample_weight is None:
            total, count = _sum_and_count(values)
        else:
            check_weights("sample_weight", sample_weight, values.shape[:-1], None, self.validate)
            total, count = weighted_sums(values, sample_weight, torch.float64)
        getattr(self, self._total).add_(total)
        getattr(self, self._count).add_(count)

    def _apply(self, fn: Callable[[Tensor], Tensor], exclude_state: Sequence[str] = "") -> torch.nn.Module:
        # torchmetrics' set_dtype converts every state; ours keep their own dtypes (float64 sums
        # and values, int64 ids and counts, rows as they were given), so set_dtype moves them only
        # and sets the dtype of the results: a float16 sum would round, float16 ids would merge.
        before = {name: (getattr(self, name), self._defaults[name]) for name in self._defaults}
        this = super()._apply(fn, exclude_state)
        for name, (state, default) in before.items():
            setattr(this, name, _with_dtypes_of(getattr(this, name), state))
            this._defaults[name] = _with_dtypes_of(this._defaults[name], default)
        return this

    def _sync_dist(self, *args: Any, **kwargs: Any) -> None:
        # torchmetrics stands in a 1-D tensor of the metric's dtype for a rank's empty list state;
        # the gathered per-query values are [Q, C] float64 on every rank. (Undone after compute.)
        if self._aggregate is not None and not _rows(getattr(self, self._per_query)):
            empty = torch.empty(0, len(self.cutoffs), dtype=torch.float64, device=self.device)
            setattr(self, self._per_query, [empty])
        super()._sync_dist(*args, **kwargs)

    def _result(self, now: Tensor | None = None) -> Result:
        """The aggregate over every query seen, and the per-query values ``now`` ``[Q, C]`` (flat
        rows evaluated at compute time)."""
        if self._aggregate is None:
            total, count = getattr(self, self._total), getattr(self, self._count)
            if now is not None:
                now_total, now_count = _sum_and_count(now)
                total, count = total + now_total, count + now_count
            # A mean over nothing (no update, every query skipped, or a total weight of 0) is 0, as
            # in the functional form.
            results = torch.where(count > 0, total / count, 0.0).to(self.dtype)
            nothing = not bool((count > 0).any())
        else:
            kept = getattr(self, self._per_query)
            parts = [dim_zero_cat(kept)] if _rows(kept) else []
            parts += [] if now is None else [now.to(torch.float64)]
            values = torch.cat(parts) if parts else torch.zeros(0, len(self.cutoffs), dtype=torch.float64)
            results = aggregate_columns(values, self._aggregate).to(self.dtype)
            nothing = not bool((values == values).any())  # NaN marks a skipped query
        if nothing and self._update_count:  # (before any update, torchmetrics warns itself)
            warnings.warn(
                f"{type(self).__name__}.compute() has seen no query (only batches without rows, or every "
                "query skipped by empty='skip' or ignore_index): it returns 0, a mean over nothing",
                UserWarning, stacklevel=4,  # _result, compute, torchmetrics' wrapper, the caller
            )
        if not self._many:
            return results[0]
        return dict(zip(self._result_names, results))

    @property
    def _result_names(self) -> list[str]:
        """The key of each cutoff's value (``"ndcg@10"``; the function's name for ``k=None``)."""
        name = self._function.__name__
        return [name if k is None else f"{name}@{k}" for k in self.cutoffs]


def _definition(owner: type, function: Callable[..., Tensor], given: Mapping[str, Any]) -> dict[str, Any]:
    """The definition options of a metric class, checked when the metric is built (not at the first
    ``update``): those ``function`` takes, and a refusal of one it has no use for. Only options
    given other than their default are kept, so the function's own defaults apply."""
    takes = inspect.signature(function).parameters
    defaults = {"gain": DEFAULT_GAIN, "discount": DEFAULT_DISCOUNT, "threshold": None,
                "ap_normaliser": DEFAULT_AP_NORMALISER, "adaptive_k": False, "empty": DEFAULT_EMPTY,
                "short_list": DEFAULT_SHORT_LIST}  # fmt: skip
    definition = {}
    for name, value in given.items():
        default = defaults[name]
        if value is default or (isinstance(value, str) and value == default):
            continue
        if name not in takes:
            raise ValueError(f"{function.__name__} takes no {name} option (it would have no effect)")
        definition[name] = value
    check_option("empty", given["empty"], EMPTY)
    check_option("ap_normaliser", given["ap_normaliser"], AP_NORMALISERS)
    check_flag("adaptive_k", given["adaptive_k"])
    check_option("short_list", given["short_list"], SHORT_LISTS)
    check_threshold(given["threshold"])
    d.resolve_gain(given["gain"])
    d.resolve_discount(given["discount"])
    return definition


class _ScoredMetric(_Accumulated):
    """Dense ``[..., N]`` batches (constant state) or flat rows with query ``indexes``."""

    _function: Callable[..., Tensor]

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        threshold: float | None = None,
        ap_normaliser: ApNormaliser = DEFAULT_AP_NORMALISER,
        adaptive_k: bool = False,
        empty: Empty = DEFAULT_EMPTY,
        short_list: ShortList = DEFAULT_SHORT_LIST,
        ties: Ties = DEFAULT_TIES,
        allow_unretrieved: bool = False,
        ignore_index: int | None = None,
        validate: bool = True,
        aggregation: Aggregation = DEFAULT_AGGREGATION,
        **kwargs: Unpack[MetricKwargs],
    ) -> None:
        """Options as in :func:`torch_ndcg.ndcg`, plus torchmetrics' ``aggregation`` (``"mean"``
        with constant state; ``"median"``, ``"min"``, ``"max"`` or a callable ``f(values, dim=None)``
        keep every per-query value) and ``ignore_index`` (items whose label equals it are left out,
        as ``mask=relevance != ignore_index``); :class:`torchmetrics.Metric`'s own keyword
        arguments pass on to it."""
        if ignore_index is not None and (isinstance(ignore_index, bool) or not isinstance(ignore_index, int)):
            raise TypeError(f"ignore_index must be an int or None, got {ignore_index!r}")
        self.ignore_index = ignore_index
        check_option("ties", ties, TIES)
        definition = _definition(
            type(self), type(self)._function, dict(gain=gain, discount=discount, threshold=threshold,
            ap_normaliser=ap_normaliser, adaptive_k=adaptive_k, empty=empty, short_list=short_list),
        )  # fmt: skip
        definition.update(ties=ties, allow_unretrieved=check_flag("allow_unretrieved", allow_unretrieved))
        super().__init__(type(self)._function, k, definition, check_flag("validate", validate), aggregation, **kwargs)
        self.add_state("flat_scores", [], dist_reduce_fx="cat")
        self.add_state("flat_relevance", [], dist_reduce_fx="cat")
        self.add_state("flat_indexes", [], dist_reduce_fx="cat")
        exact_ddp.add_states(self, len(self.cutoffs), self._tag)
        # Checked dense rows that wait to be evaluated together (_defer); never gathered across
        # ranks: each rank evaluates its own before a sync.
        for name in _WAITING:
            self.add_state(name, [], dist_reduce_fx="cat")
        # Only where evaluating later cannot change what the caller sees: a user callable runs
        # when it is called, and empty="error" names the batch that has an empty query.
        self._defers = isinstance(gain, str) and isinstance(discount, str) and empty != "error"

    def update(
        self,
        scores: Tensor,
        relevance: Tensor,
        *,
        mask: Tensor | None = None,
        indexes: Tensor | None = None,
        weights: Tensor | None = None,
        sample_weight: Tensor | None = None,
        query_ids: Tensor | None = None,
    ) -> None:
        """Add a dense batch ``[..., N]`` (one query per row), or flat rows of queries ``indexes``.

        Args:
            scores: model scores; higher ranks first.
            relevance: labels ≥ 0 of the same shape.
            mask: bool, ``True`` for real items (dense: padding; flat: rows to keep).
            indexes: integer query id of every item (flat form); a query may span batches.
            weights: per-item weights of the scores' shape (rax's ``weights``; dense form only).
            sample_weight: per-query weights ``[...]`` in the mean (scikit-learn's
                ``sample_weight``; dense form only).
            query_ids: integer id of every row ``[...]`` (dense form): each id counts once in
                ``compute()``, on whichever rank and however often it was seen (exact under
                ``DistributedSampler``, which repeats samples to even out the ranks); keeps a
                value per cutoff and an id per query. Without ids, rows are summed as they come.
        """
        if self.ignore_index is not None:
            check_tensor("relevance", relevance)
            check_mask(mask, relevance.shape)
            kept = relevance != self.ignore_index
            mask = kept if mask is None else mask & kept
            if indexes is None:
                # A row left without an item is no query, as in the flat form and torchmetrics
                # (not an empty query, which ``empty`` would score).
                scores, relevance, mask, weights, sample_weight, query_ids = _drop_empty_rows(
                    scores, relevance, mask, weights, sample_weight, query_ids
                )
                if scores.numel() == 0:
                    return
        if indexes is not None:
            if weights is not None or sample_weight is not None:
                # A flat query may span batches: its weights would have to be kept per item.
                raise ValueError(
                    "weights and sample_weight are taken by the dense form of update (one query per row), "
                    "not with indexes; use the functional form for flat weighted queries"
                )
            if query_ids is not None:
                raise ValueError("query_ids names the rows of a dense batch; with indexes every item has its id already")
            self._store(scores, relevance, mask, indexes)
            return
        if self._defers and weights is None and sample_weight is None and query_ids is None:
            self._defer(scores, relevance, mask)
            return
        # Inference mode skips autograd's bookkeeping on every small kernel: the values only
        # ever land in the states, in place, so none of the intermediates escapes.
        with torch.inference_mode():
            weighted = {} if weights is None else {"weights": weights}  # (a metric without weights refuses them)
            values = self._function(
                scores, relevance, self.cutoffs, mask=mask, reduction="none", validate=self.validate,
                **weighted, **self._options,
            )
            if query_ids is None:
                self._accumulate(values, sample_weight)
            else:
                exact_ddp.keep(self, values, query_ids, relevance, mask, sample_weight)

    def _defer(self, scores: Tensor, relevance: Tensor, mask: Tensor | None) -> None:
        """Check a dense batch now, as the function would, and keep a copy of its rows, which are
        evaluated with the rows of the next batches, up to :data:`PENDING_ITEMS` items: one call
        over many small batches costs less per row than a call per batch, and gives each row the
        same value (every row is ranked on its own)."""
        with torch.inference_mode():  # (the rows are kept as given: the function converts them itself)
            dense.check(
                scores, relevance, mask, self._options.get("gain", DEFAULT_GAIN), self.validate,
                unretrieved=self._options["allow_unretrieved"],
            )
        length = scores.shape[-1]
        if _rows(self.pending_scores):
            first = self.pending_scores[0]
            joins = (
                first.shape[-1] == length and first.dtype == scores.dtype and first.device == scores.device
                and self.pending_relevance[0].dtype == relevance.dtype
                and bool(_rows(self.pending_mask)) == (mask is not None)
                and _rows(self.pending_scores) + scores.numel() <= PENDING_ITEMS
            )  # fmt: skip
            if not joins:
                self._evaluate_pending()
        if scores.numel() == 0:
            return
        if scores.numel() >= PENDING_ITEMS:  # large enough alone: evaluated now, without a copy
            self._evaluate_rows(scores, relevance, mask)
            return
        # Copies: the caller may reuse its tensors before the rows are evaluated.
        self.pending_scores.append(scores.detach().reshape(-1, length).clone())
        self.pending_relevance.append(relevance.detach().reshape(-1, length).clone())
        if mask is not None:
            self.pending_mask.append(mask.detach().reshape(-1, length).clone())
        if _rows(self.pending_scores) >= PENDING_ITEMS:
            self._evaluate_pending()

    def _evaluate_pending(self) -> None:
        """Evaluate the rows kept by :meth:`_defer` (checked then) into the states, and drop them."""
        if not _rows(self.pending_scores):
            return
        rows = tuple(getattr(self, name) for name in _WAITING)
        scores, relevance, mask = (dim_zero_cat(state) if _rows(state) else None for state in rows)
        for state in rows:
            # In place: the members of a MetricCollection compute group share these lists (and
            # the sums), so each must see them emptied, or the next would add the rows again.
            if isinstance(state, list):
                state.clear()
        self._evaluate_rows(scores, relevance, mask)

    def _evaluate_rows(self, scores: Tensor, relevance: Tensor, mask: Tensor | None) -> None:
        """Add the values of checked dense rows to the states."""
        with torch.inference_mode():
            values = self._function(
                scores, relevance, self.cutoffs, mask=mask, reduction="none", validate=False, **self._options
            )
            # (compute_on_cpu moves the kept rows to the CPU after each update; the sums stay put.)
            self._accumulate(values.to(getattr(self, self._total).device))

    def _store(self, scores: Tensor, relevance: Tensor, mask: Tensor | None, indexes: Tensor) -> None:
        check_tensor("scores", scores)
        check_relevance_dtype("relevance", relevance)
        check_ids("indexes", indexes)
        check_same_shape("scores", scores, "relevance", relevance)
        check_same_shape("scores", scores, "indexes", indexes)
        check_mask(mask, scores.shape)
        if mask is not None:
            scores, relevance, indexes = scores[mask], relevance[mask], indexes[mask]
        scores = as_float_scores("scores", scores)
        if scores.numel() == 0:
            warnings.warn(
                f"{type(self).__name__}.update got a flat batch without items: nothing was added",
                UserWarning, stacklevel=3,
            )
            return
        if self.validate:  # here, where the bad batch is known (exp2 overflow needs whole queries: compute())
            check_score_values("scores", scores, None, unretrieved=self._options["allow_unretrieved"])
            check_relevance_values("relevance", relevance, None)
        # float64 scores rank exactly as the caller's float32, float64 or integer scores do.
        self.flat_scores.append(scores.reshape(-1).to(torch.float64))
        self.flat_relevance.append(relevance.reshape(-1).to(self.dtype))
        self.flat_indexes.append(indexes.reshape(-1).long())

    # The waiting rows are copies of batches as given, of any width and dtype, with or without a
    # mask: torchmetrics' own state operations would treat them as plain data (join rows of two
    # metrics, convert them at set_dtype), so every operation that hands the states to
    # torchmetrics evaluates them first. Then it sees per-query results only: merge_state (its
    # own and the incoming metric's metric_state), set_dtype, to and _apply, state_dict,
    # pickle and deepcopy, forward and sync (through _copy_state_dict). reset drops them.

    @property
    def metric_state(self) -> dict[str, list[Tensor] | Tensor]:
        self._evaluate_pending()
        return super().metric_state

    def _copy_state_dict(self) -> dict[str, list[Tensor] | Tensor]:
        self._evaluate_pending()
        return super()._copy_state_dict()

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self._evaluate_pending()
        return super().state_dict(*args, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        self._evaluate_pending()
        return super().__getstate__()

    def _apply(self, fn: Callable[[Tensor], Tensor], exclude_state: Sequence[str] = "") -> torch.nn.Module:
        self._evaluate_pending()
        return super()._apply(fn, exclude_state)

    def _reduce_states(self, incoming_state: dict[str, Any]) -> None:
        self._evaluate_pending()
        # A state dict saved with waiting rows: each part is one kept batch of rows, as given.
        rows = [list(incoming_state.get(name, [])) for name in _WAITING]
        if rows[2] and len(rows[2]) != len(rows[0]):
            raise ValueError("the incoming state's pending_mask must hold a mask for every part of pending_scores")
        super()._reduce_states({**incoming_state, **{name: [] for name in _WAITING}})
        for scores, relevance, mask in zip(rows[0], rows[1], rows[2] or [None] * len(rows[0])):
            self._evaluate_rows(scores, relevance, mask)

    def _sync_dist(self, *args: Any, **kwargs: Any) -> None:
        self._evaluate_pending()  # (done already by sync's _copy_state_dict; each rank evaluates its own)
        # Each rank evaluates its own flat rows: an id on several ranks is then one repeated query.
        exact_ddp.fold_rows(self, self._row_values, ("flat_scores", "flat_relevance", "flat_indexes"))
        # torchmetrics stands in a tensor of the metric's dtype for a rank's empty list state; the
        # gathered scores must be float64 and the ids int64 on every rank. (The sync is undone
        # after compute, so is this.)
        if isinstance(self.flat_indexes, list) and not self.flat_indexes:
            self.flat_scores = [torch.empty(0, dtype=torch.float64, device=self.device)]
            self.flat_indexes = [torch.empty(0, dtype=torch.long, device=self.device)]
        super()._sync_dist(*args, **kwargs)

    def _row_values(self) -> tuple[Tensor, Tensor, Tensor] | None:
        """Per-query values ``[Q, C]`` of the kept flat rows, their ids (ascending) and contents
        (:func:`exact_ddp.contents`), or None."""
        if not _rows(self.flat_indexes):
            return None
        rows = (self.flat_scores, self.flat_relevance, self.flat_indexes)
        scores, relevance, indexes = (dim_zero_cat(state) for state in rows)
        values = self._function(
            scores, relevance, self.cutoffs, indexes=indexes, reduction="none", validate=self.validate,
            **self._options,
        )
        ids, query = torch.unique(indexes, return_inverse=True)
        return values.reshape(values.shape[0], -1), ids, exact_ddp.contents(relevance, query, ids.shape[0])

    def compute(self) -> Result:
        """The metric over every query added since the last ``reset()``: a scalar tensor for one
        ``k``, or a dict with one entry per cutoff for a sequence ``k`` (``{"ndcg@1": …, "ndcg@10":
        …}``; ``k=(10,)`` gives ``{"ndcg@10": …}``). Rows still waiting are evaluated first; under DDP
        the ranks' states are combined first. For keys that differ per stage (train, validation),
        put the metric in ``torchmetrics.MetricCollection([...], prefix="val/")``: its ``compute()``
        returns ``{"val/ndcg@1": …}``, for ``self.log_dict``."""
        self._evaluate_pending()
        return self._result(exact_ddp.distinct(self, self._row_values()))

    def per_query(self) -> tuple[Tensor, Tensor]:
        """``(ids, values)``: every query seen with an id (flat ``indexes=`` or ``query_ids=``), ids
        ascending, and its value (``[Q]``; ``[Q, C]`` for several cutoffs; float64): the input of a
        paired comparison, :func:`torch_ndcg.stats.compare`, which pairs systems by these ids.
        Rows updated without ids have no id to pair by, so they are not here."""
        self._evaluate_pending()
        rows = self._row_values()
        values = exact_ddp.distinct(self, rows)
        if values is None:
            raise ValueError(f"{type(self).__name__}.per_query() needs queries with ids: update with indexes= "
                             "(flat items) or query_ids= (dense rows)")
        ids = exact_ddp.kept(self)[1] + ([] if rows is None else [rows[1]])
        ids = torch.unique(torch.cat([part.reshape(-1).long() for part in ids]).to(values.device))
        return ids, (values if self._many else values[:, 0])


def _drop_empty_rows(
    scores: Tensor,
    relevance: Tensor,
    mask: Tensor,
    weights: Tensor | None,
    sample_weight: Tensor | None,
    query_ids: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """The rows of a dense batch that keep an item, as ``[R, N]`` (all of them, untouched, when
    every row keeps one or when a shape is wrong: the metric function names that)."""
    check_tensor("scores", scores)
    rows = mask.any(-1)
    shapes_match = scores.shape == mask.shape and (weights is None or getattr(weights, "shape", None) == mask.shape)
    for per_row in (sample_weight, query_ids):
        shapes_match = shapes_match and (per_row is None or getattr(per_row, "shape", None) == rows.shape)
    if not shapes_match or bool(rows.all()):
        return scores, relevance, mask, weights, sample_weight, query_ids
    pick = lambda t: None if t is None else t[rows]  # noqa: E731
    return scores[rows], relevance[rows], mask[rows], pick(weights), pick(sample_weight), pick(query_ids)


class _RankedMetric(_Accumulated):
    """Recommended lists ``ranked_ids [B, K]`` against ``target_ids [B, M]`` (constant state)."""

    _function: Callable[..., Tensor]

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        pad_id: int = -1,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        threshold: float | None = None,
        ap_normaliser: ApNormaliser = DEFAULT_AP_NORMALISER,
        adaptive_k: bool = False,
        empty: Empty = DEFAULT_EMPTY,
        short_list: ShortList = DEFAULT_SHORT_LIST,
        validate: bool = True,
        aggregation: Aggregation = DEFAULT_AGGREGATION,
        **kwargs: Unpack[MetricKwargs],
    ) -> None:
        """Options as in :func:`torch_ndcg.ranked.ndcg`, and ``aggregation`` as in the scored
        classes; :class:`torchmetrics.Metric`'s own keyword arguments pass on to it."""
        definition = _definition(
            type(self), type(self)._function, dict(gain=gain, discount=discount, threshold=threshold,
            ap_normaliser=ap_normaliser, adaptive_k=adaptive_k, empty=empty, short_list=short_list),
        )  # fmt: skip
        definition["pad_id"] = check_pad_id(pad_id)
        super().__init__(type(self)._function, k, definition, check_flag("validate", validate), aggregation, **kwargs)

    def update(
        self,
        ranked_ids: Tensor,
        target_ids: Tensor,
        target_relevance: Tensor | None = None,
        *,
        weights: Tensor | None = None,
        sample_weight: Tensor | None = None,
    ) -> None:
        """Add a batch of recommended lists (best first) and their ground truth; ``pad_id`` pads both.
        ``weights`` (of ``target_ids``' shape) and ``sample_weight`` (one per list) as in
        :func:`torch_ndcg.ranked.ndcg`."""
        with torch.inference_mode():  # as in the dense form: only the states keep anything
            weighted = {} if weights is None else {"weights": weights}  # (a metric without weights refuses them)
            values = self._function(
                ranked_ids, target_ids, target_relevance, self.cutoffs, reduction="none",
                validate=self.validate, **weighted, **self._options,
            )
            self._accumulate(values, sample_weight)

    def compute(self) -> Result:
        """The metric over every list added since the last ``reset()``: a scalar tensor for one ``k``,
        or a dict with one entry per cutoff for a sequence ``k`` (see :meth:`NDCG.compute`)."""
        return self._result()


class NDCG(_ScoredMetric):
    """Mean NDCG@k over every query seen; options as in :func:`torch_ndcg.ndcg`.

    Example:
        >>> import torch
        >>> import torch_ndcg as tn
        >>> metric = tn.metrics.NDCG(k=(1, 3))
        >>> metric.update(torch.tensor([[0.9, 0.8, 0.1]]), torch.tensor([[0, 1, 1]]))
        >>> metric.update(torch.tensor([[0.2, 0.7, 0.1]]), torch.tensor([[0, 2, 0]]))
        >>> {key: round(value.item(), 4) for key, value in metric.compute().items()}
        {'ndcg@1': 0.5, 'ndcg@3': 0.8467}
    """

    _function = functional.ndcg


class DCG(_ScoredMetric):
    """Mean DCG@k over every query seen; options as in :func:`torch_ndcg.dcg`."""

    _function = functional.dcg
    plot_upper_bound = None


class MRR(_ScoredMetric):
    """Mean reciprocal rank of the first relevant item within the top k; see :func:`torch_ndcg.mrr`."""

    _function = functional.mrr


class Precision(_ScoredMetric):
    """Mean precision@k; see :func:`torch_ndcg.precision`."""

    _function = functional.precision


class Recall(_ScoredMetric):
    """Mean recall@k; see :func:`torch_ndcg.recall`."""

    _function = functional.recall


class HitRate(_ScoredMetric):
    """Fraction of queries with a relevant item in the top k; see :func:`torch_ndcg.hit_rate`."""

    _function = functional.hit_rate


class AveragePrecision(_ScoredMetric):
    """Mean average precision at k (MAP@k); see :func:`torch_ndcg.average_precision`."""

    _function = functional.average_precision


class RankedNDCG(_RankedMetric):
    """Mean NDCG@k of recommended lists; see :func:`torch_ndcg.ranked.ndcg`.

    Example:
        >>> import torch
        >>> import torch_ndcg as tn
        >>> metric = tn.metrics.RankedNDCG(k=5)
        >>> metric.update(torch.tensor([[6, 3, 8, 4, 5]]), torch.tensor([[3, 4]]))
        >>> round(metric.compute().item(), 4)
        0.6509
    """

    _function = ranked.ndcg


class RankedDCG(_RankedMetric):
    """Mean DCG@k of recommended lists; see :func:`torch_ndcg.ranked.dcg`."""

    _function = ranked.dcg
    plot_upper_bound = None


class RankedMRR(_RankedMetric):
    """Mean reciprocal rank of recommended lists; see :func:`torch_ndcg.ranked.mrr`."""

    _function = ranked.mrr


class RankedPrecision(_RankedMetric):
    """Mean precision@k of recommended lists; see :func:`torch_ndcg.ranked.precision`."""

    _function = ranked.precision


class RankedRecall(_RankedMetric):
    """Mean recall@k of recommended lists; see :func:`torch_ndcg.ranked.recall`."""

    _function = ranked.recall


class RankedHitRate(_RankedMetric):
    """Hit rate@k of recommended lists; see :func:`torch_ndcg.ranked.hit_rate`."""

    _function = ranked.hit_rate


class RankedAveragePrecision(_RankedMetric):
    """MAP@k of recommended lists; see :func:`torch_ndcg.ranked.average_precision`."""

    _function = ranked.average_precision


class OrderedPairAccuracy(_Accumulated):
    """Mean ordered-pair accuracy (rax's ``opa_metric``) over every query seen; see
    :func:`torch_ndcg.ordered_pair_accuracy`. It has no cutoff; dense ``[..., N]`` batches, one
    query per row (a pair never spans two batches).

    Example:
        >>> import torch
        >>> import torch_ndcg as tn
        >>> metric = tn.metrics.OrderedPairAccuracy()
        >>> metric.update(torch.tensor([[0.9, 0.8, 0.1]]), torch.tensor([[0, 1, 2]]))
        >>> metric.update(torch.tensor([[0.1, 0.7]]), torch.tensor([[0, 2]]))
        >>> round(metric.compute().item(), 4)
        0.5
    """

    def __init__(
        self,
        *,
        ties: Ties = DEFAULT_PAIR_TIES,
        empty: Empty = DEFAULT_EMPTY,
        validate: bool = True,
        aggregation: Aggregation = DEFAULT_AGGREGATION,
        **kwargs: Unpack[MetricKwargs],
    ) -> None:
        """Options as in :func:`torch_ndcg.ordered_pair_accuracy`; ``kwargs`` go to :class:`torchmetrics.Metric`."""
        check_option("ties", ties, TIES)
        check_option("empty", empty, EMPTY)
        super().__init__(ordered_pair_accuracy, None, dict(ties=ties, empty=empty), validate, aggregation, **kwargs)

    def update(
        self, scores: Tensor, relevance: Tensor, *, mask: Tensor | None = None, sample_weight: Tensor | None = None
    ) -> None:
        """Add a dense batch ``[..., N]`` (one query per row); ``sample_weight`` ``[...]`` weighs the mean."""
        with torch.inference_mode():  # only the states keep anything
            values = self._function(
                scores, relevance, mask=mask, reduction="none", validate=self.validate, **self._options
            )
            self._accumulate(values.unsqueeze(-1), sample_weight)

    def compute(self) -> Result:
        """The mean ordered-pair accuracy over every query added since the last ``reset()``, a scalar tensor."""
        return self._result()
