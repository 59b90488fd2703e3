"""compare_lightgbm.py: its scikit-learn judge agrees with tn.ndcg, and a score file is judged in line order."""

import compare_lightgbm
import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.data import RankingDataset


def test_sklearn_judge_matches_exp2_ndcg_with_empty_queries_skipped():
    gen = torch.Generator().manual_seed(0)
    queries = [(torch.zeros(n, 1), torch.randint(0, 4, (n,), generator=gen).float()) for n in (5, 1, 7, 4)]
    queries.append((torch.zeros(3, 1), torch.zeros(3)))  # nothing relevant: skipped
    test = RankingDataset.from_queries(queries)
    scores = torch.randn(len(test.relevance), generator=gen).round(decimals=1)  # some ties
    features, relevance, mask = next(test.batches(len(test)))
    padded = torch.zeros(mask.shape)
    padded[mask] = scores
    expected = tn.ndcg(padded, relevance, 3, mask=mask, gain="exp2", empty="skip")
    assert compare_lightgbm.sklearn_ndcg(scores.double().numpy(), test, 3) == pytest.approx(float(expected), abs=1e-6)


def test_score_files_are_judged_in_the_test_file_line_order(tmp_path, write_fold, capsys):
    folder = write_fold(tmp_path / "fold", "letor")
    lines = [line for line in (folder / "test.txt").read_text().splitlines() if line and not line.startswith("#")]
    labels = [float(line.split()[0]) for line in lines]
    perfect, reversed_ = tmp_path / "perfect.scores", tmp_path / "reversed.scores"
    perfect.write_text("\n".join(map(str, labels)) + "\n")
    reversed_.write_text("\n".join(str(-label) for label in labels) + "\n")
    result = compare_lightgbm.main(["--data", str(folder), "--scores", str(perfect), str(reversed_), "--seeds", "0"])
    assert result[str(perfect)] == pytest.approx(1.0) and result[str(reversed_)] < 0.8
    assert "exp2 gain (2**label - 1), ties averaged, queries with no relevant item skipped" in capsys.readouterr().out
