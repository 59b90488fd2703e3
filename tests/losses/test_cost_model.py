"""impl="auto" for NeuralNDCG: the cost model's choice (the selection logic, not the timings)."""

from __future__ import annotations

import torch

import torch_ndcg as tn
from torch_ndcg.losses import common, cost_model
from torch_ndcg.losses.cost_model import Cost

CPU = torch.device("cpu")


def _lists(lengths: list[int], width: int) -> common.LossLists:
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    return common.prepare(torch.randn(len(lengths), width), torch.ones(len(lengths), width), None, mask,
                          "linear", "log2", True)  # fmt: skip


def test_ragged_kernel_work_follows_the_real_lengths_and_streaming_the_padded_width():
    lengths = [200] + [10] * 63
    calls, elements = cost_model.work("kernel", lengths, 200)
    assert 200**2 + 63 * 10**2 <= elements < 2 * (200**2 + 63 * 10**2) and calls == 2
    assert cost_model.work("streaming", lengths, 200) == (1, 64 * 200**2)


def test_the_cheaper_estimate_wins():
    lengths = [27] * 64
    fast_kernel = {"kernel": Cost(1e-4, 1e-9), "streaming": Cost(1e-4, 1e-8)}
    fast_streaming = {"kernel": Cost(1e-2, 1e-9), "streaming": Cost(1e-6, 1e-10)}
    assert cost_model.cheaper(fast_kernel, lengths, 27) == "kernel"
    assert cost_model.cheaper(fast_streaming, lengths, 27) == "streaming"
    # Per-call costs decide for tiny lists, per-element costs for big ones.
    mixed = {"kernel": Cost(1e-3, 1e-9), "streaming": Cost(1e-5, 1e-8)}
    assert cost_model.cheaper(mixed, [4] * 2, 4) == "streaming"
    assert cost_model.cheaper(mixed, [512] * 8, 512) == "kernel"


def test_costs_come_from_the_device_type_and_the_nearest_thread_count(monkeypatch):
    one, four = Cost(1.0, 0.0), Cost(4.0, 0.0)
    monkeypatch.setattr(cost_model, "MEASURED", {
        ("cpu", 1, "kernel"): one, ("cpu", 1, "streaming"): one,
        ("cpu", 4, "kernel"): four, ("cpu", 4, "streaming"): four,
    })  # fmt: skip
    assert cost_model.costs_for(CPU, 1)["kernel"] is one
    assert cost_model.costs_for(CPU, 3)["kernel"] is four
    assert cost_model.costs_for(CPU, 64)["streaming"] is four
    assert cost_model.costs_for(torch.device("cuda"), 1) is None  # not measured: no guess


def test_auto_follows_the_model_within_the_kernel_memory_cap(monkeypatch):
    lists = _lists([27] * 4, 27)
    slow_kernel = {
        ("cpu", t, impl): Cost(1.0 if impl == "kernel" else 1e-6, 0.0) for t in (1, 2) for impl in ("kernel", "streaming")
    }
    monkeypatch.setattr(cost_model, "MEASURED", slow_kernel)
    assert common.resolve_impl("auto", lists, kernel=True) == "streaming"
    monkeypatch.setattr(cost_model, "MEASURED", {})
    assert common.resolve_impl("auto", lists, kernel=True) == "kernel"  # nothing measured: kernel
    monkeypatch.setattr(common, "AUTO_KERNEL_MAX_BYTES", 26 * 26 * 4)  # the kernel does not fit
    assert common.resolve_impl("auto", lists, kernel=True) == "streaming"
    assert common.resolve_impl("kernel", lists, kernel=True) == "kernel"  # an explicit choice stays


def test_the_committed_model_picks_the_kernel_where_the_losses_benchmark_measures_it_faster():
    # bench losses: the kernel path is 7–20× faster than streaming at these sizes on one thread.
    costs = cost_model.costs_for(CPU, 1)
    assert costs is not None
    for batch, length in ((64, 27), (64, 100), (32, 512)):
        assert cost_model.cheaper(costs, [length] * batch, length) == "kernel"
    assert tn.neural_ndcg_loss(torch.randn(2, 5), torch.ones(2, 5)).isfinite()
