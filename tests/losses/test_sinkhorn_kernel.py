"""The kernel path equals the dense reference, stays exact at the extremes, stops early like allRank,
groups ragged lists by length, keeps no N² state and leaves the thread's subnormal mode as it was."""

from __future__ import annotations

import contextlib
import itertools
import sys

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses.relaxations.sinkhorn import kernel as sinkhorn_kernel, plan as sinkhorn_plan

from loss_batches import awkward_batch

TOL = {torch.float32: 1e-5, torch.float64: 1e-10}
VARIANTS = [
    {"sinkhorn_iters": 8},
    {"sinkhorn_iters": 8, "transposed": True},
    {"sinkhorn_iters": 5, "stochastic": True, "samples": 3, "beta": 0.5},
]


def _value_and_grad(scores, relevance, mask, impl, **options):
    if options.get("stochastic"):
        options["generator"] = torch.Generator().manual_seed(7)  # the same noise for both impls
    x = scores.clone().requires_grad_()
    values = tn.neural_ndcg_loss(x, relevance, mask=mask, impl=impl, reduction="none", empty="zero", **options)
    (values * torch.arange(1, len(values) + 1, dtype=values.dtype)).sum().backward()
    return values.detach(), x.grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, None])
@pytest.mark.parametrize("options", VARIANTS)
@pytest.mark.parametrize("group_elements", [2**18, 100])  # one group, or one list per group
def test_kernel_equals_dense(monkeypatch, dtype, k, options, group_elements):
    monkeypatch.setattr(sinkhorn_plan, "GROUP_ELEMENTS", group_elements)
    scores, relevance, mask = awkward_batch(dtype)
    options = {"k": k, "gain": "exp2", "temperature": 0.5, **options}
    dense = _value_and_grad(scores, relevance, mask, "dense", **options)
    kernel = _value_and_grad(scores, relevance, mask, "kernel", **options)
    torch.testing.assert_close(kernel, dense, atol=TOL[dtype], rtol=TOL[dtype])
    assert dense[1].abs().sum() > 0


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("iters", [2, 8])  # the backward rebuilds the kernel (N = 9 > 5 steps) or keeps it
@pytest.mark.parametrize("group_elements", [2**18, 100])
def test_batches_without_padding_run_as_slices_and_equal_dense(monkeypatch, transposed, iters, group_elements):
    monkeypatch.setattr(sinkhorn_plan, "GROUP_ELEMENTS", group_elements)
    scores, relevance, _ = awkward_batch(torch.float64)
    options = {"k": 3, "gain": "exp2", "temperature": 0.5, "sinkhorn_iters": iters, "transposed": transposed}
    dense = _value_and_grad(scores, relevance, None, "dense", **options)
    kernel = _value_and_grad(scores, relevance, None, "kernel", **options)
    torch.testing.assert_close(kernel, dense, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize(("temperature", "scale"), [(1e-3, 1e4), (1e-3, 1.0), (1e3, 1e4)])
def test_kernel_stays_exact_at_extreme_scores_and_temperatures(transposed, temperature, scale):
    gen = torch.Generator().manual_seed(3)
    scores = scale * torch.randn(3, 10, dtype=torch.float64, generator=gen)
    scores[0, :3] = scores[0, 4]  # ties
    relevance = torch.randint(0, 31, (3, 10), generator=gen).double()
    mask = torch.rand(3, 10, generator=gen) > 0.2
    options = {"k": 4, "gain": "exp2", "temperature": temperature, "sinkhorn_iters": 20, "transposed": transposed}
    dense = _value_and_grad(scores, relevance, mask, "dense", **options)
    kernel = _value_and_grad(scores, relevance, mask, "kernel", **options)
    assert torch.isfinite(kernel[1]).all()
    torch.testing.assert_close(kernel[0], dense[0], atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(kernel[1], dense[1], atol=1e-9 * max(1.0, dense[1].abs().max().item()), rtol=1e-7)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("big", [1.0001, 1.1])
def test_absorbing_the_scalings_and_log_domain_steps_change_nothing(monkeypatch, transposed, big):
    # Real inputs rarely push the scalings past BIG; a tiny BIG makes every block roll back, absorb
    # and replay (and, near 1, take log-domain steps), which must leave values and gradients alone.
    events = []
    for name in ("absorb", "log_step"):
        real = getattr(sinkhorn_kernel._Run, name)
        monkeypatch.setattr(sinkhorn_kernel._Run, name, lambda run, h, _real=real, _n=name: events.append(_n) or _real(run, h))
    monkeypatch.setattr(sinkhorn_kernel, "_big", lambda dtype: big)
    scores, relevance, mask = awkward_batch(torch.float64)
    options = {"k": 3, "gain": "exp2", "temperature": 0.3, "sinkhorn_iters": 12, "transposed": transposed}
    dense = _value_and_grad(scores, relevance, mask, "dense", **options)
    kernel = _value_and_grad(scores, relevance, mask, "kernel", **options)
    torch.testing.assert_close(kernel, dense, atol=1e-10, rtol=1e-10)
    assert "absorb" in events and ("log_step" in events or big > 1.01)


@pytest.mark.parametrize("check_every", [1, 3, 1000])
def test_tol_stops_after_the_first_converged_iteration_however_often_it_is_read(monkeypatch, check_every):
    monkeypatch.setattr(sinkhorn_kernel, "CHECK_EVERY", check_every)
    gen = torch.Generator().manual_seed(5)
    scores = torch.randn(4, 9, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 4, (4, 9), generator=gen).double()
    early = tn.neural_ndcg(scores, relevance, 3, impl="kernel", tol=1e-4, reduction="none")
    fixed = [tn.neural_ndcg(scores, relevance, 3, impl="kernel", sinkhorn_iters=i, reduction="none") for i in range(1, 51)]
    stopped = [i + 1 for i, value in enumerate(fixed) if torch.equal(value, early)]
    assert stopped and stopped[0] < 50  # equals a fixed, smaller number of iterations ...
    # ... the first one whose sums are all within tol (allRank's criterion): one fewer is not there yet.
    assert not torch.allclose(fixed[stopped[0] - 2], fixed[stopped[0] - 1], atol=1e-12, rtol=0)


def _kernel_gradient(scores, relevance, **options):
    x = scores.clone().requires_grad_()
    tn.neural_ndcg_loss(x, relevance, impl="kernel", **options).backward()
    return x.grad


@pytest.mark.parametrize(
    "width, scale, temperature",
    [(4, None, 0.01), (90, 10.0, 0.01), (200, 1.0, 0.01)],
    ids=["four items", "C loops' width", "long list"],
)
def test_a_float32_group_run_in_float64_with_tol_has_the_float64_inputs_gradient(width, scale, temperature):
    # Too coarse for float32 at this temperature, the group runs in float64, and with tol its
    # backward reruns the checked forward: that rerun's scalings are what the walk back reads.
    if scale is None:
        scores, relevance = torch.tensor([[300.0, -200.0, 100.0, 0.0]]), torch.tensor([[1, 0, 2, 0]])
    else:
        gen = torch.Generator().manual_seed(0)
        scores = torch.randn(1, width, generator=gen) * scale
        relevance = torch.randint(0, 3, (1, width), generator=gen)
    options = {"temperature": temperature, "tol": 1e-6}
    float32 = _kernel_gradient(scores, relevance, **options)
    float64 = _kernel_gradient(scores.double(), relevance, **options)
    assert float32.dtype == torch.float32
    torch.testing.assert_close(float32.double(), float64, atol=1e-5, rtol=0)
    if scale is not None:
        assert float64.abs().max() > 1e-3  # a gradient that is there to compare


def test_tol_needs_the_kernel_path():
    with pytest.raises(ValueError, match="tol"):
        tn.neural_ndcg(torch.randn(2, 5), torch.ones(2, 5), impl="streaming", tol=1e-6)


def test_ragged_lists_cost_about_the_sum_of_their_squares():
    lengths = sorted([240, 200, 130, 64, 50] + [12, 9, 8, 5, 3, 1] * 10, reverse=True)
    groups = sinkhorn_plan.plan(lengths, budget=2**18)
    assert sorted(i for first, stop, _ in groups for i in range(first, stop)) == list(range(len(lengths)))
    cost = sum((stop - first) * width**2 for first, stop, width in groups)
    padding_allowance = len(groups) * sinkhorn_plan.GROUP_OVERHEAD_ELEMENTS
    assert cost <= 16 / 9 * sum(n * n for n in lengths) + padding_allowance  # never B · max(n)² (70 × 240²)
    assert len(groups) <= 6
    assert all(width == lengths[first] for first, _, width in groups)


def test_groups_are_the_cheapest_contiguous_split():
    """Against every split of the sorted lists into contiguous groups (the budget not binding)."""
    gen = torch.Generator().manual_seed(5)
    overhead = sinkhorn_plan.GROUP_OVERHEAD_ELEMENTS
    for _ in range(30):
        lengths = sorted(torch.randint(1, 200, (10,), generator=gen).tolist(), reverse=True)
        groups = sinkhorn_plan.plan(lengths, budget=2**30)
        cost = sum((stop - first) * width**2 + overhead for first, stop, width in groups)
        cheapest = min(
            sum((stop - first) * lengths[first] ** 2 + overhead for first, stop in zip((0, *cuts), (*cuts, 10)))
            for r in range(10)
            for cuts in itertools.combinations(range(1, 10), r)
        )
        assert cost == cheapest
        assert [i for first, stop, _ in groups for i in range(first, stop)] == list(range(10))
    # A binding budget cuts a run into equal chunks within it; the short list rides in the last
    # chunk (10⁴ − 9 padding elements cost less than a group of its own).
    groups = sinkhorn_plan.plan([100] * 7 + [3], budget=3 * 100**2)
    assert [stop - first for first, stop, _ in groups] == [2, 3, 3]
    assert all((stop - first) * width**2 <= 3 * 100**2 for first, stop, width in groups)


def test_kernel_saves_no_n_squared_tensor():
    batch, length, iters = 3, 40, 3
    scores = torch.randn(batch, length, requires_grad=True)
    sizes = []

    def pack(tensor):
        sizes.append(tensor.numel())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        tn.neural_ndcg_loss(scores, torch.randint(0, 3, (batch, length)), impl="kernel", sinkhorn_iters=iters)
    assert max(sizes) <= (2 * iters + 1) * batch * length < batch * length * length


def _long_list_grad() -> torch.Tensor:
    gen = torch.Generator().manual_seed(1)
    scores = torch.randn(1, 240, generator=gen).requires_grad_()
    tn.neural_ndcg_loss(scores, torch.randint(0, 5, (1, 240), generator=gen), 10, gain="exp2", impl="kernel").backward()
    return scores.grad


def test_flushing_subnormals_in_the_backward_changes_nothing_and_is_undone(monkeypatch):
    tiny = sys.float_info.min  # a Python float product runs on the same floating-point unit
    flushed = _long_list_grad()
    assert tiny * 0.5 > 0  # the backward restored gradual underflow
    torch.set_flush_denormal(True)
    try:
        _long_list_grad()
        assert tiny * 0.5 == 0  # ... and keeps a caller's flushing
    finally:
        torch.set_flush_denormal(False)
    monkeypatch.setattr(sinkhorn_kernel, "_subnormals_flushed", lambda device: contextlib.nullcontext())
    torch.testing.assert_close(flushed, _long_list_grad(), rtol=1e-6, atol=0)
