r"""Losses on sampled lists (:class:`~.lists.SampledLists`): each query's positives against a
sample of the catalogue, not the whole of it.

Every loss is a mean over a query's real positives, then a mean (or sum) over the queries; a
query with no real positive is left out of the mean (and gets no gradient). Masked negatives
(padding, accidental hits) take no part and get exactly zero gradient.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ... import definitions as d
from ...options import DEFAULT_DISCOUNT, DEFAULT_GAIN, DEFAULT_REDUCTION, REDUCTIONS, Reduction
from ...validation import check_flag, check_option, check_positive, names_arguments
from ..common import finish_loss
from ..options import single_cutoff
from ..transforms import transforms_active
from .distributed import gather_negatives as gather, rank_offset
from .lists import Checked, SampledLists, check


def _options(reduction: object, validate: object, **positive: object) -> None:
    check_option("reduction", reduction, REDUCTIONS)
    check_flag("validate", validate)
    for name, value in positive.items():
        check_positive(name, value)


def _per_positive(values: Tensor, lists: Checked, reduction: str) -> Tensor:
    """``[B, P]`` losses of each positive → the mean over each query's real positives, reduced
    over the queries (a query without a real positive is skipped)."""
    real = lists.positive_mask
    counts = real.sum(-1)
    per_query = torch.where(real, values, torch.zeros_like(values)).sum(-1) / counts.clamp(min=1).to(values.dtype)
    return finish_loss(per_query, counts == 0, per_query.shape, "skip", reduction)


def _refuse_correction(name: str, lists: Checked) -> None:
    if lists.negative_log_weights is not None or lists.positive_log_weights is not None:
        raise ValueError(
            f"{name} takes no logQ correction (negative_log_q / positive_log_q): it scores pairs or single items, "
            "not a softmax over the catalogue; build the lists without log_q"
        )


def _logits(scores: Tensor, log_weights: Tensor | None, temperature: float) -> Tensor:
    """``s/τ − log(m·q)``: the correction applies to the logits the softmax exponentiates."""
    logits = scores / temperature
    return logits if log_weights is None else logits + log_weights


@names_arguments
def sampled_softmax_loss(
    lists: SampledLists,
    *,
    temperature: float = 1.0,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""Sampled softmax cross-entropy, with the logQ correction when the lists carry ``log_q``
    (Bengio & Senécal, IEEE TNN 2008; Jean et al., ACL 2015; Yi et al., RecSys 2019).

    For each real positive ``p`` of a query, against the query's real negatives ``j``:

    .. math:: \ell_p = -\log \frac{e^{z_p}}{e^{z_p} + \sum_j e^{z_j}}, \qquad
              z_j = s_j/\tau - \log(m\,q_j)

    (``z_p = s_p/τ``, or ``s_p/τ − log(m·q_p)`` when ``positive_log_q`` is given). With the
    correction, ``Σ_j e^{z_j}`` is an unbiased estimate of ``Σ e^{s/τ}`` over the catalogue,
    so the loss approaches the full softmax's as ``m`` grows; without it (``log_q=None``), the
    sampled items stand for themselves, which under popularity sampling over-penalises popular
    items.

    Args:
        lists: the positives and sampled negatives (:class:`SampledLists`).
        temperature: τ > 0, dividing the scores.
        reduction: ``"mean"`` over queries, ``"sum"``, or ``"none"`` (``[B]``, NaN for a query
            with no real positive).
        validate: check that scores are finite and ``log_q`` are log-probabilities (≤ 0).

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import SampledLists, sampled_softmax_loss
        >>> table = torch.tensor([[3.0, 1.0, 0.0]])
        >>> round(sampled_softmax_loss(SampledLists.from_table(table)).item(), 4)
        0.1698
    """
    _options(reduction, validate, temperature=temperature)
    checked = check(lists, validate=validate)
    return _softmax(checked, temperature, reduction)


def _softmax(lists: Checked, temperature: float, reduction: str) -> Tensor:
    negatives = _logits(lists.negatives, lists.negative_log_weights, temperature)
    # finfo.min, not −inf, at masked negatives: a query with none left stays finite (loss 0).
    low = torch.finfo(negatives.dtype).min
    others = torch.where(lists.negative_mask, negatives, low).logsumexp(-1, keepdim=True)
    positives = _logits(lists.positives, lists.positive_log_weights, temperature)
    return _per_positive(torch.nn.functional.softplus(others - positives), lists, reduction)


@names_arguments
def in_batch_softmax_loss(
    queries: Tensor,
    items: Tensor,
    *,
    item_ids: Tensor | None = None,
    log_q: Tensor | None = None,
    temperature: float = 1.0,
    gather_negatives: bool = False,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""In-batch softmax (InfoNCE; sentence-transformers' MultipleNegativesRankingLoss): query ``i``
    against every item of the batch, its own item ``i`` the positive.

    .. math:: \ell_i = -\log \frac{e^{z_{ii}}}{\sum_{j} e^{z_{ij}}}, \qquad
              z_{ij} = \langle x_i, y_j\rangle/\tau - \log(B'\,q_j)

    over the items ``j`` of the batch that are not accidental hits (``item_ids``: an item equal to
    the query's positive is left out), with ``log q_j`` the item's in-batch sampling
    log-probability when ``log_q`` is given (Yi et al., RecSys 2019: popular items appear in many
    batches and would otherwise be pushed down for being popular). MultipleNegativesRankingLoss
    is this loss on L2-normalised embeddings with ``temperature=0.05``. Extra items beyond the
    ``B`` positives (hard negatives) go after them in ``items``.

    With ``gather_negatives=True`` under ``torch.distributed``, every rank's items are negatives
    of every query (:func:`gather_negatives`), ``B'`` items per rank, the same ``B'`` on every
    rank; the gradient reaches each rank's own items, and the mean of the ranks' losses (DDP's
    average of their gradients) is the loss of one process with all the queries.

    GradCache (Gao et al., RepL4NLP 2021), for batches larger than memory: embed the batch
    without a graph, call this loss on the detached embeddings made leaves
    (``requires_grad_()``), ``backward()`` it to get each embedding's gradient, then re-embed
    each mini-batch with a graph and call ``embedding.backward(gradient)`` chunk by chunk.

    Args:
        queries: ``[B, D]`` query embeddings.
        items: ``[B', D]`` item embeddings, ``B' ≥ B``; row ``i < B`` is query ``i``'s positive.
        item_ids: ``[B']`` integer ids, to leave out accidental hits.
        log_q: ``[B']`` log sampling probabilities of the items (logQ correction).
        temperature: τ > 0.
        gather_negatives: all-gather the items of every rank (a no-op outside ``torch.distributed``).
        reduction, validate: as in :func:`sampled_softmax_loss`.

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import in_batch_softmax_loss
        >>> queries = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> round(in_batch_softmax_loss(queries, queries).item(), 4)
        0.3133
    """
    _options(reduction, validate, temperature=temperature)
    check_flag("gather_negatives", gather_negatives)
    offset = 0
    if gather_negatives:
        offset = rank_offset(items)
        items = gather(items)
        item_ids = None if item_ids is None else gather(item_ids)
        log_q = None if log_q is None else gather(log_q)
    lists = SampledLists.in_batch(queries, items, item_ids=item_ids, log_q=log_q, offset=offset)
    return _softmax(check(lists, validate=validate), temperature, reduction)


@names_arguments
def bpr_loss(
    lists: SampledLists,
    *,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""Bayesian personalised ranking (Rendle, Freudenthaler, Gantner & Schmidt-Thieme, UAI 2009):
    the mean over a query's real (positive, negative) pairs of

    .. math:: \ell_{pj} = -\log \sigma(s_p - s_j) = \operatorname{softplus}(s_j - s_p).

    BPR scores pairs, so it takes no logQ correction (lists with ``log_q`` are refused).

    Args:
        lists, reduction, validate: as in :func:`sampled_softmax_loss`.

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import SampledLists, bpr_loss
        >>> round(bpr_loss(SampledLists(torch.tensor([1.0]), torch.tensor([[1.0, 0.0]]))).item(), 4)
        0.5032
    """
    _options(reduction, validate)
    checked = check(lists, validate=validate)
    _refuse_correction("bpr_loss", checked)
    pairs = torch.nn.functional.softplus(checked.negatives[:, None, :] - checked.positives[:, :, None])
    real = checked.negative_mask[:, None, :]
    per_positive = torch.where(real, pairs, 0.0).sum(-1) / real.sum(-1).clamp(min=1).to(pairs.dtype)
    return _per_positive(per_positive, checked, reduction)


def gbce_beta(negatives: int, catalogue_size: int, calibration: float) -> float:
    r"""gBCE's exponent ``β = α(t(1 − 1/α) + 1/α)``, with ``α = m/(N − 1)`` the negative sampling
    rate (Petrov & Macdonald, RecSys 2023, eq. 11).

    Example:
        >>> gbce_beta(1, 2, 1.0), gbce_beta(10, 101, 0.0)
        (1.0, 1.0)
    """
    alpha = negatives / (catalogue_size - 1)
    return alpha * (calibration * (1 - 1 / alpha) + 1 / alpha)


@names_arguments
def gbce_loss(
    lists: SampledLists,
    *,
    catalogue_size: int,
    calibration: float = 0.75,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""Generalised binary cross-entropy (gBCE; Petrov & Macdonald, "gSASRec", RecSys 2023).

    Binary cross-entropy with the positive's probability raised to ``β``, which undoes the
    overconfidence that sampling ``m`` of the ``N − 1`` negatives teaches:

    .. math:: \ell_p = -\beta \log \sigma(s_p) - \sum_j \log(1 - \sigma(s_j)), \qquad
              \beta = \alpha\bigl(t(1 - 1/\alpha) + 1/\alpha\bigr), \quad \alpha = \frac{m}{N - 1}

    ``t = 0`` is plain BCE (β = 1), ``t = 1`` fully calibrated (β = α). gBCE corrects through β,
    so it takes no logQ correction (lists with ``log_q`` are refused).

    Args:
        lists, reduction, validate: as in :func:`sampled_softmax_loss`.
        catalogue_size: ``N``, the number of items the negatives are drawn from (positive
            included), ``N > m``.
        calibration: ``t`` in ``[0, 1]`` (the paper's 0.75 by default).

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import SampledLists, gbce_loss
        >>> lists = SampledLists(torch.tensor([2.0]), torch.tensor([[0.0, -1.0]]))
        >>> round(gbce_loss(lists, catalogue_size=3, calibration=0.0).item(), 4)
        1.1333
    """
    _options(reduction, validate)
    if isinstance(calibration, bool) or not isinstance(calibration, (int, float)) or not 0 <= calibration <= 1:
        raise ValueError(f"calibration must be a number in [0, 1], got {calibration!r}")
    checked = check(lists, validate=validate)
    _refuse_correction("gbce_loss", checked)
    if isinstance(catalogue_size, bool) or not isinstance(catalogue_size, int) or catalogue_size <= checked.count:
        raise ValueError(
            f"catalogue_size must be an int larger than the m = {checked.count} negatives per query, got {catalogue_size!r}"
        )
    beta = gbce_beta(checked.count, catalogue_size, calibration)
    softplus = torch.nn.functional.softplus
    negatives = torch.where(checked.negative_mask, softplus(checked.negatives), 0.0).sum(-1, keepdim=True)
    return _per_positive(beta * softplus(-checked.positives) + negatives, checked, reduction)


@names_arguments
def sampled_ndcg_loss(
    lists: SampledLists,
    k: int | None = None,
    *,
    temperature: float = 1.0,
    gain: d.Gain = DEFAULT_GAIN,
    discount: d.Discount = DEFAULT_DISCOUNT,
    reduction: Reduction = DEFAULT_REDUCTION,
    validate: bool = True,
) -> Tensor:
    r"""``1 −`` a smooth NDCG@k whose ranks are estimated from sampled negatives, corrected for
    the sampling (the estimator of SONG / K-SONG, Qiu, Hu, Zhou, Lyu & Yang, ICML 2022).

    Each positive's rank in the whole catalogue is estimated as

    .. math:: \hat r_p = 1 + \sum_{p' \ne p} \sigma\Bigl(\frac{s_{p'} - s_p}{\tau}\Bigr)
              + \sum_{j=1}^{m} \frac{1}{m\,q_j}\,\sigma\Bigl(\frac{s_j - s_p}{\tau}\Bigr)

    (the other positives exactly, the negatives importance-weighted; ``1/(m·q_j) = 1`` when the
    lists carry no ``log_q``, which ranks among the sample alone). For negatives drawn with
    replacement from the catalogue's non-positive items with probabilities ``q``, the sum is an
    unbiased estimate of the same sum over all of them, so ``E[r̂_p]`` is ApproxNDCG's smooth
    rank over the whole catalogue (Qin, Liu & Li 2010); under uniform sampling the weight is
    ``(N − |positives|)/m``. Then, as :func:`torch_ndcg.approx_ndcg`,

    .. math:: \mathrm{NDCG} = \frac{1}{\mathrm{IDCG@k}} \sum_p \mathrm{gain}(rel_p)\,
              \mathrm{discount}(\hat r_p)\,\sigma\Bigl(\frac{k + 1/2 - \hat r_p}{\tau}\Bigr)

    with the exact IDCG@k of the positives and the metrics' gain and discount. The discount is
    concave, so the plug-in NDCG is biased upwards at small ``m`` (Jensen); SONG removes that bias
    with moving averages of ``r̂`` across steps, which this loss, a function of one batch, does not.

    The soft cutoff is in ranks: a positive estimated many ``τ`` below ``k`` gets almost no
    gradient. From a random start in a large catalogue (every ``r̂`` near ``N/2``) a cutoff of 10
    at ``τ`` of one rank or more leaves the model where it started; ``k=None`` (every rank's
    discount) learns from anywhere and is still scored by NDCG@k.

    Time and memory are O(B·P·(P + m)) for ``P`` positive slots per query: where the queries'
    positive counts differ widely, call it on groups of queries with similar counts
    (``reduction="sum"``, divided by the number of queries) rather than padding all to the largest.

    Args:
        lists: as in :func:`sampled_softmax_loss`; ``positive_relevance`` gives the gains
            (relevance 1 when absent); ``positive_log_q`` is not used (positives count exactly).
        k: the cutoff (``None``: no soft cutoff).
        temperature: τ > 0 of the sigmoids.
        gain, discount: as in :func:`torch_ndcg.ndcg`.
        reduction, validate: as in :func:`sampled_softmax_loss`.

    Example:
        >>> import torch
        >>> from torch_ndcg.losses.sampled import SampledLists, sampled_ndcg_loss
        >>> lists = SampledLists(torch.tensor([3.0]), torch.tensor([[0.0, 0.0]]))
        >>> round(sampled_ndcg_loss(lists, temperature=0.1).item(), 4)
        0.0
    """
    _options(reduction, validate, temperature=temperature)
    cutoff = single_cutoff(k)
    gain_fn, discount_fn = d.resolve_gain(gain), d.resolve_discount(discount)
    checked = check(lists, validate=validate)
    positives, real = checked.positives, checked.positive_mask
    gains = torch.where(real, d.gains(checked.relevance, gain_fn, positives.dtype), 0.0)
    if validate and not torch.compiler.is_compiling() and not transforms_active():
        if not bool((torch.isfinite(gains) & (gains >= 0)).all()):
            raise ValueError("positive_relevance must give finite gains ≥ 0 (labels ≥ 0; exp2 gains must not overflow)")
    tau = temperature
    pairs = torch.sigmoid((positives[:, None, :] - positives[:, :, None]) / tau)  # [B, P, P']: p' above p
    others = real[:, None, :] & ~torch.eye(positives.shape[1], dtype=torch.bool, device=real.device)
    ranks = 1 + torch.where(others, pairs, 0.0).sum(-1)
    above = torch.sigmoid((checked.negatives[:, None, :] - positives[:, :, None]) / tau)  # [B, P, m]
    weights = torch.ones((), dtype=positives.dtype, device=positives.device)
    if checked.negative_log_weights is not None:
        weights = checked.negative_log_weights.exp()
    weights = torch.where(checked.negative_mask, weights, 0.0)[:, None, :]
    ranks = ranks + (above * weights).sum(-1)
    weight = discount_fn(ranks)
    if cutoff is not None:
        weight = weight * torch.sigmoid((cutoff + 0.5 - ranks) / tau)
    dcg = (gains * weight).sum(-1)
    ideal = gains.sort(-1, descending=True).values
    depth = ideal.shape[-1] if cutoff is None else min(cutoff, ideal.shape[-1])
    idcg = (ideal[:, :depth] * d.discounts(depth, discount, ideal.dtype, ideal.device)).sum(-1)
    empty = idcg == 0
    values = 1 - dcg / torch.where(empty, torch.ones_like(idcg), idcg)
    return finish_loss(values, empty, values.shape, "skip", reduction)
