"""The statistics at their edges: any per-query values, finite or not, any leading shape (empty
too), any p-values. Each call either gives p-values in [0, 1] of the leading shape, or refuses
with a ValueError/TypeError naming the argument; a non-finite value is never read as evidence."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_ndcg.stats import (
    bonferroni,
    bootstrap_interval,
    cohens_dz,
    holm,
    paired_t_test,
    randomisation_test,
    wilcoxon_test,
)

FINITE = (0.0, 1.0, 0.5, 0.25, -0.5, 1e300, -1e300, 5e-324)
NON_FINITE = (math.nan, math.inf, -math.inf)
TESTS = {
    "t-test": paired_t_test,
    "wilcoxon": wilcoxon_test,
    "wilcoxon exact": lambda a, b: wilcoxon_test(a, b, method="exact"),
    "wilcoxon auto": lambda a, b: wilcoxon_test(a, b, method="auto"),
    "randomisation": lambda a, b: randomisation_test(a, b, permutations=64),
    "randomisation monte-carlo": lambda a, b: randomisation_test(
        a, b, method="monte-carlo", permutations=32, generator=torch.Generator().manual_seed(0)),
}


@st.composite
def paired_values(draw):
    rows = draw(st.sampled_from([0, 1, 3]))
    queries = draw(st.integers(2, 7))
    pool = FINITE + NON_FINITE if draw(st.booleans()) else FINITE
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    values = [torch.tensor(draw(st.lists(st.sampled_from(pool), min_size=rows * queries, max_size=rows * queries)),
                           dtype=torch.float64).reshape(rows, queries).to(dtype) for _ in range(2)]
    return values[0], values[1]


@settings(max_examples=120, deadline=None)
@given(pair=paired_values(), test=st.sampled_from(list(TESTS)))
def test_every_test_refuses_non_finite_values_or_gives_p_in_the_unit_interval(pair, test):
    a, b = pair
    bad = {name for name, value in (("a", a), ("b", b)) if not bool(torch.isfinite(value).all())}
    try:
        result = TESTS[test](a, b)
    except ValueError as error:
        assert bad, f"finite values refused: {error}"
        assert str(error).split(" ")[0] in bad and "NaN or infinite" in str(error)
        return
    assert not bad, f"{test} accepted non-finite values in {bad}"
    assert result.pvalue.shape == result.statistic.shape == a.shape[:-1]
    p = result.pvalue[~torch.isnan(result.pvalue)]
    assert bool(((p >= 0) & (p <= 1)).all())


@settings(max_examples=60, deadline=None)
@given(pair=paired_values())
def test_effect_size_and_interval_refuse_non_finite_values_and_keep_empty_rows_empty(pair):
    a, b = pair
    finite = bool(torch.isfinite(a).all()) and bool(torch.isfinite(b).all())
    try:
        effect = cohens_dz(a, b)
        interval = bootstrap_interval(a - b if finite else a if not bool(torch.isfinite(a).all()) else b,
                                      resamples=20, generator=torch.Generator().manual_seed(0))
    except ValueError as error:
        assert not finite and "NaN or infinite" in str(error)
        return
    assert finite
    assert effect.shape == interval.mean.shape == interval.low.shape == a.shape[:-1]
    assert bool((interval.low <= interval.high).all())


@settings(max_examples=120, deadline=None)
@given(
    p=st.lists(st.sampled_from([0.0, 1e-300, 0.01, 0.04, 0.5, 1.0, math.nan, -1e-9, 1.0000001, math.inf]),
               min_size=0, max_size=6),
    rows=st.sampled_from([0, 1, 2]),
)
def test_corrections_refuse_p_outside_the_unit_interval_else_stay_within_p_and_1(p, rows):
    table = torch.tensor([p] * rows, dtype=torch.float64).reshape(rows, len(p))
    outside = any(not math.isnan(v) and not 0 <= v <= 1 for v in p) and rows > 0
    for correction in (holm, bonferroni):
        try:
            adjusted = correction(table)
        except ValueError as error:
            assert outside and str(error).startswith("pvalues must lie in [0, 1]")
            continue
        assert not outside
        missing = torch.isnan(table)
        assert torch.equal(torch.isnan(adjusted), missing)
        kept = adjusted[~missing]
        assert bool((kept >= table[~missing]).all()) and bool((kept <= 1).all())
    if not outside:
        assert bool((holm(table).nan_to_num(0) <= bonferroni(table).nan_to_num(0)).all())
