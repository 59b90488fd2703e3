"""The LETOR benchmark: its pieces on tiny synthetic folds (reproducible, outputs the LETOR tool
agrees with), and ``--quick`` on the real MQ2008 (slow set; skips without the data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from letor_tool import evaluate

from benchmarks import letor, letor_data
from torch_ndcg.data import read_letor_fold, synthetic_letor

TINY = letor.Budget(folds=(1, 2), seeds=(0, 1), max_epochs=2, patience=1, grid_points=1,
                    lightgbm_trees=3, lightgbm_patience=2)  # fmt: skip


def peer_installed() -> bool:
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        return False
    return True


def write_fold(folder: Path, seed: int) -> None:
    """A tiny fold in the LETOR text format, with lists shorter and longer than 10."""
    folder.mkdir(parents=True)
    splits = synthetic_letor((12, 4, 5), num_features=4, list_length=(3, 14), seed=seed)
    for name, ds in splits.items():
        lines = []
        for q in range(len(ds)):
            x, y = ds[q]
            lines += [f"{int(label)} qid:{name}{q} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(row))
                      + f" #docid = d{q}.{i}" for i, (row, label) in enumerate(zip(x.tolist(), y.tolist()))]  # fmt: skip
        (folder / f"{name}.txt").write_text("\r\n".join(lines) + "\r\n")


@pytest.fixture(scope="module")
def tiny_folds(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("letor")
    for fold in TINY.folds:
        write_fold(root / f"Fold{fold}", seed=fold)
    return root, {fold: read_letor_fold(root / f"Fold{fold}") for fold in TINY.folds}


def run_tiny(folds: dict, out: Path) -> dict:
    return letor.run(folds, TINY, out, dataset="tiny", command="test", workers=1, with_peer=peer_installed())


@pytest.fixture(scope="module")
def tiny_run(tiny_folds, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("run")
    return out, run_tiny(tiny_folds[1], out)


def table_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("| ")]


def test_every_loss_and_scorer_is_compared_and_the_outputs_are_written(tiny_run):
    out, table = tiny_run
    expected = [letor.method_name(loss, scorer) for loss in letor.LOSSES for scorer in letor.SCORERS]
    assert sorted(table) == sorted(expected + [letor.PEER] * peer_installed())
    for name in ("results.md", "results.json", "ndcg_at_k.png"):
        assert (out / name).stat().st_size > 0
    parsed = letor.parse_markdown((out / "results.md").read_text())
    assert len(parsed) == 2 and all(sorted(rows) == sorted(table) for rows in parsed.values())
    for rows, convention in zip(parsed.values(), letor.CONVENTIONS):
        for name, values in rows.items():
            assert values == {c: round(table[name][convention]["mean"][c], 4) for c in letor.COLUMNS}
    # Exactly one best per convention; every other method has a Holm-adjusted p-value in [0, 1].
    for convention in letor.CONVENTIONS:
        p = [entry["p_vs_best"][convention]["NDCG@10"] for entry in table.values()]
        assert sum(value is None for value in p) == 1
        assert all(value is None or 0 <= value <= 1 for value in p)


def test_the_same_command_twice_gives_the_same_table(tiny_folds, tiny_run, tmp_path):
    first_out, first = tiny_run
    second = run_tiny(tiny_folds[1], tmp_path)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert table_lines(first_out / "results.md") == table_lines(tmp_path / "results.md")


def check_score_files_against_the_tool(out: Path, data_folder, table: dict, folds, seeds) -> None:
    """The re-implemented LETOR tool, run on each written score file and the fold's test file,
    gives the numbers the preset reported for that fold and seed."""
    checked = 0
    for name, entry in table.items():
        for fold in folds:
            for seed in seeds:
                tool = evaluate(data_folder(fold) / "test.txt", letor.score_file(out / "scores", name, fold, seed))
                ours = entry["folds"][fold]["letor"][str(seed)]
                for column in letor.COLUMNS:
                    assert tool[column] == pytest.approx(ours[column], abs=1e-9), (name, fold, seed, column)
                checked += 1
    assert checked == len(table) * len(folds) * len(seeds)


def test_the_letor_tool_on_the_written_score_files_agrees_with_the_preset(tiny_folds, tiny_run):
    root, _ = tiny_folds
    out, table = tiny_run
    check_score_files_against_the_tool(out, lambda fold: root / f"Fold{fold}", table, TINY.folds, TINY.seeds)


def test_tuning_keeps_the_grid_point_with_the_best_validation_ndcg(tiny_folds):
    _, folds = tiny_folds
    budget = letor.Budget(folds=(1,), seeds=(0,), max_epochs=1, patience=1, grid_points=3)
    runs = letor.tune_and_run(folds, budget, with_peer=False, workers=1)["runs"]
    tuning = letor.run_tasks([letor.Task(1, "ListNet", "linear", p, 0) for p in range(3)], folds, budget, workers=1)
    best = max(range(3), key=lambda p: (tuning[letor.Task(1, "ListNet", "linear", p, 0)][0], -p))
    assert runs["ListNet", "linear", 1]["point"] == best


@pytest.mark.slow
def test_quick_mode_on_mq2008_writes_a_table_the_tool_agrees_with(tmp_path):
    root = letor_data.data_root()
    if not letor_data.tarball(root, "mq2008").is_file():
        pytest.skip(f"the LETOR data is not at {root} (set {letor_data.ENVIRONMENT_VARIABLE})")
    torch.set_num_threads(1)
    table = letor.main(quick=True, argv=["--data", str(root), "--dataset", "mq2008", "--out", str(tmp_path)])
    out = tmp_path / "mq2008"
    parsed = letor.parse_markdown((out / "results.md").read_text())
    assert all(sorted(rows) == sorted(table) for rows in parsed.values()) and len(table) >= 18
    budget = letor.budget_for("mq2008", quick=True)
    check_score_files_against_the_tool(
        out, lambda fold: letor_data.fold_folder(root, "mq2008", fold), table, budget.folds, budget.seeds
    )


@pytest.mark.parametrize(
    "argv, message",
    [(["--folds", "6"], "--folds must be among"), (["--grid-points", "9"], "--grid-points must be between 1 and 8")],
)
def test_a_budget_outside_the_protocol_is_refused_before_any_data_is_read(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit):
        letor.main(argv=["--data", str(tmp_path / "nowhere"), *argv])
    assert message in capsys.readouterr().err
