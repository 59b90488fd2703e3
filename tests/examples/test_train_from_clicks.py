"""train_from_clicks.py end to end on tiny settings: every ranker trained, one table, on the
synthetic set and on a fold folder."""

import pytest
import train_from_clicks

ROWS = ["full information (labels)", "naive (clicks as labels)", "IPS (swap-estimated propensities)",
        "DLA (learnt propensities)"]


def test_quick_run_prints_every_ranker(capsys):
    summary = train_from_clicks.main(["--quick"])
    out = capsys.readouterr().out
    assert "clicks: PBM η=1.0, ε⁻=0.1, ε⁺=1.0, y_max=4, 10 sessions per training query; data: synthetic" in out
    assert all(name in summary for name in ROWS)
    assert any(name.startswith("logging ranker (") for name in summary)
    assert all(0 < row["mean"] <= 1 for row in summary.values())
    for name in ROWS:
        assert f"| {name} |" in out


def test_lambda_family_and_a_fold_folder(tmp_path, write_fold, capsys):
    folder = write_fold(tmp_path / "fold", "letor")
    summary = train_from_clicks.main(["--quick", "--data", str(folder), "--loss", "lambda", "--clip", "0.1"])
    assert all(name in summary for name in ROWS)
    assert f"data: {folder}" in capsys.readouterr().out


def test_power_law_fit_recovers_eta():
    import torch

    ratios = torch.arange(1, 21, dtype=torch.float64).pow(-1.5)
    fitted = train_from_clicks.power_law(ratios)
    torch.testing.assert_close(fitted, ratios.float())


def test_test_ndcg_uses_the_exp2_gain_the_text_states():
    import torch

    import torch_ndcg as tn

    features = torch.tensor([[[0.1], [0.9], [0.5], [0.3]]])
    relevance = torch.tensor([[4.0, 1.0, 2.0, 0.0]])
    data = train_from_clicks.Padded(features, relevance, torch.ones(1, 4, dtype=torch.bool))
    model = torch.nn.Flatten(-2)  # the feature is the score
    value = train_from_clicks.test_ndcg(model, data)
    assert value == tn.ndcg(features[..., 0], relevance, 10, gain="exp2").item()
    assert value != tn.ndcg(features[..., 0], relevance, 10, gain="linear").item()


def test_the_click_model_reads_the_top_grade_from_the_data_or_the_option(tmp_path, write_fold, capsys):
    folder = write_fold(tmp_path / "fold", "letor")  # labels 0-2
    lines = (folder / "train.txt").read_text().splitlines()
    top = max(float(line.split()[0]) for line in lines if line and not line.startswith("#"))
    assert top < 4
    train_from_clicks.main(["--quick", "--data", str(folder)])
    assert f"y_max={top:g}," in capsys.readouterr().out
    train_from_clicks.main(["--quick", "--data", str(folder), "--max-label", "4"])
    assert "y_max=4," in capsys.readouterr().out


def test_a_fold_is_read_from_an_archive_in_the_letor_folder(tmp_path, write_fold, monkeypatch, capsys):
    import tarfile

    write_fold(tmp_path / "src" / "SET" / "Fold1", "letor")
    letor = tmp_path / "letor"
    letor.mkdir()
    with tarfile.open(letor / "set_folds.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "src" / "SET", arcname="SET")
    monkeypatch.setenv("TORCH_NDCG_LETOR", str(letor))
    summary = train_from_clicks.main(["--quick", "--data", "SET/Fold1"])
    assert all(name in summary for name in ROWS) and "data: SET/Fold1" in capsys.readouterr().out
    monkeypatch.delenv("TORCH_NDCG_LETOR")
    assert all(name in train_from_clicks.main(["--quick", "--data", "SET/Fold1", "--letor-dir", str(letor)]) for name in ROWS)
    with pytest.raises(SystemExit, match="letor-dir"):
        train_from_clicks.main(["--quick", "--data", "SET/Fold9", "--letor-dir", str(letor)])
