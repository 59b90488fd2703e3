"""torch_ndcg: exact, batched ranking metrics and differentiable NDCG losses for PyTorch.

The metrics and the losses share one definition of gain, discount and cutoff
(:mod:`torch_ndcg.definitions`), so the number a loss optimises is the number a metric reports.
"""

from .definitions import exp2_gain, linear_gain, log2_discount
from .dense import average_precision, cg, dcg, hit_rate, idcg, mrr, ndcg, precision, recall

__all__ = [
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
]

__version__ = "0.1.0"
