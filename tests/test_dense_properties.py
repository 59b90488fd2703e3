"""Property tests of the dense metrics against the brute-force oracle and against themselves."""

import pytest
import torch
from dense_reference import METRICS, brute_force, exp2, linear, tie_range
from hypothesis import given
from hypothesis import strategies as st

import torch_ndcg as tn

CUTOFFS = (1, 2, 3, 5, None, 10)
FUNCTIONS = {name: getattr(tn, name) for name in METRICS}
TIES = ("average", "first", "worst", "best")


def assert_values(got, want, atol, name, rtol=0.0):
    """``got`` (a tensor) equals the nested list ``want`` within ``atol`` (+ ``rtol``)."""
    expected = torch.tensor(want, dtype=torch.float64)
    torch.testing.assert_close(got.double(), expected, rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}")


def call(name, scores, relevance, k, **options):
    """One metric, per query, with the options the metric accepts."""
    if name in ("dcg", "cg"):
        options.pop("empty", None)
    if name not in ("ndcg", "dcg", "cg"):
        options.pop("gain", None)
    return FUNCTIONS[name](scores, relevance, k, reduction="none", **options)


@st.composite
def small_lists(draw, max_len=6, graded=True):
    """A few lists of one length ≤ 6, with scores from a tiny range so that ties abound."""
    n = draw(st.integers(1, max_len))
    rows = draw(st.integers(1, 3))
    top = draw(st.integers(0, 3))
    label = st.integers(0, 3) if graded else st.integers(0, 1)
    scores = [[draw(st.integers(0, top)) for _ in range(n)] for _ in range(rows)]
    relevance = [[draw(label) for _ in range(n)] for _ in range(rows)]
    return scores, relevance


@given(small_lists(), st.sampled_from(("linear", "exp2")), st.sampled_from((torch.float64, torch.float32)))
def test_every_tie_mode_equals_brute_force(data, gain, dtype):
    # float32 lists on the CPU are ranked on the host path (torch_ndcg.selection), float64 by topk.
    scores, relevance = data
    s = torch.tensor(scores, dtype=dtype)
    r = torch.tensor(relevance, dtype=dtype)
    gain_fn = linear if gain == "linear" else exp2
    for name in METRICS:
        for ties in TIES:
            got = call(name, s, r, CUTOFFS, ties=ties, gain=gain)
            want = [
                [brute_force(name, sr, rr, k, ties=ties, gain=gain_fn) for k in CUTOFFS]
                for sr, rr in zip(scores, relevance)
            ]
            if dtype == torch.float64:
                assert_values(got, want, 1e-12, (name, ties))
            else:  # exp2 gains reach 2**3 - 1 per item: float32 rounding is relative
                assert_values(got, want, 1e-6, (name, ties), rtol=1e-6)


@given(small_lists())
def test_each_cutoff_alone_equals_brute_force(data):
    # A cutoff inside the list makes the tie group at slot k straddle it: float32 lists without
    # ties near the top skip tie groups (HostSort.tie_free_gains in torch_ndcg.selection), the rest do not.
    scores, relevance = data
    s, r = torch.tensor(scores, dtype=torch.float32), torch.tensor(relevance)
    for name in METRICS:
        for k in (1, 2, 3):
            want = [brute_force(name, sr, rr, k) for sr, rr in zip(scores, relevance)]
            assert_values(call(name, s, r, k), want, 1e-6, (name, k))


@given(small_lists(graded=False))
def test_binary_labels_equal_brute_force(data):
    # bool relevance and float32 output: the same numbers to float32 precision.
    scores, relevance = data
    s = torch.tensor(scores, dtype=torch.float32)
    r = torch.tensor(relevance, dtype=torch.bool)
    for name in METRICS:
        got = call(name, s, r, CUTOFFS)
        assert got.dtype == torch.float32
        want = [[brute_force(name, sr, rr, k) for k in CUTOFFS] for sr, rr in zip(scores, relevance)]
        assert_values(got, want, 1e-6, name)


@given(small_lists())
def test_worst_and_best_bracket_every_tie_ordering(data):
    scores, relevance = data
    s, r = torch.tensor(scores), torch.tensor(relevance)
    for name in METRICS:
        worst, average, best = (call(name, s, r, CUTOFFS, ties=t) for t in ("worst", "average", "best"))
        assert (worst <= average + 1e-6).all() and (average <= best + 1e-6).all(), name
        ranges = [[tie_range(name, sr, rr, k) for k in CUTOFFS] for sr, rr in zip(scores, relevance)]
        assert_values(worst, [[lo for lo, _ in row] for row in ranges], 1e-6, name)
        assert_values(best, [[hi for _, hi in row] for row in ranges], 1e-6, name)


def random_batch(seed: int, rows: int, n: int, *, levels: int = 5, top: int = 4):
    """Integer scores in [0, levels) (many ties) and labels in [0, top], ~30 % of rows empty-ish."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randint(0, levels, (rows, n), generator=g).double()
    relevance = torch.randint(0, top + 1, (rows, n), generator=g)
    relevance = relevance * (torch.rand(rows, n, generator=g) < 0.4)
    return scores, relevance, g


seeds = st.integers(0, 2**31 - 1)


@given(seeds, st.integers(1, 40), st.sampled_from(TIES))
def test_ndcg_between_zero_and_one(seed, n, ties):
    scores, relevance, g = random_batch(seed, 8, n)
    scores = scores + torch.rand(scores.shape, generator=g).round(decimals=1)
    values = tn.ndcg(scores.float(), relevance.float(), (1, 3, None), ties=ties, reduction="none")
    assert (values >= -1e-6).all() and (values <= 1 + 1e-6).all()


@given(seeds, st.integers(1, 30), st.sampled_from(TIES), st.sampled_from(("linear", "exp2")))
def test_ideal_order_scores_one(seed, n, ties, gain):
    _, relevance, _ = random_batch(seed, 6, n)
    values = tn.ndcg(relevance.float(), relevance, (1, 4, None), ties=ties, gain=gain, reduction="none")
    non_empty = (relevance > 0).any(-1, keepdim=True).expand_as(values)
    assert values[non_empty].tolist() == pytest.approx([1.0] * int(non_empty.sum()), abs=1e-6)
    assert (values[~non_empty] == 0).all()


@given(seeds, st.integers(1, 12), st.sampled_from(TIES))
def test_permuting_items_changes_nothing(seed, n, ties):
    scores, relevance, g = random_batch(seed, 5, n, levels=3)
    mask = torch.rand(scores.shape, generator=g) < 0.8
    perm = torch.randperm(n, generator=g)
    if ties == "first":
        # "first" breaks ties by index, so only a permutation that keeps tied items in order
        # may be applied: make every score distinct within its row first.
        scores = scores * n + torch.arange(n)
    for name in METRICS:
        before = call(name, scores, relevance, (1, 3, None), mask=mask, ties=ties)
        after = call(name, scores[:, perm], relevance[:, perm], (1, 3, None), mask=mask[:, perm], ties=ties)
        torch.testing.assert_close(after, before, rtol=1e-12, atol=1e-12, msg=name)


@given(seeds, st.integers(2, 10), st.sampled_from(TIES), st.data())
def test_masking_an_item_equals_removing_it(seed, n, ties, data):
    scores, relevance, _ = random_batch(seed, 1, n, levels=3)
    keep = torch.tensor(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    # Padding anywhere, with values that would matter if they leaked: top scores, huge labels.
    padded_scores = torch.where(keep, scores, torch.full_like(scores, 99.0))
    padded_relevance = torch.where(keep, relevance, torch.full_like(relevance, 7))
    for name in METRICS:
        masked = call(name, padded_scores, padded_relevance, (1, 2, None, 20), mask=keep.unsqueeze(0), ties=ties)
        if keep.any():
            removed = call(name, scores[:, keep], relevance[:, keep], (1, 2, None, 20), ties=ties)
            torch.testing.assert_close(masked, removed, rtol=1e-12, atol=1e-12, msg=name)
        else:
            assert (masked == 0).all(), name  # every item masked: an empty query (empty="zero")


@given(
    seeds,
    st.sampled_from((1, 2, 5, 9)),
    st.sampled_from(TIES),
    st.sampled_from((2, 4, 50)),
    st.sampled_from((0.05, 0.9)),
)
def test_topk_path_equals_full_sort(seed, k, ties, levels, density):
    # k << N takes the topk path; adding k=None to the request forces a full sort of the rows.
    # With few real items the group cut by k is the padding itself.
    scores, relevance, g = random_batch(seed, 7, 64, levels=levels)
    mask = torch.rand(scores.shape, generator=g) < density
    for name in METRICS:
        partial = call(name, scores, relevance, k, mask=mask, ties=ties)
        full = call(name, scores, relevance, (k, None), mask=mask, ties=ties)[..., 0]
        torch.testing.assert_close(partial, full, rtol=1e-12, atol=1e-12, msg=name)


@given(seeds, st.integers(1, 8), st.sampled_from(TIES))
def test_k_beyond_the_list_and_cutoff_sequences(seed, n, ties):
    scores, relevance, _ = random_batch(seed, 4, n, levels=3)
    cutoffs = (3, 1, None, n, n + 5, 2)
    for name in METRICS:
        together = call(name, scores, relevance, cutoffs, ties=ties)
        for i, k in enumerate(cutoffs):
            alone = call(name, scores, relevance, k, ties=ties)
            torch.testing.assert_close(together[..., i], alone, rtol=0, atol=0, msg=name)
        if name != "precision":  # P@k divides by k, even past the end of the list
            torch.testing.assert_close(
                call(name, scores, relevance, n + 5, ties=ties), call(name, scores, relevance, None, ties=ties)
            )
