"""Flat ordered-pair accuracy: each query's own value, with memory that follows Σ nᵢ²."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import torch_ndcg as tn
import peak_memory


@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.sampled_from(["worst", "best", "average", "first"]),
       st.integers(0, 2**31 - 1), st.booleans())
def test_flat_queries_of_skewed_sizes_equal_each_query_alone(sizes, ties, seed, shuffle):
    generator = torch.Generator().manual_seed(seed)
    total = sum(sizes)
    ids = torch.repeat_interleave(torch.arange(len(sizes)) * 7 - 3, torch.tensor(sizes))
    scores = torch.randint(0, 4, (total,), generator=generator).to(torch.float32)  # many ties
    labels = torch.randint(0, 3, (total,), generator=generator)
    if shuffle:  # interleaved queries: "first" still ranks by input order within a query
        order = torch.randperm(total, generator=generator)
        ids, scores, labels = ids[order], scores[order], labels[order]
    got = tn.ordered_pair_accuracy(scores, labels, indexes=ids, ties=ties, reduction="none")
    expected = [tn.ordered_pair_accuracy(scores[ids == q], labels[ids == q], ties=ties) for q in ids.unique()]
    torch.testing.assert_close(got, torch.stack(expected))


def test_one_long_query_among_many_short_ones_costs_its_own_pairs():
    # Padding every query to the longest built [2001, 4000, 4000] (32 GB) here and failed.
    setup = """
import torch, torch_ndcg as tn
sizes = torch.tensor([4000] + [2] * 2000)
ids = torch.repeat_interleave(torch.arange(sizes.numel()), sizes)
scores, labels = torch.randn(ids.numel()), torch.randint(0, 3, (ids.numel(),))
"""
    growth = peak_memory.peak_growth(setup, "tn.ordered_pair_accuracy(scores, labels, indexes=ids)")
    assert growth < 1 << 30, f"{growth / 2**20:.0f} MiB"
