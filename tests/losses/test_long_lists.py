"""The long-list smooth NDCGs: ``neuralsort_ndcg`` (NeuralSort's top rows, no Sinkhorn) and
ApproxNDCG's ``impl="sorted"`` (ranks of the items that can reach the cutoff).

Each is checked against a reference written here from the paper's formula (the full ``n × n``
NeuralSort matrix; the full ``n × n`` sigmoid matrix), against the exact metric at a small
temperature, by gradcheck, and for memory that follows ``n``.
"""

from __future__ import annotations

import inspect
import math
import re

import pytest
import torch

import peak_memory
import torch_ndcg as tn
from torch_ndcg.losses import common
from torch_ndcg.losses.relaxations import approximate_ranks


def neuralsort_reference(scores, relevance, k, tau, mask=None):
    """NDCG@k from the full NeuralSort matrix of Grover et al. (2019), one list at a time:
    ``P̂[i, :] = softmax(((n + 1 − 2i) s − A_s 1) / τ)``, ``(A_s)_{jm} = |s_j − s_m|``, with
    linear gains, the log2 discount and the exact IDCG@k."""
    values = []
    for row in range(scores.shape[0]):
        keep = torch.ones_like(relevance[row], dtype=torch.bool) if mask is None else mask[row]
        s, gains = scores[row][keep], relevance[row][keep].to(scores.dtype)
        n = s.shape[0]
        spread = (s[:, None] - s[None, :]).abs().sum(1)
        i = torch.arange(1, n + 1, dtype=s.dtype)
        matrix = torch.softmax(((n + 1 - 2 * i)[:, None] * s[None, :] - spread[None, :]) / tau, dim=1)
        depth = n if k is None else min(k, n)
        discount = 1 / torch.log2(i[:depth] + 1)
        dcg = (discount * (matrix[:depth] @ gains)).sum()
        ideal = (discount * gains.sort(descending=True).values[:depth]).sum()
        values.append(dcg / ideal)
    return torch.stack(values)


def spaced_scores(batch, length, *, gap=0.1, seed=0):
    """Scores at least ``gap`` apart (a shuffled grid), float64."""
    generator = torch.Generator().manual_seed(seed)
    grid = torch.arange(length, dtype=torch.float64) * gap
    return torch.stack([grid[torch.randperm(length, generator=generator)] for _ in range(batch)])


def labels(batch, length, *, seed=0):
    generator = torch.Generator().manual_seed(seed)
    relevance = torch.randint(0, 3, (batch, length), generator=generator)
    relevance[:, 0] = 2  # every list has something to rank
    return relevance


def with_grad(loss, scores, *args, **options):
    scores = scores.detach().clone().requires_grad_(True)
    value = loss(scores, *args, **options)
    (grad,) = torch.autograd.grad(value.sum(), scores)
    return value.detach(), grad


# --- neuralsort_ndcg -------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 10, None])
def test_neuralsort_equals_the_full_matrix_reference(k):
    scores = torch.randn(3, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    relevance = labels(3, 12)
    mask = torch.rand(3, 12, generator=torch.Generator().manual_seed(2)) > 0.25
    mask[:, 0] = True
    for tau in (0.1, 1.0, 5.0):
        value, grad = with_grad(tn.neuralsort_ndcg, scores, relevance, k, mask=mask, temperature=tau,
                                reduction="none")  # fmt: skip
        expected, expected_grad = with_grad(neuralsort_reference, scores, relevance, k, tau, mask)
        torch.testing.assert_close(value, expected, atol=1e-10, rtol=0)
        torch.testing.assert_close(grad, expected_grad, atol=1e-10, rtol=0)
        assert torch.all(grad[~mask] == 0)


def test_neuralsort_ties_have_the_paper_forms_gradient():
    scores = torch.tensor([[1.0, 1.0, 2.0, 0.5, 2.0, 1.0]], dtype=torch.float64)
    relevance = torch.tensor([[1, 0, 2, 1, 0, 1]])
    value, grad = with_grad(tn.neuralsort_ndcg, scores, relevance, 3, temperature=0.7)
    expected, expected_grad = with_grad(neuralsort_reference, scores, relevance, 3, 0.7)
    torch.testing.assert_close(value, expected.sum(), atol=1e-12, rtol=0)
    torch.testing.assert_close(grad, expected_grad, atol=1e-12, rtol=0)


@pytest.mark.slow
@pytest.mark.parametrize("length", [300, 1000])
def test_neuralsort_equals_the_reference_on_long_lists(length):
    scores = torch.randn(2, length, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    relevance = (torch.rand(2, length, generator=torch.Generator().manual_seed(4)) < 0.05).long()
    relevance[:, 0] = 1
    tau = float(scores.std() * math.sqrt(length))  # the "auto" scale, as one number
    value, grad = with_grad(tn.neuralsort_ndcg, scores, relevance, 10, temperature=tau, reduction="none")
    expected, expected_grad = with_grad(neuralsort_reference, scores, relevance, 10, tau)
    torch.testing.assert_close(value, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(grad, expected_grad, atol=1e-6, rtol=0)


@pytest.mark.parametrize("k", [1, 5, 10, None])
def test_neuralsort_at_a_small_temperature_is_the_metric(k):
    scores, relevance = spaced_scores(4, 40), labels(4, 40)
    mask = torch.rand(4, 40, generator=torch.Generator().manual_seed(5)) > 0.2
    for options in ({}, {"mask": mask}, {"gain": "exp2"}):
        value = tn.neuralsort_ndcg(scores, relevance, k, temperature=1e-3, reduction="none", **options)
        torch.testing.assert_close(value, tn.ndcg(scores, relevance, k, reduction="none", **options), atol=1e-6, rtol=0)


def test_neuralsort_gradcheck():
    scores = torch.randn(2, 9, dtype=torch.float64, generator=torch.Generator().manual_seed(6)).requires_grad_(True)
    relevance, mask = labels(2, 9), torch.tensor([[True] * 9, [True] * 6 + [False] * 3])

    def loss(x):  # a fixed τ: "auto" holds τ constant in the gradient, which finite differences do not
        return tn.neuralsort_ndcg_loss(x, relevance, k=4, mask=mask, temperature=0.5)

    assert torch.autograd.gradcheck(loss, (scores,))
    assert torch.autograd.gradgradcheck(loss, (scores,))


def test_neuralsort_auto_temperature_is_the_documented_rule_without_gradient():
    scores = torch.randn(3, 50, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    relevance = labels(3, 50)
    value, grad = with_grad(tn.neuralsort_ndcg, scores, relevance, 10, reduction="none")
    for row in range(3):
        tau = float(scores[row].std(correction=0) * math.sqrt(50))
        expected, expected_grad = with_grad(tn.neuralsort_ndcg, scores[row:row + 1], relevance[row:row + 1], 10,
                                            temperature=tau)  # fmt: skip
        torch.testing.assert_close(value[row], expected, atol=1e-12, rtol=0)
        torch.testing.assert_close(grad[row:row + 1], expected_grad, atol=1e-12, rtol=0)
    # the same relaxation at every score scale
    torch.testing.assert_close(tn.neuralsort_ndcg(100 * scores + 3, relevance, 10), tn.neuralsort_ndcg(scores, relevance, 10))


def test_neuralsort_auto_temperature_on_equal_scores_is_finite():
    scores = torch.zeros(2, 30, requires_grad=True)
    value = tn.neuralsort_ndcg_loss(scores, labels(2, 30), k=5)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(scores.grad).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auto_temperature_keeps_the_gradient_at_every_length(seed):
    """With N(0, 1) scores and 5% relevant items, the loss's gradient norm at n = 10, 1,000 and
    100,000 stays within 100× of its norm at n = 100."""
    norms = {}
    for length in (10, 100, 1_000, 100_000):
        generator = torch.Generator().manual_seed(seed)
        scores = torch.randn(1, length, generator=generator, requires_grad=True)
        relevance = (torch.rand(1, length, generator=generator) < 0.05).long()
        relevance[0, torch.randint(length, (1,), generator=generator)] = 1
        tn.neuralsort_ndcg_loss(scores, relevance, k=10).backward()
        norms[length] = float(scores.grad.norm())
    for length in (10, 1_000, 100_000):
        assert norms[100] / 100 <= norms[length] <= norms[100] * 100, norms


def test_neuralsort_float32_follows_float64():
    scores = torch.randn(3, 500, dtype=torch.float64, generator=torch.Generator().manual_seed(8))
    relevance = (torch.rand(3, 500, generator=torch.Generator().manual_seed(9)) < 0.1).long()
    relevance[:, 0] = 1
    value64, grad64 = with_grad(tn.neuralsort_ndcg, scores, relevance, 10, reduction="none")
    value32, grad32 = with_grad(tn.neuralsort_ndcg, scores.float(), relevance, 10, reduction="none")
    assert value32.dtype == grad32.dtype == torch.float32
    torch.testing.assert_close(value32.double(), value64, atol=1e-5, rtol=0)
    torch.testing.assert_close(grad32.double(), grad64, atol=1e-5, rtol=1e-3)


def test_neuralsort_float32_on_a_long_list_with_a_large_offset_stays_accurate():
    """The logits are formed from suffix sums of gaps, not as differences of sums of n scores."""
    scores = torch.randn(1, 100_000, dtype=torch.float64, generator=torch.Generator().manual_seed(10))
    relevance = (torch.rand(1, 100_000, generator=torch.Generator().manual_seed(11)) < 0.05).long()
    shifted = scores + 1000
    expected = tn.neuralsort_ndcg(scores, relevance, 10, temperature=0.5)
    torch.testing.assert_close(tn.neuralsort_ndcg(shifted.float(), relevance, 10, temperature=0.5).double(), expected,
                               atol=1e-4, rtol=0)  # fmt: skip


def test_neuralsort_indexes_equal_the_padded_lists():
    generator = torch.Generator().manual_seed(12)
    ids = torch.randint(0, 5, (80,), generator=generator)
    scores = torch.randn(80, dtype=torch.float64, generator=generator)
    relevance = torch.randint(0, 3, (80,), generator=generator)
    flat_value, flat_grad = with_grad(tn.neuralsort_ndcg, scores, relevance, 4, indexes=ids, reduction="none")
    width = int(torch.bincount(ids).max())
    padded, labels_, mask = (torch.zeros(5, width, dtype=torch.float64), torch.zeros(5, width, dtype=torch.long),
                             torch.zeros(5, width, dtype=torch.bool))  # fmt: skip
    for q in range(5):
        items = (ids == q).nonzero().squeeze(1)
        padded[q, : len(items)], labels_[q, : len(items)], mask[q, : len(items)] = scores[items], relevance[items], True
    value, grad = with_grad(tn.neuralsort_ndcg, padded, labels_, 4, mask=mask, reduction="none")
    torch.testing.assert_close(flat_value, value)
    for q in range(5):
        items = (ids == q).nonzero().squeeze(1)
        torch.testing.assert_close(flat_grad[items], grad[q, : len(items)])


def test_neuralsort_module_equals_the_function():
    scores, relevance = torch.randn(4, 30), labels(4, 30)
    criterion = tn.NeuralSortNDCGLoss(k=5, temperature=0.3, gain="exp2")
    torch.testing.assert_close(criterion(scores, relevance), tn.neuralsort_ndcg_loss(scores, relevance, k=5, temperature=0.3, gain="exp2"))
    assert "temperature=0.3" in repr(criterion)


@pytest.mark.parametrize("temperature", [0, -1.0, "hot", float("nan"), True, math.inf, -math.inf])
def test_a_bad_temperature_is_refused_by_name(temperature):
    refusal = '^temperature must be a finite number > 0 or "auto"'
    with pytest.raises(ValueError, match=refusal):
        tn.neuralsort_ndcg_loss(torch.randn(2, 5), labels(2, 5), temperature=temperature)
    with pytest.raises(ValueError, match=refusal):
        tn.NeuralSortNDCGLoss(temperature=temperature)


def test_auto_temperature_is_refused_where_it_is_not_a_choice():
    with pytest.raises(ValueError, match="temperature"):
        tn.approx_ndcg_loss(torch.randn(2, 5), labels(2, 5), temperature="auto")


def test_neuralsort_empty_lists_follow_empty():
    scores, relevance = torch.randn(3, 6, requires_grad=True), labels(3, 6)
    relevance[1] = 0
    values = tn.neuralsort_ndcg(scores, relevance, 3, reduction="none")
    assert torch.isnan(values[1]) and not torch.isnan(values[[0, 2]]).any()
    tn.neuralsort_ndcg_loss(scores, relevance, k=3).backward()
    assert torch.all(scores.grad[1] == 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("level", [0.0, 0.3, -2.5e3])
def test_auto_temperature_gives_tied_scores_the_gradient_at_unit_spread(dtype, level):
    """A zero-initialised model ties every score: τ = √n (the rule at unit spread), so the
    gradient is finite and of ordinary size in every dtype, and the same at any common level."""
    relevance = labels(2, 50)
    scores = torch.full((2, 50), level, dtype=dtype)
    value, grad = with_grad(tn.neuralsort_ndcg_loss, scores, relevance, k=10)
    expected, expected_grad = with_grad(tn.neuralsort_ndcg_loss, torch.zeros(2, 50, dtype=torch.float64), relevance,
                                        k=10, temperature=math.sqrt(50))  # fmt: skip
    assert grad.dtype == dtype and torch.isfinite(grad).all()
    assert 0 < float(grad.abs().max()) < 1
    torch.testing.assert_close(value.double(), expected, atol=1e-3, rtol=0)
    torch.testing.assert_close(grad.double(), expected_grad, atol=1e-3, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_auto_temperature_gives_the_same_relaxation_at_every_finite_scale(dtype):
    """scores × c, c from 1e-30 to 1e30 (1e-300 to 1e300 in float64): the same value, and the
    gradient × c the same, where today's variance overflows or underflows in float32."""
    scores = torch.randn(2, 50, dtype=torch.float64, generator=torch.Generator().manual_seed(20))
    relevance = labels(2, 50)
    value, grad = with_grad(tn.neuralsort_ndcg_loss, scores.to(dtype), relevance, k=10, reduction="none")
    exponents = range(-30, 31, 5) if dtype == torch.float32 else range(-300, 301, 50)
    for exponent in exponents:
        c = 3.0 * 10.0**exponent  # not a power of two: the inputs round
        scaled_value, scaled_grad = with_grad(tn.neuralsort_ndcg_loss, (scores * c).to(dtype), relevance, k=10,
                                              reduction="none")  # fmt: skip
        torch.testing.assert_close(scaled_value, value, atol=1e-5, rtol=0, msg=f"c = {c}")
        torch.testing.assert_close(scaled_grad.double() * c, grad.double(), atol=1e-5, rtol=1e-3, msg=f"c = {c}")


@pytest.mark.parametrize("temperature", ["auto", 1000.0])
@pytest.mark.parametrize("offset", [2.0**25, 2.0**30, -(2.0**40)])
def test_neuralsort_padding_sits_below_large_float32_scores(temperature, offset):
    """Padding sorts strictly below the lowest real score even where ``low − 1 == low``: masked
    and ``indexes=`` gradients equal the unpadded lists'."""
    generator = torch.Generator().manual_seed(21)
    real = (torch.randn(2, 6, dtype=torch.float64, generator=generator) * 1000 + offset).float()
    relevance = torch.tensor([[1, 0, 2, 0, 1, 0], [0, 2, 1, 1, 0, 0]])
    # The lowest real items (of the lists of 6 and of the list of 4 below) have gradients to get wrong.
    relevance[[0, 1, 1], [real[0].argmin(), real[1].argmin(), real[1, :4].argmin()]] = 3
    options = dict(k=3, temperature=temperature, reduction="none")
    _, expected = with_grad(tn.neuralsort_ndcg_loss, real, relevance, **options)
    padded = torch.cat([real, torch.zeros(2, 3)], -1)
    mask = torch.cat([torch.ones(2, 6, dtype=torch.bool), torch.zeros(2, 3, dtype=torch.bool)], -1)
    _, grad = with_grad(tn.neuralsort_ndcg_loss, padded, torch.cat([relevance, torch.zeros_like(relevance[:, :3])], -1),
                        mask=mask, **options)  # fmt: skip
    close = dict(atol=1e-12, rtol=1e-4)  # the gradients of low items are small: compare relatively
    torch.testing.assert_close(grad[:, :6], expected, **close)
    # uneven queries through indexes=: the shorter list is padded in the grouped layout
    ids = torch.tensor([0] * 6 + [1] * 4)
    flat, flat_relevance = torch.cat([real[0], real[1, :4]]), torch.cat([relevance[0], relevance[1, :4]])
    _, flat_grad = with_grad(tn.neuralsort_ndcg_loss, flat, flat_relevance, indexes=ids, **options)
    _, short = with_grad(tn.neuralsort_ndcg_loss, real[1:, :4], relevance[1:, :4], **options)
    torch.testing.assert_close(flat_grad[:6], expected[0], **close)
    torch.testing.assert_close(flat_grad[6:], short[0], **close)


def test_a_temperature_beyond_the_scores_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^temperature must be finite in torch.float32"):
        tn.neuralsort_ndcg_loss(torch.randn(2, 5), labels(2, 5), temperature=1e39)
    with pytest.raises(ValueError, match=r"^temperature must be finite in torch.float32"):
        tn.NeuralSortNDCGLoss(temperature=1e39)(torch.randn(2, 5), labels(2, 5))
    wide = torch.randn(2, 5, dtype=torch.float64)
    assert torch.isfinite(tn.neuralsort_ndcg_loss(wide, labels(2, 5), temperature=1e39))


def test_neuralsort_numerical_failure_advises_options_it_takes():
    """The advice of the NaN check names only keywords the failing function accepts."""
    scores = torch.randn(2, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(22))
    with pytest.raises(ValueError, match="numerical failure") as failure:
        tn.neuralsort_ndcg_loss(scores, labels(2, 20), k=5, temperature=1e-320)
    advice = failure.value.args[0].split(";", 1)[1]
    assert "temperature" in advice
    keywords = set(re.findall(r"(\w+)=", advice))
    assert keywords <= set(inspect.signature(tn.neuralsort_ndcg_loss).parameters), keywords


def test_neuralsort_gradient_in_relevance_is_the_full_one():
    """Soft labels with grad: finite differences agree (the DCG's term, not only the IDCG's)."""
    generator = torch.Generator().manual_seed(23)
    scores = torch.randn(2, 9, dtype=torch.float64, generator=generator)
    relevance = torch.rand(2, 9, dtype=torch.float64, generator=generator).requires_grad_(True)
    mask = torch.tensor([[True] * 9, [True] * 6 + [False] * 3])
    for temperature in ("auto", 0.5):
        assert torch.autograd.gradcheck(
            lambda r, t=temperature: tn.neuralsort_ndcg_loss(scores, r, k=4, mask=mask, temperature=t), (relevance,)
        )
    assert torch.autograd.gradgradcheck(
        lambda r: tn.neuralsort_ndcg_loss(scores, r, k=4, mask=mask, temperature=0.5), (relevance,)
    )
    loss = lambda r: tn.neuralsort_ndcg_loss(scores, r, k=4, mask=mask)  # noqa: E731
    (expected,) = torch.autograd.grad(loss(relevance), relevance)
    torch.testing.assert_close(torch.func.grad(loss)(relevance.detach()), expected)
    compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(torch.autograd.grad(compiled(relevance), relevance)[0], expected)


# --- ApproxNDCG, impl="sorted" -----------------------------------------------------------------


@pytest.mark.parametrize(("length", "k", "tau"), [(50, 5, 0.5), (300, 10, 1.0), (300, None, 0.3), (40, 50, 0.2),
                                                  (500, 10, 1e-3), (200, 3, 3.0)])  # fmt: skip
def test_sorted_approx_equals_dense(length, k, tau):
    generator = torch.Generator().manual_seed(length)
    scores = torch.randn(3, length, dtype=torch.float64, generator=generator)
    relevance = torch.randint(0, 3, (3, length), generator=generator)
    mask = torch.rand(3, length, generator=generator) > 0.2
    options = dict(k=k, mask=mask, temperature=tau, reduction="none")
    value, grad = with_grad(tn.approx_ndcg, scores, relevance, impl="sorted", **options)
    expected, expected_grad = with_grad(tn.approx_ndcg, scores, relevance, impl="dense", **options)
    torch.testing.assert_close(value, expected, atol=1e-6, rtol=0, equal_nan=True)
    torch.testing.assert_close(grad, expected_grad, atol=1e-6, rtol=0)


def test_sorted_approx_with_ties_equals_dense():
    scores = torch.tensor([[1.0, 1.0, 2.0, 0.5, 2.0, 1.0] * 10], dtype=torch.float64)
    relevance = torch.arange(60).remainder(3)[None, :]
    value, grad = with_grad(tn.approx_ndcg, scores, relevance, 3, temperature=0.2, impl="sorted")
    expected, expected_grad = with_grad(tn.approx_ndcg, scores, relevance, 3, temperature=0.2, impl="dense")
    torch.testing.assert_close(value, expected, atol=1e-12, rtol=0)
    torch.testing.assert_close(grad, expected_grad, atol=1e-12, rtol=0)


@pytest.mark.slow
def test_sorted_approx_equals_dense_at_a_thousand_items():
    scores = torch.randn(2, 1000, dtype=torch.float64, generator=torch.Generator().manual_seed(13))
    relevance = (torch.rand(2, 1000, generator=torch.Generator().manual_seed(14)) < 0.05).long()
    relevance[:, 0] = 1
    for tau in (0.05, 1.0):
        value, grad = with_grad(tn.approx_ndcg, scores, relevance, 10, temperature=tau, impl="sorted")
        expected, expected_grad = with_grad(tn.approx_ndcg, scores, relevance, 10, temperature=tau, impl="dense")
        torch.testing.assert_close(value, expected, atol=1e-6, rtol=0)
        torch.testing.assert_close(grad, expected_grad, atol=1e-6, rtol=0)


def test_sorted_approx_at_a_small_temperature_is_the_metric():
    scores, relevance = spaced_scores(4, 200), labels(4, 200)
    for k in (1, 10):
        value = tn.approx_ndcg(scores, relevance, k, temperature=1e-3, impl="sorted", reduction="none")
        torch.testing.assert_close(value, tn.ndcg(scores, relevance, k, reduction="none"), atol=1e-6, rtol=0)


def test_sorted_approx_gradcheck():
    scores = torch.randn(2, 30, dtype=torch.float64, generator=torch.Generator().manual_seed(15)).requires_grad_(True)
    relevance, mask = labels(2, 30), torch.rand(2, 30, generator=torch.Generator().manual_seed(16)) > 0.2

    def loss(x):
        return tn.approx_ndcg_loss(x, relevance, k=3, mask=mask, temperature=0.05, impl="sorted")

    assert approximate_ranks.candidates(30, 3, 0.05) < 30  # the cut is exercised
    assert torch.autograd.gradcheck(loss, (scores,))
    assert torch.autograd.gradgradcheck(loss, (scores,))


def test_sorted_approx_indexes_equal_the_padded_call():
    generator = torch.Generator().manual_seed(17)
    ids = torch.randint(0, 3, (300,), generator=generator)
    scores = torch.randn(300, dtype=torch.float64, generator=generator)
    relevance = torch.randint(0, 3, (300,), generator=generator)
    torch.testing.assert_close(
        tn.approx_ndcg(scores, relevance, 5, indexes=ids, impl="sorted", temperature=0.3, reduction="none"),
        tn.approx_ndcg(scores, relevance, 5, indexes=ids, impl="dense", temperature=0.3, reduction="none"),
    )


@pytest.mark.parametrize("impl", ["dense", "streaming", "sorted", "auto"])
def test_approx_at_a_temperature_near_float64s_largest_gives_a_value(impl):
    """The sorted path's candidate count 2(k + 40τ) is inf there: every item is a candidate."""
    scores, relevance = torch.randn(2, 50, generator=torch.Generator().manual_seed(24)), labels(2, 50)
    value = tn.approx_ndcg_loss(scores, relevance, k=10, temperature=5e306, impl=impl)
    expected = tn.approx_ndcg_loss(scores, relevance, k=10, temperature=1e30, impl="dense")  # σ = ½ already
    torch.testing.assert_close(value, expected)
    assert approximate_ranks.candidates(50, 10, 5e306) == 50


def test_auto_picks_sorted_where_backends_says_and_why(monkeypatch):
    info = tn.backends(1, 10_000, k=10, temperature=1.0)
    assert info["auto"]["approx_ndcg"] == "sorted" and "100 items" in info["why"]["approx_ndcg"]
    assert tn.backends(1, 10_000)["auto"]["approx_ndcg"] == "streaming"  # no cutoff: every item is ranked
    assert tn.backends(8, 150, k=10, temperature=1.0)["auto"]["approx_ndcg"] == "streaming"  # M = 100 > N/2
    assert tn.backends(1, 150, k=10, temperature=0.01)["auto"]["approx_ndcg"] == "dense"  # B·N² ≤ 2¹⁶
    picked = []

    def spy(impl, lists, _real=common.resolve_impl, **options):
        picked.append(_real(impl, lists, **options))
        return picked[-1]

    monkeypatch.setattr(common, "resolve_impl", spy)
    tn.approx_ndcg_loss(torch.randn(1, 10_000), labels(1, 10_000), k=10)
    assert picked == ["sorted"]
    assert "neuralsort_ndcg" in tn.backends() and "neuralsort_ndcg" in tn.losses.backends.describe()


# --- both: compile, memory --------------------------------------------------------------------

LONG_LOSSES = {
    "neuralsort": lambda s, r, m: tn.neuralsort_ndcg_loss(s, r, k=5, mask=m),
    "neuralsort_tau": lambda s, r, m: tn.neuralsort_ndcg_loss(s, r, k=5, mask=m, temperature=0.5),
    "approx_sorted": lambda s, r, m: tn.approx_ndcg_loss(s, r, k=5, mask=m, temperature=0.3, impl="sorted"),
}


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", list(LONG_LOSSES))
def test_compiled_equals_eager(name, dynamic):
    torch._dynamo.reset()
    loss = LONG_LOSSES[name]
    compiled = torch.compile(loss, fullgraph=True, dynamic=dynamic)
    for length in (60, 90):
        generator = torch.Generator().manual_seed(length)
        scores = torch.randn(3, length, generator=generator)
        relevance = torch.randint(0, 3, (3, length), generator=generator)
        mask = torch.rand(3, length, generator=generator) > 0.1
        value, grad = with_grad(loss, scores, relevance, mask)
        compiled_value, compiled_grad = with_grad(compiled, scores, relevance, mask)
        torch.testing.assert_close(compiled_value, value)
        torch.testing.assert_close(compiled_grad, grad)


def test_torch_func_grad_equals_autograd():
    scores, relevance = torch.randn(2, 40, dtype=torch.float64), labels(2, 40)
    for name, loss in LONG_LOSSES.items():
        mask = torch.ones(2, 40, dtype=torch.bool)
        grad = torch.func.grad(lambda x, loss=loss: loss(x, relevance, mask))(scores)
        torch.testing.assert_close(grad, with_grad(loss, scores, relevance, mask)[1], msg=name)


_SETUP = """
import torch, torch_ndcg as tn
generator = torch.Generator().manual_seed(0)
scores = torch.randn(1, {n}, generator=generator, dtype=torch.float64, requires_grad=True)
relevance = (torch.rand(1, {n}, generator=generator) < 0.05).long()
tn.neuralsort_ndcg_loss(scores[:, :100], relevance[:, :100], k=10).backward()
tn.approx_ndcg_loss(scores[:, :100], relevance[:, :100], k=10, impl="sorted").backward()
"""


@pytest.mark.slow
@pytest.mark.parametrize("code", ['tn.neuralsort_ndcg_loss(scores, relevance, k=10).backward()',
                                  'tn.approx_ndcg_loss(scores, relevance, k=10, impl="sorted").backward()'])  # fmt: skip
def test_memory_follows_n_not_n_squared(code):
    """At k = 10 in float64 the peak beyond the inputs is a few ``k·n·8`` bytes (n² would need
    80 GB at n = 100,000; the child's address space is capped far below)."""
    small, large = (peak_memory.peak_growth(_SETUP.format(n=n), code) for n in (25_000, 100_000))
    assert large < 64 << 20, f"{large / 2**20:.1f} MiB at n = 100,000"
    assert large < 6 * max(small, 4 << 20), (small, large)  # 4× the items: about 4× the memory
