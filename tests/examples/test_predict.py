"""predict.py: refuses what is not a saved model, and a file wider than the model, with the reason."""

import predict
import pytest


def test_not_a_saved_model_or_too_wide_a_file_is_named(tmp_path, capsys):
    (tmp_path / "test.txt").write_text("1 qid:1 1:0.5\n")
    with pytest.raises(SystemExit):
        predict.main([str(tmp_path), str(tmp_path / "test.txt"), "--out", str(tmp_path / "s")])
    assert "is not a saved model (--save-model DIR): missing model.pt, config.json" in capsys.readouterr().err


def test_a_file_with_more_features_than_the_model_names_the_line(tmp_path, capsys):
    import train_ranker

    tiny = str(predict.Path(train_ranker.__file__).parents[1] / "configs" / "tiny.json")
    train_ranker.main(["--config", tiny, "--set", "epochs=1", "--set", "plot=false", "--save-model", str(tmp_path / "m")])
    (tmp_path / "wide.txt").write_text("1 qid:1 1:0.5\n0 qid:1 9:1\n")  # the model has 8 features
    with pytest.raises(SystemExit):
        predict.main([str(tmp_path / "m"), str(tmp_path / "wide.txt"), "--out", str(tmp_path / "s")])
    assert "wide.txt:2: feature id must be between 1 and num_features=8, got 9" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
