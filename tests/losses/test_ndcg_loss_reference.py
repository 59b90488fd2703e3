"""The NDCG losses, now the NDCG definition of :mod:`torch_ndcg.over_ranks` fed by a relaxation
object, give the values and gradients of the versions that computed their own smooth DCG, on
every implementation and option (``ndcg_loss_reference/``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ndcg_loss_reference.make import CASES, run

_FILE = Path(__file__).parent / "ndcg_loss_reference" / "reference.json"
REFERENCE = {case["name"]: case for case in json.loads(_FILE.read_text())["cases"]}


def _close(got: list, expected: list, dtype: str) -> None:
    rtol, atol = (1e-12, 1e-15) if dtype == "float64" else (2e-6, 1e-7)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if e is None:
            assert g is None
        else:
            assert g is not None and math.isclose(g, e, rel_tol=rtol, abs_tol=atol), (g, e)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case[0] for case in CASES])
def test_ndcg_losses_keep_their_values_and_gradients(index):
    got, expected, dtype = run(index), REFERENCE[CASES[index][0]], CASES[index][5]
    _close(got["per_list"], expected["per_list"], dtype)
    _close(got["loss"], expected["loss"], dtype)
    assert len(got["grads"]) == len(expected["grads"])
    for g, e in zip(got["grads"], expected["grads"]):
        _close(g, e, dtype)
