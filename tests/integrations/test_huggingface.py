"""RankingMetrics as the compute_metrics of a real transformers.Trainer.evaluate run, on a tiny local model."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers", reason="the huggingface extra")
pytest.importorskip("accelerate", reason="the huggingface extra (transformers.Trainer needs it)")
pytest.importorskip("torchmetrics", reason="the metrics extra")

import torch_ndcg as tn  # noqa: E402
from torch_ndcg.integrations.huggingface import RankingMetrics  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from hf_trainer_ranker import Items, Scorer, ScorerConfig, main as example_main  # noqa: E402
from torchmetrics import MetricCollection  # noqa: E402
from transformers import Trainer, TrainingArguments  # noqa: E402

FEATURES = 4


def _arguments(tmp_path, batch_eval_metrics=True):
    return TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=7, batch_eval_metrics=batch_eval_metrics,
        include_for_metrics=["inputs"], report_to="none", use_cpu=True, disable_tqdm=True,
    )  # fmt: skip


@pytest.fixture
def items():
    """9 queries of 3 to 10 items; the evaluation batches of 7 items cut through them."""
    generator = torch.Generator().manual_seed(0)
    sizes = torch.randint(3, 11, (9,), generator=generator).tolist()
    return [(torch.randn(n, FEATURES, generator=generator), torch.randint(0, 3, (n,), generator=generator).float()) for n in sizes]


def test_items_with_query_ids_in_a_real_evaluate(items, tmp_path):
    model = Scorer(ScorerConfig(num_features=FEATURES, hidden=8))
    dataset = Items(items)
    features = torch.stack([row["features"] for row in dataset.rows])
    labels = torch.stack([row["labels"] for row in dataset.rows])
    query_ids = torch.tensor([row["query_ids"] for row in dataset.rows])
    compute_metrics = RankingMetrics([tn.metrics.NDCG(k=(1, 5, 10)), tn.metrics.MRR(k=10)])
    trainer = Trainer(
        model=model, args=_arguments(tmp_path), eval_dataset=dataset,
        compute_metrics=compute_metrics,
    )  # fmt: skip
    results = trainer.evaluate()
    with torch.no_grad():
        scores = model(features).logits
    for k in (1, 5, 10):
        expected = tn.ndcg(scores, labels, k, indexes=query_ids).item()
        assert results[f"eval_ndcg@{k}"] == pytest.approx(expected, abs=1e-6)
    assert results["eval_mrr@10"] == pytest.approx(tn.mrr(scores, labels, 10, indexes=query_ids).item(), abs=1e-6)
    # the state was reset: a second evaluation gives the same values, not a mean over both
    again = trainer.evaluate()
    assert again["eval_ndcg@10"] == pytest.approx(results["eval_ndcg@10"], abs=1e-7)


def test_without_batch_eval_metrics_the_query_ids_are_missing_and_it_says_how(items, tmp_path):
    trainer = Trainer(
        model=Scorer(ScorerConfig(num_features=FEATURES, hidden=8)), args=_arguments(tmp_path, batch_eval_metrics=False),
        eval_dataset=Items(items), compute_metrics=RankingMetrics(tn.metrics.NDCG(k=10)),
    )  # fmt: skip
    with pytest.raises(ValueError, match="batch_eval_metrics=True"):
        trainer.evaluate()


def _prediction(scores, labels, inputs=None):
    return types.SimpleNamespace(predictions=scores, label_ids=labels, inputs=inputs)


def test_lists_layout_with_trainer_padding():
    compute_metrics = RankingMetrics(tn.metrics.NDCG(k=(3,)), query_ids=None)
    scores = torch.tensor([[0.1, 0.9, 0.5, -100.0], [0.3, 0.2, 0.1, 0.0]])
    labels = torch.tensor([[1, 2, 0, -100], [0, 1, 1, 0]])
    assert compute_metrics(_prediction(scores[:1], labels[:1]), compute_result=False) == {}
    result = compute_metrics(_prediction(scores[1:].numpy(), labels[1:].numpy()), compute_result=True)
    expected = tn.ndcg(scores, labels.clamp(min=0), 3, mask=labels != -100).item()
    assert result == {"ndcg@3": pytest.approx(expected, abs=1e-6)}


def test_every_metric_logs_as_its_name_at_its_cutoff():
    # MRR(k=10) alone is "MRR" in a MetricCollection, NDCG(k=(1, 5)) gives "ndcg@1": one form for both.
    scores, labels = torch.tensor([[0.1, 0.9, 0.5]]), torch.tensor([[1, 2, 0]])
    metrics = [tn.metrics.MRR(k=10), tn.metrics.NDCG(k=(1, 5)), tn.metrics.OrderedPairAccuracy()]
    result = RankingMetrics(metrics, query_ids=None)(_prediction(scores, labels))
    assert set(result) == {"mrr@10", "ndcg@1", "ndcg@5", "ordered_pair_accuracy"}
    assert result["mrr@10"] == pytest.approx(tn.mrr(scores, labels, 10).item())
    collection = MetricCollection({"first_hit": tn.metrics.MRR(k=3), "NDCG": tn.metrics.NDCG(k=3)}, prefix="val/")
    result = RankingMetrics(collection, query_ids=None)(_prediction(scores, labels))
    assert set(result) == {"val/first_hit", "val/ndcg@3"}  # a name the user gave is kept
    with pytest.raises(ValueError, match=r"two metrics would log under \['ndcg@3'\]"):
        RankingMetrics(MetricCollection({"ndcg@3": tn.metrics.MRR(k=3), "NDCG": tn.metrics.NDCG(k=3)}))


def test_mistakes_are_named():
    compute_metrics = RankingMetrics(tn.metrics.NDCG(k=10))
    scores, labels = torch.randn(4), torch.ones(4)
    with pytest.raises(ValueError, match="no 'query_ids'"):
        compute_metrics(_prediction(scores, labels, {"features": torch.randn(4, 2)}))
    with pytest.raises(ValueError, match="several processes"):
        compute_metrics(_prediction(scores, labels, {"query_ids": torch.arange(2)}))
    with pytest.raises(ValueError, match="preprocess_logits_for_metrics"):
        compute_metrics(_prediction((scores, scores), labels, {"query_ids": torch.arange(4)}))
    with pytest.raises(TypeError, match="query_ids"):
        RankingMetrics(tn.metrics.NDCG(k=10), query_ids=3)


def test_docstring_example_runs():
    import doctest

    from torch_ndcg.integrations import huggingface

    result = doctest.testmod(huggingface, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


def test_the_example_trains_and_logs_ndcg(tmp_path, capsys):
    results = example_main(["--epochs", "1", "--queries", "30", "10", "--output-dir", str(tmp_path)])
    assert {"eval_ndcg@1", "eval_ndcg@5", "eval_ndcg@10"} <= set(results)
    assert all(0 < results[f"eval_ndcg@{k}"] <= 1 for k in (1, 5, 10))
    assert "validation: eval_ndcg@1" in capsys.readouterr().out
