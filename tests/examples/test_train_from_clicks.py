"""train_from_clicks.py end to end on tiny settings: every ranker trained, one table, on the
synthetic set and on a fold folder."""

import train_from_clicks

ROWS = ["full information (labels)", "naive (clicks as labels)", "IPS (swap-estimated propensities)",
        "DLA (learnt propensities)"]


def test_quick_run_prints_every_ranker(capsys):
    summary = train_from_clicks.main(["--quick"])
    out = capsys.readouterr().out
    assert "clicks: PBM η=1.0, ε⁻=0.1, ε⁺=1.0, 10 sessions per training query; data: synthetic" in out
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
