"""torch.func's gradient equals autograd's, and ``vmap`` over a leading batch equals the loop of
single calls, for every loss and every ``impl`` it claims, on drawn shapes, masks, labels (or
teacher scores) and options; where the single calls refuse, ``vmap`` refuses too."""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.func import grad, vmap

import torch_ndcg as tn
from torch_ndcg.options import EMPTY, IMPLS, LOSS_EMPTY, NEURAL_IMPLS, PAIR_IMPLS

LOSSES = sorted(name for name in tn.__all__ if name.endswith("_loss"))
SMOOTH = {"neural_ndcg_loss": NEURAL_IMPLS, "approx_ndcg_loss": IMPLS}
CASES = [
    (name, impl)
    for name in LOSSES
    for impl in (
        [i for i in SMOOTH.get(name, PAIR_IMPLS) if i != "triton"]  # Triton: CUDA only
        if "impl" in inspect.signature(getattr(tn, name)).parameters
        else [None]
    )
]
TOLERANCE = {"rtol": 1e-6, "atol": 1e-9}


def _outcome(run):
    """("value", tensor) or ("error", exception type)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # label-like teachers, swapped-looking inputs
            return "value", run()
    except ValueError as error:
        return "error", type(error)


@st.composite
def _calls(draw):
    name, impl = draw(st.sampled_from(CASES))
    fn = getattr(tn, name)
    parameters = inspect.signature(fn).parameters
    entries, lists, items = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    shape = (entries, lists, items)
    count = entries * lists * items
    reals = st.lists(st.floats(-4, 4, width=64), min_size=count, max_size=count)
    scores = torch.tensor(draw(reals), dtype=torch.float64)
    if "teacher_scores" in parameters:
        target = torch.tensor(draw(reals), dtype=torch.float64)
    else:
        target = torch.tensor(draw(st.lists(st.integers(0, 3), min_size=count, max_size=count)))
    mask = None
    if draw(st.booleans()):
        mask = torch.tensor(draw(st.lists(st.booleans(), min_size=count, max_size=count))).reshape(shape)
    options = {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if "empty" in parameters:  # (the twins of DCG and RBP call no list empty)
        options["empty"] = draw(st.sampled_from(EMPTY if name in ("neural_ndcg_loss", "approx_ndcg_loss") else LOSS_EMPTY))
    if impl is not None:
        options["impl"] = impl
    if "k" in parameters:
        options["k"] = draw(st.sampled_from([None, 1, 3]))
    if name == "neural_ndcg_loss":
        options["sinkhorn_iters"] = draw(st.integers(1, 6))
        options["transposed"] = draw(st.booleans())
    if "temperature" in parameters:
        options["temperature"] = draw(st.sampled_from([0.5, 1.0, 2.0]))

    def call(s, t, m):
        return fn(s, t, mask=m, **options)

    return call, scores.reshape(shape), target.reshape(shape), mask


@pytest.mark.slow
@given(_calls())
def test_torch_func_equals_autograd_and_the_loop(case):
    call, scores, target, mask = case
    masks = [None] * len(scores) if mask is None else list(mask)

    # vmap over the leading batch (scores, labels and mask alike) = the loop of single calls.
    loop = [_outcome(lambda one=one: call(*one)) for one in zip(scores, target, masks)]
    batched = _outcome(lambda: vmap(call, in_dims=(0, 0, None if mask is None else 0))(scores, target, mask))
    if any(kind == "error" for kind, _ in loop):
        assert batched[0] == "error"
    else:
        assert batched[0] == "value"
        torch.testing.assert_close(batched[1], torch.stack([value for _, value in loop]), equal_nan=True, **TOLERANCE)

    # torch.func.grad of the summed losses = autograd's gradient, entry by entry.
    for one, (kind, value) in zip(zip(scores, target, masks), loop):
        if kind == "error":
            continue
        s, t, m = one

        def total(x):
            return call(x, t, m).nansum()

        leaf = s.clone().requires_grad_()
        total(leaf).backward()
        kind, gradient = _outcome(lambda: grad(total)(s))
        assert kind == "value"
        expected = torch.zeros_like(s) if leaf.grad is None else leaf.grad  # (a loss of constants)
        torch.testing.assert_close(gradient, expected, **TOLERANCE)
