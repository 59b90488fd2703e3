"""predict.py: refuses what is not a saved model, and a file wider than the model, with the reason."""

import re

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


def _saved_model(folder):
    import train_ranker

    config = train_ranker.load_config(predict.Path(train_ranker.__file__).parents[1] / "configs" / "tiny.json")
    train_ranker.save_model(train_ranker.MLPScorer(3, config.hidden, config.dropout), config, folder)
    return folder


def _break_config(folder, text):
    (folder / "config.json").write_text(text)


def _break_model(folder, value):
    if isinstance(value, str):
        (folder / "model.pt").write_text(value)
    else:
        predict.torch.save(value(predict.torch.load(folder / "model.pt", weights_only=True)), folder / "model.pt")


@pytest.mark.parametrize("breaking, message", [
    (lambda f: _break_config(f, '{"hidden": [7, 5]}'), r"model\.pt does not match .*config\.json: (Missing key|size mismatch)"),
    (lambda f: _break_model(f, lambda state: predict.torch.zeros(3)), r"model\.pt: expected a model's state .* got a Tensor"),
    (lambda f: _break_model(f, lambda state: {k: v for k, v in state.items() if k != "mean"}),
     r"model\.pt: expected a model's state .* got no 1-D 'mean' tensor"),
    (lambda f: _break_model(f, "not a model\n"), r"model\.pt: not a model saved by --save-model \("),
    (lambda f: _break_config(f, "[1, 2]"), r"config\.json: expected a JSON object of config keys, got a list"),
    (lambda f: _break_config(f, "{oops"), r"config\.json: not the JSON that --save-model writes"),
    (lambda f: _break_config(f, '{"hidden": "x"}'), r"config\.json: config key 'hidden' must be a list"),
])
def test_a_broken_model_folder_exits_2_with_one_line_naming_the_file(tmp_path, capsys, breaking, message):
    folder = _saved_model(tmp_path / "m")
    (tmp_path / "test.txt").write_text("1 qid:1 1:0.5\n0 qid:1 2:0.1\n")
    assert predict.main([str(folder), str(tmp_path / "test.txt"), "--out", str(tmp_path / "ok")])  # it works
    breaking(folder)
    with pytest.raises(SystemExit) as exit_:
        predict.main([str(folder), str(tmp_path / "test.txt"), "--out", str(tmp_path / "s")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert re.search(message, last) and ": error: " in last and "Traceback" not in err, err
