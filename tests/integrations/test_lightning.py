"""A real Lightning Trainer logs NDCG@1/5/10 of training and validation under distinct keys, through
``MetricCollection(prefix=...)`` and ``self.log_dict(collection.compute())``."""

from __future__ import annotations

import pytest
import torch

L = pytest.importorskip("lightning", reason="the test extra")
torchmetrics = pytest.importorskip("torchmetrics", reason="the metrics extra")

import torch_ndcg as tn  # noqa: E402

CUTOFFS = (1, 5, 10)


class Ranker(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Linear(5, 1)
        self.train_metrics = torchmetrics.MetricCollection([tn.metrics.NDCG(k=CUTOFFS)], prefix="train/")
        self.val_metrics = self.train_metrics.clone(prefix="val/")
        self.seen: dict[str, list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]] = {"train": [], "val": []}

    def _scores(self, batch):
        features, relevance, mask = batch
        return self.net(features).squeeze(-1), relevance, mask

    def training_step(self, batch, batch_idx):
        scores, relevance, mask = self._scores(batch)
        self.train_metrics.update(scores.detach(), relevance, mask=mask)
        self.seen["train"].append((scores.detach().clone(), relevance, mask))
        return tn.neural_ndcg_loss(scores, relevance, mask=mask)

    def on_train_epoch_end(self):
        self.log_dict(self.train_metrics.compute())
        self.train_metrics.reset()

    def validation_step(self, batch, batch_idx):
        scores, relevance, mask = self._scores(batch)
        self.val_metrics.update(scores, relevance, mask=mask)
        self.seen["val"].append((scores.clone(), relevance, mask))

    def on_validation_epoch_end(self):
        self.log_dict(self.val_metrics.compute())
        self.val_metrics.reset()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _batches(seed: int) -> torch.utils.data.DataLoader:
    """16 queries of 12 items (about one in ten padded), in batches of 4."""
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(16, 12, 5, generator=generator)
    relevance = torch.randint(0, 3, (16, 12), generator=generator)
    mask = torch.rand(16, 12, generator=generator) < 0.9
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, relevance, mask), batch_size=4)


def test_train_and_validation_ndcg_are_logged_under_distinct_keys(tmp_path):
    model = Ranker()
    trainer = L.Trainer(
        max_epochs=1, accelerator="cpu", default_root_dir=str(tmp_path), enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0, logger=False,
    )  # fmt: skip
    trainer.fit(model, train_dataloaders=_batches(0), val_dataloaders=_batches(1))
    logged = trainer.logged_metrics
    for stage in ("train", "val"):
        scores, relevance, mask = (torch.cat(parts) for parts in zip(*model.seen[stage]))
        expected = tn.ndcg(scores, relevance, CUTOFFS, mask=mask)
        for k, value in zip(CUTOFFS, expected):
            key = f"{stage}/ndcg@{k}"
            assert logged[key].item() == pytest.approx(value.item(), abs=1e-6), key
            assert trainer.callback_metrics[key].item() == pytest.approx(value.item(), abs=1e-6), key
    assert logged["train/ndcg@10"] != logged["val/ndcg@10"]


@pytest.mark.parametrize("name", tn.metrics.__all__)
def test_compute_has_its_own_docstring(name):
    doc = getattr(tn.metrics, name).compute.__doc__
    assert "Override this method" not in doc and "reset()" in doc
