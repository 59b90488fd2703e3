"""Values and gradients of the NDCG losses (``approx_ndcg``, ``neuralsort_ndcg``, ``neural_ndcg``)
on every implementation and option that changes their computation, as the versions that wrote
their own smooth DCG computed them, for test_ndcg_loss_reference.py: the losses are now the NDCG
definition of :mod:`torch_ndcg.over_ranks` fed by a relaxation, and must still give these numbers.

``reference.json`` was made by this script at the commit before that change (e2677c3)::

    git worktree add /tmp/before e2677c3 && cp torch_ndcg/*.so /tmp/before/torch_ndcg/
    cp tests/losses/ndcg_loss_reference/make.py /tmp/before/make.py && cd /tmp/before
    OMP_NUM_THREADS=1 PYTHONPATH=. python make.py > reference.json

The test imports :data:`CASES` and :func:`run` from here, so the inputs are the same ones.
"""

from __future__ import annotations

import json
import sys

import torch

import torch_ndcg as tn


def _reciprocal_rank(rank: torch.Tensor) -> torch.Tensor:
    return 1.0 / rank


DISCOUNTS = {"log2": "log2", "reciprocal callable": _reciprocal_rank}

# (name, function, batch, length, k, dtype, padded, relevance with grad, options); discount by name.
CASES: list[tuple[str, str, int, int, int | None, str, bool, bool, dict]] = []
for impl in ("dense", "streaming", "sorted", "auto"):
    for k in (None, 3):
        for dtype in ("float64", "float32"):
            CASES.append((f"approx {impl} k={k} {dtype}", "approx_ndcg", 4, 11, k, dtype, True, False,
                          {"impl": impl, "temperature": 0.3}))  # fmt: skip
CASES += [
    ("approx sorted long", "approx_ndcg", 3, 300, 4, "float64", True, False, {"impl": "sorted", "temperature": 0.05}),
    ("approx auto long", "approx_ndcg", 3, 300, 4, "float64", False, False, {"temperature": 0.05}),
    ("approx exp2 callable", "approx_ndcg", 4, 11, 5, "float64", True, False,
     {"gain": "linear", "discount": "reciprocal callable", "empty": "zero"}),
    ("approx one", "approx_ndcg", 4, 11, 2, "float64", True, False, {"empty": "one", "reduction": "sum"}),
    ("approx relevance grad", "approx_ndcg", 4, 11, 3, "float64", True, True, {"impl": "dense", "gain": "linear"}),
    ("approx whole cutoff", "approx_ndcg", 4, 6, 6, "float64", True, False, {}),
]  # fmt: skip
for temperature in ("auto", 0.7):
    for k in (None, 3):
        for dtype in ("float64", "float32"):
            CASES.append((f"neuralsort tau={temperature} k={k} {dtype}", "neuralsort_ndcg", 4, 11, k, dtype, True,
                          False, {"temperature": temperature}))  # fmt: skip
CASES += [
    ("neuralsort long", "neuralsort_ndcg", 2, 400, 10, "float64", True, False, {}),
    ("neuralsort relevance grad", "neuralsort_ndcg", 4, 11, 3, "float64", True, True, {"gain": "linear"}),
    ("neuralsort callable one", "neuralsort_ndcg", 4, 11, 4, "float64", True, False,
     {"discount": "reciprocal callable", "empty": "one"}),
]  # fmt: skip
for impl in ("dense", "kernel", "streaming", "auto"):
    for k in (None, 3):
        for dtype in ("float64", "float32"):
            CASES.append((f"neural {impl} k={k} {dtype}", "neural_ndcg", 4, 11, k, dtype, True, False,
                          {"impl": impl, "temperature": 0.7, "sinkhorn_iters": 8}))  # fmt: skip
    CASES += [
        (f"neural {impl} transposed", "neural_ndcg", 4, 11, 3, "float64", True, False,
         {"impl": impl, "transposed": True, "sinkhorn_iters": 7}),
        (f"neural {impl} stochastic", "neural_ndcg", 4, 11, 3, "float64", True, False,
         {"impl": impl, "stochastic": True, "samples": 3, "beta": 0.5, "generator": 5}),
        (f"neural {impl} stochastic log_scores", "neural_ndcg", 4, 11, None, "float32", True, False,
         {"impl": impl, "stochastic": True, "samples": 2, "log_scores": True, "generator": 6}),
    ]  # fmt: skip
CASES += [
    ("neural tol", "neural_ndcg", 4, 11, 3, "float64", True, False, {"tol": 1e-6, "sinkhorn_iters": 40}),
    ("neural kernel tol", "neural_ndcg", 4, 11, None, "float32", True, False, {"impl": "kernel", "tol": 1e-4}),
    ("neural dense relevance grad", "neural_ndcg", 4, 11, 3, "float64", True, True, {"impl": "dense", "gain": "linear"}),
    ("neural callable one", "neural_ndcg", 4, 11, 4, "float64", True, False,
     {"discount": "reciprocal callable", "empty": "one", "reduction": "sum"}),
]  # fmt: skip


def inputs(index: int, batch: int, length: int, dtype: str, padded: bool):
    """The case's scores, labels (0–3, one list of nothing relevant) and mask (or None)."""
    gen = torch.Generator().manual_seed(index)
    scores = torch.randn(batch, length, generator=gen, dtype=torch.float64).to(getattr(torch, dtype))
    relevance = torch.randint(0, 4, (batch, length), generator=gen).to(scores.dtype)
    relevance[0] = 0
    mask = None
    if padded:
        mask = torch.rand(batch, length, generator=gen) > 0.3
        mask[:, :2] = True
    return scores, relevance, mask


def run(index: int) -> dict:
    """The case's loss (per list and reduced) and gradients, as lists of floats (NaN as None)."""
    name, function, batch, length, k, dtype, padded, relevance_grad, options = CASES[index]
    scores, relevance, mask = inputs(index, batch, length, dtype, padded)
    scores.requires_grad_(True)
    relevance.requires_grad_(relevance_grad)
    loss = getattr(tn, f"{function}_loss")

    def call(reduction: str) -> torch.Tensor:
        given = {**options, "reduction": options.get("reduction", "mean") if reduction == "given" else reduction}
        if "discount" in given:
            given["discount"] = DISCOUNTS[given["discount"]]
        if "generator" in given:  # the same draw for both calls
            given["generator"] = torch.Generator().manual_seed(given["generator"])
        return loss(scores, relevance, k, mask=mask, **given)

    per_list, reduced = call("none"), call("given")
    grads = torch.autograd.grad(reduced, (scores, relevance) if relevance_grad else (scores,))

    def plain(t: torch.Tensor) -> list:
        return [None if v != v else v for v in t.detach().double().reshape(-1).tolist()]

    return {"name": name, "per_list": plain(per_list), "loss": plain(reduced), "grads": [plain(g) for g in grads]}


def main() -> None:
    json.dump({"cases": [run(i) for i in range(len(CASES))]}, sys.stdout)


if __name__ == "__main__":
    main()
