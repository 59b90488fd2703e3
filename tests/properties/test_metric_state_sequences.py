"""Any sequence of updates and torchmetrics state operations gives the functional value of the
batches as given: dense batches in any score dtype, width, with or without a mask or query ids,
and flat rows, interleaved with merge_state (from a metric, its metric_state or its state_dict),
set_dtype, to, a state_dict round trip, pickle, deepcopy, forward, reset and compute, with or
without a distributed sync (on a world of one) at every compute."""

from __future__ import annotations

import copy
import pickle
import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torch_ndcg as tn

pytest.importorskip("torchmetrics", reason="the metric classes need torch-ndcg[metrics]")
from torch_ndcg import metrics as M  # noqa: E402

K = (1, 3)
CLASSES = {M.NDCG: tn.ndcg, M.AveragePrecision: tn.average_precision, M.MRR: tn.mrr}
SCORE_DTYPES = (torch.float16, torch.float32, torch.float64, torch.int64)
# One fixed row per query id (integer scores: the same value in every dtype), so that an id seen
# again is the same query repeated.
ID_POOL = (0, 1, 4096, 4097)
ID_WIDTH = 4
FLAT_IDS = (-3, 7)


def _id_row(query_id: int) -> tuple[list[int], list[int], list[bool]]:
    generator = torch.Generator().manual_seed(query_id)
    scores = torch.randint(0, 4, (ID_WIDTH,), generator=generator).tolist()
    labels = torch.randint(0, 3, (ID_WIDTH,), generator=generator).tolist()
    real = (torch.rand(ID_WIDTH, generator=generator) < 0.8).tolist()
    return scores, labels, real


def _dense_batch(draw: st.DrawFn, with_ids: bool) -> dict:
    dtype = draw(st.sampled_from(SCORE_DTYPES))
    if with_ids:
        ids = draw(st.lists(st.sampled_from(ID_POOL), min_size=1, max_size=3))
        scores, labels, real = zip(*(_id_row(i) for i in ids))
        mask = torch.tensor(real)
        if bool(mask.all()) and draw(st.booleans()):  # the same query, with its mask or without
            mask = None
        return dict(scores=torch.tensor(scores).to(dtype), relevance=torch.tensor(labels), mask=mask,
                    query_ids=torch.tensor(ids))  # fmt: skip
    rows, width = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    if dtype == torch.float16:  # large integers that tie once in float16 beside fractions
        pool = st.sampled_from([0.0, 0.125, 0.25, 0.5, 1.0, 1.0001, 4096.0, 4097.0])
    elif dtype == torch.int64:
        pool = st.sampled_from([0, 1, 2, 4096, 4097])
    else:
        pool = st.sampled_from([0.0, 0.3, 1.0, 1.0001, 4097.0])
    scores = draw(st.lists(st.lists(pool, min_size=width, max_size=width), min_size=rows, max_size=rows))
    labels = draw(st.lists(st.lists(st.integers(0, 3), min_size=width, max_size=width), min_size=rows, max_size=rows))
    mask = None
    if draw(st.booleans()):
        mask = torch.tensor(draw(st.lists(st.lists(st.booleans(), min_size=width, max_size=width),
                                          min_size=rows, max_size=rows)))  # fmt: skip
    # (given as float64 first: 4097 would round before the cast in float32 alike)
    return dict(scores=torch.tensor(scores, dtype=torch.float64).to(dtype), relevance=torch.tensor(labels), mask=mask)


@st.composite
def batches(draw: st.DrawFn) -> dict:
    kind = draw(st.sampled_from(["dense", "dense", "ids", "flat"]))
    if kind != "flat":
        return {"kind": kind, **_dense_batch(draw, kind == "ids")}
    items = draw(st.integers(1, 5))
    return dict(kind="flat", scores=torch.tensor(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=items,
                                                              max_size=items))),  # fmt: skip
                relevance=torch.tensor(draw(st.lists(st.integers(0, 3), min_size=items, max_size=items))),
                indexes=torch.tensor(draw(st.lists(st.sampled_from(FLAT_IDS), min_size=items, max_size=items))))


OPERATIONS = ("merge metric", "merge metric_state", "merge state_dict", "set_dtype", "to", "state_dict",
              "pickle", "deepcopy", "forward", "reset", "compute")  # fmt: skip
steps = st.one_of(
    st.tuples(st.just("update"), batches()),
    st.tuples(st.sampled_from(OPERATIONS), batches(), st.sampled_from([torch.float16, torch.float32, torch.float64])),
)


def _one_rank(tensor: torch.Tensor, group: object = None) -> list[torch.Tensor]:
    """torchmetrics' gather on a world of one: compute() then runs the whole sync and unsync."""
    return [tensor]


def _distributed() -> bool:
    return True


SYNCED = {"dist_sync_fn": _one_rank, "distributed_available_fn": _distributed}


class Expected:
    """The functional values of the batches as given: rows without ids each count, an id once,
    flat items joined per id."""

    def __init__(self, function) -> None:
        self.function = function
        self.rows: list[torch.Tensor] = []
        self.by_id: dict[int, torch.Tensor] = {}
        self.flat: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def add(self, batch: dict) -> None:
        if batch["kind"] == "flat":
            self.flat.append((batch["scores"], batch["relevance"], batch["indexes"]))
            return
        values = self.function(batch["scores"], batch["relevance"], K, mask=batch["mask"], reduction="none").double()
        if batch["kind"] == "ids":
            for query_id, value in zip(batch["query_ids"].tolist(), values):
                self.by_id.setdefault(query_id, value)
        else:
            self.rows.extend(values)

    def values(self) -> torch.Tensor:
        found = self.rows + list(self.by_id.values())
        if self.flat:
            scores, relevance, indexes = (torch.cat(parts) for parts in zip(*self.flat))
            found.extend(self.function(scores, relevance, K, indexes=indexes, reduction="none").double())
        return torch.stack(found) if found else torch.zeros(0, len(K), dtype=torch.float64)


def _arguments(batch: dict) -> dict:
    return {key: value for key, value in batch.items() if key != "kind"}


def _check(result, expected: torch.Tensor, aggregation: str, dtype: torch.dtype, what: str) -> None:
    if expected.shape[0]:
        reference = expected.max(0).values if aggregation == "max" else expected.mean(0)
    else:
        reference = torch.zeros(len(K), dtype=torch.float64)  # a mean over nothing
    got = torch.stack([result[key] for key in sorted(result, key=lambda name: int(name.split("@")[1]))])
    assert got.dtype == dtype, what
    tolerance = 2e-3 if dtype == torch.float16 else 1e-6
    torch.testing.assert_close(got.double(), reference, rtol=0, atol=tolerance, msg=lambda text: f"{what}: {text}")


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(list(CLASSES)), st.sampled_from(["mean", "max"]), st.booleans(),
       st.lists(steps, min_size=1, max_size=8))  # fmt: skip
def test_updates_and_state_operations_give_the_value_of_the_batches_as_given(cls, aggregation, synced, sequence):
    warnings.simplefilter("ignore", UserWarning)  # (a compute that has seen no query warns)
    expected = Expected(CLASSES[cls])
    options = dict(k=K, aggregation=aggregation, **(SYNCED if synced else {}))
    metric = cls(**options)
    done = []
    for step in sequence:
        name, batch = step[0], step[1]
        done.append(name)
        what = f"after {done}"
        if name == "update":
            metric.update(**_arguments(batch))
            expected.add(batch)
        elif name.startswith("merge"):
            other = cls(**options).set_dtype(step[2])
            other.update(**_arguments(batch))
            if name == "merge metric":
                metric.merge_state(other)
            elif name == "merge metric_state":
                metric.merge_state(other.metric_state)
            else:
                other.persistent(True)
                metric.merge_state(other.state_dict())
            expected.add(batch)
        elif name == "set_dtype":
            metric.set_dtype(step[2])
        elif name == "to":
            metric = metric.to("cpu", step[2])  # (nn.Module.to converts floating tensors)
        elif name == "state_dict":
            metric.persistent(True)
            restored = cls(**options).set_dtype(metric.dtype)
            restored.load_state_dict(metric.state_dict())
            metric = restored
        elif name == "pickle":
            metric = pickle.loads(pickle.dumps(metric))
        elif name == "deepcopy":
            metric = copy.deepcopy(metric)
        elif name == "forward":  # the batch's own value, and the batch accumulated
            alone = Expected(CLASSES[cls])
            alone.add(batch)
            _check(metric(**_arguments(batch)), alone.values(), aggregation, metric.dtype, f"{what}: the batch")
            expected.add(batch)
        elif name == "reset":
            metric.reset()
            expected = Expected(CLASSES[cls])
        else:
            _check(metric.compute(), expected.values(), aggregation, metric.dtype, what)
    _check(metric.compute(), expected.values(), aggregation, metric.dtype, f"after {done}, at the end")
