"""Dense metrics: dtypes, batch shapes, reductions, ``empty`` modes, gains, discounts, compilation."""

import math

import pytest
import torch
from dense_reference import DEVICES, METRICS, brute_force

import torch_ndcg as tn

WITH_EMPTY = ("ndcg", "mrr", "precision", "recall", "hit_rate", "average_precision")
WITH_GAIN = ("ndcg", "dcg", "cg")


def metric(name, scores, relevance, k=None, **options):
    return getattr(tn, name)(scores, relevance, k, **options)


def batch(rows=6, n=9, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randint(0, 4, (rows, n), generator=g).double()
    relevance = torch.randint(0, 4, (rows, n), generator=g) * (torch.rand(rows, n, generator=g) < 0.5)
    relevance[0] = 0  # one query with nothing to find
    return scores.to(device), relevance.to(device)


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", METRICS)
def test_float64_in_float64_out(name, device):
    scores, relevance = batch(device=device)
    for s, r in [(scores, relevance.double()), (scores.float(), relevance.double()), (scores, relevance)]:
        out = metric(name, s, r, (1, 3), reduction="none")
        assert out.dtype == torch.float64 and out.device.type == device


LOW_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", LOW_DTYPES, ids=str)
@pytest.mark.parametrize("name", METRICS)
def test_low_precision_inputs_give_float32_equal_to_float64(name, dtype, device):
    g = torch.Generator().manual_seed(1)
    # Real-valued scores rounded to the input dtype (half precision creates extra ties); labels
    # graded 0..3 (0/1 for bool).
    raw_scores = torch.rand(5, 11, generator=g) * 6
    raw_labels = torch.randint(0, 2 if dtype == torch.bool else 4, (5, 11), generator=g)
    scores, relevance = raw_scores.to(dtype).to(device), raw_labels.to(dtype).to(device)
    # The float64 computation on the same (already rounded) values is the reference.
    want = metric(name, scores.double(), relevance.double(), (1, 4, None), reduction="none")
    for s, r in [(scores, relevance), (scores, raw_labels.to(device)), (raw_scores.float().to(device), relevance)]:
        got = metric(name, s, r, (1, 4, None), reduction="none")
        assert got.dtype == torch.float32
        reference = metric(name, s.double(), r.double(), (1, 4, None), reduction="none")
        torch.testing.assert_close(got, reference.float(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(metric(name, scores, relevance, (1, 4, None), reduction="none"), want.float())


def test_integer_scores_rank_exactly():
    # Integers beyond float32's 2**24 stay distinct (ranked as float64), so no false ties appear.
    scores = torch.tensor([2**24 + 1, 2**24, 0])
    relevance = torch.tensor([1, 0, 0])
    assert tn.ndcg(scores, relevance, k=1).item() == 1.0
    assert tn.ndcg(scores.float(), relevance, k=1).item() == 0.5  # float32 rounds them into a tie


# ---------------------------------------------------------------- shapes and reductions


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", METRICS)
def test_leading_batch_dimensions_and_reductions(name, device):
    scores, relevance = batch(rows=6, n=7, device=device)
    flat = metric(name, scores, relevance, (1, 3, None), reduction="none")
    nested = metric(name, scores.view(2, 3, 7), relevance.view(2, 3, 7), (1, 3, None), reduction="none")
    assert flat.shape == (6, 3) and nested.shape == (2, 3, 3)
    torch.testing.assert_close(nested.reshape(6, 3), flat)
    single = metric(name, scores.view(2, 3, 7), relevance.view(2, 3, 7), 3, reduction="none")
    assert single.shape == (2, 3)
    torch.testing.assert_close(single, nested[..., 1])
    mean = metric(name, scores.view(2, 3, 7), relevance.view(2, 3, 7), (1, 3, None))
    total = metric(name, scores.view(2, 3, 7), relevance.view(2, 3, 7), (1, 3, None), reduction="sum")
    assert mean.shape == total.shape == (3,)
    torch.testing.assert_close(mean, flat.mean(0))
    torch.testing.assert_close(total, flat.sum(0))
    # One list ([N]) is one query: "none" gives a scalar.
    one = metric(name, scores[1], relevance[1], 3, reduction="none")
    assert one.shape == () and one.item() == pytest.approx(flat[1, 1].item())


# ---------------------------------------------------------------- empty queries


@pytest.mark.parametrize("name", WITH_EMPTY)
def test_empty_modes(name):
    scores = torch.tensor([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0], [1.0, 2.0, 3.0]])
    relevance = torch.tensor([[0, 1, 1], [0, 0, 0], [0, 0, 0]])
    mask = torch.tensor([[True, True, True], [True, True, True], [True, False, False]])
    real = metric(name, scores[0], relevance[0], (1, 2)).tolist()
    zero = metric(name, scores, relevance, (1, 2), mask=mask, reduction="none")
    one = metric(name, scores, relevance, (1, 2), mask=mask, empty="one", reduction="none")
    skip = metric(name, scores, relevance, (1, 2), mask=mask, empty="skip", reduction="none")
    assert zero.tolist() == [real, [0.0, 0.0], [0.0, 0.0]]
    assert one.tolist() == [real, [1.0, 1.0], [1.0, 1.0]]
    assert skip[0].tolist() == real and skip[1:].isnan().all()
    # The mean leaves skipped queries out; zero and one count them.
    assert metric(name, scores, relevance, (1, 2), mask=mask, empty="skip").tolist() == real
    assert metric(name, scores, relevance, (1, 2), mask=mask, empty="skip", reduction="sum").tolist() == real
    assert metric(name, scores, relevance, (1, 2), mask=mask).tolist() == pytest.approx([v / 3 for v in real])
    assert metric(name, scores, relevance, (1, 2), mask=mask, empty="one").tolist() == pytest.approx(
        [(v + 2) / 3 for v in real]
    )
    # A mean over nothing but skipped queries is 0, never NaN.
    only_empty = metric(name, scores[1:], relevance[1:], 2, mask=mask[1:], empty="skip")
    assert only_empty.item() == 0.0
    with pytest.raises(ValueError, match="empty"):
        metric(name, scores, relevance, 2, empty="error")
    assert metric(name, scores[:1], relevance[:1], 2, empty="error").item() == pytest.approx(real[1])


def test_every_item_masked_is_an_empty_query():
    scores, relevance = torch.rand(2, 4), torch.ones(2, 4)
    mask = torch.tensor([[False] * 4, [True, False, True, False]])
    values = tn.ndcg(scores, relevance, mask=mask, empty="skip", reduction="none")
    assert values[0].isnan() and values[1].item() == 1.0
    assert tn.dcg(scores, relevance, mask=mask, reduction="none")[0].item() == 0.0
    assert tn.idcg(relevance, mask=mask, reduction="none").tolist() == pytest.approx([0.0, 1 + 1 / math.log2(3)])


# ---------------------------------------------------------------- gains and discounts


def test_exp2_gain_large_labels():
    scores = torch.tensor([3.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="exp2") as error:
        tn.ndcg(scores, torch.tensor([200.0, 1.0, 0.0]), gain="exp2")
    assert "relevance" in str(error.value) and "float64" in str(error.value)
    with pytest.raises(ValueError, match="exp2"):
        tn.dcg(scores, torch.tensor([200, 1, 0]), gain="exp2")  # int labels compute in float32
    # float64: 2**200 is representable; NDCG is the exact ratio.
    relevance = torch.tensor([1.0, 200.0, 0.0], dtype=torch.float64)
    want = ((2.0**1 - 1) / 1 + (2.0**200 - 1) / math.log2(3)) / ((2.0**200 - 1) + (2.0**1 - 1) / math.log2(3))
    assert tn.ndcg(scores, relevance, gain="exp2").item() == pytest.approx(want, rel=1e-12)
    # A masked label never reaches the gain.
    mask = torch.tensor([True, True, False])
    assert tn.ndcg(scores, torch.tensor([1.0, 2.0, 200.0]), mask=mask, gain="exp2").item() == pytest.approx(
        (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    )


def test_exp2_labels_whose_sum_would_overflow_are_refused():
    # 2**127 fits in float32 but three of them summed do not: the DCG would be inf and NDCG NaN.
    scores = torch.arange(5.0)
    with pytest.raises(ValueError, match="exp2"):
        tn.ndcg(scores, torch.full((5,), 127.0), gain="exp2")
    assert tn.ndcg(scores, torch.full((5,), 120.0), gain="exp2").item() == 1.0
    assert math.isfinite(tn.dcg(scores, torch.full((5,), 120.0), gain="exp2").item())
    assert tn.ndcg(scores, torch.full((5,), 127.0, dtype=torch.float64), gain="exp2").item() == 1.0


def test_callable_gain_and_discount():
    scores = torch.tensor([[4.0, 3.0, 2.0, 1.0]], dtype=torch.float64)
    relevance = torch.tensor([[1.0, 0.0, 3.0, 2.0]], dtype=torch.float64)

    def cubic(r):
        return r**3

    def reciprocal(rank):
        return 1.0 / rank

    dcg = tn.dcg(scores, relevance, discount=reciprocal, gain=cubic).item()
    assert dcg == pytest.approx(1 / 1 + 0 / 2 + 27 / 3 + 8 / 4)
    ideal = tn.idcg(relevance, discount=reciprocal, gain=cubic).item()
    assert ideal == pytest.approx(27 / 1 + 8 / 2 + 1 / 3)
    assert tn.ndcg(scores, relevance, discount=reciprocal, gain=cubic).item() == pytest.approx(dcg / ideal)
    assert tn.cg(scores, relevance, k=3, gain=cubic).item() == 28.0
    # The built-in functions passed as callables are the named options.
    same = tn.ndcg(scores, relevance, (2, None), gain=tn.exp2_gain, discount=tn.log2_discount)
    torch.testing.assert_close(same, tn.ndcg(scores, relevance, (2, None), gain="exp2"))


def test_callable_gain_gives_padding_nothing():
    # gain(0) = 1 here: masked items must still add nothing to DCG or IDCG (masking = removing).
    scores = torch.tensor([3.0, 2.0, 1.0, 0.0])
    relevance = torch.tensor([1.0, 0.0, 2.0, 5.0])
    mask = torch.tensor([True, True, True, False])

    def plus_one(r):
        return r + 1

    for name in ("ndcg", "dcg", "cg"):
        masked = metric(name, scores, relevance, mask=mask, gain=plus_one)
        removed = metric(name, scores[:3], relevance[:3], gain=plus_one)
        assert masked.item() == pytest.approx(removed.item()), name
    assert tn.idcg(relevance, mask=mask, gain=plus_one).item() == pytest.approx(
        tn.idcg(relevance[:3], gain=plus_one).item()
    )


def test_graded_real_valued_relevance_against_brute_force():
    scores = [0.3, 0.3, 0.9, 0.1, 0.9]
    relevance = [0.25, 0.0, 0.75, 1.0, 0.5]
    s, r = torch.tensor(scores, dtype=torch.float64), torch.tensor(relevance, dtype=torch.float64)
    for name in METRICS:
        for k in (1, 2, 4, None):
            assert metric(name, s, r, k).item() == pytest.approx(brute_force(name, scores, relevance, k), abs=1e-12)


# ---------------------------------------------------------------- no host synchronisation

COMPILE_CASES = [
    ("ndcg", 3, {}),
    ("ndcg", (1, 3, 10), {"empty": "skip"}),
    ("ndcg", None, {"gain": "exp2", "reduction": "none"}),
    ("ndcg", 5, {"ties": "first"}),
    ("ndcg", (3, 18), {"short_list": "zero", "reduction": "none"}),  # some masked rows hold < 18 items
    ("ndcg", (2, 4), {"ties": "worst", "reduction": "sum"}),
    ("dcg", (1, 3), {"ties": "best"}),
    ("cg", 3, {}),
    ("mrr", (1, 3, None), {}),
    ("precision", 3, {}),
    ("recall", (1, 3), {"ties": "first"}),
    ("hit_rate", 3, {"empty": "one"}),
    ("average_precision", (1, 3, None), {}),
]


@pytest.mark.parametrize("dynamic", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["static", "dynamic"])
@pytest.mark.parametrize(("name", "k", "options"), COMPILE_CASES)
def test_compiles_without_graph_breaks(name, k, options, dynamic):
    scores, relevance = batch(rows=4, n=20)
    mask = torch.rand(4, 20) < 0.8

    def fn(s, r, m):
        return metric(name, s, r, k, mask=m, validate=False, **options)

    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="eager", dynamic=dynamic)
    scores = scores.float()
    torch.testing.assert_close(compiled(scores, relevance, mask), fn(scores, relevance, mask), equal_nan=True)
    if dynamic:  # a second shape through the same symbolic graph
        s, r, m = scores[:3, :17], relevance[:3, :17], mask[:3, :17]
        torch.testing.assert_close(compiled(s, r, m), fn(s, r, m), equal_nan=True)
    torch._dynamo.reset()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(METRICS))
def test_validating_metrics_compile_with_dynamic_shapes_as_one_graph(name):
    scores, relevance = batch(rows=4, n=20)
    scores = scores.float()

    def fn(s, r):
        return metric(name, s, r, 3)

    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="eager", dynamic=True)
    for rows, n in ((4, 20), (3, 17)):
        s, r = scores[:rows, :n], relevance[:rows, :n]
        torch.testing.assert_close(compiled(s, r), fn(s, r), equal_nan=True)
    torch._dynamo.reset()


def test_idcg_compiles_without_graph_breaks():
    _, relevance = batch(rows=4, n=20)
    torch._dynamo.reset()
    compiled = torch.compile(lambda r: tn.idcg(r, (1, 5), validate=False), fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(relevance), tn.idcg(relevance, (1, 5)))
    torch._dynamo.reset()


def test_validating_metrics_compile_as_one_graph_and_refuse_bad_values_as_eager():
    # The value checks run inside one registered operator under torch.compile, not as graph breaks.
    scores, relevance = batch(rows=4, n=20)
    scores = scores.float()
    torch._dynamo.reset()
    compiled = torch.compile(lambda s, r: tn.ndcg(s, r, 3), fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(scores, relevance), tn.ndcg(scores, relevance, 3))
    bad = scores.clone()
    bad[1, 2] = torch.nan
    for fn in (lambda s, r: tn.ndcg(s, r, 3), compiled):
        with pytest.raises(ValueError, match="scores contains NaN"):
            fn(bad, relevance)
    torch._dynamo.reset()


@pytest.mark.parametrize(("n", "hits", "k"), [(1000, 1, 10), (100_000, 10, 10), (20_000, 1000, 50)])
def test_huge_tie_group_in_float32(n, hits, k):
    # Every item tied: HitRate@k = 1 − C(n−k, R)/C(n, R) and RR@k = Σ_{i≤k} C(n−i, R−1)/C(n, R)/i.
    scores, relevance = torch.zeros(n), torch.zeros(n)
    relevance[:hits] = 1
    total = math.comb(n, hits)
    want_hit = 1 - math.comb(n - k, hits) / total
    want_rr = sum(math.comb(n - i, hits - 1) / total / i for i in range(1, k + 1))
    assert tn.hit_rate(scores, relevance, k).item() == pytest.approx(want_hit, rel=1e-6)
    assert tn.mrr(scores, relevance, k).item() == pytest.approx(want_rr, rel=1e-6)


def test_one_item_lists_and_bool_scores_follow_the_documented_conventions():
    # A one-item list is perfect when its item is relevant, and empty when it is not.
    assert tn.ndcg(torch.tensor([[0.3]]), torch.tensor([[2]])).item() == 1.0
    assert tn.ndcg(torch.tensor([[0.3]]), torch.tensor([[0]]), empty="skip", reduction="none").isnan().all()
    # Bool scores rank True above False, ties averaged like any other tie.
    scores = torch.tensor([[True, False, True]])
    assert torch.equal(tn.ndcg(scores, torch.tensor([[0, 1, 0]])), tn.ndcg(scores.float(), torch.tensor([[0, 1, 0]])))
    assert tn.mrr(scores, torch.tensor([[1, 0, 0]]), ties="first").item() == 1.0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", ["ndcg", "dcg", "cg", "mrr", "precision", "recall", "hit_rate", "average_precision"])
@pytest.mark.parametrize("ties", ["average", "first"])
def test_validate_false_never_waits_for_the_device(name, ties):
    # validate=False promises no device synchronisation on CUDA (the flat layout's output sizes
    # depend on the data, so only the dense layout makes this promise).
    scores = torch.randn(64, 50, device="cuda").round(decimals=1)
    relevance = torch.randint(0, 3, (64, 50), device="cuda")
    mask = torch.rand(64, 50, device="cuda") < 0.9
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        value = getattr(tn, name)(scores, relevance, (1, 10, None), mask=mask, ties=ties, validate=False)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.testing.assert_close(value, getattr(tn, name)(scores, relevance, (1, 10, None), mask=mask, ties=ties))
