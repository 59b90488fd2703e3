"""The smoke run: import torch_ndcg from this checkout, evaluate one metric, run one loss forward and
backward. It needs only torch and numpy, so any interpreter with them can run it.

    python scripts/smoke.py
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import torch_ndcg as tn  # noqa: E402


def main() -> None:
    scores = torch.tensor([[0.9, 0.8, 0.1], [0.2, 0.7, 0.1]])
    relevance = torch.tensor([[0, 1, 1], [0, 2, 0]])
    value = tn.ndcg(scores, relevance, k=3)
    expected = (0.6934 + 1.0) / 2
    if abs(value.item() - expected) > 1e-4:
        raise SystemExit(f"ndcg gave {value.item():.4f}, expected {expected:.4f}")
    learned = scores.clone().requires_grad_(True)
    loss = tn.neural_ndcg_loss(learned, relevance, k=3, temperature=0.5)
    loss.backward()
    if learned.grad is None or not torch.isfinite(learned.grad).all() or not learned.grad.abs().sum() > 0:
        raise SystemExit(f"neural_ndcg_loss gave no finite, non-zero gradient: {learned.grad}")
    module = tn.NeuralNDCGLoss(k=3, temperature=0.5)
    torch.testing.assert_close(module(learned, relevance, mask=None), loss)
    print(
        f"smoke ok: Python {platform.python_version()}, torch {torch.__version__}: "
        f"ndcg@3 = {value.item():.4f} (linear gain, log2 discount, ties averaged), "
        f"neural_ndcg_loss = {loss.item():.4f} with a finite gradient"
    )


if __name__ == "__main__":
    main()
