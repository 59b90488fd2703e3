"""Differentiable ranking losses on the inputs and definitions of the metrics.

``neural_ndcg`` / ``approx_ndcg`` are the smooth NDCGs, ``*_loss`` are ``1 − NDCG``, and the
``*Loss`` classes are their ``torch.nn.Module`` forms. Each runs dense (``[B, N, N]`` tensors,
the readable reference) or streaming (O(B·N) memory, identical values and gradients);
NeuralNDCG also runs on the kernel path (the NeuralSort kernel built once per list, Sinkhorn as
its scalings), the default on CPU. For long lists (a whole catalogue per user),
``neuralsort_ndcg`` relaxes the sort by NeuralSort's top ``k`` rows alone (no Sinkhorn), in
O(N log N + k·N).

Every ranked metric has a smooth twin, and each is a metric plus a relaxation
(:mod:`.twins`): ``ndcg_loss``, ``dcg_loss``, ``mrr_loss``, ``precision_loss``,
``recall_loss``, ``hit_rate_loss``, ``average_precision_loss`` and ``rbp_loss`` take
``relaxation=``, a name or an object (their modules: ``NDCGLoss``, ``DCGLoss``, ``MRRLoss``,
``PrecisionLoss``, ``RecallLoss``, ``HitRateLoss``, ``AveragePrecisionLoss``, ``RBPLoss``). The metric is defined once, over ranks, in
:mod:`torch_ndcg.over_ranks` (the exact metric on exact ranks); the relaxations live in
:mod:`.relaxations` and are chosen in :mod:`.relaxations.choices`: approximate ranks
(``ApproxRanks``), their hinge bound (``BoundRanks``), NeuralSort's top rows
(``NeuralSortRows``), Sinkhorn (``SinkhornRows``) and Gumbel-perturbed scores around any of them
(``Gumbel``). ``approx_ndcg_loss``, ``neuralsort_ndcg_loss`` and ``neural_ndcg_loss`` are the
NDCG twins of the approximate ranks, NeuralSort and Sinkhorn, with their own options.

The field's standard losses take the same inputs: ``listnet_loss``, ``softmax_loss`` and
``listmle_loss`` (listwise), ``ranknet_loss`` and ``pairwise_hinge_loss`` (pairwise, streamed
over blocks of pairs for long lists) and ``lambda_loss`` (LambdaLoss on the metric's NDCG@k).
The pairwise losses' ``weighting=`` takes pair weights as plain functions (:mod:`.pair_weights`:
label difference, LambdaRank's |ΔNDCG|, DCG2 and its top-n form, NDCG-Loss1/2/2++, or one's
own), and ListMLE's takes position weights the same way (:mod:`.position_weights`: PListMLE's).

Every loss also takes the metrics' flat layout, ``indexes=`` (one query id per item, any order
and sizes): the same values and gradients as the padded lists, at the cost of the real lists
(:mod:`.layout`).

The distillation losses take a teacher's real-valued scores (``teacher_scores``) as the target
instead of labels: ``distill_listnet_loss``, ``distill_listmle_loss``, ``distill_ranknet_loss``,
``margin_mse_loss`` and ``adr_mse_loss`` (:mod:`.distill`).

Every loss and ``impl`` works under ``torch.func``: ``grad`` and ``jacrev`` give autograd's
gradient (the streaming and kernel paths' backward is then the dense reference's, at its
memory, as under ``create_graph=True``), and ``vmap`` over leading axes gives the loop of single
calls, each batch entry checked as a call of its own (:mod:`.transforms`). Refused, with the
way out named: ``tol`` under ``grad`` (no second derivative), and ``validate=True`` with a
callable ``gain`` under ``vmap`` (its values are checked on the host). Forward mode (``jvp``,
``jacfwd``, ``hessian``) runs where no custom autograd Function does (the dense paths, ListNet,
softmax, the other distillation losses); a Hessian is ``jacrev(jacrev(loss))`` on every path.
"""

from .approx import approx_ndcg, approx_ndcg_loss
from .distill import (
    TeacherScoresLookLikeLabels,
    adr_mse_loss,
    distill_listmle_loss,
    distill_listnet_loss,
    distill_ranknet_loss,
    margin_mse_loss,
)
from .lambdaloss import lambda_loss
from .listwise import listmle_loss, listnet_loss, softmax_loss
from .modules import (
    AdrMSELoss,
    ApproxNDCGLoss,
    AveragePrecisionLoss,
    DCGLoss,
    DistillListMLELoss,
    DistillListNetLoss,
    DistillRankNetLoss,
    HitRateLoss,
    LambdaLoss,
    ListMLELoss,
    ListNetLoss,
    MarginMSELoss,
    MRRLoss,
    NDCGLoss,
    NeuralNDCGLoss,
    NeuralSortNDCGLoss,
    PairwiseHingeLoss,
    PrecisionLoss,
    RankNetLoss,
    RBPLoss,
    RecallLoss,
    SoftmaxLoss,
)
from .neural import neural_ndcg, neural_ndcg_loss
from .neuralsort import neuralsort_ndcg, neuralsort_ndcg_loss
from .pairwise import pairwise_hinge_loss, ranknet_loss
from .relaxations.choices import ApproxRanks, BoundRanks, Gumbel, NeuralSortRows, SinkhornRows
from .twins import (
    average_precision_loss,
    dcg_loss,
    hit_rate_loss,
    mrr_loss,
    ndcg_loss,
    precision_loss,
    rbp_loss,
    recall_loss,
)
from . import pair_weights, position_weights

__all__ = ["ApproxNDCGLoss", "NeuralNDCGLoss", "approx_ndcg", "approx_ndcg_loss", "neural_ndcg", "neural_ndcg_loss"]
__all__ += ["LambdaLoss", "ListMLELoss", "ListNetLoss", "PairwiseHingeLoss", "RankNetLoss", "SoftmaxLoss"]
__all__ += ["lambda_loss", "listmle_loss", "listnet_loss", "pairwise_hinge_loss", "ranknet_loss", "softmax_loss"]
__all__ += ["AdrMSELoss", "DistillListMLELoss", "DistillListNetLoss", "DistillRankNetLoss", "MarginMSELoss"]
__all__ += ["TeacherScoresLookLikeLabels", "adr_mse_loss", "distill_listmle_loss", "distill_listnet_loss"]
__all__ += ["distill_ranknet_loss", "margin_mse_loss"]
__all__ += ["NeuralSortNDCGLoss", "neuralsort_ndcg", "neuralsort_ndcg_loss"]
__all__ += ["ApproxRanks", "BoundRanks", "Gumbel", "NeuralSortRows", "SinkhornRows"]
__all__ += ["average_precision_loss", "dcg_loss", "hit_rate_loss", "mrr_loss", "ndcg_loss", "precision_loss"]
__all__ += ["rbp_loss", "recall_loss"]
__all__ += ["AveragePrecisionLoss", "DCGLoss", "HitRateLoss", "MRRLoss", "NDCGLoss", "PrecisionLoss", "RBPLoss"]
__all__ += ["RecallLoss"]
