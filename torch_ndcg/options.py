"""The options the metrics share: their accepted values, their types, and their one documentation.

Every public metric's docstring takes its option list from :data:`OPTION_DOCS` (through
:func:`describe`), so an option is explained once, and the same way everywhere.
"""

from __future__ import annotations

from typing import Literal

Ties = Literal["average", "first", "worst", "best"]
Empty = Literal["zero", "one", "skip", "error"]
Reduction = Literal["mean", "sum", "none"]

TIES: tuple[str, ...] = ("average", "first", "worst", "best")
EMPTY: tuple[str, ...] = ("zero", "one", "skip", "error")
REDUCTIONS: tuple[str, ...] = ("mean", "sum", "none")

OPTION_DOCS: dict[str, str] = {
    "scores": "``[..., N]`` model scores, higher ranks first (integer scores rank as exact float64 "
    "values); with ``indexes``, flat ``[T]`` scores of every item.",
    "relevance": "labels ≥ 0 (bool, int or float) of the scores' shape.",
    "k": "cutoff: ``None`` or a value above the list's length means the whole list; a sequence "
    "such as ``(1, 5, 10)`` adds a trailing dimension with one value per cutoff.",
    "indexes": "``[T]`` integer query id of every item (the flat layout of torchmetrics' retrieval "
    "metrics): queries in any order and of any size; ``reduction=\"none\"`` then gives one value per "
    "distinct id, in ascending id order. ``None``: every row of ``[..., N]`` is one query.",
    "mask": "bool of the scores' shape, ``True`` for real items; padding may sit anywhere "
    "(with ``indexes``: the items to keep).",
    "gain": "``\"linear\"`` (``rel``), ``\"exp2\"`` (``2**rel - 1``) or a callable of the labels "
    "(see :mod:`torch_ndcg.definitions`).",
    "discount": "``\"log2\"`` (``1/log2(rank + 1)``) or a callable of the 1-based rank.",
    "ties": "``\"average\"``: the expected value over every ordering of tied scores (as "
    "scikit-learn); ``\"first\"``: the earlier item first; ``\"worst\"``/``\"best\"``: tied items by "
    "ascending/descending relevance.",
    "empty": "the value of a query with nothing relevant (its ideal is 0): ``\"zero\"``, ``\"one\"``, "
    "``\"skip\"`` (left out of the mean; NaN with ``reduction=\"none\"``) or ``\"error\"``.",
    "reduction": "``\"mean\"`` over queries, ``\"sum\"``, or ``\"none\"`` (one value per query).",
    "validate": "check values (NaN scores, negative labels, exp2 overflow); ``False`` skips those "
    "checks, so on CUDA nothing waits for the device (for compiled or graph-captured code). "
    "Results on valid input are the same either way.",
    "ranked_ids": "``[..., K]`` integer item ids, best first, padded with ``pad_id``.",
    "target_ids": "``[..., M]`` integer ids of the ground truth, padded with ``pad_id``; an id may "
    "appear once per row.",
    "target_relevance": "``[..., M]`` labels ≥ 0 of ``target_ids``; ``None`` = implicit feedback, "
    "every target has relevance 1.",
    "pad_id": "the id that marks padding in both id tensors.",
}


def describe(names: tuple[str, ...], *, indent: str = "    ") -> str:
    """The ``Args:`` section of a docstring for the options ``names``, from :data:`OPTION_DOCS`."""
    lines = ["Args:"]
    for name in names:
        lines.append(f"{indent}{name}: {OPTION_DOCS[name]}")
    return "\n".join(lines)


def metric_doc(summary: str, names: tuple[str, ...], returns: str, example: str) -> str:
    """A public metric's docstring: its summary and formula, the options ``names``, what it returns,
    and a runnable example (indented doctest lines)."""
    return "\n\n".join([summary, describe(names), f"Returns:\n    {returns}", f"Example:\n{example}"])
