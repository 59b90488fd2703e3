"""Parity of the dense metrics with scikit-learn and torchmetrics on random batches.

Conventions found while writing these (see the individual tests):
- scikit-learn ``ignore_ties=False`` and torchmetrics' NDCG average over tied orderings
  (McSherry & Najork), which is ``ties="average"``; compared on integer scores with many ties.
- scikit-learn ``ignore_ties=True`` ranks tied items in whatever order ``np.argsort`` (not a
  stable sort) returns, neither index order nor its reverse, so it is compared on tie-free scores.
- torchmetrics' MRR, precision, recall and AP treat an item whose score is ≤ 0 as not retrieved
  (``target = where(preds > 0, target, 0)``); compared on positive scores.
- torchmetrics' AP@k divides by the relevant items found in the top k; ours by min(R, k).
"""

import numpy as np
import pytest
import torch
from sklearn.metrics import dcg_score, ndcg_score

tmf = pytest.importorskip("torchmetrics.functional.retrieval", reason="a peer of the dev extra")

import torch_ndcg as tn

CUTOFFS = (1, 3, 10, None)
ROWS, N = 40, 8  # N < 10, so k = 10 also covers "k larger than the list"


def tied_batch(seed: int, binary: bool):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randint(0, 4, (ROWS, N), generator=g).double()
    relevance = torch.randint(0, 2 if binary else 5, (ROWS, N), generator=g)
    relevance[:3] = 0  # some queries with nothing relevant
    return scores, relevance


def tie_free_batch(seed: int, binary: bool):
    g = torch.Generator().manual_seed(seed)
    # A random permutation of 1..N per row: positive, distinct scores.
    scores = torch.rand(ROWS, N, generator=g).argsort(-1).double() + 1
    relevance = torch.randint(0, 2 if binary else 5, (ROWS, N), generator=g)
    relevance[:3] = 0
    return scores, relevance


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("k", CUTOFFS)
def test_sklearn_tie_averaged(k, binary):
    scores, relevance = tied_batch(1 + binary, binary)
    y_true, y_score = relevance.numpy(), scores.numpy()
    want_ndcg = [ndcg_score(y_true[i : i + 1], y_score[i : i + 1], k=k) for i in range(ROWS)]
    want_dcg = [dcg_score(y_true[i : i + 1], y_score[i : i + 1], k=k) for i in range(ROWS)]
    got_ndcg = tn.ndcg(scores, relevance.double(), k, reduction="none")
    got_dcg = tn.dcg(scores, relevance.double(), k, reduction="none")
    np.testing.assert_allclose(got_ndcg.numpy(), want_ndcg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_dcg.numpy(), want_dcg, rtol=1e-12, atol=1e-12)
    # The batch mean is scikit-learn's sample average; float32 inputs agree to float32 precision.
    assert tn.ndcg(scores.float(), relevance, k).item() == pytest.approx(ndcg_score(y_true, y_score, k=k), abs=1e-6)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("k", CUTOFFS)
def test_sklearn_ignore_ties_on_tie_free_scores(k, binary):
    scores, relevance = tie_free_batch(3 + binary, binary)
    y_true, y_score = relevance.numpy(), scores.numpy()
    want_ndcg = [ndcg_score(y_true[i : i + 1], y_score[i : i + 1], k=k, ignore_ties=True) for i in range(ROWS)]
    want_dcg = [dcg_score(y_true[i : i + 1], y_score[i : i + 1], k=k, ignore_ties=True) for i in range(ROWS)]
    for ties in ("first", "average"):  # without ties every mode is the same ranking
        got_ndcg = tn.ndcg(scores, relevance.double(), k, ties=ties, reduction="none")
        got_dcg = tn.dcg(scores, relevance.double(), k, ties=ties, reduction="none")
        np.testing.assert_allclose(got_ndcg.numpy(), want_ndcg, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got_dcg.numpy(), want_dcg, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("k", CUTOFFS)
def test_torchmetrics_ndcg_with_ties(k, binary):
    # torchmetrics 1.9 ports scikit-learn's tie averaging (_tie_average_dcg), in float32.
    scores, relevance = tied_batch(5 + binary, binary)
    want = torch.stack([tmf.retrieval_normalized_dcg(s.float(), r, top_k=k) for s, r in zip(scores, relevance)])
    got = tn.ndcg(scores.float(), relevance, k, reduction="none")
    torch.testing.assert_close(got, want, rtol=0, atol=1e-6)


TM_BINARY = {
    "mrr": tmf.retrieval_reciprocal_rank,
    "precision": tmf.retrieval_precision,
    "recall": tmf.retrieval_recall,
    "hit_rate": tmf.retrieval_hit_rate,
    "average_precision": tmf.retrieval_average_precision,
}


@pytest.mark.parametrize("name", TM_BINARY)
@pytest.mark.parametrize("k", CUTOFFS)
def test_torchmetrics_binary_metrics_on_tie_free_scores(name, k):
    scores, relevance = tie_free_batch(7, binary=True)
    relevance = relevance.bool()
    want = torch.stack([TM_BINARY[name](s.float(), r, top_k=k) for s, r in zip(scores, relevance)])
    got = getattr(tn, name)(scores.float(), relevance, k, reduction="none")
    if name == "average_precision" and k is not None:
        # Same sum of precisions at the hits, different normaliser: torchmetrics divides by the
        # hits found in the top k, we divide by min(R, k) (the usual AP@k, so that a ranking
        # that finds one of many relevant items at rank 1 does not score a perfect 1).
        found = tn.precision(scores, relevance, k, reduction="none") * k
        relevant = relevance.sum(-1).clamp(max=k).float()
        got = torch.where(found > 0, got * relevant / found.clamp(min=1).float(), got)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-6)


def test_torchmetrics_drops_non_positive_scores():
    # The convention difference called out above, pinned so that a change in torchmetrics shows.
    scores = torch.tensor([0.0, -1.0, -2.0])
    relevance = torch.tensor([True, False, False])
    assert tmf.retrieval_reciprocal_rank(scores, relevance).item() == 0.0
    assert tn.mrr(scores, relevance).item() == 1.0
