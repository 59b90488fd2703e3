"""The flat layout (``indexes=``): agreement with the dense layout on the same data, torchmetrics parity, bad input."""

import pytest
import torch
from dense_reference import DEVICES

import torch_ndcg as tn
from torch_ndcg import flat
from torch_ndcg.flat import _descending_key

METRICS = ("ndcg", "dcg", "mrr", "precision", "recall", "hit_rate", "average_precision")
TIES = ("average", "first", "worst", "best")
EMPTY = ("zero", "one", "skip")


@pytest.fixture(autouse=True, params=["padded rows", "segments"])
def layout(request, monkeypatch):
    """Run every test on both paths: padded [Q, L] rows for the dense kernels, and the segment
    path that skewed query sizes take (forced here by declining every row layout)."""
    if request.param == "segments":
        monkeypatch.setattr(flat, "as_rows", lambda *args: None)
    return request.param


def random_batch(batch=30, n=10, device="cpu"):
    """Scores with many ties, graded labels, padding anywhere, some queries with nothing relevant."""
    scores = torch.randint(-2, 3, (batch, n)).float()
    relevance = torch.randint(0, 4, (batch, n)) * (torch.rand(batch, n) < 0.5)
    relevance[:3] = 0
    mask = torch.rand(batch, n) < 0.8
    mask[torch.arange(batch), torch.randint(0, n, (batch,))] = True  # a grouped query has ≥ 1 item
    return scores.to(device), relevance.to(device), mask.to(device)


def flatten(scores, relevance, mask, index_of_row):
    """Real items of dense rows as one flat batch in a random interleaving of the rows.

    Each row's items keep their relative order, so ``ties="first"`` means the same in both forms.
    """
    rows = torch.arange(scores.shape[0], device=scores.device)[:, None].expand(scores.shape)[mask]
    # A random sequence of row labels with the right multiplicities; the j-th occurrence of a row
    # receives that row's j-th item.
    slots_by_row = torch.sort(rows[torch.randperm(rows.shape[0], device=rows.device)], stable=True).indices
    take = torch.empty_like(slots_by_row)
    take[slots_by_row] = torch.arange(rows.shape[0], device=rows.device)
    return scores[mask][take], relevance[mask][take], index_of_row[rows[take]]


def assert_close(actual, expected):
    torch.testing.assert_close(actual, expected.to(actual.dtype), equal_nan=True, rtol=1e-5, atol=1e-6)


def call(name, form, scores, relevance, extra, k, ties, empty, reduction="none", gain=None):
    options = dict(ties=ties, reduction=reduction)
    if name != "dcg":
        options["empty"] = empty
    if gain is not None:
        options["gain"] = gain
    fn = getattr(tn, name)
    return fn(scores, relevance, **extra, k=k, **options) if form == "dense" else fn(scores, relevance, indexes=extra, k=k, **options)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("k", [None, 1, 3, (2, 5, 40)])
def test_every_metric_agrees_with_dense(device, ties, k):
    scores, relevance, mask = random_batch(device=device)
    # Increasing but gappy, negative ids: reduction="none" follows ascending index order.
    index_of_row = torch.arange(scores.shape[0], device=device) * 7 - 50
    flat = flatten(scores, relevance, mask, index_of_row)
    for name in METRICS:
        for empty in EMPTY:
            expected = call(name, "dense", scores, relevance, {"mask": mask}, k, ties, empty)
            assert_close(call(name, "grouped", *flat, k, ties, empty), expected)


@pytest.mark.parametrize("gain", ["linear", "exp2", lambda r: r * r])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int64])
def test_ndcg_agrees_with_dense_for_gains_and_score_dtypes(gain, dtype):
    # float64 and int64 scores take the two-sort path, float16/float32 the packed-key sort.
    scores, relevance, mask = random_batch()
    flat = flatten(scores.to(dtype), relevance, mask, torch.arange(scores.shape[0]))
    for k in (None, 4):
        expected = tn.ndcg(scores.to(dtype), relevance, k, mask=mask, gain=gain, reduction="none")
        assert_close(tn.ndcg(*flat[:2], k, indexes=flat[2], gain=gain, reduction="none"), expected)


def test_negative_gains_from_a_callable_rank_after_the_zeros():
    # validate=True refuses negative gains; unchecked, both layouts still agree on them.
    scores, relevance, _ = random_batch()
    shift = lambda r: r - 1.0  # noqa: E731  (label 0 → gain -1)
    flat = scores.reshape(-1), relevance.reshape(-1), torch.arange(scores.shape[0]).repeat_interleave(scores.shape[1])
    with pytest.raises(ValueError, match="gain returned"):
        tn.dcg(*flat[:2], indexes=flat[2], gain=shift)
    unchecked = dict(gain=shift, reduction="none", validate=False)
    for k in (None, 3, 8):
        assert_close(tn.dcg(*flat[:2], k, indexes=flat[2], **unchecked), tn.dcg(scores, relevance, k, **unchecked))
        assert_close(tn.ndcg(*flat[:2], k, indexes=flat[2], **unchecked), tn.ndcg(scores, relevance, k, **unchecked))


def test_index_values_order_and_reductions():
    scores, relevance, mask = random_batch()
    batch = scores.shape[0]
    expected = tn.ndcg(scores, relevance, 5, mask=mask, reduction="none")
    # Decreasing ids: ascending index order reverses the rows. Ids beyond 32 bits and int32 ids.
    for index_of_row in (-torch.arange(batch), torch.arange(batch) * 2**40, torch.arange(batch, dtype=torch.int32)):
        flat = flatten(scores, relevance, mask, index_of_row)
        values = tn.ndcg(*flat[:2], 5, indexes=flat[2], reduction="none")
        assert_close(values, expected if index_of_row[1] > index_of_row[0] else expected.flip(0))
    flat = flatten(scores, relevance, mask, torch.arange(batch))
    for reduction in ("mean", "sum"):
        for empty in ("zero", "skip"):
            assert_close(
                tn.ndcg(*flat[:2], 5, indexes=flat[2], empty=empty, reduction=reduction),
                tn.ndcg(scores, relevance, 5, mask=mask, empty=empty, reduction=reduction),
            )
    assert_close(tn.ndcg(*flat[:2], 5, indexes=flat[2], validate=False), tn.ndcg(scores, relevance, 5, mask=mask))
    with pytest.raises(ValueError, match="empty='error'"):
        tn.ndcg(*flat[:2], indexes=flat[2], empty="error")


def test_queries_of_very_different_sizes():
    # One long query and many single-item ones: nothing is padded to the longest query.
    scores = torch.cat([torch.randn(5000).round(), torch.randn(300)])
    relevance = torch.cat([torch.randint(0, 3, (5000,)), torch.ones(300, dtype=torch.long)])
    indexes = torch.cat([torch.zeros(5000, dtype=torch.long), torch.arange(1, 301)])
    values = tn.ndcg(scores, relevance, indexes=indexes, reduction="none")
    assert values.shape == (301,)
    assert_close(values[:1], tn.ndcg(scores[:5000], relevance[:5000])[None])
    assert torch.all(values[1:] == 1)


def test_matches_torchmetrics_retrieval_ndcg():
    retrieval = pytest.importorskip("torchmetrics.retrieval", reason="a peer of the dev extra")
    scores, relevance, mask = random_batch(batch=20, n=12)
    relevance[:3, 0] = 1  # torchmetrics scores empty queries 0 by default, as empty="zero" does
    mask[:3, 0] = True
    flat = flatten(scores, relevance, mask, torch.arange(20))
    for k in (3, 10):
        reference = retrieval.RetrievalNormalizedDCG(top_k=k)(flat[0], flat[1], indexes=flat[2])
        assert tn.ndcg(*flat[:2], k, indexes=flat[2]).item() == pytest.approx(reference.item(), abs=1e-6)


def test_descending_key_orders_floats_like_a_descending_sort():
    values = torch.tensor([0.0, -0.0, 1.5, -1.5, float("inf"), -float("inf"), 1e-40, -1e-40, 3.0, 3.0, -2.0])
    key = _descending_key(values)
    assert key.min() >= 0 and key.max() < 2**32
    assert torch.equal(values[torch.sort(key, stable=True).indices], torch.sort(values, descending=True, stable=True).values)
    assert key[0] == key[1]  # 0.0 and -0.0 are one tie group


def test_bad_input():
    scores, relevance, indexes = torch.tensor([0.5, 0.2]), torch.tensor([1, 0]), torch.tensor([0, 0])
    with pytest.raises(ValueError, match="same shape"):
        tn.ndcg(scores, relevance[:1], indexes=indexes)
    with pytest.raises(ValueError, match="same shape"):
        tn.ndcg(scores, relevance, indexes=indexes[:1])
    with pytest.raises(ValueError, match="1-D"):
        tn.ndcg(scores[None], relevance[None], indexes=indexes[None])
    with pytest.raises(TypeError, match="indexes must be an integer tensor"):
        tn.ndcg(scores, relevance, indexes=indexes.float())
    with pytest.raises(ValueError, match="T = 0"):
        tn.ndcg(scores[:0], relevance[:0], indexes=indexes[:0])
    with pytest.raises(ValueError, match="NaN"):
        tn.mrr(torch.tensor([float("nan"), 0.2]), relevance, indexes=indexes)
    with pytest.raises(ValueError, match="negative, infinite or NaN"):
        tn.recall(scores, torch.tensor([1, -1]), indexes=indexes)
    with pytest.raises(ValueError, match="ties must be one of"):
        tn.ndcg(scores, relevance, indexes=indexes, ties="random")
    with pytest.raises(ValueError, match="k must be ≥ 1"):
        tn.precision(scores, relevance, indexes=indexes, k=0)
    with pytest.raises(ValueError, match="empty must be one of"):
        tn.hit_rate(scores, relevance, indexes=indexes, empty="nan")
    with pytest.raises(ValueError, match="reduction must be one of"):
        tn.average_precision(scores, relevance, indexes=indexes, reduction="avg")
    with pytest.raises(ValueError, match="discount must be one of"):
        tn.dcg(scores, relevance, indexes=indexes, discount="log10")


@pytest.mark.parametrize("ties", TIES)
def test_flattened_rectangular_batch_takes_the_dense_kernels_with_the_same_values(ties):
    # Row-major flattening with ascending row ids is viewed as [Q, N] without a sort; a random
    # interleaving of the same queries is sorted by index first. Both must equal the dense form.
    scores, relevance, _ = random_batch(batch=12, n=7)
    everything = torch.ones_like(scores, dtype=torch.bool)
    rows = torch.arange(12)
    row_major = scores.reshape(-1), relevance.reshape(-1), rows.repeat_interleave(7) * 3
    shuffled = flatten(scores, relevance, everything, rows * 3)
    for name in METRICS:
        for k in (None, 2, (1, 4)):
            expected = call(name, "dense", scores, relevance, {}, k, ties, "skip")
            assert_close(call(name, "grouped", *row_major, k, ties, "skip"), expected)
            assert_close(call(name, "grouped", *shuffled, k, ties, "skip"), expected)
    # Near misses: descending ids, a query split in two, unequal sizes.
    descending = row_major[0], row_major[1], -row_major[2]
    assert_close(tn.ndcg(*descending[:2], 3, indexes=descending[2], ties=ties, reduction="none"), tn.ndcg(scores, relevance, 3, ties=ties, reduction="none").flip(0))
    split = row_major[2].clone()
    split[:7] = 3  # rows 0 and 1 share index 3, so query 3 is rows 0 + 1 and the sizes differ
    merged = tn.ndcg(scores[:2].reshape(1, -1), relevance[:2].reshape(1, -1), 3, ties="average")
    assert_close(tn.ndcg(row_major[:2][0], row_major[:2][1], 3, indexes=split, reduction="none")[0], merged)
    # A strided (non-contiguous) flat view works too.
    wide = torch.stack([row_major[0], row_major[0]], dim=1)[:, 0]
    assert_close(tn.ndcg(wide, row_major[1], 3, indexes=row_major[2]), tn.ndcg(scores, relevance, 3))


def test_padding_is_used_only_while_it_at_most_doubles_the_data(layout):
    # Balanced sizes pad to rows; one long query among short ones would pad to far more than
    # twice the data, so it takes the segment path. Both give the per-query dense values.
    for name, lengths in {"balanced": [5, 4, 5, 3], "skewed": [40, 1, 1, 1]}.items():
        indexes = torch.cat([torch.full((n,), q) for q, n in enumerate(lengths)])
        indexes = indexes[torch.randperm(indexes.shape[0])]
        scores, relevance = torch.randint(0, 3, indexes.shape).float(), torch.randint(0, 3, indexes.shape)
        if layout == "padded rows":
            rows = flat.as_rows(scores, relevance, indexes)
            assert (rows is not None) == (name == "balanced")
        expected = torch.stack([tn.ndcg(scores[indexes == q], relevance[indexes == q], 3) for q in range(len(lengths))])
        assert torch.allclose(tn.ndcg(scores, relevance, 3, indexes=indexes, reduction="none"), expected, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_uneven_queries_with_nothing_relevant_follow_empty(dtype):
    # Uneven sizes take the segment path, whose ideal DCG once sorted an empty selection.
    scores, relevance = torch.rand(10, dtype=dtype), torch.zeros(10)
    indexes = torch.tensor([0, 0, 0, 0, 0, 0, 0, 1, 2, 3])
    assert tn.ndcg(scores, relevance, indexes=indexes).item() == 0.0
    assert tn.ndcg(scores, relevance, indexes=indexes, empty="one").item() == 1.0
    assert tn.average_precision(scores, relevance, indexes=indexes, empty="skip", reduction="none").isnan().all()


def test_exp2_overflow_check_uses_each_querys_own_length():
    # Label 120 fits a 2-item float32 query (limit 125); neither the flat length (1,102 items)
    # nor the padded row length (1,100) is its list's length (both: limit 116).
    indexes = torch.cat([torch.zeros(2, dtype=torch.long), torch.ones(1100, dtype=torch.long)])
    relevance = torch.zeros(indexes.shape[0])
    relevance[0] = 120
    scores = torch.rand(indexes.shape[0])
    value = tn.ndcg(scores, relevance, 1, indexes=indexes, gain="exp2", reduction="none")[0]
    assert value.item() == (1.0 if scores[0] > scores[1] else 0.0)
    relevance[5] = 120  # in the 1,100-item query, whose limit is 116
    with pytest.raises(ValueError, match="labels above 116 overflow gain='exp2' in torch.float32 for lists of 1100"):
        tn.ndcg(scores, relevance, indexes=indexes, gain="exp2")
