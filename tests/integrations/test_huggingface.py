"""RankingMetrics as the compute_metrics of a real transformers.Trainer.evaluate run, on a tiny local model."""

from __future__ import annotations

import types

import pytest
import torch

pytest.importorskip("transformers", reason="the huggingface extra")
pytest.importorskip("accelerate", reason="the huggingface extra (transformers.Trainer needs it)")
pytest.importorskip("torchmetrics", reason="the metrics extra")

from transformers import PretrainedConfig, PreTrainedModel, Trainer, TrainingArguments  # noqa: E402
from transformers.modeling_outputs import SequenceClassifierOutput  # noqa: E402

import torch_ndcg as tn  # noqa: E402
from torch_ndcg.integrations.huggingface import RankingMetrics  # noqa: E402

FEATURES = 4


class Scorer(PreTrainedModel):
    """A linear scorer of feature vectors, as a PreTrainedModel; ``query_ids`` is taken and ignored."""

    config_class = PretrainedConfig
    main_input_name = "features"

    def __init__(self, config: PretrainedConfig) -> None:
        super().__init__(config)
        self.linear = torch.nn.Linear(FEATURES, 1)

    def forward(self, features, labels=None, query_ids=None):
        scores = self.linear(features).squeeze(-1)
        loss = None if labels is None else torch.nn.functional.mse_loss(scores, labels.float())
        return SequenceClassifierOutput(loss=loss, logits=scores)


class Items(torch.utils.data.Dataset):
    def __init__(self, features, labels, query_ids):
        self.rows = [
            {"features": f, "labels": l, "query_ids": q} for f, l, q in zip(features, labels, query_ids)
        ]  # fmt: skip

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def _arguments(tmp_path, batch_eval_metrics=True):
    return TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=7, batch_eval_metrics=batch_eval_metrics,
        include_for_metrics=["inputs"], report_to="none", use_cpu=True, disable_tqdm=True,
    )  # fmt: skip


@pytest.fixture
def items():
    generator = torch.Generator().manual_seed(0)
    count = 60
    features = torch.randn(count, FEATURES, generator=generator)
    labels = torch.randint(0, 3, (count,), generator=generator).float()
    query_ids = torch.randperm(count, generator=generator) % 9  # 9 queries, items in any order: they span batches
    return features, labels, query_ids


def test_items_with_query_ids_in_a_real_evaluate(items, tmp_path):
    features, labels, query_ids = items
    model = Scorer(PretrainedConfig())
    compute_metrics = RankingMetrics([tn.metrics.NDCG(k=(1, 5, 10)), tn.metrics.MRR(k=(10,))])
    trainer = Trainer(
        model=model, args=_arguments(tmp_path), eval_dataset=Items(features, labels, query_ids),
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
    features, labels, query_ids = items
    trainer = Trainer(
        model=Scorer(PretrainedConfig()), args=_arguments(tmp_path, batch_eval_metrics=False),
        eval_dataset=Items(features, labels, query_ids), compute_metrics=RankingMetrics(tn.metrics.NDCG(k=10)),
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
