"""Every docstring example runs, and every public callable has one (with its formula or a pointer to it)."""

import doctest
import importlib
import importlib.util
import inspect
import re
import shlex
from pathlib import Path

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
    "torch_ndcg.losses.neuralsort",
    "torch_ndcg.losses.modules",
    "torch_ndcg.losses.twins",
    "torch_ndcg.losses.sampled.lists",
    "torch_ndcg.losses.sampled.losses",
    "torch_ndcg.losses.sampled.distributed",
    "torch_ndcg.retrieval",
    "torch_ndcg.data.letor",
    "torch_ndcg.data.batching",
    "torch_ndcg.data.synthetic",
    "torch_ndcg.conventions",
    "torch_ndcg.trec",
    "torch_ndcg.trec.__main__",
    "torch_ndcg.clicks.target",
    "torch_ndcg.clicks.models",
    "torch_ndcg.clicks.propensity",
    "torch_ndcg.clicks.losses",
    "torch_ndcg.clicks.metrics",
]

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name == "torch_ndcg.metrics":
        pytest.importorskip("torchmetrics", reason="the metric classes need torchmetrics")
    monkeypatch.chdir(ROOT)  # the TREC examples read the repository's tests/trec/data
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def public_callables() -> dict[str, object]:
    names = {f"tn.{name}": getattr(tn, name) for name in tn.__all__ if name not in ("metrics", "ranked", "clicks", "sampled", "retrieval")}
    names.update({f"tn.ranked.{name}": getattr(tn.ranked, name) for name in tn.ranked.__all__})
    names.update({f"tn.clicks.{name}": getattr(tn.clicks, name) for name in tn.clicks.__all__})
    names.update({f"tn.sampled.{name}": getattr(tn.sampled, name) for name in tn.sampled.__all__})
    names["tn.retrieval.top_k"] = tn.retrieval.top_k
    if importlib.util.find_spec("torchmetrics") is not None:  # the classes need torchmetrics (the metrics extra)
        names.update({f"tn.metrics.{name}": getattr(tn.metrics, name) for name in tn.metrics.__all__})
    return names


@pytest.mark.parametrize(("name", "value"), list(public_callables().items()))
def test_every_public_callable_documents_an_example(name: str, value: object) -> None:
    doc = inspect.getdoc(value) or ""
    # A metric class may point to its function, whose docstring has the formula and an example.
    assert ">>>" in doc or (inspect.isclass(value) and ":func:" in doc), name


def test_trec_help_example_prints_what_it_shows(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example in ``python -m torch_ndcg.trec --help`` (its module docstring) runs and prints its output."""
    main = importlib.import_module("torch_ndcg.trec.__main__")
    example = re.search(r"\n    (python -m torch_ndcg\.trec [^\n]+)\n\n((?:    [^\n]+\n)+)", main.__doc__)
    assert example, "the --help text shows an example command and its output"
    command, shown = shlex.split(example[1]), [line[4:] for line in example[2].splitlines()]
    monkeypatch.chdir(ROOT)
    assert main.main(command[3:]) == 0
    assert capsys.readouterr().out.splitlines() == shown
