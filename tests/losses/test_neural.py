"""NeuralNDCG: gradients, the exact metric as τ → 0 (ties averaged), and training to NDCG ≈ 1."""

from __future__ import annotations

import inspect

import pytest
import torch

import torch_ndcg as tn

IMPLS = ["dense", "streaming", "kernel"]
VARIANTS = [
    {},
    {"transposed": True},
    {"stochastic": True, "samples": 2, "beta": 0.3},
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("options", VARIANTS)
@pytest.mark.parametrize("k", [2, None])
def test_gradcheck_with_mask(impl, options, k):
    gen = torch.Generator().manual_seed(1)
    scores = torch.randn(3, 5, dtype=torch.float64, generator=gen, requires_grad=True)
    relevance = torch.randint(0, 3, (3, 5), generator=gen).double()
    relevance[:, 0] = 1  # no list is empty, so every list has a gradient
    mask = torch.tensor([[1, 0, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)

    def loss(s):
        extra = dict(options)
        if extra.get("stochastic"):
            extra["generator"] = torch.Generator().manual_seed(3)  # the same noise on every call
        return tn.neural_ndcg_loss(
            s, relevance, k, mask=mask, temperature=0.7, sinkhorn_iters=3, gain="exp2", impl=impl, **extra
        )

    assert torch.autograd.gradcheck(loss, (scores,))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("k", [1, 3, None])
@pytest.mark.parametrize("gain", ["linear", "exp2"])
def test_small_temperature_gives_the_exact_metric(transposed, k, gain):
    gen = torch.Generator().manual_seed(2)
    scores = torch.stack([torch.randperm(10, generator=gen) for _ in range(4)]).double()
    relevance = torch.randint(0, 4, (4, 10), generator=gen).double()
    mask = torch.rand(4, 10, generator=gen) > 0.2
    exact = tn.ndcg(scores, relevance, k, mask=mask, gain=gain, reduction="none")
    smooth = tn.neural_ndcg(
        scores, relevance, k, mask=mask, gain=gain, temperature=1e-3, transposed=transposed,
        impl="streaming", empty="zero", reduction="none",
    )  # fmt: skip
    torch.testing.assert_close(smooth, exact, atol=1e-4, rtol=0)


@pytest.mark.parametrize("k", [1, 2, 3, 5, None])
def test_tied_scores_tend_to_the_tie_averaged_metric(k):
    scores = torch.tensor([[3.0, 3.0, 1.0, 1.0, 1.0, 0.0, 2.0, 2.0]], dtype=torch.float64)
    relevance = torch.tensor([[0, 2, 1, 3, 0, 1, 2, 0]], dtype=torch.float64)
    averaged = tn.ndcg(scores, relevance, k, ties="average")
    assert abs(averaged - tn.ndcg(scores, relevance, k, ties="first")) > 1e-3 or k == 5  # ties matter here
    for impl in IMPLS:
        smooth = tn.neural_ndcg(scores, relevance, k, temperature=1e-3, impl=impl)
        torch.testing.assert_close(smooth, averaged, atol=1e-4, rtol=0)


@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize(
    "options", [{}, {"transposed": True}, {"stochastic": True, "samples": 2, "generator": torch.Generator()}]
)
def test_adam_on_free_scores_reaches_the_best_ranking(k, options):
    gen = torch.Generator().manual_seed(4)
    relevance = torch.randint(0, 4, (4, 10), generator=gen).double()
    relevance[:, 0] = 3
    # Scores start near 0, as a fresh model's do. From widely spread random scores, items already
    # far apart get vanishing gradients and a list can stall (seen: ApproxNDCG at 0.957 with τ = 1).
    scores = (0.01 * torch.randn(4, 10, generator=gen, dtype=torch.float64)).requires_grad_()
    optimiser = torch.optim.Adam([scores], lr=0.1)
    for _ in range(100):
        optimiser.zero_grad()
        tn.neural_ndcg_loss(scores, relevance, k, sinkhorn_iters=10, **options).backward()
        optimiser.step()
    assert tn.ndcg(scores.detach(), relevance, k) >= 0.99


def test_more_samples_reduce_the_spread_of_the_stochastic_estimate():
    scores = torch.randn(2, 8)
    relevance = torch.randint(0, 3, (2, 8))
    relevance[:, 0] = 2

    def spread(samples):
        runs = [
            tn.neural_ndcg(scores, relevance, stochastic=True, samples=samples, beta=1.0, sinkhorn_iters=5,
                           generator=torch.Generator().manual_seed(seed))
            for seed in range(8)
        ]  # fmt: skip
        return torch.stack(runs).std()

    assert spread(32) < spread(1)
    same = [
        tn.neural_ndcg(scores, relevance, stochastic=True, generator=torch.Generator().manual_seed(5), sinkhorn_iters=5)
        for _ in range(2)
    ]
    assert torch.equal(same[0], same[1])


def test_dense_stochastic_averages_many_samples_as_accurately_as_streaming():
    gen = torch.Generator().manual_seed(6)
    scores, relevance = torch.randn(1, 4, generator=gen), torch.randint(0, 4, (1, 4), generator=gen)
    relevance[0, 0] = 3
    options = {"temperature": 1e-4, "stochastic": True, "samples": 1024, "sinkhorn_iters": 1, "reduction": "none"}
    dense, streaming = (
        tn.neural_ndcg(scores, relevance, impl=impl, generator=torch.Generator().manual_seed(1), **options)
        for impl in ("dense", "streaming")
    )
    # A running float32 total over 1,024 samples was 9e-6 off; averaged as streaming does, ~1e-7.
    torch.testing.assert_close(dense, streaming, atol=0, rtol=1e-6)


def test_log_scores_perturbs_the_log_of_the_shifted_scores_as_allrank_does():
    # allRank's stochastic NeuralNDCG perturbs log(s + |min s| + 1e-10) by default; here it is an
    # option. With the same Gumbel draws, it equals the plain stochastic variant on those scores.
    scores = torch.tensor([[0.3, -1.2, 2.0, 0.7], [1.5, -0.4, 0.2, 0.9]], dtype=torch.float64)
    relevance = torch.tensor([[2, 0, 1, 3], [0, 1, 2, 0]], dtype=torch.float64)
    options = dict(k=3, stochastic=True, samples=8, beta=0.1, temperature=0.5, reduction="none")
    got = tn.neural_ndcg(scores, relevance, log_scores=True, generator=torch.Generator().manual_seed(1), **options)
    logged = torch.log(scores + scores.min().abs() + 1e-10)
    expected = tn.neural_ndcg(logged, relevance, generator=torch.Generator().manual_seed(1), **options)
    torch.testing.assert_close(got, expected)
    assert not torch.allclose(got, tn.neural_ndcg(scores, relevance, generator=torch.Generator().manual_seed(1), **options))
    with pytest.raises(ValueError, match="log_scores"):
        tn.neural_ndcg(scores, relevance, log_scores=True)
    # The loss takes the smooth NDCG's own parameters, log_scores included.
    assert "log_scores" in inspect.signature(tn.neural_ndcg_loss).parameters
    loss = tn.neural_ndcg_loss(scores, relevance, log_scores=True, generator=torch.Generator().manual_seed(1), **options)
    torch.testing.assert_close(loss, 1 - got)


def test_dense_gives_the_full_gradient_in_relevance_and_the_other_paths_refuse_it():
    """A relevance that requires grad: the dense path's gradient agrees with finite differences;
    kernel, streaming and auto (kernel here), which differentiate in scores only, refuse it by name."""
    generator = torch.Generator().manual_seed(3)
    scores = torch.randn(2, 7, dtype=torch.float64, generator=generator)
    relevance = torch.rand(2, 7, dtype=torch.float64, generator=generator).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda r: tn.neural_ndcg_loss(scores, r, k=3, impl="dense"), (relevance,))
    for impl in ("kernel", "streaming", "auto"):
        with pytest.raises(ValueError, match=r"^relevance requires grad, but impl="):
            tn.neural_ndcg_loss(scores, relevance, k=3, impl=impl)
        with pytest.raises(ValueError, match=r"^relevance requires grad"):
            tn.neural_ndcg_loss(scores.flatten(), relevance.flatten(), indexes=torch.arange(14) // 7, impl=impl)
    tn.neural_ndcg_loss(scores, relevance.detach(), k=3, impl="kernel")  # without grad: as before
