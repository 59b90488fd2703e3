"""``torch.nn.Module`` forms of the losses, for code that wants ``criterion(scores, relevance)``."""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import Tensor

from .. import definitions as d
from . import approx, neural
from .approx import approx_ndcg_loss
from .common import single_cutoff
from .neural import neural_ndcg_loss


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
