"""trec_eval's measure names: the ``-m`` syntax (``ndcg_cut.5,10``), default cutoffs and print order."""

from __future__ import annotations

import math
from collections.abc import Iterable

#: Measures with cutoffs, with trec_eval's default cutoffs (``-m P`` = ``-m P.5,10,...,1000``).
CUTOFF_FAMILIES = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
    "iprec_at_recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),  # recall levels, not ranks
    "err_cut": (5, 10, 20),
    "nerr_cut": (5, 10, 20),
    "rbp": (0.5, 0.8, 0.95),  # persistence, not ranks
    "rbp_residual": (0.5, 0.8, 0.95),
    "judged": (5, 10, 20),
}
#: Every family, in the order trec_eval prints them.
ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success",
    "err_cut", "nerr_cut", "rbp", "rbp_residual", "judged",  # not trec_eval's: gdeval's, RBP's, ir_measures'
)
#: trec_eval's default ("official") set.
DEFAULT = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P",
)
#: Families whose value per query and in total is a count (printed as an integer, summed over queries).
COUNTS = ("num_ret", "num_rel", "num_rel_ret")

#: Families whose cutoffs are fractions in [0, 1], not ranks: printed with two decimals as trec_eval
#: does, or with every digit a parameter such as 0.951 needs (see :func:`cutoff_name`).
FRACTION_CUTOFFS = ("iprec_at_recall", "rbp", "rbp_residual")

Measures = dict[str, tuple[float, ...]]  # family -> cutoffs (ints, or fractions; empty for families without)


def parse(specs: Iterable[str] | str | None) -> Measures:
    """``["ndcg_cut.5,10", "P.10", "map"]`` → ``{"map": (), "P": (10,), "ndcg_cut": (5, 10)}``.

    ``None`` (or ``"official"``) is trec_eval's default set; a family without cutoffs given takes
    trec_eval's defaults; repeated families merge; cutoffs are sorted and deduplicated.
    ``iprec_at_recall``'s cutoffs are recall levels in [0, 1] (``iprec_at_recall.0.25,0.5``).

    Example:
        >>> parse(["ndcg_cut.10,5", "map", "iprec_at_recall.0.5"])
        {'map': (), 'iprec_at_recall': (0.5,), 'ndcg_cut': (5, 10)}
    """
    if specs is None:
        specs = ["official"]
    if isinstance(specs, str):
        specs = [specs]
    chosen: dict[str, set[int]] = {}
    for spec in specs:
        if not isinstance(spec, str):
            raise TypeError(f"a measure must be a str such as 'ndcg_cut.10', got {spec!r}")
        family, dot, params = spec.partition(".")
        if family == "official" and not dot:
            for name in DEFAULT:
                chosen.setdefault(name, set()).update(CUTOFF_FAMILIES.get(name, ()))
            continue
        if family not in ORDER:
            raise ValueError(f"unknown measure {spec!r}; known: {', '.join(ORDER)} (and 'official')")
        if family not in CUTOFF_FAMILIES:
            if dot:
                raise ValueError(f"measure {family!r} takes no cutoffs, got {spec!r}")
            chosen.setdefault(family, set())
            continue
        given = _cutoffs(spec, params, family in FRACTION_CUTOFFS) if dot else CUTOFF_FAMILIES[family]
        chosen.setdefault(family, set()).update(given)
    return {name: tuple(sorted(chosen[name])) for name in ORDER if name in chosen}


def _cutoffs(spec: str, params: str, fractions: bool) -> list[float]:
    values = []
    for text in params.split(","):
        try:
            value = float(text) if fractions else int(text)
        except ValueError:
            value = math.nan
        if fractions:
            valid, expected = 0 <= value <= 1, "numbers in [0, 1] (recall levels, RBP's persistence)"
        else:
            valid, expected = value >= 1 and str(value) == text.strip().lstrip("+"), "positive integers"
        if not valid:
            raise ValueError(f"cutoffs in {spec!r} must be {expected} separated by commas, got {text!r}")
        values.append(value)
    return values


def cutoff_name(family: str, cutoff: float) -> str:
    """The name trec_eval prints for one cutoff: ``P_10``, ``iprec_at_recall_0.50``.

    A fraction prints with two decimals, as trec_eval does, when that is its exact value, and
    with every digit it needs otherwise (``rbp_0.951``, ``rbp_0.999``): two parameters never
    share a name, and a name never rounds its parameter.
    """
    if family not in FRACTION_CUTOFFS:
        return f"{family}_{cutoff}"
    two_decimals = f"{cutoff:.2f}"
    return f"{family}_{two_decimals if float(two_decimals) == cutoff else repr(float(cutoff))}"


def output_names(measures: Measures) -> list[str]:
    """The names trec_eval prints: ``P_10``, ``ndcg_cut_5``, ``iprec_at_recall_0.00``, ``map``."""
    return [label for family, ks in measures.items() for label in ([cutoff_name(family, k) for k in ks] or [family])]
