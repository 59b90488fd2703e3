"""Ranking losses past one scored catalogue: a query's positives against sampled negatives, or
against the other queries' positives in the batch (in-batch negatives), with the sampling
corrected, and negatives shared across ``torch.distributed`` ranks.

One input, :class:`SampledLists` (:mod:`.lists`: shapes, masks, the logQ correction), built from
a ``[B, 1 + m]`` table (:meth:`SampledLists.from_table`) or from query and item embeddings
(:meth:`SampledLists.in_batch`). The losses (:mod:`.losses`): ``sampled_softmax_loss`` (with the
logQ correction), ``in_batch_softmax_loss`` (InfoNCE), ``bpr_loss``, ``gbce_loss`` and
``sampled_ndcg_loss`` (a smooth NDCG@k with sampling-corrected ranks, on the metrics' gain and
discount). ``gather_negatives`` (:mod:`.distributed`) shares items across ranks.
"""

from .distributed import gather_negatives
from .lists import SampledLists
from .losses import bpr_loss, gbce_beta, gbce_loss, in_batch_softmax_loss, sampled_ndcg_loss, sampled_softmax_loss

__all__ = [
    "SampledLists",
    "bpr_loss",
    "gather_negatives",
    "gbce_beta",
    "gbce_loss",
    "in_batch_softmax_loss",
    "sampled_ndcg_loss",
    "sampled_softmax_loss",
]
