"""``tn.backends()`` says what ``impl="auto"`` runs and why, from the same rule the losses use."""

from __future__ import annotations

import doctest

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses import backends as backends_module, common
from torch_ndcg.losses.relaxations.sinkhorn import loops as sinkhorn_loops


def test_the_docstring_example_runs():
    result = doctest.testmod(backends_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(("batch", "length"), [(64, 27), (32, 64), (2, 400), (4, 9000)])
def test_backends_reports_what_the_losses_run(monkeypatch, batch, length):
    calls = []

    def spy(impl, lists, _real=common.resolve_impl, **options):
        calls.append(_real(impl, lists, **options))
        return calls[-1]

    monkeypatch.setattr(common, "resolve_impl", spy)
    info = tn.backends(batch, length)
    scores = torch.empty(batch, length)  # shape and dtype are all the rule reads
    lists = common.LossLists(scores, scores > 0, scores, None, None, scores.shape[:-1])
    assert info["auto"]["neural_ndcg"] == common.resolve_impl("auto", lists, kernel=True)
    assert info["auto"]["approx_ndcg"] == common.resolve_impl("auto", lists)
    assert info["compiled_code"] == sinkhorn_loops.compiled_code()
    assert all(info["why"][loss] for loss in info["auto"])


def test_auto_reads_no_value_and_tol_always_runs_the_kernel_path(monkeypatch):
    monkeypatch.setattr(common, "AUTO_KERNEL_MAX_BYTES", 16 * 16 * 4)
    scores, relevance = torch.randn(2, 40), torch.randint(0, 3, (2, 40))
    assert tn.backends(2, 40)["auto"]["neural_ndcg"] == "streaming"
    # tol is accepted whatever the length: "auto" then runs the kernel path.
    kernel = tn.neural_ndcg_loss(scores, relevance, impl="kernel", tol=1e-6, sinkhorn_iters=5)
    torch.testing.assert_close(tn.neural_ndcg_loss(scores, relevance, tol=1e-6, sinkhorn_iters=5), kernel)


@pytest.mark.parametrize("impl", ["dense", "streaming"])
def test_tol_with_a_path_that_cannot_stop_early_is_refused_by_name(impl):
    with pytest.raises(ValueError, match=f"tol.*impl={impl!r}"):
        tn.neural_ndcg_loss(torch.randn(2, 5), torch.randint(0, 3, (2, 5)), impl=impl, tol=1e-6)


def test_triton_on_cpu_is_an_error_not_a_fallback():
    with pytest.raises((ValueError, ImportError), match="triton"):
        tn.neural_ndcg_loss(torch.randn(2, 5), torch.randint(0, 3, (2, 5)), impl="triton")
