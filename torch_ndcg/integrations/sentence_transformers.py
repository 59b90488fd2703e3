"""sentence-transformers' ``CrossEncoder`` trained with this library's losses and evaluated with its metrics.

The losses are ``CrossEncoderTrainer`` losses: ``loss = NeuralNDCGLoss(model, k=10)`` then
``CrossEncoderTrainer(model=model, loss=loss, ...)``, unchanged. Each holds ``self.model``, is
called as ``loss(inputs, labels, prompt=None, task=None)``, tokenizes with the model's
``preprocess``, runs the model itself, and has ``citation`` and ``get_config_dict()``; it scores
every (query, document) pair, pads the lists into ``[B, N]`` with a mask, and calls the loss
module of the same name (:class:`torch_ndcg.NeuralNDCGLoss`, …) with the options given, so the
gain, discount and ``k`` are the metrics' own. Two dataset layouts are taken:

* ``(query, [document_1, …, document_n])`` with labels ``[label_1, …, label_n]`` (the layout of
  sentence-transformers' ``ListNetLoss`` and ``LambdaLoss``; lists may differ in length);
* ``(query, document_1, …, document_n)`` columns with labels ``[label_1, …, label_n]`` (the
  layout of its ``MarginMSELoss``), n ≥ 2.

The distillation losses take a teacher's score per document as the label.

:class:`CrossEncoderRerankingEvaluator` is a drop-in for sentence-transformers' evaluator of the
same name (a subclass: the same constructor, keys and ``primary_metric``) that scores all queries
in a few padded batches instead of one scikit-learn call per query.

Needs ``pip install 'sentence-transformers[train]'`` (the ``sentence-transformers`` extra).
"""

from __future__ import annotations

import csv
import itertools
import logging
import math
import os
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from .. import functional
from ..validation import caller_stacklevel
from ..losses import modules

try:
    from sentence_transformers.cross_encoder import losses as _peer_losses
    from sentence_transformers.cross_encoder.evaluation import (
        CrossEncoderRerankingEvaluator as _SentenceTransformersRerankingEvaluator,
    )
    from sentence_transformers.util import batch_to_device, fullname
except ImportError as error:  # sentence-transformers is an optional extra
    raise ImportError(
        "torch_ndcg.integrations.sentence_transformers needs sentence-transformers; install it with: "
        "pip install 'sentence-transformers[train]' (or, in a clone of torch_ndcg: "
        "pip install '.[sentence-transformers]')"
    ) from error

__all__ = [
    "ADRMSELoss",
    "ApproxNDCGLoss",
    "CrossEncoderRerankingEvaluator",
    "DistillListMLELoss",
    "DistillListNetLoss",
    "DistillRankNetLoss",
    "LambdaLoss",
    "ListNetLoss",
    "MarginMSELoss",
    "NeuralNDCGLoss",
]

logger = logging.getLogger(__name__)


def _document_lists(inputs: Sequence[Any], name: str) -> tuple[list[str], list[list[str]]]:
    """The queries and each query's documents, from either dataset layout."""
    if len(inputs) == 2 and len(inputs[1]) and isinstance(inputs[1][0], (list, tuple)):
        return list(inputs[0]), [list(documents) for documents in inputs[1]]
    if len(inputs) >= 3:
        return list(inputs[0]), [list(row) for row in zip(*inputs[1:])]
    raise ValueError(
        f"{name} ranks lists: it takes (query, [document_1, ..., document_n]) or (query, document_1, ..., "
        f"document_n) columns with n >= 2, but got {len(inputs)} column(s) of single texts"
    )


def _label_rows(labels: Tensor | Sequence[Tensor], name: str) -> list[Tensor]:
    """One 1-D float tensor of labels per query."""
    if isinstance(labels, Tensor):
        if labels.dim() != 2:
            raise ValueError(
                f"{name} needs one label per document (a list column), but got labels of shape "
                f"{tuple(labels.shape)}"
            )
        return [row.float() for row in labels]
    return [torch.as_tensor(row).reshape(-1).float() for row in labels]


class _CrossEncoderLoss(nn.Module):
    """A loss module of the library, fed by a CrossEncoder's scores of each query's documents."""

    _criterion: type[modules._RankingLoss]
    _citation: str

    def __init__(
        self,
        model: nn.Module,
        *args: Any,
        activation_fn: nn.Module | None = None,
        mini_batch_size: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        if getattr(model, "num_labels", 1) != 1:
            raise ValueError(
                f"{type(self).__name__} needs a CrossEncoder with 1 output label, but got {model.num_labels}"
            )
        if mini_batch_size is not None and (isinstance(mini_batch_size, bool) or not isinstance(mini_batch_size, int)):
            raise TypeError(f"mini_batch_size must be an int or None, got {mini_batch_size!r}")
        self.model = model
        self.criterion = type(self)._criterion(*args, **options)  # checks the options now, not at the first step
        self.activation_fn = activation_fn or nn.Identity()
        self.mini_batch_size = mini_batch_size

    def forward(
        self,
        inputs: Sequence[Any],
        labels: Tensor | Sequence[Tensor],
        prompt: str | None = None,
        task: str | None = None,
    ) -> Tensor:
        """The loss of a batch: ``inputs`` in one of the two layouts, one label per document."""
        name = type(self).__name__
        queries, documents = _document_lists(inputs, name)
        targets = self._targets(_label_rows(labels, name), [len(docs) for docs in documents])
        if not any(documents):
            return self._nothing_to_rank(len(documents))
        scores, target, mask = self._padded(queries, documents, targets, prompt, task)
        return self._value(scores, target, mask)

    def _value(self, scores: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        return self.criterion(scores, target, mask=mask)

    def _nothing_to_rank(self, queries: int) -> Tensor:
        """The loss of a batch whose lists are all empty: what the loss gives lists with no real
        item (0 with a zero gradient, so a training step still runs), with a warning, since such a
        batch usually means the dataset's document lists were dropped."""
        warnings.warn(
            f"{type(self).__name__}: no query in this batch has a document, so there is nothing to rank: the loss "
            "is 0 and its gradient zero. Check the dataset's document lists", UserWarning, stacklevel=caller_stacklevel(),
        )  # fmt: skip
        device = self.model.device
        scores = torch.zeros(queries, 1, device=device, requires_grad=True)
        return self._value(scores, torch.zeros(queries, 1, device=device), torch.zeros(queries, 1, dtype=torch.bool, device=device))

    def _targets(self, rows: list[Tensor], lengths: list[int]) -> list[Tensor]:
        if [row.numel() for row in rows] != lengths:
            raise ValueError(
                f"{type(self).__name__}: the number of labels per query {[row.numel() for row in rows]} does not "
                f"match the number of documents per query {lengths}"
            )
        return rows

    def _padded(
        self, queries: list[str], documents: list[list[str]], targets: list[Tensor], prompt: str | None,
        task: str | None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """The model's scores ``[B, N]`` of every pair, the targets and the mask of real documents."""
        pairs = [(query, document) for query, docs in zip(queries, documents) for document in docs]
        size = self.mini_batch_size or len(queries)  # (sentence-transformers' convention for this option)
        size = len(pairs) if size <= 0 else size
        device = self.model.device
        chunks = []
        for start in range(0, len(pairs), size):
            tokens = batch_to_device(self.model.preprocess(pairs[start : start + size], prompt=prompt, task=task), device)
            chunks.append(self.model(tokens)["scores"].view(-1))
        logits = self.activation_fn(torch.cat(chunks).float())
        lengths = torch.tensor([len(docs) for docs in documents], device=device)
        rows = torch.repeat_interleave(torch.arange(len(documents), device=device), lengths)
        columns = torch.cat([torch.arange(int(n), device=device) for n in lengths])
        shape = (len(documents), int(lengths.max()))
        scores = logits.new_zeros(shape).index_put((rows, columns), logits)
        target = torch.zeros(shape, device=device).index_put((rows, columns), torch.cat(targets).to(device))
        mask = torch.zeros(shape, dtype=torch.bool, device=device).index_put((rows, columns), torch.tensor(True, device=device))
        return scores, target, mask

    def get_config_dict(self) -> dict[str, Any]:
        """The loss's options (for the model card)."""
        plain = (bool, int, float, str, type(None))
        config = {
            key: value if isinstance(value, plain) else repr(value)
            for key, value in self.criterion.options.arguments().items()
            if key != "generator"
        }
        config.update(activation_fn=fullname(self.activation_fn), mini_batch_size=self.mini_batch_size)
        return config

    @property
    def citation(self) -> str:
        """The BibTeX entry of the loss's paper (for the model card)."""
        return type(self)._citation


_LIST_LOSS_DOC = """

    Args:
        model: the ``CrossEncoder`` to train (one output label).
        activation_fn: applied to the model's scores before the loss. ``None``: none.
        mini_batch_size: pairs per forward pass, as in sentence-transformers' losses: ``None`` as
            many as there are queries in the batch, ``≤ 0`` all pairs at once.
        args, options: those of :class:`torch_ndcg.{name}` (``k`` may come first where it takes one);
            checked here, so a bad one fails before training.

    Example:
        >>> loss = {name}(model{example})  # doctest: +SKIP
        >>> CrossEncoderTrainer(model=model, train_dataset=dataset, loss=loss).train()  # doctest: +SKIP
"""


def _documented(example: str) -> Any:
    def complete(cls: type) -> type:
        cls.__doc__ = (cls.__doc__ or "").rstrip() + _LIST_LOSS_DOC.format(name=cls.__name__, example=example)
        return cls

    return complete


@_documented(", k=10")
class NeuralNDCGLoss(_CrossEncoderLoss):
    """1 − NeuralNDCG@k (:func:`torch_ndcg.neural_ndcg_loss`) of each query's documents; labels are relevance."""

    _criterion = modules.NeuralNDCGLoss
    _citation = """
@article{pobrotyn2021neuralndcg,
    title={NeuralNDCG: Direct Optimisation of a Ranking Metric via Differentiable Relaxation of Sorting},
    author={Pobrotyn, Przemys{\\l}aw and Bia{\\l}obrzeski, Rados{\\l}aw},
    journal={arXiv preprint arXiv:2102.07831},
    year={2021}
}
"""


@_documented(", k=10")
class ApproxNDCGLoss(_CrossEncoderLoss):
    """1 − ApproxNDCG@k (:func:`torch_ndcg.approx_ndcg_loss`) of each query's documents; labels are relevance."""

    _criterion = modules.ApproxNDCGLoss
    _citation = """
@article{qin2010general,
    title={A general approximation framework for direct optimization of information retrieval measures},
    author={Qin, Tao and Liu, Tie-Yan and Li, Hang},
    journal={Information Retrieval},
    volume={13},
    number={4},
    pages={375--397},
    year={2010}
}
"""


# sentence-transformers' weighting schemes and the ``weighting=`` of :func:`torch_ndcg.lambda_loss`
# with the same weights (its NDCGLoss1Scheme has none: it also keeps pairs of equal labels).
_PEER_SCHEMES = {
    "NoWeightingScheme": "none",
    "LambdaRankScheme": "lambdarank",
    "NDCGLoss2Scheme": "ndcg_loss2",
    "NDCGLoss2PPScheme": "ndcg_loss2pp",
}
_REDUCTION_LOGS = ("binary", "natural")


def _weighting_options(scheme: Any) -> dict[str, Any]:
    """``weighting=`` (and NDCG-Loss2++'s ``mu=``) for one of sentence-transformers' weighting
    schemes: an instance, its class, its class's name, or ``None`` (no weighting, as there)."""
    if scheme is None:
        return {"weighting": "none"}
    name = scheme if isinstance(scheme, str) else scheme.__name__ if isinstance(scheme, type) else type(scheme).__name__
    peer = getattr(_peer_losses, name, None)
    is_peer = isinstance(peer, type) and (scheme is peer or isinstance(scheme, (str, peer)))
    if not is_peer or name not in _PEER_SCHEMES:
        known = ", ".join(_PEER_SCHEMES)
        raise ValueError(
            f"weighting_scheme must be one of sentence-transformers' {known} (or None), got {scheme!r}; "
            f"NDCGLoss1Scheme and custom schemes have no counterpart here (weighting= takes this library's names)"
        )
    options: dict[str, Any] = {"weighting": _PEER_SCHEMES[name]}
    if name == "NDCGLoss2PPScheme":
        options["mu"] = scheme.mu if isinstance(scheme, peer) else peer().mu
    return options


@_documented(", k=10, weighting=\"ndcg_loss2pp\"")
class LambdaLoss(_CrossEncoderLoss):
    """LambdaLoss on the metric's NDCG@k (:func:`torch_ndcg.lambda_loss`); labels are relevance.

    It takes sentence-transformers' keywords too, so that its ``LambdaLoss`` swaps for this one:
    ``weighting_scheme`` (``NoWeightingScheme``, ``LambdaRankScheme``, ``NDCGLoss2Scheme``,
    ``NDCGLoss2PPScheme(mu)`` or ``None``, instances, classes or class names; they map to
    ``weighting=`` ``"none"``, ``"lambdarank"``, ``"ndcg_loss2"``, ``"ndcg_loss2pp"`` with
    ``mu``; its ``NDCGLoss1Scheme`` is refused), ``reduction_log`` (``"binary"``, bits as here,
    or ``"natural"``, nats) and ``eps`` (accepted, no effect: a list whose ideal DCG is 0 has no
    pair to weigh, here as there). As there, the first argument after the model may be the scheme
    (``k`` is never a scheme or a string).

    The same keywords do not give the same number. With the same scores, labels and weights the
    two differ in:

    * the gain: ``2^label − 1`` there, this library's ``gain=`` here (``"linear"`` by default:
      pass ``gain="exp2"`` for theirs);
    * the reduction: there the mean over every kept pair of the batch, here the sum over each
      list's pairs, then ``reduction=`` over lists (``"mean"`` by default). With ``k=None``,
      ``gain="exp2"`` and ``reduction="sum"`` this loss is theirs times the number of pairs of
      different labels in the batch;
    * the pairs at a cutoff: there a pair counts when either item is in the current top k, here
      when both are (the paper's NDCG@k bound), so below the list length the pair sets differ;
    * negative labels: clamped to 0 there, refused here.
    """

    _criterion = modules.LambdaLoss
    _citation = """
@inproceedings{wang2018lambdaloss,
    title={The LambdaLoss Framework for Ranking Metric Optimization},
    author={Wang, Xuanhui and Li, Cheng and Golbandi, Nadav and Bendersky, Michael and Najork, Marc},
    booktitle={Proceedings of the 27th ACM International Conference on Information and Knowledge Management},
    pages={1313--1322},
    year={2018}
}
"""

    def __init__(
        self,
        model: nn.Module,
        *args: Any,
        weighting_scheme: Any = ...,
        reduction_log: str = "binary",
        eps: float = 1e-10,
        activation_fn: nn.Module | None = None,
        mini_batch_size: int | None = None,
        **options: Any,
    ) -> None:
        if args and isinstance(args[0], (nn.Module, type, str)):  # their order: (model, weighting_scheme, k)
            if weighting_scheme is not ...:
                raise TypeError("LambdaLoss got weighting_scheme both by position and by keyword")
            weighting_scheme, args = args[0], args[1:]
        if weighting_scheme is not ...:
            if "weighting" in options:
                raise TypeError("LambdaLoss takes weighting= or sentence-transformers' weighting_scheme=, not both")
            options.update(_weighting_options(weighting_scheme))
        if reduction_log not in _REDUCTION_LOGS:
            raise ValueError(f"reduction_log must be one of {_REDUCTION_LOGS}, got {reduction_log!r}")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0 or not math.isfinite(eps):
            raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
        super().__init__(model, *args, activation_fn=activation_fn, mini_batch_size=mini_batch_size, **options)
        self.reduction_log = reduction_log
        self.eps = eps

    def _value(self, scores: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        bits = super()._value(scores, target, mask)
        return bits * math.log(2) if self.reduction_log == "natural" else bits

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "reduction_log": self.reduction_log}


_LISTNET_CITATION = """
@inproceedings{cao2007learning,
    title={Learning to Rank: From Pairwise Approach to Listwise Approach},
    author={Cao, Zhe and Qin, Tao and Liu, Tie-Yan and Tsai, Ming-Feng and Li, Hang},
    booktitle={Proceedings of the 24th International Conference on Machine Learning},
    pages={129--136},
    year={2007}
}
"""


@_documented("")
class ListNetLoss(_CrossEncoderLoss):
    """ListNet's top-one loss (:func:`torch_ndcg.listnet_loss`); labels are relevance."""

    _criterion = modules.ListNetLoss
    _citation = _LISTNET_CITATION


@_documented(", temperature=2.0")
class DistillListNetLoss(_CrossEncoderLoss):
    """ListNet against a teacher's scores (:func:`torch_ndcg.distill_listnet_loss`); labels are the
    teacher's score of each document."""

    _criterion = modules.DistillListNetLoss
    _citation = _LISTNET_CITATION


@_documented("")
class DistillListMLELoss(_CrossEncoderLoss):
    """ListMLE on the teacher's ranking (:func:`torch_ndcg.distill_listmle_loss`); labels are the
    teacher's score of each document."""

    _criterion = modules.DistillListMLELoss
    _citation = """
@inproceedings{xia2008listwise,
    title={Listwise Approach to Learning to Rank: Theory and Algorithm},
    author={Xia, Fen and Liu, Tie-Yan and Wang, Jue and Zhang, Wensheng and Li, Hang},
    booktitle={Proceedings of the 25th International Conference on Machine Learning},
    pages={1192--1199},
    year={2008}
}
"""


@_documented(", temperature=1.0")
class DistillRankNetLoss(_CrossEncoderLoss):
    """RankNet against the teacher's pair probabilities (:func:`torch_ndcg.distill_ranknet_loss`);
    labels are the teacher's score of each document."""

    _criterion = modules.DistillRankNetLoss
    _citation = """
@inproceedings{burges2005learning,
    title={Learning to Rank using Gradient Descent},
    author={Burges, Chris and Shaked, Tal and Renshaw, Erin and Lazier, Ari and Deeds, Matt and Hamilton, Nicole and Hullender, Greg},
    booktitle={Proceedings of the 22nd International Conference on Machine Learning},
    pages={89--96},
    year={2005}
}
"""


@_documented(", pairs=\"first\"")
class MarginMSELoss(_CrossEncoderLoss):
    """Margin-MSE (:func:`torch_ndcg.margin_mse_loss`); labels are the teacher's score of each
    document, or, as in sentence-transformers' ``MarginMSELoss``, the teacher's margins
    ``score(first) − score(i)`` of the other n − 1 documents (a single number when n = 2). Margins
    fix the teacher's scores up to a shift, which the loss does not see, so both give the same loss."""

    _criterion = modules.MarginMSELoss
    _citation = """
@misc{hofstatter2021improving,
    title={Improving Efficient Neural Ranking Models with Cross-Architecture Knowledge Distillation},
    author={Hofst{\\"a}tter, Sebastian and Althammer, Sophia and Schr{\\"o}der, Michael and Sertkan, Mete and Hanbury, Allan},
    year={2021},
    eprint={2010.02666},
    archivePrefix={arXiv},
    primaryClass={cs.IR}
}
"""

    def forward(
        self,
        inputs: Sequence[Any],
        labels: Tensor | Sequence[Tensor],
        prompt: str | None = None,
        task: str | None = None,
    ) -> Tensor:
        if isinstance(labels, Tensor) and labels.dim() == 1:  # one margin per (query, first, second) row
            labels = labels.unsqueeze(1)
        return super().forward(inputs, labels, prompt, task)

    def _targets(self, rows: list[Tensor], lengths: list[int]) -> list[Tensor]:
        # Margins m_i = t_first − t_i are the scores (0, −m_1, …, −m_{n−1}) shifted by t_first.
        rows = [torch.cat([row.new_zeros(1), -row]) if row.numel() == n - 1 else row for row, n in zip(rows, lengths)]
        return super()._targets(rows, lengths)


@_documented(", temperature=1.0")
class ADRMSELoss(_CrossEncoderLoss):
    """Approximate Discounted Rank MSE (:func:`torch_ndcg.adr_mse_loss`); labels are the teacher's
    score of each document.

    It also takes sentence-transformers' ``alpha`` (by keyword, or first after the model as
    there), the sharpness of the approximate ranks: ``alpha=a`` is ``temperature=1 / a``. On
    lists of one length the value is theirs; on lists of different lengths theirs is the mean
    over every document of the batch, this one the mean per list, then over lists
    (``reduction=``).
    """

    _criterion = modules.AdrMSELoss
    _citation = """
@misc{schlatt2024rankdistillm,
    title={Rank-DistiLLM: Closing the Effectiveness Gap Between Cross-Encoders and LLMs for Passage Re-Ranking},
    author={Schlatt, Ferdinand and Fr{\\"o}be, Maik and Scells, Harrisen and Zhuang, Shengyao and Koopman, Bevan and Zuccon, Guido and Stein, Benno and Potthast, Martin and Hagen, Matthias},
    year={2024},
    eprint={2405.07920},
    archivePrefix={arXiv},
    primaryClass={cs.IR}
}
"""

    def __init__(
        self,
        model: nn.Module,
        alpha: float | None = None,
        *,
        activation_fn: nn.Module | None = None,
        mini_batch_size: int | None = None,
        **options: Any,
    ) -> None:
        if alpha is not None:
            if "temperature" in options:
                raise TypeError("ADRMSELoss takes temperature= or sentence-transformers' alpha= (1 / temperature), not both")
            if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < math.inf:
                raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
            options["temperature"] = 1.0 / alpha
        super().__init__(model, activation_fn=activation_fn, mini_batch_size=mini_batch_size, **options)


class _Lists(NamedTuple):
    """One sample of the evaluator: what the model reranks, and the first-stage ranking."""

    query: str
    documents: list[str]  # the documents the model scores
    relevant: list[int]  # 1 for a positive, per document
    base: list[int] | None  # the first-stage order's relevance (missing positives last); None: no "documents"
    positives: int


def _sample_lists(sample: dict[str, Any], always_rerank_positives: bool) -> _Lists:
    """sentence-transformers' reading of a sample: ``query``, ``positive`` and either ``negative``
    or a first-stage ranking ``documents``."""
    for key in ("query", "positive"):
        if key not in sample:
            raise ValueError(f"CrossEncoderRerankingEvaluator requires a {key!r} key in each sample.")
    if ("negative" in sample) == ("documents" in sample):
        raise ValueError("CrossEncoderRerankingEvaluator requires exactly one of 'negative' and 'documents' in each sample.")
    positive = sample["positive"]
    positive = [positive] if isinstance(positive, str) else list(positive)
    ranked = sample.get("documents")
    if ranked is None:
        documents = positive + list(sample["negative"])
        return _Lists(sample["query"], documents, [1] * len(positive) + [0] * (len(documents) - len(positive)), None, len(positive))
    base = [int(document in positive) for document in ranked]
    if any(base):  # positives the first stage missed count as ranked below everything it returned
        base += [1] * (len(positive) - sum(base))
    if always_rerank_positives:
        documents = positive + [document for document in ranked if document not in positive]
        relevant = [1] * len(positive) + [0] * (len(documents) - len(positive))
    else:
        documents, relevant = list(ranked), [int(document in positive) for document in ranked]
    return _Lists(sample["query"], documents, relevant, base, len(positive))


#: Items per padded batch of the evaluator: large batches amortise each call, this bounds memory.
_BATCH_ITEMS = 2**22


def _mean_metrics(scores: np.ndarray, relevant: list[list[int]], at_k: int, count: int) -> tuple[float, float, float]:
    """Mean AP, MRR@k and NDCG@k over ``count`` samples of the lists ``relevant`` (1 for a
    positive), whose ``scores`` are flat, list after list; the samples not given score 0."""
    totals = np.zeros(3)
    lengths = np.array([len(row) for row in relevant], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    labels = np.fromiter(itertools.chain.from_iterable(relevant), dtype=np.float64, count=int(offsets[-1]))
    step = max(1, _BATCH_ITEMS // max(int(lengths.max(initial=1)), 1))
    for start in range(0, len(relevant), step):
        stop = min(start + step, len(relevant))
        sizes = torch.from_numpy(lengths[start:stop])
        mask = torch.arange(int(sizes.max())) < sizes[:, None]
        padded_scores = torch.zeros(mask.shape, dtype=torch.float64)
        padded_relevance = torch.zeros(mask.shape, dtype=torch.float64)
        padded_scores[mask] = torch.from_numpy(scores[offsets[start] : offsets[stop]])
        padded_relevance[mask] = torch.from_numpy(labels[offsets[start] : offsets[stop]])
        # ties="average" (the default) is scikit-learn's ndcg_score; AP has no cutoff, as
        # average_precision_score; a list without a positive scores 0 (empty="zero").
        options = dict(mask=mask, reduction="sum")
        totals += [
            functional.average_precision(padded_scores, padded_relevance, None, **options).item(),
            functional.mrr(padded_scores, padded_relevance, at_k, **options).item(),
            functional.ndcg(padded_scores, padded_relevance, at_k, **options).item(),
        ]
    return tuple((totals / count).tolist()) if count else (float("nan"),) * 3  # type: ignore[return-value]


class CrossEncoderRerankingEvaluator(_SentenceTransformersRerankingEvaluator):
    """sentence-transformers' ``CrossEncoderRerankingEvaluator``, computed in padded batches.

    The same constructor (``samples``, ``at_k``, ``always_rerank_positives``, ``name``,
    ``prompt_name``, ``batch_size``, ``show_progress_bar``, ``write_csv``), the same result keys
    (``map``, ``mrr@{at_k}``, ``ndcg@{at_k}``, and ``base_map``, ``base_mrr@{at_k}``,
    ``base_ndcg@{at_k}`` when the samples carry a first-stage ranking ``documents``; each with
    the ``name_`` prefix), the same ``primary_metric``, CSV file and model-card entries. One
    ``model.predict`` call scores every pair, as there; then the metrics of all queries come from
    :func:`torch_ndcg.average_precision`, :func:`torch_ndcg.mrr` and :func:`torch_ndcg.ndcg` on
    a few padded float64 batches instead of one scikit-learn call per query.

    Its conventions, kept: MAP has no cutoff (``average_precision_score``); MRR and NDCG are cut
    at ``at_k``; a sample whose list holds no positive scores 0 in every mean (``empty="zero"``);
    every sample counts in the mean. With ``negative``, or with ``documents`` and
    ``always_rerank_positives=True``, every positive is reranked (so the best score is 1); with
    ``always_rerank_positives=False`` only the retrieved documents are, and positives outside
    them are left out of the reranked metrics. The ``base_*`` metrics score the ``documents``
    order itself, with the positives it missed ranked after it (a ranking that retrieved no
    positive scores 0).

    Where the two may differ: on tied scores. NDCG averages over the orders of tied documents in
    both (scikit-learn's ``ignore_ties=False`` is this library's ``ties="average"``). For MRR and
    MAP this evaluator also takes the expected value over the orders of tied documents, whereas
    sentence-transformers' MRR follows the order NumPy's ``argsort`` happens to give tied scores
    and scikit-learn's ``average_precision_score`` gives each positive of a tied group the
    precision at the group's end. On scores without ties the values agree to 1e-9. A one-document
    list scores NDCG 1 when its document is a positive (scikit-learn refuses such lists).

    Example:
        >>> from torch_ndcg.integrations.sentence_transformers import CrossEncoderRerankingEvaluator
        >>> evaluator = CrossEncoderRerankingEvaluator(samples, at_k=10, name="dev")  # doctest: +SKIP
        >>> evaluator(model)["dev_ndcg@10"]  # doctest: +SKIP
    """

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        """Score every (query, document) pair with ``model.predict`` and return the metrics."""
        if epoch != -1:
            when = f" after epoch {epoch}" if steps == -1 else f" in epoch {epoch} after {steps} steps"
        else:
            when = ""
        logger.info(f"CrossEncoderRerankingEvaluator: Evaluating the model on the {self.name} dataset{when}:")
        samples = [_sample_lists(sample, self.always_rerank_positives) for sample in self.samples]
        scored = [sample for sample in samples if any(sample.relevant)]
        # Tuples, not lists: the garbage collector soon stops tracking a tuple of strings, and a
        # list per pair made it traverse every pair again and again as the list grew.
        pairs = [(sample.query, document) for sample in scored for document in sample.documents]
        predictions = np.asarray(
            model.predict(
                pairs, prompt_name=self.prompt_name, batch_size=self.batch_size, convert_to_numpy=True,
                show_progress_bar=self.show_progress_bar,
            )
            if pairs else [],
            dtype=np.float64,
        ).reshape(-1)
        if predictions.size != len(pairs):
            raise ValueError(
                f"CrossEncoderRerankingEvaluator: model.predict returned {predictions.size} scores for "
                f"{len(pairs)} (query, document) pairs; it must return one score per pair"
            )
        mean_ap, mean_mrr, mean_ndcg = _mean_metrics(
            predictions, [sample.relevant for sample in scored], self.at_k, len(samples)
        )
        metrics = {"map": mean_ap, f"mrr@{self.at_k}": mean_mrr, f"ndcg@{self.at_k}": mean_ndcg}

        positives = [sample.positives for sample in samples]
        negatives = [len(sample.relevant) - sum(sample.relevant) for sample in samples]
        if samples:
            logger.info(
                f"Queries: {len(samples)}\t"
                f"Positives: Min {np.min(positives):.1f}, Mean {np.mean(positives):.1f}, Max {np.max(positives):.1f}\t"
                f"Negatives: Min {np.min(negatives):.1f}, Mean {np.mean(negatives):.1f}, Max {np.max(negatives):.1f}"
            )
        first_stage = [sample.base for sample in samples if sample.base is not None]
        if first_stage:
            retrieved = [base for base in first_stage if any(base)]
            base_ap, base_mrr, base_ndcg = _mean_metrics(
                np.concatenate([np.arange(len(base), 0, -1, dtype=np.float64) for base in retrieved] or [np.zeros(0)]),
                retrieved, self.at_k, len(first_stage),
            )
            pad = " " * len(str(self.at_k))
            logger.info(f"{pad}       Base  -> Reranked")
            logger.info(f"MAP:{pad}   {base_ap * 100:.2f} -> {mean_ap * 100:.2f}")
            logger.info(f"MRR@{self.at_k}:  {base_mrr * 100:.2f} -> {mean_mrr * 100:.2f}")
            logger.info(f"NDCG@{self.at_k}: {base_ndcg * 100:.2f} -> {mean_ndcg * 100:.2f}")
            card = {
                "map": f"{mean_ap:.4f} ({mean_ap - base_ap:+.4f})",
                f"mrr@{self.at_k}": f"{mean_mrr:.4f} ({mean_mrr - base_mrr:+.4f})",
                f"ndcg@{self.at_k}": f"{mean_ndcg:.4f} ({mean_ndcg - base_ndcg:+.4f})",
            }
            self.store_metrics_in_model_card_data(model, self.prefix_name_to_metrics(card, self.name), epoch, steps)
            metrics.update({"base_map": base_ap, f"base_mrr@{self.at_k}": base_mrr, f"base_ndcg@{self.at_k}": base_ndcg})
            metrics = self.prefix_name_to_metrics(metrics, self.name)
        else:
            logger.info(f"MAP:{' ' * len(str(self.at_k))}   {mean_ap * 100:.2f}")
            logger.info(f"MRR@{self.at_k}:  {mean_mrr * 100:.2f}")
            logger.info(f"NDCG@{self.at_k}: {mean_ndcg * 100:.2f}")
            metrics = self.prefix_name_to_metrics(metrics, self.name)
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)

        if output_path is not None and self.write_csv:
            os.makedirs(output_path, exist_ok=True)
            csv_path = os.path.join(output_path, self.csv_file)
            exists = os.path.isfile(csv_path)
            with open(csv_path, newline="", mode="a" if exists else "w", encoding="utf-8") as file:
                writer = csv.writer(file)
                if not exists:
                    writer.writerow(self.csv_headers)
                writer.writerow([epoch, steps, mean_ap, mean_mrr, mean_ndcg])
        return metrics
