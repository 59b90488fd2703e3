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
from .neural import neural_ndcg_loss
from .pairwise import pairwise_hinge_loss, ranknet_loss


class _RankingLoss(torch.nn.Module):
    _loss: Any = None
    _check: Any = None  # the loss's option checks, keyword arguments as the loss takes them

    def __init__(self, k: d.Cutoff = None, **options: Any) -> None:
        super().__init__()
        self.k = k
        self.options = options
        # An unknown option name or a bad value fails here, not at the first training step.
        arguments = inspect.signature(type(self)._loss).bind(None, None, k, **options)
        if type(self)._check is not None:
            single_cutoff(k)
            arguments.apply_defaults()
            type(self)._check(**arguments.arguments)

    def forward(self, scores: Tensor, relevance: Tensor, mask: Tensor | None = None) -> Tensor:
        return type(self)._loss(scores, relevance, self.k, mask=mask, **self.options)

    def extra_repr(self) -> str:
        shown = {"k": self.k, **{key: value for key, value in self.options.items() if key != "generator"}}
        return ", ".join(f"{key}={value!r}" for key, value in shown.items())


class _UncutLoss(_RankingLoss):
    """A loss with no cutoff: the same module without ``k``."""

    def __init__(self, **options: Any) -> None:
        torch.nn.Module.__init__(self)
        self.options = options
        inspect.signature(type(self)._loss).bind(None, None, **options)

    def forward(self, scores: Tensor, relevance: Tensor, mask: Tensor | None = None) -> Tensor:
        return type(self)._loss(scores, relevance, mask=mask, **self.options)

    def extra_repr(self) -> str:
        return ", ".join(f"{key}={value!r}" for key, value in self.options.items() if key != "generator")


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


class ListNetLoss(_UncutLoss):
    """:func:`torch_ndcg.listnet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ListNetLoss()
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(listnet_loss)


class SoftmaxLoss(_UncutLoss):
    """:func:`torch_ndcg.softmax_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.SoftmaxLoss()
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(softmax_loss)


class ListMLELoss(_UncutLoss):
    """:func:`torch_ndcg.listmle_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.ListMLELoss(generator=torch.Generator().manual_seed(0))
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(listmle_loss)


class RankNetLoss(_UncutLoss):
    """:func:`torch_ndcg.ranknet_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.RankNetLoss(sigma=2.0)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(ranknet_loss)


class PairwiseHingeLoss(_UncutLoss):
    """:func:`torch_ndcg.pairwise_hinge_loss` as a module; keyword options as there.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> criterion = tn.PairwiseHingeLoss(margin=0.5)
        >>> criterion(torch.randn(4, 10), torch.randint(0, 3, (4, 10))).shape
        torch.Size([])
    """

    _loss = staticmethod(pairwise_hinge_loss)
