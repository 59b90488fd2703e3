"""Evaluate a ranker inside the Hugging Face ``Trainer`` with torch_ndcg's metric classes.

    pip install transformers accelerate torchmetrics
    python examples/hf_trainer_ranker.py

Each example is one (query, document) item of :func:`torch_ndcg.data.synthetic_letor`, with its
features, its relevance label and its query's id. The model is a small MLP scorer wrapped as a
``PreTrainedModel`` and trained pointwise (mean squared error on the labels); its ``forward``
takes ``query_ids`` and ignores it, so the Trainer keeps that column in every batch.
:class:`torch_ndcg.integrations.huggingface.RankingMetrics` is the ``compute_metrics``: with
``batch_eval_metrics=True`` and ``include_for_metrics=["inputs"]`` the Trainer hands it each
evaluation batch, whose scores it adds to ``NDCG(k=(1, 5, 10))`` under the batch's query ids (a
query may span batches); the last batch returns NDCG@1/5/10, logged as ``eval_ndcg@k``.
"""

from __future__ import annotations

import argparse

import torch
from torch import Tensor, nn
from transformers import PretrainedConfig, PreTrainedModel, Trainer, TrainingArguments
from transformers.modeling_outputs import SequenceClassifierOutput

import torch_ndcg as tn
from torch_ndcg.data import synthetic_letor
from torch_ndcg.integrations.huggingface import RankingMetrics


class ScorerConfig(PretrainedConfig):
    model_type = "torch_ndcg_scorer"

    def __init__(self, num_features: int = 32, hidden: int = 64, **kwargs) -> None:
        super().__init__(**kwargs)
        self.num_features, self.hidden = num_features, hidden


class Scorer(PreTrainedModel):
    """An MLP that scores each item's features; pointwise MSE against the label when labels are given."""

    config_class = ScorerConfig
    main_input_name = "features"

    def __init__(self, config: ScorerConfig) -> None:
        super().__init__(config)
        self.net = nn.Sequential(nn.Linear(config.num_features, config.hidden), nn.ReLU(), nn.Linear(config.hidden, 1))

    def forward(self, features: Tensor, labels: Tensor | None = None, query_ids: Tensor | None = None) -> SequenceClassifierOutput:
        scores = self.net(features).squeeze(-1)
        loss = None if labels is None else nn.functional.mse_loss(scores, labels.float())
        return SequenceClassifierOutput(loss=loss, logits=scores)


class Items(torch.utils.data.Dataset):
    """The items of a ranking data set, one example each: ``features``, ``labels``, ``query_ids``."""

    def __init__(self, queries) -> None:
        self.rows = [
            {"features": x, "labels": y, "query_ids": q}
            for q in range(len(queries)) for x, y in zip(*queries[q])
        ]  # fmt: skip

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict[str, Tensor | int]:
        return self.rows[i]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--queries", type=int, nargs=2, default=[300, 100], metavar=("TRAIN", "VALI"))
    parser.add_argument("--output-dir", default="runs/hf_trainer")
    args = parser.parse_args(argv)

    splits = synthetic_letor((*args.queries, 1), num_features=16, seed=0)
    training = TrainingArguments(
        output_dir=args.output_dir, num_train_epochs=args.epochs, per_device_train_batch_size=256,
        per_device_eval_batch_size=256, learning_rate=3e-3, eval_strategy="epoch", save_strategy="no",
        logging_strategy="no", report_to="none", disable_tqdm=True, use_cpu=True, seed=0,
        batch_eval_metrics=True, include_for_metrics=["inputs"],  # RankingMetrics reads query_ids from each batch
    )
    trainer = Trainer(
        model=Scorer(ScorerConfig(num_features=16)), args=training, train_dataset=Items(splits["train"]),
        eval_dataset=Items(splits["vali"]), compute_metrics=RankingMetrics(tn.metrics.NDCG(k=(1, 5, 10))),
    )
    trainer.train()
    results = trainer.evaluate()
    print("validation:", "  ".join(f"{key} {value:.4f}" for key, value in results.items() if "ndcg" in key))
    return results


if __name__ == "__main__":
    main()
