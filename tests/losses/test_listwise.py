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


def test_listmle_shifted_and_log_space_paths_agree():
    """A list whose scores span more than float64's shifted range sends the whole batch to the
    log-space path; the other lists must get the same values and gradients as on their own."""
    gen = torch.Generator().manual_seed(9)
    scores = torch.randn(3, 12, dtype=torch.float64, generator=gen) * 5
    relevance = torch.randint(0, 4, (3, 12), generator=gen).double()
    mask = torch.rand(3, 12, generator=gen) > 0.25
    extreme = torch.zeros(1, 12, dtype=torch.float64)
    extreme[0, ::2] = -1e4  # label 0, ranked last, 1e4 under the others
    extreme_labels = torch.ones(1, 12, dtype=torch.float64)
    extreme_labels[0, ::2] = 0

    def loss_and_grad(s, y, m):
        x = s.clone().requires_grad_()
        value = tn.listmle_loss(x, y, mask=m, empty="keep", reduction="none")
        value.sum().backward()
        return value.detach(), x.grad

    alone = loss_and_grad(scores, relevance, mask)
    together = loss_and_grad(
        torch.cat([scores, extreme]), torch.cat([relevance, extreme_labels]), torch.cat([mask, torch.ones(1, 12, dtype=torch.bool)])
    )
    torch.testing.assert_close(together[0][:3], alone[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(together[1][:3], alone[1], rtol=1e-12, atol=1e-12)
    assert torch.isfinite(together[0]).all() and torch.isfinite(together[1]).all()


@pytest.mark.parametrize("loss", [tn.listnet_loss, tn.softmax_loss])
def test_cross_entropy_losses_give_the_hessian_vector_product(loss):
    gen = torch.Generator().manual_seed(4)
    scores = torch.randn(3, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    relevance = torch.randint(0, 3, (3, 6), generator=gen).double()
    mask = torch.rand(3, 6, generator=gen) > 0.3
    direction = torch.randn(3, 6, dtype=torch.float64, generator=gen)

    def gradient(s):
        return torch.autograd.grad(loss(s, relevance, mask=mask, empty="keep"), s, create_graph=True)[0]

    (hvp,) = torch.autograd.grad((gradient(scores) * direction).sum(), scores)
    step = 1e-5
    finite = (gradient(scores + step * direction) - gradient(scores - step * direction)) / (2 * step)
    torch.testing.assert_close(hvp, finite.detach(), atol=1e-7, rtol=1e-6)
    assert torch.all(hvp[~mask] == 0)


@pytest.mark.parametrize("spread", [1.0, 400.0])  # the shifted cumulative sums, and the log-space fallback
def test_listmle_gives_the_hessian_vector_product(spread):
    gen = torch.Generator().manual_seed(5)
    scores = (spread * torch.randn(4, 7, dtype=torch.float64, generator=gen)).requires_grad_()
    relevance = torch.randperm(28, generator=gen).reshape(4, 7).double()  # no ties: one label order
    mask = torch.rand(4, 7, generator=gen) > 0.3
    mask[0] = True  # a list without padding
    mask[3] = False  # a list with no real item
    direction = torch.randn(4, 7, dtype=torch.float64, generator=gen)

    def gradient(s):
        return torch.autograd.grad(tn.listmle_loss(s, relevance, mask=mask, empty="keep"), s, create_graph=True)[0]

    first = gradient(scores)
    plain = torch.autograd.grad(tn.listmle_loss(scores, relevance, mask=mask, empty="keep"), scores)[0]
    torch.testing.assert_close(first, plain, atol=1e-12, rtol=1e-10)  # the same gradient either way
    (hvp,) = torch.autograd.grad((first * direction).sum(), scores)
    step = 1e-5
    finite = (gradient(scores + step * direction) - gradient(scores - step * direction)) / (2 * step)
    torch.testing.assert_close(hvp, finite.detach(), atol=1e-7, rtol=1e-6)
    assert torch.isfinite(hvp).all() and torch.all(hvp[~mask] == 0)
