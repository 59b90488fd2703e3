"""Adapters for the places where rankers are trained; each imports its package only when imported.

* :mod:`torch_ndcg.integrations.sentence_transformers`: the losses as
  ``CrossEncoderTrainer`` losses, and a drop-in ``CrossEncoderRerankingEvaluator`` that scores
  every query in one batched call (``pip install 'sentence-transformers[train]'``).
* :mod:`torch_ndcg.integrations.huggingface`: ``RankingMetrics``, a ``compute_metrics`` for
  ``transformers.Trainer`` that accumulates the metric classes batch by batch
  (``pip install transformers torchmetrics``).

Lightning needs no adapter: a ``torchmetrics.MetricCollection`` with ``prefix="val/"`` gives the
metric classes distinct keys per stage (see :mod:`torch_ndcg.metrics`).
"""
