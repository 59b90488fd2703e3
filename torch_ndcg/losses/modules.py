"""``torch.nn.Module`` forms of the losses, for code that wants ``criterion(scores, relevance)``.

Each module takes its loss function's options as explicit keyword arguments and builds the
loss's options object (:mod:`.options`) at construction, so a bad value fails there, not at the
first training step; ``forward(scores, relevance, *, mask=None)`` calls the function with them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
import torch
from torch import Tensor

from .. import definitions as d
from ..options import (
    DEFAULT_AP_NORMALISER,
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    DEFAULT_IMPL,
    DEFAULT_LOSS_EMPTY,
    DEFAULT_REDUCTION,
    DEFAULT_LISTMLE_WEIGHTING,
    DEFAULT_MARGIN_PAIRS,
    DEFAULT_PAIR_WEIGHTING,
    DEFAULT_WEIGHTING,
    ApNormaliser,
    Empty,
    Impl,
    ListMLEWeighting,
    LossEmpty,
    MarginPairs,
    NeuralImpl,
    PairImpl,
    PairWeighting,
    Reduction,
    Weighting,
    readable_signature,
)
from .approx import approx_ndcg_loss
from .distill import adr_mse_loss, distill_listmle_loss, distill_listnet_loss, distill_ranknet_loss, margin_mse_loss
from .lambdaloss import lambda_loss
from .listwise import listmle_loss, listnet_loss, softmax_loss
from .neural import neural_ndcg_loss
from .neuralsort import neuralsort_ndcg_loss
from .options import (
    DEFAULT_BETA,
    DEFAULT_DISTILL_TEMPERATURE,
    DEFAULT_MARGIN,
    DEFAULT_MU,
    DEFAULT_SAMPLES,
    DEFAULT_SCALED_TEMPERATURE,
    DEFAULT_SIGMA,
    DEFAULT_SINKHORN_ITERS,
    DEFAULT_TEMPERATURE,
    AdrMSEOptions,
    ApproxNDCGOptions,
    DistillListMLEOptions,
    GainLossOptions,
    LambdaLossOptions,
    ListMLEOptions,
    LossOptions,
    MarginMSEOptions,
    NeuralNDCGOptions,
    NeuralSortNDCGOptions,
    PairwiseHingeOptions,
    RankNetOptions,
    Temperature,
    TemperatureLossOptions,
)
from .pairwise import pairwise_hinge_loss, ranknet_loss
from .relaxations.choices import DEFAULT_RELAXATION, Relaxation, RelaxationName
from .twins import (
    DEFAULT_PERSISTENCE,
    average_precision_loss,
    dcg_loss,
    hit_rate_loss,
    mrr_loss,
    ndcg_loss,
    precision_loss,
    rbp_loss,
    recall_loss,
    twin_options,
)


class _RankingLoss(torch.nn.Module):
    """A loss function and its checked options."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            readable_signature(cls)  # help() shows the option types, not the source's aliases

    def __init__(self, loss: Callable[..., Tensor], options: LossOptions) -> None:
        super().__init__()
        self._loss = loss
        self.options = options
        # The options the function takes: one options object may serve several functions (the
        # twins share theirs, each with the defaults of the options its metric has not).
        takes = inspect.signature(loss).parameters
        self._arguments = {name: value for name, value in options.arguments().items() if name in takes}

    @property
    def k(self) -> d.Cutoff:
        return self._arguments.get("k")

    def forward(
        self, scores: Tensor, relevance: Tensor, *, mask: Tensor | None = None, indexes: Tensor | None = None
    ) -> Tensor:
        return self._loss(scores, relevance, mask=mask, indexes=indexes, **self._arguments)

    def extra_repr(self) -> str:
        """The options given other than their defaults (a generator is not shown), and the cutoff
        of an NDCG@k loss always (a keyword-only ``k``, the pair weights' cutoff, when given)."""
        defaults = inspect.signature(type(self).__init__).parameters
        cutoff = "k" in defaults and defaults["k"].kind is not inspect.Parameter.KEYWORD_ONLY
        shown = {"k": self.k} if cutoff else {}
        shown.update(
            (key, value) for key, value in self._arguments.items()
            if key != "generator" and not (cutoff and key == "k") and not _same(value, defaults[key].default)
        )  # fmt: skip
        return ", ".join(f"{key}={value!r}" for key, value in shown.items())


def _same(value: object, default: object) -> bool:
    return value is default or (type(value) is type(default) and value == default)


class NeuralNDCGLoss(_RankingLoss):
    """:func:`torch_ndcg.neural_ndcg_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.NeuralNDCGLoss(k=5, temperature=0.5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        temperature: float = DEFAULT_TEMPERATURE,
        sinkhorn_iters: int = DEFAULT_SINKHORN_ITERS,
        transposed: bool = False,
        stochastic: bool = False,
        samples: int = DEFAULT_SAMPLES,
        beta: float = DEFAULT_BETA,
        log_scores: bool = False,
        generator: torch.Generator | None = None,
        impl: NeuralImpl = DEFAULT_IMPL,
        tol: float | None = None,
        validate: bool = True,
    ) -> None:
        options = NeuralNDCGOptions(
            k=k, gain=gain, discount=discount, empty=empty, reduction=reduction, validate=validate,
            temperature=temperature, impl=impl, sinkhorn_iters=sinkhorn_iters, transposed=transposed,
            stochastic=stochastic, samples=samples, beta=beta, log_scores=log_scores, generator=generator, tol=tol,
        )  # fmt: skip
        super().__init__(neural_ndcg_loss, options)


class ApproxNDCGLoss(_RankingLoss):
    """:func:`torch_ndcg.approx_ndcg_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ApproxNDCGLoss(k=5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        temperature: float = DEFAULT_TEMPERATURE,
        impl: Impl = DEFAULT_IMPL,
        validate: bool = True,
    ) -> None:
        options = ApproxNDCGOptions(
            k=k, gain=gain, discount=discount, empty=empty, reduction=reduction, validate=validate,
            temperature=temperature, impl=impl,
        )
        super().__init__(approx_ndcg_loss, options)


class NeuralSortNDCGLoss(_RankingLoss):
    """:func:`torch_ndcg.neuralsort_ndcg_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.NeuralSortNDCGLoss(k=10)
        >>> criterion(torch.randn(4, 1000), torch.randint(0, 2, (4, 1000))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        temperature: Temperature = DEFAULT_SCALED_TEMPERATURE,
        validate: bool = True,
    ) -> None:
        options = NeuralSortNDCGOptions(
            k=k, gain=gain, discount=discount, empty=empty, reduction=reduction, validate=validate,
            temperature=temperature,
        )
        super().__init__(neuralsort_ndcg_loss, options)


class LambdaLoss(_RankingLoss):
    """:func:`torch_ndcg.lambda_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.LambdaLoss(k=5, weighting="ndcg_loss2pp")
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        weighting: Weighting = DEFAULT_WEIGHTING,
        sigma: float = DEFAULT_SIGMA,
        mu: float = DEFAULT_MU,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        impl: PairImpl = DEFAULT_IMPL,
        validate: bool = True,
    ) -> None:
        options = LambdaLossOptions(
            k=k, gain=gain, discount=discount, weighting=weighting, sigma=sigma, mu=mu, impl=impl, empty=empty,
            reduction=reduction, validate=validate,
        )
        super().__init__(lambda_loss, options)


class ListNetLoss(_RankingLoss):
    """:func:`torch_ndcg.listnet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ListNetLoss()
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(listnet_loss, GainLossOptions(gain=gain, empty=empty, reduction=reduction, validate=validate))


class SoftmaxLoss(_RankingLoss):
    """:func:`torch_ndcg.softmax_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.SoftmaxLoss()
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(softmax_loss, GainLossOptions(gain=gain, empty=empty, reduction=reduction, validate=validate))


class ListMLELoss(_RankingLoss):
    """:func:`torch_ndcg.listmle_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ListMLELoss(generator=torch.Generator().manual_seed(0))
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        generator: torch.Generator | None = None,
        weighting: ListMLEWeighting = DEFAULT_LISTMLE_WEIGHTING,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        options = ListMLEOptions(generator=generator, weighting=weighting, empty=empty, reduction=reduction, validate=validate)
        super().__init__(listmle_loss, options)


class RankNetLoss(_RankingLoss):
    """:func:`torch_ndcg.ranknet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.RankNetLoss(sigma=2.0)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        sigma: float = DEFAULT_SIGMA,
        weighting: PairWeighting = DEFAULT_PAIR_WEIGHTING,
        k: d.Cutoff = None,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        impl: PairImpl = DEFAULT_IMPL,
        validate: bool = True,
    ) -> None:
        options = RankNetOptions(
            sigma=sigma, weighting=weighting, k=k, gain=gain, discount=discount, impl=impl, empty=empty,
            reduction=reduction, validate=validate,
        )
        super().__init__(ranknet_loss, options)


class PairwiseHingeLoss(_RankingLoss):
    """:func:`torch_ndcg.pairwise_hinge_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.PairwiseHingeLoss(margin=0.5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        margin: float = DEFAULT_MARGIN,
        weighting: PairWeighting = DEFAULT_PAIR_WEIGHTING,
        k: d.Cutoff = None,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        impl: PairImpl = DEFAULT_IMPL,
        validate: bool = True,
    ) -> None:
        options = PairwiseHingeOptions(
            margin=margin, weighting=weighting, k=k, gain=gain, discount=discount, impl=impl, empty=empty,
            reduction=reduction, validate=validate,
        )
        super().__init__(pairwise_hinge_loss, options)


class NDCGLoss(_RankingLoss):
    """:func:`torch_ndcg.ndcg_loss` as a module: NDCG's smooth twin, ``1 − NDCG@k`` with the
    ranks relaxed by ``relaxation``; keyword options as there. (LambdaLoss's NDCG-Loss1/2/2++
    are pair weightings: :class:`LambdaLoss` with ``weighting="ndcg_loss2"``, ….)

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.NDCGLoss(k=5, relaxation="neuralsort")
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(ndcg_loss, twin_options(locals()))


class DCGLoss(_RankingLoss):
    """:func:`torch_ndcg.dcg_loss` as a module: DCG's smooth twin, ``−DCG@k``; keyword options as
    there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.DCGLoss(k=5, gain="exp2")
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        gain: d.Gain = DEFAULT_GAIN,
        discount: d.Discount = DEFAULT_DISCOUNT,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(dcg_loss, twin_options(locals()))


class MRRLoss(_RankingLoss):
    """:func:`torch_ndcg.mrr_loss` as a module: MRR's smooth twin (ApproxMRR by default),
    ``1 − MRR@k``; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.MRRLoss(k=10)
        >>> criterion(torch.randn(4, 20), torch.randint(0, 2, (4, 20))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        threshold: float | None = None,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(mrr_loss, twin_options(locals()))


class PrecisionLoss(_RankingLoss):
    """:func:`torch_ndcg.precision_loss` as a module: precision's smooth twin, ``1 − P@k``;
    keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.PrecisionLoss(k=5, adaptive_k=True)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 2, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        threshold: float | None = None,
        adaptive_k: bool = False,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(precision_loss, twin_options(locals()))


class RecallLoss(_RankingLoss):
    """:func:`torch_ndcg.recall_loss` as a module: recall's smooth twin (ApproxRecall@k by
    default), ``1 − R@k``; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.RecallLoss(k=5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 2, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        threshold: float | None = None,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(recall_loss, twin_options(locals()))


class HitRateLoss(_RankingLoss):
    """:func:`torch_ndcg.hit_rate_loss` as a module: hit rate's smooth twin, ``1 − HR@k``;
    keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.HitRateLoss(k=3, threshold=1.0)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        threshold: float | None = None,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(hit_rate_loss, twin_options(locals()))


class AveragePrecisionLoss(_RankingLoss):
    """:func:`torch_ndcg.average_precision_loss` as a module: AP's smooth twin (ApproxAP by
    default), ``1 − AP@k``; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.AveragePrecisionLoss(relaxation=tn.ApproxRanks(temperature=0.5))
        >>> criterion(torch.randn(4, 10), torch.randint(0, 2, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        threshold: float | None = None,
        ap_normaliser: ApNormaliser = DEFAULT_AP_NORMALISER,
        empty: Empty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(average_precision_loss, twin_options(locals()))


class RBPLoss(_RankingLoss):
    """:func:`torch_ndcg.rbp_loss` as a module: rank-biased precision's smooth twin,
    ``1 − RBP@k``; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.RBPLoss(persistence=0.5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 2, (4, 10))).shape
        torch.Size([])
    """

    def __init__(
        self,
        k: d.Cutoff = None,
        *,
        persistence: float = DEFAULT_PERSISTENCE,
        threshold: float | None = None,
        reduction: Reduction = DEFAULT_REDUCTION,
        relaxation: RelaxationName | Relaxation = DEFAULT_RELAXATION,
        validate: bool = True,
    ) -> None:
        super().__init__(rbp_loss, twin_options(locals()))


__all__ = [
    "ApproxNDCGLoss",
    "AveragePrecisionLoss",
    "DCGLoss",
    "HitRateLoss",
    "LambdaLoss",
    "ListMLELoss",
    "ListNetLoss",
    "MRRLoss",
    "NDCGLoss",
    "NeuralNDCGLoss",
    "NeuralSortNDCGLoss",
    "PairwiseHingeLoss",
    "PrecisionLoss",
    "RBPLoss",
    "RankNetLoss",
    "RecallLoss",
    "SoftmaxLoss",
]


class _DistillLoss(_RankingLoss):
    """A distillation loss and its checked options: ``criterion(scores, teacher_scores, mask=None)``."""

    def forward(  # type: ignore[override]  # (the target is a teacher's scores, not labels)
        self, scores: Tensor, teacher_scores: Tensor, *, mask: Tensor | None = None, indexes: Tensor | None = None
    ) -> Tensor:
        return self._loss(scores, teacher_scores, mask=mask, indexes=indexes, **self._arguments)


class DistillListNetLoss(_DistillLoss):
    """:func:`torch_ndcg.distill_listnet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.DistillListNetLoss(temperature=2.0)
        >>> criterion(torch.randn(4, 10), torch.randn(4, 10)).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        temperature: float = DEFAULT_DISTILL_TEMPERATURE,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(distill_listnet_loss, TemperatureLossOptions(temperature=temperature, empty=empty, reduction=reduction, validate=validate))


class DistillListMLELoss(_DistillLoss):
    """:func:`torch_ndcg.distill_listmle_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.DistillListMLELoss()(torch.randn(4, 10), torch.randn(4, 10)).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        position_aware: bool = False,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(distill_listmle_loss, DistillListMLEOptions(position_aware=position_aware, empty=empty, reduction=reduction, validate=validate))


class DistillRankNetLoss(_DistillLoss):
    """:func:`torch_ndcg.distill_ranknet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.DistillRankNetLoss(temperature=0.5)(torch.randn(4, 10), torch.randn(4, 10)).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        temperature: float = DEFAULT_DISTILL_TEMPERATURE,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(distill_ranknet_loss, TemperatureLossOptions(temperature=temperature, empty=empty, reduction=reduction, validate=validate))


class MarginMSELoss(_DistillLoss):
    """:func:`torch_ndcg.margin_mse_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.MarginMSELoss(pairs="first")(torch.randn(4, 10), torch.randn(4, 10)).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        pairs: MarginPairs = DEFAULT_MARGIN_PAIRS,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(margin_mse_loss, MarginMSEOptions(pairs=pairs, empty=empty, reduction=reduction, validate=validate))


class AdrMSELoss(_DistillLoss):
    """:func:`torch_ndcg.adr_mse_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> tn.AdrMSELoss(temperature=0.5)(torch.randn(4, 10), torch.randn(4, 10)).shape
        torch.Size([])
    """

    def __init__(
        self,
        *,
        temperature: float = DEFAULT_DISTILL_TEMPERATURE,
        discount: d.Discount | None = DEFAULT_DISCOUNT,
        impl: PairImpl = DEFAULT_IMPL,
        empty: LossEmpty = DEFAULT_LOSS_EMPTY,
        reduction: Reduction = DEFAULT_REDUCTION,
        validate: bool = True,
    ) -> None:
        super().__init__(adr_mse_loss, AdrMSEOptions(temperature=temperature, discount=discount, impl=impl, empty=empty, reduction=reduction, validate=validate))
