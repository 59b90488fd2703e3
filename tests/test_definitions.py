"""The one definition of gain, discount and cutoff (torch_ndcg.definitions)."""

import math

import pytest
import torch

from torch_ndcg import definitions as d


def test_linear_and_exp2_gains():
    labels = torch.tensor([0.0, 1.0, 2.0, 3.5, 10.0], dtype=torch.float64)
    assert d.linear_gain(labels) is labels
    torch.testing.assert_close(d.exp2_gain(labels), 2.0**labels - 1.0, rtol=1e-15, atol=0)
    # expm1 keeps tiny labels accurate where 2**r - 1 would cancel to 0 in float32.
    tiny = torch.tensor([1e-9])
    assert d.exp2_gain(tiny).item() == pytest.approx(1e-9 * math.log(2), rel=1e-6)
    assert (2.0**tiny - 1).item() == 0.0


def test_log2_discount():
    ranks = torch.arange(1, 7, dtype=torch.float64)
    want = [1 / math.log2(r + 1) for r in range(1, 7)]
    assert d.log2_discount(ranks).tolist() == pytest.approx(want, rel=1e-15)
    # Real-valued ranks (the losses' smooth ranks) are allowed.
    assert d.log2_discount(torch.tensor(2.5, dtype=torch.float64)).item() == pytest.approx(1 / math.log2(3.5))


def test_resolve_gain_and_discount():
    assert d.resolve_gain("linear") is d.linear_gain
    assert d.resolve_gain("exp2") is d.exp2_gain
    assert d.resolve_discount("log2") is d.log2_discount

    def custom(x):
        return x * 2

    assert d.resolve_gain(custom) is custom and d.resolve_discount(custom) is custom
    for bad in ("exp", "Linear", 2, None):
        with pytest.raises(ValueError, match="gain"):
            d.resolve_gain(bad)
    for bad in ("log", "ln", 1.0, None):
        with pytest.raises(ValueError, match="discount"):
            d.resolve_discount(bad)


def test_compute_dtype():
    f16 = torch.zeros(1, dtype=torch.float16)
    f64 = torch.zeros(1, dtype=torch.float64)
    ints = torch.zeros(1, dtype=torch.int64)
    assert d.compute_dtype(f16, ints) == torch.float32
    assert d.compute_dtype(ints, None) == torch.float32
    assert d.compute_dtype(f16, f64) == torch.float64
    assert d.compute_dtype(None, f64) == torch.float64


def test_gains_dtype_and_callable_checks():
    labels = torch.tensor([[0, 1, 3]])
    values = d.gains(labels, "exp2", torch.float64)
    assert values.dtype == torch.float64
    assert values.tolist() == [[0.0, pytest.approx(1.0, rel=1e-15), pytest.approx(7.0, rel=1e-15)]]
    assert d.gains(labels, lambda r: r.sum(-1, keepdim=True).expand_as(r), torch.float32).tolist() == [[4.0] * 3]
    with pytest.raises(ValueError, match="gain"):
        d.gains(labels, lambda r: r.sum(), torch.float32)
    with pytest.raises(ValueError, match="gain"):
        d.gains(labels, lambda r: 1.0, torch.float32)


def test_discounts():
    values = d.discounts(4, "log2", torch.float32, torch.device("cpu"))
    assert values.dtype == torch.float32 and values.shape == (4,)
    assert values.tolist() == pytest.approx([1 / math.log2(r + 1) for r in range(1, 5)])
    assert d.discounts(3, lambda rank: 1 / rank, torch.float64, torch.device("cpu")).tolist() == [1, 0.5, 1 / 3]
    with pytest.raises(ValueError, match="discount"):
        d.discounts(3, lambda rank: rank[:2], torch.float64, torch.device("cpu"))


@pytest.mark.parametrize(
    ("k", "want"),
    [
        (None, ((None,), False)),
        (5, ((5,), False)),
        ((1, None, 3), ((1, None, 3), True)),
        ([10], ((10,), True)),
        (range(1, 4), ((1, 2, 3), True)),
    ],
)
def test_resolve_cutoffs(k, want):
    assert d.resolve_cutoffs(k) == want


@pytest.mark.parametrize(
    ("k", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        (True, TypeError),
        (False, TypeError),
        ("5", TypeError),
        (b"5", TypeError),
        (2.0, TypeError),
        ([], ValueError),
        ((3, 0), ValueError),
        ((3, "a"), TypeError),
        ((3, True), TypeError),
        ({1, 2}, TypeError),
        (torch.tensor(3), TypeError),
    ],
    ids=repr,
)
def test_resolve_cutoffs_refuses(k, error):
    with pytest.raises(error, match="k "):
        d.resolve_cutoffs(k)


def test_clip_cutoff():
    assert d.clip_cutoff(None, 7) == 7
    assert d.clip_cutoff(3, 7) == 3
    assert d.clip_cutoff(10, 7) == 7


def test_check_exp2_range():
    labels = torch.tensor([[100.0, 0.0], [3.0, 1.0]])
    d.check_exp2_range(labels, "linear", torch.float32)  # only exp2 can overflow
    d.check_exp2_range(torch.zeros(0), "exp2", torch.float32)
    d.check_exp2_range(torch.tensor([127.0]), "exp2", torch.float32)  # one item: 2**127 is finite
    with pytest.raises(ValueError, match="relevance"):
        d.check_exp2_range(torch.tensor([128.0]), "exp2", torch.float32)
    # Two items may sum two gains: one binary order of magnitude less.
    d.check_exp2_range(torch.tensor([126.0, 126.0]), "exp2", torch.float32)
    with pytest.raises(ValueError, match="exp2"):
        d.check_exp2_range(torch.tensor([127.0, 0.0]), "exp2", torch.float32)
    # length overrides the last dimension (for flattened relevance).
    with pytest.raises(ValueError, match="exp2"):
        d.check_exp2_range(torch.tensor([126.0]), "exp2", torch.float32, length=4)
    d.check_exp2_range(torch.tensor([1000.0, 0.0]), "exp2", torch.float64)
    with pytest.raises(ValueError, match="exp2"):
        d.check_exp2_range(torch.tensor([1023.0, 0.0]), "exp2", torch.float64)
    # The limit is what keeps the sum finite: N gains at the limit add up to a finite number.
    for dtype, n in [(torch.float32, 1), (torch.float32, 5), (torch.float32, 1000), (torch.float64, 7)]:
        limit = math.frexp(torch.finfo(dtype).max)[1] - 1 - math.ceil(math.log2(n))
        full = torch.full((n,), float(limit), dtype=dtype)
        d.check_exp2_range(full, "exp2", dtype)
        assert torch.isfinite(d.exp2_gain(full).sum())
        with pytest.raises(ValueError):
            d.check_exp2_range(full + 1, "exp2", dtype)
