"""Each loss's options as one frozen object that checks itself, shared by the loss function and
its ``torch.nn.Module``.

A loss function builds its options object first thing (so a bad value fails before any work),
and the module builds the same object at construction (so it fails there, not at the first
training step); the module's ``forward`` then passes the object's fields to the function. The
choices and defaults come from :mod:`torch_ndcg.options`; the defaults of the numeric
hyper-parameters are the named constants below.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

import torch

from .. import definitions as d
from ..options import (
    AP_NORMALISERS,
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    EMPTY,
    IMPLS,
    LISTMLE_WEIGHTINGS,
    LOSS_EMPTY,
    MARGIN_PAIRS,
    NEURAL_IMPLS,
    PAIR_IMPLS,
    REDUCTIONS,
    WEIGHTINGS,
)
from ..validation import check_flag, check_option, check_positive, check_threshold

DEFAULT_TEMPERATURE = 1.0
# The temperature of the NeuralSort top-rows loss: "auto" scales τ with each list's length and
# score spread (see :func:`torch_ndcg.neuralsort_ndcg`); a number is τ itself.
Temperature = float | Literal["auto"]
DEFAULT_SCALED_TEMPERATURE: Literal["auto"] = "auto"
DEFAULT_SINKHORN_ITERS = 50
DEFAULT_SAMPLES = 32
DEFAULT_BETA = 0.1
DEFAULT_SIGMA = 1.0
DEFAULT_MARGIN = 1.0
DEFAULT_MU = 10.0
DEFAULT_DISTILL_TEMPERATURE = 1.0


def single_cutoff(k: d.Cutoff) -> int | None:
    """A loss optimises one NDCG@k: a sequence of cutoffs is refused rather than silently summed."""
    cutoffs, many = d.resolve_cutoffs(k)
    if many:
        raise ValueError(
            f"k must be a single int ≥ 1 or None for a loss, got the sequence {k!r}; "
            "sum several losses explicitly if you want to optimise several cutoffs"
        )
    return cutoffs[0]


def _generator(value: object) -> None:
    if value is not None and not isinstance(value, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(value).__name__}")


def _mu(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise ValueError(f"mu must be a finite number ≥ 0, got {value!r}")


def _temperature(value: object) -> None:
    if isinstance(value, str) and value == "auto":
        return
    # Comparisons, as check_positive's: a symbolic float under torch.compile(dynamic=True).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f'temperature must be a finite number > 0 or "auto", got {value!r}')


def _persistence(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"persistence must be a number in [0, 1), got {value!r}")


def _relaxation(value: object) -> None:
    from .relaxations.choices import resolve_relaxation  # (the relaxations import these options)

    resolve_relaxation(value)


def _weighting(value: object, choices: tuple[str, ...], module: str) -> None:
    if not callable(value) or isinstance(value, type):
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"weighting must be one of {choices} or a function of torch_ndcg.{module}'s signature, got {value!r}")


def _tol(value: object) -> None:
    if value is not None:
        check_positive("tol", value)


# One check per option name, whichever loss has it; ``empty`` and ``impl`` take their choices
# from the loss (the standard losses have ``empty="keep"``, only NeuralNDCG has ``impl="kernel"``).
_CHECKS: dict[str, Callable[[Any], object]] = {
    "k": single_cutoff,
    "gain": d.resolve_gain,
    "discount": d.resolve_discount,
    "reduction": lambda value: check_option("reduction", value, REDUCTIONS),
    "validate": lambda value: check_flag("validate", value),
    "temperature": lambda value: check_positive("temperature", value),
    "sinkhorn_iters": lambda value: check_positive("sinkhorn_iters", value, integer=True),
    "samples": lambda value: check_positive("samples", value, integer=True),
    "beta": lambda value: check_positive("beta", value),
    "sigma": lambda value: check_positive("sigma", value),
    "margin": lambda value: check_positive("margin", value),
    "mu": _mu,
    "tol": _tol,
    "transposed": lambda value: check_flag("transposed", value),
    "stochastic": lambda value: check_flag("stochastic", value),
    "log_scores": lambda value: check_flag("log_scores", value),
    "generator": _generator,
    "pairs": lambda value: check_option("pairs", value, MARGIN_PAIRS),
    "position_aware": lambda value: check_flag("position_aware", value),
    "threshold": check_threshold,
    "adaptive_k": lambda value: check_flag("adaptive_k", value),
    "ap_normaliser": lambda value: check_option("ap_normaliser", value, AP_NORMALISERS),
    "persistence": _persistence,
    "relaxation": lambda value: _relaxation(value),
}


@dataclass(frozen=True)
class LossOptions:
    """What every loss takes besides its tensors; a subclass adds its own options as fields."""

    empty_choices: ClassVar[tuple[str, ...]] = LOSS_EMPTY
    impl_choices: ClassVar[tuple[str, ...]] = PAIR_IMPLS
    may_be_none: ClassVar[frozenset[str]] = frozenset()  # options for which None is a choice
    auto_temperature: ClassVar[bool] = False  # whether temperature="auto" is a choice
    # weighting's names and the module whose functions it takes (ListMLE's are position weights)
    weighting_choices: ClassVar[tuple[tuple[str, ...], str]] = (WEIGHTINGS, "pair_weights")

    empty: str
    reduction: str
    validate: bool

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None and field.name in self.may_be_none:
                continue
            if field.name == "temperature" and self.auto_temperature:
                _temperature(value)
            elif field.name == "empty":
                check_option("empty", value, self.empty_choices)
            elif field.name == "impl":
                check_option("impl", value, self.impl_choices)
            elif field.name == "weighting":
                _weighting(value, *self.weighting_choices)
            else:
                _CHECKS[field.name](value)

    def arguments(self) -> dict[str, Any]:
        """The options as keyword arguments of the loss function (a shallow copy: a generator
        stays the caller's own object)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True)
class ApproxNDCGOptions(LossOptions):
    empty_choices: ClassVar[tuple[str, ...]] = EMPTY
    impl_choices: ClassVar[tuple[str, ...]] = IMPLS

    k: d.Cutoff
    gain: d.Gain
    discount: d.Discount
    temperature: float
    impl: str


@dataclass(frozen=True)
class NeuralSortNDCGOptions(LossOptions):
    empty_choices: ClassVar[tuple[str, ...]] = EMPTY
    auto_temperature: ClassVar[bool] = True

    k: d.Cutoff
    gain: d.Gain
    discount: d.Discount
    temperature: Temperature


@dataclass(frozen=True)
class NeuralNDCGOptions(ApproxNDCGOptions):
    impl_choices: ClassVar[tuple[str, ...]] = NEURAL_IMPLS

    sinkhorn_iters: int
    transposed: bool
    stochastic: bool
    samples: int
    beta: float
    log_scores: bool
    generator: torch.Generator | None
    tol: float | None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.log_scores and not self.stochastic:
            raise ValueError("log_scores=True changes only the stochastic variant: pass stochastic=True too")


@dataclass(frozen=True)
class GainLossOptions(LossOptions):
    """ListNet and softmax cross-entropy: a target built from the labels' gains."""

    gain: d.Gain


@dataclass(frozen=True)
class ListMLEOptions(LossOptions):
    weighting_choices: ClassVar[tuple[tuple[str, ...], str]] = (LISTMLE_WEIGHTINGS, "position_weights")

    generator: torch.Generator | None
    weighting: Any


@dataclass(frozen=True)
class PairWeightOptions(LossOptions):
    """The pairwise losses' weights, and the metric they read (its cutoff, gain and discount)."""

    weighting: Any
    k: d.Cutoff
    gain: d.Gain
    discount: d.Discount

    def __post_init__(self) -> None:
        super().__post_init__()
        given = [name for name, default in (("k", None), ("gain", DEFAULT_GAIN), ("discount", DEFAULT_DISCOUNT))
                 if getattr(self, name) != default]  # fmt: skip
        if given and isinstance(self.weighting, str) and self.weighting == "none":
            # A cutoff here never cuts the pairs: ignoring it would silently train on every pair.
            raise ValueError(
                f"{', '.join(given)} define the NDCG@k that pair weights read, and weighting='none' reads none: "
                "pass a weighting (e.g. weighting='lambdarank'), or leave them out"
            )


@dataclass(frozen=True)
class RankNetOptions(PairWeightOptions):
    sigma: float
    impl: str


@dataclass(frozen=True)
class PairwiseHingeOptions(PairWeightOptions):
    margin: float
    impl: str


@dataclass(frozen=True)
class LambdaLossOptions(LossOptions):
    k: d.Cutoff
    gain: d.Gain
    discount: d.Discount
    weighting: str
    sigma: float
    mu: float
    impl: str


@dataclass(frozen=True)
class TemperatureLossOptions(LossOptions):
    """The distillation losses with a temperature: ListNet's and RankNet's."""

    temperature: float


@dataclass(frozen=True)
class DistillListMLEOptions(LossOptions):
    position_aware: bool


@dataclass(frozen=True)
class MarginMSEOptions(LossOptions):
    pairs: str


@dataclass(frozen=True)
class AdrMSEOptions(LossOptions):
    may_be_none: ClassVar[frozenset[str]] = frozenset({"discount"})  # None: unweighted

    temperature: float
    discount: d.Discount | None
    impl: str


@dataclass(frozen=True)
class TwinOptions(LossOptions):
    """A metric's smooth twin (:mod:`torch_ndcg.losses.twins`): the metric's own options, each
    twin passing those its metric has (the defaults for the others), and the relaxation."""

    empty_choices: ClassVar[tuple[str, ...]] = EMPTY
    may_be_none: ClassVar[frozenset[str]] = frozenset({"threshold"})

    k: d.Cutoff
    relaxation: Any
    gain: d.Gain
    discount: d.Discount
    threshold: float | None
    adaptive_k: bool
    ap_normaliser: str
    persistence: float
