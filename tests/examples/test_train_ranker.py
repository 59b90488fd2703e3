"""train_ranker.py end to end on the tiny config: synthetic data, LETOR files, --compare, errors."""

import json
from pathlib import Path

import pytest
import torch
import train_ranker
from ranker_config import LOSSES, make_config

import torch_ndcg as tn

TINY = str(Path(__file__).resolve().parents[2] / "configs" / "tiny.json")


def run(tmp_path, *extra):
    return train_ranker.main(["--config", TINY, "--set", f"output_dir={tmp_path}", *extra])


def test_default_loss_trains_reports_and_plots(tmp_path, capsys):
    result = run(tmp_path)
    out = capsys.readouterr().out
    (trained,) = result["runs"]
    assert trained["loss"] == "neural_ndcg"
    assert len(trained["history"]) == 6  # untrained + 5 epochs
    assert trained["best_vali"] > result["random_vali"]["ndcg@10"] + 0.2  # the smoke test learns as shipped
    assert set(trained["test"]) == {"ndcg@1", "ndcg@5", "ndcg@10"}
    assert all(0 <= v <= 1 for v in trained["test"].values())
    assert "random scorer: vali ndcg@10" in out and "neural_ndcg test" in out
    assert "NDCG with linear gain, log2 discount, tied scores averaged, queries with no relevant item skipped" in out
    assert "counted as 1 / skipped / counted as 0" in out
    assert result["plot"] == tmp_path / "tiny-synthetic-neural_ndcg.png" and result["plot"].stat().st_size > 1000
    again = run(tmp_path, "--set", "epochs=1")  # the same run again: a new file, the first one kept
    assert again["plot"] == tmp_path / "tiny-synthetic-neural_ndcg-2.png" and result["plot"].exists()


def test_training_beats_a_random_scorer(tmp_path):
    # Noise-free labels, a few more epochs: learning must show, or the loop is broken.
    result = run(tmp_path, "--set", "synthetic_noise=0", "--set", "epochs=6", "--set", "plot=false",
                 "--set", "synthetic_queries=[200, 50, 50]", "--set", "loss=listnet")
    assert result["runs"][0]["best_vali"] > result["random_vali"]["ndcg@10"] + 0.15


def test_compare_trains_every_loss_on_the_same_data(tmp_path, capsys):
    result = run(tmp_path, "--compare", "--set", "epochs=1")
    out = capsys.readouterr().out
    assert [r["loss"] for r in result["runs"]] == list(LOSSES)
    assert result["plot"] == tmp_path / "tiny-synthetic-compare.png" and result["plot"].stat().st_size > 1000
    for loss in (*LOSSES, "random"):
        assert f"| {loss}" in out
    assert all(torch.isfinite(torch.tensor(list(r["test"].values()))).all() for r in result["runs"])
    assert "95% percentile bootstrap interval" in out and "paired t-test against the best loss" in out
    means = [float(r["test_per_query"].nanmean()) for r in result["runs"]]
    best = result["runs"][means.index(max(means))]["loss"]
    assert f"| {best} " in out.split("paired t-test against the best loss")[1]
    for r in result["runs"]:
        assert r["test_per_query"].shape == (32,)  # the tiny config's test queries


@pytest.mark.parametrize("layout", ["letor", "gzip", "train_test", "lightgbm", "xgboost"])
def test_every_data_layout_trains(tmp_path, capsys, write_fold, layout):
    folder = write_fold(tmp_path / layout, layout)
    result = run(tmp_path, "--data", str(folder), "--set", "max_items=4", "--set", "plot=false", "--set", "epochs=1")
    out = capsys.readouterr().out
    carved = layout in ("train_test", "lightgbm")
    assert ("no validation file" in out) == carved
    if carved:  # 20% of 12 training queries, drawn with the seed, validate
        assert "validating on 2 of its 12 training queries (vali_fraction=0.2, drawn with seed 0)" in out
        assert "train RankingDataset(10 queries" in out and "vali  RankingDataset(2 queries" in out
    else:
        assert "train RankingDataset(12 queries" in out and "vali  RankingDataset(4 queries" in out
    assert "test  RankingDataset(4 queries" in out
    assert result["config"].data == str(folder) and len(result["runs"][0]["history"]) == 2


def test_carved_validation_is_seeded_and_disjoint(tmp_path, write_fold):
    folder = write_fold(tmp_path / "fold", "train_test")
    config = make_config({"data": str(folder)})
    first, second = train_ranker.load_data(config), train_ranker.load_data(config)
    assert first["vali"].qids == second["vali"].qids
    assert not set(first["vali"].qids) & set(first["train"].qids) and len(first["vali"].qids) == 2
    other = train_ranker.load_data(make_config({"data": str(folder), "seed": 3}))
    assert other["vali"].qids != first["vali"].qids


def test_gain_and_empty_reach_the_metrics_and_the_losses(tmp_path, capsys):
    result = run(tmp_path, "--set", "gain=exp2", "--set", "empty=zero", "--set", "plot=false", "--set", "epochs=1")
    out = capsys.readouterr().out
    assert "NDCG with exp2 gain, log2 discount, tied scores averaged, queries with no relevant item counted as 0" in out
    config = result["config"]
    test = train_ranker.load_data(config)["test"]
    model = result["runs"][0]["model"]
    with torch.no_grad():
        features, relevance, mask = next(test.batches(len(test)))
        scores = model(features)
    expected = tn.ndcg(scores, relevance, [1, 5, 10], mask=mask, gain="exp2", empty="zero", reduction="none").mean(0)
    assert list(result["runs"][0]["test"].values()) == pytest.approx(expected.tolist(), abs=1e-5)
    relevance = torch.tensor([[3.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    scores = torch.tensor([[0.1, 0.5, 0.2], [0.3, 0.2, 0.1]])
    mask = torch.ones_like(relevance, dtype=torch.bool)
    for loss, library in ((train_ranker.neural_ndcg, tn.neural_ndcg_loss), (train_ranker.approx_ndcg, tn.approx_ndcg_loss)):
        ours = loss(scores, relevance, mask, config)
        assert ours == pytest.approx(float(library(scores, relevance, mask=mask, gain="exp2", empty="zero")))
        assert ours != pytest.approx(float(library(scores, relevance, mask=mask)))  # linear gain, skip: differs


def test_saved_scores_follow_the_test_file_lines_and_predict_agrees(tmp_path, write_fold):
    import predict

    folder = write_fold(tmp_path / "fold", "letor")  # interleaved queries, a comment line
    with (folder / "test.txt").open("a") as f:
        f.write("\n# a comment between items\n2 qid:q0 1:2.5 3:1.0 # docid = last\n")
    scores_file, model_dir = tmp_path / "test.scores", tmp_path / "model"
    run(tmp_path, "--data", str(folder), "--set", "plot=false", "--set", "epochs=1",
        "--save-scores", str(scores_file), "--save-model", str(model_dir))
    model, config = train_ranker.load_model(model_dir)
    assert sorted(p.name for p in model_dir.iterdir()) == ["config.json", "model.pt"]
    assert config.data == str(folder) and json.loads((model_dir / "config.json").read_text())["epochs"] == 1
    items = [line.split("#")[0].split() for line in (folder / "test.txt").read_text().splitlines()]
    items = [tokens for tokens in items if tokens]
    features = torch.zeros(len(items), model.num_features)
    for row, tokens in enumerate(items):  # each line on its own, in file order
        for token in tokens[2:]:
            key, value = token.split(":")
            features[row, int(key) - 1] = float(value)
    with torch.no_grad():
        expected = model(features[None])[0]
    saved = torch.tensor([float(line) for line in scores_file.read_text().split()])
    assert saved.shape == (len(items),) and torch.allclose(saved, expected, atol=1e-6)
    assert not torch.equal(model.mean, torch.zeros_like(model.mean))  # the standardisation was saved
    out = tmp_path / "predicted.scores"
    predicted = predict.main([str(model_dir), str(folder / "test.txt"), "--out", str(out)])
    assert out.read_text() == scores_file.read_text() and set(predicted) == {"ndcg@1", "ndcg@5", "ndcg@10"}
    with pytest.raises(SystemExit):
        predict.main([str(model_dir), str(folder / "test.txt"), "--out", str(out)])  # exists: refused


def test_lightgbm_layout_scores_come_back_in_line_order(tmp_path, write_fold):
    import predict

    folder = write_fold(tmp_path / "lgb", "lightgbm")
    scores_file, model_dir = tmp_path / "rank.test.scores", tmp_path / "model"
    run(tmp_path, "--data", str(folder), "--set", "plot=false", "--set", "epochs=1",
        "--save-scores", str(scores_file), "--save-model", str(model_dir))
    out = tmp_path / "predicted.scores"
    predict.main([str(model_dir), str(folder / "rank.test"), "--groups", str(folder / "rank.test.query"), "--out", str(out)])
    assert out.read_text() == scores_file.read_text()
    assert len(scores_file.read_text().split()) == sum(1 for line in (folder / "rank.test").read_text().splitlines()
                                                       if line and not line.startswith("#"))


def test_outputs_are_refused_before_training_rather_than_overwritten(tmp_path, capsys):
    taken = tmp_path / "taken.scores"
    taken.write_text("keep me\n")
    full = tmp_path / "full"
    full.mkdir()
    (full / "model.pt").write_text("keep me")
    for args, message in ((["--save-scores", str(taken)], "--save-scores .*taken.scores: already exists"),
                          (["--save-model", str(full)], "--save-model .*full: already exists"),
                          (["--compare", "--save-scores", str(tmp_path / "x")], "do not combine with --compare")):
        with pytest.raises(SystemExit):
            run(tmp_path, *args)
        captured = capsys.readouterr()
        assert "epoch" not in captured.out
        import re
        assert re.search(message, captured.err), captured.err
    assert taken.read_text() == "keep me\n"


def test_bad_config_exits_with_the_key_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run(tmp_path, "--set", "epoch=3")
    assert "--set epoch: unknown config key 'epoch'; did you mean 'epochs'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(tmp_path, "--data", str(tmp_path / "missing"))
    assert "missing does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "lr=Infinity"], "--set lr: config key 'lr' must be a finite number, got inf"),
        (["--set", "temperature=NaN"], "--set temperature: config key 'temperature' must be a finite number"),
        (["--set", "output_dir=FILE"], "config key 'output_dir' must be a folder (or a path to create), but"),
        (["--set", "output_dir=FILE/sub"], "is a file"),
    ],
)
def test_hostile_values_stop_before_any_training(tmp_path, capsys, args, message):
    (tmp_path / "file.txt").write_text("not a folder")
    args = [a.replace("FILE", str(tmp_path / "file.txt")) for a in args]
    with pytest.raises(SystemExit):
        train_ranker.main(["--config", TINY, *args])
    captured = capsys.readouterr()
    assert message in captured.err and "epoch" not in captured.out


def test_deeply_nested_config_is_a_named_error(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SystemExit):
        train_ranker.main(["--config", str(deep)])
    assert "deep.json is nested too deeply" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(tmp_path, "--set", "hidden=" + "[" * 100_000 + "]" * 100_000)
    assert "--set hidden=...: the value is nested too deeply" in capsys.readouterr().err


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
    assert isinstance(train_ranker.ndcg_metric(config), train_ranker._FunctionalNDCG)
    fallback = train_ranker.evaluate(train_ranker.random_scorer(0), vali, config)
    assert fallback == pytest.approx(with_classes, abs=1e-6)
