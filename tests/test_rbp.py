"""tn.rbp: a plain reference, the expectation over tied orderings, both layouts, torch.compile."""

import itertools

import pytest
import torch

import torch_ndcg as tn


def _reference(scores, labels, p, k=None):
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return sum((1 - p) * p**rank * (labels[i] > 0) for rank, i in enumerate(order[: k or len(order)]))


def test_rbp_matches_a_plain_reference_per_list():
    generator = torch.Generator().manual_seed(0)
    scores = torch.rand(20, 9, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, 3, (20, 9), generator=generator)
    for p, k in ((0.8, None), (0.5, 3), (0.95, 7)):
        ours = tn.rbp(scores, labels, k, persistence=p, reduction="none")
        expected = [_reference(s.tolist(), l.tolist(), p, k) for s, l in zip(scores, labels)]
        torch.testing.assert_close(ours, torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12)


def test_tied_scores_give_the_mean_over_orderings():
    scores = torch.tensor([0.5, 0.9, 0.5, 0.5, 0.1], dtype=torch.float64)
    labels = torch.tensor([1, 0, 0, 2, 1])
    tied = [0, 2, 3]
    values = []
    for permutation in itertools.permutations(tied):  # every order of the tied items
        broken = scores.clone()
        for offset, i in enumerate(permutation):
            broken[i] -= 1e-3 * offset
        values.append(_reference(broken.tolist(), labels.tolist(), 0.7))
    assert float(tn.rbp(scores, labels, persistence=0.7)) == pytest.approx(sum(values) / len(values), abs=1e-12)


def test_flat_layout_equals_dense_rows():
    scores = torch.rand(4, 6, dtype=torch.float64)
    labels = torch.randint(0, 2, (4, 6))
    indexes = torch.arange(4).repeat_interleave(6)
    dense = tn.rbp(scores, labels, 4, reduction="none")
    flat = tn.rbp(scores.reshape(-1), labels.reshape(-1), 4, indexes=indexes, reduction="none")
    torch.testing.assert_close(flat, dense)


def test_threshold_and_bad_persistence():
    scores, labels = torch.tensor([0.9, 0.5]), torch.tensor([1, 2])
    assert float(tn.rbp(scores, labels, persistence=0.5, threshold=2)) == pytest.approx(0.25)
    for bad in (1.0, -0.1, True, "0.8"):
        with pytest.raises(ValueError, match="persistence"):
            tn.rbp(scores, labels, persistence=bad)


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
def test_rbp_compiles(dynamic):
    scores, labels = torch.rand(3, 5), torch.randint(0, 3, (3, 5))
    compiled = torch.compile(lambda s, r: tn.rbp(s, r, 3, validate=False), dynamic=dynamic, fullgraph=False)
    torch.testing.assert_close(compiled(scores, labels), tn.rbp(scores, labels, 3))
