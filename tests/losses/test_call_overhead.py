"""What a loss call costs beyond its tensor operations: no per-call signature binding in the
losses' autograd Functions, and no gradient tensors made for outputs that nothing reads."""

import inspect

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import torch_ndcg as tn
from torch_ndcg.losses.transforms import ListsFunction

LOSSES = {
    "listmle": lambda s, y, m: tn.listmle_loss(s, y, mask=m),
    "distill_listmle": lambda s, y, m: tn.distill_listmle_loss(s, y * 0.37 + 0.01, mask=m),  # a teacher's real scores
    "ranknet_streaming": lambda s, y, m: tn.ranknet_loss(s, y, mask=m, impl="streaming"),
    "approx_ndcg_streaming": lambda s, y, m: tn.approx_ndcg_loss(s, y, 5, mask=m, impl="streaming"),
    "neuralsort_ndcg": lambda s, y, m: tn.neuralsort_ndcg_loss(s, y, 5, mask=m),
}


def _batch():
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 12, generator=gen, requires_grad=True)
    relevance = torch.randint(0, 4, (4, 12), generator=gen).float()
    mask = torch.ones(4, 12, dtype=torch.bool)
    mask[2:, 9:] = False
    return scores, relevance, mask


@pytest.mark.parametrize("name", LOSSES)
def test_a_loss_call_binds_no_signature(name, monkeypatch):
    # Function.apply binds default arguments with inspect.signature on every call of a Function
    # that has setup_context: on a small batch, about the cost of the loss's own forward.
    scores, relevance, mask = _batch()
    LOSSES[name](scores, relevance, mask).backward()  # first call: whatever is set up once
    calls = []
    signature = inspect.signature
    monkeypatch.setattr(inspect, "signature", lambda *args, **kwargs: calls.append(args) or signature(*args, **kwargs))
    scores.grad = None
    LOSSES[name](scores, relevance, mask).backward()
    assert calls == []
    assert scores.grad is not None and torch.isfinite(scores.grad).all()


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def test_listmle_backward_makes_no_zero_gradients_for_its_saved_outputs():
    scores, relevance, mask = _batch()
    loss = tn.listmle_loss(scores, relevance, mask=mask)
    with _Ops() as ops:
        loss.backward()
    assert "zeros" not in ops.names and "zeros_like" not in ops.names


def test_a_function_whose_forward_has_defaults_is_refused_when_defined():
    with pytest.raises(TypeError, match="must take no default argument"):

        class WithDefault(ListsFunction):  # noqa: F841
            @staticmethod
            def forward(scores, tau=1.0):
                return scores * tau
