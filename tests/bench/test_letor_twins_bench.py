"""The twins' LETOR comparison: its losses are the library's twins, its targets the exact metrics,
and each run is tuned on the target it is judged by (tiny synthetic folds)."""

from __future__ import annotations

import math

import pytest
import torch
from test_letor_bench import TINY, tiny_folds  # noqa: F401  (the fixture)

import torch_ndcg as tn
from benchmarks import letor, letor_twins


def _lists(seed=0):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(4, 12, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 3, (4, 12), generator=gen).double()
    relevance[:, 0] = 1.0
    mask = torch.ones(4, 12, dtype=torch.bool)
    mask[1, 7:] = False
    return scores, relevance, mask


@pytest.mark.parametrize("target", sorted(letor_twins.OWN_METRIC))
@pytest.mark.parametrize("relaxation", sorted(letor.TWIN_RELAXATIONS))
def test_the_contenders_are_the_targets_twin_and_ndcgs_twin_at_its_cutoff(target, relaxation):
    scores, relevance, mask = _lists()
    own, ndcg = letor_twins.contenders(target, relaxation)
    metric = {"MRR@10": tn.mrr_loss, "MAP": tn.average_precision_loss, "Recall@5": tn.recall_loss, "Recall@10": tn.recall_loss}[target]
    k = {"MRR@10": 10, "MAP": None, "Recall@5": 5, "Recall@10": 10}[target]
    name = letor.TWIN_RELAXATIONS[relaxation]
    torch.testing.assert_close(letor.TWINS[own](scores, relevance, mask), metric(scores, relevance, k, mask=mask, relaxation=name))
    torch.testing.assert_close(letor.TWINS[ndcg](scores, relevance, mask), tn.ndcg_loss(scores, relevance, k, mask=mask, relaxation=name))


def test_the_targets_are_the_exact_metrics_per_query():
    scores, relevance, _ = _lists(1)
    flat, labels = scores.reshape(-1), relevance.reshape(-1)
    queries = torch.arange(4).repeat_interleave(12)
    expected = {"NDCG@10": tn.ndcg(scores, relevance, 10, reduction="none"), "MRR@10": tn.mrr(scores, relevance, 10, reduction="none"),
                "MAP": tn.average_precision(scores, relevance, reduction="none"),
                "Recall@5": tn.recall(scores, relevance, 5, reduction="none"), "Recall@10": tn.recall(scores, relevance, 10, reduction="none")}  # fmt: skip
    assert sorted(expected) == sorted(letor.TARGETS)
    for name, values in expected.items():
        torch.testing.assert_close(letor.TARGETS[name](flat, labels, queries), values)


def test_tuning_keeps_the_grid_point_with_the_best_validation_target(tiny_folds):  # noqa: F811
    _, folds = tiny_folds
    budget = letor.Budget(folds=(1,), seeds=(0,), max_epochs=2, patience=1, grid_points=3)
    name = letor.twin_name("Approx", "MRR", 10)
    runs = letor.tune_and_run(folds, budget, False, workers=1, pairs=[(name, "linear")], target="MRR@10")["runs"]
    tuning = letor.run_tasks([letor.Task(1, name, "linear", p, 0, "MRR@10") for p in range(3)], folds, budget, workers=1)
    best = max(range(3), key=lambda p: (tuning[letor.Task(1, name, "linear", p, 0, "MRR@10")][0], -p))
    assert runs[name, "linear", 1]["point"] == best
    # The value a run is tuned on is the target's (MRR@10 lies in [0, 1] and differs from NDCG@10's runs).
    by_ndcg = letor.run_tasks([letor.Task(1, name, "linear", p, 0) for p in range(3)], folds, budget, workers=1)
    assert any(tuning[letor.Task(1, name, "linear", p, 0, "MRR@10")][0] != by_ndcg[letor.Task(1, name, "linear", p, 0)][0]
               for p in range(3))  # fmt: skip


def test_a_comparison_gives_both_losses_for_every_relaxation_with_a_paired_test(tiny_folds):  # noqa: F811
    _, folds = tiny_folds
    rows, seconds, tasks = letor_twins.compare(folds, TINY, "Recall@5", workers=1)
    assert [row["relaxation"] for row in rows] == ["Approx", "NeuralSort"]
    assert tasks == 2 * 2 * len(TINY.folds) * (TINY.grid_points + len(TINY.seeds) - 1) and seconds > 0
    for row in rows:
        for side in ("own", "ndcg"):
            assert len(row[f"{side}_folds"]) == len(TINY.folds)
            assert math.isclose(row[f"{side}_mean"], sum(row[f"{side}_folds"]) / len(TINY.folds))
        assert 0.0 <= row["p"] <= 1.0
    table = letor_twins.markdown(rows, {"dataset": "tiny", "command": "test", "date": "-", "machine": "-", "wall_seconds": 0,
                                        "tasks": tasks, "task_seconds": seconds, "workers": 1, "folds": [1, 2], "seeds": [0, 1],
                                        "grid_points": 1, "max_epochs": 2, "patience": 1})  # fmt: skip
    assert sum(line.startswith("| Recall@5 |") for line in table.splitlines()) == 2
