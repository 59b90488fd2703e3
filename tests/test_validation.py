"""Bad input to the dense metrics: a clear ValueError/TypeError that names the argument."""

import pytest
import torch
from dense_reference import METRICS

import torch_ndcg as tn
from torch_ndcg import validation as v
from torch_ndcg import options as option_groups

SCORES = torch.tensor([[0.3, 0.2, 0.1, 0.4]])
LABELS = torch.tensor([[1, 0, 2, 0]])
SCORED = METRICS  # every metric taking (scores, relevance, k)


def call(name, scores=SCORES, relevance=LABELS, k=None, **options):
    return getattr(tn, name)(scores, relevance, k, **options)


@pytest.mark.parametrize("name", SCORED)
def test_mismatched_shapes(name):
    with pytest.raises(ValueError, match=r"scores and relevance .*\(1, 4\) and \(1, 3\)"):
        call(name, SCORES, LABELS[:, :3])
    with pytest.raises(ValueError, match="scores and relevance"):
        call(name, SCORES, LABELS[0])
    with pytest.raises(ValueError, match="scores"):
        call(name, torch.tensor(0.5), torch.tensor(1))


@pytest.mark.parametrize("name", SCORED)
@pytest.mark.parametrize(
    ("k", "error"),
    [(0, ValueError), (-1, ValueError), (True, TypeError), ("5", TypeError), ([], ValueError), (1.5, TypeError)],
    ids=repr,
)
def test_bad_k(name, k, error):
    with pytest.raises(error, match=r"\bk\b"):
        call(name, k=k)


def test_bad_k_for_idcg():
    with pytest.raises(ValueError, match=r"\bk\b"):
        tn.idcg(LABELS, 0)
    with pytest.raises(TypeError, match=r"\bk\b"):
        tn.idcg(LABELS, "3")


OPTIONS = {
    "ties": ("ndcg", "dcg", "cg", "mrr", "precision", "recall", "hit_rate", "average_precision"),
    "empty": ("ndcg", "mrr", "precision", "recall", "hit_rate", "average_precision"),
    "reduction": SCORED,
    "gain": ("ndcg", "dcg", "cg"),
    "discount": ("ndcg", "dcg"),
}


@pytest.mark.parametrize(("option", "name"), [(o, n) for o, names in OPTIONS.items() for n in names])
@pytest.mark.parametrize("value", ["bogus", "", None])
def test_unknown_option_strings(option, name, value):
    with pytest.raises(ValueError, match=option):
        call(name, **{option: value})


@pytest.mark.parametrize("option", ["gain", "discount", "reduction"])
def test_unknown_option_strings_for_idcg(option):
    with pytest.raises(ValueError, match=option):
        tn.idcg(LABELS, **{option: "bogus"})


@pytest.mark.parametrize("name", SCORED)
def test_empty_lists(name):
    with pytest.raises(ValueError, match="N = 0"):
        call(name, torch.zeros(3, 0), torch.zeros(3, 0))


def test_empty_lists_for_idcg():
    with pytest.raises(ValueError, match="N = 0"):
        tn.idcg(torch.zeros(2, 0))


@pytest.mark.parametrize("name", SCORED)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_scores(name, bad):
    scores = SCORES.clone()
    scores[0, 2] = bad
    with pytest.raises(ValueError, match="scores .*NaN or infinite"):
        call(name, scores)
    # A masked position may hold anything; validate=False skips the value check altogether.
    mask = torch.tensor([[True, True, False, True]])
    call(name, scores, mask=mask)
    call(name, scores, validate=False)


@pytest.mark.parametrize("name", SCORED)
def test_negative_infinite_or_nan_relevance(name):
    for bad in (-1.0, float("nan"), float("inf")):
        labels = LABELS.double()
        labels[0, 3] = bad
        with pytest.raises(ValueError, match="relevance .*mask"):
            call(name, SCORES, labels)
        masked = call(name, SCORES, labels, mask=torch.tensor([[True, True, True, False]]), reduction="none")
        assert torch.isfinite(masked).all()
        torch.testing.assert_close(masked, call(name, SCORES[:, :3], LABELS[:, :3].double(), reduction="none"))
    with pytest.raises(ValueError, match="relevance"):
        call(name, SCORES, torch.tensor([[1, 0, -2, 0]]))


def test_negative_relevance_for_idcg():
    with pytest.raises(ValueError, match="relevance"):
        tn.idcg(torch.tensor([1, -1]))
    assert tn.idcg(torch.tensor([1, -1]), mask=torch.tensor([True, False])).item() == 1.0


@pytest.mark.parametrize("name", SCORED)
def test_bad_mask(name):
    with pytest.raises(ValueError, match=r"mask .*\(1, 4\).*\(1, 3\)"):
        call(name, mask=torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask"):
        call(name, mask=torch.ones(4, dtype=torch.bool))  # broadcastable is not enough
    with pytest.raises(TypeError, match="mask .*bool"):
        call(name, mask=torch.ones(1, 4))
    with pytest.raises(TypeError, match="mask .*bool"):
        call(name, mask=torch.ones(1, 4, dtype=torch.int64))
    with pytest.raises(TypeError, match="mask .*Tensor"):
        call(name, mask=[[True] * 4])


@pytest.mark.parametrize("name", SCORED)
def test_complex_input(name):
    with pytest.raises(TypeError, match="scores .*real"):
        call(name, SCORES.to(torch.complex64))
    with pytest.raises(TypeError, match="relevance"):
        call(name, SCORES, LABELS.to(torch.complex64))


@pytest.mark.parametrize("name", SCORED)
def test_non_tensor_input(name):
    with pytest.raises(TypeError, match="scores .*torch.Tensor.*list"):
        call(name, [[0.3, 0.2]], torch.tensor([[1, 0]]))
    with pytest.raises(TypeError, match="relevance .*torch.Tensor.*ndarray"):
        call(name, torch.tensor([[0.3, 0.2]]), torch.tensor([[1, 0]]).numpy())


def test_non_tensor_input_for_idcg():
    with pytest.raises(TypeError, match="relevance"):
        tn.idcg([1, 0, 2])


def test_bad_callables_name_the_argument():
    with pytest.raises(ValueError, match="gain"):
        tn.ndcg(SCORES, LABELS, gain=lambda r: r.sum())
    with pytest.raises(ValueError, match="discount"):
        tn.dcg(SCORES, LABELS, discount=lambda rank: rank[:1])


def test_validate_false_still_checks_shapes_and_options():
    with pytest.raises(ValueError, match="scores and relevance"):
        tn.ndcg(SCORES, LABELS[:, :2], validate=False)
    with pytest.raises(ValueError, match="ties"):
        tn.ndcg(SCORES, LABELS, ties="random", validate=False)
    with pytest.raises(TypeError, match="mask"):
        tn.ndcg(SCORES, LABELS, mask=torch.ones(1, 4), validate=False)


def test_helpers_used_by_other_forms():
    assert v.check_option("ties", "first", option_groups.TIES) == "first"
    with pytest.raises(ValueError, match="reduction .*'mean'"):
        v.check_option("reduction", "avg", option_groups.REDUCTIONS)
    v.check_positive("tau", 0.5)
    v.check_positive("steps", 3, integer=True)
    for bad in (0, -1.0, True, "1", float("nan")):
        with pytest.raises(ValueError, match="tau"):
            v.check_positive("tau", bad)
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match="steps"):
            v.check_positive("steps", bad, integer=True)
    v.check_ids("ranked_ids", torch.tensor([1, 2]))
    for bad in (torch.tensor([1.0]), torch.tensor([True]), torch.tensor([1j])):
        with pytest.raises(TypeError, match="ranked_ids"):
            v.check_ids("ranked_ids", bad)
    # Scores that rank exactly: integers become float64, half precision becomes float32.
    assert v.as_float_scores("scores", torch.tensor([3, 1])).dtype == torch.float64
    assert v.as_float_scores("scores", torch.tensor([True])).dtype == torch.float64
    assert v.as_float_scores("scores", torch.tensor([1.0], dtype=torch.bfloat16)).dtype == torch.float32
    kept = torch.tensor([1.0], dtype=torch.float64)
    assert v.as_float_scores("scores", kept) is kept


@pytest.mark.parametrize(
    "gain", [lambda x: 2.0**x - 1, lambda x: x - 1, lambda x: torch.where(x > 0, torch.nan, x)],
    ids=["overflow", "negative", "nan"],
)
def test_a_gain_callable_giving_non_finite_or_negative_gains_is_refused(gain):
    scores, relevance = torch.tensor([[0.3, 0.2], [0.1, 0.4]]), torch.tensor([[200.0, 1.0], [1.0, 0.5]])
    for call in (
        lambda: tn.ndcg(scores, relevance, gain=gain),
        lambda: tn.dcg(scores.reshape(-1), relevance.reshape(-1), indexes=torch.tensor([0, 0, 1, 1]), gain=gain),
        lambda: tn.ranked.ndcg(torch.tensor([[1, 2]]), torch.tensor([[1, 2]]), torch.tensor([[200.0, 0.5]]), gain=gain),
        lambda: tn.neural_ndcg_loss(scores.requires_grad_(), relevance, gain=gain),
        lambda: tn.approx_ndcg_loss(scores.requires_grad_(), relevance, gain=gain),
    ):
        with pytest.raises(ValueError, match="^gain returned"):
            call()
    # Only real labels need a valid gain: masking the bad ones is the way out.
    valid = torch.isfinite(gain(relevance)) & (gain(relevance) >= 0)
    assert torch.isfinite(tn.ndcg(scores, relevance, gain=gain, mask=valid))


def test_idcg_names_relevance_in_its_errors():
    with pytest.raises(ValueError, match="relevance must have at least 1 dimension"):
        tn.idcg(torch.tensor(3.0))
    with pytest.raises(ValueError, match="relevance has lists of length 0"):
        tn.idcg(torch.zeros(2, 0))
    with pytest.raises(ValueError, match="relevance contains negative"):
        tn.idcg(torch.tensor([1.0, -1.0]))
