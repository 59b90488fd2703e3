"""The compiled Sinkhorn chains equal the NumPy loops they replace (inf and NaN included), are
built once per machine and cached, and their absence only costs speed."""

from __future__ import annotations

import subprocess

import numpy
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torch_ndcg as tn
from torch_ndcg.losses import native

needs_build = pytest.mark.skipif(native._compiler() is None, reason="no C compiler on this machine")
TOL = {torch.float32: 2e-6, torch.float64: 1e-14}


@pytest.fixture
def fresh_build(monkeypatch, tmp_path):
    """An empty cache folder and no loaded library; the default one is loaded again afterwards."""
    monkeypatch.setenv("TORCH_NDCG_CACHE", str(tmp_path))
    native.library.cache_clear()
    yield tmp_path
    native.library.cache_clear()


def _reference_scalings(start, right, kinds):
    rows, given = [], start.numpy()[:, None, :]
    for kind in kinds:
        given = 1 / numpy.matmul(given, right[kind].numpy())
        rows.append(given[:, 0])
    return torch.from_numpy(numpy.stack(rows))


def _reference_walk_back(rows, m, kinds):
    out = rows.numpy().copy()
    for h in range(len(out) - 1, 0, -1):
        out[h - 1] *= numpy.matmul(out[h][:, None, :], m[kinds[h]].numpy())[:, 0]
    return torch.from_numpy(out)


def _inputs(batch, width, steps, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    k = torch.rand(batch, width, width, generator=gen, dtype=dtype) + 0.05
    kinds = [int(bit) for bit in torch.randint(0, 2, (steps,), generator=gen)]
    start = torch.rand(batch, width, generator=gen, dtype=dtype) + 0.5
    return (k, k.transpose(1, 2).contiguous()), kinds, start


@needs_build
def test_the_chains_build_where_a_compiler_is():
    assert native.library() is not None
    assert native.usable(torch.ones(2, 3), torch.ones(2, 3, dtype=torch.float32))


@needs_build
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("width", [1, 2, 7, 8, 15, 16, 17, 27, 32, 33, 100])
def test_scalings_and_walk_back_equal_the_numpy_loops(dtype, width):
    right, kinds, start = _inputs(3, width, 9, dtype, width)
    history = torch.empty(len(kinds), 3, width, dtype=dtype)
    native.scalings(history, start, right, kinds)
    torch.testing.assert_close(history, _reference_scalings(start, right, kinds), rtol=TOL[dtype] * width, atol=0)
    rows = history / history.mean()
    expected = _reference_walk_back(rows, right, kinds)
    native.walk_back(rows, right, kinds)
    torch.testing.assert_close(rows, expected, rtol=TOL[dtype] * width * len(kinds), atol=0)


@needs_build
@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 6), width=st.integers(1, 70), steps=st.integers(1, 12), seed=st.integers(0, 2**16),
    double=st.booleans(),
)  # fmt: skip
def test_chains_equal_the_numpy_loops_on_any_shape(batch, width, steps, seed, double):
    dtype = torch.float64 if double else torch.float32
    right, kinds, start = _inputs(batch, width, steps, dtype, seed)
    history = torch.empty(steps, batch, width, dtype=dtype)
    native.scalings(history, start, right, kinds)
    torch.testing.assert_close(history, _reference_scalings(start, right, kinds), rtol=TOL[dtype] * width, atol=0)
    expected = _reference_walk_back(history, right, kinds)
    native.walk_back(history, right, kinds)
    torch.testing.assert_close(history, expected, rtol=TOL[dtype] * width * steps, atol=0)


@needs_build
def test_inf_and_nan_propagate_as_in_the_numpy_loop():
    right, kinds, start = _inputs(2, 5, 6, torch.float64, 1)
    right[0][0, :, 2] = 0.0  # a zero column: 1/0 = inf, then inf·0 = NaN downstream
    right[1].copy_(right[0].transpose(1, 2))
    history = torch.empty(len(kinds), 2, 5, dtype=torch.float64)
    with numpy.errstate(all="ignore"):
        native.scalings(history, start, right, [0] + kinds[1:])
        expected = _reference_scalings(start, right, [0] + kinds[1:])
    assert not torch.isfinite(expected[:, 0]).all()
    torch.testing.assert_close(history, expected, rtol=1e-14, atol=0, equal_nan=True)


@needs_build
def test_a_build_is_cached_and_reused(fresh_build, monkeypatch):
    assert native.library() is not None and native.build_seconds > 0
    assert len(list(fresh_build.glob("scaling_chain-*.so"))) == 1
    native.library.cache_clear()

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled again although the cache holds a build")

    monkeypatch.setattr(subprocess, "run", no_compiling)
    assert native.library() is not None
    assert len(list(fresh_build.iterdir())) == 1  # no partial files left behind


def _loss_and_grad():
    gen = torch.Generator().manual_seed(4)
    scores = torch.randn(5, 20, generator=gen).requires_grad_()
    relevance = torch.randint(0, 5, (5, 20), generator=gen)
    mask = torch.rand(5, 20, generator=gen) > 0.2
    loss = tn.neural_ndcg_loss(scores, relevance, 10, mask=mask, gain="exp2", impl="kernel", reduction="none")
    loss.sum().backward()
    return loss.detach(), scores.grad


@pytest.mark.parametrize("how", ["no compiler", "compiler fails", "switched off"])
def test_without_the_build_the_loss_runs_the_same_loops_in_numpy(fresh_build, monkeypatch, how):
    compiled = _loss_and_grad()
    built = set(fresh_build.iterdir())
    native.library.cache_clear()
    if how == "no compiler":
        monkeypatch.setattr(native, "_compiler", lambda: None)
    elif how == "compiler fails":
        monkeypatch.setenv("CC", "false")
        monkeypatch.setattr(native, "_compiler", lambda: "false")
    else:
        monkeypatch.setenv("TORCH_NDCG_NATIVE", "0")
    assert native.library() is None
    assert not native.usable(torch.ones(2, 3))
    torch.testing.assert_close(_loss_and_grad(), compiled, rtol=1e-5, atol=1e-7)
    assert set(fresh_build.iterdir()) == built  # nothing new, no partial file of a failed build


def test_only_contiguous_cpu_float32_or_float64_of_one_dtype_is_taken():
    matrix = torch.ones(2, 4, 4)
    assert not native.usable(matrix.half())
    assert not native.usable(matrix.transpose(1, 2))
    assert not native.usable(matrix, matrix.double())
