"""Paired significance tests and effect size over per-query values, vectorised over leading axes.

Every function takes the per-query values of two systems, ``a`` and ``b`` (``[..., Q]``, the
same queries in the same order on the last axis; leading axes broadcast, e.g. measures × pairs
of systems) and tests, for every leading index at once, whether their mean difference
``d = a − b`` is zero. They compute in float64 and return float64 tensors of the leading shape.
All tests are two-sided. Every value must be finite: a NaN or infinity (such as a metric's
``empty="skip"`` query) is refused with a ``ValueError`` naming ``a`` or ``b`` and its index, as
no rule that drops it could keep the two systems paired without the caller saying so. Leading
axes may be empty (``[0, Q]``); the query axis needs at least 2 queries.

* :func:`paired_t_test` — Student's paired t-test (as ``scipy.stats.ttest_rel``).
* :func:`wilcoxon_test` — Wilcoxon's signed-rank test (as ``scipy.stats.wilcoxon``).
* :func:`randomisation_test` — Fisher's randomisation (sign-flip permutation) test, exact or
  Monte-Carlo.
* :func:`cohens_dz` — the paired effect size.
"""


from typing import NamedTuple

import torch
from torch import Tensor

from ..validation import check_flag, check_option
from .checks import check_count, check_generator, per_query_values
from .distributions import normal_two_sided, signed_rank_pmf, student_t_two_sided

__all__ = ["TestResult", "cohens_dz", "paired_t_test", "randomisation_test", "wilcoxon_test"]

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
WILCOXON_METHODS = ("approx", "exact", "auto")
#: The most non-zero differences ``wilcoxon_test(method="exact")`` takes. Its null distribution has
#: n(n+1)/2 + 1 values, built in n passes (about n³/6 additions, n²/2 numbers: 1.7e8 and 4 MB at
#: 1,000, growing as n³); and its smallest probability, 2⁻ⁿ, must stay a normal float64 (n < 1022).
#: Above it the normal approximation is accurate far beyond the precision a p-value needs.
WILCOXON_EXACT_LIMIT = 1000
#: ``method="auto"`` takes the exact distribution up to this many differences, without zeros or ties
#: (where it is exact), as ``scipy.stats.wilcoxon``'s ``"auto"`` does.
WILCOXON_AUTO_EXACT = 50
RANDOMISATION_METHODS = ("auto", "exact", "monte-carlo")
#: Above this many queries, enumerating every sign flip (2^n of them) is refused.
EXACT_LIMIT = 24


class TestResult(NamedTuple):
    """A test's statistic and two-sided p-value, each shaped as the inputs' leading axes."""

    statistic: Tensor
    pvalue: Tensor


def _differences(a: Tensor, b: Tensor) -> Tensor:
    a, b = per_query_values("a", a), per_query_values("b", b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a and b must hold the same queries on their last axis, got {a.shape[-1]} and {b.shape[-1]}")
    if a.shape[-1] < 2:
        raise ValueError(f"a paired test needs at least 2 queries, got {a.shape[-1]}")
    try:
        return a - b
    except RuntimeError as error:
        raise ValueError(f"a {tuple(a.shape)} and b {tuple(b.shape)} do not broadcast: {error}") from None


def _sample_sd(d: Tensor) -> Tensor:
    """The standard deviation over the last axis with n − 1 in the denominator, in two passes (as
    scipy); unlike ``Tensor.std`` it warns nothing for no rows (``[0, Q]``)."""
    centred = d - d.mean(-1, keepdim=True)
    return torch.sqrt((centred * centred).sum(-1) / (d.shape[-1] - 1))


def paired_t_test(a: Tensor, b: Tensor) -> TestResult:
    r"""Student's paired t-test of the mean of ``d = a − b`` (as ``scipy.stats.ttest_rel``).

    .. math:: t = \frac{\bar d}{s_d / \sqrt{n}},\qquad p = P(|T_{n-1}| \ge |t|)

    with :math:`s_d` the sample standard deviation (n − 1 in the denominator).

    Assumes the query differences are independent draws from a normal distribution (the test is
    robust to non-normality for tens of queries or more). Ties and zero differences need no
    special handling: a zero difference counts as an observation. When every difference is
    equal, :math:`s_d = 0`: the statistic is ±∞ with p = 0, or NaN with p = NaN when all are
    zero (scipy's values).

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import paired_t_test
        >>> a = torch.tensor([0.5, 0.6, 0.9, 0.4]); b = torch.tensor([0.4, 0.6, 0.7, 0.1])
        >>> result = paired_t_test(a, b)
        >>> round(float(result.statistic), 4), round(float(result.pvalue), 4)
        (2.3238, 0.1027)
    """
    d = _differences(a, b)
    n = d.shape[-1]
    mean = d.mean(-1)
    sd = _sample_sd(d)
    statistic = mean / (sd / n**0.5)
    return TestResult(statistic, student_t_two_sided(statistic, torch.full_like(statistic, n - 1)))


def cohens_dz(a: Tensor, b: Tensor) -> Tensor:
    r"""Cohen's :math:`d_z = \bar d / s_d`, the paired effect size of ``d = a − b``.

    :math:`s_d` has n − 1 in its denominator; ``d_z = t / √n`` for the t of :func:`paired_t_test`.
    ±∞ when every difference is equal and non-zero, NaN when all are zero.

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import cohens_dz
        >>> round(float(cohens_dz(torch.tensor([0.5, 0.6, 0.9, 0.4]), torch.tensor([0.4, 0.6, 0.7, 0.1]))), 4)
        1.1619
    """
    d = _differences(a, b)
    return d.mean(-1) / _sample_sd(d)


def _average_ranks(values: Tensor, keep: Tensor) -> tuple[Tensor, Tensor]:
    """Average (mid) ranks of ``values`` among the kept entries of each row, and Σ (t³ − t) over
    their tie groups. Entries not kept get rank 0 and form no group."""
    big = torch.finfo(values.dtype).max
    keyed = torch.where(keep, values, torch.full_like(values, big))
    ordered, order = torch.sort(keyed, dim=-1, stable=True)
    kept_sorted = torch.gather(keep, -1, order)
    n = values.shape[-1]
    position = torch.arange(1, n + 1, dtype=values.dtype, device=values.device).expand_as(ordered)
    new_group = torch.ones_like(kept_sorted)
    new_group[..., 1:] = (ordered[..., 1:] != ordered[..., :-1]) | (kept_sorted[..., 1:] != kept_sorted[..., :-1])
    group = torch.cumsum(new_group.long(), -1) - 1
    size = torch.zeros_like(ordered).scatter_add_(-1, group, torch.ones_like(ordered))
    first = torch.zeros_like(ordered).scatter_reduce_(-1, group, position, "amin", include_self=False)
    kept_group = torch.zeros_like(ordered).scatter_reduce_(-1, group, kept_sorted.to(values.dtype), "amax",
                                                           include_self=False)
    midrank = first + (size - 1) / 2
    ranks_sorted = torch.where(kept_sorted, torch.gather(midrank, -1, group), torch.zeros_like(ordered))
    ranks = torch.zeros_like(values).scatter_(-1, order, ranks_sorted)
    ties = ((size**3 - size) * kept_group).sum(-1)
    return ranks, ties


def wilcoxon_test(
    a: Tensor,
    b: Tensor,
    *,
    zero_method: str = "wilcox",
    method: str = "approx",
    correction: bool = False,
) -> TestResult:
    r"""Wilcoxon's signed-rank test of ``d = a − b`` (as ``scipy.stats.wilcoxon``, two-sided).

    The absolute differences are ranked (ties share their average rank); W⁺ and W⁻ sum the ranks
    of the positive and the negative differences. The statistic is min(W⁺, W⁻).

    Assumes the differences are independent and symmetric about their median under the null.

    Zero differences (``zero_method``, default ``"wilcox"``):

    * ``"wilcox"`` drops them; n counts the non-zero differences.
    * ``"pratt"`` ranks them with the others, then leaves their ranks out of W⁺ and W⁻; the
      normal approximation's mean and variance lose the zeros' terms (Pratt 1959).
    * ``"zsplit"`` ranks them with the others and adds half of their ranks to each of W⁺, W⁻.

    p-value (``method``, default ``"approx"``):

    * ``"approx"``: z = (W⁺ − n(n+1)/4) / σ with σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over the tie
      groups t of the ranked differences (the zeros' group excluded under ``"pratt"``);
      ``correction=True`` (default ``False``, scipy's default too) moves W⁺ half a unit towards
      the mean (continuity correction). p = P(|Z| ≥ |z|).
    * ``"exact"``: the distribution of W⁺ for n untied non-zero differences (2ⁿ equally likely
      signs), p = 2·min(P(W ≥ ⌊W⁺⌋), P(W ≤ ⌈W⁺⌉)) clipped to 1. With ties or zeros that
      distribution is not exact, as in scipy (which warns): prefer ``"approx"`` then.
      ``correction`` does not apply. At most :data:`WILCOXON_EXACT_LIMIT` (1,000) differences
      per row: the distribution costs about n³/6 additions and n²/2 numbers, and its
      probabilities 2⁻ⁿ leave float64's range above that; a larger row is a ``ValueError``.
    * ``"auto"``: per row, ``"exact"`` when it has at most 50 differences, none zero and none
      tied (where that distribution is exact), else ``"approx"`` (scipy's ``"auto"`` rule).

    A row with no difference left to rank (all zero under ``"wilcox"``) gets NaN.

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import wilcoxon_test
        >>> a = torch.tensor([0.5, 0.6, 0.9, 0.4, 0.8, 0.7]); b = torch.tensor([0.4, 0.6, 0.7, 0.1, 0.9, 0.2])
        >>> result = wilcoxon_test(a, b, method="exact")
        >>> float(result.statistic), round(float(result.pvalue), 4)
        (1.0, 0.125)
    """
    check_option("zero_method", zero_method, ZERO_METHODS)
    check_option("method", method, WILCOXON_METHODS)
    check_flag("correction", correction)
    d = _differences(a, b)
    zero = d == 0
    keep = ~zero if zero_method == "wilcox" else torch.ones_like(zero)
    ranks, ties = _average_ranks(d.abs(), keep)
    count = keep.sum(-1).to(torch.float64)
    w_plus = (ranks * (d > 0)).sum(-1)
    w_minus = (ranks * (d < 0)).sum(-1)
    zeros = zero.sum(-1).to(torch.float64)
    if zero_method == "zsplit":
        half = (ranks * zero).sum(-1) / 2
        w_plus, w_minus = w_plus + half, w_minus + half
    statistic = torch.minimum(w_plus, w_minus)
    largest = int(count.max()) if method == "exact" and count.numel() else 0
    if largest > WILCOXON_EXACT_LIMIT:
        raise ValueError(
            f"method='exact' takes at most {WILCOXON_EXACT_LIMIT} non-zero differences per row (its null "
            f"distribution costs about n³/6 additions), got {largest}: use method='approx' or method='auto'"
        )
    exact_rows = (count <= WILCOXON_AUTO_EXACT) & (ties == 0) & (zeros == 0)  # what "auto" takes exactly
    if method == "exact":
        pvalue = _signed_rank_exact(w_plus, count)
    else:
        mean = count * (count + 1) / 4
        variance = count * (count + 1) * (2 * count + 1)
        if zero_method == "pratt":
            mean = mean - zeros * (zeros + 1) / 4
            variance = variance - zeros * (zeros + 1) * (2 * zeros + 1)
            # The zeros' own tie group leaves the correction too.
            ties = ties - (zeros**3 - zeros)
        sd = torch.sqrt((variance - ties / 2) / 24)
        z = (w_plus - mean) / sd
        if correction:
            z = z - torch.sign(z) * 0.5 / sd
        pvalue = normal_two_sided(z)
        if method == "auto" and bool(exact_rows.any()):
            pvalue = torch.where(exact_rows, _signed_rank_exact(w_plus, torch.where(exact_rows, count, 0)), pvalue)
    empty = count == 0
    nan = torch.full_like(statistic, float("nan"))
    return TestResult(torch.where(empty, nan, statistic), torch.where(empty, nan, pvalue))


def _signed_rank_exact(w_plus: Tensor, count: Tensor) -> Tensor:
    pvalue = torch.full_like(w_plus, float("nan"))
    for n in torch.unique(count).tolist():
        if n == 0:
            continue
        rows = count == n
        pmf = signed_rank_pmf(int(n)).to(w_plus.device)
        cdf = torch.cumsum(pmf, 0)
        sf = torch.flip(torch.cumsum(torch.flip(pmf, (0,)), 0), (0,))
        top = pmf.numel() - 1
        lower = torch.floor(w_plus[rows]).long().clamp(0, top)
        upper = torch.ceil(w_plus[rows]).long().clamp(0, top)
        pvalue[rows] = (2 * torch.minimum(sf[lower], cdf[upper])).clamp(max=1)
    return pvalue


def randomisation_test(
    a: Tensor,
    b: Tensor,
    *,
    permutations: int = 10_000,
    method: str = "auto",
    generator: torch.Generator | None = None,
) -> TestResult:
    r"""Fisher's randomisation test of the mean of ``d = a − b`` (paired sign-flip permutation test).

    Under the null the labels "a" and "b" of each query are exchangeable, so each difference's
    sign is a fair coin. The statistic is :math:`\bar d`; p is the probability that a random
    sign assignment gives :math:`|\overline{s d}| \ge |\bar d|` (Fisher 1935; Smucker, Allan &
    Carterette, CIKM 2007, for IR). Assumes only that exchangeability; no distribution.

    * ``method="exact"`` enumerates all 2ⁿ sign vectors (n ≤ 24): p is exact.
    * ``method="monte-carlo"`` draws ``permutations`` random sign vectors from ``generator``
      (shared by every row, so rows are tested against the same draws):
      p = (1 + #{|s̄d| ≥ |d̄|}) / (1 + permutations), never 0 (Phipson & Smyth 2010); its
      standard error is about √(p(1−p)/permutations).
    * ``method="auto"`` (default) is exact when 2ⁿ ≤ ``permutations``, else Monte-Carlo.

    Zero differences keep their place: flipping them changes nothing. Equal statistics count
    as "at least as extreme" up to a relative 1e-9 (rounding must not decide a tie).

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import randomisation_test
        >>> a = torch.tensor([0.5, 0.6, 0.9, 0.4]); b = torch.tensor([0.4, 0.6, 0.7, 0.1])
        >>> result = randomisation_test(a, b)  # 2^4 = 16 sign vectors: exact
        >>> round(float(result.statistic), 4), float(result.pvalue)
        (0.15, 0.25)
    """
    check_option("method", method, RANDOMISATION_METHODS)
    check_count("permutations", permutations)
    check_generator(generator)
    d = _differences(a, b)
    n = d.shape[-1]
    exact = method == "exact" or (method == "auto" and 2**min(n, 63) <= permutations)
    if exact and n > EXACT_LIMIT:
        raise ValueError(f"method='exact' enumerates 2^n sign vectors; n = {n} queries is more than {EXACT_LIMIT}")
    flat = d.reshape(-1, n)
    observed = flat.sum(-1).abs()
    tolerance = 1e-9 * flat.abs().sum(-1)
    threshold = (observed - tolerance).unsqueeze(-1)
    extreme = torch.zeros(flat.shape[0], dtype=torch.float64, device=d.device)
    total = 2**n if exact else permutations
    # Sign vectors [chunk, n] and flipped sums [rows, chunk] stay near 4 M numbers each.
    chunk = max(1, min(total, (1 << 22) // max(n, flat.shape[0])))
    for start in range(0, total, chunk):
        size = min(chunk, total - start)
        if exact:
            codes = torch.arange(start, start + size, device=d.device).unsqueeze(-1)
            bits = (codes >> torch.arange(n, device=d.device)) & 1
        else:
            bits = torch.randint(0, 2, (size, n), generator=generator, device="cpu").to(d.device)
        signs = (1 - 2 * bits).to(torch.float64)
        flipped = (flat @ signs.T).abs()
        extreme += (flipped >= threshold).sum(-1)
    pvalue = extreme / total if exact else (extreme + 1) / (permutations + 1)
    return TestResult(d.mean(-1), pvalue.reshape(d.shape[:-1]))
