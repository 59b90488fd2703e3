"""float64 per-item weights or sample_weight make the result float64, as a float64 score does."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn

SCORES = torch.tensor([[0.3, 0.9, 0.1], [0.5, 0.2, 0.4]])
LABELS = torch.tensor([[1, 2, 0], [0, 1, 3]])
IDS = torch.tensor([0, 0, 0, 1, 1, 1])
W64, SW64 = torch.tensor([[1.0, 0.5, 2.0], [1.0, 1.0, 3.0]], dtype=torch.float64), torch.tensor([1.0, 3.0], dtype=torch.float64)
CASES = {
    "ndcg weights": lambda s: tn.ndcg(s, LABELS, weights=W64, reduction="none"),
    "dcg weights, k": lambda s: tn.dcg(s, LABELS, 2, weights=W64),
    "ndcg sample_weight": lambda s: tn.ndcg(s, LABELS, sample_weight=SW64),
    "ndcg sample_weight, sum": lambda s: tn.ndcg(s, LABELS, sample_weight=SW64, reduction="sum"),
    "mrr sample_weight": lambda s: tn.mrr(s, LABELS, sample_weight=SW64),
    "flat weights": lambda s: tn.ndcg(s.reshape(-1), LABELS.reshape(-1), indexes=IDS, weights=W64.reshape(-1)),
    "flat segments weights": lambda s: tn.ndcg(s.reshape(-1)[:4], LABELS.reshape(-1)[:4], indexes=IDS[:4],
                                               weights=W64.reshape(-1)[:4], reduction="none"),
    "flat sample_weight": lambda s: tn.ndcg(s.reshape(-1), LABELS.reshape(-1), indexes=IDS, sample_weight=SW64),
    "ordered pairs sample_weight": lambda s: tn.ordered_pair_accuracy(s, LABELS, sample_weight=SW64),
    "ranked weights": lambda s: tn.ranked.ndcg(torch.tensor([[1, 2, 3]]), torch.tensor([[2, 3]]), weights=W64[:1, :2]),
    "ranked sample_weight": lambda s: tn.ranked.ndcg(torch.tensor([[1, 2], [3, 1]]), torch.tensor([[2], [1]]),
                                                     sample_weight=SW64),
}


@pytest.mark.parametrize("name", CASES)
def test_float64_weights_give_a_float64_result(name):
    got = CASES[name](SCORES)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, CASES[name](SCORES.double()), rtol=1e-6, atol=1e-7)


def test_other_weights_keep_float32():
    assert tn.ndcg(SCORES, LABELS, weights=W64.float()).dtype == torch.float32
    assert tn.ndcg(SCORES, LABELS, sample_weight=torch.tensor([1, 3])).dtype == torch.float32
