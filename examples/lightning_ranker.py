"""Train a ranker with PyTorch Lightning: NeuralNDCG as the loss, NDCG@k logged with ``self.log_dict``.

    pip install lightning
    python examples/lightning_ranker.py --epochs 10
    python examples/lightning_ranker.py --accelerator gpu

The synthetic data of :func:`torch_ndcg.data.synthetic_letor` is served by a plain
``DataLoader`` whose ``collate_fn`` pads each batch of queries to ``[B, N, F]`` with a mask.
:class:`torch_ndcg.metrics.NDCG` is a torchmetrics ``Metric``, so Lightning moves it to the
model's device and, under DDP, sums its state across processes before ``compute()``.
"""

from __future__ import annotations

import argparse

import lightning as L
from lightning.pytorch.loggers import CSVLogger
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader
from torchmetrics import MetricCollection

import torch_ndcg as tn
from torch_ndcg.data import pad_batch, synthetic_letor
from torch_ndcg.metrics import NDCG


class LitRanker(L.LightningModule):
    """An item-wise MLP scorer trained with NeuralNDCG@``loss_k``; validation NDCG@{1,5,10}."""

    def __init__(self, num_features: int, hidden: int = 64, lr: float = 3e-3, loss_k: int | None = None,
                 temperature: float = 1.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(num_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))
        # Queries without a relevant item say nothing about the ranking: left out of the mean. The
        # prefix names the keys val/ndcg@1, val/ndcg@5, val/ndcg@10 (a train/ collection would not collide).
        self.val_metrics = MetricCollection([NDCG(k=(1, 5, 10), empty="skip")], prefix="val/")

    def forward(self, features: Tensor) -> Tensor:
        return self.net(features).squeeze(-1)

    def training_step(self, batch: tuple[Tensor, Tensor, Tensor], batch_idx: int) -> Tensor:
        features, relevance, mask = batch
        loss = tn.neural_ndcg_loss(self(features), relevance, self.hparams.loss_k, mask=mask,
                                   temperature=self.hparams.temperature)
        self.log("train/loss", loss, prog_bar=True, batch_size=features.shape[0])
        return loss

    def validation_step(self, batch: tuple[Tensor, Tensor, Tensor], batch_idx: int) -> None:
        features, relevance, mask = batch
        self.val_metrics.update(self(features), relevance, mask=mask)

    def on_validation_epoch_end(self) -> None:
        self.log_dict(self.val_metrics.compute(), prog_bar=True)
        self.val_metrics.reset()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--queries", type=int, nargs=3, default=[600, 200, 200], metavar=("TRAIN", "VALI", "TEST"))
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--accelerator", default="auto", help="cpu, gpu, auto, …")
    parser.add_argument("--root-dir", default="runs/lightning", help="where Lightning writes logs and checkpoints")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    L.seed_everything(args.seed, verbose=False)
    splits = synthetic_letor(tuple(args.queries), num_features=args.features, seed=args.seed)
    mean, std = splits["train"].feature_stats()
    train, vali = (splits[name].standardized(mean, std) for name in ("train", "vali"))
    loaders = {
        "train_dataloaders": DataLoader(train, batch_size=args.batch_size, shuffle=True, collate_fn=pad_batch),
        "val_dataloaders": DataLoader(vali, batch_size=256, collate_fn=pad_batch),
    }
    trainer = L.Trainer(max_epochs=args.epochs, accelerator=args.accelerator, devices=1, log_every_n_steps=10,
                        logger=CSVLogger(args.root_dir, name="lightning_ranker"), default_root_dir=args.root_dir,
                        enable_model_summary=False)
    trainer.fit(LitRanker(train.num_features), **loaders)
    metrics = {key: float(value) for key, value in trainer.callback_metrics.items()}
    print("final validation:", "  ".join(f"{k} {v:.4f}" for k, v in metrics.items() if k.startswith("val/")))
    return metrics


if __name__ == "__main__":
    main()
