"""torchmetrics' state operations on the metric classes give the value of the batches as given.

Dense batches wait as copies, of any width and dtype, with or without a mask, to be evaluated
together later; ``merge_state``, ``set_dtype``, ``to`` and the rest must never treat those rows
as plain data (join them across dtypes or widths, or convert them).
"""

from __future__ import annotations

import pickle

import pytest
import torch

import torch_ndcg as tn

pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
from torch_ndcg import metrics as M  # noqa: E402


def test_merge_state_ranks_each_batch_in_its_own_dtype() -> None:
    # 4097 and 4096 tie in float16: joined into the first batch's dtype, they would.
    first = (torch.tensor([[0.5, 0.25, 0.125]], dtype=torch.float16), torch.tensor([[1, 0, 0]]))
    second = (torch.tensor([[4097, 4096, 0]]), torch.tensor([[0, 1, 0]]))
    a, b = M.NDCG(), M.NDCG()
    a.update(*first)
    b.update(*second)
    a.merge_state(b)
    expected = torch.cat([tn.ndcg(*first, reduction="none"), tn.ndcg(*second, reduction="none")]).mean()
    assert a.compute().item() == pytest.approx(0.8155, abs=1e-4)
    torch.testing.assert_close(a.compute(), expected)


@pytest.mark.parametrize("mine, theirs", [((3, 5, False), (2, 4, False)), ((3, 5, False), (2, 5, True)),
                                          ((3, 5, True), (2, 5, False))])  # fmt: skip
@pytest.mark.parametrize("source", ["metric", "state_dict"])
def test_merge_state_of_rows_of_other_widths_or_masks(mine, theirs, source) -> None:
    generator = torch.Generator().manual_seed(5)
    batches = []
    for rows, width, masked in (mine, theirs):
        scores = torch.randn(rows, width, generator=generator)
        relevance = torch.randint(0, 3, (rows, width), generator=generator)
        mask = torch.rand(rows, width, generator=generator) < 0.7 if masked else None
        batches.append((scores, relevance, mask))
    a, b = M.NDCG(k=(1, 3)), M.NDCG(k=(1, 3))
    for metric, (scores, relevance, mask) in zip((a, b), batches):
        metric.update(scores, relevance, mask=mask)
    if source == "metric":
        a.merge_state(b)
    else:
        b.persistent(True)
        a.merge_state(b.state_dict())
    expected = torch.cat([tn.ndcg(s, r, (1, 3), mask=m, reduction="none") for s, r, m in batches]).mean(0)
    torch.testing.assert_close(torch.stack(list(a.compute().values())), expected)


def test_merge_state_evaluates_rows_that_an_incoming_state_dict_still_holds() -> None:
    # A state saved with its waiting rows (the raw states, as an older version saved them).
    float16 = (torch.tensor([[0.5, 0.25, 0.125]], dtype=torch.float16), torch.tensor([[1, 0, 0]]))
    integers = (torch.tensor([[4097, 4096, 0, 1]]), torch.tensor([[0, 1, 0, 2]]))
    saved = M.NDCG()
    saved.update(*integers, mask=torch.tensor([[True, True, True, False]]))
    raw = {name: list(value) if isinstance(value, list) else value for name, value in saved.__dict__.items()
           if name in saved._defaults}  # fmt: skip
    assert raw["pending_scores"], "the raw state holds the waiting rows"
    metric = M.NDCG()
    metric.update(*float16)
    metric.merge_state(raw)
    values = [tn.ndcg(*float16, reduction="none"),
              tn.ndcg(*integers, mask=torch.tensor([[True, True, True, False]]), reduction="none")]  # fmt: skip
    torch.testing.assert_close(metric.compute(), torch.cat(values).mean())


def test_set_dtype_keeps_a_waiting_mask_a_mask() -> None:
    scores, relevance = torch.tensor([[0.3, 0.9, 0.1, 0.5]]), torch.tensor([[1, 0, 2, 0]])
    mask = torch.tensor([[True, True, True, False]])
    metric = M.NDCG()
    metric.update(scores, relevance, mask=mask)
    metric.set_dtype(torch.float64)
    result = metric.compute()
    assert result.dtype == torch.float64
    torch.testing.assert_close(result, tn.ndcg(scores, relevance, mask=mask).double())


def test_set_dtype_never_reranks_a_batch_already_given() -> None:
    metric = M.NDCG()
    metric.update(torch.tensor([[1.0, 1.0001, 0.0]]), torch.tensor([[0, 1, 0]]))  # ties in float16
    metric.set_dtype(torch.float16)
    result = metric.compute()
    assert result.dtype == torch.float16 and result.item() == 1.0


def test_set_dtype_keeps_sums_and_query_ids_exact() -> None:
    # float16 holds neither the id 4097 (it rounds to 4096) nor a sum to 1e-4.
    scores = torch.tensor([[0.9, 0.1, 0.5], [0.2, 0.7, 0.4], [0.3, 0.8, 0.6]])
    relevance = torch.tensor([[0, 1, 2], [2, 0, 1], [1, 1, 0]])
    metric = M.NDCG(k=2)
    metric.update(scores[:2], relevance[:2], query_ids=torch.tensor([4096, 4097]))
    metric.update(scores[2:], relevance[2:])
    metric.set_dtype(torch.float16)
    metric.update(scores[:1], relevance[:1], query_ids=torch.tensor([4096]))  # a repeat counts once
    metric.set_dtype(torch.float64)
    torch.testing.assert_close(metric.compute(), tn.ndcg(scores, relevance, 2).double(), rtol=1e-6, atol=1e-7)


def test_waiting_rows_survive_pickle_to_state_dict_and_forward() -> None:
    batches = [(torch.tensor([[0.2, 0.9, 0.4]], dtype=torch.float16), torch.tensor([[1, 2, 0]])),
               (torch.tensor([[3, 3, 1, 2]]), torch.tensor([[0, 1, 1, 0]]))]  # fmt: skip
    metric = M.NDCG(k=2)
    metric.persistent(True)
    metric.update(*batches[0])
    copy = pickle.loads(pickle.dumps(metric)).to("cpu")
    restored = M.NDCG(k=2)
    restored.load_state_dict(copy.state_dict())
    batch_value = restored(*batches[1])
    expected = [tn.ndcg(*batch, 2, reduction="none") for batch in batches]
    torch.testing.assert_close(batch_value, expected[1].mean())
    torch.testing.assert_close(restored.compute(), torch.cat(expected).mean())


def test_a_compute_group_keeps_each_batch_as_given_through_set_dtype_and_state_dict() -> None:
    from torchmetrics import MetricCollection

    first = (torch.tensor([[1.0, 1.0001, 0.0]]), torch.tensor([[0, 1, 0]]))  # ties in float16
    second = (torch.tensor([[4097, 4096, 0]]), torch.tensor([[0, 1, 0]]))
    collection = MetricCollection({"a": M.NDCG(k=2), "b": M.NDCG(k=2)})
    collection.update(*first)
    collection.update(*first)  # (the second update shares the first member's states)
    assert collection.compute_groups == {0: ["a", "b"]}
    collection.set_dtype(torch.float16)
    collection.update(*second)
    collection.persistent(True)
    restored = MetricCollection({"a": M.NDCG(k=2), "b": M.NDCG(k=2)})
    restored.load_state_dict(collection.state_dict())
    values = [tn.ndcg(*first, 2, reduction="none")] * 2 + [tn.ndcg(*second, 2, reduction="none")]
    for result in (collection.compute(), restored.compute()):
        for name in ("a", "b"):
            torch.testing.assert_close(result[name].double(), torch.cat(values).mean().double(), rtol=0, atol=1e-3)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_waiting_rows_move_between_devices_with_their_dtypes() -> None:
    batch = (torch.tensor([[1.0, 1.0001, 0.0]]), torch.tensor([[0, 1, 0]]), torch.tensor([[True, True, False]]))
    metric = M.NDCG(k=2)
    metric.update(*batch[:2], mask=batch[2])
    metric.to("cuda").set_dtype(torch.float16)
    metric.update(*(t.cuda() for t in batch[:2]), query_ids=torch.tensor([5], device="cuda"))
    metric.to("cpu")
    values = torch.cat([tn.ndcg(*batch[:2], 2, mask=batch[2], reduction="none"), tn.ndcg(*batch[:2], 2, reduction="none")])
    assert metric.compute().dtype == torch.float16
    torch.testing.assert_close(metric.compute().double(), values.mean().double(), rtol=0, atol=1e-3)
