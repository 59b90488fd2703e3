"""ListMLE's tie rule (stable index order, or a seeded permutation) and the listwise targets."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn


def test_listmle_breaks_label_ties_by_index_order():
    gen = torch.Generator().manual_seed(7)
    scores = torch.randn(3, 8, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 3, (3, 8), generator=gen).double()
    mask = torch.rand(3, 8, generator=gen) > 0.2
    # Lower index first among equal labels == labels made distinct by a small index penalty.
    distinct = relevance + torch.arange(8, 0, -1, dtype=torch.float64) / 100
    torch.testing.assert_close(
        tn.listmle_loss(scores, relevance, mask=mask, reduction="none"),
        tn.listmle_loss(scores, distinct, mask=mask, reduction="none"),
        rtol=0, atol=0,
    )  # fmt: skip


def test_listmle_with_a_generator_draws_a_seeded_tie_order():
    gen = torch.Generator().manual_seed(8)
    scores = torch.randn(2, 10, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 2, (2, 10), generator=gen).double()

    def with_seed(seed):
        return tn.listmle_loss(scores, relevance, generator=torch.Generator().manual_seed(seed), reduction="none")

    assert torch.equal(with_seed(1), with_seed(1))
    draws = torch.stack([with_seed(seed) for seed in range(6)])
    assert len({tuple(row.tolist()) for row in draws}) > 1  # the tie order, hence the value, varies
    default = tn.listmle_loss(scores, relevance, reduction="none")
    assert torch.equal(default, tn.listmle_loss(scores, relevance, reduction="none"))
    # On tie-free labels the generator changes nothing.
    distinct = torch.stack([torch.randperm(10, generator=gen) for _ in range(2)]).double()
    seeded = tn.listmle_loss(scores, distinct, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(seeded, tn.listmle_loss(scores, distinct), rtol=0, atol=1e-12)
    with pytest.raises(TypeError, match="generator"):
        tn.listmle_loss(scores, relevance, generator=3)


def test_listnet_target_is_the_softmax_of_the_gains_and_softmax_loss_their_share():
    scores = torch.tensor([[0.3, -1.0, 2.0, 0.0]], dtype=torch.float64)
    relevance = torch.tensor([[1.0, 0.0, 2.0, 1.0]], dtype=torch.float64)
    log_p = torch.log_softmax(scores, -1)
    gains = 2**relevance - 1
    expected = -(torch.softmax(gains, -1) * log_p).sum()
    torch.testing.assert_close(tn.listnet_loss(scores, relevance, gain="exp2"), expected, rtol=1e-12, atol=0)
    torch.testing.assert_close(tn.softmax_loss(scores, relevance), -(relevance / 4 * log_p).sum(), rtol=1e-12, atol=0)
    # The minimum of the cross-entropy is at scores that reproduce the target.
    at_target = torch.log(relevance / 4 + 1e-300)
    assert tn.softmax_loss(at_target, relevance) < tn.softmax_loss(scores, relevance)
