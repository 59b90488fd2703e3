"""``torch.nn.Module`` forms of the losses, for code that wants ``criterion(scores, relevance)``."""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import Tensor

from .. import definitions as d
from . import approx, neural
from .approx import approx_ndcg_loss
from .lambdaloss import lambda_loss
from .listwise import listmle_loss, listnet_loss, softmax_loss
from .common import single_cutoff
from ..options import (
    LOSS_DEFAULTS,
    GainLossOptions,
    LambdaLossOptions,
    ListLossOptions,
    NDCGLossOptions,
    PairLossOptions,
    settle,
)
from .neural import neural_ndcg_loss
from .pairwise import pairwise_hinge_loss, ranknet_loss


class _RankingLoss(torch.nn.Module):
    _loss: Any = None
    _options: type = NDCGLossOptions  # the loss's typed group of shared keyword options
    _check: Any = None  # the loss's option checks, keyword arguments as the loss takes them
    _cut = True  # whether the loss takes a cutoff k

    def __init__(self, k: d.Cutoff = None, **options: Any) -> None:
        super().__init__()
        self.k = k
        self.options = options
        # An unknown option name or a bad value fails here, not at the first training step.
        loss = type(self)._loss
        own = {name for name, p in inspect.signature(loss).parameters.items() if p.kind is not p.VAR_KEYWORD}
        shared = settle(type(self).__name__, {n: v for n, v in options.items() if n not in own}, type(self)._options,
                        LOSS_DEFAULTS)  # fmt: skip
        cutoff = (k,) if type(self)._cut else ()
        arguments = inspect.signature(loss).bind(None, None, *cutoff, **{n: v for n, v in options.items() if n in own})
        if type(self)._check is not None:
            single_cutoff(k)
            arguments.apply_defaults()
            type(self)._check(**arguments.arguments, **shared)

    def forward(
        self, scores: Tensor, relevance: Tensor, mask: Tensor | None = None, indexes: Tensor | None = None
    ) -> Tensor:
        cutoff = (self.k,) if type(self)._cut else ()
        return type(self)._loss(scores, relevance, *cutoff, mask=mask, indexes=indexes, **self.options)

    def extra_repr(self) -> str:
        shown = {"k": self.k} if type(self)._cut else {}
        shown.update((key, value) for key, value in self.options.items() if key != "generator")
        return ", ".join(f"{key}={value!r}" for key, value in shown.items())


class _UncutLoss(_RankingLoss):
    """A loss with no cutoff: the same module without ``k``."""

    _cut = False

    def __init__(self, **options: Any) -> None:
        super().__init__(None, **options)


class NeuralNDCGLoss(_RankingLoss):
    """:func:`torch_ndcg.neural_ndcg_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.NeuralNDCGLoss(k=5, temperature=0.5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(neural_ndcg_loss)
    _check = staticmethod(neural.check_options)


class ApproxNDCGLoss(_RankingLoss):
    """:func:`torch_ndcg.approx_ndcg_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ApproxNDCGLoss(k=5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(approx_ndcg_loss)
    _check = staticmethod(approx.check_options)


class LambdaLoss(_RankingLoss):
    """:func:`torch_ndcg.lambda_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.LambdaLoss(k=5, weighting="ndcg_loss2pp")
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(lambda_loss)
    _options = LambdaLossOptions


class ListNetLoss(_UncutLoss):
    """:func:`torch_ndcg.listnet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ListNetLoss()
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(listnet_loss)
    _options = GainLossOptions


class SoftmaxLoss(_UncutLoss):
    """:func:`torch_ndcg.softmax_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.SoftmaxLoss()
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(softmax_loss)
    _options = GainLossOptions


class ListMLELoss(_UncutLoss):
    """:func:`torch_ndcg.listmle_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ListMLELoss(generator=torch.Generator().manual_seed(0))
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(listmle_loss)
    _options = ListLossOptions


class RankNetLoss(_UncutLoss):
    """:func:`torch_ndcg.ranknet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.RankNetLoss(sigma=2.0)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(ranknet_loss)
    _options = PairLossOptions


class PairwiseHingeLoss(_UncutLoss):
    """:func:`torch_ndcg.pairwise_hinge_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.PairwiseHingeLoss(margin=0.5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(pairwise_hinge_loss)
    _options = PairLossOptions
