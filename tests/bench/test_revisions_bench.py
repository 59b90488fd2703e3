"""The revisions benchmark imports an earlier commit beside this tree and prints both."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import revisions

ROOT = Path(__file__).resolve().parents[2]


def _in_git_checkout() -> bool:
    return shutil.which("git") is not None and subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True
    ).returncode == 0


@pytest.mark.skipif(not _in_git_checkout(), reason="needs a git checkout of the project")
def test_revisions_table_times_this_tree_beside_a_commit(capsys):
    revisions.main(quick=True, argv=["--base", "HEAD", "--rounds", "1"])
    out = capsys.readouterr().out
    rows = re.findall(r"^(ListMLE|ListNet|Softmax CE) +([\d.]+) +([\d.]+) +([\d.]+)", out, re.M)
    assert [row[0] for row in rows] == ["ListMLE", "ListNet", "Softmax CE"] and "base = torch_ndcg_" in out
    assert all(float(value) > 0 for row in rows for value in row[1:])  # this ms, base ms, this/base


@pytest.mark.skipif(not _in_git_checkout(), reason="needs a git checkout of the project")
def test_revisions_table_times_the_smooth_ndcg_losses_at_each_shape(capsys):
    revisions.main(quick=True, argv=["--base", "HEAD", "--rounds", "1", "--losses", "NeuralNDCG@10",
                                     "NeuralSort NDCG@10", "--shapes", "4x30", "2x12"])  # fmt: skip
    out = capsys.readouterr().out
    assert re.findall(r"^losses at (\d+) x (\d+)", out, re.M) == [("4", "30"), ("2", "12")]
    rows = re.findall(r"^(NeuralNDCG@10|NeuralSort NDCG@10) +([\d.]+) +([\d.]+) +([\d.]+)", out, re.M)
    assert [row[0] for row in rows] == ["NeuralNDCG@10", "NeuralSort NDCG@10"] * 2


def test_a_shape_that_is_not_batch_by_length_is_refused(capsys):
    with pytest.raises(SystemExit):
        revisions.main(quick=True, argv=["--shapes", "64by100"])
    assert "a shape is BATCHxLENGTH" in capsys.readouterr().err
