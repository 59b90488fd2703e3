"""LambdaLoss: its weights are the metric's NDCG changes, and its options are checked."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses.lambdaloss import score_order


@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("gain", ["linear", "exp2"])
def test_lambdarank_weights_are_the_metrics_ndcg_changes_of_swapping_pairs(gain, k):
    """As σ → 0 every pair's −log2 σ(σ(s_i − s_j)) → 1, so the LambdaRank loss is the sum of its
    weights: the |ΔNDCG@k| of swapping each pair inside the top k, as :func:`torch_ndcg.ndcg`
    reports it. The loss targets the library's own NDCG."""
    gen = torch.Generator().manual_seed(9)
    scores = torch.randperm(7, generator=gen).double()[None, :]
    relevance = torch.randint(0, 4, (1, 7), generator=gen).double()
    top = scores.argsort(descending=True)[0, : k or 7].tolist()
    base = tn.ndcg(scores, relevance, k, gain=gain)
    total = 0.0
    for i in top:
        for j in top:
            if relevance[0, i] > relevance[0, j]:
                swapped = scores.clone()
                swapped[0, [i, j]] = swapped[0, [j, i]]
                total += (tn.ndcg(swapped, relevance, k, gain=gain) - base).abs().item()
    loss = tn.lambda_loss(scores, relevance, k, weighting="lambdarank", gain=gain, sigma=1e-9)
    assert total > 0
    torch.testing.assert_close(loss.item(), total, rtol=1e-8, atol=0)


def test_ranks_follow_scores_with_ties_by_index_and_padding_last():
    scores = torch.tensor([[0.5, 2.0, 0.5, 9.0, 1.0]])
    valid = torch.tensor([[True, True, True, False, True]])
    assert score_order(scores, valid).tolist() == [[1, 4, 0, 2, 3]]


def test_cutoff_counts_only_pairs_inside_the_top_k():
    scores = torch.tensor([[4.0, 3.0, 2.0, 1.0]], dtype=torch.float64)
    relevance = torch.tensor([[0.0, 1.0, 0.0, 2.0]], dtype=torch.float64)
    full = tn.lambda_loss(scores, relevance, weighting="none")
    top2 = tn.lambda_loss(scores, relevance, 2, weighting="none")
    bits = lambda gap: torch.nn.functional.softplus(torch.tensor(-gap, dtype=torch.float64)) / torch.log(torch.tensor(2.0))  # noqa: E731
    torch.testing.assert_close(top2, bits(-1.0))  # only (item 1 over item 0), at ranks 2 and 1
    torch.testing.assert_close(full, bits(-1.0) + bits(1.0) + bits(-3.0) + bits(-2.0) + bits(-1.0))


def test_bad_options_name_the_argument():
    scores, relevance = torch.randn(2, 4), torch.randint(0, 3, (2, 4))
    for options, name in (
        ({"weighting": "ndcgLoss2PP_scheme"}, "weighting"), ({"sigma": -1.0}, "sigma"), ({"mu": -0.5}, "mu"),
        ({"impl": "triton"}, "impl"), ({"reduction": "batchmean"}, "reduction"), ({"k": [1, 3]}, "k"),
    ):  # fmt: skip
        with pytest.raises(ValueError, match=name):
            tn.lambda_loss(scores, relevance, **options)
