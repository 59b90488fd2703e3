"""The target of the unbiased losses: clicks with the examination propensities they were logged under.

A :class:`Clicks` target is its own type, not a label tensor, so a click log can never reach a
label loss (which would learn the logging ranker's position bias) and labels can never reach an
unbiased loss (which would weigh them by propensities they were never subject to).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from ..validation import check_flag, check_mask, check_same_device, check_same_shape, check_tensor


@dataclass(frozen=True)
class Clicks:
    """Clicks and the examination propensities of the ranks they were logged at.

    ``clicks`` and ``propensities`` have the shape of the scores (dense ``[..., N]`` or flat
    ``[T]``). ``clicks`` are 0/1 (or click counts ≥ 0 of repeated sessions of one list);
    ``propensities`` are the probabilities that each item's logged rank was examined, or any
    common positive multiple of them (estimates normalised to rank 1, as
    :mod:`torch_ndcg.clicks.propensity` returns them). Only clicked items' propensities are
    read, and they must be > 0. The click models of :mod:`torch_ndcg.clicks.models` return one.

    Example:
        >>> import torch
        >>> from torch_ndcg.clicks import Clicks
        >>> target = Clicks(torch.tensor([[1.0, 0.0, 1.0]]), torch.tensor([[1.0, 0.5, 0.25]]))
        >>> target.weights()
        tensor([[1., 0., 4.]])
    """

    clicks: Tensor
    propensities: Tensor

    def __post_init__(self) -> None:
        check_tensor("clicks", self.clicks)
        check_tensor("propensities", self.propensities)
        if self.clicks.is_complex() or not self.propensities.is_floating_point():
            raise TypeError(
                f"clicks must be bool, integer or real floating point and propensities real floating point, "
                f"got {self.clicks.dtype} and {self.propensities.dtype}"
            )
        check_same_shape("clicks", self.clicks, "propensities", self.propensities)
        check_same_device("clicks", self.clicks, "propensities", self.propensities)

    def weights(self, *, clip: float | None = None, mask: Tensor | None = None, validate: bool = True) -> Tensor:
        r"""The inverse-propensity weights :math:`w_i = c_i / \max(p_i, \text{clip})` (0 where
        nothing was clicked), in the propensities' dtype.

        :math:`E[w_i] = P(\text{click}_i \mid \text{examined})` under the position-based model, so a
        loss or metric linear in the labels, given ``w`` as labels, estimates its value on those
        click probabilities without bias (clipping trades a bias for bounded weights: Joachims,
        Swaminathan & Schnabel, WSDM 2017). ``validate`` checks, with one host read, that the
        clicks are finite and ≥ 0 and that every clicked item's propensity is finite and > 0.
        """
        check_flag("validate", validate)
        check_mask(mask, self.clicks.shape)
        if clip is not None and (isinstance(clip, bool) or not isinstance(clip, (int, float)) or not 0 < clip < math.inf):
            # An infinite floor would turn every weight into 0: a loss of 0 that reads as a perfect fit.
            raise ValueError(f"clip must be None or a finite propensity floor > 0, got {clip!r}")
        clicks = self.clicks.to(self.propensities.dtype)
        if mask is not None:
            clicks = torch.where(mask, clicks, torch.zeros((), dtype=clicks.dtype, device=clicks.device))
        # 1 where nothing was clicked: those propensities are never read, and 0 / 1 = 0.
        read = torch.where(clicks != 0, self.propensities, torch.ones((), dtype=clicks.dtype, device=clicks.device))
        if validate and clicks.numel():
            # One host read: a NaN or infinity anywhere makes the sum non-finite.
            low_click, low_propensity, total = torch.stack((clicks.amin(), read.amin(), (clicks + read).sum())).tolist()
            if not (low_click >= 0 and math.isfinite(total)) and not bool(torch.isfinite(clicks).all() and clicks.min() >= 0):
                raise ValueError("clicks must be finite and ≥ 0 (0/1 clicks, or click counts)")
            if not (low_propensity > 0 and math.isfinite(total)):
                raise ValueError(
                    "propensities must be finite and > 0 at every clicked item (a click at a rank that is never "
                    "examined is impossible); estimate them, or floor them with clip="
                )
        floor = torch.finfo(clicks.dtype).tiny if clip is None else float(clip)
        return clicks / read.clamp(min=floor)


def check_target(name: str, target: object) -> Clicks:
    """An unbiased loss or metric takes a :class:`Clicks` target: a label tensor is a TypeError."""
    if not isinstance(target, Clicks):
        hint = (
            "; labels go to the label losses and metrics (torch_ndcg.listnet_loss, torch_ndcg.ndcg, ...), clicks "
            "here as Clicks(clicks, propensities)"
            if isinstance(target, Tensor)
            else ""
        )
        raise TypeError(f"{name} must be a torch_ndcg.clicks.Clicks (clicks with their propensities), got {type(target).__name__}{hint}")
    return target
