"""The configuration of ``train_ranker.py``: a JSON file of known keys, checked, overridable.

Every key, its type and default is a field of :class:`Config`. A config file sets some of
them; ``--set key=value`` on the command line overrides any (the value is read as JSON, so
``--set lr=0.01``, ``--set hidden=[128,64]``, ``--set loss=listnet`` all work). An unknown
key or a value of the wrong type is an error naming the key and where it came from (the
config file or ``--set``).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

LOSSES = ("neural_ndcg", "approx_ndcg", "lambda_loss", "listnet", "listmle", "ranknet", "pointwise")
GAINS = ("linear", "exp2")
# How a query with no relevant item counts in every NDCG (metrics and NDCG losses) and its wording.
EMPTY_RULES = {"skip": "skipped", "zero": "counted as 0", "one": "counted as 1"}


@dataclasses.dataclass
class Config:
    name: str = "default"  # with the data and the loss, names the plot: <output_dir>/<name>-<data>-<loss>.png
    seed: int = 0  # data, initialisation, shuffling and the validation split carved from train
    # "synthetic", or a folder holding train/vali/test files: train.txt, vali.txt, test.txt (or
    # .txt.gz), or LightGBM / XGBoost's <name>.train, <name>.test with .query / .group size files.
    data: str = "synthetic"
    # Without a validation file, this share of the training queries (drawn with `seed`) validates.
    vali_fraction: float = 0.2
    synthetic_queries: list[int] = dataclasses.field(default_factory=lambda: [600, 200, 200])
    synthetic_features: int = 32
    synthetic_list_length: list[int] = dataclasses.field(default_factory=lambda: [10, 50])
    # None: lengths uniform in synthetic_list_length; an int: log-normal around this median,
    # clipped to synthetic_list_length (MSLR-like: configs/mslr_like.json)
    synthetic_length_median: int | None = None
    synthetic_noise: float = 0.5
    standardize: bool = True  # per-feature standardisation fitted on the training split
    # The NDCG convention of the metrics *and* the NDCG losses: gain of a label (linear: rel,
    # exp2: 2**rel - 1) and how a query with nothing relevant counts (see EMPTY_RULES).
    gain: str = "linear"
    empty: str = "skip"
    loss: str = "neural_ndcg"  # one of LOSSES
    compare: bool = False  # train every loss in `losses` on the same data and seed
    losses: list[str] = dataclasses.field(default_factory=lambda: list(LOSSES))
    loss_k: int | None = None  # cutoff of the NDCG losses; None: the whole list
    temperature: float = 1.0  # smoothness of the NDCG losses
    sinkhorn_iters: int = 50  # NeuralNDCG's Sinkhorn iterations; fewer is faster and less exact
    hidden: list[int] = dataclasses.field(default_factory=lambda: [64, 64])
    dropout: float = 0.0
    lr: float = 0.003
    weight_decay: float = 0.0
    batch_size: int = 32
    max_items: int | None = None  # training lists longer than this are subsampled
    epochs: int = 20
    patience: int = 4  # stop after this many epochs without a better validation NDCG@monitor_k
    eval_k: list[int] = dataclasses.field(default_factory=lambda: [1, 5, 10])
    monitor_k: int | None = None  # one of eval_k; None: the largest
    output_dir: str = "runs"
    plot: bool = True
    progress: bool = True  # a progress bar when the output is a terminal
    # torch CPU threads; None: torch's default (one per core). A second thread gains nothing on
    # these small [B, N, N] tensors and costs several times the wall time when the cores are busy
    # (examples/README.md, "Threads"), so one thread is the default.
    threads: int | None = 1


def load_config(path: str | Path | None, overrides: list[str] = ()) -> Config:
    """Read ``path`` (or the defaults when ``None``), apply ``key=value`` overrides, validate.

    Errors name where the bad value came from: the file, or ``--set``.
    """
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    if path is not None:
        try:
            values = json.loads(Path(path).read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from None
        except RecursionError:
            raise ValueError(f"{path} is nested too deeply to be a config (it holds flat keys)") from None
        if not isinstance(values, dict):
            raise ValueError(f"{path} must hold a JSON object of config keys")
        origins = dict.fromkeys(values, str(path))
    for item in overrides:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set expects key=value, got {item!r}")
        try:
            values[key] = json.loads(text)
        except json.JSONDecodeError:
            values[key] = text  # a bare word such as loss=listnet is a string
        except RecursionError:
            raise ValueError(f"--set {key}=...: the value is nested too deeply") from None
        origins[key] = f"--set {key}"
    return make_config(values, origins)


def make_config(values: dict[str, Any], origins: dict[str, str] | None = None) -> Config:
    """Build a :class:`Config` from a dict, refusing unknown keys, wrong types and bad values.

    ``origins`` maps a key to where it was set (a file name, ``--set key``) for the messages.
    """
    origins = origins or {}
    hints = get_type_hints(Config)
    for key, value in values.items():
        where = f"{origins.get(key, 'config')}: "
        if key not in hints:
            close = difflib.get_close_matches(key, hints, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(hints)}"
            raise ValueError(f"{where}unknown config key {key!r}{hint}")
        try:
            values[key] = _typed(key, value, hints[key])
        except (TypeError, ValueError) as error:
            raise type(error)(f"{where}{error}") from None
    config = Config(**values)
    if config.monitor_k is None and config.eval_k:
        config.monitor_k = max(config.eval_k)
    _check_values(config, origins)
    return config


def _typed(key: str, value: Any, hint: Any) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _typed(key, value, inner)
    if origin is list:
        if not isinstance(value, list):
            raise TypeError(f"config key {key!r} must be a list, got {value!r}")
        return [_typed(key, v, args[0]) for v in value]
    # bool is an int in Python but never a valid number here, and an int is a valid float.
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not hint:
        raise TypeError(f"config key {key!r} must be {hint.__name__}, got {type(value).__name__} {value!r}")
    if hint is float and not math.isfinite(value):  # JSON readers accept Infinity and NaN
        raise ValueError(f"config key {key!r} must be a finite number, got {value!r}")
    return value


def _check_values(c: Config, origins: dict[str, str]) -> None:
    def need(ok: bool, key: str, what: str) -> None:
        if not ok:
            where = f"{origins[key]}: " if key in origins else ""
            raise ValueError(f"{where}config key {key!r} must be {what}, got {getattr(c, key)!r}")

    need(c.loss in LOSSES, "loss", f"one of {LOSSES}")
    need(len(c.losses) > 0 and set(c.losses) <= set(LOSSES), "losses", f"a non-empty list drawn from {LOSSES}")
    need(c.gain in GAINS, "gain", f"one of {GAINS}")
    need(c.empty in EMPTY_RULES, "empty", f"one of {tuple(EMPTY_RULES)}")
    need(0 < c.vali_fraction < 1, "vali_fraction", "in (0, 1)")
    need(len(c.synthetic_queries) == 3 and min(c.synthetic_queries) >= 1, "synthetic_queries", "[train, vali, test] counts ≥ 1")
    need(len(c.synthetic_list_length) == 2 and 1 <= c.synthetic_list_length[0] <= c.synthetic_list_length[1],
         "synthetic_list_length", "[min, max] with 1 ≤ min ≤ max")
    need(c.synthetic_length_median is None or c.synthetic_list_length[0] <= c.synthetic_length_median <= c.synthetic_list_length[1],
         "synthetic_length_median", f"null or within synthetic_list_length {c.synthetic_list_length}")
    for key in ("synthetic_features", "batch_size", "epochs", "patience", "sinkhorn_iters"):
        need(getattr(c, key) >= 1, key, "≥ 1")
    for key in ("lr", "temperature"):
        need(getattr(c, key) > 0, key, "> 0")
    for key in ("synthetic_noise", "weight_decay"):
        need(getattr(c, key) >= 0, key, "≥ 0")
    need(0 <= c.dropout < 1, "dropout", "in [0, 1)")
    need(all(h >= 1 for h in c.hidden), "hidden", "a list of layer widths ≥ 1")
    need(len(c.eval_k) > 0 and all(k >= 1 for k in c.eval_k), "eval_k", "a non-empty list of cutoffs ≥ 1")
    need(c.monitor_k in c.eval_k, "monitor_k",
         f"one of eval_k={c.eval_k} (or left out: the largest of eval_k)")
    for key in ("loss_k", "max_items", "threads"):
        need(getattr(c, key) is None or getattr(c, key) >= 1, key, "null or ≥ 1")
    blocked = next((p for p in (Path(c.output_dir), *Path(c.output_dir).parents) if p.exists() and not p.is_dir()), None)
    need(blocked is None, "output_dir", f"a folder (or a path to create), but {blocked} is a file")
