"""The distillation losses: formulas against plain-Python oracles, padding invariance, ``empty``,
``reduction``, the modules, and refusing labels passed as teacher scores (and the reverse)."""

from __future__ import annotations

import itertools
import math
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torch_ndcg as tn
from torch_ndcg.losses import distill

LOSSES = {
    "listnet": lambda s, t, **o: tn.distill_listnet_loss(s, t, temperature=0.7, **o),
    "listmle": tn.distill_listmle_loss,
    "plistmle": lambda s, t, **o: tn.distill_listmle_loss(s, t, position_aware=True, **o),
    "ranknet": lambda s, t, **o: tn.distill_ranknet_loss(s, t, temperature=0.5, **o),
    "margin_all": tn.margin_mse_loss,
    "margin_first": lambda s, t, **o: tn.margin_mse_loss(s, t, pairs="first", **o),
    "adr_dense": lambda s, t, **o: tn.adr_mse_loss(s, t, temperature=0.5, impl="dense", **o),
    "adr_streaming": lambda s, t, **o: tn.adr_mse_loss(s, t, temperature=0.5, impl="streaming", **o),
    "adr_plain": lambda s, t, **o: tn.adr_mse_loss(s, t, discount=None, **o),
}


# --- oracles: the docstrings' formulas on one list of real items, in plain Python -----------------


def _softmax(values, tau):
    top = max(values)
    exps = [math.exp((v - top) / tau) for v in values]
    return [e / sum(exps) for e in exps]


def listnet_oracle(s, t, tau):
    p, q = _softmax(t, tau), _softmax(s, tau)
    return -(tau**2) * sum(pi * math.log(qi) for pi, qi in zip(p, q))


def listmle_oracle(s, t, position_aware=False):
    order = sorted(range(len(s)), key=lambda i: -t[i])  # stable: ties keep index order
    ranked = [s[i] for i in order]
    n = len(ranked)
    weights = [2 ** (n - i) - 1 for i in range(1, n + 1)] if position_aware else [1] * n
    total = sum(weights) if position_aware else 1
    terms = [math.log(sum(math.exp(v) for v in ranked[i:])) - ranked[i] for i in range(n)]
    return sum(w * term for w, term in zip(weights, terms)) / total


def ranknet_oracle(s, t, tau):
    terms = []
    for i, j in itertools.combinations(range(len(s)), 2):
        p = 1 / (1 + math.exp(-(t[i] - t[j]) / tau))
        d = s[i] - s[j]
        terms.append(-p * math.log(1 / (1 + math.exp(-d))) - (1 - p) * math.log(1 / (1 + math.exp(d))))
    return sum(terms) / len(terms)


def margin_oracle(s, t, pairs):
    if pairs == "first":
        terms = [((s[0] - s[j]) - (t[0] - t[j])) ** 2 for j in range(1, len(s))]
    else:
        terms = [((s[i] - s[j]) - (t[i] - t[j])) ** 2 for i, j in itertools.combinations(range(len(s)), 2)]
    return sum(terms) / len(terms)


def adr_oracle(s, t, tau, discounted=True):
    n = len(s)
    total = 0.0
    for i in range(n):
        rank = 1 + sum(t[j] > t[i] for j in range(n)) + 0.5 * sum(t[j] == t[i] for j in range(n) if j != i)
        smooth = 1 + sum(1 / (1 + math.exp(-(s[j] - s[i]) / tau)) for j in range(n) if j != i)
        weight = 1 / math.log2(1 + rank) if discounted else 1.0
        total += weight * (rank - smooth) ** 2
    return total / n


ORACLES = {
    "listnet": lambda s, t: listnet_oracle(s, t, 0.7),
    "listmle": listmle_oracle,
    "plistmle": lambda s, t: listmle_oracle(s, t, position_aware=True),
    "ranknet": lambda s, t: ranknet_oracle(s, t, 0.5),
    "margin_all": lambda s, t: margin_oracle(s, t, "all"),
    "margin_first": lambda s, t: margin_oracle(s, t, "first"),
    "adr_dense": lambda s, t: adr_oracle(s, t, 0.5),
    "adr_streaming": lambda s, t: adr_oracle(s, t, 0.5),
    "adr_plain": lambda s, t: adr_oracle(s, t, 1.0, discounted=False),
}


@st.composite
def teacher_lists(draw, min_items=2):
    """A few lists of real items: student scores in [−5, 5], teacher logits in [−12, 2] on a grid
    of 1/4 (so ties happen), each list of its own length."""
    rows = draw(st.integers(1, 3))
    lists = []
    for _ in range(rows):
        n = draw(st.integers(min_items, 7))
        scores = [draw(st.floats(-5, 5, allow_nan=False)) for _ in range(n)]
        teacher = [draw(st.integers(-48, 8)) / 4 for _ in range(n)]
        lists.append((scores, teacher))
    return lists


def padded(lists, extra, gen, *, keep_first=False):
    """``[B, N]`` scores, teacher scores and mask holding ``lists``, with ``extra`` padded items per
    list at random positions (after the first item with ``keep_first``), padding full of junk."""
    width = max(len(s) for s, _ in lists) + extra
    scores = torch.full((len(lists), width), 1e4, dtype=torch.float64)
    teacher = torch.full((len(lists), width), torch.nan, dtype=torch.float64)
    mask = torch.zeros(len(lists), width, dtype=torch.bool)
    for b, (s, t) in enumerate(lists):
        start = 1 if keep_first else 0
        slots = (torch.randperm(width - start, generator=gen)[: len(s) - start] + start).sort().values.tolist()
        slots = ([0] if keep_first else []) + slots
        scores[b, slots] = torch.tensor(s, dtype=torch.float64)
        teacher[b, slots] = torch.tensor(t, dtype=torch.float64)
        mask[b, slots] = True
    return scores, teacher, mask


@pytest.mark.parametrize("name", LOSSES)
@settings(max_examples=25, deadline=None)
@given(lists=teacher_lists())
def test_each_list_is_its_formula(name, lists):
    gen = torch.Generator().manual_seed(0)
    scores, teacher, mask = padded(lists, 2, gen, keep_first=name == "margin_first")
    got = LOSSES[name](scores, teacher, mask=mask, reduction="none", validate=False)
    for b, (s, t) in enumerate(lists):
        assert math.isclose(got[b].item(), ORACLES[name](s, t), rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("name", LOSSES)
@settings(max_examples=20, deadline=None)
@given(lists=teacher_lists(), seed=st.integers(0, 2**16))
def test_padding_changes_neither_loss_nor_gradient(name, lists, seed):
    """The same lists with 0 to 10 padded items give the same loss and the same gradients."""
    gen = torch.Generator().manual_seed(seed)
    keep_first = name == "margin_first"
    results = []
    for extra in range(0, 11):
        scores, teacher, mask = padded(lists, extra, gen, keep_first=keep_first)
        scores.requires_grad_(True)
        loss = LOSSES[name](scores, teacher, mask=mask, validate=False)
        loss.backward()
        assert torch.all(scores.grad[~mask] == 0)
        results.append((loss.item(), scores.grad[mask].clone()))
    first_value, first_grad = results[0]
    for value, grad in results[1:]:
        assert math.isclose(value, first_value, rel_tol=1e-12, abs_tol=1e-12)
        torch.testing.assert_close(grad, first_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", LOSSES)
def test_gradcheck(name):
    gen = torch.Generator().manual_seed(3)
    scores = torch.randn(2, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    teacher = torch.randn(2, 6, generator=gen, dtype=torch.float64) * 3 - 4
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, 4:] = False
    assert torch.autograd.gradcheck(lambda s: LOSSES[name](s, teacher, mask=mask), (scores,))


@pytest.mark.parametrize("name", LOSSES)
def test_empty_lists_and_reductions(name):
    scores = torch.tensor([[1.0, 2.0, 0.5], [0.3, 9.0, 9.0], [0.0, 0.0, 0.0]], requires_grad=True)
    teacher = torch.tensor([[-1.0, -2.5, 0.5], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, True], [True, False, False], [False, False, False]])
    loss = LOSSES[name]
    per_list = loss(scores, teacher, mask=mask, reduction="none")
    assert per_list.shape == (3,) and torch.isfinite(per_list[0]) and torch.isnan(per_list[1:]).all()
    assert torch.equal(loss(scores, teacher, mask=mask, reduction="none", empty="zero")[1:], torch.zeros(2))
    assert torch.isfinite(loss(scores, teacher, mask=mask, reduction="none", empty="keep")).all()
    mean = loss(scores, teacher, mask=mask)
    assert mean.item() == pytest.approx(per_list[0].item())  # skipped lists leave the mean
    assert loss(scores, teacher, mask=mask, empty="zero").item() == pytest.approx(per_list[0].item() / 3)
    assert loss(scores, teacher, mask=mask, reduction="sum").item() == pytest.approx(per_list[0].item())
    mean.backward()
    assert torch.all(scores.grad[1:] == 0)
    with pytest.raises(ValueError, match="fewer than two real items.*empty='error'"):
        loss(scores, teacher, mask=mask, empty="error")
    only_empty = loss(scores[1:], teacher[1:], mask=mask[1:])
    assert only_empty.item() == 0.0


@pytest.mark.parametrize("name", LOSSES)
def test_leading_batch_axes(name):
    gen = torch.Generator().manual_seed(1)
    scores, teacher = torch.randn(2, 3, 5, generator=gen), torch.randn(2, 3, 5, generator=gen)
    per_list = LOSSES[name](scores, teacher, reduction="none")
    assert per_list.shape == (2, 3)
    flat = LOSSES[name](scores.reshape(6, 5), teacher.reshape(6, 5), reduction="none")
    torch.testing.assert_close(per_list.reshape(6), flat)


@pytest.mark.parametrize("name", LOSSES)
def test_float32_and_extreme_teacher_logits_stay_finite(name):
    scores = torch.tensor([[3.0, -1.0, 0.0, 2.0]], requires_grad=True)
    teacher = torch.tensor([[-1e4, -3e3, 5e3, -2.0]])
    loss = LOSSES[name](scores, teacher)
    loss.backward()
    assert loss.dtype == torch.float32 and torch.isfinite(loss) and torch.isfinite(scores.grad).all()


def test_the_teacher_gets_no_gradient():
    scores = torch.randn(2, 4, requires_grad=True)
    teacher = torch.randn(2, 4, requires_grad=True)
    for loss in LOSSES.values():
        loss(scores, teacher).backward()
    assert teacher.grad is None and scores.grad is not None


def test_a_perfect_student_has_zero_margin_and_rank_error():
    teacher = torch.tensor([[-0.5, -3.0, 2.0, 1.0]], dtype=torch.float64)
    assert tn.margin_mse_loss(teacher + 7.0, teacher).item() == pytest.approx(0.0, abs=1e-12)  # shift-free
    assert tn.margin_mse_loss(teacher + 7.0, teacher, pairs="first").item() == pytest.approx(0.0, abs=1e-12)
    # Sharp smooth ranks of the teacher's own scores are its ranks.
    assert tn.adr_mse_loss(teacher, teacher, temperature=1e-3).item() == pytest.approx(0.0, abs=1e-9)


def test_listnet_is_cross_entropy_and_differs_from_kl_by_the_teacher_entropy():
    scores = torch.tensor([[0.3, -1.2, 2.0]], dtype=torch.float64)
    teacher = torch.tensor([[-4.0, -6.0, -1.0]], dtype=torch.float64)
    tau = 2.0
    p = (teacher / tau).softmax(-1)
    kl = (p * (p.log() - (scores / tau).log_softmax(-1))).sum()
    entropy = -(p * p.log()).sum()
    got = tn.distill_listnet_loss(scores, teacher, temperature=tau)
    assert got.item() == pytest.approx((tau**2 * (kl + entropy)).item(), rel=1e-12)
    # At T = 1 it is the label ListNet's formula with the teacher's scores as (shifted) labels.
    shifted = teacher - teacher.min()
    assert tn.distill_listnet_loss(scores, teacher).item() == pytest.approx(tn.listnet_loss(scores, shifted).item())


def test_listmle_follows_the_teachers_order_like_label_listmle():
    scores = torch.tensor([[0.3, -1.2, 2.0, 0.1]], dtype=torch.float64)
    teacher = torch.tensor([[-4.0, -6.0, -1.0, -4.5]], dtype=torch.float64)
    labels = torch.tensor([[2, 0, 3, 1]])  # the teacher's order as grades
    assert tn.distill_listmle_loss(scores, teacher).item() == pytest.approx(tn.listmle_loss(scores, labels).item())


def test_ranknet_hardens_to_label_ranknet_as_the_temperature_falls():
    scores = torch.tensor([[0.3, -1.2, 2.0, 0.1]], dtype=torch.float64)
    teacher = torch.tensor([[-4.0, -6.0, -1.0, -4.5]], dtype=torch.float64)
    labels = torch.tensor([[2, 0, 3, 1]])
    hard = tn.distill_ranknet_loss(scores, teacher, temperature=1e-6)
    assert hard.item() == pytest.approx(tn.ranknet_loss(scores, labels).item(), rel=1e-12)


def test_teacher_ranks_average_ties_and_ignore_padding():
    teacher = torch.tensor([[1.0, 3.0, 3.0, 0.0, 5.0]])
    mask = torch.tensor([[True, True, True, True, False]])
    assert distill.teacher_ranks(teacher, mask).tolist() == [[3.0, 1.5, 1.5, 4.0, 0.0]]


def test_adr_streaming_is_dense():
    gen = torch.Generator().manual_seed(5)
    scores = torch.randn(3, 40, generator=gen, dtype=torch.float64, requires_grad=True)
    teacher = torch.randn(3, 40, generator=gen, dtype=torch.float64)
    mask = torch.rand(3, 40, generator=gen) < 0.8
    values, grads = [], []
    for impl in ("dense", "streaming", "auto"):
        loss = tn.adr_mse_loss(scores, teacher, mask=mask, impl=impl)
        (grad,) = torch.autograd.grad(loss, scores)
        values.append(loss)
        grads.append(grad)
    for value, grad in zip(values[1:], grads[1:]):
        torch.testing.assert_close(value, values[0])
        torch.testing.assert_close(grad, grads[0])


def test_adr_discount_callable():
    scores, teacher = torch.randn(2, 6), torch.randn(2, 6)
    got = tn.adr_mse_loss(scores, teacher, discount=lambda r: 1 / r)
    plain = tn.adr_mse_loss(scores, teacher, discount=None)
    assert got.item() != pytest.approx(plain.item())


# --- the kind of target ----------------------------------------------------------------------


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_integer_teacher_scores_are_labels_and_refused(name, dtype):
    scores = torch.randn(2, 4)
    labels = torch.tensor([[2, 0, 1, 0], [1, 1, 0, 0]]).to(dtype)
    with pytest.raises(TypeError, match=r"teacher_scores must be a floating-point tensor.*graded labels.*use tn\.\w+_loss"):
        LOSSES[name](scores, labels)


@pytest.mark.parametrize("name", LOSSES)
def test_label_like_float_teacher_scores_warn(name):
    scores = torch.randn(2, 4)
    grades = torch.tensor([[2.0, 0.0, 1.0, 0.0], [3.0, 1.0, 0.0, 2.0]])
    with pytest.warns(tn.TeacherScoresLookLikeLabels, match=r"whole numbers ≥ 0 with ties.*validate=False"):
        LOSSES[name](scores, grades)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LOSSES[name](scores, grades, validate=False)  # the way to say "these are the teacher's grades"
        LOSSES[name](scores, grades + 0.25)  # not whole numbers
        LOSSES[name](scores, grades - 1.0)  # a negative value
        LOSSES[name](scores, torch.tensor([[2.0, 0.0, 1.0, 3.0], [3.0, 1.0, 0.0, 2.0]]))  # no tie in a list


def test_ties_only_across_padding_do_not_warn():
    scores = torch.randn(1, 4)
    teacher = torch.tensor([[2.0, 0.0, 1.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tn.distill_listnet_loss(scores, teacher, mask=torch.tensor([[True, True, True, False]]))


def test_label_losses_still_refuse_teacher_logits():
    # The reverse mix-up: a label loss keeps refusing negative targets, as before.
    scores, teacher = torch.randn(2, 4), -torch.rand(2, 4) * 5
    for label_loss in (tn.listnet_loss, tn.listmle_loss, tn.ranknet_loss, tn.lambda_loss, tn.approx_ndcg_loss):
        with pytest.raises(ValueError, match=r"negative.*a teacher's real-valued scores, use a distillation loss"):
            label_loss(scores, teacher)


@pytest.mark.parametrize("name", LOSSES)
def test_bad_values(name):
    scores, teacher = torch.randn(2, 4), torch.randn(2, 4)
    bad = teacher.clone()
    bad[0, 1] = torch.nan
    with pytest.raises(ValueError, match="teacher_scores contains NaN or infinite"):
        LOSSES[name](scores, bad)
    masked = torch.ones(2, 4, dtype=torch.bool)
    masked[0, 1] = False
    if name != "margin_first":
        assert torch.isfinite(LOSSES[name](scores, bad, mask=masked))
    wrong = scores.clone()
    wrong[1, 2] = torch.inf
    with pytest.raises(ValueError, match="scores contains NaN or infinite"):
        LOSSES[name](wrong, teacher)
    with pytest.raises(ValueError, match="same shape"):
        LOSSES[name](scores, teacher[:, :3])
    with pytest.raises(TypeError, match="mask must be a bool"):
        LOSSES[name](scores, teacher, mask=masked.float())
    with pytest.raises(TypeError, match="scores must be a floating-point"):
        LOSSES[name](torch.ones(2, 4, dtype=torch.int64), teacher)


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("where", ["teacher_scores", "mask", "scores", "flat teacher_scores", "flat indexes"])
def test_an_argument_on_another_device_is_a_value_error_naming_both_devices(name, where):
    scores, teacher, mask = torch.randn(2, 3), torch.randn(2, 3), torch.ones(2, 3, dtype=torch.bool)
    indexes = None
    if where.startswith("flat"):
        scores, teacher, mask, indexes = scores.flatten(), teacher.flatten(), None, torch.tensor([0, 0, 0, 1, 1, 1])
    moved = where.removeprefix("flat ")
    arguments = {"scores": scores, "teacher_scores": teacher, "mask": mask, "indexes": indexes}
    arguments[moved] = arguments[moved].to("meta")
    other = "teacher_scores" if moved == "scores" else moved  # scores moved: the first pair checked
    with pytest.raises(ValueError, match=rf"scores and {other} must be on the same device, got (cpu and meta|meta and cpu)"):
        LOSSES[name](arguments.pop("scores"), arguments.pop("teacher_scores"), **arguments)


@pytest.mark.parametrize("temperature", [0.5, 0.1])
def test_distill_listnet_with_a_finite_teacher_score_that_overflows_at_the_temperature(temperature):
    # 3e38 / 0.5 is inf in float32: the teacher's softmax must still put all its mass there.
    scores, teacher = torch.tensor([[0.0, 1.0, 2.0]]), torch.tensor([[3e38, 0.0, -1.0]])
    value = tn.distill_listnet_loss(scores, teacher, temperature=temperature)
    expected = listnet_oracle([0.0, 1.0, 2.0], [3e38, 0.0, -1.0], temperature)
    assert value.item() == pytest.approx(expected, rel=1e-6)
    if temperature == 0.5:
        assert value.item() == pytest.approx(1.0357, abs=1e-4)
    # A student score that overflows at the temperature: the loss, about T · 3e38, fits float32.
    student = tn.distill_listnet_loss(teacher, scores, temperature=temperature)
    wide = tn.distill_listnet_loss(teacher.double(), scores.double(), temperature=temperature)
    assert math.isfinite(student.item()) and student.item() == pytest.approx(wide.item(), rel=1e-6)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s, t: tn.distill_listnet_loss(s, t, temperature=0), "temperature must be a finite number > 0"),
        (lambda s, t: tn.distill_ranknet_loss(s, t, temperature=-1.0), "temperature must be a finite number > 0"),
        (lambda s, t: tn.adr_mse_loss(s, t, temperature=float("nan")), "temperature must be a finite number > 0"),
        (lambda s, t: tn.margin_mse_loss(s, t, pairs="positive"), "pairs must be one of"),
        (lambda s, t: tn.adr_mse_loss(s, t, impl="kernel"), "impl must be one of"),
        (lambda s, t: tn.adr_mse_loss(s, t, discount="log10"), "discount"),
        (lambda s, t: tn.distill_listmle_loss(s, t, empty="one"), "empty must be one of"),
        (lambda s, t: tn.distill_listmle_loss(s, t, reduction="max"), "reduction must be one of"),
    ],
)
def test_bad_options(call, match):
    with pytest.raises(ValueError, match=match):
        call(torch.randn(2, 4), torch.randn(2, 4))


def test_validate_must_be_a_bool():
    with pytest.raises(TypeError, match="validate must be True or False"):
        tn.margin_mse_loss(torch.randn(2, 4), torch.randn(2, 4), validate="yes")


# --- modules ---------------------------------------------------------------------------------


MODULES = [
    (tn.DistillListNetLoss, tn.distill_listnet_loss, {"temperature": 2.0}),
    (tn.DistillListMLELoss, tn.distill_listmle_loss, {"reduction": "sum"}),
    (tn.DistillRankNetLoss, tn.distill_ranknet_loss, {"temperature": 0.5, "empty": "zero"}),
    (tn.MarginMSELoss, tn.margin_mse_loss, {"pairs": "first"}),
    (tn.AdrMSELoss, tn.adr_mse_loss, {"temperature": 0.3, "discount": None}),
]


@pytest.mark.parametrize(("module", "function", "options"), MODULES)
def test_module_is_its_function(module, function, options):
    gen = torch.Generator().manual_seed(2)
    scores, teacher = torch.randn(3, 7, generator=gen), torch.randn(3, 7, generator=gen)
    mask = torch.rand(3, 7, generator=gen) < 0.8
    mask[:, 0] = True
    criterion = module(**options)
    assert torch.equal(criterion(scores, teacher, mask=mask), function(scores, teacher, mask=mask, **options))
    assert all(f"{key}=" in repr(criterion) for key in options)


@pytest.mark.parametrize(("module", "function", "options"), MODULES)
def test_module_checks_options_at_construction(module, function, options):
    with pytest.raises(ValueError, match="reduction must be one of"):
        module(reduction="median")
    with pytest.raises(TypeError, match="unexpected keyword argument 'relevance_gain'"):
        module(relevance_gain="exp2")
    with pytest.raises(TypeError, match="unexpected keyword argument 'mask'"):
        module(mask=torch.ones(1, 2, dtype=torch.bool))


def test_module_checks_its_own_options():
    with pytest.raises(ValueError, match="temperature"):
        tn.AdrMSELoss(temperature=0)
    with pytest.raises(ValueError, match="pairs"):
        tn.MarginMSELoss(pairs="some")


def _two_lists() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Student and teacher scores of a list of 5 items and one of 3 (padded to 5)."""
    gen = torch.Generator().manual_seed(4)
    scores, teacher = torch.randn(2, 5, generator=gen), torch.randn(2, 5, generator=gen)
    mask = torch.ones(2, 5, dtype=torch.bool)
    mask[1, 3:] = False
    return scores, teacher, mask


@pytest.mark.parametrize("name", ["listnet", "ranknet", "margin_all", "margin_first", "adr_dense", "listmle"])
def test_compiles_without_graph_breaks(name):
    scores, teacher, mask = _two_lists()
    eager = LOSSES[name](scores, teacher, mask=mask, validate=False)
    compiled = torch.compile(lambda s, t, m: LOSSES[name](s, t, mask=m, validate=False), fullgraph=True,
                             backend="eager")
    torch.testing.assert_close(compiled(scores, teacher, mask), eager)


@pytest.mark.parametrize("name", ["listnet", "ranknet", "margin_all", "margin_first", "adr_dense", "listmle"])
def test_validating_losses_compile_without_graph_breaks_and_refuse_as_eager(name):
    scores, teacher, mask = _two_lists()
    torch._dynamo.reset()
    compiled = torch.compile(lambda s, t, m: LOSSES[name](s, t, mask=m), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(scores, teacher, mask), LOSSES[name](scores, teacher, mask=mask))
    teacher[0, 1] = torch.nan
    with pytest.raises(ValueError, match="teacher_scores contains NaN"):
        compiled(scores, teacher, mask)
    with pytest.warns(tn.TeacherScoresLookLikeLabels):
        compiled(scores, torch.tensor([[2.0, 1.0, 1.0, 0.0, 3.0], [1.0, 1.0, 0.0, 0.0, 0.0]]), mask)
    torch._dynamo.reset()


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_flat_items_with_indexes_equal_the_padded_lists(name, reduction):
    # Lists of 1, 4 and 7 items, interleaved in the flat input with ids out of order; the padded
    # form holds each list's items in their flat-input order.
    gen = torch.Generator().manual_seed(5)
    sizes = {9: 4, 2: 7, 5: 1}
    ids = torch.tensor([q for q, n in sizes.items() for _ in range(n)])[torch.randperm(12, generator=gen)]
    scores = torch.randn(12, dtype=torch.float64, generator=gen)
    teacher = 3 * torch.randn(12, dtype=torch.float64, generator=gen)
    padded_scores = torch.zeros(3, 7, dtype=torch.float64)
    padded_teacher = torch.zeros(3, 7, dtype=torch.float64)
    mask = torch.zeros(3, 7, dtype=torch.bool)
    for row, q in enumerate(sorted(sizes)):  # "none" gives one value per id, ascending
        items = (ids == q).nonzero().flatten()
        padded_scores[row, : len(items)], padded_teacher[row, : len(items)] = scores[items], teacher[items]
        mask[row, : len(items)] = True
    flat_in = scores.clone().requires_grad_(True)
    padded_in = padded_scores.clone().requires_grad_(True)
    options = dict(reduction=reduction, empty="zero")
    flat_value = LOSSES[name](flat_in, teacher, indexes=ids, **options)
    padded_value = LOSSES[name](padded_in, padded_teacher, mask=mask, **options)
    torch.testing.assert_close(flat_value, padded_value, rtol=1e-9, atol=1e-12)
    flat_value.sum().backward()
    padded_value.sum().backward()
    expected = torch.zeros(12, dtype=torch.float64)
    for row, q in enumerate(sorted(sizes)):
        items = (ids == q).nonzero().flatten()
        expected[items] = padded_in.grad[row, : len(items)]
    torch.testing.assert_close(flat_in.grad, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "student, teacher, temperature",
    [
        ([8.439670684415738, -4.40550379708605e37], [8.910689153354895, -8.751884647469446], 0.5),  # 1 − σ rounds to 0
        ([-2.9710986643068127, -8.607585245133436e37], [-4.003043790914875, -8.7156761575939], 0.05),  # σ underflows
    ],
)
def test_distill_ranknet_keeps_a_tiny_teacher_weight_on_a_huge_student_difference(student, teacher, temperature):
    narrow = tn.distill_ranknet_loss(torch.tensor([student]), torch.tensor([teacher]), temperature=temperature)
    wide = tn.distill_ranknet_loss(torch.tensor([student]).double(), torch.tensor([teacher]).double(), temperature=temperature)
    assert narrow.item() == pytest.approx(wide.item(), rel=1e-4)
