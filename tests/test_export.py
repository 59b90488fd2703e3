"""Every metric and loss function under ``torch.export`` with its default checks (``validate=True``),
over static shapes: the exported program equals eager, and still refuses bad values as eager does.

The value checks run inside registered operators (:mod:`torch_ndcg.registered_checks`), which
export keeps as opaque calls instead of failing on a data-dependent read."""

from __future__ import annotations

import warnings

import pytest
import torch

import torch_ndcg as tn
from torch_ndcg.conventions import LETOR

pytestmark = pytest.mark.slow


def _teacher(s, r):
    return s * 0.5 + r  # real-valued teacher scores for the distillation losses


# Every public function, called on (scores, relevance) of one static shape with its defaults.
FUNCTIONS = {
    "ndcg": lambda s, r: tn.ndcg(s, r, 3),
    "ndcg_letor": lambda s, r: tn.ndcg(s, r, (3, 10), **LETOR["ndcg"]),  # 6 items: @10 is 0
    "dcg": lambda s, r: tn.dcg(s, r, 3),
    "idcg": lambda s, r: tn.idcg(r, 3),
    "cg": lambda s, r: tn.cg(s, r, 3),
    "mrr": lambda s, r: tn.mrr(s, r),
    "precision": lambda s, r: tn.precision(s, r, 3),
    "recall": lambda s, r: tn.recall(s, r, 3),
    "hit_rate": lambda s, r: tn.hit_rate(s, r, 3),
    "average_precision": lambda s, r: tn.average_precision(s, r),
    "ordered_pair_accuracy": lambda s, r: tn.ordered_pair_accuracy(s, r),
    "approx_ndcg": lambda s, r: tn.approx_ndcg(s, r, 3),
    "neural_ndcg": lambda s, r: tn.neural_ndcg(s, r, 3, sinkhorn_iters=4),
    "neural_ndcg_loss": lambda s, r: tn.neural_ndcg_loss(s, r, 3, sinkhorn_iters=4),
    "approx_ndcg_loss": lambda s, r: tn.approx_ndcg_loss(s, r, 3),
    "listnet_loss": tn.listnet_loss,
    "listmle_loss": tn.listmle_loss,
    "softmax_loss": tn.softmax_loss,
    "ranknet_loss": tn.ranknet_loss,
    "lambda_loss": lambda s, r: tn.lambda_loss(s, r, 3),
    "pairwise_hinge_loss": tn.pairwise_hinge_loss,
    "ranknet_loss[dcg2]": lambda s, r: tn.ranknet_loss(s, r, weighting="dcg2", k=3, gain="exp2"),
    "pairwise_hinge_loss[label_difference]": lambda s, r: tn.pairwise_hinge_loss(s, r, weighting="label_difference"),
    "lambda_loss[ndcg_loss1]": lambda s, r: tn.lambda_loss(s, r, 3, weighting="ndcg_loss1"),
    "listmle_loss[plistmle]": lambda s, r: tn.listmle_loss(s, r, weighting="plistmle"),
    "distill_listnet_loss": lambda s, r: tn.distill_listnet_loss(s, _teacher(s, r)),
    "distill_listmle_loss": lambda s, r: tn.distill_listmle_loss(s, _teacher(s, r)),
    "distill_ranknet_loss": lambda s, r: tn.distill_ranknet_loss(s, _teacher(s, r)),
    "margin_mse_loss": lambda s, r: tn.margin_mse_loss(s, _teacher(s, r)),
    "adr_mse_loss": lambda s, r: tn.adr_mse_loss(s, _teacher(s, r)),
    "ndcg_loss": lambda s, r: tn.ndcg_loss(s, r, 3),
    "dcg_loss": lambda s, r: tn.dcg_loss(s, r, 3, relaxation="bound"),
    "mrr_loss": lambda s, r: tn.mrr_loss(s, r, 3, relaxation="neuralsort"),
    "precision_loss": lambda s, r: tn.precision_loss(s, r, 3, relaxation=tn.ApproxRanks(cutoff="midway")),
    "recall_loss": lambda s, r: tn.recall_loss(s, r, 3, relaxation=tn.SinkhornRows(sinkhorn_iters=4)),
    "hit_rate_loss": lambda s, r: tn.hit_rate_loss(s, r, 3, relaxation=tn.SinkhornRows(sinkhorn_iters=4)),
    "average_precision_loss": lambda s, r: tn.average_precision_loss(s, r, 3),
    "rbp_loss": lambda s, r: tn.rbp_loss(s, r, 3, relaxation="neuralsort"),
}
# The ranked metrics take recommended ids and a ground truth, already in order (no ties).
RANKED_LETOR = {name: value for name, value in LETOR["ndcg"].items() if name != "ties"}
RANKED = {
    "ranked.ndcg": lambda i, t, r: tn.ranked.ndcg(i, t, r, 3),
    "ranked.ndcg_letor": lambda i, t, r: tn.ranked.ndcg(i, t, r, (3, 5), **RANKED_LETOR),
    "ranked.dcg": lambda i, t, r: tn.ranked.dcg(i, t, r, 3),
    "ranked.mrr": lambda i, t, r: tn.ranked.mrr(i, t, r),
    "ranked.precision": lambda i, t, r: tn.ranked.precision(i, t, r, 3),
    "ranked.recall": lambda i, t, r: tn.ranked.recall(i, t, r, 3),
    "ranked.hit_rate": lambda i, t, r: tn.ranked.hit_rate(i, t, r, 3),
    "ranked.average_precision": lambda i, t, r: tn.ranked.average_precision(i, t, r),
}


class _Call(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *tensors):
        return self.function(*tensors)


def _exported(function, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own notes while tracing
        return torch.export.export(_Call(function), inputs).module()


def _scored():
    gen = torch.Generator().manual_seed(0)
    return torch.randn(3, 6, dtype=torch.float64, generator=gen), torch.randint(0, 4, (3, 6), generator=gen)


def test_export_of_ndcg_with_default_checks_equals_eager():
    scores, relevance = torch.randn(4, 12), torch.randint(0, 3, (4, 12))
    program = _exported(lambda s, r: tn.ndcg(s, r, 10), (scores, relevance))
    torch.testing.assert_close(program(scores, relevance), tn.ndcg(scores, relevance, 10), rtol=0, atol=0)
    bad = scores.clone()
    bad[0, 0] = torch.nan
    with pytest.raises(ValueError, match="scores contains NaN"):
        program(bad, relevance)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_function_exports_with_default_checks_and_equals_eager(name):
    scores, relevance = _scored()
    program = _exported(FUNCTIONS[name], (scores, relevance))
    torch.testing.assert_close(program(scores, relevance), FUNCTIONS[name](scores, relevance), rtol=1e-12, atol=1e-12)
    other = scores.flip(-1)  # the program holds no value of the inputs it was traced with
    torch.testing.assert_close(program(other, relevance), FUNCTIONS[name](other, relevance), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(RANKED))
def test_every_ranked_metric_exports_with_default_checks_and_equals_eager(name):
    ids = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    target, labels = torch.tensor([[2, 9], [5, 6]]), torch.tensor([[1.0, 2.0], [1.0, 1.0]])
    program = _exported(RANKED[name], (ids, target, labels))
    torch.testing.assert_close(program(ids, target, labels), RANKED[name](ids, target, labels), rtol=0, atol=0)
    with pytest.raises(ValueError, match="target"):
        program(ids, torch.tensor([[2, 2], [5, 6]]), labels)  # one item listed twice in a truth
