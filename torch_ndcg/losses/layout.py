"""The flat layout for the losses: 1-D items with a query id each, run as length-bucketed padded groups.

A loss called with ``indexes=`` sees the same lists as its padded ``[Q, max n]`` form (each
list's items in their flat-input order, lists in ascending id order), but is never padded to
the longest list: lists are grouped by length class (lengths in ``(2^(c-1), 2^c]``), each group
is padded only to its own longest list, and the loss's dense code runs once per group with
``reduction="none"``. Padding then at most doubles a list's length, so a group costs what its
lists would cost alone, within a constant factor, and a path that builds ``[B, N, N]`` tensors
builds them per group, never ``[Q, max n, max n]``. The per-list values are put back in id
order and ``empty``/``reduction`` act over all lists at once, exactly as in the dense call;
gradients flow back through the gathers.

Per-list values of the dense code do not depend on the other lists of its batch, with two
exceptions handled here: ``log_scores=True`` shifts every score by the smallest real score of
the whole batch (each group is shifted so that it sees that same minimum), and ``tol`` stops
Sinkhorn per group of the kernel path's own plan (the groups here are that plan's groups).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .. import flat
from ..aggregation import reduce
from ..options import DEFAULT_REDUCTION, REDUCTIONS
from ..validation import check_option, check_same_device
from .relaxations.sinkhorn.plan import plan
from .transforms import batched


def flat_call(loss: Callable[..., Tensor], arguments: dict[str, Any]) -> Tensor:
    """``loss`` evaluated on flat items: ``arguments`` are the loss's own parameters as bound at
    its entry (its ``locals()``), with ``indexes`` set.

    Returns what the dense call on the padded lists returns: a scalar, or with
    ``reduction="none"`` one value per distinct id in ascending id order.
    """
    given = dict(arguments)
    for name, parameter in inspect.signature(loss).parameters.items():
        if parameter.kind is parameter.VAR_KEYWORD:  # the **options group, spread out
            given.update(given.pop(name, None) or {})
    target = list(inspect.signature(loss).parameters)[1]  # relevance, or a teacher's scores
    scores, relevance, indexes, mask = (given.pop(name) for name in ("scores", target, "indexes", "mask"))
    if batched(indexes) or batched(mask):  # the lists' sizes would differ from entry to entry
        raise ValueError(
            "indexes and mask of flat items must be the same for every torch.func.vmap entry (in_dims=None); "
            "for lists that differ per entry, pass padded [..., N] lists with mask= instead"
        )
    reduction = given.pop("reduction", DEFAULT_REDUCTION)
    check_option("reduction", reduction, REDUCTIONS)
    if isinstance(scores, Tensor) and isinstance(relevance, Tensor):  # named as the loss names it
        check_same_device("scores", scores, target, relevance)
    scores, relevance, indexes, _ = flat.select(scores, relevance, indexes, mask)
    lists = _Lists(indexes)
    shift = _log_scores_shift(scores, given)
    values, order = [], []
    for group in lists.groups(like_kernel_plan=given.get("tol") is not None):
        place = lists.place(group)
        group_scores = scores.index_select(0, place.items)
        if shift is not None:
            group_scores = group_scores + shift(group_scores)
        group_relevance = relevance.index_select(0, place.items)
        values.append(loss(place.pad(group_scores), place.pad(group_relevance), mask=place.valid, **given,
                           reduction="none"))  # fmt: skip
        order.append(group)
    grouped = torch.cat(values)
    return reduce(grouped.new_zeros(lists.count).index_copy(0, torch.cat(order), grouped), reduction)


class _Place:
    """Where a group's items go: their flat-input indices (list after list, each in input order)
    and their slots in the group's padded ``[G, width]`` rows."""

    def __init__(self, items: Tensor, slots: Tensor, rows: int, width: int, full: bool) -> None:
        self.items, self.slots, self.rows, self.width = items, slots, rows, width
        self.valid: Tensor | None = None  # the mask of real items, None when no list is padded
        if not full:
            valid = torch.zeros(rows * width, dtype=torch.bool, device=items.device)
            self.valid = valid.index_fill_(0, slots, True).view(rows, width)

    def pad(self, values: Tensor) -> Tensor:
        """The group's item ``values`` (in :attr:`items` order) as padded rows, 0 at the padding."""
        return values.new_zeros(self.rows * self.width).index_copy(0, self.slots, values).view(self.rows, self.width)


class _Lists:
    """The lists of a flat batch: items sorted by (id, input order), sizes, and length groups."""

    def __init__(self, indexes: Tensor) -> None:
        ids, self.order = torch.sort(indexes, stable=True)
        start = torch.ones_like(ids, dtype=torch.bool)
        start[1:] = ids[1:] != ids[:-1]
        self.first = start.nonzero().squeeze(1)  # sorted position of each list's first item
        self.count = self.first.shape[0]
        self.sizes = torch.diff(self.first, append=self.first.new_tensor([ids.shape[0]]))

    def groups(self, *, like_kernel_plan: bool) -> list[Tensor]:
        """Ascending list numbers of each group: by power-of-two length class, or
        (``like_kernel_plan``) the kernel path's own groups of the lists by decreasing length."""
        sizes = self.sizes.tolist()
        if like_kernel_plan:
            by_length = sorted(range(self.count), key=lambda q: -sizes[q])  # stable, as the kernel sorts
            members = [by_length[first:stop] for first, stop, _ in plan([sizes[q] for q in by_length])]
        else:
            classes: dict[int, list[int]] = {}
            for q, n in enumerate(sizes):
                classes.setdefault((n - 1).bit_length(), []).append(q)
            members = [classes[c] for c in sorted(classes)]
        return [torch.tensor(sorted(m), dtype=torch.long, device=self.sizes.device) for m in members]

    def place(self, group: Tensor) -> _Place:
        sizes = self.sizes.index_select(0, group)
        width = int(sizes.max())
        arange = functools.partial(torch.arange, device=group.device)
        member = torch.repeat_interleave(arange(group.shape[0]), sizes)
        offset = arange(member.shape[0]) - (torch.cumsum(sizes, 0) - sizes).index_select(0, member)
        items = self.order.index_select(0, self.first.index_select(0, group).index_select(0, member) + offset)
        return _Place(items, member * width + offset, group.shape[0], width, bool((sizes == width).all()))


def _log_scores_shift(scores: Tensor, given: dict[str, Any]) -> Callable[[Tensor], Tensor] | None:
    """With ``log_scores`` NeuralNDCG perturbs ``log(s + |m| + 1e-10)``, ``m`` the smallest real
    score of the whole batch. A group whose own minimum is ``m_g ≥ m`` shifted by
    ``c = (|m| − m_g) / 2`` has minimum ``m_g + c ≥ 0``, so it computes
    ``log(s + c + |m_g + c| + 1e-10) = log(s + |m| + 1e-10)``: the value, and through autograd
    the gradient, of the whole batch."""
    if not (given.get("stochastic") and given.get("log_scores")):
        return None
    smallest = scores.min().abs()
    return lambda group: (smallest - group.min()) / 2
