"""Textbook worked examples of DCG, IDCG, NDCG and MRR on dense ``[..., N]`` lists, with their figures.

Scores are chosen so that the dense ranking is the example's list order (first item scored highest).
Values quoted "by hand" below are the textbook sums written out in the comment.
"""

from math import log2

import numpy as np
import pytest
import torch
from dense_reference import DEVICES
from sklearn.metrics import dcg_score, ndcg_score

import torch_ndcg as tn


def in_order(n: int, device: str = "cpu") -> torch.Tensor:
    """Scores that rank ``n`` items in index order (item 0 first)."""
    return torch.arange(n, 0, -1, dtype=torch.float64, device=device)


def approx(value: float, rel: float = 1e-12):
    return pytest.approx(value, rel=rel, abs=rel)


# IDCG@4 of [3, 2, 2, 1] = 3/log2(2) + 2/log2(3) + 2/log2(4) + 1/log2(5) = 5.6925...
IDCG_3221 = 3 / log2(2) + 2 / log2(3) + 2 / log2(4) + 1 / log2(5)


@pytest.mark.parametrize("device", DEVICES)
def test_idcg_of_3221(device):
    assert IDCG_3221 == pytest.approx(5.6925, abs=5e-5)
    relevance = torch.tensor([3.0, 2.0, 2.0, 1.0], dtype=torch.float64, device=device)
    assert tn.idcg(relevance, k=4).item() == approx(IDCG_3221)
    # The ideal order does not depend on the order the labels come in.
    assert tn.idcg(relevance.flip(0), k=4).item() == approx(IDCG_3221)
    assert tn.dcg(in_order(4, device), relevance, k=4).item() == approx(IDCG_3221)
    assert tn.ndcg(in_order(4, device), relevance, k=4).item() == approx(1.0)


# Items A..E with relevance 0.5, 0.9, 0.3, 0.6, 0.1.
CN_RELEVANCE = {"A": 0.5, "B": 0.9, "C": 0.3, "D": 0.6, "E": 0.1}
# list_1 = [A, B, C, D, E]: 0.5/1 + 0.9/log2(3) + 0.3/2 + 0.6/log2(5) + 0.1/log2(6) = 1.51493
# (the notes add terms rounded to two decimals and print 1.52).
CN_DCG_1 = 0.5 + 0.9 / log2(3) + 0.3 / 2 + 0.6 / log2(5) + 0.1 / log2(6)
# list_2 = [D, A, E, C, B]: 0.6/1 + 0.5/log2(3) + 0.1/2 + 0.3/log2(5) + 0.9/log2(6) = 1.44284 (≈ 1.44)
CN_DCG_2 = 0.6 + 0.5 / log2(3) + 0.1 / 2 + 0.3 / log2(5) + 0.9 / log2(6)
# ideal [B, D, A, C, E]: 0.9/1 + 0.6/log2(3) + 0.5/2 + 0.3/log2(5) + 0.1/log2(6) = 1.69645 (≈ 1.70)
CN_IDCG = 0.9 + 0.6 / log2(3) + 0.5 / 2 + 0.3 / log2(5) + 0.1 / log2(6)


def chinese_batch(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """One row per list of the notes; columns are the items A..E, scores give the list order."""
    items = list(CN_RELEVANCE)
    relevance = torch.tensor([list(CN_RELEVANCE.values())] * 2, dtype=torch.float64, device=device)
    scores = torch.zeros(2, 5, dtype=torch.float64, device=device)
    for row, order in enumerate(["ABCDE", "DAECB"]):
        for rank, item in enumerate(order):
            scores[row, items.index(item)] = 5 - rank
    return scores, relevance


@pytest.mark.parametrize("device", DEVICES)
def test_chinese_notes_table(device):
    assert (round(CN_DCG_1, 2), round(CN_DCG_2, 2), round(CN_IDCG, 2)) == (1.51, 1.44, 1.70)
    assert abs(CN_DCG_1 - 1.52) < 0.01  # the notes' figure, from rounded terms
    scores, relevance = chinese_batch(device)
    dcg = tn.dcg(scores, relevance, reduction="none")
    assert dcg.tolist() == [approx(CN_DCG_1), approx(CN_DCG_2)]
    assert tn.idcg(relevance, reduction="none").tolist() == [approx(CN_IDCG)] * 2
    ndcg = tn.ndcg(scores, relevance, reduction="none")
    assert ndcg.tolist() == [approx(CN_DCG_1 / CN_IDCG), approx(CN_DCG_2 / CN_IDCG)]
    # "DCG_1 > DCG_2, so list_1 is better" and both are below the ideal.
    assert CN_IDCG > dcg[0].item() > dcg[1].item()


@pytest.mark.parametrize("device", DEVICES)
def test_chinese_notes_cumulative_gain(device):
    # CG ignores the order: 0.5 + 0.9 + 0.3 + 0.6 + 0.1 = 2.4 for both lists.
    scores, relevance = chinese_batch(device)
    assert tn.cg(scores, relevance, reduction="none").tolist() == [approx(2.4)] * 2
    # CG@2 does depend on which items are on top: A + B = 1.4, D + A = 1.1.
    assert tn.cg(scores, relevance, k=2, reduction="none").tolist() == [approx(1.4), approx(1.1)]


# The scikit-learn documentation's example (true relevance [3, 2, 1, 0, 0], scores [3, 2, 0, 0, 1]).
# Ranking: item0 (3), item1 (2), item4 (rel 0), then items 2 and 3 tied at score 0 with labels
# 1 and 0, which share ranks 4 and 5 at their average label 0.5:
# DCG = 3 + 2/log2(3) + 0/2 + 0.5·(1/log2(5) + 1/log2(6)) = 4.67062; IDCG = 3 + 2/log2(3) + 1/2.
SK_DCG = 3 + 2 / log2(3) + 0.5 * (1 / log2(5) + 1 / log2(6))
SK_IDCG = 3 + 2 / log2(3) + 1 / 2


@pytest.mark.parametrize("device", DEVICES)
def test_sklearn_example_of_the_notes(device):
    true = np.asarray([[3, 2, 1, 0, 0]])
    score = np.asarray([[3, 2, 0, 0, 1]])
    assert dcg_score(true, score) == approx(SK_DCG)
    assert ndcg_score(true, score) == approx(SK_DCG / SK_IDCG)
    t = torch.tensor(true, device=device)
    s = torch.tensor(score, device=device)
    assert tn.dcg(s, t).item() == pytest.approx(SK_DCG, rel=1e-6)
    assert tn.dcg(t, t).item() == pytest.approx(SK_IDCG, rel=1e-6)
    assert tn.idcg(t).item() == pytest.approx(SK_IDCG, rel=1e-6)
    assert tn.ndcg(s, t).item() == pytest.approx(SK_DCG / SK_IDCG, rel=1e-6)
    # float64 in, float64 out: agrees to the last bits.
    assert tn.ndcg(s.double(), t).item() == approx(0.980840401274087)
    # Breaking the tie in favour of the relevant item (best) or against it (worst) brackets it.
    best = 3 + 2 / log2(3) + 1 / log2(5)
    worst = 3 + 2 / log2(3) + 1 / log2(6)
    assert tn.dcg(s.double(), t, ties="best").item() == approx(best)
    assert tn.dcg(s.double(), t, ties="worst").item() == approx(worst)
    assert tn.dcg(s.double(), t, ties="first").item() == approx(best)  # item 2 precedes item 3


# r = [3, 2, 3, 0, 1, 2] in rank order.
R = [3.0, 2.0, 3.0, 0.0, 1.0, 2.0]


@pytest.mark.parametrize("device", DEVICES)
def test_dcg_ndcg_of_r(device):
    relevance = torch.tensor(R, dtype=torch.float64, device=device)
    scores = in_order(6, device)
    # 3/1 + 2/log2(3) = 4.2618595071429155; + 3/log2(4) = 5.7618595071429155
    assert tn.dcg(scores, relevance, k=2).item() == approx(4.2618595071429155)
    assert tn.dcg(scores, relevance, k=3).item() == approx(5.7618595071429155)
    assert tn.dcg(scores, relevance, k=(2, 3)).tolist() == [
        approx(4.2618595071429155),
        approx(5.7618595071429155),
    ]
    # IDCG@3 = 3/1 + 3/log2(3) + 2/log2(4) = 5.892789260714372 (the notes' dcg_max)
    assert tn.idcg(relevance, k=3).item() == approx(5.892789260714372)
    assert tn.ndcg(scores, relevance, k=3).item() == approx(0.9777813616305049)
    # float32 default path agrees to float32 precision.
    assert tn.ndcg(scores.float(), relevance.float(), k=3).item() == pytest.approx(0.9777813616305049, rel=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_exponential_gain_of_r(device):
    # The exp2 form: DCG = Σ (2^rel − 1)/log2(i + 1).
    # DCG@3 = 7/1 + 3/log2(3) + 7/log2(4) = 12.392789260714373
    # DCG@6 adds 0/log2(5) + 1/log2(6) + 3/log2(7) = 13.848263629272981
    relevance = torch.tensor(R, dtype=torch.float64, device=device)
    scores = in_order(6, device)
    dcg = tn.dcg(scores, relevance, k=(3, None), gain="exp2")
    assert dcg.tolist() == [approx(12.392789260714373), approx(13.848263629272981)]
    # IDCG@3 (exp2) = 7 + 7/log2(3) + 3/2; NDCG@3 = DCG@3 / IDCG@3.
    ideal = 7 + 7 / log2(3) + 3 / 2
    assert tn.idcg(relevance, k=3, gain="exp2").item() == approx(ideal)
    assert tn.ndcg(scores, relevance, k=3, gain="exp2").item() == approx(12.392789260714373 / ideal)
    # The exponential gain is a gain function like any other: same numbers from a callable.
    as_callable = tn.dcg(scores, relevance, k=(3, None), gain=lambda r: 2.0**r - 1.0)
    assert as_callable.tolist() == [approx(12.392789260714373), approx(13.848263629272981)]


@pytest.mark.parametrize("device", DEVICES)
def test_implicit_feedback_example(device):
    # Implicit feedback: k = 5, truth {3, 4}, predicted [6, 3, 8, 4, 5]. Binary labels, so the
    # exponential gain 2^1 − 1 = 1 equals the linear one.
    # IDCG = 1/log2(2) + 1/log2(3) = 1.6309; DCG = 1/log2(3) + 1/log2(5) = 1.0616; NDCG = 0.6509.
    relevance = torch.tensor([0, 1, 0, 1, 0], device=device)
    scores = in_order(5, device)
    for gain in ("linear", "exp2"):
        assert tn.idcg(relevance, k=5, gain=gain).item() == pytest.approx(1.6309297535714575, rel=1e-6)
        assert tn.dcg(scores, relevance, k=5, gain=gain).item() == pytest.approx(1.0616063116448506, rel=1e-6)
        ndcg = tn.ndcg(scores, relevance, k=5, gain=gain).item()
        assert ndcg == pytest.approx(0.6509209298071326, rel=1e-6)
        assert round(ndcg, 4) == 0.6509


# Predicted [A, B, C] and [D, A, C, B, E] against
# {A: 0.1, B: 0.5, C: 0.7, D: 0.5, E: 0.1}. Every truth item is a column, so the dense form
# applies: items outside the recommended list are scored below it and fall outside k.
KR_TRUTH = {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}


def korean_row(order: str, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    items = list(KR_TRUTH)
    relevance = torch.tensor(list(KR_TRUTH.values()), dtype=torch.float64, device=device)
    scores = torch.zeros(5, dtype=torch.float64, device=device)
    for rank, item in enumerate(order):
        scores[items.index(item)] = 10 - rank
    return scores, relevance


@pytest.mark.parametrize("device", DEVICES)
def test_korean_notes_in_dense_form(device):
    scores, relevance = korean_row("ABC", device)
    # 0.1/1 + 0.5/log2(3) + 0.7/log2(4) = 0.7654648767857287
    assert tn.dcg(scores, relevance, k=3).item() == approx(0.7654648767857287)
    # IDCG of the whole truth: 0.7 + 0.5/log2(3) + 0.5/2 + 0.1/log2(5) + 0.1/log2(6)
    assert tn.idcg(relevance).item() == approx(1.3472178133165222)
    # NDCG at the list's length 3 (so IDCG@3).
    first = tn.ndcg(scores, relevance, k=3)
    assert first.item() == approx(0.6048882832133625)
    scores2, _ = korean_row("DACBE", device)
    second = tn.ndcg(scores2, relevance, k=5)
    assert ((first + second) / 2).item() == approx(0.7356022113638424)


@pytest.mark.parametrize("device", DEVICES)
def test_mrr_example(device):
    # First relevant items at ranks 3, 2, 1 → (1/3 + 1/2 + 1)/3 = 0.6111…
    relevance = torch.tensor([[0, 0, 1], [0, 1, 0], [1, 0, 0]], device=device)
    scores = in_order(3, device).expand(3, 3)
    assert tn.mrr(scores, relevance).item() == pytest.approx((1 / 3 + 1 / 2 + 1) / 3, rel=1e-6)
    assert tn.mrr(scores.double(), relevance).item() == approx(0.611111111111111)
    assert tn.mrr(scores, relevance, reduction="none").tolist() == pytest.approx([1 / 3, 1 / 2, 1.0])
    # With k = 2 the first query finds nothing within the cutoff.
    assert tn.mrr(scores, relevance, k=2).item() == pytest.approx((0 + 1 / 2 + 1) / 3, rel=1e-6)
