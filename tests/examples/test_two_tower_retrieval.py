"""two_tower_retrieval.py: the chunked evaluation scores what the dense metrics score, and the
example trains in one process and under ``torchrun --nproc_per_node 2``."""

import os
import subprocess
import sys

import pytest
import torch
import two_tower_retrieval as example
from conftest import ROOT

import torch_ndcg as tn
from recommend_full_catalog import synthetic


def test_padded_ids_are_each_rows_true_columns():
    rows = torch.tensor([[False, True, True, False], [False, False, False, False], [True, False, False, True]])
    assert example.padded_ids(rows).tolist() == [[1, 2], [-1, -1], [0, 3]]


def test_chunked_evaluation_is_the_dense_metric_with_seen_items_excluded():
    splits = synthetic(60, 120).split(test=0.1, validation=0.1)
    torch.manual_seed(0)
    model = example.TwoTower(splits.n_users, splits.n_items, 8)
    got = example.evaluate(model, splits, "test", chunk_size=7)
    users = splits.users("test")
    with torch.no_grad():
        scores = (model.users(users) @ model.items(torch.arange(splits.n_items)).T).masked_fill(splits.seen("test", users), -1e30)
    relevance = splits.relevance("test", users)
    assert got["ndcg"] == pytest.approx(tn.ndcg(scores, relevance, k=10).item(), abs=1e-6)
    assert got["recall"] == pytest.approx(tn.recall(scores, relevance, k=10).item(), abs=1e-6)


def test_quick_run_in_one_process_keeps_its_best_validation_epoch(capsys):
    result = example.main(["--quick"])
    assert len(result["validation"]) == 2 and 0 <= result["test"]["ndcg"] <= 1
    assert "1 process(es)" in capsys.readouterr().out


@pytest.mark.slow
def test_quick_run_under_torchrun_with_two_processes():
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", str(ROOT / "examples" / "two_tower_retrieval.py"), "--quick"],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 process(es) × 32 pairs per step" in done.stdout and "test at the best validation epoch" in done.stdout
