"""train_ranker.py end to end on the tiny config: synthetic data, LETOR files, --compare, errors."""

from pathlib import Path

import pytest
import torch
import train_ranker
from ranker_config import LOSSES, make_config

TINY = str(Path(__file__).resolve().parents[2] / "configs" / "tiny.json")


def run(tmp_path, *extra):
    return train_ranker.main(["--config", TINY, "--set", f"output_dir={tmp_path}", *extra])


def test_default_loss_trains_reports_and_plots(tmp_path, capsys):
    result = run(tmp_path)
    out = capsys.readouterr().out
    (trained,) = result["runs"]
    assert trained["loss"] == "neural_ndcg"
    assert len(trained["history"]) == 3  # untrained + 2 epochs
    assert set(trained["test"]) == {"ndcg@1", "ndcg@5", "ndcg@10"}
    assert all(0 <= v <= 1 for v in trained["test"].values())
    assert "random scorer: vali ndcg@10" in out and "neural_ndcg test" in out
    assert result["plot"] == tmp_path / "tiny.png" and result["plot"].stat().st_size > 1000


def test_training_beats_a_random_scorer(tmp_path):
    # Noise-free labels, a few more epochs: learning must show, or the loop is broken.
    result = run(tmp_path, "--set", "synthetic_noise=0", "--set", "epochs=6", "--set", "plot=false",
                 "--set", "synthetic_queries=[200, 50, 50]", "--set", "loss=listnet")
    assert result["runs"][0]["best_vali"] > result["random_vali"]["ndcg@10"] + 0.15


def test_compare_trains_every_loss_on_the_same_data(tmp_path, capsys):
    result = run(tmp_path, "--compare", "--set", "epochs=1")
    out = capsys.readouterr().out
    assert [r["loss"] for r in result["runs"]] == list(LOSSES)
    for loss in (*LOSSES, "random"):
        assert f"| {loss}" in out
    assert all(torch.isfinite(torch.tensor(list(r["test"].values()))).all() for r in result["runs"])


def test_letor_fold_from_files(tmp_path, capsys):
    gen = torch.Generator().manual_seed(0)
    for split, queries in (("train", 12), ("vali", 4), ("test", 4)):
        lines = []
        for q in range(queries):
            for _ in range(int(torch.randint(3, 9, (1,), generator=gen))):
                x = torch.randn(5, generator=gen)
                label = int((x[0] > 0.5) + (x[0] > 1.2))
                lines.append(f"{label} qid:{split}{q} " + " ".join(f"{i + 1}:{v:.3f}" for i, v in enumerate(x.tolist())))
        (tmp_path / f"{split}.txt").write_text("\n".join(lines[::-1]) + "\n")  # queries out of order
    result = run(tmp_path, "--data", str(tmp_path), "--set", "max_items=4", "--set", "plot=false")
    assert "train RankingDataset(12 queries" in capsys.readouterr().out
    assert result["config"].data == str(tmp_path) and len(result["runs"][0]["history"]) == 3


def test_bad_config_exits_with_the_key_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run(tmp_path, "--set", "epoch=3")
    assert "unknown config key 'epoch'; did you mean 'epochs'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(tmp_path, "--data", str(tmp_path / "missing"))
    assert "must contain train.txt" in capsys.readouterr().err


def test_baseline_losses_ignore_padding():
    config = make_config({})
    scores = torch.tensor([[2.0, 1.0, 0.0, 0.0]])
    relevance = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, False, False]])
    for loss in (train_ranker.LOSS_FUNCTIONS["listnet"], train_ranker.pointwise_loss):
        padded = loss(scores, relevance, mask, config)
        trimmed = loss(scores[:, :2], relevance[:, :2], mask[:, :2], config)
        garbage = loss(torch.tensor([[2.0, 1.0, 9.0, -9.0]]), torch.tensor([[1.0, 0.0, 4.0, 3.0]]), mask, config)
        assert torch.allclose(padded, trimmed) and torch.allclose(padded, garbage)
    # Pointwise is the mean squared error of the two real items: ((2-1)² + (1-0)²) / 2.
    assert train_ranker.pointwise_loss(scores, relevance, mask, config).item() == pytest.approx(1.0)


def test_without_torchmetrics_the_functional_fallback_agrees(monkeypatch):
    config = make_config({"synthetic_queries": [8, 30, 4], "synthetic_list_length": [3, 15]})
    vali = train_ranker.load_data(config)["vali"]
    with_classes = train_ranker.evaluate(train_ranker.random_scorer(0), vali, config)
    monkeypatch.setitem(__import__("sys").modules, "torch_ndcg.metrics", None)  # import now fails
    assert isinstance(train_ranker.ndcg_metric([10]), train_ranker._FunctionalNDCG)
    fallback = train_ranker.evaluate(train_ranker.random_scorer(0), vali, config)
    assert fallback == pytest.approx(with_classes, abs=1e-6)
