"""The compiled loops of the kernel path (``torch_ndcg._sinkhorn_loops``, built at install): the
same bits as their documented order of sums, the same losses as the NumPy loops that run where
they were not built, and clear errors for any buffer they cannot take."""

from __future__ import annotations

import numpy
import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses.relaxations.sinkhorn import loops as sinkhorn_loops

loops = pytest.importorskip("torch_ndcg._sinkhorn_loops")

WIDTHS = [1, 2, 3, 7, 8, 9, 16, 27, 33, 64, 95, loops.MAX_WIDTH]


def _product_in_order(x: numpy.ndarray, m: numpy.ndarray) -> numpy.ndarray:
    """``x @ m`` per list as the loops sum it: even rows and odd rows apart, in order, then added."""
    even, odd = numpy.zeros_like(x), numpy.zeros_like(x)
    for i in range(x.shape[-1]):
        term = x[:, i, None] * m[:, i, :]
        if i % 2:
            odd = odd + term
        else:
            even = even + term
    return even + odd


def _inputs(dtype, width, steps=11, batch=4, seed=0):
    rng = numpy.random.default_rng(seed)
    right = [(rng.random((batch, width, width)) / width).astype(dtype) for _ in range(2)]
    start = (rng.random((batch, width)) + 0.5).astype(dtype)
    kinds = rng.integers(0, 2, steps).tolist()
    return start, right, kinds


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_loops_give_exactly_the_bits_of_their_order_of_sums(dtype, width):
    start, right, kinds = _inputs(dtype, width)
    history = numpy.zeros((len(kinds), *start.shape), dtype)
    loops.scalings(history, start, *right, bytes(kinds))
    given, expected = start, []
    for kind in kinds:
        given = (1 / _product_in_order(given, right[kind])).astype(dtype)
        expected.append(given)
    numpy.testing.assert_array_equal(history, numpy.stack(expected))

    pq = history.copy()
    loops.walk_back(pq, *right, bytes(kinds))
    expected = history.copy()
    for h in range(len(kinds) - 1, 0, -1):
        expected[h - 1] *= _product_in_order(expected[h], right[kinds[h]])
    numpy.testing.assert_array_equal(pq, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("options", [{}, {"transposed": True}, {"tol": 1e-5}, {"temperature": 1e-3}],
                         ids=["plain", "transposed", "tol", "small-tau"])  # fmt: skip
def test_losses_equal_the_numpy_loops(monkeypatch, dtype, options):
    generator = torch.Generator().manual_seed(4)
    scores = (torch.randn(6, 40, generator=generator) * 3).to(dtype)
    relevance = torch.randint(0, 5, (6, 40), generator=generator)
    mask = torch.arange(40) < torch.tensor([[40], [33], [40], [9], [1], [27]])

    def value_and_grad():
        x = scores.clone().requires_grad_()
        value = tn.neural_ndcg_loss(x, relevance, 10, mask=mask, impl="kernel", **options)
        value.backward()
        return value.detach(), x.grad

    compiled = value_and_grad()
    monkeypatch.setattr(sinkhorn_loops, "_compiled", None)
    with_numpy = value_and_grad()
    tolerance = 1e-5 if dtype == torch.float32 else 1e-12
    for a, b in zip(compiled, with_numpy):
        torch.testing.assert_close(a, b, rtol=tolerance, atol=tolerance)


def test_a_checked_run_gives_the_bits_of_an_unchecked_one():
    # One step at a time (the checked loop) and every step in one call agree exactly.
    start, right, kinds = _inputs(numpy.float32, 27)
    start, right = torch.from_numpy(start), tuple(torch.from_numpy(m) for m in right)
    history = torch.empty(len(kinds), *start.shape)
    sinkhorn_loops.scalings(history, start, right, kinds)
    given = start
    for h, kind in enumerate(kinds):
        given = sinkhorn_loops.step(right, kind, given)
        assert torch.equal(given, history[h])


def _good(dtype=numpy.float32, width=5):
    start, right, kinds = _inputs(dtype, width, steps=3, batch=2)
    return [numpy.zeros((3, 2, width), dtype), start, *right, bytes(kinds)]


@pytest.mark.parametrize(
    "change, error, message",
    [
        (lambda a: a.__setitem__(0, a[0].astype(numpy.int32)), TypeError, "float32 or float64"),
        (lambda a: a.__setitem__(2, a[2].astype(numpy.float64)), TypeError, "same floating point type"),
        (lambda a: a.__setitem__(0, numpy.zeros((3, 2, 10), numpy.float32)[:, :, ::2]), TypeError, "C-contiguous"),
        (lambda a: a.__setitem__(3, a[3][:1]), ValueError, "matrices must be"),
        (lambda a: a.__setitem__(1, numpy.ascontiguousarray(a[1][:, :4])), ValueError, "start must be"),
        (lambda a: a.__setitem__(0, a[0][0]), ValueError, "3 dimensions"),
        (lambda a: a.__setitem__(4, bytes([0, 2, 1])), ValueError, "0 or 1"),
        (lambda a: a.__setitem__(4, bytes([0])), ValueError, "each of the 3 steps"),
        (lambda a: a[0].setflags(write=False), TypeError, "writable"),
        (lambda a: a.__setitem__(1, "not a buffer"), TypeError, "start must be"),
    ],
    ids=["int", "mixed", "strided", "batch", "start", "ndim", "kind", "short-kinds", "read-only", "object"],
)
def test_bad_buffers_are_clear_errors(change, error, message):
    args = _good()
    change(args)
    with pytest.raises(error, match=message):
        loops.scalings(*args)


@pytest.mark.parametrize("width", [0, loops.MAX_WIDTH + 1])
def test_widths_outside_the_loops_are_refused(width):
    rng = numpy.random.default_rng(0)
    pq = numpy.zeros((2, 1, width), numpy.float64)
    right = rng.random((1, width, width))
    with pytest.raises(ValueError, match="items"):
        loops.walk_back(pq, right, right, bytes([0, 1]))


def test_backends_names_the_compiled_loops():
    assert tn.backends()["compiled_code"].startswith("torch_ndcg._sinkhorn_loops")
