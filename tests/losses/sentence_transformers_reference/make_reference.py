"""Write ``losses.json``: sentence-transformers' cross-encoder losses on fixed score tensors.

    python3 -m venv /work/venv-st
    /work/venv-st/bin/pip install torch==2.13.0 sentence-transformers
    /work/venv-st/bin/python tests/losses/sentence_transformers_reference/make_reference.py

sentence-transformers computes its losses inside ``forward(inputs, labels)`` from texts it
scores with a ``CrossEncoder``. Here a stand-in ``CrossEncoder`` (no network, no tokenizer)
turns each ``(query, document)`` pair back into the index of a fixed score, so the loss's own
``forward`` runs unchanged on known scores and autograd gives its gradient with respect to them.

Its losses cast scores and labels to float32 with ``Tensor.float()``; for a float64 reference
the script runs them with ``float()`` meaning ``double()`` and float64 as the default dtype,
which changes the precision and nothing else. Every number is float64, gradients are ``[B, N]``
with 0 at padding. ``tests/losses/test_distill_parity.py`` compares torch_ndcg to this file.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import sentence_transformers
import torch
from sentence_transformers.cross_encoder import CrossEncoder
from sentence_transformers.cross_encoder import losses as st

OUT = Path(__file__).resolve().parent / "losses.json"


class ScoreLookup(CrossEncoder):
    """A CrossEncoder whose score for the document named ``"d<k>"`` is ``scores[k]``."""

    def __init__(self, scores: torch.Tensor) -> None:
        torch.nn.Module.__init__(self)
        self.flat = scores

    @property
    def num_labels(self) -> int:
        return 1

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def preprocess(self, pairs, prompt=None, task=None):  # noqa: ANN001
        return {"index": torch.tensor([int(document[1:]) for _, document in pairs])}

    def forward(self, tokens):  # noqa: ANN001
        return {"scores": self.flat[tokens["index"]]}


@contextlib.contextmanager
def float64():
    """float64 default dtype and ``Tensor.float()`` as ``double()`` while the losses run."""
    original, default = torch.Tensor.float, torch.get_default_dtype()
    torch.Tensor.float = lambda self, *args, **kwargs: self.double()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.Tensor.float = original
        torch.set_default_dtype(default)


def ragged(scores: torch.Tensor, teacher: torch.Tensor, lengths: list[int]):
    """The flat leaf of the real scores, the ``(queries, documents)`` inputs and per-query labels."""
    flat_scores = torch.cat([scores[b, :n] for b, n in enumerate(lengths)]).clone().requires_grad_(True)
    starts = [sum(lengths[:b]) for b in range(len(lengths))]
    documents = [[f"d{start + i}" for i in range(n)] for start, n in zip(starts, lengths)]
    labels = [teacher[b, :n].clone() for b, n in enumerate(lengths)]
    return flat_scores, [[f"q{b}" for b in range(len(lengths))], documents], labels


def padded_grad(flat_grad: torch.Tensor, lengths: list[int], width: int) -> list[list[float]]:
    grad = torch.zeros(len(lengths), width, dtype=torch.float64)
    start = 0
    for b, n in enumerate(lengths):
        grad[b, :n] = flat_grad[start : start + n]
        start += n
    return grad.tolist()


def listwise_case(name: str, loss_name: str, make_loss, scores, teacher, lengths, **ours) -> dict:
    flat, inputs, labels = ragged(scores, teacher, lengths)
    with float64():
        value = make_loss(ScoreLookup(flat))(inputs, labels)
        value.backward()
    return {
        "name": name,
        "st_loss": loss_name,
        "scores": scores.tolist(),
        "teacher_scores": teacher.tolist(),
        "lengths": lengths,
        "ours": ours,
        "value": value.item(),
        "grad": padded_grad(flat.grad, lengths, scores.shape[-1]),
    }


def margin_case(name: str, scores: torch.Tensor, teacher: torch.Tensor, label_layout: str) -> dict:
    """MarginMSELoss on ``(query, positive, negative_1, …)`` columns; labels are the teacher's
    scores (``"scores"``, positive first) or its margins (``"margins"``)."""
    batch, width = scores.shape
    flat = scores.reshape(-1).clone().requires_grad_(True)
    columns = [[f"d{b * width + i}" for b in range(batch)] for i in range(width)]
    inputs = [[f"q{b}" for b in range(batch)], *columns]
    labels = teacher.clone() if label_layout == "scores" else teacher[:, :1] - teacher[:, 1:]
    with float64():
        value = st.MarginMSELoss(ScoreLookup(flat))(inputs, labels)
        value.backward()
    return {
        "name": name,
        "st_loss": "MarginMSELoss",
        "scores": scores.tolist(),
        "teacher_scores": teacher.tolist(),
        "lengths": [width] * batch,
        "ours": {"pairs": "first"},
        "label_layout": label_layout,
        "value": value.item(),
        "grad": flat.grad.reshape(batch, width).tolist(),
    }


def distinct_teacher(gen: torch.Generator, batch: int, width: int) -> torch.Tensor:
    """Teacher logits (mostly negative), at least 0.05 apart within a list: no ties, so every
    library orders them the same way."""
    steps = 0.05 + torch.rand(batch, width, generator=gen, dtype=torch.float64)
    values = steps.cumsum(-1) - 2.0 * width / 2
    return torch.stack([row[torch.randperm(width, generator=gen)] for row in values])


def lambdaloss_grade_cases() -> list[dict]:
    """LambdaLoss on graded labels (0–3) at ``k=None``, for ``tn.lambda_loss`` with the same
    weighting scheme (``ours``); from a generator of their own, so the cases above keep their
    inputs."""
    gen = torch.Generator().manual_seed(43)
    cases = []
    for batch, width, lengths_kind in ((3, 6, "equal"), (4, 9, "ragged")):
        scores = 2 * torch.randn(batch, width, generator=gen, dtype=torch.float64)
        grades = torch.randint(0, 4, (batch, width), generator=gen).to(torch.float64)
        grades[:, 0] = 3.0  # every list has something relevant
        lengths = [width] * batch
        if lengths_kind == "ragged":
            lengths = [width] + torch.randint(2, width, (batch - 1,), generator=gen).tolist()
        for scheme, ours in (("NDCGLoss1Scheme", "ndcg_loss1"), ("NDCGLoss2Scheme", "ndcg_loss2")):
            cases.append(listwise_case(
                f"lambdaloss-{ours}-{batch}x{width}-{lengths_kind}", "LambdaLoss",
                lambda m, s=scheme: st.LambdaLoss(m, weighting_scheme=getattr(st, s)()),
                scores, grades, lengths, weighting=ours, gain="exp2",
            ))
    return cases


def main() -> None:
    gen = torch.Generator().manual_seed(2024)
    cases = []
    for batch, width, lengths_kind in ((3, 6, "equal"), (4, 9, "ragged"), (2, 30, "equal"), (5, 12, "ragged")):
        scores = 2 * torch.randn(batch, width, generator=gen, dtype=torch.float64)
        teacher = distinct_teacher(gen, batch, width)
        if lengths_kind == "equal":
            lengths = [width] * batch
        else:
            lengths = [width] + torch.randint(2, width, (batch - 1,), generator=gen).tolist()
        tag = f"{batch}x{width}-{lengths_kind}"
        cases.append(listwise_case(f"listnet-{tag}", "ListNetLoss", st.ListNetLoss, scores, teacher, lengths))
        cases.append(listwise_case(
            f"listmle-{tag}", "ListMLELoss", lambda m: st.ListMLELoss(m, respect_input_order=False),
            scores, teacher, lengths,
        ))
        cases.append(listwise_case(
            f"plistmle-{tag}", "PListMLELoss", lambda m: st.PListMLELoss(m, respect_input_order=False),
            scores, teacher, lengths, position_aware=True,
        ))
        cases.append(listwise_case(f"ranknet-{tag}", "RankNetLoss", st.RankNetLoss, scores, teacher, lengths,
                                   temperature=1e-4))
        for alpha in (1.0, 4.0):
            cases.append(listwise_case(
                f"adrmse-alpha{alpha:g}-{tag}", "ADRMSELoss", lambda m, a=alpha: st.ADRMSELoss(m, alpha=a),
                scores, teacher, lengths, temperature=1 / alpha,
            ))
        if lengths_kind == "equal":
            for layout in ("scores", "margins"):
                cases.append(margin_case(f"marginmse-{layout}-{tag}", scores, teacher, layout))
    # Teacher ties: ADR-MSE gives tied items their average rank in both libraries.
    scores = 2 * torch.randn(3, 8, generator=gen, dtype=torch.float64)
    teacher = torch.randint(-3, 3, (3, 8), generator=gen).to(torch.float64) - 0.5
    cases.append(listwise_case("adrmse-alpha1-ties", "ADRMSELoss", st.ADRMSELoss, scores, teacher, [8, 8, 8],
                               temperature=1.0))
    # LambdaLoss reads its labels as grades (gain 2^label − 1, labels clamped at 0): teacher logits
    # below 0 all become grade 0, so it has no distillation counterpart; the case records that.
    scores = 2 * torch.randn(2, 6, generator=gen, dtype=torch.float64)
    teacher = distinct_teacher(gen, 2, 6) - 20.0
    cases.append(listwise_case("lambdaloss-negative-teacher", "LambdaLoss", st.LambdaLoss, scores, teacher, [6, 6]))
    cases += lambdaloss_grade_cases()
    assert all(math.isfinite(case["value"]) for case in cases)
    OUT.write_text(json.dumps({
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "cases": cases,
    }, indent=1) + "\n")
    print(f"{len(cases)} cases from sentence-transformers {sentence_transformers.__version__} -> {OUT}")


if __name__ == "__main__":
    main()
