"""Every loss under ``torch.compile`` and ``torch.export``, equal to eager (float64, values and
gradients), and the kernel path's registered operator passes ``torch.library.opcheck``.

Small shapes and the ``aot_eager`` backend (dynamo + FakeTensor + AOTAutograd, without code
generation) keep this fast; one case runs the default backend, Inductor."""

from __future__ import annotations

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.losses.relaxations.sinkhorn import op as sinkhorn_op  # noqa: F401  (registers torch_ndcg::sinkhorn_dcg)

LOSSES = {
    "neural_ndcg_loss": lambda s, r, **o: tn.neural_ndcg_loss(s, r, 3, sinkhorn_iters=4, **o),
    "approx_ndcg_loss": lambda s, r, **o: tn.approx_ndcg_loss(s, r, 3, **o),
    "listnet_loss": tn.listnet_loss,
    "listmle_loss": tn.listmle_loss,
    "softmax_loss": tn.softmax_loss,
    "ranknet_loss": tn.ranknet_loss,
    "lambda_loss": lambda s, r, **o: tn.lambda_loss(s, r, 3, **o),
    "pairwise_hinge_loss": tn.pairwise_hinge_loss,
    # pair weights beyond the defaults (torch_ndcg.pair_weights): the general weighted path
    "ranknet_loss[dcg2]": lambda s, r, **o: tn.ranknet_loss(s, r, weighting="dcg2", k=3, gain="exp2", **o),
    "pairwise_hinge_loss[label_difference]": lambda s, r, **o: tn.pairwise_hinge_loss(
        s, r, weighting="label_difference", **o
    ),
    "lambda_loss[ndcg_loss1]": lambda s, r, **o: tn.lambda_loss(s, r, 3, weighting="ndcg_loss1", **o),
    "listmle_loss[plistmle]": lambda s, r, **o: tn.listmle_loss(s, r, weighting="plistmle", **o),
    "lambda_loss[own function]": lambda s, r, **o: tn.lambda_loss(
        s, r, weighting=lambda pairs: pairs.gain_i * pairs.discount(pairs.rank_j), **o
    ),
}
# Every metric's twin, with each relaxation.
TWIN_RELAXATIONS = {
    "approx": tn.ApproxRanks(),
    "approx midway": tn.ApproxRanks(cutoff="midway"),
    "bound": tn.BoundRanks(),
    "neuralsort": tn.NeuralSortRows(),
    "sinkhorn": tn.SinkhornRows(sinkhorn_iters=4),
    "gumbel": tn.Gumbel(tn.ApproxRanks(), samples=3),
}
TWINS = ["ndcg_loss", "dcg_loss", "mrr_loss", "precision_loss", "recall_loss", "hit_rate_loss",
         "average_precision_loss", "rbp_loss"]  # fmt: skip


def _inputs(masked: bool):
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 6, dtype=torch.float64, generator=gen)
    relevance = torch.randint(0, 4, (3, 6), generator=gen).double()
    mask = None
    if masked:
        mask = torch.ones(3, 6, dtype=torch.bool)
        mask[1, 4:] = False
    return scores, relevance, mask


def _value_and_grad(fn, scores, *args):
    s = scores.clone().requires_grad_()
    value = fn(s, *args)
    (grad,) = torch.autograd.grad(value, s)
    return value.detach(), grad


def _assert_same(compiled, eager):
    torch.testing.assert_close(compiled, eager, rtol=1e-9, atol=1e-9)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("fullgraph", [False, True], ids=["graph breaks allowed", "one graph"])
@pytest.mark.parametrize("name", list(LOSSES))
def test_defaults_compile_and_equal_eager(name, fullgraph):
    """With its defaults (``validate=True``) every loss compiles, and as one graph: the value
    checks run inside one registered operator, not as graph breaks."""
    loss = LOSSES[name]
    scores, relevance, mask = _inputs(masked=True)

    def fn(s, r, m):
        return loss(s, r, mask=m)

    eager = _value_and_grad(fn, scores, relevance, mask)
    compiled = torch.compile(fn, backend="aot_eager", fullgraph=fullgraph)
    _assert_same(_value_and_grad(compiled, scores, relevance, mask), eager)


@pytest.mark.slow
@pytest.mark.parametrize(
    "loss, scale",
    [(tn.ranknet_loss, "sigma"), (tn.pairwise_hinge_loss, "margin"), (tn.lambda_loss, "sigma"), (tn.lambda_loss, "mu")],
)
def test_scale_options_compile_with_dynamic_shapes_as_one_graph_and_equal_eager(loss, scale):
    # Under dynamic=True a float option is symbolic: its checks must be comparisons, not
    # math.isfinite, and the value must follow the option without a recompile.
    scores, relevance, _ = _inputs(masked=False)

    def fn(s, r, value):
        return loss(s, r, **{scale: value})

    compiled = torch.compile(fn, backend="aot_eager", dynamic=True, fullgraph=True)
    for value in (1.0, 2.5):
        _assert_same(_value_and_grad(compiled, scores, relevance, value), _value_and_grad(fn, scores, relevance, value))
    _assert_same(_value_and_grad(torch.compile(loss, backend="aot_eager", dynamic=True, fullgraph=True), scores, relevance),
                 _value_and_grad(loss, scores, relevance))  # fmt: skip


@pytest.mark.slow
def test_lambda_loss_compiles_with_inductor_and_dynamic_shapes():
    # Inductor once generated C++ that used a gather's index before declaring it, for LambdaLoss's
    # two gathers at shifted rank gaps under dynamic shapes.
    scores, relevance, _ = _inputs(masked=False)
    compiled = torch.compile(tn.lambda_loss, dynamic=True, fullgraph=True)
    torch.testing.assert_close(_value_and_grad(compiled, scores, relevance), _value_and_grad(tn.lambda_loss, scores, relevance))


# The distillation losses, on a real-valued teacher made from the same inputs.
DISTILL_LOSSES = {
    "distill_listnet_loss": lambda s, r, **o: tn.distill_listnet_loss(s, r * 0.3 - 1.0, **o),
    "distill_listmle_loss": lambda s, r, **o: tn.distill_listmle_loss(s, r * 0.3 - 1.0, **o),
    "distill_ranknet_loss": lambda s, r, **o: tn.distill_ranknet_loss(s, r * 0.3 - 1.0, **o),
    "margin_mse_loss": lambda s, r, **o: tn.margin_mse_loss(s, r * 0.3 - 1.0, **o),
    "adr_mse_loss": lambda s, r, **o: tn.adr_mse_loss(s, r * 0.3 - 1.0, **o),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LOSSES) + list(DISTILL_LOSSES))
def test_defaults_compile_with_dynamic_shapes_as_one_graph_and_equal_eager(name):
    """``dynamic=True``: one graph for symbolic sizes, equal to eager at two batch shapes."""
    loss = {**LOSSES, **DISTILL_LOSSES}[name]

    def fn(s, r, m):
        return loss(s, r, mask=m)

    compiled = torch.compile(fn, backend="aot_eager", dynamic=True, fullgraph=True)
    for rows in (3, 2):
        scores, relevance, mask = _inputs(masked=True)
        scores, relevance, mask = scores[:rows, : rows + 3], relevance[:rows, : rows + 3], mask[:rows, : rows + 3]
        _assert_same(_value_and_grad(compiled, scores, relevance, mask), _value_and_grad(fn, scores, relevance, mask))


@pytest.mark.parametrize("name", list(LOSSES))
def test_dense_layout_without_validation_compiles_as_one_graph(name):
    loss = LOSSES[name]
    scores, relevance, _ = _inputs(masked=False)

    def fn(s, r):
        return loss(s, r, validate=False)

    eager = _value_and_grad(fn, scores, relevance)
    _assert_same(_value_and_grad(torch.compile(fn, backend="aot_eager", fullgraph=True), scores, relevance), eager)


# Every twin with the default relaxation, and every relaxation with MRR's twin (the metrics
# share each relaxation's code, so the product adds nothing but time).
TWIN_CASES = [(name, "approx") for name in TWINS] + [("mrr_loss", r) for r in TWIN_RELAXATIONS if r != "approx"]


# The dynamic-shape graphs take most of this test's time: they run with the slow set.
@pytest.mark.parametrize("dynamic", [pytest.param(False, id="static"), pytest.param(True, id="dynamic", marks=pytest.mark.slow)])
@pytest.mark.parametrize(("name", "relaxation"), TWIN_CASES)
def test_every_twin_compiles_as_one_graph_and_equals_eager(name, relaxation, dynamic):
    loss = getattr(tn, name)
    scores, relevance, mask = _inputs(masked=True)
    options = {"relaxation": TWIN_RELAXATIONS[relaxation]}
    if relaxation == "gumbel":  # the same draw in both runs
        options["relaxation"] = None

    def fn(s, r, m):
        chosen = options["relaxation"] or tn.Gumbel(tn.ApproxRanks(), samples=3, generator=torch.Generator().manual_seed(0))
        return loss(s, r, 3, mask=m, relaxation=chosen)

    eager = _value_and_grad(fn, scores, relevance, mask)
    compiled = torch.compile(fn, backend="aot_eager", fullgraph=relaxation != "gumbel", dynamic=dynamic)
    _assert_same(_value_and_grad(compiled, scores, relevance, mask), eager)


# Every implementation a loss has on CPU: impl="auto" picks streaming (or kernel) for longer lists
# than the small inputs above, so each is compiled here by name.
IMPLS = {
    "neural_ndcg_loss": ("dense", "streaming", "kernel"),
    "approx_ndcg_loss": ("dense", "streaming"),
    "ranknet_loss": ("dense", "streaming"),
    "lambda_loss": ("dense", "streaming"),
    "pairwise_hinge_loss": ("dense", "streaming"),
    "ranknet_loss[dcg2]": ("dense", "streaming"),
    "pairwise_hinge_loss[label_difference]": ("dense", "streaming"),
    "lambda_loss[ndcg_loss1]": ("dense", "streaming"),
}


@pytest.mark.parametrize("name, impl", [(name, impl) for name, impls in IMPLS.items() for impl in impls])
def test_every_implementation_compiles_as_one_graph(name, impl):
    loss = LOSSES[name]
    scores, relevance, _ = _inputs(masked=False)

    def fn(s, r):
        return loss(s, r, impl=impl, validate=False)

    eager = _value_and_grad(fn, scores, relevance)
    _assert_same(_value_and_grad(torch.compile(fn, backend="aot_eager", fullgraph=True), scores, relevance), eager)


@pytest.mark.slow
def test_neural_ndcg_compiles_with_inductor_as_one_graph():
    scores, relevance, _ = _inputs(masked=False)

    def fn(s, r):
        return tn.neural_ndcg_loss(s, r, 3, sinkhorn_iters=4, validate=False)

    eager = _value_and_grad(fn, scores, relevance)
    _assert_same(_value_and_grad(torch.compile(fn, fullgraph=True), scores, relevance), eager)


class _Loss(torch.nn.Module):
    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def forward(self, scores, relevance):
        return LOSSES[self.name](scores, relevance, validate=False)


@pytest.mark.parametrize("name", list(LOSSES))
def test_export_of_the_dense_layout_equals_eager(name):
    scores, relevance, _ = _inputs(masked=False)
    exported = torch.export.export(_Loss(name), (scores, relevance))
    torch.testing.assert_close(exported.module()(scores, relevance), _Loss(name)(scores, relevance), rtol=1e-9, atol=1e-9)


def test_neural_ndcg_export_holds_the_registered_operator():
    scores, relevance, _ = _inputs(masked=False)
    exported = torch.export.export(_Loss("neural_ndcg_loss"), (scores, relevance))
    targets = {str(node.target) for node in exported.graph.nodes if node.op == "call_function"}
    assert "torch_ndcg.sinkhorn_dcg.default" in targets


def _op_samples():
    gen = torch.Generator().manual_seed(1)
    for dtype, lengths, transposed, tol in (
        (torch.float64, [5, 3, 0, 5], False, None),
        (torch.float64, [2, 4, 4], True, None),
        (torch.float32, [6, 6], False, 1e-4),
    ):
        width = max(lengths)
        values = torch.randn(len(lengths), width, dtype=dtype, generator=gen)
        weights = torch.rand(len(lengths), width, dtype=dtype, generator=gen)
        gains = torch.rand(len(lengths), width, dtype=dtype, generator=gen)
        yield (values.requires_grad_(), torch.tensor(lengths), weights, gains, 0.7, 3, transposed, tol)


@pytest.mark.parametrize("args", list(_op_samples()), ids=["ragged", "transposed", "tol"])
def test_the_sinkhorn_operator_passes_opcheck(args):
    torch.library.opcheck(torch.ops.torch_ndcg.sinkhorn_dcg.default, args)


@pytest.mark.parametrize("args", list(_op_samples()), ids=["ragged", "transposed", "tol"])
def test_plain_eager_calls_reach_the_operators_code_with_its_bits(args):
    # The autograd.Function that plain eager calls take gives the operator's values and
    # gradients exactly: the same forward and backward code behind fewer dispatch layers.
    found = []
    for route in (sinkhorn_op._Eager.apply, torch.ops.torch_ndcg.sinkhorn_dcg):
        values = args[0].detach().clone().requires_grad_()
        dcg = route(values, *args[1:])[0]
        (grad,) = torch.autograd.grad((dcg * torch.arange(1.0, len(dcg) + 1, dtype=dcg.dtype)).sum(), values)
        found.append((dcg.detach(), grad))
    for a, b in zip(*found):
        assert torch.equal(a, b)


def test_the_operator_runs_wherever_eager_is_not_plain():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    values = torch.randn(2, 5)
    assert sinkhorn_op._plain_eager(values)
    assert not sinkhorn_op._plain_eager(values.to("meta"))  # the operator's fake serves meta
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not sinkhorn_op._plain_eager(values)
    with Passing():
        assert not sinkhorn_op._plain_eager(values)
    with FakeTensorMode() as mode:
        assert not sinkhorn_op._plain_eager(mode.from_tensor(values))
    assert not torch.func.vmap(lambda v: torch.tensor(sinkhorn_op._plain_eager(v)).to(v))(values).any()
    graphs = []

    def keep(gm, _):
        graphs.append(gm)
        return gm

    scores, relevance, _ = _inputs(masked=False)
    torch.compile(lambda s, r: tn.neural_ndcg_loss(s, r, 3, validate=False), backend=keep, fullgraph=True)(scores, relevance)
    targets = {str(node.target) for gm in graphs for node in gm.graph.nodes if node.op == "call_function"}
    assert any("torch_ndcg.sinkhorn_dcg" in target for target in targets)


def test_the_operator_ignores_whatever_the_padding_holds():
    values, lengths, weights, gains, *rest = next(_op_samples())
    dirty = values.detach().clone()
    for b, n in enumerate(lengths.tolist()):
        dirty[b, n:] = torch.nan
    clean = torch.ops.torch_ndcg.sinkhorn_dcg(values.detach(), lengths, weights, gains, *rest)[0]
    torch.testing.assert_close(torch.ops.torch_ndcg.sinkhorn_dcg(dirty, lengths, weights, gains, *rest)[0], clean)


def test_autocast_runs_the_operator_in_float32():
    values, lengths, weights, gains, *rest = next(_op_samples())
    half = [t.detach().to(torch.bfloat16) for t in (values, weights, gains)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        dcg = torch.ops.torch_ndcg.sinkhorn_dcg(half[0], lengths, half[1], half[2], *rest)[0]
    assert dcg.dtype == torch.float32


@pytest.mark.parametrize("name", ["listnet_loss", "neural_ndcg_loss", "ranknet_loss"])
@pytest.mark.parametrize("bad, message", [("nan score", "scores contains NaN"), ("negative label", "relevance contains negative")])
def test_compiled_losses_refuse_bad_values_as_eager_does(name, bad, message):
    loss = LOSSES[name]
    scores, relevance, _ = _inputs(masked=False)
    if bad == "nan score":
        scores[1, 2] = torch.nan
    else:
        relevance[0, 3] = -1.0
    compiled = torch.compile(lambda s, r: loss(s, r), backend="aot_eager", fullgraph=True)
    for fn in (lambda s, r: loss(s, r), compiled):
        with pytest.raises(ValueError, match=message):
            fn(scores, relevance)


def test_compiled_losses_warn_of_swapped_arguments_as_eager_does():
    labels = torch.tensor([[0.0, 1.0, 2.0, 3.0]], dtype=torch.float64)
    probabilities = torch.tensor([[0.1, 0.4, 0.7, 0.2]], dtype=torch.float64)
    compiled = torch.compile(lambda s, r: tn.listnet_loss(s, r), backend="aot_eager", fullgraph=True)
    with pytest.warns(UserWarning, match="swapped"):
        compiled(labels, probabilities)


def test_the_check_operator_passes_opcheck():
    scores, relevance, mask = _inputs(masked=True)
    torch.library.opcheck(torch.ops.torch_ndcg.check_inputs.default, (scores, relevance, mask, "exp2"))


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("spread", [1.0, 1e4], ids=["shifted sums", "log space"])
def test_compiled_listmle_takes_either_form_as_eager_does(masked, spread):
    """Eager ListMLE picks its exact form by a host read; compiled, by a torch.cond: a list whose
    scores span more than float32's exp range takes the log-space form in both."""
    gen = torch.Generator().manual_seed(3)
    scores = torch.randn(4, 7, dtype=torch.float64, generator=gen) * spread
    relevance = torch.randint(0, 4, (4, 7), generator=gen).double()
    mask = torch.rand(4, 7, generator=gen) > 0.3 if masked else None

    def fn(s, r, m):
        return tn.listmle_loss(s, r, mask=m)

    eager = _value_and_grad(fn, scores, relevance, mask)
    compiled = _value_and_grad(torch.compile(fn, backend="aot_eager", fullgraph=True), scores, relevance, mask)
    assert torch.isfinite(eager[0]) and torch.isfinite(eager[1]).all()
    torch.testing.assert_close(compiled, eager, rtol=1e-9, atol=1e-9)
