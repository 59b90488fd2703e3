"""Config files and overrides: every shipped config is valid, and mistakes are named."""

import dataclasses
import json
from pathlib import Path

import pytest
from ranker_config import LOSSES, Config, load_config, make_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.name)
def test_shipped_configs_are_valid(path):
    config = load_config(path)
    assert config.name == path.stem


def test_expected_configs_ship():
    assert {"default", "letor", "compare", "tiny"} <= {p.stem for p in CONFIGS.glob("*.json")}


def test_overrides_are_json_or_bare_strings():
    config = load_config(None, ["lr=0.01", "hidden=[8, 4]", "loss=listnet", "loss_k=null", "epochs=3", "plot=false"])
    assert (config.lr, config.hidden, config.loss, config.loss_k, config.epochs, config.plot) == (
        0.01, [8, 4], "listnet", None, 3, False)
    assert load_config(None, ["data=path/to/Fold1"]).data == "path/to/Fold1"
    assert isinstance(load_config(None, ["lr=1"]).lr, float)  # an int is a valid float


@pytest.mark.parametrize(
    "values, error, message",
    [
        ({"hiden": [8]}, ValueError, "unknown config key 'hiden'; did you mean 'hidden'"),
        ({"learning_rate": 0.1}, ValueError, "unknown config key 'learning_rate'; known keys: name, seed"),
        ({"epochs": "10"}, TypeError, "'epochs' must be int, got str"),
        ({"epochs": 2.5}, TypeError, "'epochs' must be int, got float"),
        ({"plot": 1}, TypeError, "'plot' must be bool"),
        ({"lr": True}, TypeError, "'lr' must be float, got bool"),
        ({"hidden": 64}, TypeError, "'hidden' must be a list"),
        ({"hidden": [64, "x"]}, TypeError, "'hidden' must be int"),
        ({"loss": "hinge"}, ValueError, "'loss' must be one of"),
        ({"losses": ["listnet", "hinge"]}, ValueError, "'losses' must be a non-empty list"),
        ({"lr": 0}, ValueError, "'lr' must be > 0"),
        ({"dropout": 1.0}, ValueError, "'dropout' must be in"),
        ({"monitor_k": 20}, ValueError, "'monitor_k' must be one of eval_k"),
        ({"synthetic_list_length": [10, 5]}, ValueError, "'synthetic_list_length'"),
        ({"max_items": 0}, ValueError, "'max_items' must be null or ≥ 1"),
        ({"synthetic_length_median": 60}, ValueError, "'synthetic_length_median' must be null or within"),
    ],
)
def test_bad_values_name_the_key(values, error, message):
    with pytest.raises(error, match=message.replace("[", r"\[")):
        make_config(values)


def test_bad_files_and_bad_set(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{'lr': 1}")
    with pytest.raises(ValueError, match="broken.json is not valid JSON"):
        load_config(broken)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([1, 2]))
    with pytest.raises(ValueError, match="must hold a JSON object"):
        load_config(listed)
    with pytest.raises(ValueError, match="--set expects key=value"):
        load_config(None, ["epochs"])


def test_defaults_cover_every_loss():
    assert Config().losses == list(LOSSES) and Config().loss in LOSSES


def test_errors_say_where_the_value_came_from(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"epochs": 0, "lr": 0.01}))
    with pytest.raises(ValueError, match=r"mine.json: config key 'epochs' must be ≥ 1"):
        load_config(path)
    with pytest.raises(ValueError, match=r"^--set epochs: config key 'epochs' must be ≥ 1"):
        load_config(path, ["epochs=-1"])
    with pytest.raises(TypeError, match=r"^--set lr: config key 'lr' must be float, got str"):
        load_config(path, ["lr=fast"])
    with pytest.raises(ValueError, match=r"^--set gain: config key 'gain' must be one of \('linear', 'exp2'\)"):
        load_config(path, ["gain=exp"])


def test_monitor_k_follows_eval_k_unless_set():
    assert load_config(None, ["eval_k=[1,3]"]).monitor_k == 3
    assert load_config(CONFIGS / "letor.json", ["eval_k=[1,3]"]).monitor_k == 3
    assert load_config(None, ["eval_k=[1,3,20]", "monitor_k=3"]).monitor_k == 3
    with pytest.raises(ValueError, match=r"--set monitor_k: config key 'monitor_k' must be one of eval_k=\[1, 3\]"):
        load_config(None, ["eval_k=[1,3]", "monitor_k=10"])


@pytest.mark.parametrize("text", ["Infinity", "-Infinity", "NaN"])
def test_non_finite_numbers_are_refused(text):
    for key in ("lr", "weight_decay", "synthetic_noise", "vali_fraction"):
        with pytest.raises(ValueError, match=f"'{key}' must be a finite number"):
            load_config(None, [f"{key}={text}"])


def test_letor_config_uses_exp2_gain_and_skips_empty_queries():
    config = load_config(CONFIGS / "letor.json")
    assert (config.gain, config.empty, config.monitor_k, config.threads) == ("exp2", "skip", 10, 1)


def test_mslr_like_config_is_the_letor_model_on_mslr_like_synthetic_lists():
    # The epoch-time comparison of the README runs this config: it must train exactly the model
    # and batches of the LETOR config, only on generated data with MSLR-like list lengths.
    letor, mslr_like = load_config(CONFIGS / "letor.json"), load_config(CONFIGS / "mslr_like.json")
    differ = {f.name for f in dataclasses.fields(letor) if getattr(letor, f.name) != getattr(mslr_like, f.name)}
    assert differ == {"name", "data", "synthetic_queries", "synthetic_features", "synthetic_list_length",
                      "synthetic_length_median"}
    assert (mslr_like.synthetic_features, mslr_like.synthetic_list_length, mslr_like.synthetic_length_median) == (
        136, [2, 240], 30)
