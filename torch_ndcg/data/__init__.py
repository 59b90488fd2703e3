"""Learning-to-rank data: a LETOR / SVMlight reader, a synthetic default, padded batches.

>>> from torch_ndcg.data import synthetic_letor
>>> splits = synthetic_letor((8, 2, 2), num_features=4, list_length=(5, 10), seed=0)
>>> features, relevance, mask = next(splits["train"].batches(4))  # [4, N, 4], [4, N], [4, N]
"""

from .batching import Batch, RankingDataset, pad_batch
from .letor import find_fold_files, read_letor, read_letor_fold
from .synthetic import synthetic_letor

__all__ = ["Batch", "RankingDataset", "find_fold_files", "pad_batch", "read_letor", "read_letor_fold", "synthetic_letor"]
