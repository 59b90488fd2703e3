"""Every loss under torch.func: ``grad`` and ``jacrev`` equal autograd's gradient on every
``impl``, ``vmap`` over a leading batch equals the loop of single calls (per-sample gradients
too), the value checks still refuse bad input under ``vmap``, and what cannot work is refused
with an error naming the way out."""

from __future__ import annotations

import inspect
import warnings
from types import SimpleNamespace

import pytest
import torch
from torch.func import grad, jacrev, vmap

import torch_ndcg as tn
from torch_ndcg.definitions import discounts
from torch_ndcg.losses.relaxations.approximate_ranks import StreamingRanks, dense_ranks
from torch_ndcg.losses.common import SortRelaxation
from torch_ndcg.losses.relaxations.blocks import TorchBlocks
from torch_ndcg.losses.relaxations.sinkhorn.dense import dense_dcg
from torch_ndcg.losses.relaxations.sinkhorn.streaming import sinkhorn_dcg
from torch_ndcg.options import IMPLS, NEURAL_IMPLS, PAIR_IMPLS

LOSSES = sorted(name for name in tn.__all__ if name.endswith("_loss")) + ["neural_ndcg", "approx_ndcg"]
SMOOTH = {"neural_ndcg_loss": NEURAL_IMPLS, "neural_ndcg": NEURAL_IMPLS,
          "approx_ndcg_loss": IMPLS, "approx_ndcg": IMPLS}  # fmt: skip
# Triton runs only on CUDA (tests/fused); "auto" picks one of the others.
CASES = [
    (name, impl)
    for name in LOSSES
    for impl in (
        [i for i in SMOOTH.get(name, PAIR_IMPLS) if i != "triton"]
        if "impl" in inspect.signature(getattr(tn, name)).parameters
        else [None]
    )
]


def _teacher(name: str) -> bool:
    return "teacher_scores" in inspect.signature(getattr(tn, name)).parameters


def _call(name: str, impl: str | None, **options):
    fn = getattr(tn, name)
    if impl is not None:
        options["impl"] = impl
    if name.startswith("neural_ndcg"):
        options.setdefault("sinkhorn_iters", 5)

    def call(scores, target, mask, **more):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # label-like teachers, swapped-looking inputs
            return fn(scores, target, mask=mask, **options, **more)

    return call


def _inputs(name: str, shape: tuple[int, ...], seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(shape, dtype=torch.float64, generator=gen)
    if _teacher(name):
        target = torch.randn(shape, dtype=torch.float64, generator=gen)
    else:
        target = torch.randint(0, 4, shape, generator=gen)
    mask = torch.rand(shape, generator=gen) > 0.25
    mask[..., :2] = True
    return scores, target, mask


def _autograd(call, scores, target, mask):
    leaf = scores.clone().requires_grad_()
    call(leaf, target, mask).sum().backward()
    return leaf.grad


def test_every_loss_is_covered():
    public = {name for name in tn.__all__ if name.endswith("_loss")}
    assert public <= {name for name, _ in CASES}
    assert {impl for name, impl in CASES if name == "neural_ndcg_loss"} == {"dense", "kernel", "streaming", "auto"}


@pytest.mark.parametrize(("name", "impl"), CASES)
def test_grad_and_jacrev_equal_autograd(name, impl):
    scores, target, mask = _inputs(name, (3, 6))
    call = _call(name, impl)
    expected = _autograd(call, scores, target, mask)
    torch.testing.assert_close(grad(lambda s: call(s, target, mask))(scores), expected)
    per_list = _call(name, impl, reduction="none")
    jacobian = jacrev(lambda s: per_list(s, target, mask))(scores)  # [lists, lists, items]
    rows = torch.stack([_autograd(lambda s, t, m: per_list(s, t, m)[b], scores, target, mask) for b in range(3)])
    torch.testing.assert_close(jacobian, rows)


# Pair weights beyond the defaults run the general weighted path (torch_ndcg.pair_weights), and
# ListMLE's position weights an autograd one (torch_ndcg.position_weights).
WEIGHTED = [(name, impl, weighting) for name in ("ranknet_loss", "pairwise_hinge_loss", "lambda_loss")
            for impl in ("dense", "streaming") for weighting in ("dcg2", "ndcg_loss1")]  # fmt: skip
WEIGHTED.append(("listmle_loss", None, "plistmle"))


@pytest.mark.parametrize(("name", "impl", "weighting"), WEIGHTED)
def test_weightings_under_grad_jacrev_and_vmap(name, impl, weighting):
    scores, target, mask = _inputs(name, (3, 2, 6), seed=8)
    metric = {} if name == "listmle_loss" else {"k": 3, "gain": "exp2"}
    call = _call(name, impl, weighting=weighting, **metric, reduction="none")
    total = _call(name, impl, weighting=weighting, **metric, reduction="sum")
    first = scores[0], target[0], mask[0]
    torch.testing.assert_close(grad(total)(*first), _autograd(total, *first))
    jacobian = jacrev(lambda s: call(s, *first[1:]))(first[0])
    rows = torch.stack([_autograd(lambda s, t, m: call(s, t, m)[b], *first) for b in range(2)])
    torch.testing.assert_close(jacobian, rows)
    loop = torch.stack([call(*one) for one in zip(scores, target, mask)])
    torch.testing.assert_close(vmap(call)(scores, target, mask), loop, equal_nan=True)
    per_sample = vmap(grad(total))(scores, target, mask)
    torch.testing.assert_close(per_sample, torch.stack([_autograd(total, *one) for one in zip(scores, target, mask)]))


@pytest.mark.parametrize(("name", "impl"), CASES)
def test_vmap_equals_the_loop_of_single_calls(name, impl):
    scores, target, mask = _inputs(name, (4, 2, 6), seed=1)
    call = _call(name, impl, reduction="none")
    batched = vmap(call)(scores, target, mask)
    loop = torch.stack([call(*one) for one in zip(scores, target, mask)])
    torch.testing.assert_close(batched, loop, equal_nan=True)  # NaN: a skipped list
    shared = vmap(call, in_dims=(0, None, None))(scores, target[0], mask[0])  # only the scores batched
    torch.testing.assert_close(shared, torch.stack([call(s, target[0], mask[0]) for s in scores]), equal_nan=True)


@pytest.mark.parametrize(("name", "impl"), CASES)
def test_per_sample_gradients_equal_the_loop(name, impl):
    scores, target, mask = _inputs(name, (3, 1, 5), seed=2)
    call = _call(name, impl)
    per_sample = vmap(grad(call))(scores, target, mask)
    torch.testing.assert_close(per_sample, torch.stack([_autograd(call, *one) for one in zip(scores, target, mask)]))


@pytest.mark.parametrize("impl", ["streaming", "kernel"])
def test_grad_of_grad_is_the_dense_second_derivative(impl):
    scores, target, mask = _inputs("neural_ndcg_loss", (2, 5), seed=3)

    def penalty(call):
        return grad(lambda s: grad(lambda x: call(x, target, mask))(s).square().sum())(scores)

    torch.testing.assert_close(penalty(_call("neural_ndcg_loss", impl)), penalty(_call("neural_ndcg_loss", "dense")))
    # Nothing made under the transforms outlives them in a cache (the discounts are cached).
    assert not torch._C._functorch.is_functorch_wrapped_tensor(discounts(5, "log2", torch.float64, scores.device))


@pytest.mark.parametrize(
    ("name", "impl"), [("neural_ndcg_loss", "streaming"), ("listnet_loss", None), ("listmle_loss", None),
                       ("ranknet_loss", "streaming"), ("distill_listmle_loss", None)],
)  # fmt: skip
def test_vmap_refuses_a_bad_entry_as_the_single_call_does(name, impl):
    scores, target, mask = _inputs(name, (3, 2, 5), seed=4)
    scores[2, 1, 0] = float("nan")  # a real item of the last entry only
    call = _call(name, impl)
    with pytest.raises(ValueError, match="NaN") as single:
        call(scores[2], target[2], mask[2])
    with pytest.raises(ValueError, match="NaN") as batched:
        vmap(call)(scores, target, mask)
    assert str(batched.value) == str(single.value)
    with pytest.raises(ValueError, match="NaN") as differentiated:
        grad(lambda s: call(s, target[2], mask[2]).sum())(scores[2])
    assert str(differentiated.value) == str(single.value)


@pytest.mark.parametrize(("name", "impl"), [("approx_ndcg_loss", "dense"), ("lambda_loss", "streaming"),
                                            ("softmax_loss", None), ("margin_mse_loss", None)])
def test_vmap_keeps_empty_error(name, impl):
    scores, target, mask = _inputs(name, (3, 2, 5), seed=5)
    if _teacher(name):
        mask[1, 0, 1:] = False  # entry 1's first list has one real item: nothing to rank
    else:
        target[1, 0] = 0  # entry 1's first list has nothing relevant
    call = _call(name, impl, empty="error")
    with pytest.raises(ValueError, match="empty='error'"):
        vmap(call)(scores, target, mask)
    vmap(call)(scores[::2], target[::2], mask[::2])  # the other entries pass


def test_vmap_with_a_callable_gain_names_validate():
    scores, target, mask = _inputs("neural_ndcg_loss", (2, 2, 5))
    call = _call("neural_ndcg_loss", "dense", gain=lambda rel: rel * 2.0)
    with pytest.raises(ValueError, match="validate=False"):
        vmap(call)(scores, target, mask)
    unchecked = _call("neural_ndcg_loss", "dense", gain=lambda rel: rel * 2.0, validate=False)
    loop = torch.stack([unchecked(*one) for one in zip(scores, target, mask)])
    torch.testing.assert_close(vmap(unchecked)(scores, target, mask), loop)
    first = scores[0], target[0], mask[0]
    torch.testing.assert_close(grad(call)(*first), _autograd(call, *first))  # grad alone reads values


def test_kernel_with_tol_under_grad_names_tol():
    scores, target, mask = _inputs("neural_ndcg_loss", (2, 5))
    call = _call("neural_ndcg_loss", "kernel", tol=1e-6)
    with pytest.raises(ValueError, match="tol"):
        grad(call)(scores, target, mask)
    batched = vmap(call)(scores[None].expand(2, 2, 5), target[None].expand(2, 2, 5), mask[None].expand(2, 2, 5))
    torch.testing.assert_close(batched, call(scores, target, mask).expand(2))  # vmap of the value works


def test_a_module_of_block_primitives_works_under_torch_func():
    # impl="triton" hands the streaming Functions a module of kernels (no buffers to release);
    # a namespace of the PyTorch primitives stands in for it here (the kernels need CUDA).
    blocks = TorchBlocks()
    ops = SimpleNamespace(**{name: getattr(blocks, name) for name in (
        "lse_outer", "lse_outer_backward", "abs_diff_sum", "abs_diff_sum_backward", "approx_ranks", "approx_ranks_backward",
    )})  # fmt: skip
    scores, _, mask = _inputs("neural_ndcg_loss", (3, 2, 6), seed=6)
    mask = mask[0]  # the lists as the losses prepare them: scores and gains 0 at padding, no weight past n
    gains = torch.rand(2, 6, dtype=torch.float64).where(mask, 0.0)
    weights = torch.rand(2, 6, dtype=torch.float64).where(torch.arange(6) < mask.sum(-1, keepdim=True), 0.0)
    relaxation = SortRelaxation(mask, weights, gains, 0.5, 3, False)

    def streaming(s):
        return sinkhorn_dcg(s.where(mask, 0.0), relaxation, ops).sum()

    def dense(s):
        return dense_dcg(s.where(mask, 0.0), relaxation).sum()

    torch.testing.assert_close(vmap(streaming)(scores), vmap(dense)(scores))
    torch.testing.assert_close(vmap(grad(streaming))(scores), vmap(grad(dense))(scores))
    ranks = vmap(lambda s: StreamingRanks.apply(s, mask, 0.5, ops))(scores)
    torch.testing.assert_close(ranks, vmap(lambda s: dense_ranks(s, mask, 0.5))(scores))


@pytest.mark.parametrize(("name", "impl"), [("listnet_loss", None), ("neural_ndcg_loss", "kernel"),
                                            ("distill_ranknet_loss", None)])
def test_flat_items_under_torch_func(name, impl):
    scores, target, _ = _inputs(name, (3, 7), seed=7)
    indexes = torch.tensor([4, 4, 1, 4, 1, 9, 9])
    call = _call(name, impl, reduction="none")

    def flat(s, t, ids):
        return call(s, t, None, indexes=ids)

    torch.testing.assert_close(vmap(flat, in_dims=(0, 0, None))(scores, target, indexes),
                               torch.stack([flat(s, t, indexes) for s, t in zip(scores, target)]), equal_nan=True)
    total = _call(name, impl)
    first = scores[0], target[0], None
    expected = _autograd(lambda s, t, m: total(s, t, m, indexes=indexes), *first)
    torch.testing.assert_close(grad(lambda s: total(s, target[0], None, indexes=indexes))(scores[0]), expected)
    with pytest.raises(ValueError, match="in_dims=None"):  # lists that differ per entry: padded lists instead
        vmap(flat)(scores, target, indexes.expand(3, 7))
