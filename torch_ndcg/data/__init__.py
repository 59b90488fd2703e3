"""Ranking data: a LETOR / SVMlight reader, a synthetic default, padded batches; and recommender
interaction logs (MovieLens-style files) split by time into full-catalogue rows.

>>> from torch_ndcg.data import synthetic_letor
>>> splits = synthetic_letor((8, 2, 2), num_features=4, list_length=(5, 10), seed=0)
>>> features, relevance, mask = next(splits["train"].batches(4))  # [4, N, 4], [4, N], [4, N]
"""

from .batching import Batch, RankingDataset, pad_batch
from .interactions import CatalogueSplits, Interactions
from .letor import find_fold_files, read_letor, read_letor_fold
from .movielens import read_interactions
from .synthetic import synthetic_letor

__all__ = [
    "Batch", "CatalogueSplits", "Interactions", "RankingDataset", "find_fold_files", "pad_batch", "read_interactions",
    "read_letor", "read_letor_fold", "synthetic_letor",
]
