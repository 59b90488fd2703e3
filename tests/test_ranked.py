"""The ranked-list (recommender) form: worked examples, agreement with the dense form, conventions, bad input."""

from math import log2

import pytest
import torch
from dense_reference import DEVICES

import torch_ndcg as tn

COMPANIONS = ("precision", "recall", "hit_rate", "average_precision")
EMPTY = ("zero", "one", "skip")

# A Mean NDCG worked example: the ground truth and two recommended lists.
TRUTH = {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}
CASES = [["A", "B", "C"], ["D", "A", "C", "B", "E"]]


def approx(value: float, rel: float = 1e-12):
    return pytest.approx(value, rel=rel, abs=rel)


@pytest.mark.parametrize("device", DEVICES)
def test_worked_example_dcg_idcg_ndcg_and_mean(device):
    ranked, target, relevance = tn.from_lists(CASES, [TRUTH, TRUTH], device=device)
    first = (ranked[:1], target[:1], relevance[:1])
    assert tn.ranked.dcg(*first).item() == approx(0.7654648767857287)
    # IDCG of the whole truth: the DCG of the truth ranked by relevance (k = 5).
    ideal, ideal_target, ideal_relevance = tn.from_lists([["C", "B", "D", "A", "E"]], [TRUTH], device=device)
    assert tn.ranked.dcg(ideal, ideal_target, ideal_relevance).item() == approx(1.3472178133165222)
    # k=None: the list's own length, so the ideal is cut at 3 as well.
    assert tn.ranked.ndcg(*first).item() == approx(0.6048882832133625)
    # With k = 5 the list of 3 is held against the whole ideal.
    assert tn.ranked.ndcg(*first, k=5).item() == approx(0.7654648767857287 / 1.3472178133165222)
    # Mean NDCG, each case at its own list length.
    assert tn.ranked.ndcg(ranked, target, relevance).item() == approx(0.7356022113638424)


@pytest.mark.parametrize("device", DEVICES)
def test_worked_example_implicit_feedback(device):
    ranked = torch.tensor([[6, 3, 8, 4, 5]], device=device)
    target = torch.tensor([[3, 4]], device=device)
    ideal = 1 / log2(2) + 1 / log2(3)  # min(k, |truth|) = 2 ranks of relevance 1
    dcg = 1 / log2(3) + 1 / log2(5)
    assert ideal == pytest.approx(1.6309, abs=5e-5)
    assert dcg == pytest.approx(1.0616, abs=5e-5)
    assert tn.ranked.dcg(target, target).item() == pytest.approx(ideal, rel=1e-6)
    assert tn.ranked.dcg(ranked, target, k=5).item() == pytest.approx(dcg, rel=1e-6)
    assert tn.ranked.ndcg(ranked, target, k=5).item() == pytest.approx(dcg / ideal, rel=1e-6)
    assert tn.ranked.ndcg(ranked, target, k=5).item() == pytest.approx(0.6509, abs=5e-5)
    # The TriRank formula uses 2**r - 1 gains: for 0/1 labels they equal the linear ones.
    assert tn.ranked.ndcg(ranked, target, k=5, gain="exp2").item() == pytest.approx(dcg / ideal, rel=1e-6)
    # Implicit feedback is relevance 1 for every target.
    ones = torch.ones(target.shape, device=device)
    assert tn.ranked.ndcg(ranked, target, ones, k=5).item() == pytest.approx(dcg / ideal, rel=1e-6)


def test_from_lists_string_ids_and_implicit_truths():
    ranked, target, relevance = tn.from_lists([["x", "y", "x"], []], [{"y": 2, "z": 1.5}, ["q", "q", "x"]])
    assert ranked.tolist() == [[0, 1, 0], [-1, -1, -1]]
    assert target.tolist() == [[1, 2], [3, 0]]  # repeated implicit ids count once
    assert relevance.tolist() == [[2.0, 1.5], [1.0, 1.0]]
    assert relevance.dtype == torch.float64 and ranked.dtype == target.dtype == torch.long
    assert tn.from_lists([], [])[0].shape == (0, 1)
    assert tn.from_lists([[1]], [{}], dtype=torch.float32)[2].dtype == torch.float32


def to_ranked(scores, relevance, mask, extra_pads):
    """Dense ``[B, N]`` rows → ranked ids (score order, lower index first among ties) and a shuffled truth.

    Item ``j`` has id ``3 j + 1``; masked items are dropped, ``extra_pads`` pad columns are mixed in
    at random positions of every ranked list, and zero-relevance items stay in the truth.
    """
    batch, n = scores.shape
    ids = torch.arange(n) * 3 + 1
    order = torch.sort(scores.masked_fill(~mask, -torch.inf), dim=-1, descending=True, stable=True).indices
    ranked = torch.where(mask.gather(-1, order), ids[order], -1)
    ranked = torch.cat([ranked, torch.full((batch, extra_pads), -1)], dim=-1)
    # Real ids keep their order (key = column); padding gets a random key, so it lands anywhere.
    column = torch.arange(ranked.shape[-1]).float().expand(ranked.shape)
    key = torch.where(ranked == -1, torch.rand(ranked.shape) * ranked.shape[-1], column)
    ranked = ranked.gather(-1, torch.argsort(key, dim=-1, stable=True))
    shuffle = torch.argsort(torch.rand(batch, n), dim=-1)
    target = torch.where(mask, ids, -1).gather(-1, shuffle)
    return ranked, target, relevance.gather(-1, shuffle)


def random_batch(batch=40, n=9):
    scores = torch.randint(0, 4, (batch, n)).float()
    relevance = torch.randint(0, 4, (batch, n)) * (torch.rand(batch, n) < 0.5)
    relevance[:3] = 0  # queries with nothing to find
    mask = torch.rand(batch, n) < 0.8
    mask[3] = False  # a query with no item at all
    return scores, relevance, mask


def assert_close(actual, expected):
    torch.testing.assert_close(actual, expected.to(actual.dtype), equal_nan=True, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k", [None, 1, 3, 20, (1, 4, None)])
@pytest.mark.parametrize("gain", ["linear", "exp2"])
def test_ndcg_dcg_agree_with_dense(k, gain):
    scores, relevance, mask = random_batch()
    ranked, target, rel = to_ranked(scores, relevance, mask, extra_pads=3)
    dense = dict(k=k, mask=mask, gain=gain, ties="first", reduction="none")
    for empty in EMPTY:
        assert_close(
            tn.ranked.ndcg(ranked, target, rel, k, gain=gain, empty=empty, reduction="none"),
            tn.ndcg(scores, relevance, empty=empty, **dense),
        )
    assert_close(tn.ranked.dcg(ranked, target, rel, k, gain=gain, reduction="none"), tn.dcg(scores, relevance, **dense))


@pytest.mark.parametrize("k", [None, 1, 3, 20, (2, None)])
@pytest.mark.parametrize("name", COMPANIONS)
def test_companions_agree_with_dense(k, name):
    scores, relevance, mask = random_batch()
    ranked, target, rel = to_ranked(scores, relevance, mask, extra_pads=2)
    ours, dense = getattr(tn.ranked, name), getattr(tn, name)
    for empty in EMPTY:
        assert_close(
            ours(ranked, target, rel, k, empty=empty, reduction="none"),
            dense(scores, relevance, k, mask=mask, ties="first", empty=empty, reduction="none"),
        )
    # Every reduction reduces the same per-query values.
    for reduction in ("mean", "sum"):
        assert_close(
            ours(ranked, target, rel, k, empty="skip", reduction=reduction),
            dense(scores, relevance, k, mask=mask, ties="first", empty="skip", reduction=reduction),
        )


@pytest.mark.parametrize("k", [None, 2, (1, 5)])
def test_mrr_agrees_with_dense(k):
    scores, relevance, mask = random_batch()
    ranked, _, _ = to_ranked(scores, relevance, mask, extra_pads=1)
    # Without target_relevance every target counts as relevant: give it only the relevant items.
    relevant_ids = torch.where((relevance > 0) & mask, torch.arange(scores.shape[-1]) * 3 + 1, -1)
    for empty in EMPTY:
        assert_close(
            tn.ranked.mrr(ranked, relevant_ids, k=k, empty=empty, reduction="none"),
            tn.mrr(scores, relevance, k, mask=mask, ties="first", empty=empty, reduction="none"),
        )
    # With target_relevance, a target with relevance 0 is not a hit.
    _, target, rel = to_ranked(scores, relevance, mask, extra_pads=1)
    assert_close(
        tn.ranked.mrr(ranked, target, rel, k, reduction="none"),
        tn.mrr(scores, relevance, k, mask=mask, ties="first", reduction="none"),
    )


def test_empty_error_raises_like_dense():
    scores, relevance, mask = random_batch()
    ranked, target, rel = to_ranked(scores, relevance, mask, extra_pads=0)
    with pytest.raises(ValueError, match="empty='error'"):
        tn.ranked.ndcg(ranked, target, rel, empty="error")
    with pytest.raises(ValueError, match="empty='error'"):
        tn.ranked.recall(ranked, target, rel, empty="error")
    keep = slice(4, None)  # rows that do have a relevant item
    assert_close(
        tn.ranked.ndcg(ranked[keep], target[keep], rel[keep], 3, empty="error"),
        tn.ndcg(scores[keep], relevance[keep], 3, mask=mask[keep], ties="first"),
    )


def test_conventions_duplicates_padding_and_batch_dims():
    target, rel = torch.tensor([[1, 2, 3]]), torch.tensor([[3.0, 2.0, 1.0]])
    # A repeated id counts at its first position only; the copy keeps its rank but gains nothing.
    assert_close(tn.ranked.dcg(torch.tensor([[2, 2, 1]]), target, rel), tn.ranked.dcg(torch.tensor([[2, 9, 1]]), target, rel))
    assert tn.ranked.precision(torch.tensor([[2, 2]]), target, rel).item() == 0.5
    # Padding anywhere in either tensor is removed before ranking.
    padded = tn.ranked.ndcg(torch.tensor([[-1, 2, -1, 1]]), torch.tensor([[3, -1, 1, 2]]), torch.tensor([[1.0, 7.0, 3.0, 2.0]]))
    assert_close(padded, tn.ranked.ndcg(torch.tensor([[2, 1]]), target, rel))
    # A list of padding only recommends nothing: a query with something to find scores 0 on
    # every metric, whatever empty says (only a truth with nothing relevant is an empty query).
    nothing = torch.tensor([[-1, -1]])
    for name in (*COMPANIONS, "ndcg", "dcg", "mrr"):
        options = {} if name == "dcg" else {"empty": "one"}
        for k in (None, 1, 2, (1, None)):
            assert (getattr(tn.ranked, name)(nothing, target, rel, k, **options) == 0).all(), (name, k)
    # No ground truth at all (M = 0) makes every query empty.
    assert tn.ranked.ndcg(torch.tensor([[1, 2]]), torch.zeros(1, 0, dtype=torch.long), empty="skip", reduction="none").isnan().all()
    # Leading batch dimensions are kept, a custom pad_id works, float64 relevance gives float64.
    ranked = torch.tensor([[[5, 7], [7, 0]], [[0, 0], [5, 6]]])
    targets = torch.tensor([[[7, 0], [5, 7]], [[5, 0], [6, 5]]])
    values = tn.ranked.ndcg(ranked, targets, targets.double(), pad_id=0, reduction="none")
    flat = tn.ranked.ndcg(ranked.reshape(4, 2), targets.reshape(4, 2), targets.reshape(4, 2).double(), pad_id=0, reduction="none")
    assert values.shape == (2, 2) and values.dtype == torch.float64
    assert_close(values.reshape(4), flat)
    assert tn.ranked.ndcg(ranked, targets, pad_id=0, k=(1, 2), reduction="none").shape == (2, 2, 2)


def test_int32_ids_and_validate_false_give_the_same_values():
    scores, relevance, mask = random_batch()
    ranked, target, rel = to_ranked(scores, relevance, mask, extra_pads=1)
    expected = tn.ranked.ndcg(ranked, target, rel, 4)
    assert_close(tn.ranked.ndcg(ranked.int(), target.short(), rel, 4), expected)
    assert_close(tn.ranked.ndcg(ranked, target, rel, 4, validate=False), expected)


def test_bad_input():
    ranked, target, rel = torch.tensor([[1, 2]]), torch.tensor([[1, 3]]), torch.tensor([[1.0, 2.0]])
    with pytest.raises(ValueError, match="leading"):
        tn.ranked.ndcg(torch.tensor([[1, 2], [3, 4]]), target, rel)
    with pytest.raises(ValueError, match="target_relevance must have the shape"):
        tn.ranked.ndcg(ranked, target, rel[:, :1])
    with pytest.raises(TypeError, match="ranked_ids must be an integer tensor"):
        tn.ranked.ndcg(ranked.float(), target, rel)
    with pytest.raises(TypeError, match="target_ids must be an integer tensor"):
        tn.ranked.mrr(ranked, target.bool())
    with pytest.raises(ValueError, match="k must be ≥ 1"):
        tn.ranked.ndcg(ranked, target, rel, k=0)
    with pytest.raises(TypeError, match="k must be"):
        tn.ranked.recall(ranked, target, rel, k=2.0)
    with pytest.raises(ValueError, match="empty must be one of"):
        tn.ranked.ndcg(ranked, target, rel, empty="nan")
    with pytest.raises(ValueError, match="reduction must be one of"):
        tn.ranked.hit_rate(ranked, target, rel, reduction="avg")
    with pytest.raises(ValueError, match="gain must be one of"):
        tn.ranked.dcg(ranked, target, rel, gain="cubic")
    with pytest.raises(ValueError, match="id twice"):
        tn.ranked.ndcg(ranked, torch.tensor([[3, 3]]), rel)
    with pytest.raises(ValueError, match="negative, infinite or NaN"):
        tn.ranked.ndcg(ranked, target, torch.tensor([[1.0, -1.0]]))
    with pytest.raises(ValueError, match="length 0"):
        tn.ranked.ndcg(torch.zeros(1, 0, dtype=torch.long), target, rel)
    with pytest.raises(TypeError, match="pad_id"):
        tn.ranked.ndcg(ranked, target, rel, pad_id=True)
    with pytest.raises(ValueError, match="overflow"):
        tn.ranked.ndcg(ranked, target, torch.tensor([[1.0, 500.0]]), gain="exp2")
    with pytest.raises(ValueError, match="one entry per query"):
        tn.from_lists([["a"]], [])
    with pytest.raises(TypeError, match="predict_lists"):
        tn.from_lists(["abc"], [{"a": 1}])
    with pytest.raises(TypeError, match="ground_truths"):
        tn.from_lists([["a"]], ["a"])
    with pytest.raises(TypeError, match="real numbers"):
        tn.from_lists([["a"]], [{"a": "high"}])
    # Padded duplicates and negative labels of padding are not errors.
    assert tn.ranked.ndcg(ranked, torch.tensor([[-1, -1]]), torch.tensor([[-5.0, -5.0]])).item() == 0.0


def test_a_user_without_recommendations_is_not_skipped():
    # Skipping users who got nothing would reward a recommender for returning nothing.
    ranked, target = torch.tensor([[-1, -1], [3, 4]]), torch.tensor([[3, 4], [3, 4]])
    assert tn.ranked.ndcg(ranked, target, empty="skip").item() == 0.5
    assert tn.ranked.recall(ranked, target, empty="skip").item() == 0.5
    # A user whose truth is empty is the one that empty decides.
    no_truth = torch.tensor([[-1, -1], [3, 4]])
    assert tn.ranked.ndcg(torch.tensor([[3, 4], [3, 4]]), no_truth, empty="skip").item() == 1.0


def test_from_lists_takes_tensor_and_array_rows_and_refuses_tensor_ids():
    import numpy as np

    expected = tn.ranked.ndcg(*tn.from_lists([[1, 2, 3]], [{1: 1.0}])).item()
    assert expected == 1.0
    assert tn.ranked.ndcg(*tn.from_lists(torch.tensor([[1, 2, 3]]), [{1: 1.0}])).item() == expected
    assert tn.ranked.ndcg(*tn.from_lists(np.array([[1, 2, 3]]), [np.array([1])])).item() == expected
    with pytest.raises(TypeError, match="tolist"):
        tn.from_lists([[torch.tensor(1), torch.tensor(2)]], [{1: 1.0}])
