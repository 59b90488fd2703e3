"""trec_eval's measure names: the ``-m`` syntax (``ndcg_cut.5,10``), default cutoffs and print order."""

from __future__ import annotations

from collections.abc import Iterable

#: Measures with cutoffs, with trec_eval's default cutoffs (``-m P`` = ``-m P.5,10,...,1000``).
CUTOFF_FAMILIES = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}
#: Every family, in the order trec_eval prints them.
ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
    "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success",
)
#: trec_eval's default ("official") set that this package computes; trec_eval's default also has
#: bpref and iprec_at_recall, which it does not.
DEFAULT = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank", "P")
#: Families whose value per query and in total is a count (printed as an integer, summed over queries).
COUNTS = ("num_ret", "num_rel", "num_rel_ret")

Measures = dict[str, tuple[int, ...]]  # family -> cutoffs (empty for families without)


def parse(specs: Iterable[str] | str | None) -> Measures:
    """``["ndcg_cut.5,10", "P.10", "map"]`` → ``{"map": (), "P": (10,), "ndcg_cut": (5, 10)}``.

    ``None`` (or ``"official"``) is trec_eval's default set; a family without cutoffs given takes
    trec_eval's defaults; repeated families merge; cutoffs are sorted and deduplicated.

    Example:
        >>> parse(["ndcg_cut.10,5", "map"])
        {'map': (), 'ndcg_cut': (5, 10)}
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
        chosen.setdefault(family, set()).update(_cutoffs(spec, params) if dot else CUTOFF_FAMILIES[family])
    return {name: tuple(sorted(chosen[name])) for name in ORDER if name in chosen}


def _cutoffs(spec: str, params: str) -> list[int]:
    values = []
    for text in params.split(","):
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1 or str(value) != text.strip().lstrip("+"):
            raise ValueError(f"cutoffs in {spec!r} must be positive integers separated by commas, got {text!r}")
        values.append(value)
    return values


def output_names(measures: Measures) -> list[str]:
    """The names trec_eval prints: ``P_10``, ``ndcg_cut_5``, ``map``."""
    return [name for family, ks in measures.items() for name in ([f"{family}_{k}" for k in ks] or [family])]
