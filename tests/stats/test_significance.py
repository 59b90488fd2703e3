"""The tests of torch_ndcg.stats against scipy.stats and a brute-force randomisation reference."""

import contextlib
import itertools
import warnings

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

scipy_stats = pytest.importorskip("scipy.stats")


def _cases(seed: int = 0, count: int = 60):
    """Per-query values of two systems: graded (many ties and zero differences) and continuous."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(3, 60))
        if trial % 3 == 0:
            a = rng.random(n)
            b = a + rng.normal(0, 0.2, n) * (rng.random(n) < 0.7)  # zero differences
        else:
            a, b = rng.integers(0, 5, n) / 4, rng.integers(0, 5, n) / 4  # ties everywhere
        if np.count_nonzero(a - b) == 0:
            continue
        yield a, b


def test_t_test_matches_scipy_ttest_rel():
    cases = list(_cases(count=30))
    for a, b in cases:
        expected = scipy_stats.ttest_rel(a, b)
        result = paired_t_test(torch.tensor(a), torch.tensor(b))
        assert abs(float(result.statistic) - expected.statistic) <= 1e-10
        assert abs(float(result.pvalue) - expected.pvalue) <= 1e-10
        assert abs(float(cohens_dz(torch.tensor(a), torch.tensor(b))) - expected.statistic / len(a) ** 0.5) <= 1e-10


def test_t_test_vectorised_over_leading_axes():
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 4, 25)), rng.random((3, 4, 25))
    result = paired_t_test(torch.tensor(a), torch.tensor(b))
    expected = scipy_stats.ttest_rel(a, b, axis=-1)
    assert result.pvalue.shape == (3, 4)
    np.testing.assert_allclose(result.pvalue.numpy(), expected.pvalue, rtol=0, atol=1e-10)


def test_t_test_equal_differences_as_scipy():
    a = torch.tensor([0.5, 0.6, 0.7])
    shifted = paired_t_test(a + 0.25, a)
    assert float(shifted.pvalue) == 0.0 and float(shifted.statistic) == float("inf")
    same = paired_t_test(a, a)
    assert torch.isnan(same.statistic) and torch.isnan(same.pvalue)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("method, correction", [("exact", False), ("approx", False), ("approx", True)])
def test_wilcoxon_matches_scipy(zero_method, method, correction):
    scipy_method = "exact" if method == "exact" else "asymptotic"
    for a, b in _cases(seed=2, count=30):
        with _quiet():
            expected = scipy_stats.wilcoxon(a, b, zero_method=zero_method, method=scipy_method, correction=correction)
        result = wilcoxon_test(torch.tensor(a), torch.tensor(b), zero_method=zero_method, method=method,
                               correction=correction)
        assert abs(float(result.statistic) - expected.statistic) <= 1e-10
        assert abs(float(result.pvalue) - expected.pvalue) <= 1e-10


@contextlib.contextmanager
def _quiet():
    """scipy warns that the exact distribution ignores ties and zeros; the comparison knows."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_wilcoxon_vectorised_rows_with_different_zero_counts():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (6, 30)) / 3
    b = rng.integers(0, 4, (6, 30)) / 3
    result = wilcoxon_test(torch.tensor(a), torch.tensor(b), method="exact")
    for row in range(6):
        with _quiet():
            expected = scipy_stats.wilcoxon(a[row], b[row], method="exact")
        assert abs(float(result.pvalue[row]) - expected.pvalue) <= 1e-10


def test_wilcoxon_all_zero_differences_is_nan():
    a = torch.tensor([0.1, 0.2, 0.3])
    assert torch.isnan(wilcoxon_test(a, a).pvalue)


def _brute_force(d: np.ndarray) -> float:
    """p of the sign-flip test by listing every sign vector, in exact rational sums (d on a 1/64 grid)."""
    units = np.rint(d * 64).astype(np.int64)
    observed = abs(int(units.sum()))
    extreme = sum(abs(int((units * np.array(signs)).sum())) >= observed
                  for signs in itertools.product((1, -1), repeat=len(units)))
    return extreme / 2 ** len(units)


@pytest.mark.parametrize("n", [2, 5, 9, 12])
def test_exact_randomisation_equals_brute_force(n):
    rng = np.random.default_rng(n)
    for _ in range(4):
        a, b = rng.integers(0, 65, n) / 64, rng.integers(0, 65, n) / 64
        b[: n // 3] = a[: n // 3]  # zero differences
        result = randomisation_test(torch.tensor(a), torch.tensor(b), method="exact")
        assert abs(float(result.pvalue) - _brute_force(a - b)) <= 1e-12


@pytest.mark.slow
def test_exact_randomisation_equals_brute_force_at_16():
    rng = np.random.default_rng(16)
    a, b = rng.integers(0, 65, 16) / 64, rng.integers(0, 65, 16) / 64
    result = randomisation_test(torch.tensor(a), torch.tensor(b), method="exact")
    assert abs(float(result.pvalue) - _brute_force(a - b)) <= 1e-12


def test_monte_carlo_randomisation_within_three_standard_errors_of_exact():
    rng = np.random.default_rng(7)
    a = torch.tensor(rng.integers(0, 65, (8, 14)) / 64)
    b = torch.tensor(rng.integers(0, 65, (8, 14)) / 64) - 0.05
    exact = randomisation_test(a, b, method="exact").pvalue
    draws = 20_000
    sampled = randomisation_test(a, b, method="monte-carlo", permutations=draws,
                                 generator=torch.Generator().manual_seed(0)).pvalue
    error = torch.sqrt(exact * (1 - exact) / draws) + 1 / draws
    assert bool(((sampled - exact).abs() <= 3 * error).all())


def test_randomisation_is_seeded_and_auto_is_exact_when_cheaper():
    rng = np.random.default_rng(8)
    a, b = torch.tensor(rng.random(40)), torch.tensor(rng.random(40))
    first = randomisation_test(a, b, permutations=500, generator=torch.Generator().manual_seed(3))
    again = randomisation_test(a, b, permutations=500, generator=torch.Generator().manual_seed(3))
    assert float(first.pvalue) == float(again.pvalue)
    small_a, small_b = a[:8], b[:8]
    auto = randomisation_test(small_a, small_b, permutations=256)
    assert float(auto.pvalue) == float(randomisation_test(small_a, small_b, method="exact").pvalue)


def test_exact_randomisation_refuses_many_queries():
    with pytest.raises(ValueError, match="2\\^n"):
        randomisation_test(torch.zeros(40), torch.ones(40), method="exact")


def test_bootstrap_interval_agrees_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(9)
    values = rng.beta(2, 5, 50)
    ours = bootstrap_interval(torch.tensor(values), resamples=9999, generator=torch.Generator().manual_seed(0))
    theirs = scipy_stats.bootstrap((values,), np.mean, method="percentile", n_resamples=9999,
                                   random_state=np.random.default_rng(0)).confidence_interval
    # Both end points are quantiles of 9,999 bootstrap means; their Monte-Carlo error is a
    # small fraction of the bootstrap standard error.
    spread = values.std(ddof=1) / len(values) ** 0.5
    assert abs(float(ours.low) - theirs.low) <= 0.1 * spread
    assert abs(float(ours.high) - theirs.high) <= 0.1 * spread
    assert abs(float(ours.mean) - values.mean()) <= 1e-12


def test_bootstrap_is_vectorised_and_seeded():
    values = torch.rand(3, 2, 30, dtype=torch.float64)
    one = bootstrap_interval(values, resamples=200, generator=torch.Generator().manual_seed(1))
    two = bootstrap_interval(values, resamples=200, generator=torch.Generator().manual_seed(1))
    assert one.low.shape == (3, 2) and torch.equal(one.low, two.low)
    assert bool((one.low <= one.mean).all() and (one.mean <= one.high).all())


def test_corrections_against_a_direct_computation():
    rng = np.random.default_rng(10)
    p = rng.random((5, 12)) ** 3
    p[0, 3] = np.nan
    ours_holm = holm(torch.tensor(p)).numpy()
    ours_bonferroni = bonferroni(torch.tensor(p)).numpy()
    for row in range(5):
        valid = ~np.isnan(p[row])
        family = p[row][valid]
        m = family.size
        order = np.argsort(family)
        expected = np.empty(m)
        running = 0.0
        for step, index in enumerate(order):
            running = max(running, min(1.0, (m - step) * family[index]))
            expected[index] = running
        np.testing.assert_allclose(ours_holm[row][valid], expected, atol=1e-15)
        np.testing.assert_allclose(ours_bonferroni[row][valid], np.minimum(1, m * family), atol=1e-15)
        assert np.isnan(ours_holm[row][~valid]).all()


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="same queries"):
        paired_t_test(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError, match="zero_method"):
        wilcoxon_test(torch.zeros(3), torch.ones(3), zero_method="drop")
    with pytest.raises(TypeError, match="a must be a tensor"):
        paired_t_test([1.0, 2.0], torch.zeros(2))
    with pytest.raises(ValueError, match="permutations"):
        randomisation_test(torch.zeros(3), torch.ones(3), permutations=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_interval(torch.zeros(3), confidence=95)


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
def test_tests_run_under_torch_compile(dynamic):
    a, b = torch.rand(3, 20, dtype=torch.float64), torch.rand(3, 20, dtype=torch.float64)
    for test in (paired_t_test, wilcoxon_test, cohens_dz):
        compiled = torch.compile(test, dynamic=dynamic)
        torch.testing.assert_close(compiled(a, b), test(a, b))
