"""What every smooth loss shares: inputs prepared exactly as the metrics prepare them, the exact
IDCG, the choice of implementation, and turning smooth metric values into losses.

A loss is the metric relaxed, not a look-alike: gains, the discount, the cutoff, the mask, the
IDCG and ``empty`` all come from the same code as :func:`torch_ndcg.ndcg`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec

import torch
from torch import Tensor

from .. import definitions as d
from .. import fused as fused_kernels
from ..aggregation import apply_empty, reduce
from ..dense import check_layout, ideal_dcg, may_read_values, prepare as prepare_dense
from .. import options
from ..options import REDUCTIONS
from ..validation import check_option, names_arguments
from .relaxations import blocks
from .options import single_cutoff
from .transforms import check_gain_readable, transforms_active
from .value_checks import register_check, validated, validated_smooth_values

P = ParamSpec("P")

# impl="auto" keeps the readable dense path only while its [B, N, N] tensors are small
# (B·N² ≤ this many entries); beyond, the streaming path, whose memory is O(B·N).
AUTO_DENSE_MAX_PAIRS = 2**16
# impl="auto" runs NeuralNDCG's kernel path while one padded list's N×N kernel takes at most
# this many bytes (its memory is one such kernel, or a cache-sized group of shorter ones,
# whatever B is); beyond, the streaming path. A size rule on the padded width, so the choice
# depends on shapes only (no value is read, nothing is timed).
AUTO_KERNEL_MAX_BYTES = 256 * 2**20


@dataclass(frozen=True)
class LossLists:
    """Validated ``[B, N]`` inputs of a loss (leading batch axes flattened into ``B``)."""

    scores: Tensor  # compute dtype, differentiable, 0 at masked items
    valid: Tensor  # bool, True for real items
    gains: Tensor  # 0 at masked items
    idcg: Tensor | None  # [B], the exact IDCG@k of the metric code (None: not asked for)
    cutoff: int | None
    batch_shape: torch.Size
    validate: bool = True  # whether the loss may read values to check its result (see finish)

    @property
    def length(self) -> int:
        return self.scores.shape[-1]


@dataclass(frozen=True)
class SortRelaxation:
    """What every NeuralNDCG implementation takes besides the scores (which stay a separate
    argument, so that autograd sees them): the lists' real items, the weights, and the relaxation's
    temperature, Sinkhorn iterations and orientation."""

    valid: Tensor  # [B, N] bool, True for real items
    rank_weight: Tensor  # [B, N] discount × cutoff weight of each rank
    gains: Tensor  # [B, N], 0 at masked items
    tau: float
    iters: int
    transposed: bool


def check_loss_scores(scores: object) -> None:
    """A loss differentiates its scores: integer or bool scores (no gradient can reach them) are a
    TypeError here, not a loss without ``grad_fn`` that fails at ``backward()``. Float scores
    without gradient (a validation loss under ``no_grad``) are fine."""
    if isinstance(scores, Tensor) and not (scores.is_floating_point() or scores.is_complex()):
        raise TypeError(
            f"scores must be a floating point tensor (a loss's gradient flows into the scores), got {scores.dtype}; "
            "the model's raw outputs go in scores, the labels in relevance"
        )


def prepare(
    scores: Tensor,
    relevance: Tensor,
    k: d.Cutoff,
    mask: Tensor | None,
    gain: d.Gain,
    discount: d.Discount,
    validate: bool,
    *,
    ideal: bool = True,
) -> LossLists:
    """Check inputs exactly as the metrics do and compute the exact IDCG@k (skipped, a sort
    per list, with ``ideal=False`` for losses that only ask whether anything is relevant)."""
    check_loss_scores(scores)
    check_gain_readable(gain, validate)
    cutoff = single_cutoff(k)
    checked = validate and isinstance(gain, str)  # behind one read, and compiled as one op
    if checked:
        check_layout(scores, relevance, mask)  # (again in prepare_dense) types and shapes first
        scores = validated(scores, relevance, mask, gain)
    lists = prepare_dense(scores, relevance, mask, gain, validate and not checked)
    idcg = ideal_dcg(lists, (cutoff,), discount)[..., 0].reshape(-1) if ideal else None
    n = lists.length
    valid = torch.ones(lists.scores.shape, dtype=torch.bool, device=lists.scores.device) if mask is None else mask
    # where(), not the -inf scores of dense.prepare: padding must be finite for the pairwise
    # terms and must receive exactly zero gradient (without a mask there is none).
    real = lists.scores.to(lists.dtype)
    if mask is not None:
        real = torch.where(valid, real, torch.zeros((), dtype=lists.dtype, device=valid.device))
    return LossLists(
        scores=real.reshape(-1, n),
        valid=valid.reshape(-1, n),
        gains=lists.gains.reshape(-1, n),
        idcg=idcg,
        cutoff=cutoff,
        batch_shape=lists.scores.shape[:-1],
        validate=validate,
    )


def valid_counts(valid: Tensor) -> Tensor:
    """``[B, 1]`` number of real items in each list."""
    return valid.sum(-1, keepdim=True)


def positions(like: Tensor) -> Tensor:
    """1-based positions ``[1, N]`` in ``like``'s dtype and device."""
    return torch.arange(1, like.shape[-1] + 1, dtype=like.dtype, device=like.device)[None, :]


def resolve_impl(impl: str, lists: LossLists, *, kernel: bool = False, candidates: int | None = None) -> str:
    """The implementation that runs for ``impl`` on these lists, from their shapes, their device and
    the loss's options only (no value is read).

    ``"auto"``: for ApproxNDCG (which passes its ``candidates``, the ``M`` items per list that
    can reach the cutoff), sorted when ``2·M ≤ N`` (it sums ``M·N`` pairs where the others sum
    ``N²``) and ``B·N²`` is over :data:`AUTO_DENSE_MAX_PAIRS`; else the Triton kernels for CUDA
    tensors when Triton is installed; else, for a loss with a ``kernel`` path (NeuralNDCG),
    kernel while one padded ``N × N`` kernel takes at most :data:`AUTO_KERNEL_MAX_BYTES`,
    streaming beyond; for the others dense while ``B·N²`` is at most
    :data:`AUTO_DENSE_MAX_PAIRS`, streaming beyond. Every path ``"auto"`` may pick accepts the
    same options and gives the dense path's second derivatives. ``"triton"`` is checked here, so a
    missing package or a CPU tensor is a clear error before any work.
    """
    if impl == "triton":
        fused_kernels.require(lists.scores)
    if impl != "auto":
        return impl
    return auto_impl(lists.scores.shape[0], lists.length, lists.scores, kernel=kernel, candidates=candidates)


def auto_impl(
    batch: int, length: int, like: Tensor, *, kernel: bool = False, triton: bool = True, candidates: int | None = None
) -> str:
    """What ``impl="auto"`` picks for ``batch`` lists padded to ``length`` items of ``like``'s
    dtype and device (see :func:`resolve_impl`); ``triton``: the loss has a Triton path;
    ``candidates``: the loss has the sorted path, which ranks that many items per list."""
    small = batch * length**2 <= AUTO_DENSE_MAX_PAIRS
    if candidates is not None and not small and 2 * candidates <= length:
        return "sorted"
    if triton and like.is_cuda and fused_kernels.importable():
        return "triton"
    if kernel:
        return "kernel" if length**2 * like.element_size() <= AUTO_KERNEL_MAX_BYTES else "streaming"
    return "dense" if small else "streaming"


def block_ops(impl: str, scores: Tensor) -> Any:
    """The O(N²) block primitives of a streaming implementation: Triton kernels or PyTorch ops."""
    return fused_kernels.kernels_for(scores) if impl == "triton" else blocks.TorchBlocks()


def finish_values(
    values: Tensor, is_empty: Tensor, batch_shape: torch.Size, validate: bool, empty: str, reduction: str
) -> Tensor:
    """Smooth metric values ``[B]`` → checked (a NaN for a list with something to rank is an
    error), with the metric's ``empty`` for the lists ``is_empty`` marks, and ``reduction``: with
    ``"skip"`` an empty list is left out of the mean and gets no gradient, and a batch of only
    empty lists gives 0 with a zero gradient, exactly as in the metric."""
    # Read on the host whenever reading is free (CPU) or allowed; compiled, in one operator.
    if validate and torch.compiler.is_compiling():
        values = validated_smooth_values(values, is_empty)
    elif may_read_values(values, validate):
        values = validated_smooth_values(values, is_empty)  # (the check itself in eager mode)
    if empty == "error":  # refused by a registered check, which torch.compile and torch.func keep too
        values = _relevant_queries(values, is_empty)
    else:
        values = apply_empty(values, is_empty, empty)
    return reduce(values.reshape(batch_shape), reduction)


#: ``values`` once no query is empty (``apply_empty``'s ``"error"``; see :func:`register_check`).
_relevant_queries = register_check(
    "check_queries_relevant", "Tensor values, Tensor is_empty",
    lambda values, is_empty: apply_empty(values, is_empty, "error"),
)


def second_order(dense: Callable[[Tensor], Tensor], scores: Tensor, grad: Tensor) -> Tensor:
    """The gradient ``grad · ∂dense(scores)/∂scores`` as a differentiable graph: what a backward
    with an analytic gradient returns under ``create_graph=True``, so that every path has the
    dense reference's second derivatives (at the dense path's memory). Under a torch.func
    transform, whose backward always asks for such a graph, torch.func's own ``vjp`` builds it
    (``torch.autograd.grad`` does not see the transform's levels)."""
    if transforms_active():
        return torch.func.vjp(dense, scores)[1](grad)[0]
    (result,) = torch.autograd.grad(dense(scores), scores, grad, create_graph=True)
    return result


def one_minus(smooth_ndcg: Callable[P, Tensor], doc: str) -> Callable[P, Tensor]:
    """The loss ``1 − smooth NDCG`` of ``smooth_ndcg``, with exactly its parameters.

    The loss takes the smooth NDCG's own typed parameters (``ParamSpec``, so type checkers and
    IDEs see them; :func:`inspect.signature` follows ``__wrapped__``): one signature to keep, not
    two. ``reduction`` applies to ``1 − NDCG`` per list; skipped lists (NaN) stay out of the mean.
    """

    @functools.wraps(smooth_ndcg)
    def loss(*args: P.args, **kwargs: P.kwargs) -> Tensor:
        reduction = kwargs.pop("reduction", "mean")
        check_option("reduction", reduction, REDUCTIONS)
        per_list = smooth_ndcg(*args, **kwargs, reduction="none")
        return reduce(1.0 - per_list, reduction)

    loss.__name__ = loss.__qualname__ = f"{smooth_ndcg.__name__}_loss"
    loss.__doc__ = doc
    return names_arguments(loss)


def nothing_to_rank(lists: LossLists) -> Tensor:
    """``[B]`` lists a ranking loss calls empty: nothing relevant (IDCG = 0: no real item with a
    positive gain) or fewer than 2 real items."""
    relevant = (lists.gains > 0).any(-1) if lists.idcg is None else lists.idcg > 0
    return ~relevant | (lists.valid.sum(-1) < 2)


def finish_loss(values: Tensor, is_empty: Tensor | None, batch_shape: torch.Size, empty: str, reduction: str) -> Tensor:
    """Per-list losses ``[B]`` → ``empty`` applied, then reduced like the metric (NaN = skipped).
    ``is_empty`` may be None with ``empty="keep"``, which never reads it."""
    if empty == "error":
        values = _lists_to_rank(values, is_empty)
    if empty in ("skip", "zero"):
        # 0, not NaN, where a mean or sum follows: a skipped list then drops out as a 0 term and
        # a smaller count, in fewer operations forward and backward than reduce's NaN-aware mean.
        fill = float("nan") if empty == "skip" and reduction == "none" else 0.0
        values = torch.where(is_empty, torch.full_like(values, fill), values)
    if reduction == "none" or not values.numel():
        return reduce(values.reshape(batch_shape), reduction)
    if reduction == "sum":
        return values.sum()
    if empty != "skip":
        return values.mean()
    return values.sum() / (values.numel() - is_empty.sum()).clamp(min=1).to(values.dtype)  # no list kept: 0


def _check_lists_to_rank(values: Tensor, is_empty: Tensor) -> None:
    if bool(is_empty.any()):
        raise ValueError(
            "a list has nothing to rank (no relevant item, or fewer than two real items) and "
            "empty='error'; choose empty='skip', 'zero' or 'keep'"
        )


#: ``values`` once no list is empty (``empty="error"`` of :func:`finish_loss`; see :func:`register_check`).
_lists_to_rank = register_check("check_lists_to_rank", "Tensor values, Tensor is_empty", _check_lists_to_rank)



__getattr__ = options.moved(
    __name__,
    {name: (f"torch_ndcg.options.{name}", lambda name=name: getattr(options, name))
     for name in ("IMPLS", "NEURAL_IMPLS", "PAIR_IMPLS", "LOSS_EMPTY")},
)  # fmt: skip
