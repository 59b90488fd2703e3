"""Without its package, an integration module says which one to install."""

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("module", "blocked", "advice"),
    [
        ("torch_ndcg.integrations.sentence_transformers", "sentence_transformers", "pip install 'sentence-transformers[train]'"),
        ("torch_ndcg.integrations.huggingface", "torchmetrics", "pip install torchmetrics"),
    ],
)
def test_a_missing_package_is_named(module, blocked, advice, monkeypatch):
    for name in [name for name in sys.modules if name == module or name.startswith(("torch_ndcg.metrics", blocked + "."))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, blocked, None)  # import of it raises ImportError
    import torch_ndcg

    monkeypatch.delattr(torch_ndcg, "metrics", raising=False)  # (a submodule imported before is an attribute)
    with pytest.raises(ImportError, match=advice.replace("[", r"\[").replace("]", r"\]")):
        importlib.import_module(module)


@pytest.mark.slow  # (a fresh interpreter imports torch)
def test_importing_the_library_imports_no_integration():
    code = "import sys, torch_ndcg; print(sorted(m for m in sys.modules if m.split('.')[0] in ('sentence_transformers', 'transformers') or m.startswith('torch_ndcg.integrations')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
