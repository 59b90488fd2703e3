"""torch_ndcg: exact, batched ranking metrics and differentiable NDCG losses for PyTorch.

The metrics and the losses share one definition of gain, discount and cutoff
(:mod:`torch_ndcg.definitions`), so the number a loss optimises is the number a metric reports.

* ``tn.ndcg``, ``tn.dcg``, ``tn.mrr``, … score dense ``[..., N]`` lists, or flat items with
  ``indexes=`` query ids (:mod:`torch_ndcg.functional`); ``tn.ordered_pair_accuracy`` counts
  correctly ordered pairs (:mod:`torch_ndcg.pairs`).
* ``tn.ranked.ndcg``, … score recommended id lists against a ground truth (:mod:`torch_ndcg.ranked`).
* ``tn.metrics.NDCG``, … are the stateful TorchMetrics classes (they need ``torchmetrics``:
  the ``metrics`` extra; imported on first use).
* ``tn.neural_ndcg_loss``, ``tn.approx_ndcg_loss`` and their modules are the smooth losses
  (``tn.neuralsort_ndcg_loss`` for long lists); ``tn.mrr_loss``, ``tn.recall_loss``, … and their
  modules (``tn.MRRLoss``, ``tn.RecallLoss``, …) are every ranked metric's smooth twin, the metric
  plus a relaxation (:mod:`torch_ndcg.losses.twins`);
  ``tn.listnet_loss``, ``tn.lambda_loss``, … the standard ranking losses, on the same inputs
  (:mod:`torch_ndcg.losses`); ``tn.backends()`` tells which implementation of them runs, and why.
* :mod:`tn.sampled <torch_ndcg.losses.sampled>` trains past one scored catalogue: sampled
  softmax with the logQ correction, in-batch softmax (InfoNCE), BPR, gBCE and a sampled smooth
  NDCG@k on sampled negatives, with negatives shared across ``torch.distributed`` ranks;
  :mod:`torch_ndcg.retrieval` finds each query's top items in a catalogue of embeddings.
* ``tn.distill_listnet_loss``, ``tn.margin_mse_loss``, ``tn.adr_mse_loss``, … distil a teacher's
  real-valued scores (``teacher_scores``) into a student (:mod:`torch_ndcg.losses.distill`).
* :mod:`torch_ndcg.clicks` learns from clicks: click models, propensity estimation, and the
  inverse-propensity-weighted losses and metrics on a ``tn.Clicks`` target.
* :mod:`torch_ndcg.data` reads LETOR files and pads queries into batches; :mod:`torch_ndcg.trec`
  evaluates TREC runs as trec_eval does.
* :mod:`torch_ndcg.integrations` fits them into sentence-transformers' ``CrossEncoderTrainer``
  and the Hugging Face ``Trainer`` (each module needs its package, imported only with it).

Every convention that changes a number (gain, ties, empty queries, cutoffs), against
scikit-learn, trec_eval, torchmetrics, rax and allRank, is in :mod:`torch_ndcg.conventions`.
"""

import importlib as _importlib
import typing as _typing

from . import clicks, ranked, retrieval
from .definitions import exp2_gain, linear_gain, log2_discount
from .functional import average_precision, cg, dcg, hit_rate, idcg, mrr, ndcg, precision, rbp, recall
from .losses import ApproxNDCGLoss, NeuralNDCGLoss, approx_ndcg, approx_ndcg_loss, neural_ndcg, neural_ndcg_loss
from .losses import LambdaLoss, ListMLELoss, ListNetLoss, PairwiseHingeLoss, RankNetLoss, SoftmaxLoss
from .losses import AdrMSELoss, DistillListMLELoss, DistillListNetLoss, DistillRankNetLoss, MarginMSELoss
from .losses import TeacherScoresLookLikeLabels, adr_mse_loss, distill_listmle_loss, distill_listnet_loss
from .losses import distill_ranknet_loss, margin_mse_loss
from .losses import NeuralSortNDCGLoss, neuralsort_ndcg, neuralsort_ndcg_loss
from .losses import lambda_loss, listmle_loss, listnet_loss, pairwise_hinge_loss, ranknet_loss, softmax_loss
from .losses import ApproxRanks, BoundRanks, Gumbel, NeuralSortRows, SinkhornRows
from .losses import average_precision_loss, dcg_loss, hit_rate_loss, mrr_loss, ndcg_loss, precision_loss
from .losses import rbp_loss, recall_loss
from .losses import AveragePrecisionLoss, DCGLoss, HitRateLoss, MRRLoss, NDCGLoss, PrecisionLoss, RBPLoss, RecallLoss
from .losses import pair_weights, position_weights
from .losses import sampled
from .losses.backends import backends
from .pairs import ordered_pair_accuracy
from .ranked import from_lists
from .clicks import Clicks

if _typing.TYPE_CHECKING:  # type checkers see the lazily imported modules; running code imports them on use
    from . import conventions, data, metrics, trec

# Submodules imported on first use: ``metrics`` needs the optional torchmetrics, and the readers,
# the TREC evaluator and the conventions' notes are not needed to compute a metric or a loss.
_LAZY_MODULES = frozenset({"conventions", "data", "metrics", "trec"})

__all__ = [
    "AveragePrecisionLoss",
    "DCGLoss",
    "HitRateLoss",
    "MRRLoss",
    "NDCGLoss",
    "PrecisionLoss",
    "RBPLoss",
    "RecallLoss",
    "recall_loss",
    "rbp_loss",
    "precision_loss",
    "ndcg_loss",
    "mrr_loss",
    "hit_rate_loss",
    "dcg_loss",
    "average_precision_loss",
    "SinkhornRows",
    "NeuralSortRows",
    "Gumbel",
    "BoundRanks",
    "ApproxRanks",
    "AdrMSELoss",
    "ApproxNDCGLoss",
    "Clicks",
    "DistillListMLELoss",
    "DistillListNetLoss",
    "DistillRankNetLoss",
    "MarginMSELoss",
    "TeacherScoresLookLikeLabels",
    "adr_mse_loss",
    "distill_listmle_loss",
    "distill_listnet_loss",
    "distill_ranknet_loss",
    "margin_mse_loss",
    "LambdaLoss",
    "ListMLELoss",
    "ListNetLoss",
    "NeuralNDCGLoss",
    "NeuralSortNDCGLoss",
    "PairwiseHingeLoss",
    "RankNetLoss",
    "SoftmaxLoss",
    "approx_ndcg",
    "approx_ndcg_loss",
    "average_precision",
    "backends",
    "cg",
    "clicks",
    "dcg",
    "exp2_gain",
    "from_lists",
    "hit_rate",
    "idcg",
    "lambda_loss",
    "linear_gain",
    "listmle_loss",
    "listnet_loss",
    "log2_discount",
    "metrics",
    "mrr",
    "ndcg",
    "neural_ndcg",
    "neural_ndcg_loss",
    "neuralsort_ndcg",
    "neuralsort_ndcg_loss",
    "ordered_pair_accuracy",
    "pair_weights",
    "position_weights",
    "pairwise_hinge_loss",
    "precision",
    "ranked",
    "ranknet_loss",
    "rbp",
    "recall",
    "retrieval",
    "sampled",
    "softmax_loss",
]

__version__ = "0.2.0"


def __getattr__(name: str) -> object:
    # Importing these on first use keeps ``import torch_ndcg`` and the functional API free of
    # torchmetrics and quick to import; ``tn.metrics`` without torchmetrics is an ImportError
    # that says how to install it.
    if name in _LAZY_MODULES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'torch_ndcg' has no attribute {name!r}")


def __dir__() -> list[str]:
    # What the package offers, not the modules it is built from (``tn.dense``, ``tn.engine``, …
    # stay importable but are not the API).
    return sorted(set(__all__) | _LAZY_MODULES | {"definitions", "losses", "__version__"})
