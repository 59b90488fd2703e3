r"""The relaxations a metric's smooth twin takes (``relaxation=`` of :func:`torch_ndcg.mrr_loss`, …),
by name or as an object: each turns scores into the :class:`~torch_ndcg.over_ranks.Ranking` that
the metric's one definition (:mod:`torch_ndcg.over_ranks`) reads.

=================  ====================  ============================================================
name               object                what it relaxes
=================  ====================  ============================================================
``"approx"``       :class:`ApproxRanks`  each item's rank, :math:`1 + \sum_{j \ne i} \sigma((s_j - s_i)/\tau)`
                                         (Qin, Liu & Li 2010; rax's ``approx_t12n``), and the cutoff
``"bound"``        :class:`BoundRanks`   each item's rank by the hinge bound
                                         :math:`1 + \sum_{j \ne i} \max(0, s_j - s_i + 1)` and the cutoff by
                                         :math:`\min(x, 1)` (rax's ``bound_t12n``): a lower bound of the metric
``"neuralsort"``   :class:`NeuralSortRows`  the top ``k`` rows of NeuralSort's "which item takes rank i"
                                         matrix (Grover et al. 2019; PiRank), for metrics of ranks 1..k
``"sinkhorn"``     :class:`SinkhornRows`  NeuralSort's matrix made doubly stochastic by Sinkhorn
                                         (NeuralNDCG, Pobrotyn & Białobrzeski 2021)
``"gumbel"``       :class:`Gumbel`       the mean of another relaxation over Gumbel-perturbed scores
                                         (rax's ``gumbel_t12n``; TF-Ranking's GumbelApproxNDCG);
                                         by name it wraps ``"approx"``
=================  ====================  ============================================================

The default is :data:`DEFAULT_RELAXATION` (``"approx"``). A name means the object with its
defaults; an object carries its own hyper-parameters (temperature, cutoff convention,
implementation). The per-item relaxations (approx, bound) cut at ``k`` with ``cutoff="fixed"``:
:math:`c_i = \mathrm{step}(k + \tfrac12 - \tilde r_i)`, or with ``cutoff="midway"`` (rax's
convention) at the midpoint of the relaxed ranks of the items ranked ``k`` and ``k + 1``, a
threshold without gradient; a list of at most ``k`` real items is never cut.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from ...options import IMPLS, NEURAL_IMPLS
from ...over_ranks import ListFacts, MetricOptions, RankMetric, Ranking, hits_at_or_above, rank_weights
from ...validation import check_flag, check_option, check_positive
from .. import common
from ..common import SortRelaxation, block_ops, positions
from ..options import DEFAULT_BETA, DEFAULT_SAMPLES, DEFAULT_SINKHORN_ITERS, DEFAULT_TEMPERATURE, Temperature
from .approximate_ranks import StreamingRanks, candidate_ranks, candidates, dense_ranks, top_candidates
from .neuralsort import top_row_means, top_rows_dcg
from .sinkhorn.dense import dense_dcg, dense_matrix
from .sinkhorn.op import kernel_dcg
from .sinkhorn.streaming import sinkhorn_dcg
from .spread import unit_spread

RelaxationName = Literal["approx", "bound", "neuralsort", "sinkhorn", "gumbel"]
RELAXATIONS: tuple[str, ...] = get_args(RelaxationName)
DEFAULT_RELAXATION: RelaxationName = "approx"
CutoffConvention = Literal["fixed", "midway"]
CUTOFF_CONVENTIONS: tuple[str, ...] = get_args(CutoffConvention)


@dataclass(frozen=True)
class TwinLists:
    """Validated ``[B, N]`` lists of a twin loss, in the compute dtype."""

    scores: Tensor  # differentiable, 0 at padding
    valid: Tensor  # bool, True for real items
    values: Tensor  # gains (graded metrics) or relevance indicators, 0 at padding
    hits: Tensor | None  # relevance indicators, 0 at padding (AP's upto); None for graded metrics
    cutoff: int | None
    facts: ListFacts
    validate: bool = True

    @property
    def length(self) -> int:
        return self.scores.shape[-1]

    def repeated(self, times: int, scores: Tensor) -> TwinLists:
        """These lists ``times`` over (``[times·B, N]``) with the given ``scores``."""

        def many(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.expand(times, *t.shape).reshape(-1, *t.shape[1:])

        facts = ListFacts(*(many(t) for t in (self.facts.relevant, self.facts.listed, self.facts.idcg)))
        return replace(self, scores=scores, valid=many(self.valid), values=many(self.values), hits=many(self.hits), facts=facts)


class Relaxation:
    """A relaxation of ranking: :meth:`values` gives a metric's smooth ``[B]`` values (before
    ``empty``); a subclass builds the :meth:`ranking` that the metric reads."""

    def ranking(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Ranking:
        raise NotImplementedError

    def values(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Tensor:
        return metric.values(self.ranking(lists, metric, options), lists.facts, options)

    def one_sample_at_a_time(self, lists: TwinLists, metric: RankMetric) -> bool:
        """Whether :class:`Gumbel` should run the samples one at a time, each recomputed in
        backward (a relaxation that builds ``[B, N, N]`` tensors under autograd), rather than
        folded into the batch."""
        return False


def _per_item(ranks: Tensor, lists: TwinLists, scores: Tensor, valid: Tensor, values: Tensor, hits: Tensor | None,
              metric: RankMetric, step, cutoff: str) -> Ranking:  # fmt: skip
    """The ranking of per-item relaxed ``ranks`` (of the items ``scores``/``valid``/``values``:
    the whole lists, or their candidates; ``values`` 0 at padding), with the soft cutoff ``step``
    (see the module)."""
    k = lists.cutoff
    if k is not None and k < lists.length:
        threshold: Tensor | float = k + 0.5
        if cutoff == "midway":  # rax: between the relaxed ranks of the items ranked k and k + 1
            highest = torch.full_like(ranks, torch.inf)
            pair = torch.topk(torch.where(valid, ranks, highest).detach(), k + 1, dim=-1, largest=False).values
            threshold = pair[:, k - 1 :].mean(-1, keepdim=True)
        whole = (lists.facts.listed <= k)[:, None]
        within = torch.where(valid, torch.where(whole, 1.0, step(threshold - ranks)), 0.0)
    else:
        within = valid.to(ranks.dtype)
    upto = hits_at_or_above(scores, valid, hits) if metric.reads_upto else None
    return Ranking(ranks, values, within, upto)


def _check_cutoff(value: object) -> None:
    check_option("cutoff", value, CUTOFF_CONVENTIONS)


@dataclass(frozen=True)
class ApproxRanks(Relaxation):
    r"""Approximate ranks :math:`\tilde r_i = 1 + \sum_{j \ne i} \sigma((s_j - s_i)/\tau)` over a
    list's real items and the soft cutoff :math:`\sigma((t - \tilde r_i)/\tau)` (ApproxNDCG's).

    Args:
        temperature: τ > 0, for the ranks and the cutoff alike.
        cutoff: ``"fixed"`` (``t = k + ½``) or ``"midway"`` (rax's; see the module).
        impl: as ApproxNDCG's (:func:`torch_ndcg.approx_ndcg`): ``"dense"``, ``"streaming"``,
            ``"triton"``, ``"sorted"`` (only the items that can reach the cutoff; ``"fixed"``
            cutoff only) or ``"auto"``.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores, labels = torch.tensor([[2.0, 1.0, 0.5]]), torch.tensor([[0, 0, 1]])
        >>> round(tn.mrr_loss(scores, labels, relaxation=tn.ApproxRanks(temperature=0.01)).item(), 4)
        0.6667
    """

    temperature: float = DEFAULT_TEMPERATURE
    cutoff: CutoffConvention = "fixed"
    impl: str = "auto"

    def __post_init__(self) -> None:
        check_positive("temperature", self.temperature)
        _check_cutoff(self.cutoff)
        check_option("impl", self.impl, IMPLS)
        if self.impl == "sorted" and self.cutoff == "midway":
            raise ValueError("impl='sorted' ranks only the items that can reach the cutoff k + 1/2: use cutoff='fixed'")

    def ranking(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Ranking:
        tau = float(self.temperature)
        scores, valid, values, hits = lists.scores, lists.valid, lists.values, lists.hits
        count = candidates(lists.length, lists.cutoff, tau) if self.cutoff == "fixed" else None
        impl = common.resolve_impl(self.impl, lists, candidates=count)
        if impl == "dense":
            ranks = dense_ranks(scores, valid, tau)
        elif impl == "sorted":  # only the items that can reach the cutoff (approximate_ranks.py)
            chosen = top_candidates(scores, valid, count)
            scores, valid, values = (t.gather(-1, chosen) for t in (scores, valid, values))
            # Rank 1 at a candidate that is padding, so that its discount is finite.
            ranks = torch.where(valid, candidate_ranks(lists.scores, lists.valid, chosen, tau), 1.0)
            hits = None if hits is None else hits.gather(-1, chosen)
        else:
            ranks = StreamingRanks.apply(scores, valid, tau, block_ops(impl, scores))
        return _per_item(ranks, lists, scores, valid, values, hits, metric, lambda x: torch.sigmoid(x / tau), self.cutoff)


def bound_ranks(scores: Tensor, valid: Tensor) -> Tensor:
    r"""``1 + Σ_{j ≠ i, real} max(0, s_j − s_i + 1)`` ``[B, N]``: at least each item's rank, from
    the ``[B, N, N]`` hinge matrix under autograd."""
    v = valid.to(scores.dtype)
    others = v[:, None, :] * (1 - torch.eye(scores.shape[-1], dtype=scores.dtype, device=scores.device))
    hinge = torch.relu(scores[:, None, :] - scores[:, :, None] + 1)
    return 1 + v * (hinge * others).sum(-1)


@dataclass(frozen=True)
class BoundRanks(Relaxation):
    r"""The hinge bound of rax's ``bound_t12n``: each item's rank by
    :math:`\hat r_i = 1 + \sum_{j \ne i} \max(0, s_j - s_i + 1) \ge r_i` and the cutoff indicator
    :math:`[r_i \le k]` by :math:`\min(t - \hat r_i, 1)` (at most the indicator: it may be
    negative), so every metric that decreases with its items' ranks gets a lower bound. There
    is no temperature: the margin is 1 on the scores' own scale. O(N²) memory per list.

    Args:
        cutoff: ``"fixed"`` (``t = k + ½``) or ``"midway"`` (rax's; see the module).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores, labels = torch.tensor([[0.0, 1.0, 3.0, 2.0]]), torch.tensor([[0, 1, 0, 1]])
        >>> round(1 - tn.mrr_loss(scores, labels, relaxation="bound").item(), 4)
        0.3333
    """

    cutoff: CutoffConvention = "fixed"

    def __post_init__(self) -> None:
        _check_cutoff(self.cutoff)

    def ranking(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Ranking:
        ranks = bound_ranks(lists.scores, lists.valid)
        step = lambda x: 1 - torch.relu(1 - x)  # noqa: E731
        return _per_item(ranks, lists, lists.scores, lists.valid, lists.values, lists.hits, metric, step, self.cutoff)


def _rows_ranking(means: Tensor, lists: TwinLists, metric: RankMetric) -> Ranking:
    """The per-rank ranking of ``means`` ``[B, R]``: the expected value at each rank ``1..R``."""
    rank = positions(means).expand_as(means)
    depth = lists.facts.listed[:, None]
    if lists.cutoff is not None:
        depth = depth.clamp(max=lists.cutoff)
    within = (rank <= depth).to(means.dtype)
    return Ranking(rank, means, within, means.cumsum(-1) if metric.reads_upto else None)


def _weighted_rows(lists: TwinLists, metric: RankMetric, options: MetricOptions, rows: int) -> tuple[Ranking, Tensor]:
    """For a metric that is a weighted sum over ranks, summed without its per-rank values (inside
    NeuralSort's and Sinkhorn's operators, whose backward reads the weights): the ranking of the
    rows ``1..R`` (for the normaliser; its values are not read) and the weight ``[B, R]`` of each
    rank, ``rank_weight``, 0 beyond each list's cutoff and length."""
    ranking = _rows_ranking(lists.scores.new_zeros(lists.scores.shape[0], rows), lists, metric)
    weight = rank_weights(metric, rows, lists.scores, options)[None, :]
    return ranking, torch.where(ranking.within > 0, weight, 0.0)


@dataclass(frozen=True)
class NeuralSortRows(Relaxation):
    r"""The rows ``1..R`` of NeuralSort's relaxed sorting matrix (``R = min(k, N)``, every row
    with ``k=None``), each the chance that each item takes that rank, in O(N log N + R·N) with an
    analytic backward (:mod:`.neuralsort`); no Sinkhorn, so rows, not columns, sum to 1.

    Args:
        temperature: a finite τ > 0, or ``"auto"``: τ = std(s)·√n per list (see
            :func:`torch_ndcg.neuralsort_ndcg`).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores, labels = torch.tensor([[2.0, 1.0, 0.5]]), torch.tensor([[0, 0, 1]])
        >>> round(tn.mrr_loss(scores, labels, relaxation=tn.NeuralSortRows(temperature=0.01)).item(), 4)
        0.6667
    """

    temperature: Temperature = "auto"

    def __post_init__(self) -> None:
        if not (isinstance(self.temperature, str) and self.temperature == "auto"):
            check_positive("temperature", self.temperature)

    def _scaled(self, lists: TwinLists) -> tuple[Tensor, Tensor | float]:
        """The scores and τ that the rows are built from."""
        if isinstance(self.temperature, str):  # the relaxation of scores / u, which depends only on s / τ
            return unit_spread(lists.scores, lists.valid)
        from ..pairwise import check_scale

        check_scale("temperature", float(self.temperature), lists.scores.dtype)
        return lists.scores, float(self.temperature)

    @staticmethod
    def _rows(lists: TwinLists) -> int:
        return lists.length if lists.cutoff is None else min(lists.cutoff, lists.length)

    def ranking(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Ranking:
        scores, tau = self._scaled(lists)
        return _rows_ranking(top_row_means(scores, lists.valid, lists.values, self._rows(lists), tau), lists, metric)

    def values(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Tensor:
        if metric.rank_weight is None:
            return super().values(lists, metric, options)
        # A weighted sum over ranks: summed inside the rows' operator, as the rows' DCG.
        ranking, weight = _weighted_rows(lists, metric, options, self._rows(lists))
        scores, tau = self._scaled(lists)
        total = top_rows_dcg(scores, lists.valid, weight, lists.values, tau)
        return metric.normalised(total, ranking, lists.facts, options)


@dataclass(frozen=True)
class SinkhornRows(Relaxation):
    r"""NeuralNDCG's matrix: NeuralSort's rows made doubly stochastic by ``sinkhorn_iters``
    Sinkhorn iterations (:func:`torch_ndcg.neural_ndcg`). The metrics that are a weighted sum over
    ranks (DCG, NDCG, precision, recall, RBP) run on any of NeuralNDCG's implementations; the
    others (MRR, hit rate, AP) read every row of the explicit ``[B, N, N]`` matrix (``impl`` must
    then be ``"dense"`` or ``"auto"``).

    Args:
        temperature, sinkhorn_iters, transposed, impl, tol: as in :func:`torch_ndcg.neural_ndcg`
            (``tol``: the weighted sums only).

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores, labels = torch.tensor([[2.0, 1.0, 0.5]]), torch.tensor([[0, 0, 1]])
        >>> round(tn.mrr_loss(scores, labels, relaxation=tn.SinkhornRows(temperature=0.01)).item(), 4)
        0.6667
    """

    temperature: float = DEFAULT_TEMPERATURE
    sinkhorn_iters: int = DEFAULT_SINKHORN_ITERS
    transposed: bool = False
    impl: str = "auto"
    tol: float | None = None

    def __post_init__(self) -> None:
        check_positive("temperature", self.temperature)
        check_positive("sinkhorn_iters", self.sinkhorn_iters, integer=True)
        check_flag("transposed", self.transposed)
        check_option("impl", self.impl, NEURAL_IMPLS)
        if self.tol is not None:
            check_positive("tol", self.tol)
            if self.impl not in ("auto", "kernel"):
                raise ValueError(
                    f"tol (early stopping) needs impl='kernel' (or 'auto', which then runs it), got impl={self.impl!r}"
                )

    def _relaxation(self, lists: TwinLists, rank_weight: Tensor) -> SortRelaxation:
        tau, iters = float(self.temperature), self.sinkhorn_iters
        return SortRelaxation(lists.valid, rank_weight, lists.values, tau, iters, self.transposed)

    def _impl(self, lists: TwinLists, metric: RankMetric) -> str:
        """The implementation that runs: the explicit matrix for a metric that reads every rank, the
        kernel with ``tol`` (only it stops early), else ``impl`` resolved for these lists."""
        if metric.rank_weight is None:
            return "dense"
        return "kernel" if self.tol is not None else common.resolve_impl(self.impl, lists, kernel=True)

    def one_sample_at_a_time(self, lists: TwinLists, metric: RankMetric) -> bool:
        return self._impl(lists, metric) == "dense"

    def values(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Tensor:
        if metric.rank_weight is None and self.impl not in ("auto", "dense"):
            raise ValueError(
                f"relaxation: SinkhornRows(impl={self.impl!r}) sums weighted ranks only; {metric.name} reads every "
                "rank of the matrix, which impl='dense' (or 'auto') builds"
            )
        if metric.rank_weight is None and self.tol is not None:
            raise ValueError(
                f"relaxation: SinkhornRows(tol=...) stops early on the kernel path, which sums weighted ranks only; "
                f"{metric.name} reads every rank of the matrix: pass tol=None"
            )
        impl = self._impl(lists, metric)
        if metric.rank_weight is None:
            matrix = dense_matrix(lists.scores, self._relaxation(lists, lists.values))
            means = torch.bmm(matrix, lists.values[:, :, None])[:, :, 0]
            return metric.values(_rows_ranking(means, lists, metric), lists.facts, options)
        if impl != "dense" and lists.values.requires_grad:
            idcg = " (its gradient in relevance would hold the IDCG's term alone)" if metric.name == "ndcg" else ""
            raise ValueError(
                f"relevance requires grad, but impl={impl!r} differentiates the smooth DCG in scores only{idcg}; "
                "pass impl='dense' for the gradient in relevance too, or relevance.detach()"
            )
        # A weighted sum over ranks: every path sums it as NeuralNDCG's smooth DCG, the kernel and
        # streaming paths without the matrix.
        ranking, weight = _weighted_rows(lists, metric, options, lists.length)
        relaxation = self._relaxation(lists, weight)
        if impl == "dense":
            total = dense_dcg(lists.scores, relaxation)
        elif impl == "kernel":
            total = kernel_dcg(lists.scores, relaxation, self.tol)
        else:
            total = sinkhorn_dcg(lists.scores, relaxation, block_ops(impl, lists.scores))
        return metric.normalised(total, ranking, lists.facts, options)


def gumbel_noise(shape: tuple[int, ...], like: Tensor, generator: torch.Generator | None) -> Tensor:
    """Standard Gumbel noise ``−log(−log U)``, U uniform, drawn from ``generator``."""
    tiny = torch.finfo(like.dtype).tiny
    uniform = torch.rand(shape, generator=generator, dtype=like.dtype, device=like.device)
    return -torch.log(-torch.log(uniform.clamp(min=tiny)))


def log_scores(scores: Tensor, valid: Tensor) -> Tensor:
    """``log(s + |min s| + 1e-10)`` (allRank's ``log_scores``): the minimum over every real item of
    the batch, so each score is shifted to ≥ 0 before the logarithm; padding is left as it is."""
    smallest = torch.where(valid, scores, torch.full_like(scores, torch.inf)).min()
    smallest = torch.where(torch.isfinite(smallest), smallest, torch.zeros_like(smallest))  # no real item
    shifted = torch.where(valid, scores + smallest.abs() + 1e-10, torch.ones_like(scores))
    return torch.log(shifted)


def perturbed(scores: Tensor, valid: Tensor, samples: int, beta: float, generator: torch.Generator | None,
              logarithm: bool) -> Tensor:  # fmt: skip
    """``[samples, B, N]`` scores ``s + β g`` (``g`` standard Gumbel from ``generator``), padding 0;
    ``logarithm``: ``s`` is :func:`log_scores` of the scores."""
    if logarithm:
        scores = log_scores(scores, valid)
    noise = gumbel_noise((samples, *scores.shape), scores, generator)
    return torch.where(valid, scores + beta * noise, torch.zeros_like(scores))


@dataclass(frozen=True, eq=False)
class Gumbel(Relaxation):
    r"""The mean of another relaxation's metric over ``samples`` perturbed scores
    :math:`s + \beta g`, :math:`g \sim \mathrm{Gumbel}(0, 1)` i.i.d. from ``generator``
    (rax's ``gumbel_t12n``, TF-Ranking's GumbelApproxNDCG; NeuralNDCG's ``stochastic=True`` is
    ``Gumbel(SinkhornRows(...))``). ``log_scores=True`` perturbs
    :math:`\log(s + |\min s| + 10^{-10})` instead (allRank's). The samples fold into the batch,
    except on :class:`SinkhornRows`' dense path, which runs them one at a time, each recomputed in
    backward, so that one ``[B, N, N]`` graph is alive at a time.

    Args:
        relaxation: the relaxation to average (a name or an object; not another Gumbel).
        samples, beta, log_scores, generator: as in :func:`torch_ndcg.neural_ndcg`.

    Example:
        >>> import torch, torch_ndcg as tn
        >>> scores, labels = torch.tensor([[2.0, 1.0, 0.5]]), torch.tensor([[0, 0, 1]])
        >>> noisy = tn.Gumbel("approx", samples=8, generator=torch.Generator().manual_seed(0))
        >>> bool(0 < tn.mrr_loss(scores, labels, relaxation=noisy) < 1)
        True
    """

    relaxation: str | Relaxation = DEFAULT_RELAXATION
    samples: int = DEFAULT_SAMPLES
    beta: float = DEFAULT_BETA
    log_scores: bool = False
    generator: torch.Generator | None = None

    def __post_init__(self) -> None:
        inner = resolve_relaxation(self.relaxation)
        if isinstance(inner, Gumbel):
            raise ValueError("Gumbel(relaxation=...) must be a relaxation other than Gumbel")
        object.__setattr__(self, "relaxation", inner)
        check_positive("samples", self.samples, integer=True)
        check_positive("beta", self.beta)
        check_flag("log_scores", self.log_scores)
        if self.generator is not None and not isinstance(self.generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator or None, got {type(self.generator).__name__}")

    def values(self, lists: TwinLists, metric: RankMetric, options: MetricOptions) -> Tensor:
        scores = perturbed(lists.scores, lists.valid, self.samples, self.beta, self.generator, self.log_scores)
        if self.relaxation.one_sample_at_a_time(lists, metric):
            # Only one sample's [B, N, N] graph is alive; the values are stacked and averaged as
            # the folded samples are (a running float32 total would add a rounding per sample).
            def one(sample: Tensor) -> Tensor:
                return self.relaxation.values(replace(lists, scores=sample), metric, options)

            return torch.stack([checkpoint(one, sample, use_reentrant=False) for sample in scores]).mean(0)
        # Samples fold into the batch: the saved state is O(samples · B · N).
        many = lists.repeated(self.samples, scores.reshape(-1, lists.length))
        return self.relaxation.values(many, metric, options).reshape(self.samples, -1).mean(0)


_BY_NAME = {"approx": ApproxRanks, "bound": BoundRanks, "neuralsort": NeuralSortRows, "sinkhorn": SinkhornRows,
            "gumbel": Gumbel}  # fmt: skip


def resolve_relaxation(value: object) -> Relaxation:
    """The relaxation named by ``value`` (one of :data:`RELAXATIONS`, with its defaults) or
    ``value`` itself (a :class:`Relaxation`)."""
    if isinstance(value, Relaxation):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]()
    raise ValueError(
        f"relaxation must be one of {list(RELAXATIONS)} or a relaxation object "
        f"(tn.ApproxRanks(...), tn.BoundRanks(...), tn.NeuralSortRows(...), tn.SinkhornRows(...), tn.Gumbel(...)), "
        f"got {value!r}"
    )
