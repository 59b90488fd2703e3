"""Input validation shared by every metric and loss: one place decides what bad input is.

Shape, dtype and option checks never touch tensor values, so they cost no device
synchronisation. Value checks (NaN scores, negative labels, …) read tensor values and
therefore synchronise; callers run them only when ``validate=True``.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

import torch
from torch import Tensor

from . import options

P = ParamSpec("P")
R = TypeVar("R")

# Other libraries' names for the first two arguments (torchmetrics: preds, target).
_FOREIGN_NAMES = ("preds", "target", "input", "targets", "labels", "y_pred", "y_true")


def names_arguments(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` unchanged, except that a call with another library's name for its first two
    arguments (torchmetrics' ``preds=``/``target=``) is a ``TypeError`` that says which names
    ``function`` takes instead, rather than Python's bare "unexpected keyword argument"."""
    accepted = inspect.signature(function).parameters
    first, second = list(accepted)[:2]
    foreign = frozenset(_FOREIGN_NAMES) - set(accepted)
    name = function.__name__

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs and not foreign.isdisjoint(kwargs):
            given = next(key for key in kwargs if key in foreign)
            raise TypeError(
                f"{name}() got an unexpected keyword argument {given!r}: {name} takes {first} and {second} "
                f"(torchmetrics' preds and target), e.g. {name}({first}, {second}, k=10)"
            )
        return function(*args, **kwargs)

    return options.readable_signature(call)


def check_option(name: str, value: object, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError naming ``name``."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_broadcasts(name: str, value: object, shape: tuple[int, ...], what: str) -> Tensor:
    """``value``, what a user's function passed as ``name`` returned, if it is a tensor that
    broadcasts to ``shape`` (``what`` names that shape's items); else a ValueError."""
    try:
        fits = isinstance(value, Tensor) and torch.broadcast_shapes(value.shape, shape) == torch.Size(shape)
    except RuntimeError:
        fits = False
    if not fits:
        got = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
        raise ValueError(f"{name} must return a tensor that broadcasts to the {what} {tuple(shape)}, got {got}")
    return value


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_tensor(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    return value


def check_positive(name: str, value: object, *, integer: bool = False) -> None:
    """Refuse non-positive or infinite (or, with ``integer``, non-int) hyper-parameters such as τ:
    an infinite τ, σ or margin scales every score to 0 or to ±inf, and NaN compares as nothing."""
    if integer:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int ≥ 1, got {value!r}")
    # Comparisons rather than math.isfinite: under torch.compile(dynamic=True) a float option is
    # symbolic, which comparisons accept and math.isfinite does not.
    elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def as_float_scores(name: str, scores: Tensor) -> Tensor:
    """Scores as a floating tensor that ranks exactly like the input.

    Integer and bool scores are converted to float64, which is exact for magnitudes below
    2**53; half precision scores are widened to float32 (exact), so ties are preserved.
    """
    check_tensor(name, scores)
    if scores.is_complex():
        raise TypeError(f"{name} must be real-valued, got {scores.dtype}")
    if not scores.is_floating_point():
        return scores.to(torch.float64)
    if scores.dtype in (torch.float16, torch.bfloat16):
        return scores.float()
    return scores


def check_relevance_dtype(name: str, relevance: Tensor) -> None:
    if hasattr(relevance, "propensities"):  # a click target: its losses are torch_ndcg.clicks'
        raise TypeError(
            f"{name} must be a label tensor, got {type(relevance).__name__}: clicks with propensities go to the "
            "unbiased losses and metrics of torch_ndcg.clicks (ips_softmax_loss, ips_neural_ndcg_loss, ...)"
        )
    check_tensor(name, relevance)
    if relevance.is_complex():
        raise TypeError(f"{name} must be bool, integer or real floating point, got {relevance.dtype}")


def check_pad_id(pad_id: object) -> int:
    """The id that pads ranked lists and their ground truth: an int (``True`` is refused)."""
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int, got {pad_id!r}")
    return pad_id


def check_ids(name: str, ids: Tensor) -> None:
    check_tensor(name, ids)
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor of item ids, got {ids.dtype}")


def check_mask(mask: Tensor | None, shape: torch.Size, name: str = "mask") -> None:
    if mask is None:
        return
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor (True = a real item), got {mask.dtype}")
    if mask.shape != shape:
        raise ValueError(f"{name} must have the scores' shape {tuple(shape)}, got {tuple(mask.shape)}")


def check_same_device(first_name: str, first: Tensor, second_name: str, second: Tensor | None) -> None:
    """Tensors that are combined must live on one device (``second=None`` passes)."""
    if second is not None and second.device != first.device:
        raise ValueError(
            f"{first_name} and {second_name} must be on the same device, got {first.device} and {second.device}"
        )


def check_same_shape(
    first_name: str, first: Tensor, second_name: str, second: Tensor, *, min_dim: int = 1
) -> None:
    if first.shape != second.shape:
        raise ValueError(
            f"{first_name} and {second_name} must have the same shape, "
            f"got {tuple(first.shape)} and {tuple(second.shape)}"
        )
    if first.dim() < min_dim:
        raise ValueError(f"{first_name} must have at least {min_dim} dimension(s) [..., N], got a scalar")


def check_list_length(name: str, tensor: Tensor) -> None:
    if tensor.shape[-1] == 0:
        raise ValueError(f"{name} has lists of length 0 (last dimension N = 0): the metric is undefined")


def unmasked(values: Tensor, mask: Tensor | None) -> Tensor:
    """``values`` with 0 at masked items (``where``, not a product: those may hold NaN or inf)."""
    if mask is None:
        return values
    return torch.where(mask, values, torch.zeros((), dtype=values.dtype, device=values.device))


def check_score_values(name: str, scores: Tensor, mask: Tensor | None, *, unretrieved: bool = False) -> None:
    """NaN or infinite unmasked scores cannot be ranked consistently (synchronises); with
    ``unretrieved``, ``-inf`` marks an item that was not retrieved and is allowed."""
    values = unmasked(scores, mask)
    if unretrieved:
        values = values.masked_fill(values == -math.inf, 0.0)
    # One reduction decides the common case: a sum is finite whenever every term is, unless
    # large finite terms overflow, in which case the exact test below clears them.
    if math.isfinite(values.sum().item()) or bool(torch.isfinite(values).all()):
        return
    if unretrieved:
        raise ValueError(f"{name} contains NaN or +inf values at unmasked positions (-inf marks an unretrieved item)")
    raise ValueError(
        f"{name} contains NaN or infinite values at unmasked positions; "
        "pass mask=... (False = padding) to exclude items instead of -inf scores, or "
        "allow_unretrieved=True if -inf marks items that were not retrieved"
    )


def check_relevance_values(name: str, relevance: Tensor, mask: Tensor | None) -> tuple[float, float] | None:
    """Gains are undefined for negative, infinite or NaN labels unless those items are masked
    (synchronises). Returns the smallest and largest float label read (masked items read as 0),
    for :func:`warn_if_swapped`; ``None`` for other labels."""
    if relevance.dtype == torch.bool or relevance.numel() == 0:
        return None
    values = unmasked(relevance, mask)
    label_range = None
    if relevance.is_floating_point():
        # aminmax propagates NaN, so one reduction catches every bad float label.
        label_range = smallest, largest = tuple(bound.item() for bound in values.aminmax())
        valid = smallest >= 0 and math.isfinite(largest)
    else:
        valid = values.min().item() >= 0
    if not valid:
        raise ValueError(
            f"{name} contains negative, infinite or NaN labels at unmasked positions; gains are only "
            "defined for finite labels ≥ 0: mark such items False in mask=... (e.g. mask=relevance >= 0); "
            "if these are a teacher's real-valued scores, use a distillation loss (e.g. tn.distill_listnet_loss)"
        )
    return label_range


def check_gain_values(gains: Tensor, mask: Tensor | None) -> None:
    """A gain callable must give finite gains ≥ 0 for every real label (synchronises).

    An overflowing or negative gain would make a query's value NaN (and the mean skip it
    silently) or let a loss return a finite value with a NaN gradient.
    """
    values = unmasked(gains, mask)
    smallest, largest = values.aminmax() if values.numel() else (values.new_zeros(()), values.new_zeros(()))
    if not (smallest.item() >= 0 and math.isfinite(largest.item())):
        raise ValueError(
            "gain returned NaN, infinite or negative values for real labels; a gain callable must "
            "give finite gains ≥ 0 (for large labels use float64 relevance, or a bounded gain)"
        )


def check_threshold(threshold: object) -> float | None:
    """A relevance threshold is ``None`` or a finite number > 0 (at 0, every item and the padding
    would count as relevant)."""
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number > 0 or None, got {threshold!r}")
    if threshold <= 0:
        raise ValueError(f"threshold must be > 0 (labels are ≥ 0, so every item would be relevant), got {threshold!r}")
    return float(threshold)


def check_weights(name: str, weights: object, shape: torch.Size, mask: Tensor | None, validate: bool) -> None:
    """Weights are a real tensor of ``shape``; with ``validate``, finite and ≥ 0 where not masked
    (synchronises)."""
    check_tensor(name, weights)
    if weights.is_complex() or weights.dtype == torch.bool:
        raise TypeError(f"{name} must be a real (integer or floating point) tensor, got {weights.dtype}")
    if weights.shape != shape:
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(weights.shape)}")
    if validate and weights.numel():
        smallest, largest = unmasked(weights, mask).double().aminmax()
        if not (smallest.item() >= 0 and math.isfinite(largest.item())):
            raise ValueError(f"{name} must be finite and ≥ 0, got negative, infinite or NaN values")


def check_weighted_gains(gains: Tensor, mask: Tensor | None) -> None:
    """Weighted gains must keep every list's DCG finite (synchronises): a huge weight would
    otherwise turn a query's value into NaN, which the mean would skip silently."""
    if not bool(torch.isfinite(unmasked(gains, mask).sum(-1)).all()):
        raise ValueError(
            "weights times the gains overflow a list's DCG; use smaller weights or float64 inputs"
        )


#: The largest score that still "looks like a label" in :func:`warn_if_swapped`: the graded
#: scales of the LETOR data sets (0..4). Scores made from ranks (5 - rank, 10 - rank) stay above it.
_LABEL_LIKE_SCORE = 4


def warn_if_swapped(
    scores: Tensor, relevance: Tensor, mask: Tensor | None, *, label_range: tuple[float, float] | None = None
) -> None:
    """Warn when ``relevance`` looks like probabilities (floats in [0, 1], some strictly between)
    and ``scores`` like small integer labels (whole numbers in 0..4, at least two of them
    different): most likely the two arguments were swapped, which gives a plausible value and
    no error. A warning, not an error (soft labels and integer scores are legal); run with
    ``validate=True`` only (it reads values), shown once per calling line. ``label_range``: the
    smallest and largest label without a mask, where the caller read them already."""
    if torch.compiler.is_compiling() or not relevance.is_floating_point() or relevance.numel() < 2:
        return
    if mask is not None:
        scores, relevance = scores[mask], relevance[mask]
    if relevance.numel() < 2:
        return
    if mask is not None or label_range is None:
        label_range = tuple(bound.item() for bound in relevance.aminmax())  # (Python's comparisons cost no kernel)
    low, high = label_range
    if not (low >= 0 and high <= 1 and bool(((relevance > 0) & (relevance < 1)).any())):
        return
    scores = scores[torch.isfinite(scores)]
    if scores.numel() < 2:
        return
    low, high = scores.aminmax()
    if bool(low >= 0) and bool(high <= _LABEL_LIKE_SCORE) and bool(high > low) and bool((scores == scores.round()).all()):
        warnings.warn(
            "relevance looks like probabilities (values in [0, 1]) and scores like small integer labels: "
            "are they swapped? The order is (scores, relevance): the model's outputs first, then the labels",
            UserWarning, stacklevel=caller_stacklevel(),
        )


def caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside torch_ndcg (and torchmetrics' wrappers)
    for a ``warnings.warn`` made in the function that calls this one."""
    frame, level = sys._getframe(2), 2  # (the frame of stacklevel 2: whoever called that function)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in ("torch_ndcg", "torchmetrics"):
        frame, level = frame.f_back, level + 1
    return level


__getattr__ = options.moved(
    __name__, {name: (f"torch_ndcg.options.{name}", lambda name=name: getattr(options, name)) for name in ("TIES", "EMPTY", "REDUCTIONS")}
)
