"""TREC run evaluation with trec_eval's conventions: read qrels and runs, score them as tensors.

Command line: ``python -m torch_ndcg.trec QRELS RUN [RUN ...] -m MEASURE ...`` (see ``__main__``).
"""

from .evaluation import Evaluation, evaluate
from .reader import Qrels, Run, read_qrels, read_run

__all__ = ["Evaluation", "Qrels", "Run", "evaluate", "read_qrels", "read_run"]
