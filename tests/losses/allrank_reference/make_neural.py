"""Reference values and gradients of allRank 1.4.3's own ``neuralNDCG``, for test_allrank_parity.py.

allRank pins an old numpy, so it is not a test dependency: this script ran once in a scratch
environment and its output, ``neural.json``, is committed beside it. To remake it::

    python -m venv /tmp/allrank_env && /tmp/allrank_env/bin/pip install torch numpy
    /tmp/allrank_env/bin/pip install --no-deps allrank==1.4.3
    /tmp/allrank_env/bin/python tests/losses/allrank_reference/make_neural.py

allRank's loss package imports its dataset loader (torchvision, scikit-learn) and its model
utilities (gcsfs) for two names it uses: the padding label ``-1`` and the device. Both are stubbed.
Padding is trailing, as allRank's NeuralSort assumes; labels ``-1`` mark it.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import torch


def import_neural_ndcg():
    """allRank's ``neuralNDCG`` with its two unused imports stubbed (CPU)."""
    loading = types.ModuleType("allrank.data.dataset_loading")
    loading.PADDED_Y_VALUE = -1
    utils = types.ModuleType("allrank.models.model_utils")
    utils.get_torch_device = lambda: torch.device("cpu")
    sys.modules.setdefault("allrank.data.dataset_loading", loading)
    sys.modules.setdefault("allrank.models.model_utils", utils)
    from allrank.models.losses.neuralNDCG import neuralNDCG

    return neuralNDCG


# (name, batch, length, k, temperature, padded): padded batches end some lists with label -1.
CASES = [
    ("plain", 4, 12, 5, 1.0, False),
    ("whole list, tau 0.5", 3, 9, None, 0.5, False),
    ("trailing padding", 5, 10, 3, 1.0, True),
    ("long lists", 2, 40, 10, 1.0, False),
]


def make_case(batch: int, length: int, padded: bool, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(batch, length, generator=gen)
    labels = torch.randint(0, 5, (batch, length), generator=gen).float()
    labels[:, 0] = 2.0  # no empty list: allRank and torch_ndcg count empty lists differently
    if padded:
        for row in range(batch):
            real = int(torch.randint(2, length + 1, (1,), generator=gen))
            labels[row, real:] = -1.0
    return scores, labels


def main() -> None:
    neural_ndcg = import_neural_ndcg()
    torch.set_num_threads(1)
    out = []
    for seed, (name, batch, length, k, temperature, padded) in enumerate(CASES):
        scores, labels = make_case(batch, length, padded, seed)
        x = scores.clone().requires_grad_()
        loss = neural_ndcg(x, labels, temperature=temperature, k=k, powered_relevancies=True)
        loss.backward()
        out.append({
            "name": name, "k": k, "temperature": temperature, "scores": scores.tolist(), "labels": labels.tolist(),
            "loss": loss.item(), "grad": x.grad.tolist(),
        })  # fmt: skip
    meta = {"allrank": "1.4.3", "torch": torch.__version__, "loss": "neuralNDCG (1 - mean NDCG = 1 + loss)"}
    path = Path(__file__).with_name("neural.json")
    path.write_text(json.dumps({"meta": meta, "cases": out}, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
