"""The statistics' one boundary: non-finite values, empty input, p-values outside [0, 1], size limits."""

import math

import numpy as np
import pytest
import torch

from torch_ndcg.stats import (
    bonferroni,
    bootstrap_interval,
    cohens_dz,
    holm,
    paired_t_test,
    randomisation_test,
    wilcoxon_test,
)
from torch_ndcg.stats.significance import WILCOXON_EXACT_LIMIT

PAIRED = {
    "paired_t_test": paired_t_test,
    "wilcoxon_test": wilcoxon_test,
    "wilcoxon_test exact": lambda a, b: wilcoxon_test(a, b, method="exact"),
    "randomisation_test": randomisation_test,
    "randomisation_test monte-carlo": lambda a, b: randomisation_test(a, b, method="monte-carlo", permutations=99),
    "cohens_dz": cohens_dz,
}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("which", ["a", "b"])
@pytest.mark.parametrize("test", list(PAIRED))
def test_paired_tests_refuse_non_finite_values_naming_the_argument(test, which, bad):
    # What a metric with empty="skip", reduction="none" gives for a query without relevant items.
    a = torch.tensor([0.9, 0.8, 0.7, 0.95, 0.85, 0.75], dtype=torch.float64)
    b = a - 0.3
    (a if which == "a" else b)[2] = bad
    with pytest.raises(ValueError, match=rf"^{which} holds 1 NaN or infinite value\(s\), the first at index \(2,\)"):
        PAIRED[test](a, b)


def test_bootstrap_interval_refuses_non_finite_values():
    with pytest.raises(ValueError, match=r"^values holds 1 NaN or infinite"):
        bootstrap_interval(torch.tensor([0.1, math.nan, 0.3]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bootstrap_interval_of_no_rows_is_empty_as_the_tests_are(dtype):
    values = torch.zeros(0, 5, dtype=dtype)
    interval = bootstrap_interval(values, resamples=10)
    assert interval.mean.shape == interval.low.shape == interval.high.shape == (0,)
    assert paired_t_test(values, values).pvalue.shape == (0,)


@pytest.mark.parametrize("correction", [holm, bonferroni])
@pytest.mark.parametrize("bad", [-0.01, 1.5, math.inf, -math.inf])
def test_corrections_refuse_pvalues_outside_the_unit_interval(correction, bad):
    with pytest.raises(ValueError, match=r"^pvalues must lie in \[0, 1\]"):
        correction(torch.tensor([0.01, bad, 0.2]))


@pytest.mark.parametrize("correction", [holm, bonferroni])
def test_corrections_keep_nan_as_a_missing_test_and_never_go_below_the_raw_p(correction):
    p = torch.tensor([[0.01, math.nan, 0.2, 0.0, 1.0]], dtype=torch.float64)
    adjusted = correction(p)
    assert torch.isnan(adjusted[0, 1])
    kept = ~torch.isnan(p)
    assert bool((adjusted[kept] >= p[kept]).all()) and bool((adjusted[kept] <= 1).all())


def test_corrections_refuse_a_scalar_and_a_non_tensor():
    with pytest.raises(ValueError, match="pvalues must be a tensor"):
        holm(torch.tensor(0.5))
    with pytest.raises(TypeError, match="pvalues must be a tensor"):
        bonferroni([0.1, 0.2])


def test_wilcoxon_exact_refuses_more_differences_than_its_limit_naming_method():
    n = WILCOXON_EXACT_LIMIT + 1
    a = torch.arange(1.0, n + 1, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"^method='exact' takes at most .*use method='approx' or method='auto'"):
        wilcoxon_test(a, a - 0.5 * torch.rand(n, dtype=torch.float64) - 0.01, method="exact")


def test_wilcoxon_auto_is_exact_for_small_untied_rows_and_approx_otherwise():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    small = rng.normal(size=(2, 20))  # no ties, no zeros: exact
    large = rng.normal(size=(2, 80))  # more than 50: approx
    tied = np.round(rng.normal(size=(2, 20)), 0)  # ties: approx
    for a, b in (small, large, tied):
        if np.count_nonzero(a - b) < len(a):
            b = b + 0.25  # no zero differences (rounded values stay tied)
        ours = float(wilcoxon_test(torch.tensor(a), torch.tensor(b), method="auto").pvalue)
        exact = len(a) <= 50 and len(np.unique(np.abs(a - b))) == len(a)
        expected = scipy_stats.wilcoxon(a, b, method="exact" if exact else "approx").pvalue
        assert ours == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("test", list(PAIRED))
def test_paired_tests_of_no_rows_give_empty_results_without_a_warning(test, recwarn):
    empty = torch.zeros(0, 5, dtype=torch.float64)
    result = PAIRED[test](empty, empty)
    values = result if isinstance(result, torch.Tensor) else result.pvalue
    assert values.shape == (0,)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
