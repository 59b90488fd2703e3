"""distill_ranker.py end to end on tiny settings: three scorers, one table, conventions named."""

import distill_ranker
import torch

from torch_ndcg.data import synthetic_letor

TINY = ["--queries", "48", "16", "16", "--features", "6", "--teacher-hidden", "16", "--student-hidden", "4",
        "--epochs", "2", "--batch-size", "16"]


def test_prints_teacher_distilled_and_label_student(capsys):
    result = distill_ranker.main(TINY)
    out = capsys.readouterr().out
    assert "NDCG@10: exp2 gain (2^label − 1), log2 discount, tied scores averaged, test queries with no relevant item skipped" in out
    assert list(result["ndcg@10"]) == ["teacher", "distilled student (listnet)", "label student"]
    assert all(0 < value <= 1 for value in result["ndcg@10"].values())
    for row in ("| teacher ", "| distilled student (listnet) ", "| label student "):
        assert row in out
    assert "teacher scores only (distill_listnet_loss)" in out
    counted, total = result["test_queries"]
    assert f"{counted} of {total} test queries have a relevant item" in out and 0 < counted <= total == 16


def test_every_distillation_loss_trains_a_student(capsys):
    result = distill_ranker.main([*TINY, "--loss", "all", "--epochs", "1"])
    assert [name for name in result["ndcg@10"] if name.startswith("distilled")] == [
        f"distilled student ({name})" for name in distill_ranker.DISTILL_LOSSES
    ]


def test_the_student_learns_from_teacher_scores_alone(capsys):
    # A student that never sees a label must close most of the gap between a random scorer and
    # the teacher: the teacher's scores carry the ranking.
    settings = ["--queries", "150", "40", "40", "--features", "8", "--teacher-hidden", "32", "--student-hidden", "8",
                "--epochs", "4"]
    values = distill_ranker.main(settings)["ndcg@10"]
    test = synthetic_letor((150, 40, 40), num_features=8, seed=0)["test"]
    generator = torch.Generator().manual_seed(0)
    floor = distill_ranker.test_ndcg(RandomScorer(generator), test)[0]
    assert values["distilled student (listnet)"] > floor + 0.5 * (values["teacher"] - floor)


class RandomScorer(torch.nn.Module):
    def __init__(self, generator):
        super().__init__()
        self.generator = generator

    def forward(self, features):
        return torch.rand(features.shape[:-1], generator=self.generator)
