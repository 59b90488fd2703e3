"""Which implementation of the losses runs, and why: the one place that says it."""

from __future__ import annotations

import torch

from .. import fused
from . import common
from .options import DEFAULT_TEMPERATURE
from .relaxations.approximate_ranks import candidates
from .relaxations.sinkhorn import loops as sinkhorn_loops
from .relaxations.sinkhorn.op import sinkhorn_dcg

# The losses whose impl="auto" chooses between implementations, and whether each has the
# kernel path (NeuralNDCG only) and a Triton path.
AUTO_LOSSES = {"neural_ndcg": (True, True), "approx_ndcg": (False, True), "ranknet/pairwise_hinge/lambda": (False, False)}


def backends(
    batch: int = 64,
    length: int = 100,
    *,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
    k: int | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
) -> dict[str, object]:
    """What runs for ``batch`` lists of ``length`` items (padded width) in ``dtype`` on ``device``,
    for NDCG@``k`` at ``temperature`` (ApproxNDCG's choice reads them).

    Returns a dict:

    * ``"auto"``: the implementation ``impl="auto"`` picks per loss for that shape (a rule on
      shapes and options only: ApproxNDCG's sorted path when the ``M = min(N, ⌈2(k + 40τ)⌉)``
      items that can reach the cutoff are at most half the list, beyond the smallest batches;
      dense while ``B·N² ≤ 2¹⁶``; NeuralNDCG's kernel while one ``N × N`` kernel takes at most
      256 MiB; Triton for CUDA tensors when installed; streaming beyond);
    * ``"neuralsort_ndcg"``: the one implementation of the NeuralSort top-rows loss (it has no
      ``impl``), and its cost;
    * ``"why"``: the rule, in words, for each choice;
    * ``"triton"``: whether Triton imports, and whether ``impl="triton"`` can run on ``device``;
    * ``"operator"``: NeuralNDCG's kernel path, a registered operator, and the devices it has
      implementations for;
    * ``"compiled_code"``: the compiled loops of the kernel path on CPU
      (``torch_ndcg._sinkhorn_loops``, built when the package was installed, where a C compiler
      was found), or ``"none: …"`` with the reason, when NumPy runs those loops instead. Nothing
      is ever compiled or loaded at run time.

    An ``impl`` named explicitly always runs as named, or raises (never falls back).
    ``"sorted"`` (ApproxNDCG) and ``neuralsort_ndcg`` are the long-list forms: O(N log N) plus
    O(k·N) for NDCG@k, where the others cost O(N²).

    Example:
        >>> import torch_ndcg as tn
        >>> info = tn.backends(64, 27)
        >>> info["auto"]["neural_ndcg"], info["auto"]["approx_ndcg"]
        ('kernel', 'dense')
        >>> tn.backends(1, 100_000, k=10)["auto"]["approx_ndcg"]
        'sorted'
    """
    like = torch.empty(0, dtype=dtype, device=device)
    triton_imports = fused.importable()
    picks, why = {}, {}
    for loss, (kernel, triton) in AUTO_LOSSES.items():
        ranked = candidates(length, k, temperature) if loss == "approx_ndcg" else None
        impl = common.auto_impl(batch, length, like, kernel=kernel, triton=triton, candidates=ranked)
        picks[loss] = impl
        if impl == "sorted":
            why[loss] = f"the {ranked} items per list that can reach the cutoff are at most half of N = {length}"
        elif impl == "triton":
            why[loss] = "CUDA tensors and Triton installed"
        elif kernel:
            size = length**2 * like.element_size()
            why[loss] = (f"one {length}x{length} kernel is {size / 2**20:.3g} MiB, "
                         f"{'within' if impl == 'kernel' else 'over'} the {common.AUTO_KERNEL_MAX_BYTES // 2**20} MiB cap")  # fmt: skip
        else:
            pairs = batch * length**2
            why[loss] = f"B·N² = {pairs} {'≤' if impl == 'dense' else '>'} {common.AUTO_DENSE_MAX_PAIRS}"
    usable = triton_imports and (like.is_cuda or fused.interpreting())
    return {
        "device": str(like.device),
        "dtype": str(dtype).replace("torch.", ""),
        "threads": torch.get_num_threads(),
        "auto": picks,
        "why": why,
        "triton": {"importable": triton_imports, "usable_here": usable},
        "operator": {"name": sinkhorn_dcg._qualname, "devices": ["cpu", "cuda"]},
        "neuralsort_ndcg": "top-k NeuralSort rows without Sinkhorn (autograd.Function, analytic backward): "
        "O(N log N + k·N) time, O(k·N) memory, any device",
        "compiled_code": sinkhorn_loops.compiled_code(),
    }


def describe(batch: int = 64, length: int = 100, **options: object) -> str:
    """:func:`backends` as one line per entry (what the benchmarks print in their header)."""
    info = backends(batch, length, **options)
    lines = [f"torch_ndcg backends for B={batch}, N={length}, {info['dtype']} on {info['device']} "
             f"({info['threads']} threads); nothing compiled at run time"]  # fmt: skip
    lines.append(f"  compiled code: {info['compiled_code']}")
    for loss, impl in info["auto"].items():
        lines.append(f"  impl='auto' for {loss}: {impl} ({info['why'][loss]})")
    triton = info["triton"]
    lines.append(f"  triton: {'installed' if triton['importable'] else 'not installed'}, "
                 f"{'usable' if triton['usable_here'] else 'not usable'} on {info['device']}")  # fmt: skip
    lines.append(f"  NeuralNDCG kernel path: operator {info['operator']['name']} (CPU and CUDA implementations)")
    lines.append(f"  neuralsort_ndcg: {info['neuralsort_ndcg']}")
    return "\n".join(lines)
