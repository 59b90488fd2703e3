"""The README's Python snippets run as written (with small stand-ins for a model and a loader)."""

import re
from pathlib import Path

import pytest
import torch

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


class _Lightning:
    """Stands in for a LightningModule's ``self`` in the logging snippet."""

    def __init__(self) -> None:
        self.logged: dict[str, torch.Tensor] = {}

    def log_dict(self, values: dict[str, torch.Tensor]) -> None:
        self.logged.update(values)


def test_every_python_snippet_runs():
    pytest.importorskip("torchmetrics")
    blocks = python_blocks()
    assert len(blocks) >= 4
    features = torch.randn(3, 6, 4)
    relevance = torch.randint(0, 3, (3, 6))
    mask = torch.rand(3, 6) < 0.8
    weights = torch.randn(4, requires_grad=True)
    namespace = {
        "model": lambda x: x @ weights,
        "features": features,
        "relevance": relevance,
        "mask": mask,
        "loader": [(torch.randn(3, 6), relevance, mask)] * 2,
        "self": _Lightning(),
    }
    for block in blocks:  # each snippet stands alone
        exec(compile(block, str(README), "exec"), dict(namespace))
    assert set(namespace["self"].logged) == {"ndcg@1", "ndcg@5", "ndcg@10"}
    assert weights.grad is not None
