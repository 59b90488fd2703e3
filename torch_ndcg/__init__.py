"""torch_ndcg: exact, batched ranking metrics and differentiable NDCG losses for PyTorch.

The metrics and the losses share one definition of gain, discount and cutoff
(:mod:`torch_ndcg.definitions`), so the number a loss optimises is the number a metric reports.
"""

from .definitions import exp2_gain, linear_gain, log2_discount
from .dense import average_precision, cg, dcg, hit_rate, idcg, mrr, ndcg, precision, recall
from .grouped import (
    grouped_average_precision,
    grouped_dcg,
    grouped_hit_rate,
    grouped_mrr,
    grouped_ndcg,
    grouped_precision,
    grouped_recall,
)
from .losses import ApproxNDCGLoss, NeuralNDCGLoss, approx_ndcg, approx_ndcg_loss, neural_ndcg, neural_ndcg_loss
from .losses import LambdaLoss, ListMLELoss, ListNetLoss, PairwiseHingeLoss, RankNetLoss, SoftmaxLoss
from .losses import lambda_loss, listmle_loss, listnet_loss, pairwise_hinge_loss, ranknet_loss, softmax_loss
from .ranked import (
    from_lists,
    ranked_average_precision,
    ranked_dcg,
    ranked_hit_rate,
    ranked_mrr,
    ranked_ndcg,
    ranked_precision,
    ranked_recall,
)

__all__ = [
    "ApproxNDCGLoss",
    "NeuralNDCGLoss",
    "approx_ndcg",
    "approx_ndcg_loss",
    "neural_ndcg",
    "neural_ndcg_loss",
    "LambdaLoss",
    "ListMLELoss",
    "ListNetLoss",
    "PairwiseHingeLoss",
    "RankNetLoss",
    "SoftmaxLoss",
    "lambda_loss",
    "listmle_loss",
    "listnet_loss",
    "pairwise_hinge_loss",
    "ranknet_loss",
    "softmax_loss",
    "average_precision",
    "cg",
    "dcg",
    "exp2_gain",
    "hit_rate",
    "idcg",
    "linear_gain",
    "log2_discount",
    "mrr",
    "ndcg",
    "precision",
    "recall",
    "from_lists",
    "grouped_average_precision",
    "grouped_dcg",
    "grouped_hit_rate",
    "grouped_mrr",
    "grouped_ndcg",
    "grouped_precision",
    "grouped_recall",
    "ranked_average_precision",
    "ranked_dcg",
    "ranked_hit_rate",
    "ranked_mrr",
    "ranked_ndcg",
    "ranked_precision",
    "ranked_recall",
]

__version__ = "0.1.0"

# The stateful classes need the optional torchmetrics; importing them lazily keeps
# ``import torch_ndcg`` and the functional API free of it.
_METRIC_CLASSES = frozenset({
    "NDCG", "DCG", "MRR", "Precision", "Recall", "HitRate", "AveragePrecision",
    "RankedNDCG", "RankedDCG", "RankedMRR", "RankedPrecision", "RankedRecall", "RankedHitRate",
    "RankedAveragePrecision",
})


def __getattr__(name: str) -> object:
    if name in _METRIC_CLASSES:
        from . import metrics  # raises ImportError naming `pip install torch-ndcg[metrics]`

        return getattr(metrics, name)
    raise AttributeError(f"module 'torch_ndcg' has no attribute {name!r}")
