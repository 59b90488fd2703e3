"""A comparison of several systems on the same queries: the per-query values, then every pair tested.

:func:`compare` gathers per-query values (a tensor, or per system a mapping from query id to
value, per-measure mappings, a TREC :class:`~torch_ndcg.trec.Evaluation`, or a metric's
``per_query()``), pairs them by query id, and tests every pair of systems on every measure in
one vectorised call. The :class:`Comparison` it returns is plain data; the tables of
:mod:`torch_ndcg.stats.report` are pure functions of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ..validation import check_option
from .checks import check_open_unit
from .corrections import CORRECTIONS, bonferroni, holm
from .significance import cohens_dz, paired_t_test, randomisation_test, wilcoxon_test

__all__ = ["TESTS", "Comparison", "compare"]

#: The tests :func:`compare` runs, by name, and how a report names them.
TESTS = {
    "t-test": "paired Student's t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomisation": "Fisher's randomisation test",
}


@dataclass(frozen=True)
class Comparison:
    """Systems compared pairwise on the same queries, for each measure.

    ``values[m, s, q]`` is measure ``m`` of system ``s`` on query ``query_ids[q]``;
    ``pvalues[m, i, j]`` (= ``[m, j, i]``, NaN on the diagonal) the p-value of the pair after
    ``correction``; ``effect_sizes[m, i, j]`` Cohen's d_z of ``i − j``. System ``i`` beats ``j``
    on ``m`` (:meth:`beats`) when its mean is higher and the p-value is ≤ ``alpha``.
    ``raw_pvalues`` holds the p-values before the correction; ``statistics[m, i, j]`` the test's
    statistic for ``i − j``: t (``"t-test"``) and the mean difference (``"randomisation"``) change
    sign with the order of the pair, Wilcoxon's min(W⁺, W⁻) does not.
    """

    systems: list[str]
    measures: list[str]
    query_ids: list[str]
    values: Tensor  # [M, S, Q] float64
    test: str
    alpha: float
    correction: str
    permutations: int
    seed: int | None
    pvalues: Tensor  # [M, S, S] float64
    effect_sizes: Tensor  # [M, S, S] float64
    raw_pvalues: Tensor  # [M, S, S] float64
    statistics: Tensor  # [M, S, S] float64

    @property
    def means(self) -> Tensor:
        """``[M, S]`` each system's mean over the queries."""
        return self.values.mean(-1)

    def beats(self) -> Tensor:
        """``[M, S, S]`` bool: system ``i`` has the higher mean and the pair's p ≤ ``alpha``."""
        means = self.means
        return (means.unsqueeze(-1) > means.unsqueeze(-2)) & (self.pvalues <= self.alpha)

    def wins_ties_losses(self) -> Tensor:
        """``[3, M, S, S]`` counts of queries where ``i`` scores above, equal to, below ``j``."""
        left, right = self.values.unsqueeze(2), self.values.unsqueeze(1)
        return torch.stack([(left > right).sum(-1), (left == right).sum(-1), (left < right).sum(-1)])


def compare(
    values: Tensor | Mapping[str, object],
    *,
    systems: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    test: str = "t-test",
    alpha: float = 0.05,
    correction: str = "holm",
    permutations: int = 10_000,
    generator: torch.Generator | None = None,
    seed: int | None = None,
) -> Comparison:
    """Test every pair of systems on every measure, over the same queries.

    Args:
        values: either a tensor ``[S, Q]`` (one measure) or ``[M, S, Q]`` of per-query values,
            queries in the same order for every system; or a mapping from system name to its
            per-query values, each one of: a mapping ``{query_id: value}`` (one measure), a
            mapping ``{measure: {query_id: value}}``, a TREC :class:`~torch_ndcg.trec.Evaluation`,
            or ``(query_ids, values)`` as a metric's ``per_query()`` returns (``values`` ``[Q]``;
            a metric with several cutoffs gives ``[Q, C]``: pass one column, ``values[:, c]``).
            Mapped systems must cover the same query ids and measures: otherwise a ``ValueError``
            names what differs. Query ids are compared as text, so ids that differ only in type
            (``1`` and ``"1"``) in one system are refused, naming them. Queries are put in sorted
            id order. Every value must be finite: a NaN or infinity is refused, naming the
            system, measure and query.
        systems: names of the systems of a tensor (default ``"run_1"``, ``"run_2"``, …); for a
            mapping, the keys are the names.
        measures: names of the measures of a tensor (default ``"value"`` or ``"measure_1"``, …);
            for a mapping, the measures to keep (default: all that every system has).
        test: ``"t-test"`` (default: Student's paired t-test, as ranx's and PyTerrier's
            default), ``"wilcoxon"`` (signed-rank, normal approximation, Pratt's zeros) or
            ``"randomisation"`` (Fisher's, exact for few queries, else ``permutations`` draws).
        alpha: the significance threshold on the (corrected) p-value, in (0, 1); default 0.05.
        correction: ``"holm"`` (default), ``"bonferroni"`` or ``"none"``; the family is every
            pair of systems on one measure (S(S−1)/2 tests).
        permutations: Monte-Carlo draws of the randomisation test; default 10,000.
        generator: the ``torch.Generator`` of those draws; ``seed`` makes one (and is recorded).

    Returns:
        A :class:`Comparison`; :func:`torch_ndcg.stats.to_markdown` and friends print it.

    Example:
        >>> import torch
        >>> from torch_ndcg.stats import compare
        >>> ours = {"q1": 0.9, "q2": 0.7, "q3": 0.8, "q4": 0.6}
        >>> theirs = {"q1": 0.5, "q2": 0.6, "q3": 0.4, "q4": 0.5}
        >>> result = compare({"ours": ours, "theirs": theirs}, measures=["ndcg@10"])
        >>> round(float(result.pvalues[0, 0, 1]), 4), bool(result.beats()[0, 0, 1])
        (0.0632, False)
    """
    check_option("test", test, tuple(TESTS))
    check_option("correction", correction, CORRECTIONS)
    check_open_unit("alpha", alpha)
    if seed is not None:
        if generator is not None:
            raise ValueError("give generator or seed, not both")
        generator = torch.Generator().manual_seed(seed)
    names, measure_names, query_ids, table = _gather(values, systems, measures)
    n_systems = len(names)
    if n_systems < 2:
        raise ValueError(f"compare needs at least 2 systems, got {n_systems}")
    pairs = list(itertools.combinations(range(n_systems), 2))
    first = torch.tensor([i for i, _ in pairs])
    second = torch.tensor([j for _, j in pairs])
    a, b = table[:, first], table[:, second]  # [M, P, Q]
    if test == "t-test":
        result = paired_t_test(a, b)
    elif test == "wilcoxon":
        result = wilcoxon_test(a, b, zero_method="pratt", method="approx")
    else:
        result = randomisation_test(a, b, permutations=permutations, generator=generator)
    pvalues = {"holm": holm, "bonferroni": bonferroni, "none": lambda p: p}[correction](result.pvalue)
    effects = cohens_dz(a, b)
    statistic_mirror = 1.0 if test == "wilcoxon" else -1.0
    return Comparison(
        names, measure_names, query_ids, table, test, float(alpha), correction, permutations, seed,
        _symmetric(pvalues, first, second, n_systems, 1.0), _symmetric(effects, first, second, n_systems, -1.0),
        _symmetric(result.pvalue, first, second, n_systems, 1.0),
        _symmetric(result.statistic, first, second, n_systems, statistic_mirror),
    )


def _symmetric(pair_values: Tensor, first: Tensor, second: Tensor, n: int, mirror: float) -> Tensor:
    out = torch.full((pair_values.shape[0], n, n), float("nan"), dtype=torch.float64)
    out[:, first, second] = pair_values
    out[:, second, first] = pair_values * mirror
    return out


def _gather(
    values: object, systems: Sequence[str] | None, measures: Sequence[str] | None
) -> tuple[list[str], list[str], list[str], Tensor]:
    if isinstance(values, Tensor):
        return _from_tensor(values, systems, measures)
    if not isinstance(values, Mapping):
        raise TypeError(f"values must be a tensor [S, Q] or [M, S, Q], or a mapping of system name to "
                        f"per-query values, got {type(values).__name__}")
    if systems is not None:
        raise ValueError("systems= names a tensor's rows; a mapping's keys are already the systems' names")
    per_system = {name: _per_measure(name, values[key]) for name, key in _as_text("system names", values).items()}
    names = list(per_system)
    unnamed = all(list(table) == ["value"] for table in per_system.values())
    if unnamed and measures is not None and len(measures) == 1:  # name the one measure given as {qid: value}
        per_system = {name: {str(measures[0]): table["value"]} for name, table in per_system.items()}
    if not names:
        raise ValueError("values is empty: give at least 2 systems")
    shared = [m for m in next(iter(per_system.values())) if all(m in table for table in per_system.values())]
    wanted = list(measures) if measures is not None else shared
    for name, table in per_system.items():
        missing = [m for m in wanted if m not in table]
        if missing:
            raise ValueError(f"system {name!r} has no values for measure(s) {missing}; it has {list(table)}")
    if not wanted:
        raise ValueError("the systems share no measure")
    reference_name = names[0]
    reference = per_system[reference_name]
    for measure in wanted:
        ids = set(reference[measure])
        for name in names[1:]:
            other = set(per_system[name][measure])
            if other != ids:
                only_first = sorted(ids - other)[:5]
                only_other = sorted(other - ids)[:5]
                raise ValueError(
                    f"systems {reference_name!r} and {name!r} were scored on different queries for {measure!r}: "
                    f"only {reference_name!r} has {only_first}, only {name!r} has {only_other} (first 5 each); "
                    "a paired comparison needs the same queries (score missing queries as 0, e.g. trec_eval -c)"
                )
    query_ids = sorted(reference[wanted[0]])
    for measure in wanted[1:]:
        if set(reference[measure]) != set(query_ids):
            raise ValueError(f"measure {measure!r} covers other queries than {wanted[0]!r}")
    table = torch.tensor(
        [[[per_system[name][measure][q] for q in query_ids] for name in names] for measure in wanted],
        dtype=torch.float64,
    )
    _check_finite(table, names, wanted, query_ids)
    return names, wanted, query_ids, table


def _per_measure(name: str, entry: object) -> dict[str, dict[str, float]]:
    """One system's values as ``{measure: {query_id: value}}`` (the measure ``"value"`` when unnamed)."""
    per_query = getattr(entry, "per_query", None)
    qids = getattr(entry, "qids", None)
    if isinstance(per_query, Mapping) and qids is not None:  # a TREC Evaluation
        return {measure: _pairs(name, qids, column) for measure, column in per_query.items()}
    if isinstance(entry, tuple) and len(entry) == 2:
        return {"value": _pairs(name, entry[0], entry[1])}
    if isinstance(entry, Mapping):
        if entry and all(isinstance(v, Mapping) for v in entry.values()):
            measures = _as_text(f"measure names of system {name!r}", entry)
            return {m: _column(name, entry[key]) for m, key in measures.items()}
        ids = _as_text(f"system {name!r} has query ids", entry)
        try:
            return {"value": {q: float(entry[key]) for q, key in ids.items()}}
        except (TypeError, ValueError):
            pass
    raise TypeError(f"the values of system {name!r} must be {{query_id: value}}, {{measure: {{query_id: value}}}}, "
                    f"a TREC Evaluation or (query_ids, values); got {type(entry).__name__}")


def _as_text(what: str, keys: object) -> dict[str, object]:
    """``{str(key): key}`` for every key, refusing two keys that read the same as text (``1`` and
    ``"1"``): pairing by text would silently keep only one of them."""
    out: dict[str, object] = {}
    for key in keys:
        text = str(key)
        if text in out:
            if out[text] == key:
                raise ValueError(f"{what} {key!r} more than once")
            raise ValueError(f"{what} {out[text]!r} and {key!r}, which read the same as text ({text!r}): "
                             "give each one id of one type")
        out[text] = key
    return out


def _column(name: str, entry: Mapping) -> dict[str, float]:
    ids = _as_text(f"system {name!r} has query ids", entry)
    return {q: float(entry[key]) for q, key in ids.items()}


def _pairs(name: str, ids: object, values: object) -> dict[str, float]:
    values = torch.as_tensor(values)
    ids = ids.tolist() if isinstance(ids, Tensor) else list(ids)
    if values.dim() == 2 and values.shape[0] == len(ids) and values.shape[1] != 1:
        raise ValueError(
            f"system {name!r} has values of shape {tuple(values.shape)}, [Q, C]: one column per cutoff, as a "
            "metric with several k gives from per_query(); compare one cutoff at a time, (ids, values[:, c]), "
            "or give {measure: {query_id: value}} with one measure per cutoff"
        )
    column = values.reshape(-1).tolist()
    if len(ids) != len(column):
        raise ValueError(f"system {name!r} has {len(ids)} query ids for {len(column)} values")
    return dict(zip(_as_text(f"system {name!r} has query ids", ids), column))


def _from_tensor(
    values: Tensor, systems: Sequence[str] | None, measures: Sequence[str] | None
) -> tuple[list[str], list[str], list[str], Tensor]:
    if values.dim() not in (2, 3):
        raise ValueError(f"values must be [S, Q] (one measure) or [M, S, Q], got shape {tuple(values.shape)}")
    table = values.detach().to("cpu", torch.float64)
    if table.dim() == 2:
        table = table.unsqueeze(0)
    n_measures, n_systems, n_queries = table.shape
    names = list(systems) if systems is not None else [f"run_{i + 1}" for i in range(n_systems)]
    if measures is None:
        measures = ["value"] if n_measures == 1 else [f"measure_{i + 1}" for i in range(n_measures)]
    if len(names) != n_systems or len(set(map(str, names))) != n_systems:
        raise ValueError(f"systems must be {n_systems} distinct names, one per row, got {list(names)}")
    if len(measures) != n_measures or len(set(map(str, measures))) != n_measures:
        raise ValueError(f"measures must be {n_measures} distinct names, got {list(measures)}")
    names, measures = [str(s) for s in names], [str(m) for m in measures]
    query_ids = [str(q) for q in range(n_queries)]
    _check_finite(table, names, measures, query_ids)
    return names, measures, query_ids, table


def _check_finite(table: Tensor, systems: list[str], measures: list[str], query_ids: list[str]) -> None:
    if table.shape[-1] < 2:
        raise ValueError(f"a paired comparison needs at least 2 queries, got {table.shape[-1]}")
    bad = ~torch.isfinite(table)
    if bool(bad.any()):
        m, s, q = (int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"values must be finite: {int(bad.sum())} NaN or infinite per-query value(s), the first "
            f"{float(table[m, s, q])} for system {systems[s]!r}, measure {measures[m]!r}, query {query_ids[q]!r}; "
            "a metric's NaN marks a query without relevant items (empty='skip'): drop it from every system, "
            "or score it with empty='zero'"
        )
