"""Type checkers see every public option's name and type.

Every public function, loss module and metric class takes its options as explicit keyword
parameters, typed with the choices of :mod:`torch_ndcg.options`. This runs mypy over calls of every
public family and checks that it reports exactly the lines marked ``# E: <code>``: a misspelled or
mistyped option is a type error, on a function as on a module or class; a correct call is not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the dev extra")

ROOT = Path(__file__).resolve().parents[1]

CALLS = '''
import torch
import torch_ndcg as tn
from torch_ndcg.metrics import NDCG, RankedNDCG

s = torch.zeros(2, 3)
ids = torch.zeros(2, 3, dtype=torch.long)
tn.ndcg(s, s, (1, 3), indexes=None, gain="exp2", reduction="none", ties="first", validate=False)
tn.average_precision(s, s, 3, ap_normaliser="r", threshold=2.0, sample_weight=s[:, 0])
tn.ndcg(s, s, 3, gian="exp2")  # E: call-arg
tn.ndcg(s, s, reduction="avg")  # E: arg-type
tn.precision(s, s, adaptive_k=1.5)  # E: arg-type
tn.ranked.ndcg(ids, ids, None, 5, pad_id=-1, empty="skip")
tn.ranked.ndcg(ids, ids, validate="yes")  # E: arg-type
NDCG(k=10, empty="skip", aggregation="median", sync_on_compute=False)
NDCG(k=10, emtpy="skip")  # E: call-arg
RankedNDCG(k=5, pad_id=0, gain="exp2", compute_on_cpu=True)
RankedNDCG(k=5, reduction="sum")  # E: call-arg
tn.metrics.NDCG(k=10, ties="worse")  # E: arg-type
tn.neural_ndcg_loss(s, s, 10, temperature=0.5, impl="kernel", gain="exp2", empty="skip", validate=False)
tn.neural_ndcg_loss(s, s, 10, empty="keep")  # E: arg-type
tn.approx_ndcg(s, s, 10, discount="log2", impl="kernel")  # E: arg-type
tn.lambda_loss(s, s, 10, weighting="lambdarank", gain="exp2", discount="log2", impl="streaming", empty="keep")
tn.lambda_loss(s, s, 10, temperature=1.0)  # E: call-arg
tn.listnet_loss(s, s, mask=None, gain="exp2", reduction="sum")
tn.listmle_loss(s, s, gain="exp2")  # E: call-arg
tn.ranknet_loss(s, s, sigma=2.0, impl="kernel")  # E: arg-type
tn.pairwise_hinge_loss(s, s, margin=0.5, reduction="none", impl="dense")
tn.mrr(s, s, 3, gain="exp2")  # E: call-arg
tn.neural_ndcg_loss(s, s, 10, temprature=0.5)  # E: call-arg
tn.approx_ndcg_loss(s, s, 10, temperature=0.5, validate=False)
tn.softmax_loss(s, s, gian="exp2")  # E: call-arg
tn.NeuralNDCGLoss(k=10, temperature=0.5, impl="kernel", gain="exp2")(s, s, mask=None)
tn.NeuralNDCGLoss(k=10, temprature=0.5)  # E: call-arg
tn.NeuralNDCGLoss(k=10, impl="gpu")  # E: arg-type
tn.ApproxNDCGLoss(k=10, sinkhorn_iters=5)  # E: call-arg
tn.LambdaLoss(k=10, weighting="lambdarnk")  # E: arg-type
tn.ListNetLoss(gain="exp2", empty="keep")
tn.ListNetLoss(k=3)  # E: call-arg
tn.RankNetLoss(sigma=2.0, impl="kernel")  # E: arg-type
tn.PairwiseHingeLoss(margn=0.5)  # E: call-arg
tn.ListMLELoss(generator=None, reduction="sum")
tn.MarginMSELoss(pairs="first", empty="zero")(s, s, mask=None)
tn.MarginMSELoss(pairs="some")  # E: arg-type
tn.AdrMSELoss(temperature=0.5, discount=None, impl="streaming")
tn.AdrMSELoss(temprature=0.5)  # E: call-arg
tn.MRRLoss(10, threshold=1.0, relaxation="neuralsort")(s, s, mask=None)
tn.NDCGLoss(10, relaxation=tn.ApproxRanks(temperature=0.5), gain="exp2")
tn.MRRLoss(10, gain="exp2")  # E: call-arg
tn.NDCGLoss(relaxation="sigmoid")  # E: arg-type
tn.RBPLoss(persistence=0.5, empty="skip")  # E: call-arg
tn.AveragePrecisionLoss(ap_normaliser="R")  # E: arg-type
tn.distill_listnet_loss(s, s, temperature=2.0, empty="keep")
tn.margin_mse_loss(s, s, pairs="every")  # E: arg-type
tn.metrics.MRR(k=10, gain="exp2")
tn.metrics.OrderedPairAccuracy(ties="average", sync_on_compute=False)
tn.metrics.OrderedPairAccuracy(tie="average")  # E: call-arg
'''


@pytest.mark.slow
def test_mypy_reports_exactly_the_bad_options(tmp_path, monkeypatch):
    snippet = tmp_path / "calls.py"
    snippet.write_text(CALLS)
    expected = {
        (number, match.group(1))
        for number, line in enumerate(CALLS.splitlines(), start=1)
        if (match := re.search(r"# E: ([\w-]+)", line))
    }
    monkeypatch.setenv("MYPYPATH", str(ROOT))  # an editable install hides the package from mypy
    stdout, stderr, _ = mypy_api.run(
        [str(snippet), "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"]
    )
    reported = {
        (int(match.group(1)), match.group(2))
        for match in re.finditer(r"calls\.py:(\d+): error: .*\[([\w-]+)\]", stdout)
    }
    assert reported == expected, stdout + stderr
