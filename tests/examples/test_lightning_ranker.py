"""lightning_ranker.py: a 2-epoch CPU fit that logs our NDCG through self.log_dict."""

import pytest

pytest.importorskip("lightning")
pytest.importorskip("torchmetrics")


def test_two_epoch_cpu_fit_logs_ndcg(tmp_path):
    import lightning_ranker

    metrics = lightning_ranker.main(["--epochs", "2", "--queries", "64", "16", "16", "--features", "8",
                                     "--accelerator", "cpu", "--root-dir", str(tmp_path)])
    # The keys the README shows: val/ndcg@k apart from the train/ keys.
    assert {"val/ndcg@1", "val/ndcg@5", "val/ndcg@10", "train/loss"} <= set(metrics)
    assert all(0 <= metrics[f"val/ndcg@{k}"] <= 1 for k in (1, 5, 10))
