"""p-values keep their relative precision down to the smallest tail a float64 holds."""

import numpy as np
import pytest
import torch

from torch_ndcg.stats import paired_t_test, wilcoxon_test
from torch_ndcg.stats.distributions import normal_two_sided, student_t_two_sided

scipy_stats = pytest.importorskip("scipy.stats")


def test_normal_tail_keeps_relative_precision_beyond_z_8():
    z = np.linspace(0.0, 37.5, 400)  # 2·Φ(−37.5) ≈ 5e-308, the smallest normal float64 near
    ours = normal_two_sided(torch.tensor(z)).numpy()
    expected = 2 * scipy_stats.norm.sf(z)
    assert np.all(expected > 1e-308)
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=0)


def test_wilcoxon_approx_gives_the_tiny_p_of_a_large_shift():
    a = torch.arange(1.0, 301.0, dtype=torch.float64)
    b = a - torch.linspace(0.1, 1.0, 300, dtype=torch.float64)
    expected = scipy_stats.wilcoxon(a.numpy(), b.numpy(), method="approx").pvalue
    assert 0 < expected < 1e-50
    assert float(wilcoxon_test(a, b).pvalue) == pytest.approx(expected, rel=1e-6, abs=0)


@pytest.mark.parametrize("df", [1e5, 1e6, 1e7, 1e8, 5e8, 1e9, 1e10, 1e12, 1e15])
def test_t_tail_keeps_relative_precision_at_large_df(df):
    t = np.concatenate([[1e-3, 0.1, 1.0, 3.0, 10.0, 20.0], np.linspace(0.0, 37.5, 120)])
    ours = student_t_two_sided(torch.tensor(t), torch.full((t.size,), df, dtype=torch.float64)).numpy()
    expected = 2 * scipy_stats.t.sf(t, df)
    held = expected > 1e-300
    np.testing.assert_allclose(ours[held], expected[held], rtol=1e-6, atol=0)


@pytest.mark.parametrize("df", [1, 3, 30, 1000])
def test_t_tail_keeps_relative_precision_for_tiny_p(df):
    t = np.geomspace(1.0, 1e6, 60)
    ours = student_t_two_sided(torch.tensor(t), torch.full((t.size,), float(df), dtype=torch.float64)).numpy()
    expected = 2 * scipy_stats.t.sf(t, df)
    held = expected > 1e-300
    np.testing.assert_allclose(ours[held], expected[held], rtol=1e-6, atol=0)


def test_paired_t_test_on_many_queries_matches_scipy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=200_001)
    b = a - 0.01 - rng.normal(scale=0.1, size=a.size)
    expected = scipy_stats.ttest_rel(a, b)
    result = paired_t_test(torch.tensor(a), torch.tensor(b))
    assert float(result.pvalue) == pytest.approx(expected.pvalue, rel=1e-6, abs=0)
    assert float(result.pvalue) < 1e-100
