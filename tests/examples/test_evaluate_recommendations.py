"""evaluate_recommendations.py: the tutorials' numbers and a sane ordering of recommenders."""

import evaluate_recommendations
import pytest


def test_worked_examples_match_the_tutorials(capsys):
    result = evaluate_recommendations.main(["--users", "200", "--items", "100", "--k", "10"])
    worked = result["worked"]
    assert worked["graded, list 1"] == pytest.approx(0.6048882832133625, abs=1e-6)
    assert worked["graded, mean"] == pytest.approx(0.7356022113638424, abs=1e-6)
    assert worked["implicit, k=5"] == pytest.approx(0.6509, abs=1e-4)
    out = capsys.readouterr().out
    assert "| implicit, k=5" in out and "PureSVD" in out


def test_learned_recommenders_beat_random():
    result = evaluate_recommendations.main(["--users", "300", "--items", "150", "--k", "10"])["recommenders"]
    random, popular, svd = result.values()
    assert svd["NDCG@10"] > popular["NDCG@10"] > random["NDCG@10"]
    assert all(0 <= value <= 1 for scores in result.values() for value in scores.values())


def test_bad_arguments_exit():
    with pytest.raises(SystemExit):
        evaluate_recommendations.main(["--k", "0"])
    with pytest.raises(SystemExit):
        evaluate_recommendations.main(["--items", "5", "--k", "10"])
