"""Stateful metric classes: accumulating batches equals the functional form on the concatenation."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
from torchmetrics import MetricCollection  # noqa: E402

import torch_ndcg as tn  # noqa: E402
from torch_ndcg import ranked  # noqa: E402
from torch_ndcg import metrics as M  # noqa: E402

from dense_reference import cuda

# class → functional name; every class has the dense, grouped and ranked functional forms
SCORED = {
    M.NDCG: "ndcg", M.DCG: "dcg", M.MRR: "mrr", M.Precision: "precision", M.Recall: "recall",
    M.HitRate: "hit_rate", M.AveragePrecision: "average_precision",
}
RANKED = {
    M.RankedNDCG: "ndcg", M.RankedDCG: "dcg", M.RankedMRR: "mrr", M.RankedPrecision: "precision",
    M.RankedRecall: "recall", M.RankedHitRate: "hit_rate", M.RankedAveragePrecision: "average_precision",
}
CUTOFFS = [None, 3, (1, 5, 10), (None, 2)]
EMPTIES = ["zero", "one", "skip"]
SPLITS = [0, 1, 4, 5, 9, 14, 20]  # uneven batches, one of them a single query


def dense_data(queries: int = 20, items: int = 12) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer scores (many ties), graded labels, ragged lists via a mask, some empty queries."""
    scores = torch.randint(0, 4, (queries, items)).float()
    relevance = torch.randint(0, 3, (queries, items)) * (torch.rand(queries, items) < 0.4)
    relevance[::6] = 0  # queries with nothing relevant
    mask = torch.arange(items) < torch.randint(1, items + 1, (queries, 1))
    return scores, relevance, mask


def options(cls: type, empty: str) -> dict:
    return {} if cls in (M.DCG, M.RankedDCG) else {"empty": empty}


def as_vector(result: torch.Tensor | dict) -> torch.Tensor:
    return torch.stack(list(result.values())) if isinstance(result, dict) else result


def batches(*tensors: torch.Tensor):
    for start, stop in zip(SPLITS, SPLITS[1:]):
        yield tuple(t[start:stop] for t in tensors)


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("empty", EMPTIES)
@pytest.mark.parametrize("cls", list(SCORED))
def test_dense_batches_equal_functional_on_concatenation(cls: type, empty: str, k: object) -> None:
    scores, relevance, mask = dense_data()
    metric = cls(k=k, **options(cls, empty))
    for s, r, m in batches(scores, relevance, mask):
        metric.update(s, r, mask=m)
    expected = getattr(tn, SCORED[cls])(scores, relevance, k, mask=mask, **options(cls, empty))
    torch.testing.assert_close(as_vector(metric.compute()), expected)


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("empty", EMPTIES)
@pytest.mark.parametrize("cls", list(SCORED))
def test_flat_rows_equal_grouped_on_concatenation(cls: type, empty: str, k: object) -> None:
    scores, relevance, mask = dense_data()
    ids = torch.arange(scores.shape[0]).unsqueeze(-1).expand_as(scores) * 7 - 30  # sparse, negative ids
    order = torch.randperm(int(mask.sum()))  # rows of a query scattered over several batches
    s, r, i = (t[mask][order] for t in (scores, relevance, ids))
    metric = cls(k=k, **options(cls, empty))
    for start in range(0, len(order), 37):
        metric.update(s[start : start + 37], r[start : start + 37], indexes=i[start : start + 37])
    expected = getattr(tn, SCORED[cls])(s, r, k, indexes=i, **options(cls, empty))
    torch.testing.assert_close(as_vector(metric.compute()), expected)
    # and the same number as the dense form of the same queries
    dense_value = getattr(tn, SCORED[cls])(scores, relevance, k, mask=mask, **options(cls, empty))
    torch.testing.assert_close(as_vector(metric.compute()), dense_value)


def ranked_data(queries: int = 20) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Recommended lists of up to 8 ids from 30 items (padded with -1) and truths of up to 5 ids."""
    ranked_ids = torch.stack([torch.randperm(30)[:8] for _ in range(queries)])
    ranked_ids[torch.arange(8) >= torch.randint(1, 9, (queries, 1))] = -1
    target_ids = torch.stack([torch.randperm(30)[:5] for _ in range(queries)])
    target_ids[torch.arange(5) >= torch.randint(0, 6, (queries, 1))] = -1  # some truths empty
    target_relevance = torch.randint(1, 4, (queries, 5)).float()
    return ranked_ids, target_ids, target_relevance


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("empty", EMPTIES)
@pytest.mark.parametrize("cls", list(RANKED))
def test_ranked_batches_equal_functional_on_concatenation(cls: type, empty: str, k: object) -> None:
    ranked_ids, target_ids, target_relevance = ranked_data()
    metric = cls(k=k, **options(cls, empty))
    for p, t, r in batches(ranked_ids, target_ids, target_relevance):
        metric.update(p, t, r)
    expected = getattr(ranked, RANKED[cls])(ranked_ids, target_ids, target_relevance, k=k, **options(cls, empty))
    torch.testing.assert_close(as_vector(metric.compute()), expected)


def test_empty_error_raises_at_update_for_dense_and_at_compute_for_flat() -> None:
    scores, relevance = torch.rand(3, 4), torch.tensor([[1, 0, 0, 0], [0, 0, 0, 0], [0, 2, 0, 0]])
    with pytest.raises(ValueError, match="empty='error'"):
        M.NDCG(empty="error").update(scores, relevance)
    ok = M.NDCG(k=2, empty="error")
    ok.update(scores[[0, 2]], relevance[[0, 2]])
    torch.testing.assert_close(ok.compute(), tn.ndcg(scores[[0, 2]], relevance[[0, 2]], 2))
    flat = M.Recall(empty="error")
    flat.update(scores.flatten(), relevance.flatten(), indexes=torch.arange(3).repeat_interleave(4))
    with pytest.raises(ValueError, match="empty='error'"):
        flat.compute()


def test_skip_leaves_empty_queries_out_of_sum_and_count() -> None:
    metric = M.MRR(empty="skip")
    metric.update(torch.tensor([[2.0, 1.0]]), torch.tensor([[0, 1]]))  # 1/2
    metric.update(torch.tensor([[2.0, 1.0], [1.0, 2.0]]), torch.tensor([[0, 0], [0, 1]]))  # skip, 1
    torch.testing.assert_close(metric.compute(), torch.tensor(0.75))
    only_empty = M.NDCG(empty="skip")
    only_empty.update(torch.rand(2, 3), torch.zeros(2, 3))
    torch.testing.assert_close(only_empty.compute(), torch.tensor(0.0))  # a mean over nothing is 0


def state_bytes(metric: M.NDCG) -> int:
    total = 0
    for name in metric._defaults:
        value = getattr(metric, name)
        for tensor in value if isinstance(value, list) else [value]:
            total += tensor.numel() * tensor.element_size()
    return total


def test_dense_state_is_bounded_whatever_the_number_of_batches() -> None:
    scores, relevance, _ = dense_data(queries=16)
    metric = M.NDCG(k=(1, 10))
    metric.update(scores, relevance)
    metric.compute()
    evaluated = state_bytes(metric)  # a sum and a count per cutoff
    waiting = M.PENDING_ITEMS * (scores.element_size() + relevance.element_size())
    sizes = []
    for _ in range(999):
        metric.update(scores, relevance)
        sizes.append(state_bytes(metric))
    assert evaluated <= min(sizes) and max(sizes) <= evaluated + waiting
    assert 1000 * scores.numel() > M.PENDING_ITEMS and sizes.index(max(sizes)) < len(sizes) - 1  # evaluated on the way
    torch.testing.assert_close(as_vector(metric.compute()), tn.ndcg(scores, relevance, (1, 10)))
    assert state_bytes(metric) == evaluated


def _mixed_batches() -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]]:
    """Batches that cannot all be evaluated together: other lengths, dtypes, masks, an empty batch."""
    generator = torch.Generator().manual_seed(3)
    found = []
    for queries, items, dtype, masked in [(5, 12, torch.float32, False), (3, 12, torch.float32, False),
                                          (4, 12, torch.float32, True), (2, 7, torch.float32, False),
                                          (0, 7, torch.float32, False), (6, 7, torch.float64, False),
                                          (3, 7, torch.int64, True), (1, 12, torch.float16, False)]:  # fmt: skip
        scores = torch.randint(0, 5, (queries, items), generator=generator).to(dtype)
        relevance = torch.randint(0, 4, (queries, items), generator=generator)
        mask = torch.rand(queries, items, generator=generator) < 0.8 if masked else None
        found.append((scores, relevance, mask))
    return found


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=cuda)])
@pytest.mark.parametrize("cls", list(SCORED))
def test_rows_kept_for_later_give_each_batch_its_own_value(cls: type, device: str) -> None:
    # Rows wait to be evaluated with later batches; whatever joins them, each row keeps the value
    # the function gives its own batch, and changing a tensor after update changes nothing.
    metric = cls(k=(1, 5), aggregation="max" if cls is M.DCG else "mean").to(device).set_dtype(torch.float64)
    expected = []
    for batch in _mixed_batches():
        scores, relevance, mask = (None if t is None else t.to(device) for t in batch)
        metric.update(scores, relevance, mask=mask)
        expected.append(getattr(tn, SCORED[cls])(scores, relevance, (1, 5), mask=mask, reduction="none").double())
        scores.fill_(0)
        relevance.fill_(1)
    values = torch.cat(expected)
    reference = values.max(0).values if cls is M.DCG else values.mean(0)
    torch.testing.assert_close(as_vector(metric.compute()), reference, rtol=1e-12, atol=1e-12)


def test_a_bad_batch_is_refused_and_warned_at_its_own_update() -> None:
    metric = M.NDCG(k=5)
    scores, relevance, _ = dense_data()
    metric.update(scores, relevance)
    with pytest.raises(ValueError, match="scores contains NaN"):
        metric.update(torch.full((2, 12), float("nan")), relevance[:2])
    with pytest.raises(ValueError, match="relevance contains negative"):
        metric.update(scores[:2], -relevance[:2] - 1)
    with pytest.raises(ValueError, match="same shape"):
        metric.update(scores[:2], relevance[:3])
    with pytest.warns(UserWarning, match="are they swapped") as caught:
        metric.update(torch.tensor([[1.0, 0.0, 3.0]]), torch.tensor([[0.2, 0.9, 0.5]]))
    assert caught[0].filename == __file__
    kept = [(scores, relevance), (torch.tensor([[1.0, 0.0, 3.0]]), torch.tensor([[0.2, 0.9, 0.5]]))]
    total = sum(tn.ndcg(s, r, 5, reduction="sum", validate=False) for s, r in kept)
    torch.testing.assert_close(metric.compute(), total / 21)  # only the accepted batches count


def test_a_compute_group_evaluates_its_waiting_rows_once() -> None:
    # Equal metrics of a MetricCollection share their states (lists and sums alike): the first
    # compute evaluates the waiting rows, and the second must not add them again.
    scores, relevance, mask = dense_data()
    collection = MetricCollection({"a": M.NDCG(k=5), "b": M.NDCG(k=5), "mrr": M.MRR()})
    for stop in (9, 20):  # a compute between updates: rows counted twice would weigh the first 9 double
        for s, r, m in batches(scores[:stop], relevance[:stop], mask[:stop]):
            collection.update(s, r, mask=m)
        result = collection.compute()
    assert collection.compute_groups == {0: ["a", "b"], 1: ["mrr"]}
    both = (torch.cat([scores[:9], scores]), torch.cat([relevance[:9], relevance]))
    torch.testing.assert_close(result["a"], tn.ndcg(*both, 5, mask=torch.cat([mask[:9], mask])))
    torch.testing.assert_close(result["b"], result["a"])
    torch.testing.assert_close(result["mrr"], tn.mrr(*both, mask=torch.cat([mask[:9], mask])))


def test_empty_error_names_the_batch_that_has_an_empty_query() -> None:
    metric = M.NDCG(k=5, empty="error")
    scores, relevance, _ = dense_data()
    metric.update(scores[1:6], relevance[1:6])
    with pytest.raises(ValueError, match="empty='error'"):
        metric.update(scores[:1], relevance[:1] * 0)


def test_forward_gives_the_batch_value_beside_rows_kept_for_later() -> None:
    scores, relevance, mask = dense_data()
    metric = M.NDCG(k=5)
    metric.update(scores[:10], relevance[:10], mask=mask[:10])
    batch = metric(scores[10:], relevance[10:], mask=mask[10:])
    torch.testing.assert_close(batch, tn.ndcg(scores[10:], relevance[10:], 5, mask=mask[10:]))
    torch.testing.assert_close(metric.compute(), tn.ndcg(scores, relevance, 5, mask=mask))
    metric.update(scores[:3], relevance[:3])
    metric.reset()  # drops rows not yet evaluated
    metric.update(scores[3:], relevance[3:], mask=mask[3:])
    torch.testing.assert_close(metric.compute(), tn.ndcg(scores[3:], relevance[3:], 5, mask=mask[3:]))


def test_results_are_keyed_by_cutoff_and_scalar_for_one_k() -> None:
    scores, relevance, _ = dense_data()
    many = M.HitRate(k=(None, 1, 5))
    many.update(scores, relevance)
    assert list(many.compute()) == ["hit_rate", "hit_rate@1", "hit_rate@5"]
    one = M.AveragePrecision(k=5)
    one.update(scores, relevance)
    assert one.compute().shape == ()


def test_compute_before_update_warns_and_gives_zero() -> None:
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert M.NDCG(k=10).compute().item() == 0.0
    with pytest.warns(UserWarning, match="before the ``update``"):
        values = M.Precision(k=(1, 5)).compute()
    assert {key: v.item() for key, v in values.items()} == {"precision@1": 0.0, "precision@5": 0.0}
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert M.RankedNDCG().compute().item() == 0.0


def test_forward_returns_the_batch_value_and_accumulates() -> None:
    scores, relevance, mask = dense_data()
    metric = M.NDCG(k=(1, 5))
    first = metric(scores[:7], relevance[:7], mask=mask[:7])
    second = metric(scores[7:], relevance[7:], mask=mask[7:])
    torch.testing.assert_close(as_vector(first), tn.ndcg(scores[:7], relevance[:7], (1, 5), mask=mask[:7]))
    torch.testing.assert_close(as_vector(second), tn.ndcg(scores[7:], relevance[7:], (1, 5), mask=mask[7:]))
    torch.testing.assert_close(as_vector(metric.compute()), tn.ndcg(scores, relevance, (1, 5), mask=mask))


def test_forward_of_flat_rows_accumulates_a_query_across_batches() -> None:
    scores, relevance = torch.tensor([0.9, 0.1, 0.5, 0.7]), torch.tensor([0, 1, 1, 0])
    ids = torch.tensor([0, 0, 0, 0])
    metric = M.NDCG()
    metric(scores[:2], relevance[:2], indexes=ids[:2])
    metric(scores[2:], relevance[2:], indexes=ids[2:])
    torch.testing.assert_close(metric.compute(), tn.ndcg(scores, relevance))


def test_reset_clears_state_and_the_input_form() -> None:
    scores, relevance, _ = dense_data()
    metric = M.Recall(k=3)
    metric.update(scores, relevance)
    metric.reset()
    flat = torch.arange(scores.shape[0]).repeat_interleave(scores.shape[1])
    metric.update(scores.flatten(), relevance.flatten(), indexes=flat)  # another form after reset
    torch.testing.assert_close(metric.compute(), tn.recall(scores, relevance, 3))
    metric.reset()
    with pytest.warns(UserWarning):
        assert metric.compute().item() == 0.0


@pytest.mark.parametrize("forward", [False, True])
def test_dense_and_flat_updates_mix_into_one_mean(forward: bool) -> None:
    scores, relevance, _ = dense_data()
    flat_ids = torch.arange(5, 10).repeat_interleave(scores.shape[1])
    metric = M.NDCG(k=(1, 3), empty="skip")
    step = metric if forward else metric.update  # forward() merges a fresh copy of the state
    step(scores[5:10].flatten(), relevance[5:10].flatten(), indexes=flat_ids)
    step(scores[:5], relevance[:5])
    expected = tn.ndcg(scores[:10], relevance[:10], (1, 3), empty="skip")
    got = metric.compute()
    torch.testing.assert_close(torch.stack([got["ndcg@1"], got["ndcg@3"]]), expected)


# load_state_dict restores the states, not torchmetrics' update counter, hence its warning
@pytest.mark.filterwarnings("ignore:The ``compute`` method")
def test_clone_and_state_dict_round_trip() -> None:
    scores, relevance, mask = dense_data()
    for metric, args in [
        (M.NDCG(k=(1, 5), gain="exp2"), dict(mask=mask)),
        (M.MRR(k=3), dict(indexes=torch.arange(20).unsqueeze(-1).expand_as(scores))),
    ]:
        metric.update(scores, relevance, **args)
        expected = as_vector(metric.compute())
        copy = metric.clone()
        copy.update(scores[:3], relevance[:3], **{key: v[:3] for key, v in args.items()})
        torch.testing.assert_close(as_vector(metric.compute()), expected)  # the clone is independent
        metric.persistent(True)  # torchmetrics keeps states out of state_dict unless asked
        fresh = type(metric)(k=metric.cutoffs if metric._many else metric.cutoffs[0], **metric._options)
        fresh.persistent(True)
        fresh.load_state_dict(metric.state_dict())
        torch.testing.assert_close(as_vector(fresh.compute()), expected)


def test_metric_collection_of_several_metrics() -> None:
    scores, relevance, mask = dense_data()
    collection = MetricCollection([M.NDCG(k=(5, 10)), M.Precision(k=5), M.MRR(), M.HitRate(k=1)])
    for s, r, m in batches(scores, relevance, mask):
        collection.update(s, r, mask=m)
    result = collection.compute()
    expected = {
        "ndcg@5": tn.ndcg(scores, relevance, 5, mask=mask),
        "ndcg@10": tn.ndcg(scores, relevance, 10, mask=mask),
        "Precision": tn.precision(scores, relevance, 5, mask=mask),
        "MRR": tn.mrr(scores, relevance, mask=mask),
        "HitRate": tn.hit_rate(scores, relevance, 1, mask=mask),
    }
    assert set(result) == set(expected)
    for key, value in expected.items():
        torch.testing.assert_close(result[key], value)


def test_metric_collection_never_merges_states_of_different_configurations() -> None:
    # On the first batch NDCG@1 == NDCG@3 == 1 and Precision@1 == Recall@1, so torchmetrics'
    # compute groups would merge them if their states had the same names.
    first = (torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[1, 0, 0]]))
    second = (torch.tensor([[3.0, 2.0, 1.0]]), torch.tensor([[0, 0, 1]]))
    collection = MetricCollection({
        "ndcg1": M.NDCG(k=1), "ndcg3": M.NDCG(k=3), "p1": M.Precision(k=1), "r1": M.Recall(k=1),
    })
    for batch in (first, second):
        collection.update(*batch)
    scores, relevance = (torch.cat(parts) for parts in zip(first, second))
    result = collection.compute()
    torch.testing.assert_close(result["ndcg1"], tn.ndcg(scores, relevance, 1))
    torch.testing.assert_close(result["ndcg3"], tn.ndcg(scores, relevance, 3))
    torch.testing.assert_close(result["r1"], tn.recall(scores, relevance, 1))
    assert result["ndcg1"] != result["ndcg3"]


@pytest.mark.parametrize(
    ("make", "call", "error", "match"),
    [
        (lambda: M.NDCG(), lambda m: m.update(torch.rand(2, 3), torch.ones(2, 4)), ValueError, "same shape"),
        (lambda: M.NDCG(), lambda m: m.update(torch.rand(2, 3), -torch.ones(2, 3)), ValueError, "negative"),
        (lambda: M.MRR(), lambda m: m.update(torch.full((2, 3), torch.nan), torch.ones(2, 3)),
         ValueError, "NaN"),
        (lambda: M.NDCG(), lambda m: m.update(torch.rand(3), torch.ones(3), indexes=torch.zeros(3)),
         TypeError, "indexes"),
        (lambda: M.NDCG(), lambda m: m.update(torch.rand(3), torch.ones(3), indexes=torch.zeros(2).long()),
         ValueError, "same shape"),
        (lambda: M.Recall(), lambda m: m.update(torch.rand(3), -torch.ones(3), indexes=torch.zeros(3).long()),
         ValueError, "negative"),
        (lambda: M.NDCG(gain="exp2"),
         lambda m: (m.update(torch.rand(3), torch.full((3,), 2000), indexes=torch.zeros(3, dtype=torch.long)),
                    m.compute()),
         ValueError, "overflow"),  # per query at compute() (a query may span batches), in float64
        (lambda: M.NDCG(), lambda m: m.update(torch.rand(2, 3), torch.ones(2, 3), mask=torch.ones(2, 3)),
         TypeError, "mask"),
        (lambda: M.RankedNDCG(), lambda m: m.update(torch.rand(2, 3), torch.ones(2, 3, dtype=torch.long)),
         TypeError, "ranked_ids"),
    ],
)
def test_bad_input_raises_as_in_the_functional_api(make, call, error, match) -> None:
    with pytest.raises(error, match=match):
        call(make())


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: M.NDCG(k=0), ValueError, "k must be"),
        (lambda: M.NDCG(k="5"), TypeError, "k must be"),
        (lambda: M.NDCG(ties="random"), ValueError, "ties"),
        (lambda: M.Precision(empty="nan"), ValueError, "empty"),
        (lambda: M.DCG(gain="exp10"), ValueError, "gain"),
        (lambda: M.RankedNDCG(discount="ln"), ValueError, "discount"),
        (lambda: M.RankedRecall(pad_id=1.5), TypeError, "pad_id"),
    ],
)
def test_bad_options_raise_when_the_metric_is_built(build, error, match) -> None:
    with pytest.raises(error, match=match):
        build()


@pytest.mark.slow
def test_top_level_names_and_torchmetrics_stays_optional() -> None:
    assert tn.metrics.NDCG is M.NDCG and tn.metrics.RankedMRR is M.RankedMRR
    with pytest.raises(AttributeError):
        tn.NotAMetric  # noqa: B018
    # tn.metrics works without importing the submodule first.
    fresh = subprocess.run(
        [sys.executable, "-c", "import torch_ndcg as tn; print(tn.metrics.NDCG.__name__)"],
        capture_output=True, text=True, timeout=120,
    )
    assert fresh.stdout.strip() == "NDCG", fresh.stderr
    script = textwrap.dedent(
        """
        import sys
        import torch
        import torch_ndcg as tn
        assert "torchmetrics" not in sys.modules  # the package and its functions never import it
        assert tn.ndcg(torch.tensor([0.9, 0.1]), torch.tensor([0, 1])).item() > 0
        sys.modules["torchmetrics"] = None  # as if it were not installed
        for attempt in (lambda: tn.metrics, lambda: __import__("torch_ndcg.metrics")):
            try:
                attempt()
            except ImportError as error:
                assert "pip install torchmetrics" in str(error), error
            else:
                raise AssertionError("no ImportError")
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@cuda
@pytest.mark.cuda
def test_states_and_values_on_cuda() -> None:
    scores, relevance, mask = (t.cuda() for t in dense_data())
    dense_metric, flat_metric = M.NDCG(k=(1, 5)).cuda(), M.Precision(k=3).cuda()
    ids = torch.arange(scores.shape[0], device="cuda").unsqueeze(-1).expand_as(scores)
    for s, r, m, i in batches(scores, relevance, mask, ids):
        dense_metric.update(s, r, mask=m)
        flat_metric.update(s[m], r[m], indexes=i[m])
    result = as_vector(dense_metric.compute())
    assert result.device.type == "cuda"
    torch.testing.assert_close(result, tn.ndcg(scores, relevance, (1, 5), mask=mask))
    torch.testing.assert_close(flat_metric.compute(), tn.precision(scores, relevance, 3, mask=mask))


def test_collection_never_merges_metrics_whose_gain_callables_differ() -> None:
    # A first batch with nothing relevant gives both the same states; torchmetrics' compute
    # groups then share state unless the state names differ. Equal-looking callables may not be
    # equal: partials of one function, instances of one class, lambdas on one line.
    from functools import partial

    from torchmetrics import MetricCollection

    def power(labels: torch.Tensor, base: float) -> torch.Tensor:
        return base**labels - 1

    class Power:
        def __init__(self, base: float) -> None:
            self.base = base

        def __call__(self, labels: torch.Tensor) -> torch.Tensor:
            return self.base**labels - 1

    lambdas = [lambda x: 2**x - 1, lambda x: 3**x - 1]  # one line
    pairs = [(partial(power, base=2.0), partial(power, base=3.0)), (Power(2.0), Power(3.0)), tuple(lambdas)]
    nothing = (torch.rand(2, 4), torch.zeros(2, 4))
    scores = torch.tensor([[0.1, 0.4, 0.3, 0.2]])
    relevance = torch.tensor([[0.0, 1.0, 2.0, 0.0]])
    for two, three in pairs:
        collection = MetricCollection({"two": M.NDCG(k=3, gain=two), "three": M.NDCG(k=3, gain=three)})
        collection.update(*nothing)
        collection.update(scores, relevance)
        values = collection.compute()
        assert_close = torch.testing.assert_close
        assert_close(values["two"], tn.ndcg(torch.cat([nothing[0], scores]), torch.cat([nothing[1], relevance]), 3, gain=two))
        assert_close(values["three"], tn.ndcg(torch.cat([nothing[0], scores]), torch.cat([nothing[1], relevance]), 3, gain=three))
        assert values["two"] != values["three"]
    # The very same callable object may share state: its values are provably equal.
    same = partial(power, base=2.0)
    assert M.NDCG(k=3, gain=same)._total == M.NDCG(k=3, gain=same)._total


def test_flat_state_ranks_float64_and_large_integer_scores_exactly() -> None:
    scores = torch.tensor([1, 1 + 1e-9, 2, 2 + 1e-9], dtype=torch.float64)
    relevance, indexes = torch.tensor([0, 1, 0, 1]), torch.tensor([0, 0, 1, 1])
    metric = M.NDCG()
    metric.update(scores, relevance, indexes=indexes)
    assert metric.compute().item() == 1.0 == tn.ndcg(scores, relevance, indexes=indexes).item()
    big = torch.tensor([2**24, 2**24 + 1, 2**25, 2**25 + 1])  # int64 beyond float32's integers
    metric = M.NDCG()
    metric.update(big, relevance, indexes=indexes)
    assert metric.compute().item() == 1.0


def test_an_empty_flat_batch_warns_and_adds_nothing() -> None:
    metric = M.NDCG(k=2)
    metric.update(torch.tensor([[0.9, 0.1]]), torch.tensor([[0, 1]]))
    with pytest.warns(UserWarning, match="flat batch without items"):
        metric.update(torch.zeros(0), torch.zeros(0), indexes=torch.zeros(0, dtype=torch.long))
    with pytest.warns(UserWarning, match="flat batch without items"):
        metric.update(torch.rand(3), torch.ones(3), indexes=torch.zeros(3, dtype=torch.long), mask=torch.zeros(3, dtype=torch.bool))
    torch.testing.assert_close(metric.compute(), tn.ndcg(torch.tensor([[0.9, 0.1]]), torch.tensor([[0, 1]]), 2))


def test_flat_exp2_overflow_is_judged_per_query_at_compute() -> None:
    # Label 120 fits its 2-item query in float32, though the batch has 1,102 items.
    indexes = torch.cat([torch.zeros(2, dtype=torch.long), torch.ones(1100, dtype=torch.long)])
    relevance = torch.zeros(1102)
    relevance[0] = 120
    metric = M.NDCG(k=1, gain="exp2")
    metric.update(torch.arange(1102.0).flip(0), relevance, indexes=indexes)
    assert metric.compute().item() == 0.5


def test_ordered_pair_accuracy_class_equals_the_function_on_the_concatenation() -> None:
    scores, relevance, mask = dense_data()
    for options in ({}, {"ties": "average", "empty": "one"}):
        metric = M.OrderedPairAccuracy(**options)
        for s, r, m in batches(scores, relevance, mask):
            metric.update(s, r, mask=m)
        expected = tn.ordered_pair_accuracy(scores, relevance, mask=mask, **options)
        torch.testing.assert_close(metric.compute(), expected.float())
    weighted = M.OrderedPairAccuracy()
    weight = torch.rand(scores.shape[0], dtype=torch.float64)
    weighted.update(scores, relevance, mask=mask, sample_weight=weight)
    expected = tn.ordered_pair_accuracy(scores, relevance, mask=mask, sample_weight=weight)
    torch.testing.assert_close(weighted.compute().double(), expected.double(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="ties"):
        M.OrderedPairAccuracy(ties="random")


def test_a_batch_as_large_as_the_bound_is_evaluated_at_once_without_a_copy() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    class Copies(TorchDispatchMode):
        """The sizes of the tensors that ops clone."""

        def __init__(self) -> None:
            super().__init__()
            self.sizes: list[int] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.clone.default:
                self.sizes.append(args[0].numel())
            return func(*args, **(kwargs or {}))

    rows = M.PENDING_ITEMS // 64
    scores = torch.randint(0, 9, (rows, 64)).float()
    relevance = torch.randint(0, 3, (rows, 64))
    metric = M.NDCG(k=5)
    metric.update(scores[:3], relevance[:3])  # waits
    with Copies() as copies:
        metric.update(scores, relevance)  # evaluated with what waited before it, and nothing kept
    assert max(copies.sizes, default=0) < scores.numel()  # memory follows the batch: no copy of it
    assert not metric.pending_scores and not metric.pending_relevance
    expected = tn.ndcg(torch.cat([scores[:3], scores]), torch.cat([relevance[:3], relevance]), 5)
    torch.testing.assert_close(metric.compute(), expected)
