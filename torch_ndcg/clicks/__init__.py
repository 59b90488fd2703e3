"""Learning to rank from clicks: click models, examination propensities, unbiased losses and metrics.

The pieces are separate and swappable; a ranker's loss sees only a :class:`Clicks` target (the
clicks and the propensities they were logged under):

* :mod:`.models`: simulated clicks on logged rankings (``pbm_clicks``, ``cascade_clicks``,
  ``dcm_clicks``), returning the true propensities too;
* :mod:`.propensity`: examination propensities estimated from randomised swaps
  (``propensities_from_swaps``), from logs alone (``regression_em``) or jointly with the ranker
  (``DualLearning``);
* :mod:`.losses`: inverse-propensity-weighted forms of the listwise and NDCG losses;
* :mod:`.metrics`: inverse-propensity-weighted DCG@k / NDCG@k for offline evaluation from clicks.
"""

from .models import cascade_clicks, dcm_clicks, logged_ranks, pbm_clicks
from .target import Clicks

__all__ = ["Clicks", "cascade_clicks", "dcm_clicks", "logged_ranks", "pbm_clicks"]
from .propensity import DualLearning, EMNotConverged, propensities_from_swaps, regression_em, swap_intervention

__all__ += ["DualLearning", "EMNotConverged", "propensities_from_swaps", "regression_em", "swap_intervention"]
from .losses import ips_approx_ndcg_loss, ips_lambda_loss, ips_neural_ndcg_loss, ips_softmax_loss

__all__ += ["ips_approx_ndcg_loss", "ips_lambda_loss", "ips_neural_ndcg_loss", "ips_softmax_loss"]
from .metrics import ips_dcg, ips_ndcg

__all__ += ["ips_dcg", "ips_ndcg"]
