"""Every docstring example runs, and every public callable has one (with its formula or a pointer to it)."""

import doctest
import importlib
import importlib.util
import inspect

import pytest

import torch_ndcg as tn

MODULES = [
    "torch_ndcg.definitions",
    "torch_ndcg.functional",
    "torch_ndcg.ranked",
    "torch_ndcg.pairs",
    "torch_ndcg.ordering",
    "torch_ndcg.metrics",
    "torch_ndcg.losses.neural",
    "torch_ndcg.losses.approx",
    "torch_ndcg.losses.modules",
    "torch_ndcg.data.letor",
    "torch_ndcg.data.batching",
    "torch_ndcg.data.synthetic",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    if name == "torch_ndcg.metrics":
        pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def public_callables() -> dict[str, object]:
    names = {f"tn.{name}": getattr(tn, name) for name in tn.__all__ if name not in ("metrics", "ranked")}
    names.update({f"tn.ranked.{name}": getattr(tn.ranked, name) for name in tn.ranked.__all__})
    if importlib.util.find_spec("torchmetrics") is not None:  # the classes need torch-ndcg[metrics]
        names.update({f"tn.metrics.{name}": getattr(tn.metrics, name) for name in tn.metrics.__all__})
    return names


@pytest.mark.parametrize(("name", "value"), list(public_callables().items()))
def test_every_public_callable_documents_an_example(name: str, value: object) -> None:
    doc = inspect.getdoc(value) or ""
    # A metric class may point to its function, whose docstring has the formula and an example.
    assert ">>>" in doc or (inspect.isclass(value) and ":func:" in doc), name
