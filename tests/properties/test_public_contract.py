"""The contract every public entry point keeps, whatever it is given.

For each drawn call: either a ``ValueError``/``TypeError`` whose message names one of the
entry point's arguments, or a value that is finite (NaN only for queries ``empty="skip"``
leaves out per query), equal with ``validate=False``, on the scores' graph with a finite
gradient for losses, and equal to the same value reached another way where the recipe has one. Never a raw
``RuntimeError``/``IndexError`` from inside torch.
"""

from __future__ import annotations

import re

import pytest
import torch
from entry_points import ENTRY_POINTS, Case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def tensors_of(result: object) -> list[torch.Tensor]:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, dict):
        return [value for value in result.values() if isinstance(value, torch.Tensor)]
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in tensors_of(item)]
    return []


def names_an_argument(message: str, arguments: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", message) for name in arguments)


def check(case: Case) -> None:
    try:
        result = case.call(True)
    except (ValueError, TypeError) as error:
        assert names_an_argument(str(error), case.arguments), f"{type(error).__name__} names no argument: {error}"
        return
    produced = tensors_of(result)
    for tensor in produced:
        values = tensor.detach()
        if values.is_floating_point():
            bad = ~torch.isfinite(values)
            if case.nan_allowed:
                bad &= ~torch.isnan(values)
            assert not bool(bad.any()), f"non-finite result {values}"
    if case.differentiable and produced:
        # A loss stays on its scores' graph even where it is constant: backward() must run.
        assert produced[0].requires_grad, f"a loss without a graph: {produced[0]}"
        total = produced[0].nansum() if case.nan_allowed else produced[0].sum()
        for grad in torch.autograd.grad(total, _leaves(produced[0]), allow_unused=True):
            assert grad is None or bool(torch.isfinite(grad).all()), f"non-finite gradient {grad}"
    if case.has_validate:
        unchecked = tensors_of(case.call(False))
        assert len(unchecked) == len(produced)
        for checked, other in zip(produced, unchecked):
            torch.testing.assert_close(other.detach(), checked.detach(), equal_nan=True, rtol=1e-6, atol=1e-7)
    if case.other_route is not None:
        first, second = case.other_route()
        for a, b in zip(tensors_of(first), tensors_of(second)):
            torch.testing.assert_close(a.double(), b.double(), equal_nan=True, rtol=1e-5, atol=1e-6)


def _leaves(output: torch.Tensor) -> list[torch.Tensor]:
    """The leaf tensors an output depends on (the drawn scores)."""
    seen, stack, leaves = set(), [output.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        stack.extend(next_fn for next_fn, _ in node.next_functions)
    return leaves


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(data=st.data())
def test_public_contract(entry: str, data: st.DataObject) -> None:
    check(ENTRY_POINTS[entry](data))
