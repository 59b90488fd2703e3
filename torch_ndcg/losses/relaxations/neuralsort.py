r"""The top rows of NeuralSort (Grover et al., 2019) in O(N log N + R·N), and the smooth DCG they give.

Row ``i`` of NeuralSort's relaxed sorting matrix for the ``n`` real scores ``s`` of a list is

.. math:: \hat P_{i\cdot} = \mathrm{softmax}_j\!\left(\frac{(n + 1 - 2i)\,s_j - \sum_m |s_j - s_m|}{\tau}\right).

Since :math:`|x| = x + 2\max(-x, 0)`, :math:`\sum_m |s_j - s_m| = n s_j - \sum_m s_m + 2 H_j`
with :math:`H_j = \sum_m \max(s_m - s_j, 0)`, the total by which the items above ``j`` exceed
it. The sum of all scores is the same in every entry of a row and cancels in its softmax, so

.. math:: \hat P_{i\cdot} = \mathrm{softmax}_j\!\left(\frac{(1 - 2i)\,s_j - 2 H_j}{\tau}\right).

One sort gives every :math:`H_j`: in ascending order, ``H(p) = H(p+1) + (n − p)(t_{p+1} − t_p)``,
a suffix sum of non-negative terms, so the items near the top (the only ones a top row weighs)
get small, accurately summed logits, where the paper's form subtracts two sums of ``n`` terms.
Rows ``1..R`` then cost ``O(R·N)``; the DCG reads only rows ``1..k`` (PiRank, Swezey et al.,
2021). The forward keeps the rows (``R·N`` numbers) and the sort's order for the backward, which
then needs no sort and no exponential; its only other pass is a prefix sum over the sort.

Where scores tie, ``|x|`` has the subgradient 0 at 0 (as ``torch.abs``); here that is
``max(x, 0)`` with the subgradient ½ at 0, which gives the same gradient as the paper's form
differentiated by autograd.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..transforms import ListsFunction, vmap_over_lists


def _filled(scores: Tensor, valid: Tensor) -> Tensor:
    """The scores with padding moved strictly below every real score of its list (so that a sort
    puts it first and never counts it as tied with a real item): the next number below the lowest
    real score, which ``low − 1`` is not once ``|low|`` outgrows the dtype's precision (2**24 in
    float32)."""
    low = torch.where(valid, scores, torch.full_like(scores, torch.inf)).amin(-1, keepdim=True)
    low = torch.where(torch.isfinite(low), low, torch.zeros_like(low))
    return torch.where(valid, scores, torch.nextafter(low, torch.full_like(low, -torch.inf)))


def _slopes(rows: int, like: Tensor) -> Tensor:
    """``1 − 2i`` for the rows ``i = 1..R``."""
    return 1 - 2 * torch.arange(1, rows + 1, dtype=like.dtype, device=like.device)


def _rows(scores: Tensor, valid: Tensor, ascending: Tensor, order: Tensor, rows: int, tau: Tensor) -> Tensor:
    """NeuralSort's rows ``1..R`` ``[B, R, N]`` for τ ``[B or 1, 1]``; padding has probability 0.
    ``ascending``, ``order``: the sort of :func:`_filled`'s scores.

    Without autograd recording (the forward) the rows are built in place in one ``[B, R, N]``
    buffer; otherwise (a backward with ``create_graph``) out of place, differentiably.
    """
    width = scores.shape[-1]
    above = torch.arange(width - 1, 0, -1, dtype=scores.dtype, device=scores.device)  # items above each gap
    suffix = ((ascending[:, 1:] - ascending[:, :-1]) * above).flip(-1).cumsum(-1).flip(-1)
    excess = torch.cat([suffix, torch.zeros_like(ascending[:, :1])], -1)  # H in ascending order
    excess = torch.zeros_like(excess).scatter(-1, order, excess)
    # (1 − 2i)·s_j shifted by the list's largest score: the same constant in every entry of a row.
    shifted, slope = scores - ascending[:, -1:], _slopes(rows, scores)[None, :, None]
    padding, lowest = ~valid[:, None, :], torch.finfo(scores.dtype).min  # finite: an all-padding row stays finite
    if torch.is_grad_enabled():
        logits = (slope * shifted[:, None, :] - 2 * excess[:, None, :]) / tau[:, :, None]
        return torch.softmax(logits.masked_fill(padding, lowest), -1)
    table = (slope * shifted[:, None, :]).sub_(2 * excess[:, None, :]).div_(tau[:, :, None]).masked_fill_(padding, lowest)
    table.sub_(table.amax(-1, keepdim=True)).exp_()
    return table.div_(table.sum(-1, keepdim=True))


def _on(tau: Tensor | float, like: Tensor) -> Tensor:
    """τ as a ``[B or 1, 1]`` tensor of ``like``'s dtype and device."""
    if isinstance(tau, Tensor):
        return tau.to(like.dtype).reshape(-1, 1)
    return torch.full((1, 1), float(tau), dtype=like.dtype, device=like.device)


def _excess_vjp(ascending: Tensor, order: Tensor, upstream: Tensor) -> Tensor:
    """``Σ_j upstream_j ∂H_j/∂s_m`` ``[B, N]``: ``∂H_j/∂s_m`` is 1 for ``s_m > s_j``, ½ for a tie
    (``m ≠ j``), and ``∂H_j/∂s_j = −(#above + ½ #tied others)``; prefix sums over the sort, with
    each run of tied scores found from its first and last position."""
    width = ascending.shape[-1]
    position = torch.arange(width, device=ascending.device).expand_as(order)
    differs, edge = ascending[:, 1:] != ascending[:, :-1], torch.ones_like(ascending[:, :1], dtype=torch.bool)
    first = torch.cat([edge, differs], -1)  # a run starts here
    last = torch.cat([differs, edge], -1)  # a run ends here
    start = torch.where(first, position, 0).cummax(-1).values  # items strictly below
    end = torch.where(last, position, width).flip(-1).cummin(-1).values.flip(-1) + 1  # at or below
    ordered = upstream.gather(-1, order)
    totals = torch.cat([torch.zeros_like(ordered[:, :1]), ordered.cumsum(-1)], -1)
    sum_below = totals.gather(-1, start)
    sum_tied = totals.gather(-1, end) - sum_below - ordered
    count_above, count_tied = (width - end).to(ordered.dtype), (end - start - 1).to(ordered.dtype)
    result = sum_below + 0.5 * sum_tied - ordered * (count_above + 0.5 * count_tied)
    return torch.zeros_like(result).scatter(-1, order, result)


class TopRowMeans(ListsFunction):
    r"""``q_i = Σ_j P̂_ij v_j`` ``[B, R]`` for the rows ``i = 1..R`` (the expected value ``v`` at
    rank ``i``), or with a ``weight`` ``[B, R]`` their weighted sum ``Σ_i w_i q_i`` ``[B]`` (a
    DCG, in the Function: no autograd node of its own), with an analytic backward in the scores
    and the values; also returns the rows and the sort's order (no gradient), which the backward
    reuses.

    With the upstream gradient ``a_i = ∂L/∂q_i`` and ``G_ij = a_i P̂_ij (v_j − q_i)`` (the gradient
    with respect to the logits), the gradient is
    ``∂L/∂s_m = (Σ_i (1 − 2i) G_im − 2 Σ_j (Σ_i G_ij) ∂H_j/∂s_m) / τ``. Under
    ``create_graph=True`` the backward rebuilds ``P̂`` from the scores with differentiable
    operations, so the second derivatives are autograd's of this same formula.
    """

    @staticmethod
    def forward(scores: Tensor, valid: Tensor, values: Tensor, tau: Tensor, rows: int, weight: Tensor | None):
        ascending, order = torch.sort(_filled(scores, valid), dim=-1)
        probabilities = _rows(scores, valid, ascending, order, rows, tau)
        means = torch.bmm(probabilities, values[:, :, None])[:, :, 0]
        return means if weight is None else (means * weight).sum(-1), probabilities, order

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        scores, valid, values, tau, _, weight = inputs
        _, probabilities, order = output
        ctx.mark_non_differentiable(probabilities, order)
        ctx.save_for_backward(scores, valid, values, tau, probabilities, order, weight)

    @staticmethod
    def vmap(info, in_dims, *args):
        return vmap_over_lists(TopRowMeans.apply, info, in_dims, args)

    @staticmethod
    def backward(ctx, grad_out: Tensor, _grad_rows: Tensor, _grad_order: Tensor):
        scores, valid, values, tau, probabilities, order, weight = ctx.saved_tensors
        rows = probabilities.shape[1]
        ascending = _filled(scores.detach(), valid).gather(-1, order)
        if torch.is_grad_enabled():  # create_graph=True: rows that depend on the scores
            probabilities = _rows(scores, valid, _filled(scores, valid).gather(-1, order), order, rows, tau)
        means = torch.bmm(probabilities, values[:, :, None])[:, :, 0]  # q [B, R]
        w, slope = grad_out if weight is None else weight * grad_out[:, None], _slopes(rows, scores)[None, :]
        # Σ_i c_i G_ij = v_j Σ_i c_i a_i P̂_ij − Σ_i c_i a_i q_i P̂_ij for c = 1 − 2i and c = 1: one
        # [B, 4, R] × [B, R, N] product instead of G itself.
        coefficients = torch.stack([slope * w, slope * w * means, w, w * means], 1)
        sums = torch.bmm(coefficients, probabilities)
        direct = values * sums[:, 0] - sums[:, 1]
        upstream = values * sums[:, 2] - sums[:, 3]
        through_excess = _excess_vjp(ascending, order, upstream)
        grad_scores = torch.where(valid, direct - 2 * through_excess, torch.zeros_like(direct)) / tau
        # ∂out/∂v_j = Σ_i a_i P̂_ij (0 at padding, whose probabilities are 0): relevance with grad.
        grad_values = torch.bmm(w[:, None, :], probabilities)[:, 0] if ctx.needs_input_grad[2] else None
        return grad_scores, None, grad_values, None, None, None


def top_row_means(scores: Tensor, valid: Tensor, values: Tensor, rows: int, tau: Tensor | float) -> Tensor:
    """``[B, R]`` the expected ``values`` ``[B, N]`` (0 at padding) at each of NeuralSort's ranks
    ``1..R``; ``tau`` a number or a ``[B, 1]`` tensor (no gradient)."""
    if not scores.shape[-1]:  # no item: every rank holds nothing (and the scores' empty gradient)
        return scores.new_zeros(scores.shape[0], rows) + scores.sum(-1, keepdim=True)
    tau = _on(tau, scores).detach().expand(scores.shape[0], 1)  # one per list: vmap folds lists
    return TopRowMeans.apply(scores, valid, values, tau, rows, None)[0]


def top_rows_dcg(scores: Tensor, valid: Tensor, weight: Tensor, gains: Tensor, tau: Tensor | float) -> Tensor:
    """Smooth DCG ``[B]`` from NeuralSort's rows ``1..R``, ``R = weight.shape[-1]``: ``weight``
    ``[B, R]`` holds each rank's discount (0 for ranks beyond a list's cutoff or length),
    ``gains`` ``[B, N]`` (0 at padding), ``tau`` a number or a ``[B, 1]`` tensor (no gradient)."""
    if not scores.shape[-1]:  # no item, no rank: a DCG of 0 (and the scores' empty gradient)
        return scores.sum(-1)
    tau = _on(tau, scores).detach().expand(scores.shape[0], 1)
    return TopRowMeans.apply(scores, valid, gains, tau, weight.shape[-1], weight)[0]
