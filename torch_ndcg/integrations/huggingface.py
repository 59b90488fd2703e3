"""A ``compute_metrics`` for ``transformers.Trainer`` that accumulates the ranking metric classes batch by batch.

With ``TrainingArguments(batch_eval_metrics=True, include_for_metrics=["inputs"])`` the Trainer
calls ``compute_metrics(EvalPrediction, compute_result=...)`` once per evaluation batch, with the
batch's own inputs; :class:`RankingMetrics` updates the metric classes of
:mod:`torch_ndcg.metrics` with each batch and, on the last (``compute_result=True``), returns
their values and resets them. Nothing of the evaluation set is kept but the metrics' state.

Two layouts:

* **items with query ids** (``query_ids="query_ids"``, the default): each example is one
  (query, document) item, the model gives one score per example (``[B]`` or ``[B, 1]``), the
  labels are its relevance, and the batch carries each item's integer query id under the key
  ``query_ids``. A query may span batches (the metrics' flat form, ``indexes=``). The Trainer
  keeps a dataset column only when the model's ``forward`` takes it, so give ``forward`` a
  ``query_ids=None`` argument that it ignores.
* **lists** (``query_ids=None``): each example is a whole query, the model scores its ``N``
  items (``[B, N]``) and the labels are ``[B, N]``; the label ``-100`` (the Trainer's own padding)
  marks padded items. This layout also works without ``batch_eval_metrics``.

Every value has one key form, the metric's name at its cutoff as ``NDCG(k=(1, 5, 10)).compute()``
names them: ``ndcg@1``, ``mrr@10``, ``ordered_pair_accuracy`` (no cutoff), whether the metric
has one cutoff or several (``torchmetrics.MetricCollection`` alone would name a single-cutoff
metric after its class, ``MRR``); a metric a collection was given under a name of its own keeps
that name, and the collection's ``prefix`` and ``postfix`` apply. The Trainer prefixes the keys
with ``eval_``. This module imports no ``transformers``: it reads the
``EvalPrediction`` it is given. Needs ``torchmetrics`` (the ``metrics`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from .. import metrics as _metrics  # (without torchmetrics: an ImportError that says how to install it)
from torchmetrics import Metric, MetricCollection

__all__ = ["RankingMetrics"]

#: The label value with which the Trainer pads labels (``padding_index``): a padded item.
PADDING_LABEL = -100


def _result_keys(collection: MetricCollection) -> dict[str, str]:
    """``collection.compute()``'s key of each single-cutoff metric it named after its class, and
    the key of the same value in a several-cutoff metric's result (``"MRR"`` → ``"mrr@10"``)."""

    def affixed(base: str) -> str:
        return f"{collection.prefix or ''}{base}{collection.postfix or ''}"

    renamed = {
        affixed(name): affixed(metric._result_names[0])
        for name, metric in collection.items(keep_base=True, copy_state=False)
        if isinstance(metric, _metrics._Accumulated) and not metric._many and name == type(metric).__name__
    }
    others = {affixed(name) for name in collection.keys(keep_base=True)} - set(renamed)
    clashes = sorted(set(renamed.values()) & others)
    if clashes:
        raise ValueError(f"RankingMetrics: two metrics would log under {clashes}: name them apart in the collection")
    return renamed


class RankingMetrics:
    """``compute_metrics`` for ``transformers.Trainer``: update the metrics per batch, compute on the last.

    Args:
        metrics: one metric of :mod:`torch_ndcg.metrics`, a sequence of them, or a
            ``torchmetrics.MetricCollection`` (its ``prefix`` and ``postfix`` apply).
        query_ids: the key of the items' integer query ids in the batch (the items layout), or
            ``None`` for the lists layout (one query per example). Default: ``"query_ids"``.

    Example:
        >>> import torch_ndcg as tn
        >>> from torch_ndcg.integrations.huggingface import RankingMetrics
        >>> compute_metrics = RankingMetrics(tn.metrics.NDCG(k=(1, 5, 10)))
        >>> args = TrainingArguments(  # doctest: +SKIP
        ...     "out", batch_eval_metrics=True, include_for_metrics=["inputs"])
        >>> Trainer(model, args, eval_dataset=dataset, compute_metrics=compute_metrics).evaluate()  # doctest: +SKIP
        {'eval_ndcg@1': ..., 'eval_ndcg@5': ..., 'eval_ndcg@10': ..., 'eval_loss': ..., ...}
    """

    def __init__(self, metrics: Metric | Sequence[Metric] | MetricCollection, *, query_ids: str | None = "query_ids") -> None:
        if isinstance(metrics, Metric):
            metrics = [metrics]
        self.metrics = metrics if isinstance(metrics, MetricCollection) else MetricCollection(list(metrics))
        self._keys = _result_keys(self.metrics)
        if query_ids is not None and not isinstance(query_ids, str):
            raise TypeError(f"query_ids must be the name of a key of the batch (a str) or None, got {query_ids!r}")
        self.query_ids = query_ids

    def __call__(self, prediction: Any, compute_result: bool = True) -> dict[str, float]:
        """Add one batch's scores (``prediction.predictions``), labels (``prediction.label_ids``)
        and, for items, query ids (``prediction.inputs[query_ids]``); with ``compute_result``,
        return the metrics over every batch since the last result, and start again."""
        scores, labels = prediction.predictions, prediction.label_ids
        if isinstance(scores, (tuple, list)):
            raise ValueError(
                f"RankingMetrics needs one score tensor, but the model returned {len(scores)} outputs; keep the "
                "scores with Trainer(preprocess_logits_for_metrics=lambda logits, labels: logits[0])"
            )
        scores, labels = torch.as_tensor(scores), torch.as_tensor(labels)
        self.metrics.to(scores.device)
        if self.query_ids is None:
            mask = labels != PADDING_LABEL
            self.metrics.update(scores, labels.where(mask, 0), mask=mask)
        else:
            ids = self._ids(prediction.inputs)
            if scores.dim() == 2 and scores.shape[-1] == 1:
                scores = scores.squeeze(-1)
            if scores.shape != ids.shape or labels.shape != ids.shape:
                raise ValueError(
                    f"RankingMetrics takes one score and one label per item: scores {tuple(scores.shape)}, labels "
                    f"{tuple(labels.shape)} and {self.query_ids!r} {tuple(ids.shape)} differ. Under several "
                    "processes the Trainer gathers the scores and labels of every process but not the inputs: "
                    "evaluate on one process, or use the lists layout (query_ids=None)"
                )
            mask = labels != PADDING_LABEL
            self.metrics.update(scores, labels.where(mask, 0), indexes=ids.to(scores.device), mask=mask)
        if not compute_result:
            return {}
        results = self.metrics.compute()
        self.metrics.reset()
        return {self._keys.get(key, key): value.item() for key, value in results.items()}

    def _ids(self, inputs: Any) -> Tensor:
        if not isinstance(inputs, Mapping):
            raise ValueError(
                "RankingMetrics reads the query ids from the batch's inputs, which the Trainer passes only with "
                "TrainingArguments(batch_eval_metrics=True, include_for_metrics=['inputs'])"
            )
        if self.query_ids not in inputs:
            raise ValueError(
                f"the batch has no {self.query_ids!r} (its keys: {sorted(inputs)}): the Trainer keeps a dataset column "
                f"only when the model's forward takes it, so give forward a {self.query_ids}=None argument"
            )
        return torch.as_tensor(inputs[self.query_ids]).reshape(-1)
