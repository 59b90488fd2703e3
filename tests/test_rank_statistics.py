"""Per-slot tie-group terms (torch_ndcg.rank_statistics) against enumeration of every placement."""

import itertools

import pytest
import torch

from torch_ndcg.rank_statistics import RankStatistics as Slots, expected_gain, first_hit_probability, hit_probability, precision_term


def one_group(start: int, size: int, hits: int, hits_before: int, gain: float = 0.0) -> Slots:
    """The slots of a single tie group occupying ranks ``start .. start + size - 1`` (0-based)."""
    position = torch.arange(start, start + size, dtype=torch.float64)

    def full(value):
        return torch.full((size,), float(value), dtype=torch.float64)

    return Slots(
        position=position,
        group_gain=full(gain),
        group_size=full(size),
        group_hits=full(hits),
        group_start=full(start),
        hits_before=full(hits_before),
    )


def placements(size: int, hits: int):
    """Every way to put ``hits`` relevant items among ``size`` tied slots, as 0/1 tuples."""
    for chosen in itertools.combinations(range(size), hits):
        yield tuple(int(i in chosen) for i in range(size))


CASES = [(g, r) for g in range(1, 8) for r in range(0, g + 1)]


@pytest.mark.parametrize(("size", "hits"), CASES)
@pytest.mark.parametrize(("start", "before"), [(0, 0), (3, 0), (3, 2)])
def test_terms_equal_the_mean_over_placements(size, hits, start, before):
    slots = one_group(start, size, hits, before, gain=2.5 * hits)
    layouts = list(placements(size, hits))
    count = len(layouts)
    hit = [sum(p[j] for p in layouts) / count for j in range(size)]
    first = [
        sum(1 for p in layouts if before == 0 and p[j] and not any(p[:j])) / count for j in range(size)
    ]
    precision = [
        sum(p[j] * (before + sum(p[: j + 1])) / (start + j + 1) for p in layouts) / count for j in range(size)
    ]
    torch.testing.assert_close(hit_probability(slots), torch.tensor(hit, dtype=torch.float64))
    torch.testing.assert_close(first_hit_probability(slots), torch.tensor(first, dtype=torch.float64))
    torch.testing.assert_close(precision_term(slots), torch.tensor(precision, dtype=torch.float64))
    torch.testing.assert_close(expected_gain(slots), torch.full((size,), 2.5 * hits / size, dtype=torch.float64))


@pytest.mark.parametrize(("size", "hits"), [(1000, 1), (1000, 500), (1000, 999), (5000, 3)])
def test_large_groups_stay_finite_and_normalised(size, hits):
    slots = one_group(0, size, hits, 0)
    first = first_hit_probability(slots)
    assert torch.isfinite(first).all() and (first >= 0).all()
    assert first.sum().item() == pytest.approx(1.0, abs=1e-9)
    assert hit_probability(slots).sum().item() == pytest.approx(hits)
    assert torch.isfinite(precision_term(slots)).all()


def test_untied_slots_are_the_textbook_terms():
    # Groups of one: hits 0, 1, 1, 0, 1 at ranks 1..5.
    hits = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0], dtype=torch.float64)
    position = torch.arange(5, dtype=torch.float64)
    slots = Slots(
        position=position,
        group_gain=hits * 3,
        group_size=torch.ones(5, dtype=torch.float64),
        group_hits=hits,
        group_start=position,
        hits_before=torch.cumsum(hits, 0) - hits,
    )
    assert expected_gain(slots).tolist() == [0.0, 3.0, 3.0, 0.0, 3.0]
    assert hit_probability(slots).tolist() == hits.tolist()
    assert first_hit_probability(slots).tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert precision_term(slots).tolist() == pytest.approx([0.0, 1 / 2, 2 / 3, 0.0, 3 / 5])


def test_batched_slots_with_float32():
    slots = one_group(2, 4, 2, 0)
    stacked = Slots(*(torch.stack([f, f]).float() for f in (
        slots.position, slots.group_gain, slots.group_size, slots.group_hits, slots.group_start, slots.hits_before
    )))
    for term in (expected_gain, hit_probability, first_hit_probability, precision_term):
        out = term(stacked)
        assert out.shape == (2, 4) and out.dtype == torch.float32
        torch.testing.assert_close(out[0], term(slots).float())


@pytest.mark.parametrize(("size", "hits"), [(1000, 1), (100_000, 10), (20_000, 1000)])
def test_first_hit_probability_is_accurate_in_float32(size, hits):
    # lgamma differences of large arguments cancel in float32; the terms must not inherit that.
    wide = one_group(0, 64, hits, 0)
    wide = Slots(
        position=wide.position,
        group_gain=wide.group_gain,
        group_size=torch.full((64,), float(size), dtype=torch.float64),
        group_hits=wide.group_hits,
        group_start=wide.group_start,
        hits_before=wide.hits_before,
    )
    narrow = Slots(*(f.float() for f in (
        wide.position, wide.group_gain, wide.group_size, wide.group_hits, wide.group_start, wide.hits_before
    )))
    got = first_hit_probability(narrow)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), first_hit_probability(wide), rtol=1e-6, atol=0)
