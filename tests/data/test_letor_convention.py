"""The LETOR preset gives the LETOR 4.0 evaluation tool's numbers on the real MQ2008 folds.

The data is read from ``$TORCH_NDCG_LETOR`` (default ``../shared/data/letor`` beside the repository
root); without it these tests skip, naming the path.
"""

from __future__ import annotations

import pytest
import torch
from letor_tool import evaluate

import torch_ndcg as tn
from benchmarks import letor_data
from torch_ndcg.conventions import LETOR

ROOT = letor_data.data_root()
needs_data = pytest.mark.skipif(
    not letor_data.tarball(ROOT, "mq2008").is_file(),
    reason=f"the LETOR data is not at {ROOT} (set {letor_data.ENVIRONMENT_VARIABLE})",
)
BM25 = 24  # feature 25: BM25 of the whole document
# The tool's output for the ranking by BM25 (LETOR's data README): NDCG@1, @3, @5, @10, P@1, P@10, MAP.
BM25_REFERENCE = {
    1: (0.2714, 0.3175, 0.3549, 0.1655, 0.3397, 0.2109, 0.3701),
    2: (0.2293, 0.2927, 0.3224, 0.1219, 0.2803, 0.1860, 0.3326),
    3: (0.2399, 0.2559, 0.3040, 0.1720, 0.2866, 0.1911, 0.3300),
    4: (0.2527, 0.2980, 0.3446, 0.1850, 0.3121, 0.2401, 0.3739),
    5: (0.2909, 0.3331, 0.3742, 0.1670, 0.3248, 0.2108, 0.3875),
}
COLUMNS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "P@1", "P@10", "MAP")
PRINTED = 0.5e-4 + 1e-9  # the tool prints 4 decimals


def letor_measures(scores: torch.Tensor, relevance: torch.Tensor, indexes: torch.Tensor) -> dict[str, float]:
    """The preset's numbers of flat per-item scores, in the tool's column names."""
    ndcg = tn.ndcg(scores, relevance, (1, 3, 5, 10), indexes=indexes, **LETOR["ndcg"])
    precision = tn.precision(scores, relevance, (1, 10), indexes=indexes, **LETOR["precision"])
    average_precision = tn.average_precision(scores, relevance, indexes=indexes, **LETOR["average_precision"])
    values = [*ndcg.tolist(), *precision.tolist(), float(average_precision)]
    return dict(zip(COLUMNS, values))


def query_ids(ds) -> torch.Tensor:
    return torch.repeat_interleave(torch.arange(len(ds)), ds.list_lengths)


@needs_data
@pytest.mark.parametrize("fold", letor_data.FOLDS)
def test_letor_preset_reproduces_the_tools_bm25_table(fold, tmp_path):
    folder = letor_data.fold_folder(ROOT, "mq2008", fold)
    ds = tn.data.read_letor(folder / "test.txt")
    bm25 = ds.features[:, BM25].double()
    ours = letor_measures(bm25, ds.relevance, query_ids(ds))
    reference = dict(zip(COLUMNS, BM25_REFERENCE[fold]))
    for column, expected in reference.items():
        assert abs(ours[column] - expected) <= PRINTED, f"Fold{fold} {column}: {ours[column]:.6f} != {expected}"
    # The independent re-implementation of the tool agrees with the same table, so it can judge
    # score files that have no published reference.
    scores = tmp_path / "bm25.txt"
    scores.write_text("".join(f"{v!r}\n" for v in ds.in_file_order(bm25).tolist()))
    tool = evaluate(folder / "test.txt", scores)
    for column, expected in reference.items():
        assert abs(tool[column] - expected) <= PRINTED, f"tool Fold{fold} {column}: {tool[column]:.6f} != {expected}"


@needs_data
def test_without_the_short_list_rule_ndcg_at_10_is_far_from_the_tools():
    # MQ2008's lists are mostly shorter than 10: the rule is what makes NDCG@10 the tool's.
    ds = tn.data.read_letor(letor_data.fold_folder(ROOT, "mq2008", 1) / "test.txt")
    options = {**LETOR["ndcg"], "short_list": "whole"}
    whole = tn.ndcg(ds.features[:, BM25].double(), ds.relevance, 10, indexes=query_ids(ds), **options)
    assert abs(float(whole) - BM25_REFERENCE[1][3]) > 0.1
