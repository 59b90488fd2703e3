"""Hypothesis strategies for what a hostile user passes: odd shapes, dtypes, special values, bad options."""

from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

NUMERIC_DTYPES = [torch.bool, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
SPECIAL_VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 1e30, -1e30, 1e-45, math.nan, math.inf, -math.inf, 300.0]
ORDINARY_VALUES = [0.0, 1.0, 2.0, 3.0, 0.25, 0.75, 4.0]

CUTOFFS = st.sampled_from([None, 1, 2, 3, 10, (1, 3), (2, None), 0, -1, True, "3", (), [2, None], 2.5, 10**9])
GAINS = st.sampled_from(["linear", "exp2", "cubic", None, lambda labels: labels * 2.0])
DISCOUNTS = st.sampled_from(["log2", "ln", 3, lambda ranks: 1.0 / ranks])
TIES = st.sampled_from(["average", "first", "worst", "best", "random", 1])
EMPTIES = st.sampled_from(["zero", "one", "skip", "error", "nan", None])
REDUCTIONS = st.sampled_from(["mean", "sum", "none", "avg", None])
THRESHOLDS = st.sampled_from([None, None, 1, 0.5, 2.0, 0, -1.0, math.nan, math.inf, True, "1"])
AP_NORMALISERS = st.sampled_from(["min_r_k", "r", "found", "R", None])
ADAPTIVE_K = st.sampled_from([False, True, "yes", 1])
SHORT_LISTS = st.sampled_from(["whole", "zero", "whole", "none"])
ALLOW_UNRETRIEVED = st.sampled_from([False, False, True, True, "yes"])


@st.composite
def weights(draw, shape: tuple[int, ...]) -> object:
    """Per-item or per-query weights for ``shape``: none, ordinary, or hostile (negative, NaN,
    infinite, bool, the wrong shape, not a tensor)."""
    kind = draw(st.sampled_from(["none", "none", "good", "good", "hostile", "wrong shape", "bool", "list"]))
    if kind == "none":
        return None
    if kind == "wrong shape":
        return torch.ones(*shape, 2)
    if kind == "list":
        return [1.0] * math.prod(shape)
    pool = [0.0, 0.5, 1.0, 2.0] + ([-1.0, math.nan, math.inf] if kind == "hostile" else [])
    count = math.prod(shape)
    tensor = torch.tensor(draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count)), dtype=torch.float64)
    tensor = tensor.reshape(shape)
    return tensor > 0 if kind == "bool" else tensor.to(draw(st.sampled_from([torch.float32, torch.float64])))


@st.composite
def values(draw, shape: tuple[int, ...], *, hostile: bool, low: float = 0.0) -> torch.Tensor:
    """A tensor of ``shape`` in a drawn dtype: ordinary numbers, or (``hostile``) special values too."""
    dtype = draw(st.sampled_from(NUMERIC_DTYPES if hostile else [torch.float32, torch.float64, torch.int64]))
    pool = SPECIAL_VALUES + ORDINARY_VALUES if hostile else [v for v in ORDINARY_VALUES if v >= low]
    count = math.prod(shape)
    numbers = draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count))
    tensor = torch.tensor(numbers, dtype=torch.float64).reshape(shape)
    if dtype == torch.bool:
        return tensor != 0
    if not dtype.is_floating_point:
        tensor = torch.nan_to_num(tensor, nan=0.0, posinf=100.0, neginf=-100.0).clamp(-100, 100).round()
    return tensor.to(dtype)


@st.composite
def list_shapes(draw) -> tuple[int, ...]:
    """``[..., N]`` shapes, mostly ordinary; sometimes no list, no queries or several batch axes."""
    kind = draw(st.sampled_from(["rows", "rows", "rows", "one list", "scalar", "empty list", "no queries", "3-d"]))
    n = draw(st.integers(1, 6))
    return {
        "rows": (draw(st.integers(1, 4)), n),
        "one list": (n,),
        "scalar": (),
        "empty list": (2, 0),
        "no queries": (0, n),
        "3-d": (2, draw(st.integers(1, 2)), n),
    }[kind]


@st.composite
def masks(draw, shape: tuple[int, ...]) -> object:
    kind = draw(st.sampled_from(["none", "none", "bool", "bool", "all false", "float", "wrong shape"]))
    if kind == "none":
        return None
    if kind == "wrong shape":
        return torch.ones(*shape, 1, dtype=torch.bool)
    if kind == "all false":
        return torch.zeros(shape, dtype=torch.bool)
    count = math.prod(shape)
    bits = torch.tensor(draw(st.lists(st.booleans(), min_size=count, max_size=count)), dtype=torch.bool).reshape(shape)
    return bits.float() if kind == "float" else bits
